"""numpy ufuncs over arrays inside kernels with explicit outputs
(`np.sin(x[i], out[i])`: each thread runs its whole array operation), on the
GPU against numpy on fresh random data with poisoned outputs, and against
numba-cuda on the forms it supports."""
import os

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
TPB = 64


def rows_sin(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        np.sin(x[i], out[i])


def rows_broadcast(x, w, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        np.multiply(x[i], w, out=out[i])      # a row times a shared (m,) vector
        np.add(out[i], 0.5, out[i])


def whole_in_one_thread(x, y, out, flags):
    if cuda.grid(1) == 0:
        np.arctan2(x, y, out)                 # 2-d, all of it in thread 0
        np.isnan(out, flags)


def two_outputs(x, d, q, r):
    i = cuda.grid(1)
    if i < x.shape[0]:
        np.divmod(x[i], d, out=(q[i], r[i]))


def launch(kernel, n, *args):
    cuda.jit(kernel)[(n + TPB - 1) // TPB, TPB](*args)


def test_rows_of_a_2d_array():
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-10, 10, (1000, 37)).astype(np.float32)
    out = np.full(x.shape, np.nan, np.float64)
    launch(rows_sin, x.shape[0], x, out)
    np.testing.assert_allclose(out, np.sin(x).astype(np.float64), rtol=1e-6, atol=1e-6, err_msg=f"seed {SEED}")


def test_broadcast_against_a_vector_and_a_scalar():
    rng = np.random.default_rng(SEED + 1)
    x = rng.standard_normal((513, 64))
    w = rng.standard_normal(64).astype(np.float32)
    out = np.full(x.shape, np.nan)
    launch(rows_broadcast, x.shape[0], cuda.to_device(x), cuda.to_device(w), out)
    np.testing.assert_allclose(out, x * w + 0.5, rtol=1e-12, err_msg=f"seed {SEED}")


def test_whole_array_and_bool_output():
    rng = np.random.default_rng(SEED + 2)
    x = rng.standard_normal((17, 9))
    y = rng.standard_normal((17, 9))
    x[3, 4] = np.nan
    out = np.full(x.shape, -7.0)
    flags = np.zeros(x.shape, np.bool_)
    flags[::2] = True                         # poison: every value is written
    launch(whole_in_one_thread, 1, x, y, out, flags)
    np.testing.assert_allclose(out, np.arctan2(x, y), rtol=1e-13, err_msg=f"seed {SEED}")
    np.testing.assert_array_equal(flags, np.isnan(np.arctan2(x, y)))


def test_two_outputs():
    rng = np.random.default_rng(SEED + 3)
    x = rng.integers(-1000, 1000, (300, 11))
    d = 7
    q = np.full(x.shape, -99, np.int64)
    r = np.full(x.shape, -99, np.int64)
    launch(two_outputs, x.shape[0], x, d, q, r)
    np.testing.assert_array_equal(q, x // d)
    np.testing.assert_array_equal(r, x % d)


def test_same_kernel_under_numba_cuda():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack          # numba-cuda 0.30 on numpy >= 2.5
    nb = pytest.importorskip("numba.cuda")
    rng = np.random.default_rng(SEED + 4)
    x = rng.uniform(-10, 10, (700, 19)).astype(np.float32)
    ours, theirs = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    launch(rows_sin, x.shape[0], x, ours)
    glb = dict(rows_sin.__globals__, cuda=nb)
    nb_kernel = type(rows_sin)(rows_sin.__code__, glb, rows_sin.__name__)
    nb.jit(nb_kernel)[(x.shape[0] + TPB - 1) // TPB, TPB](x, theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=f"seed {SEED}")
