"""cuFFTDx FFTs inside cudajit kernels, launched (issue 13): nvmath-python's
examples/device FFT kernels with `import cudajit as cuda`
(tests/mathdx_fft_kernels.py) and batched kernels over several sizes,
precisions, directions and both executions, on fresh random data against
numpy.fft, outputs poisoned."""
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12}


@pytest.fixture(scope="module")
def fk():
    try:
        cudajit._core.mathdx_library()
    except ImportError as exc:
        pytest.skip(f"libmathdx cannot be loaded ({exc})")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import mathdx_fft_kernels
    return mathdx_fft_kernels


def random_complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def reference(x, direction):
    # cuFFTDx's inverse is unnormalised, as cuFFT's: n * numpy's ifft.
    x = x.astype(np.complex128)
    return np.fft.fft(x, axis=-1) if direction == "forward" else np.fft.ifft(x, axis=-1) * x.shape[-1]


def relative_error(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def test_nvmath_simple_block_example(fk):
    rng = np.random.default_rng(SEED)
    data = random_complex(rng, (fk.BLOCK.ffts_per_block, fk.BLOCK.size), np.complex64)
    d = cudajit.to_device(data)
    fk.block_fft[1, fk.BLOCK.block_dim, 0, fk.BLOCK.shared_memory_size](d)
    assert relative_error(d.copy_to_host(), reference(data, "forward")) < 1e-5, f"seed {SEED}"


def test_nvmath_simple_thread_example(fk):
    rng = np.random.default_rng(SEED + 1)
    data = random_complex(rng, (100, fk.THREAD.size), np.complex128)
    d = cudajit.to_device(data)
    fk.thread_fft[4, 32](d)
    assert relative_error(d.copy_to_host(), reference(data, "forward")) < 1e-12, f"seed {SEED}"


def test_batched_inverse_many_blocks(fk):
    rng = np.random.default_rng(SEED + 2)
    batch = 37
    data = random_complex(rng, (batch, fk.INVERSE.size), np.complex128)
    out = cudajit.to_device(np.full(data.shape, np.nan, np.complex128))
    grid = (batch + fk.INVERSE.ffts_per_block - 1) // fk.INVERSE.ffts_per_block
    fk.batched_inverse[grid, fk.INVERSE.block_dim, 0, fk.INVERSE.shared_memory_size](cudajit.to_device(data), out)
    assert relative_error(out.copy_to_host(), reference(data, "inverse")) < 1e-12, f"seed {SEED}"


@pytest.mark.parametrize("precision", [np.float32, np.float64])
@pytest.mark.parametrize("direction", ["forward", "inverse"])
@pytest.mark.parametrize("size, ept, fpb", [(32, 4, 4), (64, 8, 2), (256, 16, 1), (512, 16, 1), (4096, 16, 1)])
def test_block_c2c(fk, precision, direction, size, ept, fpb):
    from cudajit.mathdx import FFT
    f = FFT(size=size, precision=precision, fft_type="c2c", direction=direction, execution="Block",
            elements_per_thread=ept, ffts_per_block=fpb)
    kernel = fk.block_kernel(f)
    rng = np.random.default_rng(SEED + size)
    batch = 3 * f.ffts_per_block + 1    # a last block with rows to spare
    x = random_complex(rng, (batch, size), COMPLEX[precision])
    y = cudajit.to_device(np.full(x.shape, np.nan, COMPLEX[precision]))
    grid = (batch + f.ffts_per_block - 1) // f.ffts_per_block
    kernel[grid, f.block_dim, 0, f.shared_memory_size](cudajit.to_device(x), y)
    err = relative_error(y.copy_to_host(), reference(x, direction))
    assert err < TOLERANCE[precision] * np.log2(size), f"seed {SEED}: {err}"


@pytest.mark.parametrize("precision", [np.float32, np.float64])
@pytest.mark.parametrize("direction", ["forward", "inverse"])
@pytest.mark.parametrize("size", [2, 8, 16, 32])
def test_thread_c2c(fk, precision, direction, size):
    from cudajit.mathdx import fft
    f = fft(size=size, precision=precision, fft_type="c2c", direction=direction, execution="Thread")
    kernel = fk.thread_kernel(f)
    rng = np.random.default_rng(SEED + 100 + size)
    x = random_complex(rng, (257, size), COMPLEX[precision])
    y = cudajit.to_device(np.full(x.shape, np.nan, COMPLEX[precision]))
    kernel[(257 + 127) // 128, 128](cudajit.to_device(x), y)
    err = relative_error(y.copy_to_host(), reference(x, direction))
    assert err < TOLERANCE[precision] * max(1, np.log2(size)), f"seed {SEED}: {err}"


def test_launch_with_another_block_shape_is_refused(fk):
    d = cudajit.to_device(np.zeros((2, 128), np.complex64))
    with pytest.raises(cudajit.CompileError, match=r"FFT was built for block_dim \(16, 2, 1\)"):
        fk.block_fft[1, (32, 2)](d)


def test_nvmath_simple_r2c_example(fk):
    rng = np.random.default_rng(SEED + 3)
    x = rng.standard_normal((fk.R2C.ffts_per_block, fk.R2C.size)).astype(np.float32)
    y = cudajit.to_device(np.full((x.shape[0], fk.R2C.size // 2 + 1), np.nan, np.complex64))
    fk.block_r2c[1, fk.R2C.block_dim, 0, fk.R2C.shared_memory_size](cudajit.to_device(x), y)
    assert relative_error(y.copy_to_host(), np.fft.rfft(x, axis=-1)) < 1e-5, f"seed {SEED}"


@pytest.mark.parametrize("precision", [np.float32, np.float64])
@pytest.mark.parametrize("fft_type", ["r2c", "c2r"])
@pytest.mark.parametrize("size, ept, fpb", [(64, 8, 2), (128, 8, 1), (1024, 16, 1)])
def test_block_real(fk, precision, fft_type, size, ept, fpb):
    from cudajit.mathdx import FFT
    f = FFT(size=size, precision=precision, fft_type=fft_type, execution="Block",
            elements_per_thread=ept, ffts_per_block=fpb)
    kernel = fk.real_block_kernel(f, precision)
    rng = np.random.default_rng(SEED + 7 * size)
    batch = 2 * f.ffts_per_block + 1
    half = size // 2 + 1
    if fft_type == "r2c":
        x = rng.standard_normal((batch, size)).astype(precision)
        want = np.fft.rfft(x.astype(np.float64), axis=-1)
        y = np.full((batch, half), np.nan, COMPLEX[precision])
    else:
        # a Hermitian spectrum: the DC and Nyquist terms real
        x = random_complex(rng, (batch, half), COMPLEX[precision])
        x[:, 0] = x[:, 0].real
        x[:, -1] = x[:, -1].real
        want = np.fft.irfft(x.astype(np.complex128), n=size, axis=-1) * size   # unnormalised
        y = np.full((batch, size), np.nan, precision)
    y = cudajit.to_device(y)
    grid = (batch + f.ffts_per_block - 1) // f.ffts_per_block
    kernel[grid, f.block_dim, 0, f.shared_memory_size](cudajit.to_device(x), y)
    err = relative_error(y.copy_to_host(), want)
    assert err < TOLERANCE[precision] * np.log2(size), f"seed {SEED}: {err}"


def test_fft_convolution_example(fk):
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "fft_convolution.py"),
                          "--size", "512", "--batch", "1001"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("name", ["shared_fft", "shared_block_fft"])
@pytest.mark.parametrize("batch", [2, 7])
def test_shared_memory_api(fk, name, batch):
    """cuFFTDx's shared-memory API, fft.execute(shared_mem): an FFT built with
    execute_api='shared_memory' (complex128, inverse) and a register-API
    Block FFT called so (its sibling; complex64, forward), over several
    blocks with a ragged last one (nvmath's simple_fft_block_shared.py)."""
    f = fk.SHARED if name == "shared_fft" else fk.BLOCK
    dtype = np.complex128 if name == "shared_fft" else np.complex64
    direction = "inverse" if name == "shared_fft" else "forward"
    rng = np.random.default_rng(SEED + 20 + batch)
    x = random_complex(rng, (batch, f.size), dtype)
    y = cudajit.to_device(np.full((batch, f.size), np.nan, dtype))   # poisoned
    blocks = (batch + f.ffts_per_block - 1) // f.ffts_per_block
    smem = max(f.shared_memory_size, f.ffts_per_block * f.size * np.dtype(dtype).itemsize)
    getattr(fk, name)[blocks, f.block_dim, 0, smem](cudajit.to_device(x), y)
    tol = 1e-12 if dtype == np.complex128 else 1e-5
    assert relative_error(y.copy_to_host(), reference(x, direction)) < tol, f"seed {SEED}"
