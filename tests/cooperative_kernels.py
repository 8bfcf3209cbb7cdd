"""Kernels that synchronise their grid (cuda.cg.this_grid().sync(), numba's
cooperative groups): tests/test_cooperative.py compiles them and launches
them on the mock driver, tests/gpu/test_cooperative_gpu.py runs them."""
import cudajit as cuda


@cuda.jit
def reverse_rounds(a, b, rounds):
    """Each round every thread reads an element another block wrote in the
    round before: without a grid barrier the result is a race."""
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = a.shape[0]
    for _ in range(rounds):
        if i < n:
            b[i] = a[n - 1 - i] + 1.0
        g.sync()
        if i < n:
            a[i] = b[i] * 0.5
        cuda.cg.this_grid().sync()


@cuda.jit(device=True)
def grid_barrier():
    cuda.cg.this_grid().sync()


@cuda.jit
def two_phase_sum(x, partial, out):
    """Block partial sums, a grid barrier (in a device function), then block
    0 adds the partials up: a reduction in one launch."""
    sh = cuda.shared.array(256, cuda.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    sh[t] = x[i] if i < x.shape[0] else 0.0
    cuda.syncthreads()
    step = 128
    while step > 0:
        if t < step:
            sh[t] += sh[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = sh[0]
    grid_barrier()
    if i == 0:
        s = 0.0
        for k in range(cuda.gridDim.x):
            s += partial[k]
        out[0] = s


@cuda.jit
def no_grid_barrier(a):
    a[cuda.grid(1)] = 1.0
