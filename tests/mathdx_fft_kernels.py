"""Kernels calling a cuFFTDx FFT as nvmath-python's examples/device write
them (cufftdx_simple_fft_block.py, cufftdx_simple_fft_thread.py,
cufftdx_block_fft.py), with `import cudajit as cuda` and
cudajit.mathdx.FFT / fft: shared by tests/test_mathdx_fft.py (compiled to a
cubin, no GPU) and tests/gpu/test_mathdx_fft_gpu.py (launched, checked
against numpy.fft). Importing this module builds the descriptors."""
import numpy as np

import cudajit as cuda
from cudajit.mathdx import FFT, fft

# Block FFTs, two per block, with the shared-memory workspace the launch
# passes as dynamic shared memory (simple_fft_block.py).
BLOCK = FFT(fft_type="c2c", size=128, precision=np.float32, direction="forward",
            elements_per_thread=8, ffts_per_block=2, execution="Block", sm=90)
BLOCK_SIG = "void(complex64[:, ::1])"


@cuda.jit
def block_fft(data):
    thread_data = cuda.local.array(shape=(BLOCK.storage_size,), dtype=BLOCK.value_type)
    shared_mem = cuda.shared.array(shape=(0,), dtype=BLOCK.value_type)
    local_fft_id = cuda.threadIdx.y
    index = cuda.threadIdx.x
    for i in range(BLOCK.elements_per_thread):
        thread_data[i] = data[local_fft_id, index]
        index += BLOCK.stride
    BLOCK.execute(thread_data, shared_mem)
    index = cuda.threadIdx.x
    for i in range(BLOCK.elements_per_thread):
        data[local_fft_id, index] = thread_data[i]
        index += BLOCK.stride


# Many blocks, double precision, inverse, the object-call spelling and the
# function form (block_fft.py): batch row fft_id of `data`, out of place.
INVERSE = fft(fft_type="c2c", size=256, precision=np.float64, direction="inverse",
              elements_per_thread=16, ffts_per_block=1, execution="Block", compiler="numba", sm=90)
INVERSE_SIG = "void(complex128[:, ::1], complex128[:, ::1])"


@cuda.jit(link=INVERSE.files)
def batched_inverse(data, out):
    thread_data = cuda.local.array(shape=(INVERSE.storage_size,), dtype=INVERSE.value_type)
    shared_mem = cuda.shared.array(shape=(0,), dtype=INVERSE.value_type)
    fft_id = cuda.blockIdx.x * INVERSE.ffts_per_block + cuda.threadIdx.y
    if fft_id >= data.shape[0]:
        return
    index = cuda.threadIdx.x
    for i in range(INVERSE.elements_per_thread):
        if index < INVERSE.size:
            thread_data[i] = data[fft_id, index]
        index += INVERSE.stride
    INVERSE(thread_data, shared_mem)
    index = cuda.threadIdx.x
    for i in range(INVERSE.elements_per_thread):
        if index < INVERSE.size:
            out[fft_id, index] = thread_data[i]
        index += INVERSE.stride


# One FFT per thread (simple_fft_thread.py), no shared memory, no block shape.
THREAD = fft(fft_type="c2c", size=8, precision=np.float64, direction="forward", execution="Thread",
             compiler="numba", sm=90)
THREAD_SIG = "void(complex128[:, ::1])"


@cuda.jit(link=THREAD.files)
def thread_fft(data):
    thread_data = cuda.local.array(shape=(THREAD.storage_size,), dtype=THREAD.value_type)
    local_fft_id = cuda.grid(1)
    if local_fft_id >= data.shape[0]:
        return
    for i in range(THREAD.elements_per_thread):
        thread_data[i] = data[local_fft_id, i]
    THREAD(thread_data)
    for i in range(THREAD.elements_per_thread):
        data[local_fft_id, i] = thread_data[i]


# cuFFTDx's shared-memory API (simple_fft_block_shared.py): the block's FFTs
# in shared memory, fft(shared_mem) alone. BLOCK called so takes its
# shared-memory sibling (instantiated during the compile); SHARED is built
# for that API up front.
SHARED = FFT(fft_type="c2c", size=64, precision=np.float64, direction="inverse",
             elements_per_thread=4, ffts_per_block=2, execution="Block", execute_api="shared_memory", sm=90)
SHARED_SIG = "void(complex128[:, ::1], complex128[:, ::1])"


def shared_kernel(f):
    """Rows of x, f.ffts_per_block a block, through shared memory into y by
    f.execute(shared_mem)."""
    @cuda.jit
    def k(x, y):
        smem = cuda.shared.array(shape=(0,), dtype=f.value_type)
        local = cuda.threadIdx.y
        fft_id = cuda.blockIdx.x * f.ffts_per_block + local
        row = fft_id if fft_id < x.shape[0] else x.shape[0] - 1   # every thread takes part
        index = cuda.threadIdx.x
        for _ in range(f.elements_per_thread):
            if index < f.size:
                smem[local * f.size + index] = x[row, index]
            index += f.stride
        cuda.syncthreads()
        f.execute(smem)
        cuda.syncthreads()
        index = cuda.threadIdx.x
        for _ in range(f.elements_per_thread):
            if index < f.size and fft_id < x.shape[0]:
                y[row, index] = smem[local * f.size + index]
            index += f.stride
    return k


