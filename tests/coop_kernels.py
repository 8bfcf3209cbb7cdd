"""Kernels written for numba-cuda with CCCL's cuda.coop, the import changed
to cudajit's (`from cudajit import coop`): tests/test_coop.py compiles them,
tests/gpu/test_coop_gpu.py runs them against numpy."""
import numpy as np

import cudajit as cuda
from cudajit import coop

THREADS = 128


def op_max(a, b):             # a plain Python function, as cuda.coop takes it
    return a if a > b else b


block_max = coop.block.reduce(np.int16, THREADS, op_max)
block_sum = coop.block.sum(np.int32, THREADS)
warp_max = coop.warp.reduce(np.int16, op_max)
block_exclusive = coop.block.exclusive_sum(np.int32, THREADS)
block_inclusive = coop.block.inclusive_sum(np.int32, THREADS)
warp_exclusive = coop.warp.exclusive_sum(np.int32)


# An eager signature, as nvmath's fp64 emulation example declares it:
# compiled at the decorator for the block size the primitives fix (THREADS).
@cuda.jit("void(int16[::1], int16[::1], int32[::1])", link=block_max.files + block_sum.files)
def block_max_and_sum(x, out_max, out_sum):
    i = cuda.grid(1)
    m = block_max(x[i])
    s = block_sum(np.int32(x[i]))
    if cuda.threadIdx.x == 0:
        out_max[cuda.blockIdx.x] = m
        out_sum[cuda.blockIdx.x] = s


@cuda.jit(link=warp_max.files)
def warp_maxima(x, out):
    i = cuda.grid(1)
    m = warp_max(x[i])
    if cuda.threadIdx.x % 32 == 0:
        out[i // 32] = m


@cuda.jit(link=block_exclusive.files)
def prefix_sums(x, exclusive, inclusive, warp_exclusive_out):
    i = cuda.grid(1)
    exclusive[i] = block_exclusive(x[i])
    inclusive[i] = block_inclusive(x[i])
    warp_exclusive_out[i] = warp_exclusive(x[i])
