"""Kernels on cuBLASDx's pipelines (nvmath.device's DevicePipeline), shared by
tests/test_mathdx_pipelines.py (compiled, launched on the mock driver) and
tests/gpu/test_mathdx_pipelines_gpu.py (run against numpy): the GEMM of
nvmath's cublasdx_simple_gemm_pipeline_api example, D = alpha A B + beta C
tile by tile, and its 3-D form, where a block sums the products of several
(A, B) slices by moving its tile with reset_tile."""
import numpy as np

import cudajit as cuda
from cudajit.mathdx import MAX_ALIGNMENT, Matmul, axpby, make_tensor, pipeline_extensions

TILE_M, TILE_N, TILE_K = 128, 128, 32
THREADS = 128
DEPTH = 2


def matmul(sm=None, arrangement=("row_major", "col_major", "row_major")):
    return Matmul(size=(TILE_M, TILE_N, TILE_K), precision=(np.float16, np.float16, np.float32), data_type="real",
                  arrangement=arrangement, alignment=MAX_ALIGNMENT, execution="Block", block_size=THREADS,
                  with_pipeline=True, enable_input_streaming=True, sm=sm)


def gemm_kernel(MM, n):
    """One (TILE_M, TILE_N) tile of D a block, over all of K."""

    @cuda.jit(extensions=pipeline_extensions, launch_bounds=[MM.block_size, 1])
    def k(alpha, beta, c, device_pipeline):
        smem = cuda.shared.array(shape=(0,), dtype=np.byte, alignment=device_pipeline.buffer_alignment)
        bx, by = cuda.blockIdx.x, cuda.blockIdx.y
        c_tile = c[bx * TILE_M:(bx + 1) * TILE_M, by * TILE_N:(by + 1) * TILE_N]
        gmem_c = make_tensor(c_tile, MM.get_layout_gmem_c(n))
        tile_pipeline = device_pipeline.get_tile(smem, bx, by)
        accumulator = MM.suggest_accumulator()
        tile_pipeline.execute(accumulator)
        if accumulator.is_thread_active():
            d_frag = accumulator.make_partition_and_copy(gmem_c)
            axpby(alpha, accumulator.get_results(), beta, d_frag)
            accumulator.partition_and_copy(d_frag, gmem_c)
        tile_pipeline._del()

    return k


def gemm3d_kernel(MM, n, steps=2):
    """A (m, k, steps) and B (k, n, steps): a block sums A[..., i] @ B[..., j]
    over every (i, j), moving its tile with reset_tile."""

    @cuda.jit(extensions=pipeline_extensions, launch_bounds=[MM.block_size, 1])
    def k(alpha, beta, c, device_pipeline):
        smem = cuda.shared.array(shape=(0,), dtype=np.byte, alignment=device_pipeline.buffer_alignment)
        bx, by = cuda.blockIdx.x, cuda.blockIdx.y
        c_tile = c[bx * TILE_M:(bx + 1) * TILE_M, by * TILE_N:(by + 1) * TILE_N]
        gmem_c = make_tensor(c_tile, MM.get_layout_gmem_c(n))
        tile_pipeline = device_pipeline.get_tile(smem, (bx, np.int32(0)), (by, np.int32(0)))
        accumulator = MM.suggest_accumulator()
        tile_pipeline.execute(accumulator)
        for step in range(1, steps * steps):
            i = np.int32(step % steps)
            j = np.int32(step // steps)
            device_pipeline.reset_tile(tile_pipeline, (bx, i), (by, j))
            tile_pipeline.execute(accumulator)
        d_frag = accumulator.make_partition_and_copy(gmem_c)
        axpby(alpha, accumulator.get_results(), beta, d_frag)
        accumulator.partition_and_copy(d_frag, gmem_c)
        tile_pipeline._del()

    return k


def to_device(x):
    """A device copy of x with x's strides (a 3-D B is a permuted view of a
    contiguous array: copied as that array, permuted on the device)."""
    if x.flags.c_contiguous or x.flags.f_contiguous:
        return cuda.to_device(x)
    base = np.moveaxis(x, -1, 0)   # operands() made B as moveaxis(b0, 0, -1)
    assert base.flags.c_contiguous
    return cuda.to_device(base).transpose((1, 2, 0))


def operands(rng, m, n, k, MM, steps=None):
    """A, B, C on the host in the Matmul's arrangements (3-D: a trailing steps axis)."""
    def arr(shape, dtype, order):
        return np.asarray(rng.standard_normal(shape), dtype=dtype, order=order)
    order = {"row_major": "C", "col_major": "F"}
    if steps is None:
        return (arr((m, k), MM.a_value_type, order[MM.arrangement.a]),
                arr((k, n), MM.b_value_type, order[MM.arrangement.b]),
                arr((m, n), MM.c_value_type, order[MM.arrangement.c]))
    a = arr((m, k, steps), MM.a_value_type, "F")
    b = np.moveaxis(arr((steps, k, n), MM.b_value_type, "C"), 0, -1)   # each b[:, :, j] row-major
    return a, b, arr((m, n), MM.c_value_type, order[MM.arrangement.c])
