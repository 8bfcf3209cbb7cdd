"""numba.cuda's host API in cudajit: devices and contexts, streams, events,
pinned / mapped / managed host memory, DeviceNDArray (views, reshape,
assignment, stream binding, __cuda_array_interface__ import), kernel.forall.

Two tiers here (the GPU tier is tests/gpu/test_host_api_gpu.py):
  * no usable driver: every entry point raises CudaSupportError (CI);
  * the mock libcuda (runtime/testing/mock_libcuda.cpp): device memory is host
    memory, launches call a Python hook, and counters tell which driver calls
    ran (stream synchronisations, asynchronous copies, registrations) (CI).
Each mock test runs in a fresh interpreter (the driver is loaded once per
process); a failed assert there fails the test with its traceback.
"""

import textwrap

import pytest

from test_runtime import MOCK_PRELUDE

HOST_PRELUDE = MOCK_PRELUDE + """
import gc
for _name, _ret in (("cjmock_last_copy_stream", ctypes.c_size_t),):
    getattr(_lib, _name).restype = _ret

def counters():
    return dict(stream_syncs=_lib.cjmock_stream_syncs(), async_copies=_lib.cjmock_async_copies(),
                ctx_syncs=_lib.cjmock_ctx_syncs(), last_stream=_lib.cjmock_last_copy_stream())

def raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError(f"{fn} did not raise {exc.__name__}")

def play_assign(dtype_l, dtype_r):
    # cudajit/_assign.py's kernel (assign_<ndim>d), played on host memory: lhs[...] = rhs.
    import re
    def play(params):
        ndim = int(re.search(r"assign_([0-9]+)d", launches[-1]["name"]).group(1))
        lhs, k = array_param(params, 0, ndim, dtype_l)
        rhs, _ = array_param(params, k, ndim, dtype_r)
        lhs[...] = rhs
    return play
"""


def host_run(run_python, mock_driver, body, devices=None):
    code = HOST_PRELUDE + "\n" + textwrap.dedent(body)
    if devices is None:
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


# ======================================================= no usable driver (CI)


def test_no_driver_every_entry_point_raises_cleanly(run_python):
    out = run_python("""
        import numpy as np, cudajit as cuda

        @cuda.jit
        def k(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = 1

        actions = {
            "event": lambda: cuda.event(),
            "pinned_array": lambda: cuda.pinned_array(3),
            "pinned_array_like": lambda: cuda.pinned_array_like(np.zeros(3)),
            "mapped_array": lambda: cuda.mapped_array((2, 2)),
            "managed_array": lambda: cuda.managed_array(3),
            "pinned": lambda: cuda.pinned(np.zeros(3)).__enter__(),
            "mapped": lambda: cuda.mapped(np.zeros(3)).__enter__(),
            "gpus_len": lambda: len(cuda.gpus),
            "gpus_item": lambda: cuda.gpus[0],
            "select_device": lambda: cuda.select_device(0),
            "get_current_device": lambda: cuda.get_current_device(),
            "current_context": lambda: cuda.current_context(),
            "stream": lambda: cuda.stream(),
            "default_stream_sync": lambda: cuda.default_stream().synchronize(),
            "forall": lambda: k.forall(10)(np.zeros(10)),
            "device_array_strides": lambda: cuda.device_array((2, 3), strides=(24, 8)),
            "to_device_nocopy": lambda: cuda.to_device(np.zeros(3), copy=False),
            "from_cai": lambda: cuda.from_cuda_array_interface(
                {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}),
            "profile_start": lambda: cuda.profile_start(),
            "bfloat16": lambda: cuda.is_bfloat16_supported(),
        }
        for name, action in actions.items():
            try:
                action()
            except cuda.CudaSupportError:
                print("OK", name)
            except Exception as e:
                print("WRONG", name, type(e).__name__, e)
            else:
                print("NO ERROR", name)
        cuda.close()                       # nothing to close: no error
        assert cuda.is_float16_supported()
        assert cuda.detect() is False
    """, driver="/nonexistent/libcuda.so.1")
    lines = [l for l in out.splitlines() if l.split(" ")[0] in ("OK", "WRONG", "NO")]
    assert len(lines) == 20 and all(l.startswith("OK ") for l in lines), out


# ======================================================= the mock driver (CI)


