"""Global device arrays captured by pointer, on the GPU: numba-cuda's
documented example (a later write to the array is seen by the next launch),
with cudajit, CuPy and PyTorch arrays, strided views, writes from the kernel,
and arrays of records."""
import os

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
RNG = np.random.default_rng(SEED)
REC = np.dtype([("x", np.float64), ("n", np.int32)], align=True)

# The globals the kernels capture, made once a GPU is known to be there
# (collecting this file on a machine without one must not touch a driver).
PRICES = TABLE = VIEW = COUNTS = RECORDS = None


@pytest.fixture(scope="module", autouse=True)
def device_globals():
    global PRICES, TABLE, VIEW, COUNTS, RECORDS
    PRICES = cuda.to_device(RNG.uniform(1, 10, 5).astype(np.float32))
    TABLE = cuda.to_device(RNG.standard_normal((64, 48)))
    VIEW = TABLE[::2, 1::3]            # a strided view of it
    COUNTS = cuda.device_array(64, np.int64)
    host = np.zeros(100, REC)
    host["x"] = RNG.standard_normal(100)
    host["n"] = RNG.integers(0, 1000, 100)
    RECORDS = cuda.to_device(host)


@cuda.jit
def compute_totals(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i]


def test_numbas_example_sees_later_writes():
    q = cuda.to_device(RNG.uniform(1, 3, 5).astype(np.float32))
    totals = cuda.device_array(5, np.float32)
    compute_totals[1, 32](q, totals)
    np.testing.assert_allclose(totals.copy_to_host(), q.copy_to_host() * PRICES.copy_to_host(), rtol=1e-6)
    new = RNG.uniform(20, 60, 5).astype(np.float32)
    PRICES.copy_to_device(new)
    compute_totals[1, 32](q, totals)
    np.testing.assert_allclose(totals.copy_to_host(), q.copy_to_host() * new, rtol=1e-6)


@cuda.jit
def through_view(out):
    i, j = cuda.grid(2)
    if i < VIEW.shape[0] and j < VIEW.shape[1]:
        out[i, j] = VIEW[i, j] * 2
        cuda.atomic.add(COUNTS, i, 1)


def test_strided_view_and_writes_from_the_kernel():
    COUNTS.copy_to_device(np.zeros(64, np.int64))
    out = np.full(VIEW.shape, np.nan)
    through_view[(4, 4), (16, 16)](out)
    np.testing.assert_array_equal(out, TABLE.copy_to_host()[::2, 1::3] * 2)
    counts = COUNTS.copy_to_host()
    np.testing.assert_array_equal(counts[:VIEW.shape[0]], VIEW.shape[1])
    assert (counts[VIEW.shape[0]:] == 0).all()


@cuda.jit
def bump_records(out):
    i = cuda.grid(1)
    if i < RECORDS.shape[0]:
        out[i] = RECORDS[i].x + RECORDS[i].n
        RECORDS[i].n = RECORDS[i].n + 1


def test_array_of_records():
    before = RECORDS.copy_to_host()
    out = np.full(100, np.nan)
    bump_records[1, 128](out)
    np.testing.assert_allclose(out, before["x"] + before["n"])
    np.testing.assert_array_equal(RECORDS.copy_to_host()["n"], before["n"] + 1)


def test_cupy_and_torch_globals():
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    src = RNG.standard_normal(300).astype(np.float32)
    glb = {"C": cp.asarray(src), "T": torch.arange(300, dtype=torch.float32, device="cuda") * 0.5, "cuda": cuda}
    exec("def k(out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = C[i] + T[i]\n", glb)
    out = np.full(300, np.nan, np.float32)
    cuda.jit(glb["k"])[3, 128](out)
    np.testing.assert_allclose(out, src + np.arange(300, dtype=np.float32) * 0.5, rtol=1e-6)
    glb["C"][:] = 7.0                      # written in place: the next launch sees it
    cuda.jit(glb["k"])[3, 128](out)        # a new dispatcher compiles again: same address
    np.testing.assert_allclose(out, 7.0 + np.arange(300, dtype=np.float32) * 0.5, rtol=1e-6)
