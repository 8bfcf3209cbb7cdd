"""Kernel speed: five kernels through cudajit, numba-cuda and CUDA C++ in one run.

    python benchmarks/bench_kernels.py [--runs 50] [--out kernels.json] [--scale 1.0]

Kernels (float32 unless said): axpy; a histogram with shared-memory atomics
(int32 input, 256 bins); a shared-tile matmul (16x16 tiles); a 5-point
stencil; a shared-memory tree reduction (`while w > 0: ... w //= 2`). The
Python source of each kernel is the same for cudajit and numba-cuda (its
global `cuda` is bound to one or the other); the CUDA C++ versions
(benchmarks/kernels_cpp/kernels.cu) are compiled by NVRTC through CuPy's
RawModule at full optimisation (NVRTC has no -O3 flag: -dopt=on and
-Xptxas -O3 spell out its default) for the device's arch.

Every result is checked against numpy first. Device time: CUDA events
around one launch, after a ~2 ms spin kernel so that the host's launch
overhead hides behind it (benchmarks/_common.py); median of --runs after
warm-up. The table gives each implementation's time and its ratio to CUDA
C++; cudajit's target is <= 1.03 on every kernel. The "cudajit LLVM" column is
the same kernel through backend="llvm" (LLVM's NVPTX back end, issue 16),
with its ratio to cudajit's default libNVVM route (target: within 3%).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402

TPB = 256
NBINS = 256          # == TPB: one bin per thread when clearing/flushing
TILE = 16
RED_BLOCKS = 1024    # grid of the grid-stride kernels (histogram, reduction)
HIST_BLOCKS = 1024
TARGET = 1.03

# ---------------------------------------------------------------------------
# The Python kernels (numba.cuda dialect; `cuda` is bound per implementation)
# ---------------------------------------------------------------------------


def axpy(a, x, y):
    i = cuda.grid(1)  # noqa: F821
    if i < x.size:
        y[i] = a * x[i] + y[i]


def hist_shared(x, hist):
    sh = cuda.shared.array(NBINS, dtype=np.int32)  # noqa: F821
    t = cuda.threadIdx.x  # noqa: F821
    sh[t] = 0
    cuda.syncthreads()  # noqa: F821
    i = cuda.grid(1)  # noqa: F821
    stride = cuda.gridsize(1)  # noqa: F821
    while i < x.size:
        cuda.atomic.add(sh, x[i], 1)  # noqa: F821
        i += stride
    cuda.syncthreads()  # noqa: F821
    cuda.atomic.add(hist, t, sh[t])  # noqa: F821


def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), dtype=np.float32)  # noqa: F821
    sB = cuda.shared.array((TILE, TILE), dtype=np.float32)  # noqa: F821
    x, y = cuda.grid(2)  # noqa: F821   x: column, y: row
    tx = cuda.threadIdx.x  # noqa: F821
    ty = cuda.threadIdx.y  # noqa: F821
    n = C.shape[0]
    acc = np.float32(0.0)
    for t in range(cuda.gridDim.x):  # noqa: F821
        k = t * TILE
        sA[ty, tx] = A[y, k + tx] if y < n and k + tx < n else np.float32(0.0)
        sB[ty, tx] = B[k + ty, x] if x < n and k + ty < n else np.float32(0.0)
        cuda.syncthreads()  # noqa: F821
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()  # noqa: F821
    if y < n and x < n:
        C[y, x] = acc


def stencil5(a, out):
    j, i = cuda.grid(2)  # noqa: F821   j: column (threadIdx.x), i: row
    m, n = a.shape
    if 0 < i < m - 1 and 0 < j < n - 1:
        out[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    elif i < m and j < n:
        out[i, j] = a[i, j]


def reduce_tree(x, partial):
    s = cuda.shared.array(TPB, dtype=np.float32)  # noqa: F821
    t = cuda.threadIdx.x  # noqa: F821
    i = cuda.grid(1)  # noqa: F821
    stride = cuda.gridsize(1)  # noqa: F821
    acc = np.float32(0.0)
    while i < x.size:
        acc += x[i]
        i += stride
    s[t] = acc
    cuda.syncthreads()  # noqa: F821
    w = TPB // 2
    while w > 0:
        if t < w:
            s[t] += s[t + w]
        cuda.syncthreads()  # noqa: F821
        w //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]  # noqa: F821


def jit_with(module, fn, **options):
    """fn compiled by `module` (cudajit or numba.cuda): a copy of the function
    whose global `cuda` is that module (a port's one change)."""
    glb = dict(fn.__globals__, cuda=module)
    return module.jit(type(fn)(fn.__code__, glb, fn.__name__), **options)


# ---------------------------------------------------------------------------
# Problems: inputs, launch shapes, numpy checks, C++ argument lists
# ---------------------------------------------------------------------------


class Problem:
    """One kernel: host inputs, the launch, the check, the C++ call."""

    def __init__(self, name, py_kernel, cpp_name, grid, block, host_args, outputs, check, cpp_args, bytes_moved):
        self.name, self.py_kernel, self.cpp_name = name, py_kernel, cpp_name
        self.grid, self.block = grid, block
        self.host_args, self.outputs, self.check = host_args, outputs, check
        self.cpp_args = cpp_args          # (device arrays list) -> C++ argument tuple
        self.bytes_moved = bytes_moved


def _g(n, b):
    return (n + b - 1) // b


def problems(rng, scale=1.0):
    ps = []
    n = int((1 << 24) * scale)
    a = np.float32(rng.uniform(0.5, 2.0))
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    ps.append(Problem(
        "axpy", axpy, "axpy", _g(n, TPB), TPB, [a, x, y], [2],
        lambda out, args: np.testing.assert_allclose(out[2], a * x + y, rtol=1e-5, atol=1e-5),
        lambda d: (a, d[1], d[2], np.int64(n)), 3 * 4 * n))

    nh = int((1 << 24) * scale)
    data = rng.integers(0, NBINS, nh).astype(np.int32)
    hist0 = np.zeros(NBINS, np.int32)
    ps.append(Problem(
        "histogram_shared_atomics", hist_shared, "hist_shared", HIST_BLOCKS, NBINS, [data, hist0], [1],
        lambda out, args: np.testing.assert_array_equal(out[1], np.bincount(data, minlength=NBINS)),
        lambda d: (d[0], np.int64(nh), d[1]), 4 * nh))

    m = max(TILE, int(2048 * scale ** 0.5) // TILE * TILE)
    A = rng.uniform(-1, 1, (m, m)).astype(np.float32)
    B = rng.uniform(-1, 1, (m, m)).astype(np.float32)
    Cm = np.full((m, m), np.nan, np.float32)
    ps.append(Problem(
        "matmul_shared_tiles", matmul_tiled, "matmul_tiled", (m // TILE, m // TILE), (TILE, TILE), [A, B, Cm], [2],
        lambda out, args: np.testing.assert_allclose(out[2], A.astype(np.float64) @ B, rtol=1e-3, atol=2e-3),
        lambda d: (d[0], d[1], d[2], np.int32(m)), 3 * 4 * m * m))

    s = max(64, int(4096 * scale ** 0.5))
    grid = rng.standard_normal((s, s)).astype(np.float32)
    sout = np.full((s, s), np.nan, np.float32)

    def stencil_check(out, args):
        want = grid.copy()
        want[1:-1, 1:-1] = np.float32(0.25) * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2]
                                               + grid[1:-1, 2:]) - grid[1:-1, 1:-1]
        np.testing.assert_allclose(out[1], want, rtol=1e-5, atol=1e-5)

    ps.append(Problem(
        "stencil_5point", stencil5, "stencil5", (_g(s, 32), _g(s, 8)), (32, 8), [grid, sout], [1], stencil_check,
        lambda d: (d[0], d[1], np.int32(s), np.int32(s)), 2 * 4 * s * s))

    nr = int((1 << 24) * scale)
    xr = rng.standard_normal(nr).astype(np.float32)
    part = np.full(RED_BLOCKS, np.nan, np.float32)
    ps.append(Problem(
        "reduction_shared_tree", reduce_tree, "reduce_tree", RED_BLOCKS, TPB, [xr, part], [1],
        lambda out, args: np.testing.assert_allclose(out[1].astype(np.float64).sum(), xr.astype(np.float64).sum(),
                                                     rtol=1e-4, atol=1e-1 * np.sqrt(nr) * 1e-3),
        lambda d: (d[0], np.int64(nr), d[1]), 4 * nr))
    return ps


# ---------------------------------------------------------------------------
# Implementations
# ---------------------------------------------------------------------------


def cpp_module(cp):
    src = (HERE / "kernels_cpp" / "kernels.cu").read_text()
    opts = ("-std=c++17", "-dopt=on", "-Xptxas=-O3", f"-DTPB={TPB}", f"-DNBINS={NBINS}", f"-DTILE={TILE}")
    return cp.RawModule(code=src, options=opts, backend="nvrtc")


def run_impl(impl, p: Problem, timer, runs, mod):
    """(median ms, None) or (None, reason). impl: ('cudajit'|'cudajit_llvm'|'numba', module) or
    ('cuda_cpp', cupy)."""
    name, lib = impl
    if name == "cuda_cpp":
        cp = lib
        dev = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in p.host_args]
        fn = mod.get_function(p.cpp_name)
        grid = p.grid if isinstance(p.grid, tuple) else (p.grid,)
        block = p.block if isinstance(p.block, tuple) else (p.block,)
        args = p.cpp_args(dev)

        def launch():
            fn(grid, block, args)

        def fetch():
            return [cp.asnumpy(d) if hasattr(d, "shape") else d for d in dev]

        def reset():
            for i in p.outputs:
                dev[i][...] = cp.asarray(p.host_args[i])
    else:
        k = jit_with(lib, p.py_kernel, **({"backend": "llvm"} if name == "cudajit_llvm" else {}))
        dev = [lib.to_device(a) if isinstance(a, np.ndarray) else a for a in p.host_args]
        cfg = k[p.grid, p.block]

        def launch():
            cfg(*dev)

        def fetch():
            return [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in dev]

        def reset():
            for i in p.outputs:
                dev[i].copy_to_device(p.host_args[i])

    launch()
    lib.synchronize() if name != "cuda_cpp" else lib.cuda.Device().synchronize()
    try:
        p.check(fetch(), p.host_args)
    except AssertionError as e:
        return None, f"wrong result: {str(e).splitlines()[0:3]}"
    reset()
    ms = C.median_device_ms(timer, launch, runs)
    return ms, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--scale", type=float, default=1.0, help="problem size factor (1.0: 16M elements, 2048^2, 4096^2)")
    ap.add_argument("--only", help="comma-separated kernel names")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    raw = C.load_raw_cuda()
    cj, nb, cp = C.load_cudajit(), C.load_numba(), C.load_cupy()
    env = C.environment(raw, cj, nb, cp)
    try:
        timer = C.DeviceTimer(raw, cp)
    except RuntimeError as e:
        C.note(f"kernels skipped: {e}")
        C.write_json(a.out, {"environment": env, "kernels": {}})
        return None
    mod = None
    if cp is not None:
        try:
            mod = cpp_module(cp)
        except Exception as e:  # noqa: BLE001
            C.note(f"CUDA C++ column skipped: NVRTC failed: {e}")
            cp = None
    impls = [(n, m) for n, m in (("cuda_cpp", cp), ("cudajit", cj), ("cudajit_llvm", cj), ("numba", nb))
             if m is not None]
    rng = np.random.default_rng()
    results = {}
    for p in problems(rng, a.scale):
        if a.only and p.name not in a.only.split(","):
            continue
        row = results.setdefault(p.name, {})
        for impl in impls:
            try:
                ms, err = run_impl(impl, p, timer, a.runs, mod)
            except Exception as e:  # noqa: BLE001  (a failing implementation is a note, not a crash)
                ms, err = None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if err:
                C.note(f"{p.name} / {impl[0]}: {err}")
            row[impl[0]] = {"ms": ms, "error": err}
        cpp = row.get("cuda_cpp", {}).get("ms")
        for impl_name, entry in row.items():
            entry["us"] = None if entry["ms"] is None else entry["ms"] * 1e3
            entry["GBps"] = None if entry["ms"] is None else p.bytes_moved / (entry["ms"] * 1e-3) / 1e9
            entry["ratio_vs_cuda_cpp"] = C.ratio(entry["ms"], cpp)
        if "cudajit_llvm" in row:
            row["cudajit_llvm"]["ratio_vs_cudajit_nvvm"] = C.ratio(row["cudajit_llvm"]["ms"],
                                                                   row.get("cudajit", {}).get("ms"))
    table = C.Table(f"device time per launch (median of {a.runs}; spin-kernel method), ratio to CUDA C++ (NVRTC)",
                    ["kernel", "CUDA C++ us", "cudajit us", "cudajit LLVM us", "numba us", "cudajit/C++",
                     "LLVM/libNVVM", "numba/C++", f"cudajit<= {TARGET}"])
    ok_all = True
    for name, row in results.items():
        g = lambda k, f: (row.get(k) or {}).get(f)  # noqa: E731
        r = g("cudajit", "ratio_vs_cuda_cpp")
        ok = None if r is None else r <= TARGET
        ok_all = ok_all and bool(ok)
        table.add(name, g("cuda_cpp", "us"), g("cudajit", "us"), g("cudajit_llvm", "us"), g("numba", "us"), r,
                  g("cudajit_llvm", "ratio_vs_cudajit_nvvm"), g("numba", "ratio_vs_cuda_cpp"),
                  "-" if ok is None else ("yes" if ok else "NO"))
    print(table.render())
    payload = {"environment": env, "runs": a.runs, "scale": a.scale, "target_ratio": TARGET,
               "all_within_target": ok_all, "kernels": results}
    C.write_json(a.out, payload)
    return payload


if __name__ == "__main__":
    main()