shared_block_fft = shared_kernel(BLOCK)     # BLOCK's sibling
shared_fft = shared_kernel(SHARED)


# Errors (the markers name the lines the messages must point at).
@cuda.jit
def wrong_value_type(data):
    thread_data = cuda.local.array(shape=(8,), dtype=np.complex128)
    shared_mem = cuda.shared.array(shape=(0,), dtype=np.complex64)
    BLOCK.execute(thread_data, shared_mem)   # L:dtype


@cuda.jit
def missing_shared_memory(data):
    thread_data = cuda.local.array(shape=(8,), dtype=np.complex64)
    BLOCK.execute(thread_data)   # L:arity


@cuda.jit
def shared_api_with_two_arguments(data):
    thread_data = cuda.local.array(shape=(8,), dtype=np.complex128)
    shared_mem = cuda.shared.array(shape=(0,), dtype=np.complex128)
    SHARED.execute(thread_data, shared_mem)   # L:shared2


@cuda.jit
def other_method(data):
    BLOCK.valid("elements_per_thread")   # L:method


def block_kernel(f):
    """A batched out-of-place kernel for any Block FFT f: row fft_id of x
    (ffts_per_block rows a block) into the same row of y."""
    @cuda.jit
    def k(x, y):
        thread_data = cuda.local.array(shape=(f.storage_size,), dtype=f.value_type)
        shared_mem = cuda.shared.array(shape=(0,), dtype=f.value_type)
        fft_id = cuda.blockIdx.x * f.ffts_per_block + cuda.threadIdx.y
        if fft_id >= x.shape[0]:
            fft_id = x.shape[0] - 1   # every thread of the block takes part in the FFT
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            if index < f.size:
                thread_data[i] = x[fft_id, index]
            index += f.stride
        f.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            if index < f.size:
                y[fft_id, index] = thread_data[i]
            index += f.stride
    return k


def thread_kernel(f):
    """One FFT a thread for any Thread FFT f: row i of x into row i of y."""
    @cuda.jit
    def k(x, y):
        thread_data = cuda.local.array(shape=(f.storage_size,), dtype=f.value_type)
        row = cuda.grid(1)
        if row < x.shape[0]:
            for i in range(f.elements_per_thread):
                thread_data[i] = x[row, i]
            f.execute(thread_data)
            for i in range(f.elements_per_thread):
                y[row, i] = thread_data[i]
    return k


# Real FFTs (simple_fft_block_r2c.py / _c2r.py): the thread's complex values
# seen as reals through thread_data.view(np.float32).
R2C = FFT(fft_type="r2c", size=128, precision=np.float32, elements_per_thread=8, ffts_per_block=2,
          execution="Block", sm=90)
R2C_SIG = "void(float32[:, ::1], complex64[:, ::1])"


@cuda.jit
def block_r2c(input, output):
    thread_data = cuda.local.array(shape=(R2C.storage_size,), dtype=R2C.value_type)
    thread_data_real = thread_data.view(np.float32)
    shared_mem = cuda.shared.array(shape=(0,), dtype=R2C.value_type)
    local_fft_id = cuda.threadIdx.y
    index = cuda.threadIdx.x
    for i in range(R2C.elements_per_thread):
        if index < R2C.size:
            thread_data_real[i] = input[local_fft_id, index]
        index += R2C.stride
    R2C(thread_data, shared_mem)
    index = cuda.threadIdx.x
    for i in range(R2C.elements_per_thread):
        if index < R2C.size // 2 + 1:
            output[local_fft_id, index] = thread_data[i]
        index += R2C.stride


def real_block_kernel(f, real):
    """Batched r2c (x real, y complex) or c2r (x complex, y real) for any
    Block FFT f, as the examples index the thread's values."""
    n_complex = f.size // 2 + 1

    @cuda.jit
    def r2c(x, y):
        thread_data = cuda.local.array(shape=(f.storage_size,), dtype=f.value_type)
        thread_real = thread_data.view(real)
        shared_mem = cuda.shared.array(shape=(0,), dtype=f.value_type)
        fft_id = min(cuda.blockIdx.x * f.ffts_per_block + cuda.threadIdx.y, x.shape[0] - 1)
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            if index < f.size:
                thread_real[i] = x[fft_id, index]
            index += f.stride
        f.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            if index < n_complex:
                y[fft_id, index] = thread_data[i]
            index += f.stride

    @cuda.jit
    def c2r(x, y):
        thread_data = cuda.local.array(shape=(f.storage_size,), dtype=f.value_type)
        thread_real = thread_data.view(real)
        shared_mem = cuda.shared.array(shape=(0,), dtype=f.value_type)
        fft_id = min(cuda.blockIdx.x * f.ffts_per_block + cuda.threadIdx.y, x.shape[0] - 1)
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            if index < n_complex:
                thread_data[i] = x[fft_id, index]
            index += f.stride
        f.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            if index < f.size:
                y[fft_id, index] = thread_real[i]
            index += f.stride

    return r2c if f.fft_type == "r2c" else c2r
