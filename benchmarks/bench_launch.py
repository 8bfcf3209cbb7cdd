"""Launch overhead of a 3-argument kernel: wall time per launch, back to back.

    python benchmarks/bench_launch.py [--calls 2000] [--runs 30] [--out launch.json]

Columns (each skipped with a note if missing):
  floor      raw cuLaunchKernel through cuda.bindings, parameters pre-packed
  cuda_cpp   the same kernel in CUDA C++, CuPy RawKernel, CuPy arrays
  cudajit    kernel[1, 32](x, y, n) with cudajit device arrays
  cudajit+cupy   the same with CuPy arrays (__cuda_array_interface__)
  numba      numba-cuda, kernel[1, 32](x, y, n) with numba device arrays
"""
from __future__ import annotations

import argparse
import ctypes
import sys
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


def run(calls: int, runs: int, raw=None, cj=None, nb=None, cp=None):
    rng = np.random.default_rng()
    host = rng.standard_normal(N).astype(np.float32)
    results = {}

    if raw is not None:
        f = raw.compile(CPP_SOURCE, ["copy3"])["copy3"]
        dx = C._check(raw.driver.cuMemAlloc(N * 4))
        dy = C._check(raw.driver.cuMemAlloc(N * 4))
        params = C.PackedParams(ctypes.c_void_p(int(dx)), ctypes.c_void_p(int(dy)), ctypes.c_longlong(N))
        assert int(raw.launch(f, 1, 32, params.address)[0]) == 0
        results["floor"] = C.median_wall_per_call(lambda: raw.launch(f, 1, 32, params.address),
                                                  raw.synchronize, calls, runs)

    if cp is not None:
        kern = cp.RawKernel(CPP_SOURCE, "copy3")
        x, y = cp.asarray(host), cp.zeros(N, cp.float32)
        n = np.int64(N)
        kern((1,), (32,), (x, y, n))
        assert cp.allclose(x, y)
        results["cuda_cpp"] = C.median_wall_per_call(lambda: kern((1,), (32,), (x, y, n)),
                                                     cp.cuda.Device().synchronize, calls, runs)

    if cj is not None:
        k = jit_with(cj)
        x, y = cj.to_device(host), cj.to_device(np.zeros(N, np.float32))
        k[1, 32](x, y, N)
        assert np.array_equal(y.copy_to_host(), host)
        results["cudajit"] = C.median_wall_per_call(lambda: k[1, 32](x, y, N), cj.synchronize, calls, runs)
        if cp is not None:
            cx, cy = cp.asarray(host), cp.zeros(N, cp.float32)
            k[1, 32](cx, cy, N)
            cj.synchronize()
            assert cp.allclose(cx, cy)
            results["cudajit+cupy"] = C.median_wall_per_call(lambda: k[1, 32](cx, cy, N), cj.synchronize,
                                                             calls, runs)

    if nb is not None:
        k = jit_with(nb)
        x, y = nb.to_device(host), nb.to_device(np.zeros(N, np.float32))
        k[1, 32](x, y, N)
        assert np.array_equal(y.copy_to_host(), host)
        results["numba"] = C.median_wall_per_call(lambda: k[1, 32](x, y, N), nb.synchronize, calls, runs)

    return results


def report(results: dict) -> dict:
    floor, cpp = results.get("floor"), results.get("cuda_cpp")
    table = C.Table("Launch overhead of a 3-argument kernel (wall time per launch, median)",
                    ["launcher", "us/launch", "x floor", "x CUDA C++ (CuPy)"])
    out = {}
    for name in ("floor", "cuda_cpp", "cudajit", "cudajit+cupy", "numba"):
        t = results.get(name)
        row = {"us_per_launch": None if t is None else t * 1e6,
               "ratio_vs_floor": C.ratio(t, floor), "ratio_vs_cuda_cpp": C.ratio(t, cpp)}
        out[name] = row
        table.add(name, row["us_per_launch"], row["ratio_vs_floor"], row["ratio_vs_cuda_cpp"])
    print(table.render())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000, help="launches per timed run")
    ap.add_argument("--runs", type=int, default=30, help="timed runs (median)")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    raw = C.load_raw_cuda()
    cj, nb, cp = C.load_cudajit(), C.load_numba(), C.load_cupy()
    results = run(a.calls, a.runs, raw, cj, nb, cp)
    payload = {"environment": C.environment(raw, cj, nb, cp), "calls": a.calls, "runs": a.runs,
               "launch": report(results)}
    C.write_json(a.out, payload)
    return payload


if __name__ == "__main__":
    main()
