"""The launch path: kernel[...] configurations, argument routes (cudajit,
CuPy, PyTorch, __cuda_array_interface__, DLPack), default streams, several
GPUs, recording. CI runs it on the mock driver (runtime/testing/
mock_libcuda.cpp) with stand-ins for CuPy and PyTorch that have their
attribute shapes; the @pytest.mark.gpu tests use the real libraries."""

import math
import textwrap

import numpy as np
import pytest

import cudajit as cuda

from test_runtime import MOCK_PRELUDE


def mock_run(run_python, mock_driver, *pieces, devices=1):
    code = MOCK_PRELUDE + "\n" + "\n".join(textwrap.dedent(p) for p in pieces)
    if devices == 1:
        return run_python(code, driver=mock_driver)
    import os
    old = os.environ.get("CJMOCK_DEVICES")
    os.environ["CJMOCK_DEVICES"] = str(devices)
    try:
        return run_python(code, driver=mock_driver)
    finally:
        if old is None:
            del os.environ["CJMOCK_DEVICES"]
        else:
            os.environ["CJMOCK_DEVICES"] = old


# A kernel and a player that reads its parameters back (float32 arrays).
COPY = """
@cuda.jit
def copy(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i]

seen = []
def play(params):
    x, k = array_param(params, 0, 1, np.float32)
    y, k = array_param(params, k, 1, np.float32)
    n = param(params, k, "q")
    seen.append((x.ctypes.data, x.shape, x.strides, y.ctypes.data, n,
                 _lib.cjmock_current_device()))
    y[:n] = x[:n]
install(play)
"""

# Stand-ins with the attribute shapes of CuPy and PyTorch arrays, and their
# modules' current-stream functions (registered in sys.modules, as the real
# ones would be once imported).
FAKES = """
import sys, types

cupy = types.ModuleType("cupy"); cupy.cuda = types.ModuleType("cupy.cuda")
class _CupyStream:
    ptr = 0x7770
cupy.cuda.get_current_stream = lambda: _CupyStream()
sys.modules["cupy"] = cupy; sys.modules["cupy.cuda"] = cupy.cuda

class MemoryPointer:
    def __init__(self, ptr, device_id=0):
        self.ptr, self.device_id = ptr, device_id

class ndarray:                      # cupy.ndarray's attributes
    def __init__(self, dev):
        self.keep = dev
        self.data = MemoryPointer(dev.device_pointer)
        self.shape, self.strides, self.dtype = dev.shape, dev.strides, dev.dtype
ndarray.__module__ = "cupy"

torch = types.ModuleType("torch"); torch._C = types.ModuleType("torch._C")
torch.raw_stream_calls = []
def _raw_stream(device):
    torch.raw_stream_calls.append(device)
    return 0x8880 + device
torch._C._cuda_getCurrentRawStream = _raw_stream
sys.modules["torch"] = torch; sys.modules["torch._C"] = torch._C

class dtype:
    def __init__(self, name): self.name = name
    def __str__(self): return "torch." + self.name
float32 = dtype("float32"); float8 = dtype("float8_e4m3fn")

class Tensor:                       # torch.Tensor's attributes
    def __init__(self, dev, device=0, dt=float32):
        self.keep, self.device, self.dtype = dev, device, dt
        self.shape = dev.shape
        self._stride = tuple(s // dev.itemsize for s in dev.strides)
    def data_ptr(self): return self.keep.device_pointer
    def stride(self): return self._stride
    def get_device(self): return self.device
Tensor.__module__ = "torch"
"""


def test_launcher_objects_and_config_cache(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        x = cuda.to_device(np.arange(8, dtype=np.float32)); y = cuda.device_array(8, np.float32)
        l1 = copy[2, 32]
        assert type(l1).__name__ == "Launcher"
        assert l1.griddim == (2, 1, 1) and l1.blockdim == (32, 1, 1) and l1.sharedmem == 0
        assert l1.stream is None
        blocks, threads = 2, 32
        assert copy[blocks, threads].griddim == (2, 1, 1)        # an equal, new tuple
        assert copy[(blocks, 1), [threads, 2]].blockdim == (32, 2, 1)
        class Dim3:
            x, y, z = 4, 2, 1
        assert copy[Dim3(), 8].griddim == (4, 2, 1)
        assert copy[1, 32, 0x42].stream == 0x42
        for g in (1, 2, 3, 1, 2, 3):                              # configurations come and go
            copy[g, 32](x, y, 8)
            assert launches[-1]["grid"] == (g, 1, 1)
        try:
            copy[1, 32](x, y, n=8)
        except TypeError as e:
            print("kwargs:", e)
        print("OK", len(copy.signatures))
    """)
    assert "positional arguments only" in out and out.strip().endswith("OK 1")


def test_dispatcher_subclass(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        from cudajit import _core
        assert type(copy) is cuda.Dispatcher and type(copy) is not _core.Dispatcher
        print("OK", copy.__name__, repr(copy))
    """)
    assert out.startswith("OK copy <cudajit kernel copy>")


