"""Host cost of a launch without a GPU: kernel[1, 32](x, y, n) against the
mock driver (runtime/testing/mock_libcuda.cpp, whose cuLaunchKernel returns
at once), so the figure is cudajit's own work per launch: the subscript, the
overload lookup, the argument packing and the call into the driver.

    python benchmarks/bench_launch_mock.py [--calls 2000] [--runs 50]

It builds the mock with the C++ compiler ($CXX, g++ or c++), then times in a
fresh interpreter that loads it (the driver is loaded once per process).
Prints the median nanoseconds per launch for cudajit device arrays, and for
the same launch with an explicit cudajit.Stream. Compare two builds on one
machine, one after the other (PYTHONPATH naming each installed build, as
scripts/gpu_compare.sh does); the GPU's figures come from bench_launch.py.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TIMING = r"""
import statistics, sys, time
import numpy as np
import cudajit as cuda

calls, runs = int(sys.argv[1]), int(sys.argv[2])

@cuda.jit
def copy3(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i]

x = cuda.to_device(np.zeros(32, np.float32))
y = cuda.to_device(np.zeros(32, np.float32))
s = cuda.stream()

def per_launch(launch):
    for _ in range(calls):
        launch()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            launch()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples) * 1e9

plain = per_launch(lambda: copy3[1, 32](x, y, 32))
stream = per_launch(lambda: copy3[1, 32, s](x, y, 32))
print(f"kernel[1, 32](x, y, n)      {plain:8.1f} ns/launch")
print(f"kernel[1, 32, stream](...)  {stream:8.1f} ns/launch")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", help="accepted for scripts/gpu_compare.sh; the figures are printed")
    a = ap.parse_args()
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        sys.exit("no C++ compiler to build the mock driver")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "libcuda_mock.so"
        subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC",
                        str(REPO / "runtime" / "testing" / "mock_libcuda.cpp"), "-o", str(lib)],
                       check=True)
        env = dict(os.environ, CUDAJIT_CUDA_DRIVER=str(lib))
        # An installed cudajit named by PYTHONPATH (two builds compared) is
        # kept; otherwise the source tree's package with its in-tree _core.
        if not env.get("PYTHONPATH"):
            env["PYTHONPATH"] = str(REPO / "python")
        subprocess.run([sys.executable, "-c", TIMING, str(a.calls), str(a.runs)], env=env,
                       check=True)


if __name__ == "__main__":
    main()
