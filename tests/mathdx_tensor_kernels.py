"""Kernels on cuBLASDx's tensor API (nvmath.device.common's make_tensor, copy,
copy_fragment, clear, copy_wait, axpby and MM.execute(a, b, c) with C in
registers), shared by the CPU tests (compiled for sm_90) and the GPU tests
(built for the device): build(sm) makes the Matmuls and the kernels."""
import numpy as np

import cudajit as cuda
from cudajit.mathdx import Matmul, axpby, clear, copy, copy_fragment, copy_wait, make_fragment_like, make_tensor

# nvmath's cublasdx_simple_gemm_tensor_fp32 example: half inputs, float C.
M, N, K, THREADS = 128, 128, 32, 256
TENSOR_SIG = "void(float32, float16[::1,:], float16[:,::1], float32, float32[:,::1], float32[:,::1])"
# make_tensor_like's form: C and the output in float64, the float32 results widened
LIKE_SIG = "void(float32, float16[::1,:], float16[:,::1], float32, float64[:,::1], float64[:,::1])"
# A K loop over tiles of larger matrices, global tensors with run-time leading dimensions.
TM, TN, TK, TILE_THREADS = 32, 32, 16, 128
TILED_SIG = "void(float64[:,::1], float64[:,::1], float64[:,::1])"


