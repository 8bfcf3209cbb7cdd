"""Block and warp algorithms (cuda.block.*, cuda.warp.*; issue #3).

CI (no GPU): every primitive x type compiles through the whole pipeline:
typed IR with `intrinsic cub` specs, NVVM IR, libNVVM LTO-IR, the CUB
instantiations (NVRTC), nvJitLink -> linked PTX that ptxas accepts and a
cubin; typing errors are CompileErrors with file and line; the dispatcher
specialises on the block shape; shared memory composes.

GPU (`gpu` marker): every primitive, type and op against numpy on fresh
random data for blocks of 32, 128, 256, 1024 threads and a 2-D block,
several blocks per launch. All kernels are compiled first, concurrently
(compile_cubin releases the GIL), so NVRTC runs on every core:

    python -m pytest tests/test_block_algorithms.py -q             # CI part + GPU part

NVRTC takes about a second per CUB instantiation; the instantiations go to
a fresh cache directory per session unless CUDAJIT_TEST_CUB_CACHE names one
to keep (reruns then read it).
"""
import concurrent.futures
import operator
import os
import re

import numpy as np
import pytest

import cudajit as cuda
from cudajit.errors import CompileError

ARCH = "sm_90"
DTYPES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]
INT_DTYPES = ["int32", "int64", "uint32", "uint64"]
GPU_BLOCKS = [(32,), (128,), (256,), (1024,), (16, 8)]
GRID = 3   # blocks per launch: results must not leak between blocks
IPT = 4    # items per thread of the local-array kernels


pytestmark = pytest.mark.usefixtures("cub_cache")


from ptxas_check import assemble as ptxas_ok  # noqa: E402


# ---------------------------------------------------------------------------
# The kernels: generic over the dtype of their input arrays.
# ---------------------------------------------------------------------------


@cuda.jit(device=True)
def user_max(a, b):
    return a if a > b else b


@cuda.jit(device=True)
def linear_tid():
    return cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)


@cuda.jit(device=True)
def block_threads():
    return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z


# Block reductions (valid in thread 0) and scans, one item per thread.
N_RED = 6
N_SCAN = 6


def scalar_block_kernel(x, factors, init, red, scan):
    t = linear_tid()
    n = block_threads()
    b = cuda.blockIdx.x
    g = b * n + t
    v = x[g]
    r0 = cuda.block.sum(v)
    r1 = cuda.block.min(v)
    r2 = cuda.block.max(v)
    r3 = cuda.block.reduce(v, user_max)
    r4 = cuda.block.reduce(v, min)
    r5 = cuda.block.reduce(factors[g], operator.mul)
    if t == 0:
        red[b, 0] = r0
        red[b, 1] = r1
        red[b, 2] = r2
        red[b, 3] = r3
        red[b, 4] = r4
        red[b, 5] = r5
    i0 = init[0]
    scan[0, g] = cuda.block.inclusive_sum(v)
    scan[1, g] = cuda.block.exclusive_sum(v)
    scan[2, g] = cuda.block.inclusive_scan(v, max)
    scan[3, g] = cuda.block.inclusive_scan(v, user_max, initial=i0)
    scan[4, g] = cuda.block.exclusive_scan(v, min, i0)
    scan[5, g] = cuda.block.exclusive_scan(v, operator.add, i0)


# Warp reductions (valid in lane 0) and scans, one item per thread.
N_WRED = 5
N_WSCAN = 5


def scalar_warp_kernel(x, init, wred, wscan):
    t = linear_tid()
    n = block_threads()
    b = cuda.blockIdx.x
    g = b * n + t
    v = x[g]
    r0 = cuda.warp.sum(v)
    r1 = cuda.warp.min(v)
    r2 = cuda.warp.max(v)
    r3 = cuda.warp.reduce(v, user_max)
    r4 = cuda.warp.reduce(v, operator.add)
    if t % 32 == 0:
        w = g // 32
        wred[w, 0] = r0
        wred[w, 1] = r1
        wred[w, 2] = r2
        wred[w, 3] = r3
        wred[w, 4] = r4
    i0 = init[0]
    wscan[0, g] = cuda.warp.inclusive_sum(v)
    wscan[1, g] = cuda.warp.exclusive_sum(v)
    wscan[2, g] = cuda.warp.inclusive_scan(v, max)
    wscan[3, g] = cuda.warp.inclusive_scan(v, user_max, i0)
    wscan[4, g] = cuda.warp.exclusive_scan(v, min, i0)


# Several items per thread (local arrays), loads and stores in every
# arrangement, radix sorts (keys, pairs, descending, striped output).
N_ITEMS_RED = 4
N_TILES = 12


