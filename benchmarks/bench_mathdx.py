"""MathDx routines inside cudajit kernels (issue 13) side by side with PyTorch
(cuFFT, cuBLAS), one run, as ratios.

    python benchmarks/bench_mathdx.py [--quick] [--reps 7] [--json out.json]

Rows:
  fft N            batched 1-D c2c float32 FFT of N points (N = 256, 4096), 2^24
                   values: a @cudajit.jit kernel calling cudajit.mathdx.FFT (Block,
                   libmathdx's suggested elements per thread and FFTs per block) vs
                   torch.fft.fft (cuFFT). GB/s = bytes read + written once.
  conv N           FFT convolution of every row with one filter, y = ifft(fft(x) * H):
                   one cudajit kernel (forward FFT, pointwise product, inverse FFT,
                   1/N scale, all in registers) vs torch's three calls
                   (fft, mul, ifft: cuFFT twice and an elementwise kernel).
  bmm S dtype      batched S x S x S GEMMs (S = 32, 64; float32, float64, float16):
                   cuBLASDx GEMMs with operands staged in shared memory, each block
                   looping over batches and loading the next one's operands during
                   the current GEMM (--bmm-copy: pipelined, tensors, single, hybrid,
                   stream, wide, element; see --help), vs torch.bmm (cuBLAS batched).
  segsum S         the seed talk's segmented sum (65536 segments of 1024 float32) as
                   in-kernel mat-vecs with ones vectors, S segments a block
                   (examples/segmented_reduction.py's kernel): the rows staged in
                   shared memory, then two cuBLASDx GEMMs (32 partial sums of each
                   row, then their sum) vs the same sum with cuda.block.sum (CUB's
                   BlockReduce), one block a segment. Also "segsum 1x1xN": one
                   ones(1, N) @ row GEMM a block, and "segsum stream GxNxKxT"
                   (examples/segmented_reduction.py's stream form: G rows @ ones(K, N)
                   k-slice after k-slice, the next slice copied during the GEMM).

Every result is checked against torch first. Timing: CUDA events around a batch of
back-to-back launches after warm-up, the median over --reps batches.
Issue 13's targets: fft >= 0.9x torch, conv >= 1.5x torch, bmm >= 1.0x torch,
segsum within 10% of cuda.block.sum (>= 0.9x).
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys

import numpy as np


def timed(fn, reps, inner):
    import torch
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / inner)
    return statistics.median(times)   # ms


def fft_kernel(cuda, f):
    @cuda.jit
    def k(x, y):
        thread_data = cuda.local.array(shape=(f.storage_size,), dtype=f.value_type)
        shared_mem = cuda.shared.array(shape=(0,), dtype=f.value_type)
        row = cuda.blockIdx.x * f.ffts_per_block + cuda.threadIdx.y
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            thread_data[i] = x[row, index]
            index += f.stride
        f.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(f.elements_per_thread):
            y[row, index] = thread_data[i]
            index += f.stride
    return k


def conv_kernel(cuda, fwd, inv):
    scale = 1.0 / fwd.size

    @cuda.jit
    def k(x, h, y):
        thread_data = cuda.local.array(shape=(fwd.storage_size,), dtype=fwd.value_type)
        shared_mem = cuda.shared.array(shape=(0,), dtype=fwd.value_type)
        row = cuda.blockIdx.x * fwd.ffts_per_block + cuda.threadIdx.y
        index = cuda.threadIdx.x
        for i in range(fwd.elements_per_thread):
            thread_data[i] = x[row, index]
            index += fwd.stride
        fwd.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(fwd.elements_per_thread):
            thread_data[i] = thread_data[i] * h[index]
            index += fwd.stride
        cuda.syncthreads()   # the inverse FFT reuses the workspace
        inv.execute(thread_data, shared_mem)
        index = cuda.threadIdx.x
        for i in range(fwd.elements_per_thread):
            y[row, index] = thread_data[i] * scale
            index += fwd.stride
    return k


def bmm_kernel(cuda, mm, s):
    threads = mm.block_dim.x * mm.block_dim.y * mm.block_dim.z
    bdx = mm.block_dim.x
    n = s * s

    # A, B, C row-major (leading dimension s) one after the other in dynamic
    # shared memory (64 x 64 float64 operands need 96 KB: more than a static 48).
    @cuda.jit
    def k(a, b, c):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type)
        smem_a = smem[0:]
        smem_b = smem[n:]
        smem_c = smem[2 * n:]
        batch = cuda.blockIdx.x
        tid = cuda.threadIdx.x + cuda.threadIdx.y * bdx
        for idx in range(tid, n, threads):
            smem_a[idx] = a[batch, idx // s, idx % s]
            smem_b[idx] = b[batch, idx // s, idx % s]
        cuda.syncthreads()
        mm.execute(1.0, smem_a, smem_b, 0.0, smem_c)
        cuda.syncthreads()
        for idx in range(tid, n, threads):
            c[batch, idx // s, idx % s] = smem_c[idx]
    return k


def bmm_kernel_wide(cuda, mm, s, itemsize):
    """bmm_kernel with the operands moved 16 bytes a thread (the flat
    arrays and the shared buffer viewed as complex128, a bit-exact move):
    a 32 x 32 float16 matrix is 128 such moves instead of 1024 two-byte
    ones."""
    threads = mm.block_dim.x * mm.block_dim.y * mm.block_dim.z
    bdx = mm.block_dim.x
    n = s * s
    nw = n * itemsize // 16

    @cuda.jit
    def k(a, b, c):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type)
        wide = smem.view(np.complex128)
        av = a.view(np.complex128)
        bv = b.view(np.complex128)
        cv = c.view(np.complex128)
        base = cuda.blockIdx.x * nw
        tid = cuda.threadIdx.x + cuda.threadIdx.y * bdx
        for idx in range(tid, nw, threads):
            wide[idx] = av[base + idx]
            wide[nw + idx] = bv[base + idx]
        cuda.syncthreads()
        mm.execute(1.0, smem[0:], smem[n:], 0.0, smem[2 * n:])
        cuda.syncthreads()
        for idx in range(tid, nw, threads):
            cv[base + idx] = wide[2 * nw + idx]
    return k


def bmm_kernel_pipelined(cuda, mm, s, itemsize):
    """Each block loops over batches (grid-stride) and loads the next
    batch's operands into registers, 16 bytes at a time, before the GEMM on
    the current one, so that the loads are in flight while the tensor cores
    (or FMA units) work; they go to shared memory after it."""
    threads = mm.block_dim.x * mm.block_dim.y * mm.block_dim.z
    bdx = mm.block_dim.x
    n = s * s
    nw = n * itemsize // 16
    per = nw // threads
    assert per * threads == nw, "the pipelined bmm needs whole 16-byte pieces a thread"

    @cuda.jit
    def k(a, b, c, batches):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type)
        wide = smem.view(np.complex128)
        av = a.view(np.complex128)
        bv = b.view(np.complex128)
        cv = c.view(np.complex128)
        ra = cuda.local.array(per, np.complex128)
        rb = cuda.local.array(per, np.complex128)
        tid = cuda.threadIdx.x + cuda.threadIdx.y * bdx
        batch = cuda.blockIdx.x
        if batch < batches:
            for q in range(per):
                ra[q] = av[batch * nw + tid + q * threads]
                rb[q] = bv[batch * nw + tid + q * threads]
        while batch < batches:
            for q in range(per):
                wide[tid + q * threads] = ra[q]
                wide[nw + tid + q * threads] = rb[q]
            cuda.syncthreads()
            nxt = batch + cuda.gridDim.x
            if nxt < batches:
                for q in range(per):
                    ra[q] = av[nxt * nw + tid + q * threads]
                    rb[q] = bv[nxt * nw + tid + q * threads]
            mm.execute(1.0, smem[0:], smem[n:], 0.0, smem[2 * n:])
            cuda.syncthreads()
            for q in range(per):
                cv[batch * nw + tid + q * threads] = wide[2 * nw + tid + q * threads]
            batch = nxt
    return k


def bmm_kernel_tensors(cuda, mm, s):
    """cuBLASDx's tensor API: each block loops over batches; the next batch's
    A and B are copied (cp.async, cuBLASDx's own copy) into the second pair
    of shared buffers while the GEMM runs on the current pair, and C stays in
    registers (MM.execute(a, b, acc), copy_fragment to global): no shared C."""
    from cudajit.mathdx import clear, copy, copy_fragment, copy_wait, make_tensor
    la, lb, lc = mm.suggest_layout_smem_a(), mm.suggest_layout_smem_b(), mm.suggest_layout_rmem_c()
    na, nb = la.cosize, lb.cosize

    @cuda.jit
    def k(a, b, c, batches):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type, alignment=16)
        sa0, sb0 = make_tensor(smem[0:na], la), make_tensor(smem[na:na + nb], lb)
        sa1, sb1 = make_tensor(smem[na + nb:2 * na + nb], la), make_tensor(smem[2 * na + nb:2 * (na + nb)], lb)
        acc = make_tensor(cuda.local.array(shape=(lc.cosize,), dtype=mm.c_value_type), lc)
        batch = cuda.blockIdx.x
        if batch < batches:
            copy(make_tensor(a[batch], mm.get_layout_gmem_a()), sa0, alignment=16)
            copy(make_tensor(b[batch], mm.get_layout_gmem_b()), sb0, alignment=16)
        parity = 0
        while batch < batches:
            copy_wait()   # this batch's operands (and the block's barrier)
            nxt = batch + cuda.gridDim.x
            if parity == 0:
                cur_a, cur_b, next_a, next_b = sa0, sb0, sa1, sb1
            else:
                cur_a, cur_b, next_a, next_b = sa1, sb1, sa0, sb0
            if nxt < batches:
                copy(make_tensor(a[nxt], mm.get_layout_gmem_a()), next_a, alignment=16)
                copy(make_tensor(b[nxt], mm.get_layout_gmem_b()), next_b, alignment=16)
            clear(acc)
            mm.execute(cur_a, cur_b, acc)
            copy_fragment(acc, make_tensor(c[batch], mm.get_layout_gmem_c()), alignment=16)
            cuda.syncthreads()   # the current pair is free for the copy after next
            batch = nxt
            parity = 1 - parity
    return k, 2 * (na * np.dtype(mm.a_value_type).itemsize + nb * np.dtype(mm.b_value_type).itemsize)


def bmm_kernel_single(cuda, mm, s):
    """The tensor API with one pair of shared buffers (half of
    bmm_kernel_tensors' shared memory, so more blocks an SM): each block
    copies a batch's A and B (cp.async), runs the GEMM into registers and
    stores C from them; the other blocks on the SM overlap its loads."""
    from cudajit.mathdx import clear, copy, copy_fragment, copy_wait, make_tensor
    la, lb, lc = mm.suggest_layout_smem_a(), mm.suggest_layout_smem_b(), mm.suggest_layout_rmem_c()
    na, nb = la.cosize, lb.cosize

    @cuda.jit
    def k(a, b, c, batches):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type, alignment=16)
        sa, sb = make_tensor(smem[0:na], la), make_tensor(smem[na:na + nb], lb)
        acc = make_tensor(cuda.local.array(shape=(lc.cosize,), dtype=mm.c_value_type), lc)
        batch = cuda.blockIdx.x
        while batch < batches:
            copy(make_tensor(a[batch], mm.get_layout_gmem_a()), sa, alignment=16)
            copy(make_tensor(b[batch], mm.get_layout_gmem_b()), sb, alignment=16)
            copy_wait()
            clear(acc)
            mm.execute(sa, sb, acc)
            copy_fragment(acc, make_tensor(c[batch], mm.get_layout_gmem_c()), alignment=16)
            cuda.syncthreads()   # the buffers are free for the next copy
            batch += cuda.gridDim.x
    return k, na * np.dtype(mm.a_value_type).itemsize + nb * np.dtype(mm.b_value_type).itemsize


def bmm_kernel_hybrid(cuda, mm, s, itemsize):
    """bmm_kernel_pipelined's register prefetch of the next batch (16 bytes
    a thread) into one pair of shared buffers in the plain layouts, with the
    tensor API's GEMM into registers and C stored from them: no shared C."""
    from cudajit.mathdx import clear, copy_fragment, make_tensor
    threads = mm.block_dim.x * mm.block_dim.y * mm.block_dim.z
    bdx = mm.block_dim.x
    n = s * s
    nw = n * itemsize // 16
    per = nw // threads
    assert per * threads == nw, "the hybrid bmm needs whole 16-byte pieces a thread"
    # (the plain shared layouts need the plain register layout of C)
    la, lb, lc = mm.get_layout_smem_a(), mm.get_layout_smem_b(), mm.get_layout_rmem_c()
    assert la.cosize == n and lb.cosize == n, "plain row-major shared layouts"

    @cuda.jit
    def k(a, b, c, batches):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type, alignment=16)
        wide = smem.view(np.complex128)
        sa, sb = make_tensor(smem[0:n], la), make_tensor(smem[n:2 * n], lb)
        acc = make_tensor(cuda.local.array(shape=(lc.cosize,), dtype=mm.c_value_type), lc)
        av = a.view(np.complex128)
        bv = b.view(np.complex128)
        ra = cuda.local.array(per, np.complex128)
        rb = cuda.local.array(per, np.complex128)
        tid = cuda.threadIdx.x + cuda.threadIdx.y * bdx
        batch = cuda.blockIdx.x
        if batch < batches:
            for q in range(per):
                ra[q] = av[batch * nw + tid + q * threads]
                rb[q] = bv[batch * nw + tid + q * threads]
        while batch < batches:
            for q in range(per):
                wide[tid + q * threads] = ra[q]
                wide[nw + tid + q * threads] = rb[q]
            cuda.syncthreads()
            nxt = batch + cuda.gridDim.x
            if nxt < batches:
                for q in range(per):
                    ra[q] = av[nxt * nw + tid + q * threads]
                    rb[q] = bv[nxt * nw + tid + q * threads]
            clear(acc)
            mm.execute(sa, sb, acc)
            copy_fragment(acc, make_tensor(c[batch * n:(batch + 1) * n], mm.get_layout_gmem_c()), alignment=16)
            cuda.syncthreads()
            batch = nxt
    return k, 2 * n * itemsize


