"""The runtime: driver loading, device memory, argument classification and
packing, launches.

Three tiers:
  * no driver / the toolkit's stub driver: clear CudaSupportError (CI);
  * a mock libcuda (runtime/testing/mock_libcuda.cpp) whose cuLaunchKernel
    hands the packed parameters to a Python hook that plays the kernel on host
    memory: the whole launch path without a GPU (CI);
  * @pytest.mark.gpu: the same on a real GPU (the GPU machine).
"""

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cudajit as cuda

# The CUDA toolkit's stub driver: loads, answers every call with an error.
STUB_LIBCUDA = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib" / "stubs" / "libcuda.so"

# ======================================================= no usable driver (CI)


def test_missing_driver_library(run_python):
    out = run_python("""
        import numpy as np, cudajit as cuda
        assert not cuda.is_available()
        @cuda.jit
        def k(x):
            x[0] = 1
        for action in (lambda: k[1, 1](np.zeros(2)), lambda: cuda.to_device(np.zeros(2)),
                       lambda: cuda.device_array(4), lambda: cuda.synchronize()):
            try:
                action()
            except cuda.CudaSupportError as e:
                print("OK", e)
            else:
                print("NO ERROR")
    """, driver="/nonexistent/libcuda.so.1")
    lines = out.strip().splitlines()
    assert len(lines) == 4 and all(l.startswith("OK") for l in lines), out
    assert "could not be loaded" in out


@pytest.mark.skipif(not STUB_LIBCUDA.exists(), reason="no stub libcuda in the toolkit")
def test_stub_driver_library(run_python):
    out = run_python("""
        import numpy as np, cudajit as cuda
        assert not cuda.is_available()
        try:
            cuda.to_device(np.arange(3.0))
        except cuda.CudaSupportError as e:
            print(e)
    """, driver=str(STUB_LIBCUDA))
    assert "stub" in out


# ======================================================= the mock driver (CI)

# Helpers run in the mock subprocess: a launch hook that calls `play(name,
# grid, block, params)`, and views of "device" memory (host memory there).
MOCK_PRELUDE = """
import ctypes, struct
import numpy as np
import cudajit as cuda

_lib = ctypes.CDLL(cuda._core.driver_library())
_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint),
                         ctypes.POINTER(ctypes.c_uint), ctypes.c_uint, ctypes.c_size_t,
                         ctypes.POINTER(ctypes.c_void_p))
launches = []

def install(play):
    def hook(name, grid, block, shared, stream, params):
        launches.append(dict(name=name.decode(), grid=tuple(grid[:3]), block=tuple(block[:3]),
                             shared=shared, stream=stream))
        play(params)
    cb = _HOOK(hook)
    install.keep = cb
    _lib.cjmock_set_launch_hook(cb)

def param(params, k, fmt):
    size = struct.calcsize(fmt)
    return struct.unpack(fmt, ctypes.string_at(params[k], size))[0]

def view(ptr, shape, strides, dtype):
    dtype = np.dtype(dtype)
    if not shape or 0 in shape:
        span = dtype.itemsize
    else:
        span = sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + dtype.itemsize
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    buf = (ctypes.c_char * span).from_address(ptr + lo)
    return np.ndarray(shape, dtype, buffer=buf, offset=-lo, strides=strides)

def array_param(params, k, ndim, dtype):
    ptr = param(params, k, "Q")
    shape = tuple(param(params, k + 1 + d, "q") for d in range(ndim))
    strides = tuple(param(params, k + 1 + ndim + d, "q") for d in range(ndim))
    return view(ptr, shape, strides, dtype), k + 1 + 2 * ndim
"""


def mock_run(run_python, mock_driver, body):
    # `body` (AXPY included) is indented as the test source is.
    return run_python(MOCK_PRELUDE + "\n" + textwrap.dedent(body), driver=mock_driver)