def items_kernel(x, values, init, red, tiles):
    # tiles: N_TILES regions of x's size, one per result (region r starts at r * total)
    t = linear_tid()
    n = block_threads()
    b = cuda.blockIdx.x
    total = cuda.gridDim.x * n * 4
    base = b * n * 4
    i0 = init[0]
    items = cuda.block.load(x, base, 4)
    r0 = cuda.block.sum(items)
    r1 = cuda.block.max(items)
    r2 = cuda.block.reduce(items, user_max)
    r3 = cuda.warp.sum(items)
    if t == 0:
        red[b, 0] = r0
        red[b, 1] = r1
        red[b, 2] = r2
    if t % 32 == 0:
        red[b * n // 32 + t // 32, 3] = r3
    # 0..3: the loads in every arrangement, stored back blocked / striped
    cuda.block.store(tiles, base, items)
    s = cuda.block.load(x, base, 4, "striped")
    cuda.block.store(tiles, total + base, s, "striped")
    tr = cuda.block.load(x, base, 4, "transpose")
    cuda.block.store(tiles, 2 * total + base, tr, "transpose")
    vec = cuda.block.load(x, base, 4, "vectorize")
    cuda.block.store(tiles, 3 * total + base, vec, "warp_transpose")
    # 4..7: scans in place
    a = cuda.block.load(x, base, 4)
    cuda.block.inclusive_sum(a)
    cuda.block.store(tiles, 4 * total + base, a)
    a = cuda.block.load(x, base, 4)
    cuda.block.exclusive_scan(a, max, i0)
    cuda.block.store(tiles, 5 * total + base, a)
    a = cuda.block.load(x, base, 4)
    cuda.warp.inclusive_sum(a)
    cuda.block.store(tiles, 6 * total + base, a)
    a = cuda.block.load(x, base, 4)
    cuda.warp.exclusive_scan(a, min, i0)
    cuda.block.store(tiles, 7 * total + base, a)
    # 8..11: radix sorts
    k = cuda.block.load(x, base, 4)
    cuda.block.radix_sort(k)
    cuda.block.store(tiles, 8 * total + base, k)
    k = cuda.block.load(x, base, 4)
    cuda.block.radix_sort(k, descending=True, arrangement="striped")
    cuda.block.store(tiles, 9 * total + base, k, "striped")
    k = cuda.block.load(x, base, 4)
    v = cuda.block.load(values, base, 4)
    cuda.block.radix_sort(k, v)
    cuda.block.store(tiles, 10 * total + base, v)
    # one key per thread, (key, value) pairs returned
    g = b * n + t
    kk, vv = cuda.block.radix_sort(x[g], values[g], descending=True)
    tiles[11 * total + g] = vv


# Histograms and bitwise operator reductions: integer samples.
HIST_BINS = 64


def int_kernel(samples, hist, red):
    t = linear_tid()
    n = block_threads()
    b = cuda.blockIdx.x
    base = b * n * 4
    h = cuda.shared.array(64, np.uint32)
    items = cuda.block.load(samples, base, 4)
    cuda.block.histogram(items, h)
    for i in range(t, 64, n):
        hist[b, 0, i] = h[i]
    h2 = cuda.shared.array(64, np.uint32)
    cuda.block.histogram(samples[b * n + t], h2, algorithm="sort")
    for i in range(t, 64, n):
        hist[b, 1, i] = h2[i]
    r0 = cuda.block.reduce(items, operator.xor)
    r1 = cuda.block.reduce(items, operator.or_)
    r2 = cuda.block.reduce(samples[b * n + t], operator.and_)
    if t == 0:
        red[b, 0] = r0
        red[b, 1] = r1
        red[b, 2] = r2


KERNELS = {
    "scalar_block": scalar_block_kernel,
    "scalar_warp": scalar_warp_kernel,
    "items": items_kernel,
    "int": int_kernel,
}


def signature(kind, dtype):
    a1, a2, a3 = f"{dtype}[::1]", f"{dtype}[:, ::1]", f"{dtype}[:, :, ::1]"
    return {
        "scalar_block": (a1, a1, a1, a2, a2),
        "scalar_warp": (a1, a1, a2, a2),
        "items": (a1, a1, a1, a2, a1),
        "int": (a1, "uint32[:, :, ::1]", a2),
    }[kind]


def kernel_cases(blocks):
    for block in blocks:
        for dtype in DTYPES:
            for kind in KERNELS:
                if kind == "int" and dtype not in INT_DTYPES:
                    continue
                yield kind, dtype, block


def block_id(block):
    return "x".join(map(str, block))


# ---------------------------------------------------------------------------
# CI: compile, link, ptxas
# ---------------------------------------------------------------------------


@cuda.jit
def segment_sums(x, out):
    seg = cuda.blockIdx.x
    acc = 0.0
    for i in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
        acc += x[seg, i]
    total = cuda.block.sum(acc)
    if cuda.threadIdx.x == 0:
        out[seg] = total


def test_running_example_links(tmp_path):
    ptx, ret = cuda.compile_ptx(segment_sums, "void(float32[:, ::1], float32[::1])", block=(256,))
    assert ret == "none"
    # Linked: CUB's reduction inlined, nothing left to call, storage reserved.
    assert ".extern" not in ptx and "call" not in ptx
    assert re.search(r"\.shared \.align \d+ \.b8 __cj_cub_\w+\[\d+\]", ptx)
    assert ".reqntid 256, 1, 1" in ptx
    assert "bar.sync" in ptx
    ptxas_ok(ptx, tmp_path)
    cubin, symbol = cuda.compile_cubin(segment_sums, "void(float32[:, ::1], float32[::1])", block=256)
    assert cubin[:4] == b"\x7fELF" and symbol.startswith("cj_segment_sums")


def test_typed_ir_carries_the_spec():
    k = cuda.jit("void(float32[:, ::1], float32[::1])", block=(128, 2))(segment_sums.py_func)
    ir = k.inspect_ir()[("float32[:, ::1]", "float32[::1]")]
    # The kernel's only block algorithm runs once: no barrier after it (nosync).
    assert 'intrinsic cub "block_reduce float64 op=sum block=128x2x1 ipt=1 nosync"' in ir
    (ov,) = k.overloads.values()
    assert ov.block == (128, 2, 1)
    assert ov.cub_specs == ["block_reduce float64 op=sum block=128x2x1 ipt=1 nosync"]
    nvvm = k.inspect_nvvm()[("float32[:, ::1]", "float32[::1]")]
    assert "declare double @cj_block_reduce_sum_f64_b128x2x1_i1_nosync(double, i8*)" in nvvm
    assert '!"reqntidy", i32 2' in nvvm


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_primitive_links_and_passes_ptxas(dtype, tmp_path):
    """All kernels of the GPU matrix for one dtype, block 128 and a 2-D block:
    linked PTX (CUB inlined) that ptxas accepts, and a linked cubin."""
    for kind, dt, block in kernel_cases([(128,)]):
        if dt != dtype:
            continue
        sig = signature(kind, dtype)
        ptx, _ = cuda.compile_ptx(KERNELS[kind], sig, arch=ARCH, block=block)
        assert "call" not in ptx, f"{kind}: a call survived link-time optimisation"
        assert "__assertfail" not in ptx
        ptxas_ok(ptx, tmp_path)
    if dtype == "float32":
        cubin, _ = cuda.compile_cubin(scalar_warp_kernel, signature("scalar_warp", dtype), block=(16, 8))
        assert cubin[:4] == b"\x7fELF"


def test_specs_of_every_primitive():
    """The spec each Python-level call becomes (one dtype, so cheap)."""
    k = cuda.jit(signature("items", "float32"), block=(64,))(items_kernel)
    specs = set(next(iter(k.overloads.values())).cub_specs)
    for s in [
        "block_load float32 block=64x1x1 ipt=4 arrangement=blocked",
        "block_load float32 block=64x1x1 ipt=4 arrangement=striped",
        "block_load float32 block=64x1x1 ipt=4 arrangement=transpose",
        "block_load float32 block=64x1x1 ipt=4 arrangement=vectorize",
        "block_store float32 block=64x1x1 ipt=4 arrangement=warp_transpose",
        "block_reduce float32 op=sum block=64x1x1 ipt=4",
        "block_reduce float32 op=user:cj_op_user_max__f32_f32 block=64x1x1 ipt=4",
        "warp_reduce float32 op=sum block=64x1x1 ipt=4",
        "block_inclusive_sum float32 block=64x1x1 ipt=4",
        "block_exclusive_scan float32 op=max block=64x1x1 ipt=4",
        "warp_exclusive_scan float32 op=min block=64x1x1 ipt=4",
        "block_radix_sort float32 block=64x1x1 ipt=4 arrangement=blocked",
        "block_radix_sort_descending float32 block=64x1x1 ipt=4 arrangement=striped",
        "block_radix_sort_pairs float32 value=float32 block=64x1x1 ipt=4 arrangement=blocked",
        # The last user of the shared storage needs no trailing barrier.
        "block_radix_sort_pairs_descending float32 value=float32 block=64x1x1 ipt=1 arrangement=blocked nosync",
    ]:
        assert s in specs, s


def test_user_op_is_a_c_abi_function():
    k = cuda.jit(signature("scalar_block", "int32"), block=(32,))(scalar_block_kernel)
    nvvm = next(iter(k.inspect_nvvm().values()))
    # The C symbol CUB calls, forwarding to the typed op (numba's int32 max).
    assert re.search(r"define i32 @cj_op_user_max__i32_i32\(i32 %a, i32 %b\)", nvvm)
    assert "define internal i32 @cj_op_user_max__i32_i32__impl(" in nvvm
    # operator.mul on int32 computes in int64 as numba does, then wraps.
    ir = next(iter(k.inspect_ir().values()))
    assert re.search(r"func cj_op_mul_i32__impl\(v0:i32 a, v1:i32 b\) -> i32", ir)
    assert re.search(r"i64 = mul ", ir.split("func cj_op_mul_i32__impl")[1])
    ptx = next(iter(k.inspect_ptx().values()))
    assert "call" not in ptx, "the user op must inline into CUB's loop"


def test_block_calls_share_one_buffer():
    k = cuda.jit(signature("scalar_block", "float64"), block=(256,))(scalar_block_kernel)
    nvvm = next(iter(k.inspect_nvvm().values()))
    assert len(re.findall(r"^@__cj_cub_temp = ", nvvm, re.M)) == 1
    assert "__cj_cub_tmp" not in nvvm   # no per-call buffers for block algorithms


def test_composes_with_shared_arrays(tmp_path):
    # (Dynamic shared memory, cuda.shared.array(0, ...), is the typing
    # stage's to accept; CUB's buffer is static and sits before it.)
    @cuda.jit
    def k(x, out):
        tile = cuda.shared.array(256, np.float32)
        t = cuda.threadIdx.x
        tile[t] = x[t]
        cuda.syncthreads()
        s = cuda.block.sum(tile[255 - t] * 2)
        if t == 0:
            out[0] = s

    ptx, _ = cuda.compile_ptx(k, "void(float32[::1], float32[::1])", block=(256,))
    assert "__cj_cub_" in ptx and re.search(r"\.shared \.align 16 \.b8 __cj_shared\S*\[1024\]", ptx)
    ptxas_ok(ptx, tmp_path)


# ---- dispatcher: the block shape is part of the signature ------------------


def test_explicit_signatures_specialise_on_block():
    k = cuda.jit(segment_sums.py_func)
    k.compile("void(float32[:, ::1], float32[::1])", block=(128,))
    k.compile("void(float32[:, ::1], float32[::1])", block=(256,))
    # Two overloads of one argument signature, keyed by (types, block shape).
    assert k.signatures == [("float32[:, ::1]", "float32[::1]")] * 2
    ptx = k.inspect_ptx(("float32[:, ::1]", "float32[::1]"))
    assert ".reqntid 128, 1, 1" in ptx or ".reqntid 256, 1, 1" in ptx

    @cuda.jit("void(float32[::1])")
    def plain(x):
        x[0] = 1.0

    (ov,) = plain.overloads.values()
    assert ov.block is None and ov.cub_specs == []


MOCK_BLOCK_KERNEL = """
@cuda.jit(cache=True)
def k(x, out):
    s = cuda.block.sum(x[cuda.threadIdx.x])
    if cuda.threadIdx.x == 0:
        out[0] = s

@cuda.jit(cache=True)
def plain(x):
    x[cuda.threadIdx.x] = 1.0

install(lambda params: None)
x = cuda.to_device(np.arange(256, dtype=np.float32))
out = cuda.device_array(1, np.float32)
"""


def test_launch_specialises_on_block_shape_mock(run_python, mock_driver, tmp_path, monkeypatch):
    """The launch path on the mock driver: a kernel with a block algorithm
    gets one overload per launch block shape (cached on disk with its CUB
    specs); a kernel without one does not."""
    import textwrap

    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    code = MOCK_PRELUDE + MOCK_BLOCK_KERNEL + textwrap.dedent("""
        for threads in (64, 128, 64, 128):
            k[1, threads](x, out)
        for threads in (32, 64):
            plain[1, threads](x)
        print(len(k.signatures), len(plain.signatures))
        print(sorted(launch["block"][0] for launch in launches))
        ov = k.overloads[(k.signatures[0], (64, 1, 1))]
        print(ov.block, ov.cub_specs, ov.stats["cache_result"])
        print(plain.overloads[plain.signatures[0]].block)
        try:
            k.overloads[k.signatures[0]]   # two block shapes: the types alone are ambiguous
            print("found")
        except KeyError:
            print("ambiguous")
    """)
    first = run_python(code, driver=mock_driver).splitlines()
    assert first[0] == "2 1"
    assert first[1] == "[32, 64, 64, 64, 128, 128]"
    # overloads is keyed (types, block shape) for such kernels
    spec = r"\['block_reduce float32 op=sum block=(\d+)x1x1 ipt=1 nosync'\]"
    m = re.fullmatch(r"\((\d+), 1, 1\) " + spec + " miss", first[2])
    assert m and m.group(1) == m.group(2) == "64", first[2]
    assert first[3] == "None"
    assert first[4] == "ambiguous"
    # A fresh process reads the specialisations from the disk cache.
    second = run_python(code, driver=mock_driver).splitlines()
    assert re.fullmatch(r"\((\d+), 1, 1\) " + spec + " hit", second[2]), second[2]


def test_block_shape_required_ahead_of_time():
    with pytest.raises(CompileError) as e:
        cuda.compile_ptx(segment_sums, "void(float32[:, ::1], float32[::1])")
    msg = str(e.value)
    assert "block shape" in msg and "block=(256,)" in msg
    assert "test_block_algorithms.py" in msg   # file and line of the call
    # @jit with a signature and no block= (numba-cuda compiles it at once; its
    # cuda.coop primitives fix their block size): compiled at the first
    # launch, for the launch's block shape (tests/test_coop.py launches one)
    eager = cuda.jit("void(float32[:, ::1], float32[::1])")(segment_sums.py_func)
    assert eager.signatures == []


# ---- errors at the call site ------------------------------------------------


def compile_error(fn, sig, block=(128,)):
    with pytest.raises(CompileError) as e:
        cuda.compile_ptx(fn, sig, block=block)
    return str(e.value)


def test_error_unsupported_item_type():
    def k(x, out):
        out[0] = cuda.block.sum(x[cuda.threadIdx.x])

    msg = compile_error(k, "void(float16[::1], float16[::1])")
    assert "float16 is not supported" in msg and "int32, int64, uint32, uint64, float32, float64" in msg
    line = k.__code__.co_firstlineno + 1
    assert f"test_block_algorithms.py:{line}" in msg


def test_error_unsupported_op():
    import math

    def k(x, out):
        out[0] = cuda.block.reduce(x[cuda.threadIdx.x], math.sqrt)

    msg = compile_error(k, "void(float32[::1], float32[::1])")
    assert "unsupported op" in msg and "device=True" in msg


def test_error_op_does_not_apply():
    def k(x, out):
        out[0] = cuda.block.reduce(x[cuda.threadIdx.x], operator.xor)

    assert "operator.xor does not apply to float32" in compile_error(k, "void(float32[::1], float32[::1])")


def test_error_user_op_returning_nothing():
    @cuda.jit(device=True)
    def bad(a, b):
        a + b

    def k(x, out):
        out[0] = cuda.block.reduce(x[cuda.threadIdx.x], bad)

    assert "must return a number" in compile_error(k, "void(float32[::1], float32[::1])")


def test_error_block_shape_cub_rejects():
    def k(x, out):
        out[0] = cuda.warp.sum(x[cuda.threadIdx.x])

    msg = compile_error(k, "void(int32[::1], int32[::1])", block=(48,))
    assert "multiple of warp_threads" in msg
    msg = compile_error(segment_sums, "void(float32[:, ::1], float32[::1])", block=(64, 32))
    assert "at most 1024 threads" in msg


def test_error_load_needs_contiguous_1d():
    def k(x, out):
        items = cuda.block.load(x, 0, 4)
        cuda.block.store(out, 0, items)

    assert "1-d array" in compile_error(k, "void(float32[:, ::1], float32[::1])")
    assert "contiguous" in compile_error(k, "void(float32[:], float32[::1])")


def test_error_items_per_thread_not_constant():
    def k(x, n):
        items = cuda.block.load(x, 0, n)
        cuda.block.store(x, 0, items)

    assert "items_per_thread must be a constant" in compile_error(k, "void(float32[::1], int64)")


def test_error_histogram_bins_unknown():
    def k(x, hist):
        cuda.block.histogram(x[cuda.threadIdx.x], hist)

    msg = compile_error(k, "void(int32[::1], uint32[::1])")
    assert "number of bins" in msg and "bins=N" in msg

    def k2(x, hist):
        cuda.block.histogram(x[cuda.threadIdx.x], hist, bins=32)

    cuda.compile_ptx(k2, "void(int32[::1], uint32[::1])", block=(128,))   # bins given: fine


def test_error_exclusive_scan_needs_initial():
    def k(x, out):
        out[0] = cuda.block.exclusive_scan(x[cuda.threadIdx.x], max)

    assert "missing required argument 'initial'" in compile_error(k, "void(int32[::1], int32[::1])")


def test_error_shared_memory_limit():
    def k(x):
        items = cuda.local.array(32, np.float64)
        for i in range(32):
            items[i] = x[i]
        cuda.block.radix_sort(items)
        x[0] = items[0]

    msg = compile_error(k, "void(float64[::1])", block=(1024,))
    assert "48 KB" in msg


def test_error_local_array_length_unknown():
    def k(x, flag):
        if flag:
            a = cuda.local.array(4, np.int32)
        else:
            a = cuda.local.array(8, np.int32)
        for i in range(4):
            a[i] = x[i]
        x[0] = cuda.block.sum(a)

    msg = compile_error(k, "void(int32[::1], boolean)")
    assert "how many items each thread holds" in msg


def test_host_call_is_device_only():
    with pytest.raises(cuda.DeviceOnlyError):
        cuda.block.sum(1.0)
    assert cuda.warp.inclusive_sum._cudajit_symbol_ == "cudajit.warp.inclusive_sum"


# ---------------------------------------------------------------------------
# GPU: every primitive, type and op against numpy
# ---------------------------------------------------------------------------


def _warm(case):
    kind, dtype, block = case
    cuda.compile_cubin(KERNELS[kind], signature(kind, dtype), block=block,
                       arch=f"sm_{gpu_arch()}")


def gpu_arch():
    major, minor = cuda.get_current_device()["compute_capability"]
    return major * 10 + minor


@pytest.fixture(scope="module")
def warm_gpu_kernels():
    """Compiles every kernel of the matrix concurrently (NVRTC on every core),
    so the launches below find their CUB instantiations in memory."""
    cases = list(kernel_cases(GPU_BLOCKS))
    workers = max(2, os.cpu_count() or 2)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(_warm, cases))
    return True


