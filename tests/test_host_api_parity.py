"""numba-cuda host-API items added for parity (docs/numba_parity.md): the
jit options shared_memory_carveout= and extensions=, launch-configuration
access (pre_launch_callbacks, cudajit.launchconfig), CUDA IPC, contexts.

Checked against the mock libcuda (runtime/testing/mock_libcuda.cpp) in a
fresh interpreter per test, as tests/test_host_api.py does; the GPU tier is
tests/gpu/test_host_api_parity_gpu.py.
"""

import pytest

import cudajit as cuda
from test_host_api import host_run


# ------------------------------------------------------------ shared_memory_carveout


@pytest.mark.parametrize("bad, exc, text", [
    ("MaxL2", ValueError, "Invalid carveout value: MaxL2"),
    (101, ValueError, "Carveout must be between -1 and 100"),
    (-2, ValueError, "Carveout must be between -1 and 100"),
    (50.0, TypeError, "shared_memory_carveout must be str or int, got float"),
])
def test_carveout_bad_values_fail_at_the_decorator(bad, exc, text):
    with pytest.raises(exc, match=text):
        cuda.jit(shared_memory_carveout=bad)


def test_carveout_is_an_option_of_the_kernel():
    def k(x):
        x[0] = 1

    for value, want in (("MaxShared", 100), ("maxl1", 0), ("DEFAULT", -1), (37, 37), (-1, -1)):
        kernel = cuda.jit(shared_memory_carveout=value)(k)
        assert kernel._options["shared_memory_carveout"] == want
    assert "shared_memory_carveout" not in cuda.jit(k)._options
    # specialize() keeps it: the specialised kernel is made with the same options
    kernel = cuda.jit("void(float32[::1])", shared_memory_carveout=25)(k)
    assert kernel._options["shared_memory_carveout"] == 25