def bmm_kernel_stream(cuda, mm, s, tk):
    """The GEMMs as a stream of k-slices: mm is S x S x tk, each block walks
    its batches' slices one after the other (C += A[:, k:k+tk] B[k:k+tk, :]
    into registers), copying the next slice (of this batch or the next) with
    cp.async into the other pair of small shared buffers while it multiplies
    the current one, so that its loads never drain between GEMMs; C is
    stored from registers after a batch's last slice."""
    from cudajit.mathdx import clear, copy, copy_fragment, copy_wait, make_tensor
    la, lb, lc = mm.suggest_layout_smem_a(), mm.suggest_layout_smem_b(), mm.suggest_layout_rmem_c()
    na, nb = la.cosize, lb.cosize
    stages = s // tk
    assert stages * tk == s

    @cuda.jit
    def k(a, b, c, batches):
        smem = cuda.shared.array(shape=(0,), dtype=mm.a_value_type, alignment=16)
        sa0, sb0 = make_tensor(smem[0:na], la), make_tensor(smem[na:na + nb], lb)
        sa1, sb1 = make_tensor(smem[na + nb:2 * na + nb], la), make_tensor(smem[2 * na + nb:2 * (na + nb)], lb)
        acc = make_tensor(cuda.local.array(shape=(lc.cosize,), dtype=mm.c_value_type), lc)
        batch = cuda.blockIdx.x
        if batch < batches:
            copy(make_tensor(a[batch, :, 0:tk], mm.get_layout_gmem_a(s)), sa0, alignment=16)
            copy(make_tensor(b[batch, 0:tk, :], mm.get_layout_gmem_b(s)), sb0, alignment=16)
        clear(acc)
        stage = 0
        parity = 0
        while batch < batches:
            copy_wait()   # this slice's operands (and the block's barrier)
            nxt, nstage = batch, stage + 1
            if nstage == stages:
                nxt, nstage = batch + cuda.gridDim.x, 0
            if parity == 0:
                cur_a, cur_b, next_a, next_b = sa0, sb0, sa1, sb1
            else:
                cur_a, cur_b, next_a, next_b = sa1, sb1, sa0, sb0
            if nxt < batches:
                k0 = nstage * tk
                copy(make_tensor(a[nxt, :, k0:k0 + tk], mm.get_layout_gmem_a(s)), next_a, alignment=16)
                copy(make_tensor(b[nxt, k0:k0 + tk, :], mm.get_layout_gmem_b(s)), next_b, alignment=16)
            mm.execute(cur_a, cur_b, acc)
            if nstage == 0:   # the batch's last slice
                copy_fragment(acc, make_tensor(c[batch], mm.get_layout_gmem_c()), alignment=16)
                clear(acc)
            cuda.syncthreads()   # the current pair is free for the copy after next
            batch, stage = nxt, nstage
            parity = 1 - parity
    return k, 2 * (na * np.dtype(mm.a_value_type).itemsize + nb * np.dtype(mm.b_value_type).itemsize)


