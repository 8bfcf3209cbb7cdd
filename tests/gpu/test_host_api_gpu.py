"""numba.cuda's host API on a real GPU, checked against numpy on fresh random
data: events, streams, pinned / mapped / managed memory, DeviceNDArray views
and assignment, stream-ordered copies, kernel.forall, device attributes
(against numba.cuda's where it runs). The CPU tier of the same API is
tests/test_host_api.py (the mock driver).
"""
import os

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**32))


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


@cuda.jit
def busy(x, rounds):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(rounds):
            v = v * 0.999 + 0.001
        x[i] = v


def launch1d(kernel, n, *args, stream=None):
    blocks = (n + 255) // 256
    if stream is None:
        kernel[blocks, 256](*args)
    else:
        kernel[blocks, 256, stream](*args)


def test_event_times_a_kernel(rng):
    x = cuda.to_device(rng.random(1 << 20).astype(np.float32))
    s = cuda.stream()
    start, end = cuda.event(), cuda.event()
    start.record(s)
    launch1d(busy, x.size, x, 200, stream=s)
    end.record(s)
    end.synchronize()
    assert start.query() and end.query()
    ms = cuda.event_elapsed_time(start, end)
    assert ms > 0 and ms == start.elapsed_time(end), f"seed {SEED}"
    untimed = cuda.event(timing=False)
    untimed.record(s)
    untimed.synchronize()
    with pytest.raises(cuda.CudaAPIError):
        cuda.event_elapsed_time(start, untimed)


def test_event_wait_orders_two_streams(rng):
    n = 1 << 20
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    s1, s2 = cuda.stream(), cuda.stream()
    dx = cuda.to_device(x, stream=s1)
    dy = cuda.to_device(y, stream=s2)
    launch1d(busy, n, dx, 100, stream=s1)          # dx changes on s1 ...
    done = cuda.event(timing=False)
    done.record(s1)
    done.wait(s2)                                   # ... and s2 reads it only after
    launch1d(axpy, n, np.float32(2.0), dx, dy, stream=s2)
    result = dy.copy_to_host(stream=s2)
    s2.synchronize()
    xb = x.copy()
    for _ in range(100):
        xb = xb * np.float32(0.999) + np.float32(0.001)
    np.testing.assert_allclose(result, 2 * xb + y, rtol=1e-4, err_msg=f"seed {SEED}")


def test_pinned_arrays_async_round_trip(rng):
    n = 1 << 18
    host_x = cuda.pinned_array(n, dtype=np.float32)
    host_y = cuda.pinned_array_like(host_x)
    out = cuda.pinned_array(n, dtype=np.float32)
    host_x[:] = rng.random(n)
    host_y[:] = rng.random(n)
    s = cuda.stream()
    with s.auto_synchronize():
        dx = cuda.to_device(host_x, stream=s)
        dy = cuda.to_device(host_y, stream=s)
        launch1d(axpy, n, np.float32(3.0), dx, dy, stream=s)
        dy.copy_to_host(out, stream=s)
    np.testing.assert_allclose(out, 3 * host_x + host_y, rtol=1e-6, err_msg=f"seed {SEED}")


def test_pinned_context_and_bound_stream(rng):
    a = rng.random((256, 300))
    b = np.empty_like(a)
    s = cuda.stream()
    with cuda.pinned(a, b):
        d = cuda.to_device(a, stream=s)            # bound to s
        assert d.stream is s
        launch1d(scale, d.size, d.reshape(-1), 2.5, stream=s)
        d.copy_to_host(b)                           # the bound stream, asynchronous
        s.synchronize()
    np.testing.assert_allclose(b, a * 2.5, err_msg=f"seed {SEED}")


def test_mapped_array_written_in_place(rng):
    m = cuda.mapped_array(5000, dtype=np.float64)
    m[:] = rng.random(5000)
    expect = m * 4.0
    launch1d(scale, m.size, m, 4.0)
    cuda.synchronize()
    np.testing.assert_allclose(m, expect, err_msg=f"seed {SEED}")
    # a strided slice of it, in place too
    part = m[1::3]
    expect_part = part * 0.5
    launch1d(scale, part.size, part, 0.5)
    cuda.synchronize()
    np.testing.assert_allclose(m[1::3], expect_part, err_msg=f"seed {SEED}")


def test_mapped_context_manager(rng):
    a = rng.random(4096).astype(np.float32)
    expect = a * 3
    with cuda.mapped(a) as d:
        launch1d(scale, d.size, d, np.float32(3.0))
        cuda.synchronize()
    np.testing.assert_allclose(a, expect, rtol=1e-6, err_msg=f"seed {SEED}")


def test_managed_array(rng):
    g = cuda.managed_array((64, 64), dtype=np.float32)
    g[:] = rng.random((64, 64))
    expect = g * 2
    launch1d(scale, g.size, g.reshape(-1), np.float32(2.0))
    cuda.synchronize()
    np.testing.assert_allclose(g, expect, rtol=1e-6, err_msg=f"seed {SEED}")