def rand_items(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.uniform(-100, 100, n).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 200, n).astype(dt)
    return rng.integers(-100, 100, n).astype(dt)


def init_value(dtype):
    return np.array([150 if np.dtype(dtype).kind == "u" else -7], dtype=dtype)


def check(name, got, want, dtype, scale=None):
    got = np.asarray(got)
    want = np.asarray(want)
    if np.dtype(dtype).kind == "f":
        # Sums: CUB adds in another order than numpy; bound the error by the
        # sum of magnitudes. Everything else is exact.
        eps = 1e-5 if dtype == "float32" else 1e-12
        tol = 0.0 if scale is None else eps * scale
        want = want.astype(np.float64)
        bad = np.abs(got.astype(np.float64) - want) > tol + eps * np.abs(want)
    else:
        bad = got != want.astype(dtype)
    if bad.any():
        idx = np.argwhere(bad)[:5]
        raise AssertionError(f"{name}: {bad.sum()} of {bad.size} differ, first at {idx.tolist()}: "
                             f"got {got[tuple(idx[0])]} want {want[tuple(idx[0])]}")


def scan_ref(x, op, initial=None, exclusive=False):
    """Scan of a 1-d sequence in float64/int64 (Python objects keep ints exact)."""
    out = []
    acc = initial
    for v in x.tolist():
        if exclusive:
            out.append(acc)
            acc = v if acc is None else op(acc, v)
        else:
            acc = v if acc is None else op(acc, v)
            out.append(acc)
    if exclusive and out and out[0] is None:
        out[0] = 0
    return np.array(out, dtype=np.float64 if isinstance(out[0], float) else object)


