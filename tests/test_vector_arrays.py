"""Arrays of vector types (issue 13: MathDx half precision): cuda.local.array /
cuda.shared.array with a vector dtype (cudajit.float16x4, 'float32x2',
MathDx's 'complex32' = float16x2 and 'complex32x2' = float16x4), their items
read and written as vectors, .view() to and from vector items, and the
conversions of complex numbers to and from two-float vectors. No GPU: typed
IR, PTX and errors here; the values are checked on a GPU in
tests/gpu/test_vector_arrays_gpu.py."""
import inspect
import re

import numpy as np
import pytest

import cudajit as cuda
from cudajit import CompileError


def body(ptx):
    return ptx.split(".entry", 1)[1]


def line_of(kernel, marker):
    lines, first = inspect.getsourcelines(kernel)
    return first + next(i for i, s in enumerate(lines) if marker in s)


def test_local_array_of_float16x4_items_are_vectors():
    @cuda.jit
    def k(x, out):
        t = cuda.local.array(4, cuda.float16x4)
        i = cuda.threadIdx.x
        t[i % 4] = cuda.float16x4(x[i], x[i + 1], x[i + 2], x[i + 3])
        v = t[(i + 1) % 4]
        out[i] = v.x + v.w

    k.compile("void(float16[::1], float16[::1])")
    ir = str(k.inspect_ir())
    assert "array(float16x4, 1d, C, local)" in ir
    # one 8-byte store of the item (run-time index: the array stays in local memory)
    text = body(cuda.compile_ptx(k, "void(float16[::1], float16[::1])")[0])
    assert re.search(r"st\.local\.(v4\.b16|u64|b64)\s", text), text


@pytest.mark.parametrize("dtype, expect", [
    (cuda.float32x4, "array(float32x4, 1d, C, shared)"),
    ("float32x2", "array(float32x2, 1d, C, shared)"),
    (cuda.double2, "array(float64x2, 1d, C, shared)"),     # a C alias names the same type
    ("complex32", "array(float16x2, 1d, C, shared)"),      # MathDx's complex half
    ("complex32x2", "array(float16x4, 1d, C, shared)"),    # MathDx's half FFT value
])
def test_shared_array_dtypes(dtype, expect):
    @cuda.jit
    def k(out):
        s = cuda.shared.array(64, dtype)
        i = cuda.threadIdx.x
        s[i] = s[(i + 1) % 64]
        cuda.syncthreads()
        out[i] = s[i].x

    sig = "void(float64[::1])"
    k.compile(sig)
    assert expect in str(k.inspect_ir())


def test_vector_items_in_shared_memory_survive_the_barrier():
    # Computed halves stored to shared memory and read by a neighbour after
    # the barrier: libNVVM used to delete such stores (codegen stores half
    # bits as integers, converts to half with cvt.rn.f16.f32).
    @cuda.jit
    def k(a, out):
        s = cuda.shared.array(256, "complex32")
        h = cuda.shared.array(512, np.float16)
        i = cuda.threadIdx.x
        s[i] = a[i]
        h[2 * i] = a[i].real
        h[2 * i + 1] = a[i].imag
        cuda.syncthreads()
        out[i] = s[(i + 1) % 256]
        out[i + 256] = h[(2 * i + 2) % 512]

    text = body(cuda.compile_ptx(k, "void(complex64[::1], complex64[::1])")[0])
    assert text.count("st.shared") >= 3 and "bar.sync" in text
    assert text.count("ld.global") >= 1 and "cvt.rn.f16.f32" in text


def test_vector_loads_and_stores_are_single_accesses():
    @cuda.jit
    def k(x, out):
        s = cuda.shared.array(128, cuda.float32x4)
        i = cuda.threadIdx.x
        s[i] = cuda.float32x4(x[i], 1.0, 2.0, x[i])
        cuda.syncthreads()
        v = s[(i + 5) % 128]
        out[i] = v.x + v.y + v.z + v.w

    text = body(cuda.compile_ptx(k, "void(float32[::1], float32[::1])")[0])
    assert "st.shared.v4.f32" in text and "ld.shared.v4.f32" in text


def test_view_between_vector_and_scalar_items():
    @cuda.jit
    def k(out):
        t = cuda.local.array(4, "complex32x2")
        r = t.view(cuda.float16x2)          # 8 items: each float16x4 is two float16x2
        f = t.view(np.float16)              # 16 halves
        out[0] = r.shape[0]
        out[1] = f.shape[0]
        out[2] = t.view(cuda.float16x4).shape[0]

    k.compile("void(int64[::1])")
    ir = str(k.inspect_ir())
    assert "array(float16x2, 1d, C, local)" in ir and "array(f16, 1d, C, local)" in ir