def test_setitem_matches_numpy(rng):
    a = rng.random((37, 29)).astype(np.float32)
    ref = a.copy()
    d = cuda.to_device(a)
    ops = [
        ((3, 4), 1.5),
        (5, 2.0),
        ((slice(None), 7), -1.0),                                    # strided: the kernel
        ((slice(2, 30, 3), slice(None, None, -2)), rng.random(15).astype(np.float32)),
        ((slice(10, 12),), rng.random((2, 29)).astype(np.float32)),
        ((slice(None), slice(0, 3)), np.arange(3, dtype=np.float32)),
        (Ellipsis, 0.25),
    ]
    for key, value in ops:
        ref[key] = value
        d[key] = value
        np.testing.assert_array_equal(d.copy_to_host(), ref, err_msg=f"{key} seed {SEED}")
    # device sources: same layout, transposed, another dtype, broadcast column
    src = rng.random((29, 37)).astype(np.float32)
    d[...] = cuda.to_device(src).T
    ref[...] = src.T
    wide = rng.random((37, 14))
    d[:, 1::2] = cuda.to_device(wide)                               # float64 -> float32
    ref[:, 1::2] = wide.astype(np.float32)
    col = rng.random((37, 1)).astype(np.float32)
    d[:, :5] = cuda.to_device(col)
    ref[:, :5] = col
    np.testing.assert_array_equal(d.copy_to_host(), ref, err_msg=f"seed {SEED}")
    assert d[3, 4] == ref[3, 4] and isinstance(d[3, 4], np.float32)


def test_views_match_numpy(rng):
    a = rng.random((6, 8, 4))
    d = cuda.to_device(a)
    checks = [
        (d.reshape(48, 4), a.reshape(48, 4)),
        (d.reshape(-1), a.reshape(-1)),
        (d.ravel(), a.ravel()),
        (d.T, a.T),
        (d.transpose(1, 0, 2), a.transpose(1, 0, 2)),
        (d[:, ::2].reshape(24, 4), a[:, ::2].reshape(24, 4)),   # strided, still a view
        (d[2:4, 1].T, a[2:4, 1].T),
        (d.view(np.int64), a.view(np.int64)),
        (d.reshape(6, 1, 32).squeeze(), a.reshape(6, 32)),
        (d[::-1, :, 1], a[::-1, :, 1]),
    ]
    for got, want in checks:
        np.testing.assert_array_equal(got.copy_to_host(), want, err_msg=f"seed {SEED}")
    # numpy would copy here; numba's device arrays refuse, and so do ours
    with pytest.raises(NotImplementedError, match="requires copying"):
        d[:, ::2].reshape(6, 16)
    flat = cuda.to_device(a.ravel())
    parts = [p.copy_to_host() for p in flat.split(50)]
    np.testing.assert_array_equal(np.concatenate(parts), a.ravel())
    np.testing.assert_array_equal(np.asarray(d), a)


def test_strided_device_array_and_like(rng):
    d = cuda.device_array((100, 10), dtype=np.float32, strides=(64, 4))
    d[...] = 0
    host = rng.random((100, 10)).astype(np.float32)
    d[...] = host
    np.testing.assert_array_equal(d.copy_to_host(), host)
    like = cuda.device_array_like(host[:, ::2])
    assert like.shape == (100, 5) and like.is_c_contiguous()


def test_forall_matches_numpy(rng):
    n = 1_000_003
    x = rng.random(n)
    y = rng.random(n)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    axpy.forall(n)(2.0, dx, dy)
    np.testing.assert_allclose(dy.copy_to_host(), 2.0 * x + y, err_msg=f"seed {SEED}")
    block = axpy._suggest_block_size(0, 2.0, dx, dy)
    assert 32 <= block <= cuda.get_current_device().MAX_THREADS_PER_BLOCK
    s = cuda.stream()
    axpy.forall(n, tpb=128, stream=s)(1.0, dx, dy)
    s.synchronize()
    np.testing.assert_allclose(dy.copy_to_host(), 3.0 * x + y, err_msg=f"seed {SEED}")


def test_device_and_context_properties():
    dev = cuda.get_current_device()
    assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE == 32
    assert dev.MULTIPROCESSOR_COUNT > 0 and dev.compute_capability >= (7, 0)
    assert dev.uuid.startswith("GPU-") and len(dev.uuid) == 40
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total == dev["total_memory"]
    assert len(cuda.gpus) >= 1
    with cuda.gpus[0] as d0:
        assert d0.id == 0 and cuda.get_current_device().id == 0
        x = cuda.to_device(np.arange(10.0))
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(10.0))
    cuda.close()
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(10.0))   # contexts are kept


