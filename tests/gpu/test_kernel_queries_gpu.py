"""numba's kernel queries on the GPU: resource numbers of real kernels
(registers, static shared memory, local memory, constant memory) and a
specialized kernel launched on a strided device array."""
import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu


@cuda.jit
def uses_shared_and_local(a):
    sh = cuda.shared.array(256, cuda.float32)
    loc = cuda.local.array(64, cuda.float64)
    i = cuda.threadIdx.x
    for k in range(64):
        loc[k] = a[(i + k) % a.size] * k
    sh[i] = loc[a.size % 64] + loc[i % 64]
    cuda.syncthreads()
    a[i] = sh[255 - i]


def test_resource_queries():
    a = cuda.to_device(np.arange(256, dtype=np.float32))
    uses_shared_and_local[1, 256](a)
    sig = uses_shared_and_local.signatures[0]
    assert uses_shared_and_local.get_shared_mem_per_block(sig) == 256 * 4
    assert uses_shared_and_local.get_local_mem_per_thread(sig) >= 64 * 8
    assert 0 < uses_shared_and_local.get_regs_per_thread(sig) <= 255
    assert uses_shared_and_local.get_const_mem_size(sig) >= 0
    assert uses_shared_and_local.get_max_threads_per_block(sig) >= 256
    assert dict(uses_shared_and_local.get_regs_per_thread()) == {
        sig: uses_shared_and_local.get_regs_per_thread(sig)}


def test_specialized_kernel_launches():
    @cuda.jit
    def fill(a, v):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = v

    host = np.zeros((4, 12))
    strided = cuda.to_device(host)[:, ::3]
    sk = fill.specialize(strided, 2.5)
    assert sk.signatures == [("float64[:, :]", "float64")]
    sk[(1, 1), (4, 4)](strided, 2.5)
    want = host.copy()
    want[:, ::3] = 2.5
    np.testing.assert_array_equal(strided.copy_to_host(), want[:, ::3])


def test_launch_bounds_limit_the_block():
    @cuda.jit(launch_bounds=(128, 2))
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = x[i] * 2

    rng = np.random.default_rng()
    h = rng.standard_normal(1000).astype(np.float32)
    d = cuda.to_device(h)
    double[8, 128](d)
    np.testing.assert_array_equal(d.copy_to_host(), h * 2)
    with pytest.raises(cuda.CudaAPIError):   # more threads than .maxntid allows
        double[4, 256](d)


def test_namedtuple_arguments_by_field():
    import collections
    Pt = collections.namedtuple("Pt", "x y")
    Box = collections.namedtuple("Box", "lo hi count")

    @cuda.jit
    def use(p, b, out):
        out[0] = p.x * 10 + p.y
        out[1] = b.hi - b.lo
        out[2] = b.count
        x, y = p          # still a tuple
        out[3] = x + y + p[1]

    out = cuda.to_device(np.full(4, np.nan))
    use[1, 1](Pt(1.5, 2.0), Box(-1.0, 4.0, 7), out)
    np.testing.assert_array_equal(out.copy_to_host(), [17.0, 5.0, 7.0, 5.5])


def test_dropped_overload_unloads_while_its_kernel_runs():
    # issue 15: with the in-memory bound at 1, launching a second overload
    # drops the first and unloads its module while the first overload's
    # kernel is still running on the GPU (launches are asynchronous; it
    # sleeps about 0.3 s before its work, longer than the second overload's
    # compile). Its results must still come out whole, and nothing may fail.
    import time
    import cudajit.cache

    @cuda.jit
    def slow_add(x, delta, sleeps):
        i = cuda.grid(1)
        for _ in range(sleeps):
            cuda.nanosleep(1000000)
        if i < x.size:
            x[i] += delta

    rng = np.random.default_rng()
    n = 1 << 16
    x32 = rng.standard_normal(n).astype(np.float32)
    x64 = rng.standard_normal(n)
    d32, d64 = cuda.to_device(x32), cuda.to_device(x64)
    s1, s2 = cuda.stream(), cuda.stream()
    grid = (n + 255) // 256
    old = cudajit.cache.memory_cache_limit()
    cudajit.cache.set_memory_cache_limit(1)
    try:
        slow_add[grid, 256, s1](d32, np.float32(1.5), 300)     # float32 overload, still running ...
        t0 = time.perf_counter()
        slow_add[grid, 256, s2](d64, 2.5, 0)                   # ... when float64's drops it
        launched = time.perf_counter() - t0
        assert [s[:2] for s in slow_add.signatures] == [("float64[::1]", "float64")], slow_add.signatures
        still_running = not s1.query()
        cuda.synchronize()
        slow_add[grid, 256, s1](d32, np.float32(1.5), 0)       # float32 again
        cuda.synchronize()
    finally:
        cudajit.cache.set_memory_cache_limit(old)
    np.testing.assert_array_equal(d32.copy_to_host(), (x32 + np.float32(1.5)) + np.float32(1.5))
    np.testing.assert_array_equal(d64.copy_to_host(), x64 + 2.5)
    # what the run exercised (not a pass condition: the driver may wait in cuModuleUnload)
    print(f"float64 launch took {launched * 1e3:.1f} ms; float32 kernel still running after it: {still_running}")