def test_complex_and_float16x2_convert_both_ways():
    @cuda.jit
    def k(c, out):
        s = cuda.shared.array(32, "complex32")
        i = cuda.threadIdx.x
        s[i] = c[i]                         # complex64 -> float16x2 (re, im)
        cuda.syncthreads()
        out[i] = s[31 - i]                  # float16x2 -> complex64

    text = body(cuda.compile_ptx(k, "void(complex64[::1], complex64[::1])")[0])
    assert text.count("cvt.rn.f16.f32") == 2 and text.count("cvt.f32.f16") == 2


def test_vector_arrays_pass_to_device_functions():
    @cuda.jit(device=True)
    def fill(s, n):
        for j in range(n):
            s[j] = cuda.float16x2(j, -j)

    @cuda.jit
    def k(out):
        s = cuda.local.array(8, cuda.float16x2)
        fill(s, 8)
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x % 8].y

    assert "ret;" in cuda.compile_ptx(k, "void(float16[::1])")[0]


def test_storing_another_type_is_a_compile_error_at_its_line():
    def k(x):
        t = cuda.local.array(4, cuda.float16x4)
        t[0] = x[0]   # L:store
        x[1] = t[1].x

    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(cuda.jit(k), "void(float16[::1])")
    assert "cannot store float16 into an array of float16x4" in str(info.value)
    assert "float16x4(...)" in str(info.value)
    assert info.value.line == line_of(k, "L:store")


def test_a_four_component_vector_is_not_a_complex_number():
    def k(c):
        t = cuda.local.array(4, cuda.float16x4)
        t[0] = c[0]   # L:store
        c[1] = t[1].x

    with pytest.raises(CompileError, match="cannot store complex64 into an array of float16x4") as info:
        cuda.compile_ptx(cuda.jit(k), "void(complex64[::1])")
    assert info.value.line == line_of(k, "L:store")


def test_view_of_global_memory_as_vectors_is_refused():
    def k(x):
        v = x.view(cuda.float16x2)   # L:view
        x[0] = v[0].x

    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(cuda.jit(k), "void(float16[::1])")
    assert "needs 4-byte aligned items, which only local and shared arrays" in str(info.value)
    assert info.value.line == line_of(k, "L:view")


def test_unknown_dtype_string_names_the_string():
    def k(x):
        t = cuda.local.array(4, "complex16")   # L:dtype
        x[0] = t[0]

    with pytest.raises(CompileError, match="dtype must be a numpy scalar type .*the string 'complex16'") as info:
        cuda.compile_ptx(cuda.jit(k), "void(float32[::1])")
    assert info.value.line == line_of(k, "L:dtype")


def test_alignment_below_the_vector_item_is_refused():
    def k(x):
        t = cuda.local.array(4, cuda.float32x4, alignment=8)
        x[0] = t[0].x

    with pytest.raises(CompileError, match="alignment 8 is smaller than the float32x4 elements \\(16 bytes\\)"):
        cuda.compile_ptx(cuda.jit(k), "void(float32[::1])")


def test_other_functions_refuse_arrays_of_vectors():
    def k(x):
        t = cuda.shared.array(4, cuda.float32x2)
        cuda.atomic.add(t, 0, 1.0)   # L:atomic
        x[0] = t[0].x

    with pytest.raises(CompileError, match="does not take arrays of vectors") as info:
        cuda.compile_ptx(cuda.jit(k), "void(float32[::1])")
    assert info.value.line == line_of(k, "L:atomic")

    def m(x):
        t = cuda.local.array(4, cuda.float32x2)
        x[0] = t.sum()   # L:sum

    with pytest.raises(CompileError, match="arrays of vectors have no attribute 'sum'") as info:
        cuda.compile_ptx(cuda.jit(m), "void(float32[::1])")
    assert info.value.line == line_of(m, "L:sum")


def test_vector_array_types_round_trip_as_text():
    from cudajit import _core
    for text in ("array(float16x4, 1d, C, local)", "array(float32x2, 2d, A, shared)",
                 "array(float64x3, 1d, C, readonly)", "array(int8x4, 3d, F)"):
        assert _core.type_text(text) == text
        assert _core.type_identity(text) == _core.type_identity(_core.type_text(text))
    assert _core.type_identity("array(float16x2, 1d, C)") != _core.type_identity("array(f16, 1d, C)")
    assert _core.type_numba_string("array(float16x4, 1d, C)") == "float16x4[::1]"
    # the item is the vector (a namedtuple) type the constructor makes
    assert _core.type_numba_string("namedtuple float16x4(x,y,z,w) (f16, f16, f16, f16)") == "float16x4"
