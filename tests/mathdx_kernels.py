"""Kernels calling a cuBLASDx GEMM as nvmath-python's examples/device write
them (cublasdx_simple_gemm_fp32.py), with `import cudajit as cuda` and
cudajit.mathdx.Matmul: shared by tests/test_mathdx.py (compiled to a cubin,
no GPU) and tests/gpu/test_mathdx_gpu.py (launched, checked against numpy).
Importing this module builds the descriptors (libmathdx must load)."""
import numpy as np

import cudajit as cuda
from cudajit.mathdx import Matmul

M, N, K = 32, 16, 64
THREADS = 256

MM = Matmul(size=(M, N, K), precision=np.float32, data_type="real",
            arrangement=("row_major", "col_major", "col_major"), execution="Block",
            block_size=THREADS, sm=90)

SIG = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float64, float64, float32[:, ::1])"


# Loads A (row-major) and B, C (column-major: a row-major array of the
# flipped shape) into shared memory; stores C back (a device function taking
# shared arrays, as nvmath's common_numba helpers do).
@cuda.jit(device=True)
def load_operands(a, b, c, smem_a, smem_b, smem_c):
    tid = cuda.threadIdx.x
    for idx in range(tid, M * K, THREADS):
        smem_a[idx // K, idx % K] = a[idx // K, idx % K]
    for idx in range(tid, K * N, THREADS):
        smem_b[idx // K, idx % K] = b[idx % K, idx // K]
    for idx in range(tid, M * N, THREADS):
        smem_c[idx // M, idx % M] = c[idx % M, idx // M]


@cuda.jit(device=True)
def store_result(smem_c, output):
    for idx in range(cuda.threadIdx.x, M * N, THREADS):
        output[idx % M, idx // M] = smem_c[idx // M, idx % M]


@cuda.jit
def simple_gemm(a, b, c, alpha, beta, output):
    smem_a = cuda.shared.array(shape=MM.a_dim, dtype=MM.a_value_type)
    smem_b = cuda.shared.array(shape=MM.b_dim[::-1], dtype=MM.b_value_type)
    smem_c = cuda.shared.array(shape=MM.c_dim[::-1], dtype=MM.c_value_type)
    load_operands(a, b, c, smem_a, smem_b, smem_c)
    cuda.syncthreads()
    MM.execute(alpha, smem_a, smem_b, beta, smem_c)
    cuda.syncthreads()
    store_result(smem_c, output)


@cuda.jit
def simple_gemm_call_spelling(a, b, c, alpha, beta, output):
    # nvmath.device's older spelling: the object called, MM(alpha, a, b, beta, c)
    smem_a = cuda.shared.array(shape=MM.a_dim, dtype=MM.a_value_type)
    smem_b = cuda.shared.array(shape=MM.b_dim[::-1], dtype=MM.b_value_type)
    smem_c = cuda.shared.array(shape=MM.c_dim[::-1], dtype=MM.c_value_type)
    load_operands(a, b, c, smem_a, smem_b, smem_c)
    cuda.syncthreads()
    MM(alpha, smem_a, smem_b, beta, smem_c)
    cuda.syncthreads()
    store_result(smem_c, output)


# cuBLASDx's StaticBlockDim (nvmath's static_block_dim=True): the same GEMM,
# for a launch of exactly THREADS threads.
MM_STATIC = Matmul(size=(M, N, K), precision=np.float32, data_type="real",
                   arrangement=("row_major", "col_major", "col_major"), execution="Block",
                   block_size=THREADS, static_block_dim=True, sm=90)


@cuda.jit
def static_gemm(a, b, c, alpha, beta, output):
    smem_a = cuda.shared.array(shape=MM_STATIC.a_dim, dtype=MM_STATIC.a_value_type)
    smem_b = cuda.shared.array(shape=MM_STATIC.b_dim[::-1], dtype=MM_STATIC.b_value_type)
    smem_c = cuda.shared.array(shape=MM_STATIC.c_dim[::-1], dtype=MM_STATIC.c_value_type)
    load_operands(a, b, c, smem_a, smem_b, smem_c)
    cuda.syncthreads()
    MM_STATIC.execute(alpha, smem_a, smem_b, beta, smem_c)   # L:static
    cuda.syncthreads()
    store_result(smem_c, output)


@cuda.jit
def wrong_dtype(a, alpha):
    smem = cuda.shared.array(shape=(M, K), dtype=np.float64)
    MM.execute(alpha, smem, smem, alpha, smem)   # L:wrong


@cuda.jit
def other_method(a):
    MM.get_shared_storage_size()   # L:method


# Mixed precision (nvmath's cublasdx_simple_gemm_mixed_precision.py): fp16 A
# and B, fp32 C; alpha and beta given as Python floats.
MM_MIXED = Matmul(size=(16, 16, 32), precision=(np.float16, np.float16, np.float32),
                  data_type="real", arrangement=("col_major", "col_major", "col_major"),
                  execution="Block", block_size=128, sm=90)
MIXED_SIG = "void(float16[:, ::1], float16[:, ::1], float32[:, ::1], float32[:, ::1])"


@cuda.jit
def mixed_gemm(a, b, c, output):
    m, n, k = MM_MIXED.size
    smem_a = cuda.shared.array(shape=MM_MIXED.a_dim[::-1], dtype=MM_MIXED.a_value_type)
    smem_b = cuda.shared.array(shape=MM_MIXED.b_dim[::-1], dtype=MM_MIXED.b_value_type)
    smem_c = cuda.shared.array(shape=MM_MIXED.c_dim[::-1], dtype=MM_MIXED.c_value_type)
    tid = cuda.threadIdx.x
    for idx in range(tid, m * k, 128):
        smem_a[idx // m, idx % m] = a[idx % m, idx // m]
    for idx in range(tid, k * n, 128):
        smem_b[idx // k, idx % k] = b[idx % k, idx // k]
    for idx in range(tid, m * n, 128):
        smem_c[idx // m, idx % m] = c[idx % m, idx // m]
    cuda.syncthreads()
    MM_MIXED.execute(1.5, smem_a, smem_b, 0.5, smem_c)
    cuda.syncthreads()
    for idx in range(tid, m * n, 128):
        output[idx % m, idx // m] = smem_c[idx // m, idx % m]


# Dynamic shared memory cut into A, B and C (nvmath's
# cublasdx_simple_gemm_leading_dimensions.py, static leading dimensions):
# launched with MM.get_shared_storage_size() bytes; the flat views hold each
# matrix in its arrangement (A row-major: a[i, j] at i * K + j; B and C
# column-major: b[i, j] at i + j * K, c[i, j] at i + j * M).
A_SIZE, B_SIZE = MM.a_size, MM.b_size


@cuda.jit
def dynamic_smem_gemm(a, b, c, alpha, beta, output):
    smem = cuda.shared.array(shape=(0,), dtype=MM.a_value_type)
    smem_a = smem[0:]
    smem_b = smem[A_SIZE:]
    smem_c = smem[A_SIZE + B_SIZE:]
    tid = cuda.threadIdx.x
    for idx in range(tid, M * K, THREADS):
        smem_a[idx] = a[idx // K, idx % K]
    for idx in range(tid, K * N, THREADS):
        smem_b[idx] = b[idx % K, idx // K]
    for idx in range(tid, M * N, THREADS):
        smem_c[idx] = c[idx % M, idx // M]
    cuda.syncthreads()
    MM.execute(alpha, smem_a, smem_b, beta, smem_c)
    cuda.syncthreads()
    for idx in range(tid, M * N, THREADS):
        output[idx % M, idx // M] = smem_c[idx]


# Launch blocks larger than the descriptor's, as cuBLASDx's BlockDim allows
# (nvmath's cublasdx_batched_gemm_fp64.py and cublasdx_blockdim_gemm_fp16.py):
# batched_gemm runs two GEMMs a block, one per threadIdx.y, launched with
# (THREADS, BATCHES, 1); wide_gemm is launched with WIDE > THREADS threads, all
# of which call execute (those past THREADS take no part in the GEMM).
BATCHES = 2
BATCHED_SIG = ("void(float32[:, :, ::1], float32[:, :, ::1], float32[:, :, ::1], float64, float64, "
               "float32[:, :, ::1])")
WIDE = THREADS + 64


@cuda.jit
def batched_gemm(a, b, c, alpha, beta, output):
    bid = cuda.threadIdx.y
    smem_a = cuda.shared.array(shape=(BATCHES, M, K), dtype=MM.a_value_type)
    smem_b = cuda.shared.array(shape=(BATCHES, N, K), dtype=MM.b_value_type)
    smem_c = cuda.shared.array(shape=(BATCHES, N, M), dtype=MM.c_value_type)
    load_operands(a[bid], b[bid], c[bid], smem_a[bid], smem_b[bid], smem_c[bid])
    cuda.syncthreads()
    MM.execute(alpha, smem_a[bid], smem_b[bid], beta, smem_c[bid])
    cuda.syncthreads()
    store_result(smem_c[bid], output[bid])


@cuda.jit
def wide_gemm(a, b, c, alpha, beta, output):
    smem_a = cuda.shared.array(shape=MM.a_dim, dtype=MM.a_value_type)
    smem_b = cuda.shared.array(shape=MM.b_dim[::-1], dtype=MM.b_value_type)
    smem_c = cuda.shared.array(shape=MM.c_dim[::-1], dtype=MM.c_value_type)
    tid, step = cuda.threadIdx.x, cuda.blockDim.x
    for idx in range(tid, M * K, step):
        smem_a[idx // K, idx % K] = a[idx // K, idx % K]
    for idx in range(tid, K * N, step):
        smem_b[idx // K, idx % K] = b[idx % K, idx // K]
    for idx in range(tid, M * N, step):
        smem_c[idx // M, idx % M] = c[idx % M, idx // M]
    cuda.syncthreads()
    MM.execute(alpha, smem_a, smem_b, beta, smem_c)
    cuda.syncthreads()
    for idx in range(tid, M * N, step):
        output[idx % M, idx // M] = smem_c[idx // M, idx % M]


# Leading dimensions given at run time (nvmath's
# cublasdx_simple_gemm_leading_dimensions.py): MM_LD is built without them;
# MM_LD.execute(alpha, a, lda, b, ldb, beta, c, ldc) is cuBLASDx's dynamic-LD
# API (the descriptor's sibling, instantiated during the compile). A is
# row-major at lda, B and C column-major at ldb, ldc, in one dynamic buffer
# of MM_LD.get_shared_storage_size(lda, ldb, ldc) bytes.
LD_SIZE = (30, 31, 33)
LDS = (34, 33, 31)
MM_LD = Matmul(size=LD_SIZE, precision=np.float64, data_type="real",
               arrangement=("row_major", "col_major", "col_major"), execution="Block",
               block_dim=(16, 16, 1), sm=90)
LD_SIG = ("void(float64, float64[:, ::1], int64, float64[:, ::1], int64, float64, float64[:, ::1], int64, "
          "float64[:, ::1])")


@cuda.jit
def runtime_ld_gemm(alpha, a, lda, b, ldb, beta, c, ldc, output):
    m, n, k = LD_SIZE
    smem = cuda.shared.array(shape=(0,), dtype=np.float64)
    smem_a = smem[0:]
    smem_b = smem[m * lda:]              # A: m rows of lda (8-byte alignment: no padding)
    smem_c = smem[m * lda + n * ldb:]    # B: n columns of ldb
    start = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    step = cuda.blockDim.x * cuda.blockDim.y
    for idx in range(start, m * k, step):
        smem_a[(idx // k) * lda + idx % k] = a[idx // k, idx % k]
    for idx in range(start, k * n, step):
        smem_b[(idx % n) * ldb + idx // n] = b[idx // n, idx % n]
    for idx in range(start, m * n, step):
        smem_c[(idx % n) * ldc + idx // n] = c[idx // n, idx % n]
    cuda.syncthreads()
    MM_LD.execute(alpha, smem_a, lda, smem_b, ldb, beta, smem_c, ldc)
    cuda.syncthreads()
    for idx in range(start, m * n, step):
        output[idx // n, idx % n] = smem_c[(idx % n) * ldc + idx // n]


@cuda.jit
def runtime_ld_float_ld(alpha, a, x):
    smem = cuda.shared.array(shape=(0,), dtype=np.float64)
    MM_LD.execute(alpha, smem, x, smem, 33, alpha, smem, 31)   # L:ldtype


@cuda.jit
def wrong_arity(a):
    smem = cuda.shared.array(shape=(M, K), dtype=np.float32)
    MM.execute(1.0, smem, smem, 0.0)   # L:arity
