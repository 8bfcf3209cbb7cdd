"""Tile kernels (issue 11): cudajit.tile side by side with PyTorch, Triton and NVIDIA's cuTile.

    python benchmarks/bench_tiles.py [--quick] [--only fp16,bf16,tf32,softmax,layernorm,segsum,firstcall]
                                     [--reps 10] [--json out.json]

Rows (full sizes; --quick uses small ones):
  fp16 / bf16 matmul  4096^3, fp32 accumulate, C in the inputs' dtype:
                      torch.matmul (cuBLAS), a Triton kernel (the tutorial's, autotune off,
                      128x256x64, 8 warps, 3 stages), cuTile and cudajit.tile (cuTile's MatMul
                      sample kernel, 128x256x64; --mm-tiles changes the tile kernel's)
  tf32 matmul         4096^3 float32 in and out through tfloat32 (torch with
                      allow_tf32; Triton tl.dot input_precision="tf32", 128x128x32, 8 warps,
                      3 stages; the tile kernel with 256x128x32: on an H100, with the
                      inputs rounded to nearest (as cuBLAS and cuTile), it gave cudajit
                      272-277 TFLOP/s against 246 with 128x256x32, whose one 64-row
                      block a warpgroup cannot overlap its x loads; --mm-tiles-tf32
                      changes it)
  softmax             8192 x 4096 float32, rows: torch.softmax, the Triton tutorial's
                      kernel, and a (1, 4096)-tile kernel (cuTile, cudajit.tile)
  layernorm           8192 x 4096 float32 forward with weight and bias: F.layer_norm,
                      the Triton tutorial's forward kernel, a one-pass (1, 4096)-tile kernel
  segsum              65536 x 1024 float32 segmented sum: the issue's tile kernel
                      (cudajit.tile, cuTile), a @cudajit.jit kernel with cuda.block.sum
                      (256 threads, as bench_cub.py), the same in CUDA C++ with
                      cub::BlockReduce (NVRTC through CuPy), torch x.sum(dim=1)
  firstcall           first call of the matmul kernel (compile + launch + wait) in a warm
                      process, no disk caches: cudajit.tile, Triton, cuTile

The cuTile and cudajit.tile columns run THE SAME kernel source: the kernels below
are defined at module level against a global `ct`, and this file is loaded once
per implementation with `ct` bound to cuda.tile or to cudajit.tile (load_tile_impl).
Every result is checked against torch first (a wrong one shows "WRONG"). An
implementation that is missing or fails (ImportError, CompileError, ...) shows
"n/a (reason)" and the run goes on.

Seen on an H100 (cuda.tile 1.7.0, quick and full runs): cuTile compiles the 128x256x64
tile matmul into a kernel at ~42 TFLOP/s (0.06x cuBLAS), while --mm-tiles 128x128x64
gives it ~660 TFLOP/s (0.90x cuBLAS); the default stays cuTile's sample's 128x256x64.

Timing: CUDA events (torch.cuda.Event) around a batch of back-to-back launches,
after warm-up; the median over --reps batches, divided by the batch size.
Cells: time, TFLOP/s or GB/s (bytes read + written once), and speed relative to
the fastest of the row (1.00x = the fastest). The targets of issue 11 are
checked below the table.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import traceback

# Fresh compiles for the first-call row: no disk caches (set before any compiler loads).
os.environ.setdefault("CUDAJIT_CACHE", "0")
os.environ.setdefault("CUDA_TILE_CACHE_DIR", "off")
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="bench_tiles_triton_"))

# ---------------------------------------------------------------------------
# The tile kernels: one source for cuda.tile and cudajit.tile. `ct` is bound by
# load_tile_impl() before this module body runs; run as a script, it is None.
# ---------------------------------------------------------------------------

ct = globals().get("ct")

if ct is not None:
    ConstInt = ct.Constant[int]

    def swizzle_2d(M, N, tm, tn, GROUP_SIZE_M):
        bid = ct.bid(0)
        num_bid_m = ct.cdiv(M, tm)
        num_bid_n = ct.cdiv(N, tn)
        num_bid_in_group = GROUP_SIZE_M * num_bid_n
        group_id = bid // num_bid_in_group
        first_bid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_bid_m - first_bid_m, GROUP_SIZE_M)
        bid_m = first_bid_m + (bid % group_size_m)
        bid_n = (bid % num_bid_in_group) // group_size_m
        return bid_m, bid_n

    @ct.kernel
    def matmul_kernel(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
        M = A.shape[0]
        N = B.shape[1]
        bidx, bidy = swizzle_2d(M, N, tm, tn, 8)
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        dtype = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
            b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
            acc = ct.mma(a, b, acc)
        ct.store(C, index=(bidx, bidy), tile=ct.astype(acc, C.dtype))

    @ct.kernel
    def softmax_kernel(X, Y, TN: ConstInt):
        row = ct.bid(0)
        t = ct.load(X, index=(row, 0), shape=(1, TN), padding_mode=ct.PaddingMode.NEG_INF)
        e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
        ct.store(Y, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))

    @ct.kernel
    def layernorm_kernel(X, W, B, Y, eps, TN: ConstInt):
        row = ct.bid(0)
        N = X.shape[1]
        x = ct.load(X, index=(row, 0), shape=(1, TN), padding_mode=ct.PaddingMode.ZERO)
        mean = ct.sum(x, axis=1, keepdims=True) / N
        xc = ct.where(ct.arange(TN, dtype=ct.int32) < N, x - mean, 0)
        rstd = ct.rsqrt(ct.sum(xc * xc, axis=1, keepdims=True) / N + eps)
        w = ct.load(W, index=(0,), shape=(TN,), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(0,), shape=(TN,), padding_mode=ct.PaddingMode.ZERO)
        ct.store(Y, index=(row, 0), tile=xc * rstd * w + b)

    @ct.kernel
    def segment_sums(x, out, TILE: ct.Constant[int]):
        seg = ct.bid(0)
        t = ct.load(x, index=(seg, 0), shape=(1, TILE))
        ct.store(out, index=(seg,), tile=ct.sum(t, axis=1))


# ---------------------------------------------------------------------------
# The SIMT peer of the segmented sum (bench_cub.py's): `cuda` is cudajit.
# ---------------------------------------------------------------------------

TPB = 256


def segment_sums_block(x, out):
    seg = cuda.blockIdx.x  # noqa: F821
    acc = np.float32(0.0)  # noqa: F821
    for i in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):  # noqa: F821
        acc += x[seg, i]
    total = cuda.block.sum(acc)  # noqa: F821
    if cuda.threadIdx.x == 0:  # noqa: F821
        out[seg] = total


# ---------------------------------------------------------------------------
# Triton kernels (the tutorials', fixed configurations)
# ---------------------------------------------------------------------------


def triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def tr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, TF32: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            if TF32:
                acc = tl.dot(a, b, acc, input_precision="tf32")
            else:
                acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = acc.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    @triton.jit
    def tr_softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * in_stride + offs, mask=offs < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)

    @triton.jit
    def tr_layernorm(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        Y += row * stride
        X += row * stride
        _mean = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        mean = tl.sum(_mean, axis=0) / N
        _var = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
            x = tl.where(cols < N, x - mean, 0.)
            _var += x * x
        rstd = 1 / tl.sqrt(tl.sum(_var, axis=0) / N + eps)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            mask = cols < N
            w = tl.load(W + cols, mask=mask)
            b = tl.load(B + cols, mask=mask)
            x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
            tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)

    return triton, tr_matmul, tr_softmax, tr_layernorm


# ---------------------------------------------------------------------------
# Loading the implementations
# ---------------------------------------------------------------------------

_load_count = [0]


def short_reason(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    first = text[0] if text else type(e).__name__
    return first[:110]


def load_tile_impl(name: str):
    """This file loaded again as a module whose global `ct` is `name` (cuda.tile or
    cudajit.tile): the kernels above, compiled by that implementation. A fresh
    load gives fresh kernel objects (no in-memory compile cache)."""
    ct_mod = importlib.import_module(name)
    _load_count[0] += 1
    mod_name = f"_bench_tiles_{name.replace('.', '_')}_{_load_count[0]}"
    spec = importlib.util.spec_from_file_location(mod_name, os.path.abspath(__file__))
    mod = importlib.util.module_from_spec(spec)
    mod.ct = ct_mod
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return mod


class Impl:
    def __init__(self, name, obj=None, reason=None):
        self.name, self.obj, self.reason = name, obj, reason


def try_load(name, loader):
    try:
        return Impl(name, loader())
    except Exception as e:  # noqa: BLE001  (a missing competitor is a cell, not a crash)
        return Impl(name, None, short_reason(e))


# ---------------------------------------------------------------------------
# Timing and checking
# ---------------------------------------------------------------------------


def time_ms(torch, fn, reps, batch, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


class Cell:
    def __init__(self, ms=None, text=None, work=None, unit=None):
        self.ms, self.text, self.work, self.unit = ms, text, work, unit

    def render(self, fastest):
        if self.ms is None:
            return self.text
        rate = self.work / (self.ms * 1e-3) / 1e12 if self.unit == "TFLOP/s" else \
            self.work / (self.ms * 1e-3) / 1e9
        rel = f" {fastest / self.ms:.2f}x" if fastest else ""
        extra = f" {self.text}" if self.text else ""
        return f"{self.ms:.3f} ms {rate:6.1f} {self.unit}{rel}{extra}"


def measure(torch, name, impl_ok, run, check, work, unit, reps, batch):
    """run(): one launch; check(): None or an error text (after one run)."""
    if not impl_ok[0]:
        return Cell(text=f"n/a ({impl_ok[1]})")
    try:
        run()
        torch.cuda.synchronize()
        err = check()
        if err:
            return Cell(text=f"WRONG ({err})")
        return Cell(ms=time_ms(torch, run, reps, batch), work=work, unit=unit)
    except Exception as e:  # noqa: BLE001
        if os.environ.get("BENCH_TILES_TRACEBACK"):
            traceback.print_exc()
        return Cell(text=f"n/a ({short_reason(e)})")


def close_to(torch, got, want, rtol, atol):
    got = got.float()
    want = want.float()
    if torch.isnan(got).any():
        return f"{int(torch.isnan(got).sum())} NaN"
    diff = (got - want).abs()
    bad = diff > atol + rtol * want.abs()
    if bad.any():
        return f"max err {diff.max().item():.3g}"
    return None


# ---------------------------------------------------------------------------
# The rows
# ---------------------------------------------------------------------------


def tile_launch(torch, impl, kernel_name, grid, args):
    kernel = getattr(impl.obj, kernel_name)
    ctm = impl.obj.ct
    stream = torch.cuda.current_stream()

    def run():
        ctm.launch(stream, grid, kernel, args)
    return run


def row_matmul(torch, impls, triton_impl, dtype_name, size, reps):
    M = N = K = size
    tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[dtype_name]
    g = torch.Generator(device="cuda").manual_seed(0)
    A = torch.randn((M, K), device="cuda", dtype=tdt, generator=g)
    B = torch.randn((K, N), device="cuda", dtype=tdt, generator=g)
    flops = 2.0 * M * N * K
    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    try:
        ref = (A.double() @ B.double())
        mag = (A.double().abs() @ B.double().abs())
        tol_rel = {"fp16": 2e-3, "bf16": 8e-3, "tf32": 4e-3}[dtype_name]

        def checker(C):
            def check():
                d = (C.double() - ref).abs()
                if torch.isnan(C).any():
                    return "NaN"
                lim = tol_rel * mag + 8e-3 * ref.abs() + 1e-3
                return None if bool((d <= lim).all()) else f"max err {d.max().item():.3g}"
            return check

        cells = {}
        C = torch.empty((M, N), device="cuda", dtype=tdt)
        cells["torch"] = measure(torch, "torch", (True, None), lambda: torch.matmul(A, B, out=C),
                                 checker(C), flops, "TFLOP/s", reps, 5)
        if triton_impl.obj is not None:
            triton, tr_matmul = triton_impl.obj[0], triton_impl.obj[1]
            bm, bn, bk = (128, 256, 64) if dtype_name != "tf32" else (128, 128, 32)
            Ct = torch.empty((M, N), device="cuda", dtype=tdt)
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

            def run_tr():
                tr_matmul[grid](A, B, Ct, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                Ct.stride(0), Ct.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                TF32=dtype_name == "tf32", num_warps=8, num_stages=3)
            cells["triton"] = measure(torch, "triton", (True, None), run_tr, checker(Ct), flops,
                                      "TFLOP/s", reps, 5)
        else:
            cells["triton"] = Cell(text=f"n/a ({triton_impl.reason})")
        tm, tn, tk = TILE_MM16 if dtype_name != "tf32" else TILE_MM32
        for impl in impls:
            Cx = torch.empty((M, N), device="cuda", dtype=tdt)
            ok = (impl.obj is not None, impl.reason)
            run = tile_launch(torch, impl, "matmul_kernel", ((M + tm - 1) // tm * ((N + tn - 1) // tn),),
                              (A, B, Cx, tm, tn, tk)) if impl.obj is not None else None
            cells[impl.name] = measure(torch, impl.name, ok, run, checker(Cx), flops, "TFLOP/s", reps, 5)
        return cells
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32


def row_softmax(torch, impls, triton_impl, rows, cols, reps):
    g = torch.Generator(device="cuda").manual_seed(1)
    X = torch.randn((rows, cols), device="cuda", dtype=torch.float32, generator=g) * 3
    ref = torch.softmax(X.double(), dim=1)
    nbytes = 2.0 * X.numel() * 4
    TN = 1 << (cols - 1).bit_length()
    cells = {}

    def chk(Y):
        return lambda: close_to(torch, Y, ref, 1e-5, 1e-7)
    Y0 = [None]                                 # torch.softmax allocates its output

    def run_torch():
        Y0[0] = torch.softmax(X, dim=1)
    cells["torch"] = measure(torch, "torch", (True, None), run_torch,
                             lambda: close_to(torch, Y0[0], ref, 1e-5, 1e-7), nbytes, "GB/s", reps, 10)
    if triton_impl.obj is not None:
        tr_softmax = triton_impl.obj[2]
        Yt = torch.empty_like(X)
        nw = 8 if TN <= 4096 else 16

        def run_tr():
            tr_softmax[(rows,)](Yt, X, X.stride(0), Yt.stride(0), cols, BLOCK=TN, num_warps=nw)
        cells["triton"] = measure(torch, "triton", (True, None), run_tr, chk(Yt), nbytes, "GB/s", reps, 10)
    else:
        cells["triton"] = Cell(text=f"n/a ({triton_impl.reason})")
    for impl in impls:
        Yx = torch.empty_like(X)
        run = tile_launch(torch, impl, "softmax_kernel", (rows,), (X, Yx, TN)) if impl.obj else None
        cells[impl.name] = measure(torch, impl.name, (impl.obj is not None, impl.reason), run, chk(Yx),
                                   nbytes, "GB/s", reps, 10)
    return cells


def row_layernorm(torch, impls, triton_impl, rows, cols, reps):
    import torch.nn.functional as F
    g = torch.Generator(device="cuda").manual_seed(2)
    X = torch.randn((rows, cols), device="cuda", dtype=torch.float32, generator=g) * 2 + 1
    W = torch.randn((cols,), device="cuda", dtype=torch.float32, generator=g)
    Bv = torch.randn((cols,), device="cuda", dtype=torch.float32, generator=g)
    eps = 1e-5
    ref = F.layer_norm(X.double(), (cols,), W.double(), Bv.double(), eps)
    nbytes = 2.0 * X.numel() * 4
    TN = 1 << (cols - 1).bit_length()
    cells = {}

    def chk(Y):
        return lambda: close_to(torch, Y, ref, 1e-4, 1e-4)
    Y0 = [None]

    def run_torch():
        Y0[0] = F.layer_norm(X, (cols,), W, Bv, eps)
    cells["torch"] = measure(torch, "torch", (True, None), run_torch,
                             lambda: close_to(torch, Y0[0], ref, 1e-4, 1e-4), nbytes, "GB/s", reps, 10)
    if triton_impl.obj is not None:
        tr_layernorm = triton_impl.obj[3]
        Yt = torch.empty_like(X)
        block = min(65536 // 4, TN)
        nw = min(max(block // 256, 1), 8)

        def run_tr():
            tr_layernorm[(rows,)](X, Yt, W, Bv, X.stride(0), cols, eps, BLOCK=block, num_warps=nw)
        cells["triton"] = measure(torch, "triton", (True, None), run_tr, chk(Yt), nbytes, "GB/s", reps, 10)
    else:
        cells["triton"] = Cell(text=f"n/a ({triton_impl.reason})")
    for impl in impls:
        Yx = torch.empty_like(X)
        run = tile_launch(torch, impl, "layernorm_kernel", (rows,), (X, W, Bv, Yx, eps, TN)) \
            if impl.obj else None
        cells[impl.name] = measure(torch, impl.name, (impl.obj is not None, impl.reason), run, chk(Yx),
                                   nbytes, "GB/s", reps, 10)
    return cells


def row_segsum(torch, impls, simt_impl, segments, length, reps):
    g = torch.Generator(device="cuda").manual_seed(3)
    X = torch.randn((segments, length), device="cuda", dtype=torch.float32, generator=g)
    ref = X.double().sum(dim=1)
    nbytes = X.numel() * 4.0 + segments * 4.0
    tol = 1e-5 * X.abs().double().sum(dim=1).max().item()

    def chk(out):
        return lambda: close_to(torch, out, ref, 0, tol)
    cells = {}
    S0 = [None]

    def run_torch():
        S0[0] = X.sum(dim=1)
    cells["torch"] = measure(torch, "torch", (True, None), run_torch,
                             lambda: close_to(torch, S0[0], ref, 0, tol), nbytes, "GB/s", reps, 10)
    if simt_impl.obj is not None:
        kern = simt_impl.obj
        So = torch.empty(segments, device="cuda", dtype=torch.float32)
        cells["cudajit block.sum"] = measure(torch, "simt", (True, None),
                                             lambda: kern[segments, TPB](X, So), chk(So), nbytes, "GB/s",
                                             reps, 10)
    else:
        cells["cudajit block.sum"] = Cell(text=f"n/a ({simt_impl.reason})")
    try:
        cub_kernel, cp = cub_segment_sums()
        Xc, Sc = cp.asarray(X), cp.empty(segments, dtype=cp.float32)
        So_c = torch.as_tensor(Sc, device="cuda")
        cells["CUB C++"] = measure(torch, "cub", (True, None),
                                   lambda: cub_kernel((segments,), (TPB,), (Xc, Sc, np_int32(length))),
                                   chk(So_c), nbytes, "GB/s", reps, 10)
    except Exception as e:  # noqa: BLE001  (no CuPy, no CCCL headers: a note, not a crash)
        cells["CUB C++"] = Cell(text=f"n/a ({type(e).__name__}: {str(e).splitlines()[0][:60]})")
    TILE = 1 << (length - 1).bit_length()
    for impl in impls:
        Sx = torch.empty(segments, device="cuda", dtype=torch.float32)
        run = tile_launch(torch, impl, "segment_sums", (segments,), (X, Sx, TILE)) if impl.obj else None
        cells[impl.name] = measure(torch, impl.name, (impl.obj is not None, impl.reason), run, chk(Sx),
                                   nbytes, "GB/s", reps, 10)
    return cells


CUB_SEGMENT_SUMS = r"""
#include <cub/block/block_reduce.cuh>
// The block.sum kernel's algorithm in CUDA C++: a strided per-thread sum,
// then cub::BlockReduce over the block (TPB threads).
extern "C" __global__ void __launch_bounds__(TPB) segment_sums_cub(const float* x, float* out, int length) {
    using Reduce = cub::BlockReduce<float, TPB>;
    __shared__ typename Reduce::TempStorage temp;
    const float* row = x + (size_t)blockIdx.x * length;
    float acc = 0.0f;
    for (int i = threadIdx.x; i < length; i += TPB) acc += row[i];
    float total = Reduce(temp).Sum(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
"""


def cub_segment_sums():
    """The CUB C++ peer of the segmented sum, compiled by NVRTC through CuPy
    with the toolkit's CCCL headers: (kernel, cupy)."""
    import cupy as cp
    root = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    includes = [f"-I{d}" for d in (f"{root}/include/cccl", f"{root}/include") if os.path.isdir(d)]
    mod = cp.RawModule(code=CUB_SEGMENT_SUMS, options=("-std=c++17", f"-DTPB={TPB}", *includes),
                       backend="nvrtc")
    return mod.get_function("segment_sums_cub"), cp


def np_int32(v):
    import numpy
    return numpy.int32(v)


def row_firstcall(torch, tile_names, triton_impl, size):
    """Compile + launch + wait of a kernel object never launched before, no disk cache."""
    M = N = K = size
    A = torch.randn((M, K), device="cuda", dtype=torch.float16)
    B = torch.randn((K, N), device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    cells = {"torch": Cell(text="-")}
    if triton_impl.obj is not None:
        try:
            triton, tr_matmul = triton_impl.obj[0], triton_impl.obj[1]
            fresh_dir = tempfile.mkdtemp(prefix="bench_tiles_triton_first_")
            os.environ["TRITON_CACHE_DIR"] = fresh_dir
            try:
                triton.knobs.cache.dir = fresh_dir
            except Exception:  # noqa: BLE001  (older Triton: the environment is enough)
                pass
            fresh = triton.jit(tr_matmul.fn)
            C = torch.empty((M, N), device="cuda", dtype=torch.float16)
            grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
            t0 = time.perf_counter()
            fresh[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                        C.stride(0), C.stride(1), BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8,
                        TF32=False, num_warps=8, num_stages=3)
            torch.cuda.synchronize()
            cells["triton"] = Cell(text=f"{(time.perf_counter() - t0) * 1e3:.0f} ms")
        except Exception as e:  # noqa: BLE001
            cells["triton"] = Cell(text=f"n/a ({short_reason(e)})")
    else:
        cells["triton"] = Cell(text=f"n/a ({triton_impl.reason})")
    for name, label in tile_names:
        try:
            mod = load_tile_impl(name)
            C = torch.empty((M, N), device="cuda", dtype=torch.float16)
            grid = ((M + 127) // 128 * ((N + 255) // 256),)
            stream = torch.cuda.current_stream()
            t0 = time.perf_counter()
            mod.ct.launch(stream, grid, mod.matmul_kernel, (A, B, C, 128, 256, 64))
            torch.cuda.synchronize()
            cells[label] = Cell(text=f"{(time.perf_counter() - t0) * 1e3:.0f} ms")
        except Exception as e:  # noqa: BLE001
            cells[label] = Cell(text=f"n/a ({short_reason(e)})")
    return cells


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

TILE_MM16 = (128, 256, 64)      # the tile kernel's (tm, tn, tk): 16-bit inputs (--mm-tiles)
TILE_MM32 = (256, 128, 32)      # tf32 (--mm-tiles-tf32)

ROWS = ["fp16", "bf16", "tf32", "softmax", "layernorm", "segsum", "firstcall"]
COLUMNS = ["torch", "triton", "cuda.tile", "cudajit.tile", "cudajit block.sum", "CUB C++"]


def print_table(results, titles):
    used = [c for c in COLUMNS if any(c in cells for cells in results.values())]
    rendered = {}
    for row, cells in results.items():
        times = [c.ms for c in cells.values() if c.ms is not None]
        fastest = min(times) if times else None
        rendered[row] = {c: (cells[c].render(fastest) if c in cells else "") for c in used}
    wrow = max(len(titles[r]) for r in results) if results else 10
    widths = {c: max([len(c)] + [len(rendered[r][c]) for r in results]) for c in used}
    head = f"{'':{wrow}} | " + " | ".join(f"{c:{widths[c]}}" for c in used)
    print(head)
    print("-" * len(head))
    for row in results:
        print(f"{titles[row]:{wrow}} | " + " | ".join(f"{rendered[row][c]:{widths[c]}}" for c in used))


def speedup(results, row, a, b):
    """time(b) / time(a): how fast a is relative to b (> 1: a faster)."""
    cells = results.get(row, {})
    ca, cb = cells.get(a), cells.get(b)
    if ca is None or cb is None or ca.ms is None or cb.ms is None:
        return None
    return cb.ms / ca.ms


def print_targets(results):
    checks = [
        ("fp16", "cudajit.tile", "torch", 0.80), ("fp16", "cudajit.tile", "triton", 1.00),
        ("bf16", "cudajit.tile", "torch", 0.80), ("bf16", "cudajit.tile", "triton", 1.00),
        ("tf32", "cudajit.tile", "torch", 0.70),
        ("softmax", "cudajit.tile", "torch", 1.00), ("softmax", "cudajit.tile", "triton", 1.00),
        ("layernorm", "cudajit.tile", "torch", 1.00), ("layernorm", "cudajit.tile", "triton", 1.00),
        ("segsum", "cudajit.tile", "cudajit block.sum", 0.97), ("segsum", "cudajit.tile", "CUB C++", 0.97),
    ]
    print("\nissue 11 targets (speed of cudajit.tile relative to the peer; >= target passes):")
    for row, a, b, target in checks:
        if row not in results:
            continue
        s = speedup(results, row, a, b)
        verdict = "n/a" if s is None else ("ok" if s >= target else "BELOW")
        val = "  -  " if s is None else f"{s:5.2f}"
        print(f"  {row:9s} {a} vs {b:18s} {val}x  (target >= {target:.2f})  {verdict}")
    s = speedup(results, "segsum", "cuda.tile", "cudajit.tile")
    if s is not None:
        print(f"  (segsum: cuda.tile runs at {s:.2f}x cudajit.tile)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, fewer repetitions")
    p.add_argument("--only", default="", help=f"comma-separated rows among {','.join(ROWS)}")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--json", default=None)
    p.add_argument("--mm-tiles", default="128x256x64", help="tm x tn x tk of the tile matmul, 16-bit inputs")
    p.add_argument("--mm-tiles-tf32", default="256x128x32", help="tm x tn x tk of the tile matmul, tf32")
    a = p.parse_args(argv)
    global TILE_MM16, TILE_MM32
    TILE_MM16 = tuple(int(v) for v in a.mm_tiles.split("x"))
    TILE_MM32 = tuple(int(v) for v in a.mm_tiles_tf32.split("x"))
    only = [s.strip() for s in a.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in ROWS]
    if unknown:
        p.error(f"unknown row(s) {unknown}; rows: {ROWS}")
    rows = only or ROWS

    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except Exception as e:  # noqa: BLE001
        print(f"bench_tiles needs PyTorch with a CUDA GPU: {short_reason(e)}")
        return 0
    torch.cuda.init()
    torch.ones(1, device="cuda")                # context up: a warm process

    if a.quick:
        mm, sm_rows, sm_cols, seg, seglen, reps = 2048, 2048, 4096, 8192, 1024, a.reps or 5
    else:
        mm, sm_rows, sm_cols, seg, seglen, reps = 4096, 8192, 4096, 65536, 1024, a.reps or 10

    impls = [try_load("cuda.tile", lambda: load_tile_impl("cuda.tile")),
             try_load("cudajit.tile", lambda: load_tile_impl("cudajit.tile"))]
    triton_impl = try_load("triton", triton_kernels)

    def load_simt():
        import numpy
        import cudajit
        if not cudajit.is_available():
            raise RuntimeError("cudajit.is_available() is False")
        glb = dict(segment_sums_block.__globals__, cuda=cudajit, np=numpy)
        return cudajit.jit(type(segment_sums_block)(segment_sums_block.__code__, glb, "segment_sums_block"))
    simt_impl = try_load("cudajit block.sum", load_simt)

    props = torch.cuda.get_device_properties(0)
    versions = [f"torch {torch.__version__}"]
    if triton_impl.obj is not None:
        versions.append(f"triton {triton_impl.obj[0].__version__}")
    for impl in impls:
        if impl.obj is not None:
            versions.append(f"{impl.name} {getattr(impl.obj.ct, '__version__', '?')}")
    print(f"{props.name}, {props.multi_processor_count} SMs; {', '.join(versions)}")
    for impl in impls + [triton_impl, simt_impl]:
        if impl.obj is None:
            print(f"  {impl.name}: n/a ({impl.reason})")

    t16 = "x".join(map(str, TILE_MM16))
    titles = {"fp16": f"fp16 matmul {mm}^3 (f32 acc; tile {t16})", "bf16": f"bf16 matmul {mm}^3 (f32 acc; tile {t16})",
              "tf32": f"tf32 matmul {mm}^3 (tile {'x'.join(map(str, TILE_MM32))})", "softmax": f"softmax {sm_rows}x{sm_cols} f32",
              "layernorm": f"layernorm {sm_rows}x{sm_cols} f32",
              "segsum": f"segment sum {seg}x{seglen} f32", "firstcall": f"first call, fp16 matmul {mm}^3"}
    results = {}
    for row in rows:
        t0 = time.perf_counter()
        if row in ("fp16", "bf16", "tf32"):
            results[row] = row_matmul(torch, impls, triton_impl, row, mm, reps)
        elif row == "softmax":
            results[row] = row_softmax(torch, impls, triton_impl, sm_rows, sm_cols, reps)
        elif row == "layernorm":
            results[row] = row_layernorm(torch, impls, triton_impl, sm_rows, sm_cols, reps)
        elif row == "segsum":
            results[row] = row_segsum(torch, impls, simt_impl, seg, seglen, reps)
        elif row == "firstcall":
            results[row] = row_firstcall(torch, [("cudajit.tile", "cudajit.tile"), ("cuda.tile", "cuda.tile")],
                                         triton_impl, mm)
        print(f"  [{row} done in {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)

    print()
    print_table(results, titles)
    print("\ncells: time per launch, throughput, speed relative to the row's fastest (1.00x = fastest);"
          "\nfirst call: compile + launch + wait, warm process, no disk cache")
    print_targets(results)
    if a.json:
        payload = {row: {c: {"ms": cell.ms, "text": cell.text} for c, cell in cells.items()}
                   for row, cells in results.items()}
        with open(a.json, "w") as f:
            json.dump({"device": props.name, "quick": a.quick, "results": payload}, f, indent=2)
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
