"""cuBLASDx's pipelines in kernels, launched (issue 13): a DevicePipeline made on
the host, get_tile / execute / reset_tile in the kernel, on fresh random data
against numpy (tests/mathdx_pipeline_kernels.py)."""
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.fixture(scope="module")
def pk():
    try:
        cudajit._core.mathdx_library()
    except ImportError as exc:
        pytest.skip(f"libmathdx cannot be loaded ({exc})")
    if cudajit.get_current_device().compute_capability < (9, 0):
        pytest.skip("cuBLASDx's pipelines need sm_90 (TMA)")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import mathdx_pipeline_kernels
    return mathdx_pipeline_kernels


def _check(got, want):
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert err < 1e-5, (err, SEED)


@pytest.mark.parametrize("m,n,k", [(256, 256, 256), (512, 384, 1024)])
def test_pipelined_gemm(pk, m, n, k):
    rng = np.random.default_rng(SEED)
    MM = pk.matmul()
    a, b, c = pk.operands(rng, m, n, k, MM)
    a_d, b_d, c_d = cudajit.to_device(a), cudajit.to_device(b), cudajit.to_device(c)
    dp = MM.suggest_device_pipeline(pk.DEPTH, a_d, b_d)
    assert tuple(dp.block_dim) == (pk.THREADS, 1, 1) and dp.buffer_size > 0
    kernel = pk.gemm_kernel(MM, n)
    alpha, beta = 2.0, 3.0
    kernel[(m // pk.TILE_M, n // pk.TILE_N, 1), dp.block_dim, 0, dp.buffer_size](alpha, beta, c_d, dp)
    want = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * c
    _check(c_d.copy_to_host(), want)


def test_pipelined_gemm_3d_reset_tile(pk):
    rng = np.random.default_rng(SEED + 1)
    m = n = k = 256
    steps = 2
    MM = pk.matmul(arrangement=("col_major", "row_major", "row_major"))
    a, b, c = pk.operands(rng, m, n, k, MM, steps=steps)
    a_d, b_d, c_d = pk.to_device(a), pk.to_device(b), pk.to_device(c)
    assert b_d.strides == b.strides and a_d.strides == a.strides
    dp = MM.suggest_device_pipeline(pk.DEPTH, a_d, b_d)
    kernel = pk.gemm3d_kernel(MM, n, steps)
    alpha, beta = 2.0, 3.0
    kernel[(m // pk.TILE_M, n // pk.TILE_N, 1), dp.block_dim, 0, dp.buffer_size](alpha, beta, c_d, dp)
    prod = sum(a[:, :, i].astype(np.float64) @ b[:, :, j].astype(np.float64) for i in range(steps) for j in range(steps))
    _check(c_d.copy_to_host(), alpha * prod + beta * c)
