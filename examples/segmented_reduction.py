"""Segmented reduction: the sum of each row of a matrix, in eight forms.

    python examples/segmented_reduction.py [--segments 16384] [--length 1024] [--runs 20]

Segment s is the row x[s, :]. The forms, each checked against numpy (float64)
and timed:

  simt      cudajit, hand-written: one block per row, the threads stride over
            the row and accumulate privately, then a tree reduction in shared
            memory with cuda.syncthreads() (the numba.cuda-dialect baseline)
  block     cudajit, cooperative: the same loop, then cuda.block.sum(acc)
            (CUB's BlockReduce, linked as LTO-IR; the kernel is specialised
            on its launch block shape)
  tile      cudajit.tile (cuTile's model): one block loads the row as a
            (1, TILE) tile and stores ct.sum(t, axis=1)
  compute   cudajit.compute (cuda.compute's model): no kernel at all, one
            segmented_reduce call with OpKind.PLUS; the segment offsets are
            iterators (s * length and (s + 1) * length), not arrays
  mathdx    cudajit with cudajit.mathdx (cuBLASDx, linked as LTO-IR): the
            seed talk's block-level mat-vecs with ones vectors, 8 rows a
            block staged in shared memory, two GEMMs (32 partial sums of
            each row, then their sums; needs libmathdx: pip install
            nvidia-libmathdx-cu13; --segments a multiple of 8)
  mathdx-stream  the same mat-vec as one 32 x 8 x 128 cuBLASDx GEMM with a
            ones matrix, accumulated in registers over each row's 128-wide
            slices, every block streaming its rows' slices (cp.async) while
            it multiplies the previous one (--segments a multiple of 32)
  matvec    CuPy: x @ ones(length), a matrix-vector product (cuBLAS)
  cupy.sum  CuPy: x.sum(axis=-1)

Without CuPy the two cudajit forms run on cudajit device arrays; without a
GPU the cudajit forms are compiled ahead of time (compile_ptx with block=).
"""
import argparse
import sys
import time

import numpy as np

import cudajit as cuda
import cudajit.compute as compute
import cudajit.tile as ct

TPB = 256  # threads per block (the shared array's length must be a constant)


@cuda.jit
def segment_sums_simt(x, out):
    seg = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    partial = cuda.shared.array(TPB, np.float32)
    acc = np.float32(0.0)
    for i in range(tid, x.shape[1], TPB):
        acc += x[seg, i]
    partial[tid] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[seg] = partial[0]


@cuda.jit
def segment_sums(x, out):
    seg = cuda.blockIdx.x
    acc = np.float32(0.0)
    for i in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
        acc += x[seg, i]
    total = cuda.block.sum(acc)          # valid in thread 0
    if cuda.threadIdx.x == 0:
        out[seg] = total


@ct.kernel
def segment_sums_tile(x, out, TILE: ct.Constant[int]):
    seg = ct.bid(0)
    t = ct.load(x, index=(seg, 0), shape=(1, TILE), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(seg,), tile=ct.sum(t, axis=1))


def segment_sums_compute(x, out, segments, length):
    """The whole algorithm: one call (cub::DeviceSegmentedReduce's model)."""
    starts = compute.TransformIterator(compute.CountingIterator(np.int64(0)), lambda s: s * length)
    ends = compute.TransformIterator(compute.CountingIterator(np.int64(1)), lambda s: s * length)
    compute.segmented_reduce(x.reshape(-1), out, starts, ends, compute.OpKind.PLUS,
                             np.zeros(1, np.float32), segments)