def test_mock_memory_round_trips(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, """
        rng = np.random.default_rng(0)
        assert cuda.is_available()
        for dtype in (np.float32, np.float64, np.int8, np.int32, np.uint16, np.int64, np.bool_,
                      np.float16):
            a = (rng.random((7, 5)) * 100).astype(dtype)
            d = cuda.to_device(a)
            assert d.shape == a.shape and d.strides == a.strides and d.dtype == a.dtype
            assert d.size == a.size and d.ndim == 2 and d.nbytes == a.nbytes
            assert np.array_equal(d.copy_to_host(), a)
        f = np.asfortranarray(rng.random((4, 6)))
        df = cuda.to_device(f)
        assert df.is_f_contiguous() and not df.is_c_contiguous()
        back = df.copy_to_host()
        assert back.flags.f_contiguous and np.array_equal(back, f)
        # strided host arrays are made contiguous first
        s = rng.random((8, 8))[::2, 1::3]
        assert np.array_equal(cuda.to_device(s).copy_to_host(), s)
        # copy into an existing host array, and host -> existing device array
        a = rng.random(16)
        d = cuda.device_array(16)
        d.copy_to_device(a)
        out = np.empty(16)
        assert d.copy_to_host(out) is not None and np.array_equal(out, a)
        e = cuda.device_array_like(d)
        e.copy_to_device(d)
        assert np.array_equal(e.copy_to_host(), a)
        print("OK")
    """)
    assert out.strip() == "OK"


def test_mock_views(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, """
        a = np.random.default_rng(1).random((6, 7)).astype(np.float32)
        d = cuda.to_device(a)
        for key in [(slice(1, None), slice(None, None, 2)), 3, (slice(None, None, -1), 2),
                    (slice(2, 4),), (-1, slice(None, None, -3)), (slice(5, 2, -1), slice(1, 6))]:
            v = d[key]
            assert v.shape == a[key].shape, key
            assert np.array_equal(v.copy_to_host(), a[key]), key
        assert np.array_equal(d.T.copy_to_host(), a.T)
        assert np.array_equal(d.transpose(1, 0).copy_to_host(), a.T)
        assert np.array_equal(d[1:, ::2].transpose((1, 0)).copy_to_host(), a[1:, ::2].T)
        assert d.T.is_f_contiguous() and not d.T.is_c_contiguous()
        try:
            d[6]
        except IndexError as e:
            print("index error:", e)
        print("OK")
    """)
    assert "index error" in out and out.strip().endswith("OK")


def test_mock_cuda_array_interface_export(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, """
        a = np.arange(12, dtype=np.int32).reshape(3, 4)
        d = cuda.to_device(a)
        cai = d.__cuda_array_interface__
        assert cai["shape"] == (3, 4) and cai["typestr"] == "<i4" and cai["version"] == 3
        assert cai["strides"] is None and cai["data"][1] is False and cai["data"][0] != 0
        # the pointer really is the data (the mock's device memory is host memory)
        assert np.array_equal(view(cai["data"][0], (3, 4), (16, 4), np.int32), a)
        v = d[:, 1::2]
        assert v.__cuda_array_interface__["strides"] == (16, 8)
        assert v.__cuda_array_interface__["data"][0] == cai["data"][0] + 4
        assert cuda.is_cuda_array(d) and not cuda.is_cuda_array(a)
        print("OK")
    """)
    assert out.strip() == "OK"


AXPY = """
        @cuda.jit
        def axpy(a, x, y):
            i = cuda.grid(1)
            if i < x.size:
                y[i] = a * x[i] + y[i]

        def play_axpy(scalar_fmt):
            def play(params):
                a = param(params, 0, scalar_fmt)
                x, k = array_param(params, 1, 1, np.float32)
                y, _ = array_param(params, k, 1, np.float32)
                y[:] = np.float32(a) * x + y
            return play
"""


def test_mock_launch_device_arrays(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        install(play_axpy("d"))
        rng = np.random.default_rng(2)
        x = rng.random(1000).astype(np.float32)
        y = rng.random(1000).astype(np.float32)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        axpy[4, 256](2.5, dx, dy)
        assert np.allclose(dy.copy_to_host(), 2.5 * x + y)
        assert launches[-1]["grid"] == (4, 1, 1) and launches[-1]["block"] == (256, 1, 1)
        assert axpy.signatures == [("float64", "float32[::1]", "float32[::1]")]
        # same types again: no new signature
        axpy[(2, 1), (128, 2, 1), 0, 64](1.0, dx, dy)
        assert len(axpy.signatures) == 1
        assert launches[-1]["grid"] == (2, 1, 1) and launches[-1]["block"] == (128, 2, 1)
        assert launches[-1]["shared"] == 64
        print("OK", launches[0]["name"])
    """)
    assert out.startswith("OK")


def test_mock_launch_host_arrays_copy_in_and_out(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        install(play_axpy("d"))
        rng = np.random.default_rng(3)
        x = rng.random(300).astype(np.float32)
        y = rng.random(300).astype(np.float32)
        expect = 3.0 * x + y
        axpy[2, 256](3.0, x, y)            # numpy arrays: copied in, and y copied back
        assert np.allclose(y, expect)
        # a strided host view is written back through the view
        big = rng.random(600).astype(np.float32)
        base = big.copy()
        axpy[3, 256](1.0, x, big[::2])
        assert np.allclose(big[::2], x + base[::2]) and np.array_equal(big[1::2], base[1::2])
        # a read-only array is not written back
        ro = rng.random(300).astype(np.float32); ro.setflags(write=False); before = ro.copy()
        axpy[2, 256](1.0, x, ro)
        assert np.array_equal(ro, before)
        assert _lib.cjmock_live_allocations() == 0     # staging buffers freed
        print("OK")
    """)
    assert out.strip() == "OK"


