"""Half-precision MathDx kernels as nvmath-python's examples/device write
them (cufftdx_simple_fft_block_half2.py, cufftdx_simple_fft_thread_fp16.py,
cufftdx_simple_fft_block_r2c_fp16.py / _c2r_fp16.py,
cublasdx_simple_gemm_cfp16.py), with `import cudajit as cuda` and
cudajit.mathdx, batched over many blocks: shared by tests/test_mathdx_half.py
(compiled to cubins, no GPU) and tests/gpu/test_mathdx_half_gpu.py (launched,
checked against numpy). Importing this module builds the descriptors.

The value types: a half FFT's is 'complex32x2' (cuFFTDx's complex<__half2>:
two FFTs' values as (re0, re1, im0, im1), float16x4 in kernels); a complex half
GEMM's is 'complex32' (complex<__half>: (re, im), float16x2 in kernels)."""
import numpy as np

import cudajit as cuda
from cudajit.mathdx import FFT, Matmul, float16x2, float16x2_type, float16x4

# Block c2c: 4 FFTs a block, two in each float16x4 (rows 2y and 2y + 1 of
# the block's rows); data is (batch, 2 * size) float16, (re, im) pairs.
HALF2 = FFT(fft_type="c2c", size=128, precision=np.float16, ffts_per_block=4, elements_per_thread=8,
            direction="forward", execution="Block", sm=90)
HALF2_SIG = "void(float16[:, ::1])"


@cuda.jit
def block_half2(data):
    thread_data = cuda.local.array(shape=(HALF2.storage_size,), dtype=HALF2.value_type)
    shared_mem = cuda.shared.array(shape=(0,), dtype=HALF2.value_type)
    row = cuda.blockIdx.x * HALF2.ffts_per_block + 2 * cuda.threadIdx.y
    index = cuda.threadIdx.x
    for i in range(HALF2.elements_per_thread):
        if index < HALF2.size:
            thread_data[i] = float16x4(data[row, 2 * index], data[row + 1, 2 * index],
                                       data[row, 2 * index + 1], data[row + 1, 2 * index + 1])
        index += HALF2.stride
    HALF2.execute(thread_data, shared_mem)
    index = cuda.threadIdx.x
    for i in range(HALF2.elements_per_thread):
        if index < HALF2.size:
            v = thread_data[i]
            data[row, 2 * index] = v.x
            data[row, 2 * index + 1] = v.z
            data[row + 1, 2 * index] = v.y
            data[row + 1, 2 * index + 1] = v.w
        index += HALF2.stride


# Thread c2c of 8 points, two FFTs a thread (rows 2t and 2t + 1), inverse.
THREAD = FFT(fft_type="c2c", size=8, precision=np.float16, direction="inverse", execution="Thread", sm=90)
THREAD_SIG = "void(float16[:, ::1])"


@cuda.jit
def thread_half(data):
    thread_data = cuda.local.array(shape=(THREAD.storage_size,), dtype=THREAD.value_type)
    t = cuda.grid(1)
    if 2 * t + 1 >= data.shape[0]:
        return
    for i in range(THREAD.elements_per_thread):
        thread_data[i] = float16x4(data[2 * t, 2 * i], data[2 * t + 1, 2 * i],
                                   data[2 * t, 2 * i + 1], data[2 * t + 1, 2 * i + 1])
    THREAD.execute(thread_data)
    for i in range(THREAD.elements_per_thread):
        v = thread_data[i]
        data[2 * t, 2 * i], data[2 * t, 2 * i + 1] = v.x, v.z
        data[2 * t + 1, 2 * i], data[2 * t + 1, 2 * i + 1] = v.y, v.w


# Real FFTs: the real values seen through thread_data.view(float16x2_type),
# two FFTs' reals in each float16x2.
R2C = FFT(fft_type="r2c", size=128, precision=np.float16, ffts_per_block=4, elements_per_thread=8,
          execution="Block", sm=90)
R2C_SIG = "void(float32[:, ::1], float16[:, ::1])"


