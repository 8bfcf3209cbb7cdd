"""A cuBLASDx GEMM inside a cudajit kernel, launched (issue 13): nvmath-python's
examples/device/cublasdx_simple_gemm_fp32.py with `import cudajit as cuda`
(tests/mathdx_kernels.py), on fresh random data against numpy."""
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.fixture(scope="module")
def mk():
    try:
        cudajit._core.mathdx_library()
    except ImportError as exc:
        pytest.skip(f"libmathdx cannot be loaded ({exc})")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import mathdx_kernels
    return mathdx_kernels


@pytest.mark.parametrize("name", ["simple_gemm", "simple_gemm_call_spelling", "dynamic_smem_gemm",
                                  "static_gemm"])
def test_simple_gemm_matches_numpy(mk, name):
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((mk.M, mk.K)).astype(np.float32)
    b = rng.standard_normal((mk.K, mk.N)).astype(np.float32)
    c = rng.standard_normal((mk.M, mk.N)).astype(np.float32)
    out = cudajit.to_device(np.full((mk.M, mk.N), np.nan, np.float32))   # poisoned
    alpha, beta = 2.0, 5.0
    smem = mk.MM.get_shared_storage_size() if name == "dynamic_smem_gemm" else 0
    getattr(mk, name)[1, mk.MM.block_dim, 0, smem](cudajit.to_device(a), cudajit.to_device(b),
                                                   cudajit.to_device(c), alpha, beta, out)
    got = out.copy_to_host()
    want = alpha * (a.astype(np.float64) @ b) + beta * c
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5, f"seed {SEED}"


def test_launch_with_another_block_shape_is_refused(mk):
    x = cudajit.to_device(np.zeros((mk.M, mk.K), np.float32))
    y = cudajit.to_device(np.zeros((mk.K, mk.N), np.float32))
    z = cudajit.to_device(np.zeros((mk.M, mk.N), np.float32))
    with pytest.raises(cudajit.CompileError, match=r"Matmul was built for block_dim \(256, 1, 1\)"):
        mk.simple_gemm[1, 128](x, y, z, 1.0, 0.0, z)


def test_mixed_precision_gemm_matches_numpy(mk):
    rng = np.random.default_rng(SEED + 1)
    m, n, k = mk.MM_MIXED.size
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = rng.standard_normal((m, n)).astype(np.float32)
    out = cudajit.to_device(np.full((m, n), np.nan, np.float32))
    mk.mixed_gemm[1, mk.MM_MIXED.block_dim](cudajit.to_device(a), cudajit.to_device(b),
                                            cudajit.to_device(c), out)
    want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 0.5 * c
    got = out.copy_to_host()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-3, f"seed {SEED}"


def test_batched_gemm_in_a_larger_block(mk):
    """Two GEMMs a block, one per threadIdx.y, in a (256, 2, 1) launch of a
    256-thread descriptor (nvmath's cublasdx_batched_gemm_fp64.py)."""
    rng = np.random.default_rng(SEED + 2)
    shape_a, shape_b, shape_c = (mk.BATCHES, mk.M, mk.K), (mk.BATCHES, mk.K, mk.N), (mk.BATCHES, mk.M, mk.N)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    c = rng.standard_normal(shape_c).astype(np.float32)
    out = cudajit.to_device(np.full(shape_c, np.nan, np.float32))   # poisoned
    alpha, beta = 1.5, -0.5
    mk.batched_gemm[1, (mk.THREADS, mk.BATCHES, 1)](cudajit.to_device(a), cudajit.to_device(b),
                                                     cudajit.to_device(c), alpha, beta, out)
    got = out.copy_to_host()
    for i in range(mk.BATCHES):
        want = alpha * (a[i].astype(np.float64) @ b[i]) + beta * c[i]
        assert np.linalg.norm(got[i] - want) / np.linalg.norm(want) < 1e-5, f"batch {i}, seed {SEED}"


def test_gemm_in_a_wider_block(mk):
    """All WIDE > 256 threads call execute; those past the descriptor's take
    no part (nvmath's cublasdx_blockdim_gemm_fp16.py, scenario 128 in 255)."""
    rng = np.random.default_rng(SEED + 3)
    a = rng.standard_normal((mk.M, mk.K)).astype(np.float32)
    b = rng.standard_normal((mk.K, mk.N)).astype(np.float32)
    c = rng.standard_normal((mk.M, mk.N)).astype(np.float32)
    out = cudajit.to_device(np.full((mk.M, mk.N), np.nan, np.float32))
    mk.wide_gemm[1, mk.WIDE](cudajit.to_device(a), cudajit.to_device(b), cudajit.to_device(c), 2.0, 0.25, out)
    want = 2.0 * (a.astype(np.float64) @ b) + 0.25 * c
    got = out.copy_to_host()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5, f"seed {SEED}"


def test_runtime_leading_dimensions_match_numpy(mk):
    """MM.execute(alpha, a, lda, b, ldb, beta, c, ldc) (nvmath's
    cublasdx_simple_gemm_leading_dimensions.py): padded leading dimensions
    given at run time, a 30x31x33 float64 GEMM in a (16, 16) block."""
    rng = np.random.default_rng(SEED + 4)
    m, n, k = mk.LD_SIZE
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    c = rng.standard_normal((m, n))
    out = cudajit.to_device(np.full((m, n), np.nan))   # poisoned
    lda, ldb, ldc = mk.LDS
    smem = mk.MM_LD.get_shared_storage_size(lda, ldb, ldc)
    mk.runtime_ld_gemm[1, (16, 16, 1), 0, smem](0.75, cudajit.to_device(a), lda, cudajit.to_device(b), ldb,
                                                 -1.25, cudajit.to_device(c), ldc, out)
    want = 0.75 * (a @ b) - 1.25 * c
    got = out.copy_to_host()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-12, f"seed {SEED}"