def test_cupy_like_arrays_and_stream(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, FAKES, COPY, """
        rng = np.random.default_rng(1)
        h = rng.random(16).astype(np.float32)
        dx, dy = cuda.to_device(h), cuda.device_array(16, np.float32)
        copy[1, 32](ndarray(dx), ndarray(dy), 16)
        assert np.array_equal(dy.copy_to_host(), h)
        assert seen[-1][0] == dx.device_pointer and seen[-1][1] == (16,)
        assert launches[-1]["stream"] == 0x7770                   # CuPy's current stream
        copy[1, 32, 0](ndarray(dx), ndarray(dy), 16)              # an explicit stream wins
        assert launches[-1]["stream"] == 0
        copy[1, 32](dx, dy, 16)                                   # cudajit arrays: default stream
        assert launches[-1]["stream"] == 0
        # strided: layout A, another signature
        copy[1, 32](ndarray(dx[::2]), ndarray(dy[:8]), 8)
        assert ("float32[:]", "float32[::1]", "int64") in copy.signatures
        assert seen[-1][2] == (8,)
        print("OK")
    """)
    assert out.strip() == "OK"


def test_torch_like_tensors_and_stream(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, FAKES, COPY, """
        h = np.arange(12, dtype=np.float32)
        dx, dy = cuda.to_device(h), cuda.device_array(12, np.float32)
        copy[1, 32](Tensor(dx), Tensor(dy), 12)
        assert np.array_equal(dy.copy_to_host(), h)
        assert launches[-1]["stream"] == 0x8880 and torch.raw_stream_calls == [0]
        assert copy.signatures == [("float32[::1]", "float32[::1]", "int64")]
        # PyTorch's stream wins over CuPy's when both kinds are passed
        copy[1, 32](ndarray(dx), Tensor(dy), 12)
        assert launches[-1]["stream"] == 0x8880
        # strides in elements become bytes
        copy[1, 32](Tensor(dx[::3]), Tensor(dy[:4]), 4)
        assert seen[-1][2] == (12,)
        for bad, why in ((Tensor(dx, device=-1), "CPU tensor"), (Tensor(dx, dt=float8), "float8_e4m3fn")):
            try:
                copy[1, 32](bad, Tensor(dy), 4)
            except TypeError as e:
                assert why in str(e), e
                print("refused:", why)
        print("OK")
    """)
    assert out.count("refused:") == 2 and out.strip().endswith("OK")


