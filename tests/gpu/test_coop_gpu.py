"""cudajit.coop kernels (tests/coop_kernels.py: CCCL cuda.coop's names, an
eager int16 signature compiled for the primitives' block) on fresh random
data against numpy, outputs poisoned first."""
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import coop_kernels as ck  # noqa: E402


def test_block_max_and_sum_of_int16():
    rng = np.random.default_rng(SEED)
    blocks = 37
    x = rng.integers(-30000, 30000, blocks * ck.THREADS, dtype=np.int16)
    m = cudajit.to_device(np.full(blocks, -1, np.int16))
    s = cudajit.to_device(np.full(blocks, -1, np.int32))
    ck.block_max_and_sum[blocks, ck.THREADS](cudajit.to_device(x), m, s)
    rows = x.reshape(blocks, ck.THREADS)
    assert np.array_equal(m.copy_to_host(), rows.max(axis=1)), f"seed {SEED}"
    assert np.array_equal(s.copy_to_host(), rows.astype(np.int64).sum(axis=1).astype(np.int32)), f"seed {SEED}"


def test_warp_max_of_int16():
    rng = np.random.default_rng(SEED + 1)
    blocks = 5
    x = rng.integers(-30000, 30000, blocks * ck.THREADS, dtype=np.int16)
    out = cudajit.to_device(np.full(x.size // 32, -1, np.int16))
    ck.warp_maxima[blocks, ck.THREADS](cudajit.to_device(x), out)
    assert np.array_equal(out.copy_to_host(), x.reshape(-1, 32).max(axis=1)), f"seed {SEED}"


def test_prefix_sums_of_int32():
    rng = np.random.default_rng(SEED + 2)
    blocks = 7
    x = rng.integers(-1000, 1000, blocks * ck.THREADS, dtype=np.int32)
    outs = [cudajit.to_device(np.full(x.size, -7, np.int32)) for _ in range(3)]
    ck.prefix_sums[blocks, ck.THREADS](cudajit.to_device(x), *outs)
    rows = x.reshape(blocks, ck.THREADS)
    inclusive = np.cumsum(rows, axis=1)
    warps = x.reshape(-1, 32)
    got = [o.copy_to_host() for o in outs]
    assert np.array_equal(got[0], (inclusive - rows).ravel()), f"seed {SEED}"
    assert np.array_equal(got[1], inclusive.ravel()), f"seed {SEED}"
    assert np.array_equal(got[2], (np.cumsum(warps, axis=1) - warps).ravel()), f"seed {SEED}"