def wrap(values, dtype):
    """Python ints wrapped to the dtype (products overflow by design)."""
    bits = np.dtype(dtype).itemsize * 8
    out = []
    for v in values:
        v = int(v) % (1 << bits)
        if np.dtype(dtype).kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dtype=dtype)


def segments(a, size):
    return [a[i:i + size] for i in range(0, len(a), size)]


def launch(kind, dtype, block, *args):
    k = _dispatchers[kind]
    k[GRID, block](*args)
    cuda.synchronize()


_dispatchers = {name: cuda.jit(fn) for name, fn in KERNELS.items()}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("block", GPU_BLOCKS, ids=block_id)
def test_gpu_block_scalar(block, dtype, warm_gpu_kernels):
    rng = np.random.default_rng()
    n = int(np.prod(block))
    x = rand_items(rng, dtype, GRID * n)
    if np.dtype(dtype).kind == "f":
        factors = rng.choice([-1.0, 1.0], GRID * n).astype(dtype)
    else:
        factors = rng.integers(1, 4, GRID * n).astype(dtype)
    init = init_value(dtype)
    red = np.zeros((GRID, N_RED), dtype)
    scan = np.zeros((N_SCAN, GRID * n), dtype)
    launch("scalar_block", dtype, block, x, factors, init, red, scan)
    is_float = np.dtype(dtype).kind == "f"
    py = (lambda a: a.astype(np.float64)) if is_float else (lambda a: a.astype(object))
    i0 = float(init[0]) if is_float else int(init[0])
    for b, (seg, fac) in enumerate(zip(segments(x, n), segments(factors, n))):
        s = py(seg)
        scale = float(np.abs(seg).astype(np.float64).sum())
        check(f"sum b{b}", red[b, 0], s.sum(), dtype, scale)
        check(f"min b{b}", red[b, 1], seg.min(), dtype)
        check(f"max b{b}", red[b, 2], seg.max(), dtype)
        check(f"reduce(user_max) b{b}", red[b, 3], seg.max(), dtype)
        check(f"reduce(min) b{b}", red[b, 4], seg.min(), dtype)
        prod = np.prod(fac.astype(np.float64)) if is_float else wrap([np.prod(py(fac))], dtype)[0]
        check(f"reduce(operator.mul) b{b}", red[b, 5], prod, dtype)
        sl = slice(b * n, (b + 1) * n)
        check(f"inclusive_sum b{b}", scan[0, sl], np.cumsum(s), dtype, scale)
        check(f"exclusive_sum b{b}", scan[1, sl], scan_ref(s, operator.add, 0 * s[0], True), dtype, scale)
        check(f"inclusive_scan(max) b{b}", scan[2, sl], np.maximum.accumulate(seg), dtype)
        check(f"inclusive_scan(user_max, init) b{b}", scan[3, sl],
              np.maximum.accumulate(np.maximum(seg, init[0])), dtype)
        check(f"exclusive_scan(min, init) b{b}", scan[4, sl],
              scan_ref(s, min, i0, exclusive=True), dtype)
        check(f"exclusive_scan(add, init) b{b}", scan[5, sl],
              scan_ref(s, operator.add, i0, exclusive=True), dtype, scale)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("block", GPU_BLOCKS, ids=block_id)