def test_dlpack_objects(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        import ctypes as C
        class DLDevice(C.Structure): _fields_ = [("type", C.c_int32), ("id", C.c_int32)]
        class DLDataType(C.Structure): _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]
        class DLTensor(C.Structure):
            _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                        ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                        ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]
        class DLManaged(C.Structure):
            _fields_ = [("t", DLTensor), ("ctx", C.c_void_p), ("deleter", C.c_void_p)]
        C.pythonapi.PyCapsule_New.restype = C.py_object
        C.pythonapi.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]

        class DL:                      # only __dlpack__: no __cuda_array_interface__
            def __init__(self, dev, device_type=2, offset_elems=0, step=1):
                self.dev = dev
                n = (dev.shape[0] - offset_elems + step - 1) // step
                self.shape = (C.c_int64 * 1)(n)
                self.strides = (C.c_int64 * 1)(step)
                self.m = DLManaged(DLTensor(dev.device_pointer, DLDevice(device_type, 0), 1,
                                            DLDataType(2, 32, 1), self.shape, self.strides,
                                            offset_elems * 4), None, None)
            def __dlpack__(self, stream=None):
                return C.pythonapi.PyCapsule_New(C.addressof(self.m), b"dltensor", None)

        h = np.arange(10, dtype=np.float32)
        dx, dy = cuda.to_device(h), cuda.device_array(10, np.float32)
        copy[1, 32](DL(dx), DL(dy), 10)
        assert np.array_equal(dy.copy_to_host(), h)
        copy[1, 32](DL(dx, offset_elems=2, step=2), DL(dy), 4)   # offset and strides
        assert seen[-1][0] == dx.device_pointer + 8 and seen[-1][2] == (8,)
        assert ("float32[:]", "float32[::1]", "int64") in copy.signatures
        try:
            copy[1, 32](DL(dx, device_type=1), DL(dy), 4)        # kDLCPU
        except TypeError as e:
            print("refused:", e)
        print("OK")
    """)
    assert "not a CUDA device" in out and out.strip().endswith("OK")


def test_arrays_on_another_device_launch_there(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        assert len(cuda.list_devices()) == 2
        h = np.arange(6, dtype=np.float32)
        cuda.select_device(1)
        x1, y1 = cuda.to_device(h), cuda.device_array(6, np.float32)
        cuda.select_device(0)
        x0, y0 = cuda.to_device(h), cuda.device_array(6, np.float32)
        copy[1, 32](x1, y1, 6)
        assert seen[-1][5] == 1                                   # ran on device 1
        assert np.array_equal(y1.copy_to_host(), h)
        copy[1, 32](x0, y0, 6)
        assert seen[-1][5] == 0
        assert _lib.cjmock_live_modules() == 2                    # loaded once per device
        for _ in range(3):
            copy[1, 32](x1, y1, 6); copy[1, 32](x0, y0, 6)
        assert _lib.cjmock_live_modules() == 2
        class Foreign:                                            # a CAI array: its pointer says
            def __init__(self, d): self.__cuda_array_interface__ = d.__cuda_array_interface__
        copy[1, 32](Foreign(x1), Foreign(y1), 6)
        assert seen[-1][5] == 1
        copy[1, 32](1.5 if False else x0, y0, np.int64(6))
        assert seen[-1][5] == 0
        try:
            copy[1, 32](x0, y1, 6)
        except ValueError as e:
            print("mixed:", e)
        assert cuda.get_current_device()["id"] == 0               # the user's choice is kept
        print("OK")
    """, devices=2)
    assert "mixed:" in out and "device 1" in out and out.strip().endswith("OK")


def test_recorded_signatures(run_python, mock_driver, tmp_path):
    import json
    import os
    rec = tmp_path / "rec.jsonl"
    os.environ["CUDAJIT_RECORD"] = str(rec)
    try:
        mock_run(run_python, mock_driver, COPY, """
            x, y = cuda.to_device(np.ones(4, np.float32)), cuda.device_array(4, np.float32)
            for _ in range(5):
                copy[1, 32](x, y, 4)
            copy[1, 32](x, y, np.int32(4))
        """)
    finally:
        del os.environ["CUDAJIT_RECORD"]
    lines = [json.loads(l) for l in rec.read_text().splitlines()]
    assert [l["signature"][2] for l in lines] == ["int64", "int32"]
    assert all(l["qualname"] == "copy" and l["module"] == "__main__" for l in lines)


def test_no_leaks_and_no_growth(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        import sys, tracemalloc, gc
        x, y = cuda.to_device(np.ones(64, np.float32)), cuda.device_array(64, np.float32)
        n = np.int64(64)
        launches.clear(); seen.clear()
        _lib.cjmock_set_launch_hook(None)          # no Python work inside the launch
        for _ in range(100):
            copy[2, 32](x, y, n)
        refs = [sys.getrefcount(o) for o in (x, y, n, copy)]
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        for _ in range(20000):
            copy[2, 32](x, y, n)
        after = tracemalloc.take_snapshot()
        grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
        assert [sys.getrefcount(o) for o in (x, y, n, copy)] == refs
        print("grown", grown)
    """)
    grown = int(out.split()[-1])
    assert grown < 20000, out      # not a byte per launch


def test_compile_stats_and_load_time(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        x, y = cuda.to_device(np.ones(4, np.float32)), cuda.device_array(4, np.float32)
        copy[1, 32](x, y, 4)
        (s,) = copy.stats.values()
        assert s["load"] > 0 and s["nvvm"] > 0 and s["cache_result"] == "off"
        # The mock's JIT compiler refuses PTX by default: nvJitLink assembled.
        assert s["assembler"] == "nvJitLink" and _lib.cjmock_links() == 0, s
        print("OK")
    """)
    assert out.strip() == "OK"