def build(sm=None):
    mm = Matmul(size=(M, N, K), precision=(np.float16, np.float16, np.float32), data_type="real",
                arrangement=("col_major", "row_major", "row_major"), execution="Block", block_size=THREADS, sm=sm)
    a_layout, b_layout, c_layout = mm.suggest_layout_smem_a(), mm.suggest_layout_smem_b(), mm.suggest_layout_rmem_c()

    @cuda.jit
    def tensor_gemm(alpha, a, b, beta, c, output):
        smem = cuda.shared.array(shape=(0,), dtype=np.float16, alignment=16)
        smem_a_buffer, smem = smem[: a_layout.cosize], smem[a_layout.cosize:]
        smem_b_buffer = smem[: b_layout.cosize]
        acc_buffer = cuda.local.array(shape=(c_layout.cosize,), dtype=mm.c_value_type)
        gmem_a = make_tensor(a, mm.get_layout_gmem_a())
        gmem_b = make_tensor(b, mm.get_layout_gmem_b())
        gmem_c = make_tensor(c, mm.get_layout_gmem_c())
        gmem_output = make_tensor(output, mm.get_layout_gmem_c())
        smem_a = make_tensor(smem_a_buffer, a_layout)
        smem_b = make_tensor(smem_b_buffer, b_layout)
        acc = make_tensor(acc_buffer, c_layout)
        copy(gmem_a, smem_a)
        copy(gmem_b, smem_b)
        clear(acc)
        copy_wait()
        mm.execute(smem_a, smem_b, acc)
        c_buffer = cuda.local.array(shape=(c_layout.cosize,), dtype=mm.c_value_type)
        c_frag = make_tensor(c_buffer, c_layout)
        copy_fragment(gmem_c, c_frag)
        axpby(alpha, acc, beta, c_frag)
        copy_fragment(c_frag, gmem_output, alignment=16)

    tiled = Matmul(size=(TM, TN, TK), precision=np.float64, data_type="real",
                   arrangement=("row_major", "row_major", "row_major"), execution="Block",
                   block_size=TILE_THREADS, sm=sm)
    ta, tb, tc = tiled.suggest_layout_smem_a(), tiled.suggest_layout_smem_b(), tiled.suggest_layout_rmem_c()

    @cuda.jit
    def tiled_gemm(a, b, out):
        # out (TM x TN) = a (TM x k) @ b (k x TN), k a multiple of TK, one K tile at a time
        smem = cuda.shared.array(shape=(0,), dtype=np.float64, alignment=16)
        sa, sb = smem[: ta.cosize], smem[ta.cosize: ta.cosize + tb.cosize]
        smem_a, smem_b = make_tensor(sa, ta), make_tensor(sb, tb)
        acc = make_tensor(cuda.local.array(shape=(tc.cosize,), dtype=np.float64), tc)
        clear(acc)
        k = a.shape[1]
        for t in range(k // TK):
            gmem_a = make_tensor(a[:, t * TK:(t + 1) * TK], tiled.get_layout_gmem_a(k))
            gmem_b = make_tensor(b[t * TK:(t + 1) * TK, :], tiled.get_layout_gmem_b(TN))
            copy(gmem_a, smem_a)
            copy(gmem_b, smem_b)
            copy_wait()
            tiled.execute(smem_a, smem_b, acc)
            cuda.syncthreads()
        copy_fragment(acc, make_tensor(out, tiled.get_layout_gmem_c()))

    pa, pb = mm.get_layout_smem_a(), mm.get_layout_smem_b()

    @cuda.jit
    def accumulator_gemm(alpha, a, b, beta, c, output):
        # nvmath's cublasdx_simple_gemm_accumulator_fp32: a stateful accumulator
        smem = cuda.shared.array(shape=(0,), dtype=np.float16, alignment=16)
        smem_a = make_tensor(smem[: pa.cosize], pa)
        smem_b = make_tensor(smem[pa.cosize: pa.cosize + pb.cosize], pb)
        copy(make_tensor(a, mm.get_layout_gmem_a()), smem_a)
        copy(make_tensor(b, mm.get_layout_gmem_b()), smem_b)
        copy_wait()
        accumulator = mm.get_accumulator()
        c_frag = accumulator.make_partition_and_copy(make_tensor(c, mm.get_layout_gmem_c()))
        mm.execute(smem_a, smem_b, accumulator)
        results = accumulator.get_results()
        axpby(alpha, results, beta, c_frag)
        accumulator.partition_and_copy(c_frag, make_tensor(output, mm.get_layout_gmem_c()))

    c_size = c_layout.size

    @cuda.jit
    def partition_gemm(alpha, a, b, beta, c, output):
        # nvmath's cublasdx_simple_partition: the fragment's elements by their (row, column)
        smem = cuda.shared.array(shape=(0,), dtype=np.float16, alignment=16)
        smem_a = make_tensor(smem[: a_layout.cosize], a_layout)
        smem_b = make_tensor(smem[a_layout.cosize: a_layout.cosize + b_layout.cosize], b_layout)
        acc_buffer = cuda.local.array(shape=(c_layout.cosize,), dtype=np.float32)
        out_buffer = cuda.local.array(shape=(c_layout.cosize,), dtype=np.float32)
        acc = make_tensor(acc_buffer, c_layout)
        copy(make_tensor(a, mm.get_layout_gmem_a()), smem_a)
        copy(make_tensor(b, mm.get_layout_gmem_b()), smem_b)
        clear(acc)
        copy_wait()
        mm.execute(smem_a, smem_b, acc)
        accumulator = mm.suggest_accumulator()
        if accumulator.is_thread_active():
            for i in range(c_size):
                if (not accumulator.is_predicated()) or accumulator.is_index_in_bounds(i):
                    x, y = accumulator.map_fragment_index(i)
                    out_buffer[i] = c[x, y]
        out = make_tensor(out_buffer, c_layout)
        axpby(alpha, acc, beta, out)
        if accumulator.is_thread_active():
            for i in range(c_size):
                if (not accumulator.is_predicated()) or accumulator.is_index_in_bounds(i):
                    x, y = accumulator.map_fragment_index(i)
                    output[x, y] = out_buffer[i]

    @cuda.jit
    def fragment_like_gemm(alpha, a, b, beta, c, output):
        # nvmath's cublasdx_simple_gemm_make_tensor_like: the result widened to float64, C float64
        smem = cuda.shared.array(shape=(0,), dtype=np.float16, alignment=16)
        smem_a = make_tensor(smem[: a_layout.cosize], a_layout)
        smem_b = make_tensor(smem[a_layout.cosize: a_layout.cosize + b_layout.cosize], b_layout)
        accumulator = mm.suggest_accumulator()
        copy(make_tensor(a, mm.get_layout_gmem_a()), smem_a)
        copy(make_tensor(b, mm.get_layout_gmem_b()), smem_b)
        copy_wait()
        mm.execute(smem_a, smem_b, accumulator)
        rmem_c = accumulator.get_results()
        wide = make_fragment_like(rmem_c, np.float64)
        for i in range(rmem_c.layout.cosize):
            wide[i] = np.float64(rmem_c[i])
        d = accumulator.make_partition_and_copy(make_tensor(c, mm.get_layout_gmem_c()))
        axpby(alpha, wide, beta, d)
        copy_fragment(d, make_tensor(output, mm.get_layout_gmem_c()))

    return {"mm": mm, "tensor_gemm": tensor_gemm, "tiled": tiled, "tiled_gemm": tiled_gemm,
            "accumulator_gemm": accumulator_gemm, "partition_gemm": partition_gemm,
            "fragment_like_gemm": fragment_like_gemm,
            "tensor_smem": mm.get_shared_storage_size_ab(a_layout, b_layout),
            "plain_smem": mm.get_shared_storage_size_ab(pa, pb),
            "tiled_smem": tiled.get_shared_storage_size_ab(ta, tb)}