def test_mock_devices_and_contexts(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        dev = cuda.get_current_device()
        assert isinstance(dev, cuda.Device) and dev.id == 0
        assert dev.name == "cudajit mock GPU" and dev.compute_capability == (9, 0)
        # numba's attribute names, read from cuDeviceGetAttribute (the mock's values)
        assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE == 32
        assert dev.MULTIPROCESSOR_COUNT == 132 and dev.COMPUTE_CAPABILITY_MAJOR == 9
        assert dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN == 227 * 1024 and dev.PCI_BUS_ID == 7
        assert dev.uuid == "GPU-00102030-4050-6070-8090-a0b0c0d0e0f0", dev.uuid
        assert dev["compute_capability"] == (9, 0)          # the older dict access still works
        assert dev.supports_float16 and dev.supports_bfloat16 and dev.supports_fp8
        e = raises(AttributeError, getattr, dev, "NO_SUCH_ATTRIBUTE")
        assert "NO_SUCH_ATTRIBUTE" in str(e)
        raises(AttributeError, getattr, dev, "lowercase_name")
        assert repr(dev) == "<CUDA device 0 'cudajit mock GPU'>"

        assert len(cuda.gpus) == 2 and len(cuda.list_devices()) == 2
        assert [g.id for g in cuda.gpus] == [0, 1] and cuda.gpus.current.id == 0
        assert cuda.select_device(1) == cuda.Device(1)
        assert cuda.get_current_device().id == 1 and cuda.gpus.current.id == 1
        cuda.select_device(0)
        with cuda.gpus[1] as d1:
            assert d1.id == 1 and cuda.get_current_device().id == 1
            x = cuda.to_device(np.arange(4.0))        # allocated on device 1
            assert _lib.cjmock_current_device() == 1
            with cuda.gpus[0]:
                assert cuda.get_current_device().id == 0
            assert cuda.get_current_device().id == 1
        assert cuda.get_current_device().id == 0     # restored
        assert np.array_equal(x.copy_to_host(), np.arange(4.0))

        ctx = cuda.current_context()
        assert ctx.device == dev
        info = ctx.get_memory_info()
        assert isinstance(info, cuda.MemoryInfo) and info.free == 79 << 30 and info.total == 80 << 30
        assert info == cuda.current_context(1).get_memory_info()
        before = _lib.cjmock_ctx_syncs()
        ctx.synchronize()
        assert _lib.cjmock_ctx_syncs() == before + 1
        cuda.close()                                # synchronises both used devices
        assert _lib.cjmock_ctx_syncs() == before + 3
        assert cuda.get_current_device().id == 0
        assert isinstance(ctx.create_stream(), cuda.Stream) and ctx.create_event().timing
        assert cuda.runtime.get_version() == (13, 0) and cuda.is_supported_version()

        import io
        buf = io.StringIO()
        assert cuda.detect(file=buf) is True
        text = buf.getvalue()
        assert "Found 2 CUDA devices" in text and "UUID" in text and "Compute Capability" in text
        print("OK")
    """, devices=2)
    assert out.strip().endswith("OK")


def test_mock_events(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        import time
        s = cuda.stream()
        start, end = cuda.event(), cuda.event(timing=True)
        assert start.timing and start.handle != 0 and start.handle != end.handle
        assert _lib.cjmock_live_events() == 2
        start.record(s)
        time.sleep(0.02)
        end.record(s)
        end.synchronize()
        assert start.query() and end.query()
        ms = cuda.event_elapsed_time(start, end)
        assert 15 < ms < 2000, ms
        assert start.elapsed_time(end) == ms
        end.record()                                   # the default stream
        waits = _lib.cjmock_stream_waits()
        end.wait(s)
        end.wait()
        assert _lib.cjmock_stream_waits() == waits + 2
        _lib.cjmock_set_pending(1)                     # work still running
        assert start.query() is False
        e = raises(cuda.CudaAPIError, cuda.event_elapsed_time, start, end)
        assert e.code == 600 and e.function == "cuEventElapsedTime"
        _lib.cjmock_set_pending(0)
        untimed = cuda.event(timing=False)
        assert not untimed.timing
        untimed.record(s)
        e = raises(cuda.CudaAPIError, cuda.event_elapsed_time, start, untimed)
        assert e.code == 400, e.code
        never = cuda.event()
        raises(cuda.CudaAPIError, never.elapsed_time, end)   # never recorded
        raises(TypeError, cuda.event_elapsed_time, start, 5)
        del start, end, untimed, never, e   # (e: its traceback holds the events too)
        gc.collect()
        assert _lib.cjmock_live_events() == 0
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_streams(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        s = cuda.stream()
        assert not s.external and s == s and s != cuda.stream() and hash(s) == hash(s.handle)
        syncs = _lib.cjmock_stream_syncs()
        with s.auto_synchronize() as same:
            assert same is s
            assert _lib.cjmock_stream_syncs() == syncs
        assert _lib.cjmock_stream_syncs() == syncs + 1
        assert s.query() and cuda.default_stream().query()
        _lib.cjmock_set_pending(1)
        # query never waits: the default and external streams ask the driver too
        assert not s.query() and not cuda.default_stream().query()
        assert not cuda.external_stream(0x1234).query()
        _lib.cjmock_set_pending(0)
        ext = cuda.external_stream(0x1234)
        assert ext.external and ext.handle == 0x1234 and int(ext) == 0x1234
        assert not cuda.default_stream().external and cuda.default_stream()   # truthy, as numba's
        assert cuda.legacy_default_stream().handle == 1 and cuda.per_thread_default_stream().handle == 2
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_stream_callbacks(run_python, mock_driver):
    # numba's Stream.add_callback(callback, arg) / async_done(): the mock
    # driver calls back on a thread of its own, as the real one does, so the
    # callback must take the GIL there.
    out = host_run(run_python, mock_driver, """
        import asyncio, threading, warnings
        s = cuda.stream()
        seen, done = [], threading.Event()
        def cb(stream, status, arg):
            seen.append((stream, status, arg, threading.get_ident()))
            done.set()
        token = object()
        s.add_callback(cb, token)
        assert done.wait(10), "callback never ran"
        stream, status, arg, thread = seen[0]
        assert stream is s and status == 0 and arg is token and thread != threading.get_ident()
        # arg defaults to None; the default stream takes callbacks too
        done.clear(); seen.clear()
        cuda.default_stream().add_callback(cb)
        assert done.wait(10) and seen[0][2] is None and seen[0][0] == cuda.default_stream()
        # an exception in the callback is a warning, not a crash
        raised = threading.Event()
        def bad(stream, status, arg):
            raised.set()
            raise ValueError("boom")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s.add_callback(bad)
            assert raised.wait(10)
            for _ in range(100):
                if w:
                    break
                threading.Event().wait(0.05)
        assert any("boom" in str(x.message) for x in w), [str(x.message) for x in w]
        try:
            s.add_callback(42)
        except TypeError as e:
            assert "callable" in str(e)
        else:
            raise AssertionError("a non-callable was accepted")
        async def main():
            return await s.async_done()
        assert asyncio.run(main()) is s
        try:
            s.async_done()          # no running loop
        except RuntimeError as e:
            assert "loop" in str(e)
        else:
            raise AssertionError("async_done outside a loop")
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_stream_callback_sees_a_failed_stream(run_python, mock_driver, monkeypatch):
    monkeypatch.setenv("CJMOCK_CALLBACK_STATUS", "700")   # CUDA_ERROR_ILLEGAL_ADDRESS
    out = host_run(run_python, mock_driver, """
        import asyncio, threading
        s = cuda.stream()
        got, done = [], threading.Event()
        s.add_callback(lambda stream, status, arg: (got.append(status), done.set()))
        assert done.wait(10) and got == [700]
        async def main():
            try:
                await s.async_done()
            except cuda.CudaAPIError as e:
                return e.code
        assert asyncio.run(main()) == 700
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_pinned_mapped_managed_memory(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        rng = np.random.default_rng(3)
        # pinned_array: a numpy array over cuMemHostAlloc'd memory, freed with it
        p = cuda.pinned_array((3, 4), dtype=np.float32, order="F")
        assert type(p) is np.ndarray and p.shape == (3, 4) and p.dtype == np.float32
        assert p.flags.f_contiguous and _lib.cjmock_live_host_allocations() == 1
        p[:] = rng.random((3, 4))
        d = cuda.to_device(p)
        assert np.array_equal(d.copy_to_host(), p)
        q = cuda.pinned_array_like(rng.random((5, 6))[:, ::2])
        assert q.shape == (5, 3) and q.flags.c_contiguous
        s = cuda.pinned_array(4, strides=(16,), dtype=np.float32)
        assert s.strides == (16,)
        e = cuda.pinned_array((0, 3))
        assert e.size == 0
        del p, q, s, e
        gc.collect()
        assert _lib.cjmock_live_host_allocations() == 0

        # mapped_array: kernels get its device address (unified: the host address), no staging
        m = cuda.mapped_array(16, dtype=np.float32)
        assert type(m).__name__ == "MappedNDArray" and isinstance(m, np.ndarray)
        m[:] = rng.random(16).astype(np.float32)
        cai = m.__cuda_array_interface__
        assert cai["data"][0] == m.ctypes.data and cai["shape"] == (16,) and cai["typestr"] == "<f4"
        tail = m[4::2]
        assert type(tail) is type(m)
        assert tail.__cuda_array_interface__["data"][0] == m.ctypes.data + 16
        assert tail.__cuda_array_interface__["strides"] == (8,)
        mapped_like = cuda.mapped_array_like(np.zeros((2, 3), order="F"))
        assert mapped_like.flags.f_contiguous and mapped_like.__cuda_array_interface__["strides"] == (8, 16)
        # numba's device-array copies and split on mapped (and managed) arrays
        syncs = _lib.cjmock_stream_syncs()
        host = m.copy_to_host()
        assert type(host) is np.ndarray and np.array_equal(host, m) and host.ctypes.data != m.ctypes.data
        fresh = rng.random(16).astype(np.float32)
        m.copy_to_device(fresh, stream=cuda.stream())
        assert _lib.cjmock_stream_syncs() == syncs + 1          # the stream given is waited for
        into = np.full(16, np.nan, np.float32)
        assert m.copy_to_host(into) is into and np.array_equal(into, fresh)
        parts = m.split(5)
        assert [len(x) for x in parts] == [5, 5, 5, 1] and all(type(x) is type(m) for x in parts)
        assert parts[1].__cuda_array_interface__["data"][0] == m.ctypes.data + 20
        for bad in (lambda: m.copy_to_device(np.zeros(15, np.float32)),
                    lambda: m.copy_to_host(np.zeros(16, np.float64)),
                    lambda: mapped_like.split(2), lambda: m.split(0)):
            try:
                bad()
            except ValueError:
                pass
            else:
                raise AssertionError("accepted")
        g = cuda.managed_array(6, dtype=np.int64)
        g.copy_to_device(np.arange(6))
        assert np.array_equal(g.copy_to_host(), np.arange(6)) and len(g.split(4)) == 2

        seen = []
        def play(params):
            x, _ = array_param(params, 0, 1, np.float32)
            seen.append(param(params, 0, "Q"))
            x *= 2
        install(play)

        @cuda.jit
        def double(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= 2

        expect = m * 2
        allocs = _lib.cjmock_live_allocations()
        double[1, 16](m)
        assert seen == [m.ctypes.data] and np.array_equal(m, expect)   # in place, no copy back
        assert _lib.cjmock_live_allocations() == allocs                 # nothing staged

        # managed_array: one address for both
        g = cuda.managed_array((4, 4), dtype=np.float32)
        assert type(g).__name__ == "ManagedNDArray"
        g[:] = 1.5
        double[1, 16](g.reshape(16))
        assert seen[-1] == g.ctypes.data and np.all(g == 3.0)
        dg = cuda.as_cuda_array(g)
        assert dg.device_pointer == g.ctypes.data and np.all(dg.copy_to_host() == 3.0)
        assert cuda.managed_array(4, attach_global=False).shape == (4,)

        # pinned(*arrays): registered for the block only
        a, b = rng.random(100), rng.random((10, 10))[:, ::3]
        with cuda.pinned(a, b):
            assert _lib.cjmock_live_registrations() == 2
            e = raises(cuda.CudaAPIError, cuda.pinned(a).__enter__)   # registered twice
            assert e.code == 712
        assert _lib.cjmock_live_registrations() == 0
        raises(TypeError, cuda.pinned([1, 2, 3]).__enter__)

        # mapped(*arrays): device arrays viewing host memory in place
        h = rng.random((4, 5))
        with cuda.mapped(h) as dh:
            assert isinstance(dh, cuda.DeviceNDArray) and dh.shape == (4, 5)
            assert dh.device_pointer == h.ctypes.data
            assert np.array_equal(dh.copy_to_host(), h)
        assert _lib.cjmock_live_registrations() == 0
        h2 = rng.random(8)
        with cuda.mapped(h, h2) as views:
            assert [v.shape for v in views] == [(4, 5), (8,)]
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_device_array_creation_and_import(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        rng = np.random.default_rng(4)
        d = cuda.device_array((3, 4), dtype=np.float32, strides=(32, 8))
        assert d.shape == (3, 4) and d.strides == (32, 8) and d.alloc_size == 2 * 32 + 3 * 8 + 4
        assert not d.is_c_contiguous() and d.flags == {"C_CONTIGUOUS": False, "F_CONTIGUOUS": False}
        raises(ValueError, cuda.device_array, (3, 4), strides=(8,))
        raises(TypeError, cuda.device_array, 2.5)
        raises(TypeError, cuda.device_array, (2, 2.0))
        f = cuda.device_array((3, 4), order="F")
        assert f.is_f_contiguous() and f.dtype == np.float64 and f.stream == 0
        # device_array_like keeps C/F, and packs a strided array's axes in their order
        like = cuda.device_array_like(np.zeros((4, 6, 2))[:, ::2].transpose(2, 0, 1))
        assert like.shape == (2, 4, 3) and like.strides == (8, 48, 16), like.strides
        assert cuda.device_array_like(np.zeros((3, 5), order="F")).is_f_contiguous()
        assert cuda.device_array_like(d).shape == (3, 4)

        a = rng.random((5, 3))
        z = cuda.to_device(a, copy=False)
        assert z.shape == (5, 3) and not np.array_equal(z.copy_to_host(), a)   # uninitialised
        assert cuda.to_device(a, to=z) is z and np.array_equal(z.copy_to_host(), a)
        assert cuda.to_device(z) is z
        w = cuda.to_device(a * 2, to=z, copy=False)
        assert w is z and np.array_equal(z.copy_to_host(), a)

        # another library's array: a view of its memory, its owner kept alive
        class Foreign:
            def __init__(self, dev):
                self.dev = dev
                self.__cuda_array_interface__ = dict(dev.__cuda_array_interface__)
        owner = Foreign(cuda.to_device(a))
        v = cuda.as_cuda_array(owner)
        assert cuda.is_cuda_array(owner) and v.device_pointer == owner.dev.device_pointer
        import sys
        refs = sys.getrefcount(owner)
        v2 = cuda.as_cuda_array(owner)
        assert sys.getrefcount(owner) == refs + 1
        del v2
        assert sys.getrefcount(owner) == refs
        assert np.array_equal(v.copy_to_host(), a)
        t = cuda.to_device(owner)
        assert isinstance(t, cuda.DeviceNDArray) and t.device_pointer == v.device_pointer
        raises(TypeError, cuda.as_cuda_array, a)
        desc = dict(owner.__cuda_array_interface__, mask=object())
        raises(TypeError, cuda.from_cuda_array_interface, desc)
        strided = dict(owner.__cuda_array_interface__, shape=(3,), strides=(48,))
        assert np.array_equal(cuda.from_cuda_array_interface(strided).copy_to_host(), a[::2, 0])
        # a v3 stream: synchronised with (sync=True), and the array bound to it
        syncs = _lib.cjmock_stream_syncs()
        sv = cuda.from_cuda_array_interface(dict(owner.__cuda_array_interface__, stream=0x77))
        assert _lib.cjmock_stream_syncs() == syncs + 1 and sv.__cuda_array_interface__["stream"] == 0x77
        cuda.from_cuda_array_interface(dict(owner.__cuda_array_interface__, stream=0x77), sync=False)
        assert _lib.cjmock_stream_syncs() == syncs + 1
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_device_array_views(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        rng = np.random.default_rng(5)
        a = rng.random((4, 6)).astype(np.float32)
        d = cuda.to_device(a)
        # an element is a host scalar (numba), a partial index a view
        x = d[1, 2]
        assert type(x) is np.float32 and x == a[1, 2] and d[-1, -1] == a[-1, -1]
        assert d.getitem((2, 3)) == a[2, 3]
        assert isinstance(d[1], cuda.DeviceNDArray)
        assert np.array_equal(d[..., 1].copy_to_host(), a[..., 1])
        assert np.array_equal(d[1, ...].copy_to_host(), a[1, ...])
        assert d[...].shape == (4, 6) and d[2:2].size == 0
        raises(IndexError, d.__getitem__, (..., ...))
        raises(IndexError, d.__getitem__, (1, 2, 3))
        raises(TypeError, d.__getitem__, [1, 2])
        assert np.array_equal(np.asarray(d), a) and np.array(d, dtype=np.float64).dtype == np.float64
        raises(ValueError, d.__array__, None, False)
        assert len(d) == 4 and list(x.shape for x in d) == [(6,)] * 4
        assert d.nbytes == a.nbytes and d.size == 24 and d.itemsize == 4
        assert d.device_ctypes_pointer.value == d.device_pointer and d.__cuda_memory__

        # reshape / ravel: views (numpy's rules), NotImplementedError when a copy would be needed
        for shape in [(6, 4), (24,), (2, 3, 4), (-1, 8), (4, 1, 6), (1, 24)]:
            r = d.reshape(shape)
            assert r.device_pointer == d.device_pointer
            assert np.array_equal(r.copy_to_host(), a.reshape(shape)), shape
        assert np.array_equal(d.reshape(3, 8).copy_to_host(), a.reshape(3, 8))
        raises(NotImplementedError, d.reshape, 8, 3, order="F")   # numpy would copy too
        f = cuda.to_device(np.asfortranarray(a))
        assert np.array_equal(f.reshape(8, 3, order="F").copy_to_host(), a.reshape(8, 3, order="F"))
        assert np.array_equal(f.reshape(8, 3, order="A").copy_to_host(), a.reshape(8, 3, order="F"))
        raises(TypeError, d.reshape, 24, shape=3)
        assert np.array_equal(d.T.reshape(24, order="F").copy_to_host(), a.T.reshape(24, order="F"))
        assert np.array_equal(d.T.ravel(order="F").copy_to_host(), a.T.ravel(order="F"))
        assert np.array_equal(d.ravel().copy_to_host(), a.ravel())
        assert np.array_equal(d[:, ::2].reshape(12).copy_to_host(), a[:, ::2].reshape(12))
        assert np.array_equal(d[1:3].reshape(2, 2, 3).copy_to_host(), a[1:3].reshape(2, 2, 3))
        for view, shape in [(d[:, :3], (12,)), (d.T, (24,)), (d[::2, ::3], (4,))]:
            e = raises(NotImplementedError, view.reshape, shape)
            assert "copy" in str(e)
        raises(ValueError, d.reshape, 5, 5)
        raises(ValueError, d.reshape, -1, -1)
        raises(ValueError, d.reshape, 7, -1)
        assert d.reshape(d.shape).shape == d.shape

        # transpose, squeeze, view, split
        assert np.array_equal(d.T.copy_to_host(), a.T) and np.array_equal(d.transpose().copy_to_host(), a.T)
        s = cuda.to_device(a.reshape(4, 1, 6, 1))
        assert s.squeeze().shape == (4, 6) and s.squeeze(1).shape == (4, 6, 1)
        assert s.squeeze((1, 3)).shape == (4, 6) and s.squeeze(axis=-1).shape == (4, 1, 6)
        raises(ValueError, s.squeeze, 0)
        vi = d.view(np.int32)
        assert vi.dtype == np.int32 and np.array_equal(vi.copy_to_host(), a.view(np.int32))
        vb = d.view(np.uint8)
        assert vb.shape == (4, 24) and np.array_equal(vb.copy_to_host(), a.view(np.uint8))
        v8 = d.view(np.float64)
        assert v8.shape == (4, 3) and np.array_equal(v8.copy_to_host(), a.view(np.float64))
        raises(ValueError, d[:, :5].view, np.float64)
        raises(ValueError, d.T.view, np.float64)
        one = cuda.to_device(np.arange(10.0))
        parts = one.split(4)
        assert next(parts).shape == (4,)
        rest = list(parts)
        assert [p.shape for p in rest] == [(4,), (2,)]
        assert np.array_equal(rest[1].copy_to_host(), [8.0, 9.0])
        raises(ValueError, lambda: list(d.split(2)))
        raises(ValueError, lambda: list(one[::2].split(2)))

        # copy_to_host into a given array: dtype, shape and layout are checked as numba does
        out = np.empty((4, 6), np.float32)
        assert d.copy_to_host(out) is out and np.array_equal(out, a)
        out1 = np.empty((1, 4, 6), np.float32)
        d.copy_to_host(out1)
        assert np.array_equal(out1[0], a)
        raises(TypeError, d.copy_to_host, np.empty((4, 6), np.float64))
        raises(ValueError, d.copy_to_host, np.empty((6, 4), np.float32))
        raises(ValueError, d.copy_to_host, np.empty((4, 6), np.float32, order="F"))
        st = np.zeros((4, 3), np.float32)
        d[:, ::2].copy_to_host(st)
        assert np.array_equal(st, a[:, ::2])
        # copy_to_device from another device array / CAI object; errors
        d2 = cuda.device_array_like(d)
        d2.copy_to_device(d)
        assert np.array_equal(d2.copy_to_host(), a)
        raises(TypeError, d2.copy_to_device, cuda.to_device(a.astype(np.float64)))
        raises(ValueError, d2.copy_to_device, cuda.to_device(a.T.copy()))
        raises(ValueError, d2[:, ::2].copy_to_device, a[:, ::2])
        raises(ValueError, d2.copy_to_device, np.zeros((3, 3)))
        d2.copy_to_device(a[None])                  # extent-1 axes do not count
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_stream_ordered_copies(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        rng = np.random.default_rng(6)
        a = rng.random(64)
        s = cuda.stream()
        # no stream: synchronous (the copy, then a synchronisation of the default stream)
        c0 = counters()
        d = cuda.to_device(a)
        c1 = counters()
        assert c1["stream_syncs"] == c0["stream_syncs"] + 1 and c1["last_stream"] == 0
        # a stream given: queued there, no synchronisation, and the array is bound to it
        ds = cuda.to_device(a, stream=s)
        c2 = counters()
        assert c2["stream_syncs"] == c1["stream_syncs"] and c2["last_stream"] == s.handle
        assert ds.stream is s and ds.__cuda_array_interface__["stream"] == s.handle
        h = ds.copy_to_host()                       # the bound stream, asynchronous
        c3 = counters()
        assert c3["stream_syncs"] == c2["stream_syncs"] and c3["last_stream"] == s.handle
        s.synchronize()
        assert np.array_equal(h, a)
        # bind(): a view with a default stream; the original keeps none
        b = d.bind(s)
        assert b.stream is s and d.stream == 0 and d.__cuda_array_interface__["stream"] is None
        b[2:10].copy_to_host()                      # a strided/offset view keeps the binding
        assert counters()["last_stream"] == s.handle
        assert d.bind().stream == 0
        # an explicit stream wins over the bound one; an int handle works too
        s2 = cuda.stream()
        b.copy_to_host(stream=s2)
        assert counters()["last_stream"] == s2.handle
        d.copy_to_device(a, stream=s2.handle)
        assert counters()["last_stream"] == s2.handle
        # device_array(..., stream=s) binds too; so do getitem/ravel/squeeze/split with stream=
        e = cuda.device_array(8, stream=s)
        assert e.stream is s
        assert d.getitem(slice(0, 4), stream=s2).stream is s2
        assert d.ravel(stream=s2).stream is s2 and next(d.split(8, stream=s2)).stream is s2
        # the bound Stream object is kept alive by the array
        import weakref
        s3 = cuda.stream()
        h3 = s3.handle
        arr = cuda.device_array(4, stream=s3)
        del s3
        gc.collect()
        assert arr.stream.handle == h3
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_setitem(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        rng = np.random.default_rng(7)
        a = rng.random((5, 6)).astype(np.float32)
        d = cuda.to_device(a)
        ref = a.copy()
        launches_before = _lib.cjmock_launch_count()
        # dense destinations: one host-to-device copy, no kernel
        d[1, 2] = 42.0;                  ref[1, 2] = 42.0
        d[2] = 7;                        ref[2] = 7
        d[3] = np.arange(6);             ref[3] = np.arange(6)
        d[0:2] = rng.random(6).astype(np.float32)[None]
        ref[0:2] = np.asarray(d[0:2])
        d[4:] = [[1, 2, 3, 4, 5, 6]];    ref[4:] = [[1, 2, 3, 4, 5, 6]]
        assert np.array_equal(d.copy_to_host(), ref)
        assert _lib.cjmock_launch_count() == launches_before
        # device sources of the same layout: a device-to-device copy
        src = cuda.to_device(rng.random(6).astype(np.float32))
        d[0] = src;                      ref[0] = src.copy_to_host()
        assert np.array_equal(d.copy_to_host(), ref)
        assert _lib.cjmock_launch_count() == launches_before

        # strided destinations and converting sources: cudajit's assignment kernel
        install(play_assign(np.float32, np.float32))
        d[:, 1] = -1.0;                  ref[:, 1] = -1.0
        assert launches[-1]["name"].find("assign") >= 0, launches[-1]
        assert launches[-1]["grid"][0] * launches[-1]["block"][0] >= 5
        d[::2, ::3] = np.array([[8.0, 9.0]], np.float32); ref[::2, ::3] = [[8.0, 9.0]]
        col = cuda.to_device(np.arange(5, dtype=np.float32).reshape(5, 1))
        d[:, 3:5] = col;                 ref[:, 3:5] = np.arange(5).reshape(5, 1)
        assert np.array_equal(d.copy_to_host(), ref), (d.copy_to_host(), ref)
        install(play_assign(np.float32, np.float64))
        d[1:3] = cuda.to_device(np.full((2, 6), 0.5))      # float64 into float32
        ref[1:3] = 0.5
        assert np.array_equal(d.copy_to_host(), ref)
        install(play_assign(np.float32, np.float32))
        d.T[1:3] = cuda.to_device(a[:, :2]).T            # a transposed source on a strided target
        ref.T[1:3] = a[:, :2].T
        assert np.array_equal(d.copy_to_host(), ref)

        # errors, with numba's messages
        e = raises(ValueError, d.__setitem__, 0, np.zeros((2, 6)))
        assert "Can't assign 2-D array to 1-D self" in str(e)
        e = raises(ValueError, d.__setitem__, slice(None), np.zeros(5))
        assert "Can't copy sequence with size 5 to array axis 1 with dimension 6" in str(e)
        raises(ValueError, d.__setitem__, slice(None), cuda.to_device(np.zeros(5)))
        raises(IndexError, d.__setitem__, (9, 0), 1.0)
        # setitem on a stream: asynchronous there
        s = cuda.stream()
        syncs = _lib.cjmock_stream_syncs()
        d.setitem(0, 3.0, stream=s)
        assert _lib.cjmock_stream_syncs() == syncs and counters()["last_stream"] == s.handle
        assert d[0, 0] == 3.0
        d[2:2] = 5.0                                     # empty: nothing happens
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_forall(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        @cuda.jit
        def scale(x, factor):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= factor

        def play(params):
            x, k = array_param(params, 0, 1, np.float64)
            x *= param(params, k, "d")
        install(play)
        rng = np.random.default_rng(8)
        a = rng.random(1000)
        d = cuda.to_device(a)
        scale.forall(1000)(d, 3.0)          # the occupancy calculator's block (the mock: 768)
        assert launches[-1]["block"] == (768, 1, 1) and launches[-1]["grid"] == (2, 1, 1)
        assert np.allclose(d.copy_to_host(), a * 3.0)
        scale.forall(1000, tpb=128)(d, 1.0)
        assert launches[-1]["block"] == (128, 1, 1) and launches[-1]["grid"] == (8, 1, 1)
        s = cuda.stream()
        scale.forall(1000, tpb=100, stream=s, sharedmem=64)(d, 1.0)
        assert launches[-1]["stream"] == s.handle and launches[-1]["shared"] == 64
        assert launches[-1]["grid"] == (10, 1, 1)
        n = len(launches)
        scale.forall(0)(d, 2.0)
        assert len(launches) == n
        raises(ValueError, scale.forall, -1)
        host = rng.random(50)
        scale.forall(50)(host, 2.0)          # host arrays are staged as in any launch
        assert launches[-1]["block"] == (768, 1, 1)
        raises(TypeError, scale.forall(10), d)      # wrong argument count
        print("OK")
    """)
    assert out.strip().endswith("OK")


def test_mock_driver_missing_optional_functions(run_python, mock_driver, tmp_path):
    # A driver without the host-API functions still launches kernels; only the
    # features that need them fail, with CudaSupportError naming the function.
    import shutil
    import subprocess
    from pathlib import Path
    src = (Path(__file__).resolve().parents[1] / "runtime" / "testing" / "mock_libcuda.cpp").read_text()
    cut = src.index("// Events: recording takes the time")
    end = src.index("CUresult cuProfilerStop() { return kOk; }") + len("CUresult cuProfilerStop() { return kOk; }")
    old = tmp_path / "old_mock.cpp"
    old.write_text(src[:cut] + src[end:])
    lib = tmp_path / "libcuda_old.so"
    cxx = shutil.which("g++") or shutil.which("c++")
    subprocess.run([cxx, "-std=c++17", "-shared", "-fPIC", str(old), "-o", str(lib)], check=True,
                   capture_output=True)
    out = run_python("""
        import numpy as np, cudajit as cuda
        assert cuda.is_available()
        d = cuda.to_device(np.arange(4.0))
        assert np.array_equal(d.copy_to_host(), np.arange(4.0))
        for name, fn in [("cuEventCreate", cuda.event), ("cuMemHostAlloc", lambda: cuda.pinned_array(4)),
                         ("cuMemAllocManaged", lambda: cuda.managed_array(4))]:
            try:
                fn()
            except cuda.CudaSupportError as e:
                assert name in str(e), e
            else:
                raise AssertionError(name)
        print("OK")
    """, driver=str(lib))
    assert out.strip().endswith("OK")


def test_mock_in_out_inout(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        @cuda.jit
        def add_one(x, y):
            i = cuda.grid(1)
            if i < x.size:
                y[i] = x[i] + 1.0
                x[i] = -1.0

        device_views = {}
        def play(params):
            x, k = array_param(params, 0, 1, np.float64)
            y, _ = array_param(params, k, 1, np.float64)
            device_views["y_before"] = y.copy()
            y[:] = x + 1.0
            x[:] = -1.0
        install(play)
        rng = np.random.default_rng(9)
        x, y = rng.random(32), rng.random(32)
        x0 = x.copy()
        before = counters()["async_copies"]
        add_one[1, 32](cuda.In(x), cuda.Out(y))
        # In: copied there only (the host x keeps its values); Out: back only
        assert counters()["async_copies"] == before + 2
        assert np.array_equal(x, x0) and np.array_equal(y, x0 + 1.0)
        assert not np.array_equal(device_views["y_before"], y)   # Out's buffer starts uninitialised
        y2 = rng.random(32)
        add_one[1, 32](cuda.InOut(x), cuda.InOut(y2))
        assert np.all(x == -1.0) and np.array_equal(y2, x0 + 1.0)
        # device arrays pass through a wrapper unchanged
        dx = cuda.to_device(x0)
        dy = cuda.device_array(32)
        add_one[1, 32](cuda.In(dx), cuda.Out(dy))
        assert np.array_equal(dy.copy_to_host(), x0 + 1.0) and np.all(dx.copy_to_host() == -1.0)
        assert repr(cuda.In(3)) == "In(3)"
        print("OK")
    """)
    assert out.strip().endswith("OK")