def test_driver_jit_assembles_for_the_gpu_in_hand(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, COPY, """
        import os
        _lib.cjmock_last_link_options.restype = ctypes.c_char_p
        _lib.cjmock_set_link_result(0)
        x = cuda.to_device(np.arange(8, dtype=np.float32))
        y = cuda.device_array(8, np.float32)
        copy[1, 32](x, y, 8)
        (s,) = copy.stats.values()
        assert s["assembler"] == "driver" and _lib.cjmock_links() == 1, s
        assert _lib.cjmock_last_link_options() == b"", _lib.cjmock_last_link_options()
        assert _lib.cjmock_live_link_states() == 0          # destroyed after the copy
        assert np.array_equal(y.copy_to_host(), np.arange(8, dtype=np.float32))

        # Options follow the kernel's: opt=0 and lineinfo reach the driver.
        @cuda.jit(opt=False, lineinfo=True)
        def copy0(x, y, n):
            i = cuda.grid(1)
            if i < n:
                y[i] = x[i]
        copy0[1, 32](x, y, 8)
        assert _lib.cjmock_last_link_options() == b"7=0,13=1", _lib.cjmock_last_link_options()

        # CUDAJIT_ASSEMBLER=nvjitlink turns the driver's compiler off.
        os.environ["CUDAJIT_ASSEMBLER"] = "nvjitlink"
        copy.compile("void(float64[::1], float64[::1], int64)")
        del os.environ["CUDAJIT_ASSEMBLER"]
        by_dtype = lambda d: next(v for k, v in copy.stats.items() if k[0].startswith(d))
        s64 = by_dtype("float64")
        assert s64["assembler"] == "nvJitLink", s64

        # A driver that refuses the PTX (older than the toolkit): nvJitLink.
        _lib.cjmock_set_link_result(222)
        copy.compile("void(int32[::1], int32[::1], int64)")
        s32 = by_dtype("int32")
        assert s32["assembler"] == "nvJitLink" and _lib.cjmock_links() == 2, s32
        assert _lib.cjmock_live_link_states() == 0
        print("OK")
    """)
    assert out.strip() == "OK"


# ======================================================= real GPU


