"""Compares cudajit.mathdx.FFT's traits with nvmath-python's for the same
descriptors (issue 13: "traits match nvmath-python's where it is installed").

    python scripts/compare_nvmath_traits.py --nvmath-python /path/to/venv/bin/python

nvmath-python (pip install "nvmath-python[cu13-dx]") usually lives in an
environment of its own: its side runs under the interpreter given, ours in
this one; each prints its traits as JSON, and the rows are compared. nvmath
asks the CUDA driver for its version even to build a descriptor, so where
there is no GPU its side runs against cudajit's mock driver
(runtime/testing/mock_libcuda.cpp, built here with the C++ compiler).
Exit status 0 when every row is equal.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The descriptors: Block and Thread, c2c, r2c, c2r, half / single / double.
SPECS = [
    dict(size=128, precision="float32", fft_type="c2c", direction="forward", execution="Block",
         elements_per_thread=8, ffts_per_block=2),
    dict(size=256, precision="float64", fft_type="c2c", direction="inverse", execution="Block",
         elements_per_thread=16, ffts_per_block=1),
    dict(size=4096, precision="float32", fft_type="c2c", direction="forward", execution="Block",
         elements_per_thread=16, ffts_per_block=1),
    dict(size=64, precision="float32", fft_type="r2c", execution="Block", elements_per_thread=8, ffts_per_block=2),
    dict(size=1024, precision="float64", fft_type="c2r", execution="Block", elements_per_thread=16, ffts_per_block=1),
    dict(size=8, precision="float64", fft_type="c2c", direction="forward", execution="Thread"),
    dict(size=32, precision="float32", fft_type="c2c", direction="inverse", execution="Thread"),
    dict(size=64, precision="float16", fft_type="c2c", direction="forward", execution="Block",
         elements_per_thread=8, ffts_per_block=4),
]
FIELDS = ["block_dim", "storage_size", "stride", "shared_memory_size", "ffts_per_block", "elements_per_thread",
          "implicit_type_batching"]

SIDE = r"""
import json, sys
import numpy as np
specs, fields, which = json.loads(sys.stdin.read())
if which == "nvmath":
    from nvmath.device import FFT
else:
    from cudajit.mathdx import FFT
rows = []
for s in specs:
    s = dict(s, precision=np.dtype(s["precision"]).type)
    f = FFT(sm=90, **s)
    rows.append({k: (list(getattr(f, k)) if k == "block_dim" and getattr(f, k) is not None else getattr(f, k))
                 for k in fields})
print(json.dumps(rows))
"""


def side(python, which, env):
    out = subprocess.run([python, "-c", SIDE], input=json.dumps([SPECS, FIELDS, which]), capture_output=True,
                         text=True, env=env, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"{which} side failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nvmath-python", required=True, help="an interpreter that can import nvmath.device")
    a = ap.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if not os.path.exists("/dev/nvidia0"):
            cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
            subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC",
                            os.path.join(ROOT, "runtime", "testing", "mock_libcuda.cpp"), "-o",
                            os.path.join(tmp, "libcuda.so.1")], check=True)
            env["LD_LIBRARY_PATH"] = tmp + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        theirs = side(a.nvmath_python, "nvmath", env)
    ours = side(sys.executable, "cudajit", dict(os.environ))
    same = 0
    for spec, x, y in zip(SPECS, theirs, ours):
        ok = x == y
        same += ok
        print(f"{'EQUAL' if ok else 'DIFF '} {spec}" + ("" if ok else f"\n    nvmath  {x}\n    cudajit {y}"))
    print(f"{same} of {len(SPECS)} descriptors have equal traits ({', '.join(FIELDS)})")
    return 0 if same == len(SPECS) else 1


if __name__ == "__main__":
    sys.exit(main())
