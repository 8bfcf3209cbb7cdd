"""vectorize / guvectorize / reduce on the GPU against numpy, on fresh random
data: numpy, device and CuPy inputs, broadcasting with scalars, out= on the
host and the device, a stream, the lazy (signature-free) form; batched
gufuncs; reductions from 0 elements to a million, with init, res= and a
stream."""
import math
import os
import sys

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ufunc_kernels as U  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


def disc(a, b, c):
    return np.sqrt(b.astype(np.float64) ** 2 - 4 * a.astype(np.float64) * c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorize_numpy_in_numpy_out(dtype):
    rng = np.random.default_rng(SEED)
    n = 10_007
    a, c = (rng.random(n).astype(dtype) for _ in range(2))
    b = (rng.random(n) + 10).astype(dtype)
    got = U.discriminant(a, b, c)
    assert isinstance(got, np.ndarray) and got.dtype == dtype
    np.testing.assert_allclose(got, disc(a, b, c), rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_vectorize_device_arrays_broadcast_and_scalars():
    rng = np.random.default_rng(SEED)
    a = rng.random((33, 1)).astype(np.float32)
    b = (rng.random(70) + 10).astype(np.float32)
    got = U.discriminant(cuda.to_device(a), cuda.to_device(b), 0.25)
    assert isinstance(got, cuda.DeviceNDArray) and got.shape == (33, 70)
    np.testing.assert_allclose(got.copy_to_host(), disc(a, b, np.float32(0.25)), rtol=1e-6)


def test_vectorize_out_and_stream():
    rng = np.random.default_rng(SEED)
    n = 4096
    a, b, c = rng.random(n), rng.random(n) + 10, rng.random(n)
    out = cuda.to_device(np.full(n, np.nan))
    s = cuda.stream()
    assert U.discriminant(a, b, c, out=out, stream=s) is out
    s.synchronize()
    np.testing.assert_allclose(out.copy_to_host(), disc(a, b, c), rtol=1e-12)
    host = np.full(n, np.nan)
    assert U.discriminant(a, b, c, host) is host
    np.testing.assert_allclose(host, disc(a, b, c), rtol=1e-12)


def test_vectorize_cupy_arrays():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED)
    x = rng.random(1000).astype(np.float32)
    got = U.calls_a_device_function(cp.asarray(x), cp.asarray(x * 0 + 2), cp.asarray(x + 1))
    np.testing.assert_allclose(got.copy_to_host(), x ** 2 / (x + 1), rtol=1e-5)


def test_vectorize_python_semantics_and_lazy():
    rng = np.random.default_rng(SEED)
    a = rng.integers(-50, 50, 1000)
    b = rng.integers(1, 9, 1000) * rng.choice([-1, 1], 1000)
    np.testing.assert_array_equal(U.floor_mod(a, b), np.mod(a, b))   # Python's sign rule
    x, y = rng.random(500).astype(np.float32), rng.random(500).astype(np.float32)
    got = U.lazy_axpy(np.float32(3), x, y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 3 * x + y, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guvectorize_batched_matmul(dtype):
    rng = np.random.default_rng(SEED)
    A = rng.standard_normal((37, 5, 7)).astype(dtype)
    B = rng.standard_normal((37, 7, 3)).astype(dtype)
    got = U.matmulcore(A, B)
    np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-5)
    # one B for every A (no loop dimensions), on device arrays, into out=
    out = cuda.device_array((37, 5, 3), dtype)
    assert U.matmulcore(cuda.to_device(A), cuda.to_device(B[0]), out=out) is out
    np.testing.assert_allclose(out.copy_to_host(), A.astype(np.float64) @ B[0], rtol=1e-4, atol=1e-5)


def test_guvectorize_scalar_core():
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((100, 16))
    got = U.shifted_norm(x, 0.5)
    np.testing.assert_allclose(got, np.sqrt(((x - 0.5) ** 2).sum(axis=1)), rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 1000, 1_000_003])
def test_reduce_sum(n):
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(n)
    got = U.sum_reduce(x, init=1.5)
    assert math.isclose(got, x.sum() + 1.5, rel_tol=1e-9, abs_tol=1e-9)


def test_reduce_max_res_size_stream():
    rng = np.random.default_rng(SEED)
    x = rng.integers(-10**9, 10**9, 300_000)
    assert U.max_reduce(x, init=-10**10) == x.max()
    res = cuda.device_array(1, np.int64)
    s = cuda.stream()
    assert U.max_reduce(cuda.to_device(x), size=1000, res=res, init=-10**10, stream=s) is None
    s.synchronize()
    assert res.copy_to_host()[0] == x[:1000].max()