@pytest.mark.gpu
def test_gpu_driver_jit_and_nvjitlink_agree(monkeypatch):
    # One kernel that needs libdevice (exp, log) and one that does not, each
    # assembled by the driver's JIT compiler and by nvJitLink.
    def scale(x, y, n):
        i = cuda.grid(1)
        if i < n:
            y[i] = x[i] * 3.0 - 1.0

    def transcendental(x, y, n):
        i = cuda.grid(1)
        if i < n:
            y[i] = math.exp(x[i]) + math.log(1.0 + abs(x[i]))

    rng = np.random.default_rng()
    x = rng.standard_normal(1000)
    refs = {scale: x * 3.0 - 1.0, transcendental: np.exp(x) + np.log1p(np.abs(x))}
    for assembler in ("driver", "nvJitLink"):
        if assembler == "nvJitLink":
            monkeypatch.setenv("CUDAJIT_ASSEMBLER", "nvjitlink")
        for fn, ref in refs.items():
            k = cuda.jit(type(fn)(fn.__code__, {"cuda": cuda, "math": math}, fn.__name__))
            dx = cuda.to_device(x)
            dy = cuda.to_device(np.full_like(x, np.nan))
            k[(x.size + 127) // 128, 128](dx, dy, x.size)
            (st,) = k.stats.values()
            assert st["assembler"] == assembler, st
            np.testing.assert_allclose(dy.copy_to_host(), ref, rtol=1e-13, atol=1e-13)


@pytest.mark.gpu
@pytest.mark.parametrize("level", ["min", "mid", "max"])
def test_gpu_fast_compile_gives_the_same_results(level):
    # Less optimised, not different: a loop, a device function, libdevice.
    @cuda.jit(device=True)
    def weight(j):
        return 1.0 / (j + 1.0)

    def series(x, y, n, terms):
        i = cuda.grid(1)
        if i < n:
            s = 0.0
            for j in range(terms):
                s += math.sqrt(abs(x[(i + j) % n])) * weight(j)
            y[i] = s

    rng = np.random.default_rng()
    x = rng.standard_normal(777)
    terms = 9
    ref = np.zeros_like(x)
    for j in range(terms):
        ref += np.sqrt(np.abs(np.roll(x, -j))) / (j + 1.0)
    k = cuda.jit(fast_compile=level)(series)
    dx = cuda.to_device(x)
    dy = cuda.to_device(np.full_like(x, np.nan))
    k[(x.size + 127) // 128, 128](dx, dy, x.size, terms)
    (st,) = k.stats.values()
    assert st["assembler"] == "nvJitLink"   # the driver has no fast-compile option
    np.testing.assert_allclose(dy.copy_to_host(), ref, rtol=1e-13)


@pytest.mark.gpu
def test_gpu_cupy_default_stream_is_cupys():
    cp = pytest.importorskip("cupy")

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    x = cp.zeros(1 << 20, cp.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x += 1                       # queued on s
        add_one[(x.size + 255) // 256, 256](x)   # must follow it on s
        x *= 3
    s.synchronize()
    assert float(x.min()) == 6.0 and float(x.max()) == 6.0


@pytest.mark.gpu
def test_gpu_torch_default_stream_is_torchs():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    x = torch.zeros(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x += 1
        add_one[(x.numel() + 255) // 256, 256](x)
        x *= 3
    s.synchronize()
    assert float(x.min()) == 6.0 and float(x.max()) == 6.0


@pytest.mark.gpu
def test_gpu_torch_strided_and_dtypes():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")

    @cuda.jit
    def scale2d(a, s):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = a[i, j] * s

    base = torch.rand(64, 48, device="cuda", dtype=torch.float64)
    expect = base.clone()
    expect[::2, 1::3] *= 3
    scale2d[(8, 8), (8, 8)](base[::2, 1::3], 3.0)
    torch.cuda.synchronize()
    assert torch.allclose(base, expect)


@pytest.mark.gpu
def test_gpu_dlpack_only_object():
    cp = pytest.importorskip("cupy")

    class OnlyDlpack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

    @cuda.jit
    def copy(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = x[i]

    x = cp.arange(1000, dtype=cp.float32)
    y = cp.zeros_like(x)
    copy[4, 256](OnlyDlpack(x), OnlyDlpack(y))
    cp.cuda.runtime.deviceSynchronize()
    assert bool((x == y).all())


@pytest.mark.gpu
def test_gpu_second_device():
    if len(cuda.list_devices()) < 2:
        pytest.skip("one GPU")

    @cuda.jit
    def fill(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = v

    cuda.select_device(1)
    d1 = cuda.device_array(1000, np.int32)
    cuda.select_device(0)
    fill[4, 256](d1, 7)          # arrays on device 1: runs on device 1
    cuda.select_device(1)
    np.testing.assert_array_equal(d1.copy_to_host(), np.full(1000, 7, np.int32))
    cuda.select_device(0)


@pytest.mark.gpu
def test_gpu_cached_kernel_in_a_fresh_process(tmp_path, run_python):
    code = f"""
        import time, numpy as np, cudajit as cuda
        @cuda.jit("void(float32[::1], float32[::1], int64)", cache=True)
        def copy(x, y, n):
            i = cuda.grid(1)
            if i < n:
                y[i] = x[i]
        x = cuda.to_device(np.arange(64, dtype=np.float32)); y = cuda.device_array(64, np.float32)
        copy[1, 64](x, y, 64)
        assert np.array_equal(y.copy_to_host(), np.arange(64, dtype=np.float32))
        (s,) = copy.stats.values()
        print(s["cache_result"], s["load"] > 0)
    """
    import os
    os.environ["CUDAJIT_CACHE_DIR"] = str(tmp_path / "cache")
    try:
        assert run_python(code).split() == ["miss", "True"]
        assert run_python(code).split() == ["hit", "True"]
    finally:
        del os.environ["CUDAJIT_CACHE_DIR"]


def test_launch_over_the_device_limit_names_it(run_python, mock_driver):
    """A block larger than the device allows: the error says how large it is
    and what the limit is (the driver alone says "invalid argument")."""
    out = mock_run(run_python, mock_driver, COPY, """
        x = cuda.to_device(np.arange(8, dtype=np.float32)); y = cuda.device_array(8, np.float32)
        try:
            copy[1, 2048](x, y, 8)
        except Exception as e:
            print(type(e).__name__, "|", e)
        copy[1, 1024](x, y, 8)              # at the limit: launches
        print("launched", len(launches))
    """)
    first, second = out.strip().splitlines()[-2:]
    assert first.startswith("CudaAPIError | cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"), first
    assert "the block has 2048 threads (2048 x 1 x 1) and the device allows 1024 per block" in first, first
    assert second == "launched 1", out