def matvec_kernel(length, segs=8):
    """A kernel summing rows of `length` values with cuBLASDx block GEMMs
    (mat-vecs with ones vectors), `segs` rows a block, or None (with the
    reason) without libmathdx. The rows go to shared memory as one
    column-major (32 segs) x (length / 32) matrix A, so that
    C1 = A @ ones(length / 32) holds 32 partial sums of each row; C1 seen as a
    32 x segs matrix gives the sums as ones(1, 32) @ C1. (One
    ones(1, length) @ row GEMM a block is 20x slower: cuBLASDx gives an
    N = 1 product's whole row to one thread; docs/mathdx.md.)"""
    if length % 32 or (segs * length) % TPB:
        return None, f"the mathdx form needs a length that is a multiple of 32, got {length}"
    try:
        from cudajit.mathdx import Matmul
        sm = None if cuda.is_available() else 90
        k1 = length // 32
        m1 = Matmul(size=(32 * segs, 1, k1), precision=np.float32, data_type="real",
                    arrangement=("col_major", "col_major", "col_major"), block_size=TPB, sm=sm)
        m2 = Matmul(size=(1, segs, 32), precision=np.float32, data_type="real",
                    arrangement=("row_major", "col_major", "col_major"), block_size=TPB, sm=sm)
    except ImportError as e:
        return None, str(e).splitlines()[0]
    per = segs * length // TPB
    rows32 = 32 * segs

    @cuda.jit
    def segment_sums_matvec(x, out):
        a = cuda.shared.array(segs * length, np.float32)
        ones1 = cuda.shared.array(k1, np.float32)
        c1 = cuda.shared.array(rows32, np.float32)
        ones2 = cuda.shared.array(32, np.float32)
        c2 = cuda.shared.array(segs, np.float32)
        seg0 = cuda.blockIdx.x * segs
        tid = cuda.threadIdx.x
        r = cuda.local.array(per, np.float32)
        for q in range(per):                      # every load in flight before the first store
            j = tid + q * TPB
            r[q] = x[seg0 + j // length, j % length]
        for q in range(per):
            j = tid + q * TPB
            c = j % length
            a[(j // length) * 32 + c % 32 + rows32 * (c // 32)] = r[q]
        for i in range(tid, k1, TPB):
            ones1[i] = 1.0
        if tid < 32:
            ones2[tid] = 1.0
        cuda.syncthreads()
        m1.execute(1.0, a, ones1, 0.0, c1)        # c1 = A @ ones: 32 partial sums a row
        cuda.syncthreads()
        m2.execute(1.0, ones2, c1, 0.0, c2)       # c2 = ones @ c1: the rows' sums
        cuda.syncthreads()
        if tid < segs:
            out[seg0 + tid] = c2[tid]
    return segment_sums_matvec, None


STREAM_GROUP, STREAM_THREADS = 32, 128   # the stream form's rows a group, threads a block


def matvec_stream_kernel(length, group=STREAM_GROUP, n=8, kslice=128, threads=STREAM_THREADS):
    """The mat-vec form as a stream: a (group x n x kslice) cuBLASDx GEMM,
    C += X[rows, k:k+kslice] @ ones(kslice, n), accumulated in registers over
    a row's slices; each block walks its groups of `group` rows slice after
    slice, copying the next slice (cp.async, cuBLASDx's copy) while it
    multiplies the current one, so its loads never drain. C's first column
    holds the sums. Returns (kernel, shared bytes, None) or (None, 0, why);
    the kernel is (x, out, groups), launched on as many blocks as the SMs
    hold (resident_blocks)."""
    if length % kslice or kslice % 4:
        return None, 0, f"the stream form needs a length that is a multiple of {kslice}, got {length}"
    try:
        from cudajit.mathdx import Matmul, clear, copy, copy_fragment, copy_wait, make_tensor
        mm = Matmul(size=(group, n, kslice), precision=np.float32, data_type="real",
                    arrangement=("row_major", "col_major", "col_major"), block_size=threads,
                    alignment=(16, 16, 16), sm=None if cuda.is_available() else 90)
    except ImportError as e:
        return None, 0, str(e).splitlines()[0]
    la, lb, lc, lsc = mm.suggest_layout_smem_a(), mm.suggest_layout_smem_b(), mm.suggest_layout_rmem_c(), \
        mm.get_layout_smem_c()
    up4 = lambda v: (v + 3) // 4 * 4   # noqa: E731  (16-byte offsets)
    nb, nc, na = up4(lb.cosize), up4(lsc.cosize), up4(la.cosize)
    o0 = nb + nc
    o1 = o0 + na
    slices = length // kslice
    gmem_a = mm.get_layout_gmem_a(length)

    @cuda.jit
    def segment_sums_matvec_stream(x, out, groups):
        smem = cuda.shared.array(shape=(0,), dtype=np.float32, alignment=16)
        tid = cuda.threadIdx.x
        for i in range(tid, nb, threads):
            smem[i] = 1.0                           # the ones matrix (any layout: all ones)
        ones = make_tensor(smem[0:nb], lb)
        c_out = smem[nb:nb + nc]                    # column-major C: row i's sum at i
        sc = make_tensor(c_out, lsc)
        sa0, sa1 = make_tensor(smem[o0:o0 + na], la), make_tensor(smem[o1:o1 + na], la)
        acc = make_tensor(cuda.local.array(shape=(lc.cosize,), dtype=np.float32), lc)
        g = cuda.blockIdx.x
        if g < groups:
            copy(make_tensor(x[g * group:(g + 1) * group, 0:kslice], gmem_a), sa0, alignment=16)
        clear(acc)
        s = 0
        parity = 0
        while g < groups:
            copy_wait()                             # this slice (and a barrier: the ones are there)
            ng, ns = g, s + 1
            if ns == slices:
                ng, ns = g + cuda.gridDim.x, 0
            if parity == 0:
                cur, nxt = sa0, sa1
            else:
                cur, nxt = sa1, sa0
            if ng < groups:
                k0 = ns * kslice
                copy(make_tensor(x[ng * group:(ng + 1) * group, k0:k0 + kslice], gmem_a), nxt, alignment=16)
            mm.execute(cur, ones, acc)              # C += X slice @ ones
            if ns == 0:                             # the group's last slice: its sums
                copy_fragment(acc, sc)
                clear(acc)
                cuda.syncthreads()
                if tid < group:
                    out[g * group + tid] = c_out[tid]
            cuda.syncthreads()                      # cur is free for the copy after next
            g, s = ng, ns
            parity = 1 - parity
    return segment_sums_matvec_stream, 4 * (o1 + na), None


def resident_blocks(kernel, signature, threads, shared_bytes):
    """Blocks of `kernel` all SMs hold at once (numba's occupancy query)."""
    func = kernel.compile(signature, block=(threads,)).library.get_cufunc()
    per_sm = cuda.current_context().get_active_blocks_per_multiprocessor(func, threads, shared_bytes)
    return max(1, per_sm) * cuda.get_current_device().MULTIPROCESSOR_COUNT


SIGNATURE = "void(float32[:, ::1], float32[::1])"
STREAM_SIGNATURE = "void(float32[:, ::1], float32[::1], int64)"


def timed(run, sync, runs):
    run()                                # compiles (first call), warms up
    sync()
    t0 = time.perf_counter()
    for _ in range(runs):
        run()
    sync()
    return (time.perf_counter() - t0) / runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=16384)
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()

    if not cuda.is_available():
        print("No usable CUDA GPU here; compiling only (sm_90).")
        matvec, why = matvec_kernel(a.length)
        if matvec is None:
            print(f"mathdx form skipped: {why}")
        for k in (segment_sums_simt, segment_sums) + ((matvec,) if matvec else ()):
            ptx, _ = cuda.compile_ptx(k, SIGNATURE, arch="sm_90", block=(TPB,))
            print(f"{k.__name__}: PTX {len(ptx)} chars, {ptx.count('bar.sync')} barrier(s), "
                  f"{ptx.count('shfl.sync')} warp shuffle(s)")
        stream, _, why = matvec_stream_kernel(a.length)
        if stream is None:
            print(f"mathdx stream form skipped: {why}")
        else:
            ptx, _ = cuda.compile_ptx(stream, STREAM_SIGNATURE, arch="sm_90", block=(STREAM_THREADS,))
            print(f"{stream.__name__}: PTX {len(ptx)} chars, {ptx.count('cp.async')} cp.async")
        return 0

    try:
        import cupy as cp
    except ImportError:
        cp = None

    rng = np.random.default_rng()
    xh = rng.standard_normal((a.segments, a.length)).astype(np.float32)
    want = xh.sum(axis=1, dtype=np.float64)
    gbytes = xh.nbytes / 1e9

    if cp is not None:
        x = cp.asarray(xh)
        new_out = lambda: cp.full(a.segments, np.nan, np.float32)  # noqa: E731
        to_host = cp.asnumpy
        sync = cp.cuda.Device().synchronize
    else:
        x = cuda.to_device(xh)
        new_out = lambda: cuda.to_device(np.full(a.segments, np.nan, np.float32))  # noqa: E731
        to_host = lambda d: d.copy_to_host()  # noqa: E731
        sync = cuda.synchronize

    forms = {}
    out_simt, out_block = new_out(), new_out()
    forms["simt"] = (lambda: segment_sums_simt[a.segments, TPB](x, out_simt), lambda: out_simt)
    forms["block"] = (lambda: segment_sums[a.segments, TPB](x, out_block), lambda: out_block)
    out_tile, out_compute = new_out(), new_out()
    tile = 1 << (a.length - 1).bit_length()
    forms["tile"] = (lambda: segment_sums_tile[a.segments](x, out_tile, tile), lambda: out_tile)
    forms["compute"] = (lambda: segment_sums_compute(x, out_compute, a.segments, a.length), lambda: out_compute)
    matvec, why = matvec_kernel(a.length)
    if matvec is not None and a.segments % 8:
        matvec, why = None, f"--segments {a.segments} is not a multiple of 8 (its rows a block)"
    if matvec is not None:
        out_matvec = new_out()
        forms["mathdx"] = (lambda: matvec[a.segments // 8, TPB](x, out_matvec), lambda: out_matvec)
    else:
        print(f"mathdx form skipped: {why}")
    stream, smem, why = matvec_stream_kernel(a.length)
    if stream is not None and a.segments % STREAM_GROUP:
        stream, why = None, f"--segments {a.segments} is not a multiple of {STREAM_GROUP} (its rows a group)"
    if stream is not None:
        out_stream, groups = new_out(), a.segments // STREAM_GROUP
        blocks = resident_blocks(stream, STREAM_SIGNATURE, STREAM_THREADS, smem)
        launch = stream[min(groups, blocks), STREAM_THREADS, 0, smem]
        forms["mathdx-stream"] = (lambda: launch(x, out_stream, groups), lambda: out_stream)
    else:
        print(f"mathdx stream form skipped: {why}")
    if cp is not None:
        ones = cp.ones(a.length, cp.float32)
        result = {}
        forms["matvec"] = (lambda: result.__setitem__("mv", x @ ones), lambda: result["mv"])
        forms["cupy.sum"] = (lambda: result.__setitem__("sum", x.sum(axis=-1)), lambda: result["sum"])
    else:
        print("CuPy is not installed: the matvec and cupy.sum forms are skipped.")

    ok_all = True
    print(f"{a.segments} segments x {a.length} float32 ({gbytes * 1e3:.0f} MB)")
    for name, (run, result_of) in forms.items():
        seconds = timed(run, sync, a.runs)
        got = to_host(result_of()).astype(np.float64)
        err = np.max(np.abs(got - want))
        ok = np.allclose(got, want, rtol=1e-4, atol=1e-3)
        ok_all &= ok
        print(f"  {name:13s} {'OK' if ok else 'WRONG'}  max abs error {err:.2e}  "
              f"{seconds * 1e6:8.1f} us  {gbytes / seconds:6.0f} GB/s")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