def example(name):
    """A module of examples/ (their kernels are the ones the rows time)."""
    import importlib
    import os
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def segsum_block_kernel(cuda, threads):
    @cuda.jit
    def k(x, out):
        seg = cuda.blockIdx.x
        acc = np.float32(0.0)
        for i in range(cuda.threadIdx.x, x.shape[1], threads):
            acc += x[seg, i]
        total = cuda.block.sum(acc)
        if cuda.threadIdx.x == 0:
            out[seg] = total
    return k


def segsum_matvec_1xn_kernel(cuda, Matmul, length, threads):
    """One ones(1, N) @ row GEMM a block (the example's first form)."""
    mm = Matmul(size=(1, 1, length), precision=np.float32, data_type="real",
                arrangement=("row_major", "col_major", "col_major"), block_size=threads)

    @cuda.jit
    def k(x, out):
        seg = cuda.blockIdx.x
        ones = cuda.shared.array(length, np.float32)
        row = cuda.shared.array(length, np.float32)
        total = cuda.shared.array(1, np.float32)
        for i in range(cuda.threadIdx.x, length, threads):
            ones[i] = 1.0
            row[i] = x[seg, i]
        cuda.syncthreads()
        mm.execute(1.0, ones, row, 0.0, total)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            out[seg] = total[0]
    return k


