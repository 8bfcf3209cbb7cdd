"""cuBLASDx's tensor API in kernels, launched (issue 13): make_tensor, copy,
copy_fragment, clear, copy_wait, axpby and MM.execute(a, b, c) with C in
registers, on fresh random data against numpy (tests/mathdx_tensor_kernels.py)."""
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.fixture(scope="module")
def k():
    try:
        cudajit._core.mathdx_library()
    except ImportError as exc:
        pytest.skip(f"libmathdx cannot be loaded ({exc})")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import mathdx_tensor_kernels
    mod = mathdx_tensor_kernels
    return mod, mod.build()


def test_tensor_gemm_with_register_accumulator(k):
    mod, kk = k
    rng = np.random.default_rng(SEED)
    a = np.asfortranarray(rng.standard_normal((mod.M, mod.K)).astype(np.float16))
    b = rng.standard_normal((mod.K, mod.N)).astype(np.float16)
    c = rng.standard_normal((mod.M, mod.N)).astype(np.float32)
    out = cudajit.to_device(np.full((mod.M, mod.N), np.nan, np.float32))   # poisoned
    alpha, beta = 2.0, 3.0
    kk["tensor_gemm"][1, kk["mm"].block_dim, 0, kk["tensor_smem"]](
        alpha, cudajit.to_device(a), cudajit.to_device(b), beta, cudajit.to_device(c), out)
    got = out.copy_to_host()
    want = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * c
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert err < 1e-5, (err, SEED)


@pytest.mark.parametrize("ktiles", [1, 3, 8])
def test_k_loop_over_global_tiles_with_runtime_leading_dimensions(k, ktiles):
    mod, kk = k
    rng = np.random.default_rng(SEED + ktiles)
    a = rng.standard_normal((mod.TM, mod.TK * ktiles))
    b = rng.standard_normal((mod.TK * ktiles, mod.TN))
    out = cudajit.to_device(np.full((mod.TM, mod.TN), np.nan))
    kk["tiled_gemm"][1, kk["tiled"].block_dim, 0, kk["tiled_smem"]](cudajit.to_device(a), cudajit.to_device(b), out)
    np.testing.assert_allclose(out.copy_to_host(), a @ b, rtol=1e-12, atol=1e-12, err_msg=f"seed {SEED}")


@pytest.mark.parametrize("name", ["accumulator_gemm", "partition_gemm", "fragment_like_gemm"])
def test_accumulator_forms_match_numpy(k, name):
    # nvmath's accumulator_fp32, simple_partition and make_tensor_like examples' kernels
    mod, kk = k
    rng = np.random.default_rng(SEED + len(name))
    a = np.asfortranarray(rng.standard_normal((mod.M, mod.K)).astype(np.float16))
    b = rng.standard_normal((mod.K, mod.N)).astype(np.float16)
    ctype = np.float64 if name == "fragment_like_gemm" else np.float32   # make_tensor_like's C is float64
    c = rng.standard_normal((mod.M, mod.N)).astype(ctype)
    out = cudajit.to_device(np.full((mod.M, mod.N), np.nan, ctype))
    alpha, beta = 1.5, -2.0
    smem = kk["plain_smem"] if name == "accumulator_gemm" else kk["tensor_smem"]
    kk[name][1, kk["mm"].block_dim, 0, smem](alpha, cudajit.to_device(a), cudajit.to_device(b), beta,
                                              cudajit.to_device(c), out)
    got = out.copy_to_host()
    want = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * c
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert err < 1e-5, (name, err, SEED)