def test_mock_launch_cuda_array_interface_objects(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        install(play_axpy("d"))

        class Foreign:                       # a CuPy / PyTorch stand-in
            def __init__(self, dev, strides, stream=None, version=3):
                self.owner = dev             # the memory lives as long as the view
                cai = dict(dev.__cuda_array_interface__)
                cai["strides"] = strides
                cai["version"] = version
                if version >= 3:
                    cai["stream"] = stream
                else:
                    cai.pop("stream", None)
                self.__cuda_array_interface__ = cai

        rng = np.random.default_rng(4)
        x = rng.random(500).astype(np.float32)
        y = rng.random(500).astype(np.float32)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        axpy[2, 256](0.5, Foreign(dx, None, version=2), Foreign(dy, (4,), stream=1))
        assert np.allclose(dy.copy_to_host(), 0.5 * x + y)
        assert axpy.signatures == [("float64", "float32[::1]", "float32[::1]")]
        # a strided CAI view is an 'A' layout array
        dz = cuda.to_device(y)
        axpy[2, 256](1.0, Foreign(cuda.to_device(x[:250]), None), dz[::2])
        assert ("float64", "float32[::1]", "float32[:]") in axpy.signatures
        expect = y.copy(); expect[::2] = x[:250] + y[::2]
        assert np.allclose(dz.copy_to_host(), expect)
        print("OK")
    """)
    assert out.strip() == "OK"


def test_mock_scalar_classification_and_packing(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, """
        @cuda.jit
        def k(a, b, c, out):
            out[0] = a + b + c

        seen = []
        install(lambda params: seen.append(params))
        o = cuda.device_array(1)
        k[1, 1](True, 7, 2.5, o)
        k[1, 1](np.float32(1.5), np.int16(-3), np.uint8(200), o)
        k[1, 1](2**63 + 5, -1, 0.0, o)
        for s in k.signatures:
            print(",".join(s))
    """)
    assert out.split() == ["bool,int64,float64,float64[::1]",
                           "float32,int16,uint8,float64[::1]",
                           "uint64,int64,float64,float64[::1]"]


def test_mock_explicit_signature_converts_arguments(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        k = cuda.jit("void(float32, float32[:], float32[:])")(axpy.py_func)
        install(play_axpy("f"))      # the declared float32 is packed as 4 bytes
        x = np.arange(8, dtype=np.float32); y = np.ones(8, np.float32)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        k[1, 32](2, dx, dy)          # an int converts to the declared float32
        assert np.allclose(dy.copy_to_host(), 2 * x + 1)
        assert len(k.signatures) == 1
        try:
            k[1, 32](2.0, cuda.to_device(x.astype(np.float64)), dy)
        except TypeError as e:
            print("TypeError:", e)
        print("OK")
    """)
    assert "no matching definition" in out and out.strip().endswith("OK")


