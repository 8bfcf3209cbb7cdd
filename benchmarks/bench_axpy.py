"""axpy throughput: device time of y = a*x + y (float32), per array size.

    python benchmarks/bench_axpy.py [--sizes 1048576,16777216,67108864] [--runs 30] [--out axpy.json]

Device time is measured with CUDA events around one launch, after a ~2 ms
spin kernel so that the host's launch overhead hides behind it. Median of
--runs after warm-up. Columns (each skipped with a note if missing): CUDA C++
(CuPy RawKernel), cudajit, numba-cuda; every result is checked first.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from bench_launch import jit_with  # noqa: E402

TPB = 256

CPP_SOURCE = r"""
extern "C" __global__ void axpy(float a, const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def axpy(a, x, y):
    i = cuda.grid(1)  # noqa: F821  (`cuda` is bound by jit_with)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def check(name, got, xh, yh, a):
    want = a * xh + yh
    if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise AssertionError(f"{name}: wrong axpy result")


def run(sizes, runs, timer, cj=None, nb=None, cp=None):
    rng = np.random.default_rng()
    a = np.float32(rng.uniform(0.5, 2.0))
    results = {}
    cpp_kernel = cp.RawKernel(CPP_SOURCE, "axpy") if cp is not None else None
    cj_kernel = jit_with(cj, axpy) if cj is not None else None
    nb_kernel = jit_with(nb, axpy) if nb is not None else None
    for n in sizes:
        xh = rng.standard_normal(n).astype(np.float32)
        yh = rng.standard_normal(n).astype(np.float32)
        grid = (n + TPB - 1) // TPB
        row = results.setdefault(n, {})
        if cp is not None:
            x, y = cp.asarray(xh), cp.asarray(yh)
            nn = np.int64(n)
            cpp_kernel((grid,), (TPB,), (a, x, y, nn))
            check("cuda_cpp", cp.asnumpy(y), xh, yh, a)
            row["cuda_cpp"] = C.median_device_ms(timer, lambda: cpp_kernel((grid,), (TPB,), (a, x, y, nn)), runs)
            del x, y
        if cj is not None:
            x, y = cj.to_device(xh), cj.to_device(yh)
            cj_kernel[grid, TPB](a, x, y)
            check("cudajit", y.copy_to_host(), xh, yh, a)
            row["cudajit"] = C.median_device_ms(timer, lambda: cj_kernel[grid, TPB](a, x, y), runs)
            del x, y
        if nb is not None:
            x, y = nb.to_device(xh), nb.to_device(yh)
            nb_kernel[grid, TPB](a, x, y)
            check("numba", y.copy_to_host(), xh, yh, a)
            row["numba"] = C.median_device_ms(timer, lambda: nb_kernel[grid, TPB](a, x, y), runs)
            del x, y
    return results


def report(results: dict) -> dict:
    table = C.Table("axpy, float32, device time per launch (median)",
                    ["n", "impl", "us", "GB/s", "x CUDA C++ (CuPy)"])
    out = {}
    for n, row in results.items():
        cpp = row.get("cuda_cpp")
        out[str(n)] = {}
        for name in ("cuda_cpp", "cudajit", "numba"):
            ms = row.get(name)
            entry = {"us": None if ms is None else ms * 1e3,
                     "GBps": None if ms is None else 3 * 4 * n / (ms * 1e-3) / 1e9,
                     "ratio_vs_cuda_cpp": C.ratio(ms, cpp)}
            out[str(n)][name] = entry
            table.add(n, name, entry["us"], entry["GBps"], entry["ratio_vs_cuda_cpp"])
    print(table.render())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1048576,16777216,67108864")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    raw = C.load_raw_cuda()
    cj, nb, cp = C.load_cudajit(), C.load_numba(), C.load_cupy()
    try:
        timer = C.DeviceTimer(raw, cp)
    except RuntimeError as e:
        C.note(f"axpy skipped: {e}")
        C.write_json(a.out, {"environment": C.environment(raw, cj, nb, cp), "axpy": {}})
        return None
    results = run([int(s) for s in a.sizes.split(",")], a.runs, timer, cj, nb, cp)
    payload = {"environment": C.environment(raw, cj, nb, cp), "runs": a.runs, "axpy": report(results)}
    C.write_json(a.out, payload)
    return payload


if __name__ == "__main__":
    main()