@cuda.jit
def block_r2c_half(x, out):
    thread_data = cuda.local.array(shape=(R2C.storage_size,), dtype=R2C.value_type)
    reals = thread_data.view(float16x2_type)
    shared_mem = cuda.shared.array(shape=(0,), dtype=R2C.value_type)
    row = cuda.blockIdx.x * R2C.ffts_per_block + 2 * cuda.threadIdx.y
    index = cuda.threadIdx.x
    for i in range(R2C.elements_per_thread):
        if index < R2C.size:
            reals[i] = float16x2(x[row, index], x[row + 1, index])
        index += R2C.stride
    R2C.execute(thread_data, shared_mem)
    index = cuda.threadIdx.x
    for i in range(R2C.elements_per_thread):
        if index < R2C.size // 2 + 1:
            v = thread_data[i]
            out[row, 2 * index], out[row, 2 * index + 1] = v.x, v.z
            out[row + 1, 2 * index], out[row + 1, 2 * index + 1] = v.y, v.w
        index += R2C.stride


C2R = FFT(fft_type="c2r", size=128, precision=np.float16, ffts_per_block=4, elements_per_thread=8,
          execution="Block", sm=90)
C2R_SIG = "void(float16[:, ::1], float32[:, ::1])"


@cuda.jit
def block_c2r_half(x, out):
    thread_data = cuda.local.array(shape=(C2R.storage_size,), dtype=C2R.value_type)
    reals = thread_data.view(float16x2_type)
    shared_mem = cuda.shared.array(shape=(0,), dtype=C2R.value_type)
    row = cuda.blockIdx.x * C2R.ffts_per_block + 2 * cuda.threadIdx.y
    index = cuda.threadIdx.x
    for i in range(C2R.elements_per_thread):
        if index < C2R.size // 2 + 1:
            thread_data[i] = float16x4(x[row, 2 * index], x[row + 1, 2 * index],
                                       x[row, 2 * index + 1], x[row + 1, 2 * index + 1])
        index += C2R.stride
    C2R.execute(thread_data, shared_mem)
    index = cuda.threadIdx.x
    for i in range(C2R.elements_per_thread):
        if index < C2R.size:
            rr = reals[i]
            out[row, index] = rr.x
            out[row + 1, index] = rr.y
        index += C2R.stride


# Complex half GEMM, one per block (a batch): complex64 in global memory,
# complex32 (float16x2) in shared memory, converted by the stores both ways.
CGEMM = Matmul(size=(32, 32, 32), precision=np.float16, data_type="complex",
               arrangement=("row_major", "col_major", "col_major"), block_size=128, execution="Block", sm=90)
CGEMM_SIG = "void(complex64[:, :, ::1], complex64[:, :, ::1], complex64[:, :, ::1], complex128, complex128, " \
            "complex64[:, :, ::1])"


@cuda.jit
def batched_cgemm(a, b, c, alpha, beta, out):
    smem = cuda.shared.array(shape=(0,), dtype=CGEMM.a_value_type)
    smem_a = smem[0:]
    smem_b = smem[CGEMM.a_size:]
    smem_c = smem[CGEMM.a_size + CGEMM.b_size:]
    lda, ldb, ldc = CGEMM.leading_dimension
    g = cuda.blockIdx.x
    m, n, k = CGEMM.size
    for idx in range(cuda.threadIdx.x, m * k, cuda.blockDim.x):
        row, col = idx // k, idx % k
        smem_a[row * lda + col] = a[g, row, col]          # row-major A
    for idx in range(cuda.threadIdx.x, k * n, cuda.blockDim.x):
        row, col = idx // n, idx % n
        smem_b[col * ldb + row] = b[g, row, col]          # col-major B
    for idx in range(cuda.threadIdx.x, m * n, cuda.blockDim.x):
        row, col = idx // n, idx % n
        smem_c[col * ldc + row] = c[g, row, col]
    cuda.syncthreads()
    CGEMM.execute(alpha, smem_a, smem_b, beta, smem_c)
    cuda.syncthreads()
    for idx in range(cuda.threadIdx.x, m * n, cuda.blockDim.x):
        row, col = idx // n, idx % n
        out[g, row, col] = smem_c[col * ldc + row]