def test_mock_unsupported_arguments(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        d = cuda.to_device(np.zeros(4, np.float32))
        cases = [("list", lambda: axpy[1, 1](1.0, [1.0, 2.0], d)),
                 ("str", lambda: axpy[1, 1]("a", d, d)),
                 ("object", lambda: axpy[1, 1](1.0, np.array([None, 1]), d)),
                 ("dict", lambda: axpy[1, 1](1.0, {}, d)),
                 ("arity", lambda: axpy[1, 1](1.0, d)),
                 ("kwargs", lambda: axpy[1, 1](1.0, d, y=d)),
                 ("bigint", lambda: axpy[1, 1](2**70, d, d))]
        for name, case in cases:
            try:
                case()
            except (TypeError, ValueError) as e:
                print(name, type(e).__name__, e)
            else:
                print(name, "NO ERROR")
    """)
    lines = dict(l.split(" ", 1) for l in out.strip().splitlines())
    # complex scalars and arrays are kernel arguments since issue 5 (language)
    assert set(lines) == {"list", "str", "object", "dict", "arity", "kwargs", "bigint"}
    assert all("NO ERROR" not in v for v in lines.values()), out
    assert "argument 2" in lines["list"] and "list" in lines["list"]
    assert "takes 3 argument" in lines["arity"]
    assert lines["bigint"].startswith("ValueError")


def test_mock_streams(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        install(play_axpy("d"))
        d = cuda.to_device(np.ones(4, np.float32))

        class CupyLike:  ptr = 0x1234
        class TorchLike: cuda_stream = 0x5678
        class NumbaLike:
            handle = ctypes.c_void_p(0x9abc)
        class Protocol:
            def __cuda_stream__(self): return (0, 0xdef0)
        ours = cuda.stream()
        for s in (0, None, 0x42, CupyLike(), TorchLike(), NumbaLike(), Protocol(),
                  cuda.default_stream(), cuda.legacy_default_stream(), cuda.external_stream(0x77)):
            axpy[1, 4, s](1.0, d, d)
            print(hex(launches[-1]["stream"]))
        axpy[1, 4, ours](1.0, d, d)
        assert launches[-1]["stream"] == ours.handle != 0
        ours.synchronize()
        assert ours.query()
    """)
    assert out.split() == ["0x0", "0x0", "0x42", "0x1234", "0x5678", "0x9abc", "0xdef0", "0x0",
                           "0x1", "0x77"]


def test_mock_modules_loaded_once_per_signature(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, AXPY + """
        install(play_axpy("d"))
        d = cuda.to_device(np.ones(4, np.float32))
        for _ in range(5):
            axpy[1, 4](1.0, d, d)
        print(_lib.cjmock_live_modules(), _lib.cjmock_launch_count())
    """)
    assert out.split() == ["1", "5"]


# ======================================================= real GPU


@pytest.mark.gpu
def test_gpu_memory_round_trip():
    rng = np.random.default_rng(10)
    for dtype in (np.float32, np.float64, np.int32, np.uint8, np.bool_):
        a = (rng.random((33, 17)) * 50).astype(dtype)
        d = cuda.to_device(a)
        assert np.array_equal(d.copy_to_host(), a)
        assert np.array_equal(d[3:, ::2].copy_to_host(), a[3:, ::2])
    f = np.asfortranarray(rng.random((5, 9)))
    assert np.array_equal(cuda.to_device(f).copy_to_host(), f)


