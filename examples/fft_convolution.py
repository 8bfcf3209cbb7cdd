"""An FFT convolution fused in one kernel with cudajit.mathdx (cuFFTDx):
every row of a signal batch filtered by one kernel H in the frequency
domain, y = ifft(fft(x) * H), without leaving registers between the steps.

    python examples/fft_convolution.py [--size 1024] [--batch 4096]

The forward FFT, the pointwise product and the inverse FFT are three calls
of cuFFT in PyTorch or CuPy (three kernels, the signal through global memory
three times); here one kernel, as nvmath-python's
examples/device/cufftdx_convolution.py writes it for numba-cuda (the same
source runs with `import cudajit as cuda`). Checked against numpy.fft;
without a GPU the kernel is compiled for sm_90 instead (libmathdx needed:
pip install nvidia-libmathdx-cu13).
"""
import argparse
import sys

import numpy as np

import cudajit as cuda
from cudajit.mathdx import FFT


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=4096)
    a = ap.parse_args()
    sm = None if cuda.is_available() else 90
    fwd = FFT(size=a.size, precision=np.float32, fft_type="c2c", direction="forward", execution="Block",
              ffts_per_block="suggested", sm=sm)
    inv = FFT(size=a.size, precision=np.float32, fft_type="c2c", direction="inverse", execution="Block",
              elements_per_thread=fwd.elements_per_thread, ffts_per_block=fwd.ffts_per_block, sm=sm)
    scale = 1.0 / a.size

    @cuda.jit
    def convolve(x, h, y):
        thread_data = cuda.local.array(shape=(fwd.storage_size,), dtype=fwd.value_type)
        shared_mem = cuda.shared.array(shape=(0,), dtype=fwd.value_type)
        row = cuda.blockIdx.x * fwd.ffts_per_block + cuda.threadIdx.y
        if row >= x.shape[0]:
            row = x.shape[0] - 1   # all threads of a block take part in its FFTs
        index = cuda.threadIdx.x
        for i in range(fwd.elements_per_thread):
            thread_data[i] = x[row, index]
            index += fwd.stride
        fwd.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(fwd.elements_per_thread):
            thread_data[i] = thread_data[i] * h[index]
            index += fwd.stride
        cuda.syncthreads()   # the inverse reuses the shared workspace
        inv.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(fwd.elements_per_thread):
            y[row, index] = thread_data[i] * scale
            index += fwd.stride

    if not cuda.is_available():
        print("No usable CUDA GPU here; compiling the fused kernel for sm_90 only.")
        cubin = cuda.compile_cubin(convolve, "void(complex64[:, ::1], complex64[::1], complex64[:, ::1])",
                                   arch="sm_90")[0]
        print(f"  {a.size}-point convolution: block {tuple(fwd.block_dim)}, "
              f"{fwd.shared_memory_size} B shared, cubin {len(cubin)} bytes")
        return 0

    rng = np.random.default_rng()
    x = (rng.standard_normal((a.batch, a.size)) + 1j * rng.standard_normal((a.batch, a.size))).astype(np.complex64)
    h = (rng.standard_normal(a.size) + 1j * rng.standard_normal(a.size)).astype(np.complex64)
    y = cuda.device_array_like(x)
    grid = (a.batch + fwd.ffts_per_block - 1) // fwd.ffts_per_block
    convolve[grid, fwd.block_dim, 0, fwd.shared_memory_size](cuda.to_device(x), cuda.to_device(h), y)
    got = y.copy_to_host()
    want = np.fft.ifft(np.fft.fft(x.astype(np.complex128), axis=-1) * h, axis=-1)
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    ok = err < 1e-5
    print(f"{a.batch} x {a.size}-point FFT convolution in one kernel: relative error {err:.2e} "
          f"{'OK' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
