"""Tile operations inside @cudajit.jit (SIMT) kernels on the GPU: the kernels
of tests/tile_simt_kernels.py against numpy on fresh random data, with
1-, 2- and 3-d blocks, ragged edges and NaN-poisoned outputs."""
import os
import sys

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tile_simt_kernels as K  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
BLOCKS = [(128,), (32, 4), (32, 2, 2), (256,)]


def poisoned(shape, dtype=np.float32):
    return cuda.to_device(np.full(shape, np.nan, dtype))


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: "x".join(map(str, b)))
def test_normalize_rows(block):
    rng = np.random.default_rng(SEED)
    rows = 37
    x = rng.uniform(0.5, 2.0, (rows, K.ROW)).astype(np.float32)
    sums, y = poisoned(rows), poisoned((rows, K.ROW))
    K.normalize_rows[rows, block](cuda.to_device(x), sums, y)
    want = x.astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(sums.copy_to_host(), want, rtol=1e-5, err_msg=f"seed {SEED}")
    np.testing.assert_allclose(y.copy_to_host(), x / want[:, None], rtol=1e-5, err_msg=f"seed {SEED}")


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: "x".join(map(str, b)))
def test_simt_then_tile(block):
    rng = np.random.default_rng(SEED)
    rows = 19
    x = rng.standard_normal((rows, K.ROW)).astype(np.float32)
    tmp, out = poisoned((rows, K.ROW)), poisoned(rows)
    K.simt_then_tile[rows, block](cuda.to_device(x), tmp, out)
    want = (x * x + np.arange(K.ROW, dtype=np.float32)).max(axis=1)
    np.testing.assert_array_equal(out.copy_to_host(), want, err_msg=f"seed {SEED}")


@pytest.mark.parametrize("cols", [300, 128, 77])
@pytest.mark.parametrize("block", [(128,), (32, 2, 2)], ids=lambda b: "x".join(map(str, b)))
def test_accumulate_chunks_ragged(block, cols):
    rng = np.random.default_rng(SEED)
    rows = 11
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = poisoned((rows, K.CHUNK))
    K.accumulate_chunks[rows, block](cuda.to_device(x), out)
    padded = np.zeros((rows, -(-cols // K.CHUNK) * K.CHUNK), np.float64)
    padded[:, :cols] = x
    want = padded.reshape(rows, -1, K.CHUNK).sum(axis=1)
    want[:, 0] += 1.0
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5, atol=1e-5, err_msg=f"seed {SEED}")


@pytest.mark.parametrize("block", [(128,), (64, 2), (256,)], ids=lambda b: "x".join(map(str, b)))
def test_matmul_tiles(block):
    rng = np.random.default_rng(SEED)
    m, k, n = 200, 100, 136   # none a multiple of the tile
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = poisoned((m, n))
    K.matmul_tiles[(-(-m // 64), -(-n // 64)), block](cuda.to_device(a), cuda.to_device(b), c)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.copy_to_host(), want, rtol=2e-3, atol=2e-2, err_msg=f"seed {SEED}")


def test_one_kernel_two_block_shapes():
    rng = np.random.default_rng(SEED)
    rows = 8
    x = rng.uniform(0.5, 2.0, (rows, K.ROW)).astype(np.float32)
    dx = cuda.to_device(x)
    for block in ((64,), (32, 8), (64,)):
        sums, y = poisoned(rows), poisoned((rows, K.ROW))
        K.normalize_rows[rows, block](dx, sums, y)
        np.testing.assert_allclose(sums.copy_to_host(), x.astype(np.float64).sum(axis=1), rtol=1e-5)