@pytest.mark.gpu
def test_gpu_axpy_device_arrays():
    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(11)
    n = (1 << 20) + 3
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    axpy[(n + 255) // 256, 256](2.0, dx, dy)
    np.testing.assert_allclose(dy.copy_to_host(), 2.0 * x + y, rtol=1e-6)
    assert axpy.inspect_ptx() and axpy.inspect_nvvm() and axpy.inspect_ir()


@pytest.mark.gpu
def test_gpu_axpy_host_arrays():
    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(12)
    x = rng.random(5000)
    y = rng.random(5000)
    expect = 0.5 * x + y
    axpy[20, 256](0.5, x, y)
    np.testing.assert_allclose(y, expect)


@pytest.mark.gpu
def test_gpu_2d_strided_view():
    @cuda.jit
    def scale(a, s):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = a[i, j] * s

    rng = np.random.default_rng(13)
    h = rng.random((64, 48)).astype(np.float32)
    d = cuda.to_device(h)
    scale[(8, 8), (8, 8)](d[::2, 1::3], np.float32(3.0))
    expect = h.copy()
    expect[::2, 1::3] *= 3
    np.testing.assert_allclose(d.copy_to_host(), expect, rtol=1e-6)


@pytest.mark.gpu
def test_gpu_explicit_signature_and_threadidx():
    @cuda.jit("void(int32[::1], int32)")
    def fill(out, base):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < out.size:
            out[i] = base + i

    d = cuda.device_array(1000, np.int32)
    fill[4, 256](d, 7)
    np.testing.assert_array_equal(d.copy_to_host(), 7 + np.arange(1000, dtype=np.int32))


@pytest.mark.gpu
def test_gpu_cupy_interop():
    cp = pytest.importorskip("cupy")

    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(14)
    x = rng.random(4096).astype(np.float32)
    y = rng.random(4096).astype(np.float32)
    cx, cy = cp.asarray(x), cp.asarray(y)
    stream = cp.cuda.Stream(non_blocking=True)
    axpy[16, 256, stream](1.5, cx, cy)
    stream.synchronize()
    np.testing.assert_allclose(cp.asnumpy(cy), 1.5 * x + y, rtol=1e-6)


@pytest.mark.gpu
def test_gpu_torch_interop():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")

    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    x = torch.rand(3000, device="cuda")
    y = torch.rand(3000, device="cuda")
    expect = 2.0 * x + y
    axpy[12, 256](2.0, x, y)
    torch.cuda.synchronize()
    assert torch.allclose(y, expect)


@pytest.mark.gpu
def test_gpu_bad_block_is_a_cuda_api_error():
    @cuda.jit
    def noop(x):
        x[0] = 1

    d = cuda.device_array(1, np.int64)
    with pytest.raises(cuda.CudaAPIError) as info:
        noop[1, 4096](d)
    assert info.value.function == "cuLaunchKernel" and info.value.code != 0


def test_mock_overloads_are_bounded(run_python, mock_driver, tmp_path, monkeypatch):
    # issue 15: a kernel launched with ever new argument types keeps the
    # cudajit.cache.memory_cache_limit() most recently used overloads; a
    # dropped one unloads its module, comes back from the disk cache when
    # launched again, outlives its eviction while Python holds it
    # (kernel.overloads) or while a launch still uses it (a launch hook that
    # launches the same kernel with new types evicts the running one).
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    out = mock_run(run_python, mock_driver, """
        import cudajit.cache

        @cuda.jit(cache=True)
        def k(a, out):
            out[0] = a

        cudajit.cache.set_memory_cache_limit(2)
        res = cuda.device_array(1, np.float64)
        live = _lib.cjmock_live_modules()
        for t in (np.int8, np.int16, np.int32, np.int64):
            k[1, 1](t(3), res)
        assert [s[0] for s in k.signatures] == ["int32", "int64"], k.signatures
        assert k._evictions == 2 and _lib.cjmock_live_modules() == live + 2
        held = k.overloads[k.signatures[0]]          # int32, about to be dropped
        k[1, 1](np.int8(3), res)                     # dropped: from the disk cache
        assert [s[0] for s in k.signatures] == ["int64", "int8"], k.signatures
        assert k.stats[k.signatures[1]]["cache_result"] == "hit"
        assert held.signature[0] == "int32" and held.ptx.count(".entry") == 1   # still whole
        k[1, 1](np.int64(1), res)                    # used last: kept ...
        k[1, 1](np.uint8(1), res)                    # ... and int8 dropped
        assert [s[0] for s in k.signatures] == ["int64", "uint8"], k.signatures
        del held
        assert _lib.cjmock_live_modules() == live + 2

        cudajit.cache.set_memory_cache_limit(1)
        host = np.zeros(1)                           # a host array: the launch waits, GIL released
        inner = []
        def hook(params):
            if not inner:
                inner.append(None)
                k[1, 1](np.float32(2), host)         # compiles, and drops the running overload ...
                inner.append(_lib.cjmock_live_modules())
        install(lambda params: hook(params))
        before = _lib.cjmock_live_modules()              # int64 and uint8
        k[1, 1](np.int16(5), host)
        assert [s[0] for s in k.signatures] == ["float32"], k.signatures
        # ... which stays loaded while it runs (with those dropped during the
        # launch: freed when no launch of the kernel is in flight) ...
        assert inner[1] == before + 2, (inner, before)
        assert _lib.cjmock_live_modules() == live + 1    # ... and is unloaded after it
        cudajit.cache.set_memory_cache_limit(0)        # no bound
        for t in (np.int8, np.int16, np.int32):
            k[1, 1](t(1), res)
        assert len(k.signatures) == 4
        print("OK", k._evictions)
    """)
    assert out.strip() == "OK 7"   # int8, int16, int32, int8; int64 and uint8 (limit 1); int16
