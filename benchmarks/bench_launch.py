"""Launch overhead of a 3-argument kernel: wall time per launch, back to back.

    python benchmarks/bench_launch.py [--calls 200] [--runs 200] [--out launch.json]

Each timed run enqueues --calls launches of a [1, 32] kernel, then waits for
the GPU outside the timing; the figure is the median over --runs of the wall
time per launch. --calls stays well below the driver's queue of pending
launches: once that queue is full every launch waits for the GPU to retire
one, and the loop would time the GPU's kernel throughput instead of the
host's launch cost (the 5.8 us "floor" of an earlier version of this file
came from 2000 launches per run).

Columns (each skipped with a note when its library is missing):
  floor_c        cuLaunchKernel in a C++ loop, parameters packed once
                 (cudajit's Dispatcher._launch_loop: no Python per launch)
  floor          cuLaunchKernel from Python through cuda.bindings, every
                 argument prebuilt (function handle, params address): the
                 floor the issue's targets refer to
  cupy_raw       the same kernel in CUDA C++, CuPy RawKernel, CuPy arrays
  cudajit        kernel[1, 32](x, y, n) with cudajit device arrays
  cudajit+cupy   ... with CuPy arrays
  cudajit+torch  ... with PyTorch CUDA tensors
  numba, numba+cupy, numba+torch   numba-cuda, the same three ways

Targets (printed PASS/FAIL): cudajit <= 1.5x floor; cudajit+cupy and
cudajit+torch <= 2.5x floor and faster than cupy_raw; numba >= 20x slower
than cudajit for each kind of array.
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

N = 32   # elements the tiny kernel touches

CPP_SOURCE = r"""
extern "C" __global__ void copy3(const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""


def copy3(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i]


def jit_with(module, fn=copy3):
    """`fn` compiled by `module` (cudajit or numba.cuda): a copy of the
    function whose global `cuda` is that module (ported code's one change)."""
    glb = {"cuda": module, "__name__": __name__, "__builtins__": __builtins__}
    return module.jit(type(fn)(fn.__code__, glb, fn.__name__))


def load_torch():
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        C.note(f"PyTorch columns skipped: cannot import torch ({e})")
        return None
    if not torch.cuda.is_available():
        C.note("PyTorch columns skipped: torch.cuda.is_available() is False")
        return None
    return torch


def per_launch(fn, sync, calls: int, runs: int, warmup: int = 500) -> float:
    """Median over `runs` of the wall seconds per call of `calls` calls."""
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        samples.append((t1 - t0) / calls)
    return statistics.median(samples)


MAX_CALLS = 500   # launches per timed run that stay clear of the driver's pending-launch queue


def run(calls: int, runs: int, raw=None, cj=None, nb=None, cp=None, torch=None):
    if calls > MAX_CALLS:
        C.note(f"launches per timed run capped at {MAX_CALLS} (asked {calls}): more fill the "
               "driver's queue and time the GPU instead of the launch")
        calls = MAX_CALLS
    rng = np.random.default_rng()
    host = rng.standard_normal(N).astype(np.float32)
    results = {}

    def check(y):
        assert np.array_equal(np.asarray(y), host), "the kernel did not copy"

    if cj is not None:
        k = jit_with(cj)
        x, y = cj.to_device(host), cj.to_device(np.zeros(N, np.float32))
        k[1, 32](x, y, N)
        check(y.copy_to_host())
        key = (1, 32)
        k._launch_loop(key, 1000, x, y, N)
        cj.synchronize()
        samples = []
        for _ in range(runs):
            samples.append(k._launch_loop(key, calls, x, y, N) / calls)
            cj.synchronize()
        results["floor_c"] = statistics.median(samples)

    if raw is not None:
        f = raw.compile(CPP_SOURCE, ["copy3"])["copy3"]
        dx = C._check(raw.driver.cuMemAlloc(N * 4))
        dy = C._check(raw.driver.cuMemAlloc(N * 4))
        params = C.PackedParams(ctypes.c_void_p(int(dx)), ctypes.c_void_p(int(dy)), ctypes.c_longlong(N))
        launch, addr = raw.driver.cuLaunchKernel, params.address
        assert int(launch(f, 1, 1, 1, 32, 1, 1, 0, 0, addr, 0)[0]) == 0
        results["floor"] = per_launch(lambda: launch(f, 1, 1, 1, 32, 1, 1, 0, 0, addr, 0),
                                      raw.synchronize, calls, runs)

    if cp is not None:
        kern = cp.RawKernel(CPP_SOURCE, "copy3")
        x, y = cp.asarray(host), cp.zeros(N, cp.float32)
        n = np.int64(N)
        kern((1,), (32,), (x, y, n))
        check(cp.asnumpy(y))
        results["cupy_raw"] = per_launch(lambda: kern((1,), (32,), (x, y, n)),
                                         cp.cuda.Device().synchronize, calls, runs)

    if cj is not None:
        k = jit_with(cj)
        x, y = cj.to_device(host), cj.to_device(np.zeros(N, np.float32))
        k[1, 32](x, y, N)
        check(y.copy_to_host())
        results["cudajit"] = per_launch(lambda: k[1, 32](x, y, N), cj.synchronize, calls, runs)
        if cp is not None:
            cx, cy = cp.asarray(host), cp.zeros(N, cp.float32)
            k[1, 32](cx, cy, N)
            cp.cuda.Device().synchronize()
            check(cp.asnumpy(cy))
            results["cudajit+cupy"] = per_launch(lambda: k[1, 32](cx, cy, N),
                                                 cp.cuda.Device().synchronize, calls, runs)
        if torch is not None:
            tx = torch.from_numpy(host).cuda()
            ty = torch.zeros(N, device="cuda")
            k[1, 32](tx, ty, N)
            torch.cuda.synchronize()
            check(ty.cpu().numpy())
            results["cudajit+torch"] = per_launch(lambda: k[1, 32](tx, ty, N),
                                                  torch.cuda.synchronize, calls, runs)

    if nb is not None:
        k = jit_with(nb)
        x, y = nb.to_device(host), nb.to_device(np.zeros(N, np.float32))
        k[1, 32](x, y, N)
        check(y.copy_to_host())
        results["numba"] = per_launch(lambda: k[1, 32](x, y, N), nb.synchronize, calls, runs)
        if cp is not None:
            cx, cy = cp.asarray(host), cp.zeros(N, cp.float32)
            k[1, 32](cx, cy, N)
            nb.synchronize()
            check(cp.asnumpy(cy))
            results["numba+cupy"] = per_launch(lambda: k[1, 32](cx, cy, N), nb.synchronize,
                                               calls, runs)
        if torch is not None:
            tx = torch.from_numpy(host).cuda()
            ty = torch.zeros(N, device="cuda")
            k[1, 32](tx, ty, N)
            torch.cuda.synchronize()
            check(ty.cpu().numpy())
            results["numba+torch"] = per_launch(lambda: k[1, 32](tx, ty, N),
                                                torch.cuda.synchronize, calls, runs)
    return results


ORDER = ("floor_c", "floor", "cupy_raw", "cudajit", "cudajit+cupy", "cudajit+torch", "numba",
         "numba+cupy", "numba+torch")


def targets(r: dict) -> list:
    """(name, measured ratio, limit, passed) for each target the data allows."""
    out = []
    floor, raw = r.get("floor"), r.get("cupy_raw")

    def add(name, value, limit, ok):
        if value is not None:
            out.append((name, value, limit, bool(ok)))

    if floor:
        v = C.ratio(r.get("cudajit"), floor)
        add("cudajit <= 1.5x floor", v, 1.5, v is not None and v <= 1.5)
        for kind in ("cupy", "torch"):
            v = C.ratio(r.get(f"cudajit+{kind}"), floor)
            add(f"cudajit+{kind} <= 2.5x floor", v, 2.5, v is not None and v <= 2.5)
    if raw:
        for kind in ("cupy", "torch"):
            v = C.ratio(r.get(f"cudajit+{kind}"), raw)
            add(f"cudajit+{kind} faster than CuPy RawKernel", v, 1.0, v is not None and v < 1.0)
    for ours, theirs in (("cudajit", "numba"), ("cudajit+cupy", "numba+cupy"),
                         ("cudajit+torch", "numba+torch")):
        v = C.ratio(r.get(theirs), r.get(ours))
        add(f"{theirs} >= 20x {ours}", v, 20.0, v is not None and v >= 20.0)
    return out


def report(results: dict) -> dict:
    floor, floor_c, raw = results.get("floor"), results.get("floor_c"), results.get("cupy_raw")
    table = C.Table("Launch overhead of a [1, 32] launch of a 3-argument kernel (wall time per "
                    "launch, median)",
                    ["launcher", "us/launch", "x floor", "x floor_c", "x CuPy RawKernel"])
    out = {}
    for name in ORDER:
        t = results.get(name)
        row = {"us_per_launch": None if t is None else t * 1e6,
               "ratio_vs_floor": C.ratio(t, floor), "ratio_vs_floor_c": C.ratio(t, floor_c),
               "ratio_vs_cupy_raw": C.ratio(t, raw)}
        out[name] = row
        table.add(name, row["us_per_launch"], row["ratio_vs_floor"], row["ratio_vs_floor_c"],
                  row["ratio_vs_cupy_raw"])
    print(table.render())
    checks = targets(results)
    for name, value, limit, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {value:.2f}")
    out["targets"] = [{"target": n, "ratio": v, "limit": l, "pass": ok} for n, v, l, ok in checks]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200, help="launches per timed run (keep it "
                    "below the driver's queue of pending launches, about 1000)")
    ap.add_argument("--runs", type=int, default=200, help="timed runs (median)")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    raw = C.load_raw_cuda()
    cj, nb, cp, torch = C.load_cudajit(), C.load_numba(), C.load_cupy(), load_torch()
    results = run(a.calls, a.runs, raw, cj, nb, cp, torch)
    payload = {"environment": C.environment(raw, cj, nb, cp), "calls": a.calls, "runs": a.runs,
               "launch": report(results)}
    if torch is not None:
        payload["environment"]["torch"] = torch.__version__
    C.write_json(a.out, payload)
    return payload


if __name__ == "__main__":
    main()
