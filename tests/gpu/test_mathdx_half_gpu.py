"""Half-precision MathDx routines inside cudajit kernels, launched (issue 13):
the kernels of tests/mathdx_half_kernels.py (nvmath-python's fp16 examples,
batched over several blocks) on fresh random data against numpy, outputs
poisoned where they are separate arrays. Tolerances fit float16 (11-bit
significands): the reference is computed in float64 from the inputs as
rounded to float16."""
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.fixture(scope="module")
def hk():
    try:
        cudajit._core.mathdx_library()
    except ImportError as exc:
        pytest.skip(f"libmathdx cannot be loaded ({exc})")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import mathdx_half_kernels
    return mathdx_half_kernels


def to_fp16_pairs(z):
    """complex -> float16 (..., 2n) as (re, im) pairs (nvmath's complex64_to_fp16x2)."""
    out = np.empty((*z.shape[:-1], 2 * z.shape[-1]), np.float16)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def from_fp16_pairs(h):
    return h[..., 0::2].astype(np.float64) + 1j * h[..., 1::2].astype(np.float64)


def relative_error(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def test_block_c2c_half2(hk):
    f = hk.HALF2
    rng = np.random.default_rng(SEED)
    blocks = 5
    z = rng.standard_normal((blocks * f.ffts_per_block, f.size)) + 1j * rng.standard_normal(
        (blocks * f.ffts_per_block, f.size))
    data = to_fp16_pairs(z)
    d = cudajit.to_device(data)
    hk.block_half2[blocks, f.block_dim, 0, f.shared_memory_size](d)
    want = np.fft.fft(from_fp16_pairs(data), axis=-1)
    err = relative_error(from_fp16_pairs(d.copy_to_host()), want)
    assert err < 5e-3, f"seed {SEED}: {err}"


def test_thread_c2c_half_inverse(hk):
    f = hk.THREAD
    rng = np.random.default_rng(SEED + 1)
    threads = 100
    z = rng.standard_normal((2 * threads, f.size)) + 1j * rng.standard_normal((2 * threads, f.size))
    data = to_fp16_pairs(z)
    d = cudajit.to_device(data)
    hk.thread_half[(threads + 31) // 32, 32](d)
    # cuFFTDx's inverse is unnormalised: n * numpy's ifft
    want = np.fft.ifft(from_fp16_pairs(data), axis=-1) * f.size
    err = relative_error(from_fp16_pairs(d.copy_to_host()), want)
    assert err < 5e-3, f"seed {SEED}: {err}"


def test_block_r2c_half(hk):
    f = hk.R2C
    rng = np.random.default_rng(SEED + 2)
    blocks = 3
    x = rng.standard_normal((blocks * f.ffts_per_block, f.size)).astype(np.float32)
    out = cudajit.to_device(np.full((x.shape[0], 2 * (f.size // 2 + 1)), np.nan, np.float16))
    hk.block_r2c_half[blocks, f.block_dim, 0, f.shared_memory_size](cudajit.to_device(x), out)
    want = np.fft.rfft(x.astype(np.float16).astype(np.float64), axis=-1)
    err = relative_error(from_fp16_pairs(out.copy_to_host()), want)
    assert err < 5e-3, f"seed {SEED}: {err}"


def test_block_c2r_half(hk):
    f = hk.C2R
    rng = np.random.default_rng(SEED + 3)
    blocks = 3
    spectrum = np.fft.rfft(rng.standard_normal((blocks * f.ffts_per_block, f.size)), axis=-1) / 8
    data = to_fp16_pairs(spectrum)
    out = cudajit.to_device(np.full((data.shape[0], f.size), np.nan, np.float32))
    hk.block_c2r_half[blocks, f.block_dim, 0, f.shared_memory_size](cudajit.to_device(data), out)
    want = np.fft.irfft(from_fp16_pairs(data), n=f.size, axis=-1, norm="forward")
    err = relative_error(out.copy_to_host().astype(np.float64), want)
    assert err < 5e-3, f"seed {SEED}: {err}"


@pytest.mark.parametrize("alpha, beta", [(1 + 1j, 2 - 1j), (0.5, -1.0)])
def test_batched_complex_half_gemm(hk, alpha, beta):
    MM = hk.CGEMM
    m, n, k = MM.size
    rng = np.random.default_rng(SEED + 4)
    batch = 7

    def rand(shape):
        z = 0.5 * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
        return z.astype(np.complex64)

    a, b, c = rand((batch, m, k)), rand((batch, k, n)), rand((batch, m, n))
    out = cudajit.to_device(np.full((batch, m, n), np.nan + 1j * np.nan, np.complex64))
    smem = max(MM.get_shared_storage_size(), (MM.a_size + MM.b_size + MM.c_size) * 4)
    hk.batched_cgemm[batch, MM.block_dim, 0, smem](cudajit.to_device(a), cudajit.to_device(b),
                                                    cudajit.to_device(c), alpha, beta, out)

    def half(z):
        return z.real.astype(np.float16).astype(np.float64) + 1j * z.imag.astype(np.float16).astype(np.float64)

    want = half(np.array([alpha]))[0] * (half(a) @ half(b)) + half(np.array([beta]))[0] * half(c)
    got = out.copy_to_host()
    assert np.isfinite(got).all(), f"seed {SEED}: unwritten outputs"
    err = relative_error(got.astype(np.complex128), want)
    assert err < 1e-2, f"seed {SEED}: {err}"