def test_device_attributes_match_numba():
    try:
        from numba import cuda as ncuda
        ndev = ncuda.get_current_device()
    except Exception as e:  # numba missing or not usable here
        pytest.skip(f"numba.cuda is not usable: {e}")
    dev = cuda.get_current_device()
    assert dev.name == (ndev.name.decode() if isinstance(ndev.name, bytes) else ndev.name)
    assert dev.compute_capability == tuple(ndev.compute_capability)
    assert dev.uuid == ndev.uuid
    for attr in ("MAX_THREADS_PER_BLOCK", "MULTIPROCESSOR_COUNT", "WARP_SIZE", "MAX_BLOCK_DIM_X",
                 "MAX_GRID_DIM_X", "MAX_SHARED_MEMORY_PER_BLOCK", "PCI_BUS_ID",
                 "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "CLOCK_RATE", "ASYNC_ENGINE_COUNT"):
        assert getattr(dev, attr) == getattr(ndev, attr), attr


def test_foreign_arrays_imported_without_copy(rng):
    cupy = pytest.importorskip("cupy")
    a = cupy.asarray(rng.random((30, 40)))
    d = cuda.as_cuda_array(a)
    assert d.device_pointer == a.data.ptr
    launch1d(scale, d.size, d.reshape(-1), 2.0)
    cuda.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(a), np.asarray(d))
    t = cuda.as_cuda_array(a[:, ::2])
    np.testing.assert_array_equal(t.copy_to_host(), cupy.asnumpy(a[:, ::2]))


def test_in_out_inout(rng):
    x = rng.random(10_000)
    y = np.full(10_000, np.nan)
    x0 = x.copy()
    launch1d(axpy, x.size, 2.0, cuda.In(x), cuda.InOut(y))
    assert np.all(np.isnan(y))                      # nan * ... stays nan: y went in and back
    y = rng.random(10_000)
    expect = 2.0 * x + y
    launch1d(axpy, x.size, 2.0, cuda.In(x), cuda.InOut(y))
    np.testing.assert_allclose(y, expect, err_msg=f"seed {SEED}")
    np.testing.assert_array_equal(x, x0)


@cuda.jit
def write_index(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


def test_out_is_copied_back_only():
    out = np.zeros(5000, dtype=np.int64)
    launch1d(write_index, out.size, cuda.Out(out))
    np.testing.assert_array_equal(out, np.arange(5000))


@cuda.jit
def _copy_with_shared(x, y):
    buf = cuda.shared.array(0, dtype=np.float32)
    i = cuda.grid(1)
    if i < x.size:
        buf[cuda.threadIdx.x] = x[i]
        y[i] = buf[cuda.threadIdx.x]


@pytest.mark.parametrize("config, says", [
    ((1, 2048), r"the block has 2048 threads \(2048 x 1 x 1\) and the device allows 1024 per block"),
    ((1, (2, 2, 128)), r"the block's z dimension is 128 and the device allows 64"),
    (((1, 70000), 32), r"the grid's y dimension is 70000 and the device allows 65535"),
    # checked before the launch, against the opt-in limit (232448 on an H200)
    ((1, 32, 0, 300 * 1024), r"dynamic shared memory of 307200 bytes exceeds the device's limit of \d+"),
])
def test_launch_over_a_limit_names_it(config, says, rng):
    """On the real driver, a launch past one of the device's limits says which
    (the driver alone: CUDA_ERROR_INVALID_VALUE); the kernel still launches
    within them afterwards."""
    x = cuda.to_device(rng.standard_normal(64).astype(np.float32))
    y = cuda.device_array(64, np.float32)
    with pytest.raises(Exception, match=says):
        _copy_with_shared[config](x, y)
    _copy_with_shared[1, 64, 0, 64 * 4](x, y)
    np.testing.assert_array_equal(y.copy_to_host(), x.copy_to_host())


@cuda.jit
def slow_square(x, y, rounds):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(rounds):
            v = v * 0.999 + 0.001
        y[i] = v * v


def test_stream_callbacks_run_after_the_work(rng):
    # numba's Stream.add_callback / async_done: the callback comes on a
    # driver thread once the kernel before it has finished. It may not call
    # CUDA, so it reads what the kernel wrote in mapped memory (host memory).
    import asyncio
    import threading
    n = 1 << 20
    x = rng.standard_normal(n).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(300):
        want = want * 0.999 + 0.001          # slow_square's update (float64, as numba types it)
    want = want * want
    y = cuda.mapped_array(n, dtype=np.float32)
    y[:] = np.nan
    s = cuda.stream()
    d = cuda.to_device(x, stream=s)
    slow_square[(n + 255) // 256, 256, s](d, y, 300)
    seen, done = [], threading.Event()

    def cb(stream, status, arg):
        seen.append((stream, status, arg, np.array(y)))
        done.set()

    s.add_callback(cb, "token")
    assert done.wait(60)
    stream, status, arg, written = seen[0]
    assert stream is s and status == 0 and arg == "token"
    np.testing.assert_allclose(written, want, rtol=1e-5)

    y[:] = np.nan
    slow_square[(n + 255) // 256, 256, s](d, y, 300)

    async def main():
        return await s.async_done()

    assert asyncio.run(main()) is s
    assert s.query()
    np.testing.assert_allclose(np.array(y), want, rtol=1e-5)