def segsum_matvec_kernel(segs):
    """examples/segmented_reduction.py's mat-vec form (two GEMMs, `segs`
    rows a block, 256 threads), the kernel the example runs."""
    kernel, why = example("segmented_reduction").matvec_kernel(1024, segs)
    if kernel is None:
        raise RuntimeError(why)
    return kernel


def segsum_stream_kernel(shape):
    """examples/segmented_reduction.py's stream form, `shape` =
    'GROUPxNxKSLICExTHREADS': (kernel, group, threads, shared bytes, blocks)."""
    sr = example("segmented_reduction")
    group, n, kslice, threads = (int(v) for v in shape.split("x"))
    kernel, smem, why = sr.matvec_stream_kernel(1024, group, n, kslice, threads)
    if kernel is None:
        raise RuntimeError(why)
    return kernel, group, threads, smem, sr.resident_blocks(kernel, sr.STREAM_SIGNATURE, threads, smem)


# Each bmm row's fastest form so far (H100, 2026-11-27/28; docs/mathdx.md):
# (threads a block, --bmm-copy form). --bmm-copy best runs these.
BEST_BMM = {
    (32, "float32"): (128, "pipelined"),
    (32, "float64"): (128, "hybrid"),
    (32, "float16"): (128, "pipelined"),
    (64, "float32"): (128, "single"),
    (64, "float64"): (128, "pipelined"),
    (64, "float16"): (128, "pipelined"),
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--json")
    p.add_argument("--only", default="fft,bmm,segsum", help="rows: fft (with conv), bmm, segsum")
    p.add_argument("--segsum-per-block", default="1,2,4,8", help="segments a block of the mat-vec segsum rows")
    p.add_argument("--segsum-stream", default="32x8x128x128",
                   help="GROUPxNxKSLICExTHREADS list of the stream mat-vec segsum rows ('' for none)")
    p.add_argument("--bmm-threads", default="128", help="threads a block of the GEMM kernels (a list: a row each)")
    p.add_argument("--bmm-copy", default="best",
                   help="best (each row's fastest form on the H100 so far, BEST_BMM), or a list of: "
                        "pipelined (a block loops over batches loading the next one during the "
                        "GEMM), tensors (so, with cuBLASDx's copies and C in registers), single (tensors "
                        "with one pair of shared buffers), hybrid (pipelined's loads, tensors' GEMM into "
                        "registers), stream (k-slices of --bmm-tk, copied during the previous slice's GEMM), "
                        "wide (one batch a block, operands moved 16 bytes a thread), element "
                        "(element by element)")
    p.add_argument("--bmm-sizes", default="32,64")
    p.add_argument("--bmm-dtypes", default="float32,float64,float16")
    p.add_argument("--bmm-tk", type=int, default=16, help="the k-slice of --bmm-copy stream")
    opts = p.parse_args(argv)
    import torch
    import cudajit as cuda
    from cudajit.mathdx import FFT, Matmul
    rows = []
    total = 1 << (20 if opts.quick else 24)

    def row(name, ours, theirs, bytes_moved, target, what="torch"):
        ratio = theirs / ours
        rows.append({"row": name, "cudajit_ms": ours, "torch_ms": theirs, "ratio": ratio, "target": target,
                     "cudajit_GBps": bytes_moved / ours / 1e6, "torch_GBps": bytes_moved / theirs / 1e6})
        print(f"{name:18s} cudajit {ours * 1e3:9.1f} us ({bytes_moved / ours / 1e6:7.0f} GB/s)   "
              f"{what} {theirs * 1e3:9.1f} us ({bytes_moved / theirs / 1e6:7.0f} GB/s)   "
              f"{ratio:5.2f}x {what}  (target >= {target}x){'' if ratio >= target else '  BELOW'}", flush=True)

    gen = torch.Generator(device="cuda").manual_seed(1)
    for n in (256, 4096) if "fft" in opts.only else ():
        f = FFT(size=n, precision=np.float32, fft_type="c2c", direction="forward", execution="Block",
                ffts_per_block="suggested")
        batch = total // n
        batch -= batch % f.ffts_per_block
        x = torch.randn(batch, n, dtype=torch.complex64, device="cuda", generator=gen)
        y = torch.full_like(x, float("nan"))
        k = fft_kernel(cuda, f)
        launch = k[batch // f.ffts_per_block, f.block_dim, 0, f.shared_memory_size]
        launch(x, y)
        want = torch.fft.fft(x)
        err = (torch.linalg.vector_norm(y - want) / torch.linalg.vector_norm(want)).item()
        assert err < 1e-5, f"fft {n}: relative error {err}"
        ours = timed(lambda: launch(x, y), opts.reps, 20)
        theirs = timed(lambda: torch.fft.fft(x), opts.reps, 20)
        row(f"fft {n}", ours, theirs, 2 * x.numel() * 8, 0.9, "torch.fft")

        inv = FFT(size=n, precision=np.float32, fft_type="c2c", direction="inverse", execution="Block",
                  elements_per_thread=f.elements_per_thread, ffts_per_block=f.ffts_per_block)
        assert inv.block_dim == f.block_dim and inv.shared_memory_size == f.shared_memory_size
        h = torch.randn(n, dtype=torch.complex64, device="cuda", generator=gen)
        kc = conv_kernel(cuda, f, inv)
        launch_c = kc[batch // f.ffts_per_block, f.block_dim, 0, f.shared_memory_size]
        launch_c(x, h, y)
        want = torch.fft.ifft(torch.fft.fft(x) * h)
        err = (torch.linalg.vector_norm(y - want) / torch.linalg.vector_norm(want)).item()
        assert err < 1e-5, f"conv {n}: relative error {err}"
        ours = timed(lambda: launch_c(x, h, y), opts.reps, 20)
        theirs = timed(lambda: torch.fft.ifft(torch.fft.fft(x) * h), opts.reps, 20)
        row(f"conv {n}", ours, theirs, 2 * x.numel() * 8, 1.5)

    copies = opts.bmm_copy.split(",")
    looping = ("pipelined", "tensors", "single", "hybrid", "stream")   # grid-stride over batches
    unknown = set(copies) - set(looping) - {"wide", "element", "best"}
    if unknown:
        p.error(f"--bmm-copy: unknown {sorted(unknown)}")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for s in [int(x) for x in opts.bmm_sizes.split(",")] if "bmm" in opts.only else ():
        dtypes = [np.dtype(x).type for x in opts.bmm_dtypes.split(",")]
        if copies == ["best"]:
            # (a row not measured yet: the pipelined form, --bmm-threads' first)
            fallback = (int(opts.bmm_threads.split(",")[0]), "pipelined")
            rows_to_run = [(dt, BEST_BMM.get((s, np.dtype(dt).name), fallback)) for dt in dtypes]
        else:
            rows_to_run = list(itertools.product(
                dtypes, [(int(t), m) for t in opts.bmm_threads.split(",") for m in copies]))
        for dt, (threads, copy) in rows_to_run:
            tdt = getattr(torch, np.dtype(dt).name)
            name = f"bmm {s} {np.dtype(dt).name} {threads}t {copy}" + (f" k{opts.bmm_tk}" if copy == "stream" else "")
            mm = Matmul(size=(s, s, opts.bmm_tk if copy == "stream" else s), precision=dt, data_type="real",
                        arrangement=("row_major", "row_major", "row_major"), execution="Block",
                        block_size=threads,
                        # the tensor API's copies move 16 bytes a thread when the operands are so aligned
                        alignment=(16, 16, 16) if copy in ("tensors", "single", "hybrid", "stream") else None)
            batch = (1 << 18 if opts.quick else 1 << 22) // (s * s)
            a = torch.randn(batch, s, s, dtype=tdt, device="cuda", generator=gen)
            b = torch.randn(batch, s, s, dtype=tdt, device="cuda", generator=gen)
            c = torch.full_like(a, float("nan"))
            smem_bytes = 3 * s * s * a.element_size()
            if copy in ("pipelined", "hybrid") and (s * s * a.element_size() // 16) % threads:
                print(f"{name}: n/a (a thread's share is not whole 16-byte pieces)", flush=True)
                continue
            if copy == "tensors":
                kb, smem_bytes = bmm_kernel_tensors(cuda, mm, s)
            elif copy == "single":
                kb, smem_bytes = bmm_kernel_single(cuda, mm, s)
            elif copy == "stream":
                kb, smem_bytes = bmm_kernel_stream(cuda, mm, s, opts.bmm_tk)
            elif copy == "hybrid":
                kb, smem_bytes = bmm_kernel_hybrid(cuda, mm, s, a.element_size())
            elif copy == "pipelined":
                kb = bmm_kernel_pipelined(cuda, mm, s, a.element_size())
            elif copy == "wide":
                kb = bmm_kernel_wide(cuda, mm, s, a.element_size())
            else:
                kb = bmm_kernel(cuda, mm, s)
            if copy in looping:   # as many blocks as the SMs hold at once: none waits for another
                flat = (a, b, c, batch) if copy in ("tensors", "single", "stream") else \
                    (a.view(-1), b.view(-1), c.view(-1), batch)
                resident = example("segmented_reduction").resident_blocks(
                    kb, kb._arg_signature(*flat), threads, smem_bytes)
                grid = min(batch, resident)
            else:
                flat = (a.view(-1), b.view(-1), c.view(-1)) if copy == "wide" else (a, b, c)
                grid = batch
            launch_b = kb[grid, mm.block_dim, 0, smem_bytes]
            launch_b(*flat)
            want = torch.bmm(a.double(), b.double())
            err = (torch.linalg.vector_norm(c.double() - want) / torch.linalg.vector_norm(want)).item()
            assert err < (1e-2 if dt == np.float16 else 1e-5), f"{name}: relative error {err}"
            ours = timed(lambda: launch_b(*flat), opts.reps, 10)
            theirs = timed(lambda: torch.bmm(a, b), opts.reps, 10)
            row(f"{name} ({grid // sms} blocks/SM)" if copy in looping else name, ours, theirs,
                3 * a.numel() * a.element_size(), 1.0, "torch.bmm")

    if "segsum" in opts.only:
        length, threads = 1024, 256
        segments = 8192 if opts.quick else 65536
        x = torch.randn(segments, length, dtype=torch.float32, device="cuda", generator=gen)
        want = x.double().sum(dim=1)
        ref = torch.full((segments,), float("nan"), dtype=torch.float32, device="cuda")
        kb = segsum_block_kernel(cuda, threads)[segments, threads]
        kb(x, ref)
        assert torch.allclose(ref.double(), want, rtol=1e-4, atol=1e-3), "segsum: cuda.block.sum is wrong"
        theirs = timed(lambda: kb(x, ref), opts.reps, 20)
        kernels = []
        if opts.segsum_per_block:   # (with the per-block rows: the form they improve on)
            kernels.append(("1x1xN", segsum_matvec_1xn_kernel(cuda, Matmul, length, threads)[segments, threads]))
        for segs in (int(v) for v in opts.segsum_per_block.split(",") if v):
            kernels.append((f"S={segs}", segsum_matvec_kernel(segs)[segments // segs, threads]))
        for shape in (v for v in opts.segsum_stream.split(",") if v):
            ks, group, kt, smem, blocks = segsum_stream_kernel(shape)
            groups = segments // group
            launch = ks[min(groups, blocks), kt, 0, smem]
            kernels.append((f"stream {shape}", lambda xx, out, launch=launch, groups=groups: launch(xx, out, groups)))
        for name, km in kernels:
            got = torch.full((segments,), float("nan"), dtype=torch.float32, device="cuda")
            km(x, got)
            assert torch.allclose(got.double(), want, rtol=1e-4, atol=1e-3), \
                f"segsum {name}: max error {(got.double() - want).abs().max().item()}"
            ours = timed(lambda: km(x, got), opts.reps, 20)
            row(f"segsum {name}", ours, theirs, x.numel() * 4, 0.9, "block.sum")

    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, {cuda._core.mathdx_library()}")
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