def test_gpu_warp_scalar(block, dtype, warm_gpu_kernels):
    rng = np.random.default_rng()
    n = int(np.prod(block))
    x = rand_items(rng, dtype, GRID * n)
    init = init_value(dtype)
    wred = np.zeros((GRID * n // 32, N_WRED), dtype)
    wscan = np.zeros((N_WSCAN, GRID * n), dtype)
    launch("scalar_warp", dtype, block, x, init, wred, wscan)
    is_float = np.dtype(dtype).kind == "f"
    py = (lambda a: a.astype(np.float64)) if is_float else (lambda a: a.astype(object))
    i0 = float(init[0]) if is_float else int(init[0])
    for w, seg in enumerate(segments(x, 32)):
        s = py(seg)
        scale = float(np.abs(seg).astype(np.float64).sum())
        check(f"warp.sum w{w}", wred[w, 0], s.sum(), dtype, scale)
        check(f"warp.min w{w}", wred[w, 1], seg.min(), dtype)
        check(f"warp.max w{w}", wred[w, 2], seg.max(), dtype)
        check(f"warp.reduce(user_max) w{w}", wred[w, 3], seg.max(), dtype)
        check(f"warp.reduce(operator.add) w{w}", wred[w, 4], s.sum(), dtype, scale)
        sl = slice(w * 32, (w + 1) * 32)
        check(f"warp.inclusive_sum w{w}", wscan[0, sl], np.cumsum(s), dtype, scale)
        check(f"warp.exclusive_sum w{w}", wscan[1, sl], scan_ref(s, operator.add, 0 * s[0], True), dtype, scale)
        check(f"warp.inclusive_scan(max) w{w}", wscan[2, sl], np.maximum.accumulate(seg), dtype)
        check(f"warp.inclusive_scan(user_max, init) w{w}", wscan[3, sl],
              np.maximum.accumulate(np.maximum(seg, init[0])), dtype)
        check(f"warp.exclusive_scan(min, init) w{w}", wscan[4, sl],
              scan_ref(s, min, i0, exclusive=True), dtype)


def stable_order(keys, descending=False):
    idx = list(range(len(keys)))
    vals = keys.tolist()
    return np.array(sorted(idx, key=(lambda i: -vals[i]) if descending else (lambda i: vals[i])))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("block", GPU_BLOCKS, ids=block_id)
def test_gpu_items(block, dtype, warm_gpu_kernels):
    rng = np.random.default_rng()
    n = int(np.prod(block))
    tile = n * IPT
    x = rand_items(rng, dtype, GRID * tile)
    values = rand_items(rng, dtype, GRID * tile)
    init = init_value(dtype)
    red = np.zeros((GRID * n // 32, N_ITEMS_RED), dtype)
    tiles = np.zeros(N_TILES * GRID * tile, dtype)
    launch("items", dtype, block, x, values, init, red, tiles)
    tiles = tiles.reshape(N_TILES, GRID * tile)
    is_float = np.dtype(dtype).kind == "f"
    py = (lambda a: a.astype(np.float64)) if is_float else (lambda a: a.astype(object))
    i0 = float(init[0]) if is_float else int(init[0])
    for b in range(GRID):
        sl = slice(b * tile, (b + 1) * tile)
        seg = x[sl]
        s = py(seg)
        scale = float(np.abs(seg).astype(np.float64).sum())
        check(f"sum(items) b{b}", red[b, 0], s.sum(), dtype, scale)
        check(f"max(items) b{b}", red[b, 1], seg.max(), dtype)
        check(f"reduce(items, user_max) b{b}", red[b, 2], seg.max(), dtype)
        for a, name in enumerate(["blocked", "striped", "transpose", "vectorize/warp_transpose"]):
            check(f"load/store {name} b{b}", tiles[a, sl], seg, dtype)
        check(f"inclusive_sum(items) b{b}", tiles[4, sl], np.cumsum(s), dtype, scale)
        check(f"exclusive_scan(items, max, init) b{b}", tiles[5, sl],
              scan_ref(s, max, i0, exclusive=True), dtype)
        warp_tiles = segments(s, 32 * IPT)
        check(f"warp.inclusive_sum(items) b{b}", tiles[6, sl],
              np.concatenate([np.cumsum(w) for w in warp_tiles]), dtype, scale)
        check(f"warp.exclusive_scan(items, min, init) b{b}", tiles[7, sl],
              np.concatenate([scan_ref(w, min, i0, exclusive=True) for w in warp_tiles]), dtype)
        check(f"radix_sort(items) b{b}", tiles[8, sl], np.sort(seg, kind="stable"), dtype)
        check(f"radix_sort(items, descending, striped) b{b}", tiles[9, sl], np.sort(seg)[::-1], dtype)
        check(f"radix_sort(keys, values) b{b}", tiles[10, sl], values[sl][stable_order(seg)], dtype)
        one = slice(b * n, (b + 1) * n)
        check(f"radix_sort(key, value, descending) b{b}", tiles[11, one],
              values[one][stable_order(x[one], descending=True)], dtype)
    for w, seg in enumerate(segments(x, 32 * IPT)[:GRID * n // 32]):
        # warp.sum(items): warp w of block b holds x[b*tile + w*128 ...]; rows
        # of `red` are global warp ids.
        check(f"warp.sum(items) w{w}", red[w, 3], py(seg).sum(), dtype,
              float(np.abs(seg).astype(np.float64).sum()))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("block", GPU_BLOCKS, ids=block_id)
def test_gpu_histogram_and_bitwise(block, dtype, warm_gpu_kernels):
    rng = np.random.default_rng()
    n = int(np.prod(block))
    samples = rng.integers(0, HIST_BINS, GRID * n * IPT).astype(dtype)
    hist = np.zeros((GRID, 2, HIST_BINS), np.uint32)
    red = np.zeros((GRID, 3), dtype)
    launch("int", dtype, block, samples, hist, red)
    for b in range(GRID):
        tile = samples[b * n * IPT:(b + 1) * n * IPT]
        one = samples[b * n:(b + 1) * n]
        check(f"histogram(items) b{b}", hist[b, 0], np.bincount(tile, minlength=HIST_BINS), "uint32")
        check(f"histogram(sort) b{b}", hist[b, 1], np.bincount(one, minlength=HIST_BINS), "uint32")
        check(f"reduce(xor) b{b}", red[b, 0], np.bitwise_xor.reduce(tile), dtype)
        check(f"reduce(or) b{b}", red[b, 1], np.bitwise_or.reduce(tile), dtype)
        check(f"reduce(and) b{b}", red[b, 2], np.bitwise_and.reduce(one), dtype)


@pytest.mark.gpu
def test_gpu_launch_specialises_on_block_shape():
    @cuda.jit
    def k(x, out):
        t = cuda.threadIdx.x
        s = cuda.block.sum(x[cuda.blockIdx.x * cuda.blockDim.x + t])
        if t == 0:
            out[cuda.blockIdx.x] = s

    rng = np.random.default_rng()
    x = rng.integers(-1000, 1000, 1024).astype(np.int64)
    for threads in (64, 256, 64):
        out = np.zeros(1024 // threads, np.int64)
        k[1024 // threads, threads](x, out)
        cuda.synchronize()
        np.testing.assert_array_equal(out, x.reshape(-1, threads).sum(axis=1))
    assert sorted(ov.block for ov in k.overloads.values()) == [(64, 1, 1), (256, 1, 1)]


@pytest.mark.gpu
def test_gpu_running_example():
    rng = np.random.default_rng()
    x = rng.standard_normal((1000, 777)).astype(np.float32)
    out = np.zeros(1000, np.float32)
    segment_sums[1000, 256](x, out)
    cuda.synchronize()
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-3)