def test_mock_carveout_set_on_each_loaded_kernel(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        _lib.cjmock_func_attribute.restype = ctypes.c_int
        CARVEOUT = 9   # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT

        def body(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = 2 * x[i]

        install(lambda params: None)
        d = cuda.to_device(np.arange(8.0))
        plain = cuda.jit(body)
        plain[1, 8](d)
        assert _lib.cjmock_func_attribute(CARVEOUT) == -999     # not set without the option
        for value, want in (("MaxShared", 100), ("MaxL1", 0), (40, 40), ("default", -1)):
            k = cuda.jit(shared_memory_carveout=value)(body)
            before = _lib.cjmock_func_attribute_sets()
            k[1, 8](d)                                   # loaded: the attribute is set once
            assert _lib.cjmock_func_attribute(CARVEOUT) == want, (value, _lib.cjmock_func_attribute(CARVEOUT))
            assert _lib.cjmock_func_attribute_sets() == before + 1
            k[1, 8](d)                                   # already loaded: not again
            assert _lib.cjmock_func_attribute_sets() == before + 1
        # a second signature is another loaded function: set on it too
        k = cuda.jit(shared_memory_carveout=10)(body)
        k[1, 8](d)
        k[1, 8](cuda.to_device(np.arange(8, dtype=np.int32)))
        assert _lib.cjmock_func_attribute(CARVEOUT) == 10
        print("OK")
    """)
    assert out.strip().endswith("OK")


# ------------------------------------------------------------ launch configuration


def test_mock_pre_launch_callbacks(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        @cuda.jit
        def scale(x, f):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= f

        def play(params):
            x, k = array_param(params, 0, 1, np.float64)
            x *= param(params, k, "d")
        install(play)
        rng = np.random.default_rng(11)
        a = rng.random(64)
        d = cuda.to_device(a)
        s = cuda.stream()
        cfg = scale[2, 32, s, 16]
        assert cfg.pre_launch_callbacks == [] and cfg.dispatcher is scale and cfg.args is None
        assert cfg.griddim == (2, 1, 1) and cfg.blockdim == (32, 1, 1) and cfg.sharedmem == 16
        assert cfg.stream == s.handle
        seen = []
        def first(kernel, config):
            # before the launch: the kernel compiled and loaded, nothing launched yet
            seen.append(("first", kernel, config, config.args, _lib.cjmock_launch_count()))
        def second(kernel, config):
            seen.append(("second", kernel, config, config.args, _lib.cjmock_launch_count()))
        cfg.pre_launch_callbacks.append(first)
        cfg.pre_launch_callbacks.append(second)
        before = _lib.cjmock_launch_count()
        cfg(d, 3.0)
        assert _lib.cjmock_launch_count() == before + 1
        assert [e[0] for e in seen] == ["first", "second"]
        for _, kernel, config, args, count in seen:
            assert config is cfg and count == before
            assert args[0] is d and args[1] == 3.0
            assert kernel is not None and kernel.signature == scale.signatures[0]
            assert list(scale.overloads.keys()) == [tuple(kernel.signature)]
        assert cfg.args is None                             # only while it launches
        assert np.allclose(d.copy_to_host(), a * 3.0)
        # a fresh configuration has its own (empty) list; numba caches configured
        # launches by their key, cudajit does not (docs/numba_parity.md)
        n = len(seen)
        scale[2, 32, s, 16](d, 1.0)
        assert len(seen) == n and scale[2, 32].pre_launch_callbacks == []
        # a callback's exception stops the launch
        def boom(kernel, config):
            raise KeyError("no launch")
        cfg.pre_launch_callbacks[:] = [boom]
        before = _lib.cjmock_launch_count()
        e = raises(KeyError, cfg, d, 2.0)
        assert _lib.cjmock_launch_count() == before and cfg.args is None
        assert np.allclose(d.copy_to_host(), a * 3.0)
        # a host argument is copied after the callbacks ran
        host = rng.random(64)
        copied = []
        cfg.pre_launch_callbacks[:] = [lambda k, c: copied.append(_lib.cjmock_async_copies())]
        c0 = _lib.cjmock_async_copies()
        cfg(host.copy(), 2.0)
        assert copied == [c0] and _lib.cjmock_async_copies() > c0
        e = raises(TypeError, setattr, cfg, "pre_launch_callbacks", (first,))
        assert "must be a list" in str(e)
        # forall goes through a configured launch too (no callbacks there)
        scale.forall(64)(d, 1.0)

        from cudajit import launchconfig
        assert launchconfig.current_launch_config() is None
        raises(RuntimeError, launchconfig.ensure_current_launch_config)
        @cuda.jit
        def fresh(x, f):
            x[0] = f
        with launchconfig.capture_compile_config(fresh) as capture:
            c = fresh[1, 1]
            c(d, 1.0)                                  # compiles: recorded
        assert capture["config"] is c and capture["config"].griddim == (1, 1, 1)
        with launchconfig.capture_compile_config(fresh) as capture:
            fresh[1, 1](d, 2.0)                        # compiled already: nothing recorded
        assert capture["config"] is None
        with launchconfig.capture_compile_config(fresh) as capture:
            fresh[1, 1](d, 2)                          # another signature: compiles
        assert capture["config"].blockdim == (1, 1, 1)
        raises(TypeError, lambda: launchconfig.capture_compile_config(None).__enter__())
        print("OK")
    """)
    assert out.strip().endswith("OK")


# ------------------------------------------------------------ extensions=


class _NoPrepare:
    pass


class _Prepare:
    def prepare_args(self, ty, val, stream=None, retr=None):
        return ty, val


def test_extensions_option_checked():
    def k(x):
        x[0] = 1

    with pytest.raises(TypeError, match="has no prepare_args"):
        cuda.jit(extensions=[_NoPrepare()])(k)
    with pytest.raises(TypeError, match="takes a list"):
        cuda.jit(extensions=_NoPrepare())(k)
    kernel = cuda.jit(k)
    assert kernel.extensions == []
    ext = _Prepare()
    kernel.extensions.append(ext)           # the attribute is the list itself (numba's)
    assert kernel.extensions == [ext]
    import numpy as np
    special = kernel.specialize(np.zeros(3, np.float32))   # keeps those appended after the decorator
    assert special.specialized and special.extensions == [ext]
    assert cuda.jit(extensions=(ext,))(k).extensions == [ext]


def test_mock_extensions_prepare_args(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        class Boxed:                         # an argument no launch takes as is
            def __init__(self, arr):
                self.arr = arr

        calls = []
        class Unbox:
            def prepare_args(self, ty, val, stream=None, retr=None):
                calls.append(("unbox", ty, type(val).__name__, stream))
                if isinstance(val, Boxed):
                    retr.append(lambda: calls.append(("writeback",)))
                    return "float64[::1]", val.arr
                return ty, val

        class Double:                        # listed first: runs last
            def prepare_args(self, ty, val, stream=None, retr=None):
                calls.append(("double", ty, type(val).__name__))
                if isinstance(val, float):
                    return ty, val * 2
                return ty, val

        @cuda.jit(extensions=[Double(), Unbox()])
        def scale(x, f):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= f

        def play(params):
            x, k = array_param(params, 0, 1, np.float64)
            x *= param(params, k, "d")
        install(play)
        a = np.random.default_rng(12).random(32)
        d = cuda.to_device(a)
        s = cuda.stream()
        scale[1, 32, s](Boxed(d), 1.5)
        assert np.allclose(d.copy_to_host(), a * 3.0)          # 1.5 doubled by Double
        assert calls[0] == ("unbox", None, "Boxed", s), calls[0]   # the last extension first
        assert calls[1] == ("double", "float64[::1]", "DeviceNDArray")
        assert calls[2] == ("unbox", "float64", "float", s)
        assert calls[3] == ("double", "float64", "float")
        assert calls[4] == ("writeback",) and len(calls) == 5       # retr runs after the launch
        calls.clear()
        scale[1, 32](d, 1.0)
        assert calls[0][3] == 0                               # no stream given: 0

        # numba's own example: prepare a host array as cuda.In (copied in, not back)
        class DefaultIn:
            def prepare_args(self, ty, val, **kwargs):
                return ty, cuda.In(val) if isinstance(val, np.ndarray) else val
        @cuda.jit
        def set3(x):
            x[0] = 3
        def play3(params):
            x, _ = array_param(params, 0, 1, np.int64)
            x[0] = 3
        install(play3)
        host = np.zeros(1, dtype=np.int64)
        set3[1, 1](host)
        assert host[0] == 3
        set3.extensions.append(DefaultIn())                   # added after the decorator
        host = np.zeros(1, dtype=np.int64)
        set3[1, 1](host)
        assert host[0] == 0

        class Bad:
            def prepare_args(self, ty, val, **kwargs):
                return val
        set3.extensions[:] = [Bad()]
        e = raises(TypeError, set3[1, 1], host)
        assert "prepare_args() must return a tuple (ty, val), got numpy.ndarray" in str(e), e
        class Raises:
            def prepare_args(self, ty, val, **kwargs):
                raise LookupError("from the extension")
        set3.extensions[:] = [Raises()]
        raises(LookupError, set3[1, 1], host)
        set3.extensions.clear()                               # the plain launch again
        set3[1, 1](host)
        assert host[0] == 3
        print("OK")
    """)
    assert out.strip().endswith("OK")


# ------------------------------------------------------------ IPC


def test_mock_ipc_handles(run_python, mock_driver):
    # The mock opens a handle in the process that made it (a driver refuses:
    # the GPU test opens it in a child process), so the whole path runs here.
    out = host_run(run_python, mock_driver, """
        import pickle
        rng = np.random.default_rng(21)
        a = rng.random((6, 5)).astype(np.float32)
        d = cuda.to_device(a)
        h = d.get_ipc_handle()
        assert isinstance(h, cuda.IpcArrayHandle)
        ipch = h._ipc_handle
        assert len(ipch.handle) == 64 and ipch.offset == 0 and ipch.size == a.nbytes
        assert ipch.source_info["device"] == 0 and ipch.source_info["uuid"].startswith("GPU-")
        # it pickles (numba's is sent to another process so), without the exporter's array
        h2 = pickle.loads(pickle.dumps(h))
        assert h2._ipc_handle.handle == ipch.handle and h2._ipc_handle.base is None
        assert h2._array_desc == h._array_desc
        opens, closes = _lib.cjmock_ipc_opens(), _lib.cjmock_ipc_closes()
        with h2 as arr:
            assert isinstance(arr, cuda.DeviceNDArray) and arr.shape == (6, 5) and arr.dtype == np.float32
            assert arr.device_pointer == d.device_pointer       # the same memory (the mock maps in place)
            assert np.array_equal(arr.copy_to_host(), a)
            arr[0, 0] = 7.0                                    # writes are seen by the exporter
            assert d[0, 0] == 7.0
            assert _lib.cjmock_ipc_opens() == opens + 1
        assert _lib.cjmock_ipc_closes() == closes + 1
        e = raises(ValueError, h2.close)                       # closed already
        assert "not opened" in str(e)
        arr = h2.open()
        e = raises(ValueError, h2.open)
        assert "already opened" in str(e)
        h2.close()

        # a view: the offset into the allocation travels with the handle
        v = d[2:, 1:4]
        hv = pickle.loads(pickle.dumps(v.get_ipc_handle()))
        assert hv._ipc_handle.offset == 2 * 5 * 4 + 4
        with hv as av:
            assert av.shape == (4, 3) and av.strides == v.strides
            host = d.copy_to_host()
            assert np.array_equal(av.copy_to_host(), host[2:, 1:4])

        # open_ipc_array: the raw handle (bytes or ints), shape, dtype, strides, offset
        b = rng.integers(-100, 100, 40).astype(np.int64)
        db = cuda.to_device(b)
        raw = db.get_ipc_handle()._ipc_handle.handle
        with cuda.open_ipc_array(raw, 40, np.int64) as x:
            assert np.array_equal(x.copy_to_host(), b)
        with cuda.open_ipc_array(tuple(raw), (4, 5), "int64", offset=8 * 20) as x:
            assert np.array_equal(x.copy_to_host(), b[20:].reshape(4, 5))
        with cuda.open_ipc_array(list(raw), (5, 4), np.int64, strides=(8, 40)) as x:
            assert np.array_equal(x.copy_to_host(), b[:20].reshape(4, 5).T)
        assert _lib.cjmock_ipc_opens() == _lib.cjmock_ipc_closes()

        # records keep their dtype
        rec = np.dtype([("x", np.float64), ("n", np.int32)], align=True)
        r = np.zeros(3, rec)
        r["x"] = rng.random(3)
        r["n"] = [1, 2, 3]
        dr = cuda.to_device(r)                 # the exporter keeps its array alive
        with pickle.loads(pickle.dumps(dr.get_ipc_handle())) as ar:
            assert ar.dtype == rec and np.array_equal(ar.copy_to_host(), r)

        e = raises(ValueError, lambda: cuda.open_ipc_array(b"short", 4, np.int32).__enter__())
        assert "64 bytes" in str(e)
        e = raises(cuda.CudaAPIError, lambda: cuda.open_ipc_array(bytes(64), 4, np.int32).__enter__())
        assert "cuIpcOpenMemHandle" in str(e), e
        raises(ValueError, cuda.device_array(0).get_ipc_handle)
        print("OK")
    """)
    assert out.strip().endswith("OK")


# ------------------------------------------------------------ contexts


def test_mock_context_push_pop_require_context(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        c0, c1 = cuda.current_context(0), cuda.current_context(1)
        assert cuda.get_current_device().id == 0
        c1.push()
        assert cuda.get_current_device().id == 1
        x = cuda.to_device(np.arange(3.0))                 # made on device 1
        assert _lib.cjmock_current_device() == 1
        c0.push()                                          # pushes nest
        assert cuda.get_current_device().id == 0
        e = raises(RuntimeError, c1.pop)                   # not the last one pushed
        assert "not the last context pushed" in str(e)
        c0.pop()
        assert cuda.get_current_device().id == 1
        c1.pop()
        assert cuda.get_current_device().id == 0
        raises(RuntimeError, c0.pop)                       # nothing pushed

        @cuda.require_context
        def allocate(n):
            "allocates"
            return _lib.cjmock_current_device(), cuda.device_array(n)
        assert allocate.__name__ == "allocate" and allocate.__doc__ == "allocates"
        import threading
        seen = []
        def worker():                                      # a fresh thread: no context current yet
            seen.append(_lib.cjmock_current_device())
            seen.append(allocate(4)[0])
        t = threading.Thread(target=worker)
        t.start(); t.join()
        assert seen == [-1, 0], seen

        for fn, what in ((cuda.get_current_device().reset, "Device.reset()"),
                         (cuda.current_context().reset, "Context.reset()")):
            e = raises(NotImplementedError, fn)
            assert str(e).startswith(what + " is not supported by cudajit"), e
        print("OK")
    """, devices=2)
    assert out.strip().endswith("OK")
