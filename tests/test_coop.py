"""cudajit.coop (CCCL's cuda.coop names over cudajit's CUB block and warp
algorithms) and what kernels written with it rely on: small integer items,
eager signatures compiled at the launch that gives their block shape, numba
Signature objects for device functions, constant string comparisons."""
import os
import sys

import numpy as np
import pytest

import cudajit as cuda
from cudajit import coop
from cudajit.errors import CompileError

sys.path.insert(0, os.path.dirname(__file__))
import coop_kernels as ck  # noqa: E402


def test_primitives_carry_numba_cudas_attributes():
    assert ck.block_max.files == [] and ck.block_max.threads_per_block == ck.THREADS
    assert ck.block_sum.name == "block.sum" and ck.warp_max.threads_per_block == 32
    with pytest.raises(cuda.DeviceOnlyError):
        ck.block_max(1)


def test_operators_as_cuda_block_reduce_takes_them():
    import operator
    add = coop.block.reduce(np.int32, 64, operator.add)
    biggest = coop.warp.reduce(np.float32, max)

    def k(x, out):
        i = cuda.grid(1)
        a = add(np.int32(x[i]))
        b = biggest(x[i])
        if cuda.threadIdx.x == 0:
            out[0] = a + b

    cubin = cuda.compile_cubin(k, "void(float32[::1], float32[::1])", block=(64,))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_scans_link_and_several_items_say_so():
    cubin = cuda.compile_cubin(ck.prefix_sums.py_func, "void(int32[::1], int32[::1], int32[::1], int32[::1])",
                               block=(ck.THREADS,))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"
    with pytest.raises(NotImplementedError, match="one item a thread"):
        coop.block.exclusive_sum(np.int32, 128, items_per_thread=4)


def test_an_eager_signature_compiles_for_the_primitives_block():
    # numba-cuda compiles @cuda.jit(sig) at once, for the block size the
    # cuda.coop primitives fix: so does cudajit, when the kernel names them
    assert ck.block_max_and_sum.signatures == [("int16[::1]", "int16[::1]", "int32[::1]")]
    key = ck.block_max_and_sum.compile("void(int16[::1], int16[::1], int32[::1])")   # as nvmath's helpers do
    assert tuple(key) == ("int16[::1]", "int16[::1]", "int32[::1]")
    ptx, _ = cuda.compile_ptx(ck.block_max_and_sum.py_func, "void(int16[::1], int16[::1], int32[::1])",
                              block=(ck.THREADS,))
    assert ".reqntid 128, 1, 1" in ptx
    # without a block shape, compile_ptx still says what it needs
    with pytest.raises(CompileError, match="block shape"):
        cuda.compile_ptx(ck.block_max_and_sum.py_func, "void(int16[::1], int16[::1], int32[::1])")


def test_an_eager_signature_without_a_known_block_waits_for_the_launch():
    def k(x, out):
        out[0] = cuda.block.sum(x[cuda.threadIdx.x])

    eager = cuda.jit("void(float32[::1], float32[::1])")(k)
    assert eager.signatures == []   # compiled at the first launch, for its block


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "uint16"])
def test_small_integer_items_link(dtype):
    @cuda.jit(device=True)
    def mx(a, b):
        return a if a > b else b

    def k(x, out):
        v = x[cuda.grid(1)]
        r = cuda.block.reduce(v, mx)
        s = cuda.block.sum(v)
        w = cuda.warp.max(v)
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = r + s + w

    cubin = cuda.compile_cubin(k, f"void({dtype}[::1], {dtype}[::1])", block=(128,))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_device_function_with_a_signature_object():
    class Signature:   # what numba's Tuple((int16, int64))(float64) answers
        args = ("float64",)
        return_type = "Tuple(int16, int64)"

    split = cuda.jit(Signature(), device=True)(lambda x: (np.int16(x), np.int64(x)))
    assert split.signatures == ["Tuple(int16, int64)(float64)"]

    def k(x, a, b):
        i = cuda.grid(1)
        a[i], b[i] = split(x[i])

    ptx, _ = cuda.compile_ptx(k, "void(float64[::1], int16[::1], int64[::1])")
    assert "cvt.rzi.s64.f64" in ptx and "st.global.u16" in ptx, ptx


def test_constant_strings_compare_when_compiled():
    order = "F"

    def k(out):
        out[0] = 1.0 if order == "F" else 2.0
        out[1] = 3.0 if order != "C" else 4.0
        out[2] = 5.0 if order == "C" else 6.0

    ptx, _ = cuda.compile_ptx(k, "void(float32[::1])")
    # the comparisons fold: only the chosen constants are stored (as their
    # bits, in decimal or in PTX's 0f hex form)
    def stored(v):
        bits = int(np.float32(v).view(np.uint32))
        return f"{bits}" in ptx or f"0f{bits:08X}" in ptx

    assert all(stored(v) for v in (1.0, 3.0, 6.0)), ptx
    assert not any(stored(v) for v in (2.0, 4.0, 5.0)), ptx


def test_coop_kernels_launch_on_the_mock_driver(run_python, mock_driver):
    out = run_python(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import numpy as np
        import cudajit as cuda
        import coop_kernels as ck
        x = cuda.to_device(np.arange(256, dtype=np.int16))
        m = cuda.to_device(np.zeros(2, np.int16))
        s = cuda.to_device(np.zeros(2, np.int32))
        ck.block_max_and_sum[2, ck.THREADS](x, m, s)
        print(len(ck.block_max_and_sum.signatures))
        ck.warp_maxima[2, ck.THREADS](x, cuda.to_device(np.zeros(8, np.int16)))
        @cuda.jit("void(float32[::1], float32[::1])")   # no block known: compiled at the launch
        def eager(v, o):
            o[0] = cuda.block.sum(v[cuda.threadIdx.x])
        print(len(eager.signatures))
        eager[1, 64](cuda.to_device(np.ones(64, np.float32)), cuda.to_device(np.zeros(1, np.float32)))
        print(len(eager.signatures), list(eager.overloads)[0][1])
        try:   # the declared signature is the one listed
            ck.block_max_and_sum[2, ck.THREADS](x, m, cuda.to_device(np.zeros((2, 2), np.float32)))
        except TypeError as e:
            print(" ".join(str(e).split()))
    """, driver=mock_driver).splitlines()
    assert out[0] == "1"
    assert out[1] == "0" and out[2] == "1 (64, 1, 1)", out
    assert "no matching definition" in out[3] and "(int16[::1], int16[::1], int32[::1])" in out[3], out
