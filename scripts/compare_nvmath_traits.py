"""Compares cudajit.mathdx.FFT's and Matmul's traits with nvmath-python's for
the same descriptors (issue 13: "traits match nvmath-python's where it is
installed").

    python scripts/compare_nvmath_traits.py --nvmath-python /path/to/venv/bin/python [--routines fft,matmul]

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

# GEMMs: real and complex, the three precisions, both arrangements, the
# older transpose_mode, suggested and explicit block sizes, padded leading
# dimensions, mixed precision.
MM_SPECS = [
    dict(size=(32, 32, 32), precision="float32", data_type="real",
         arrangement=("row_major", "col_major", "col_major"), block_size=128),
    dict(size=(64, 64, 64), precision="float64", data_type="real",
         arrangement=("row_major", "row_major", "row_major"), block_size=128),
    dict(size=(32, 16, 64), precision="float32", data_type="real",
         arrangement=("row_major", "col_major", "col_major"), block_size=256),
    dict(size=(16, 16, 16), precision="float16", data_type="real",
         arrangement=("col_major", "col_major", "col_major")),
    dict(size=(16, 8, 32), precision="float32", data_type="complex",
         arrangement=("col_major", "row_major", "col_major"), block_size=64),
    dict(size=(8, 8, 8), precision="float64", data_type="complex", transpose_mode=("non_transposed", "transposed"),
         block_size=32),
    dict(size=(32, 32, 32), precision="float32", data_type="real",
         arrangement=("col_major", "col_major", "col_major"), block_size=128, leading_dimension=(33, 33, 33)),
    dict(size=(64, 32, 16), precision=("float16", "float16", "float32"), data_type="real",
         arrangement=("row_major", "col_major", "row_major"), block_size=128),
]
MM_FIELDS = ["block_dim", "block_size", "leading_dimension", "a_dim", "b_dim", "c_dim", "a_size", "b_size", "c_size",
             "a_value_type", "b_value_type", "c_value_type", "max_threads_per_block", "shared_memory_size",
             "arrangement", "alignment"]

SIDE = r"""
import json, sys
import numpy as np
routine, specs, fields, which = json.loads(sys.stdin.read())
if which == "nvmath":
    if not hasattr(np, "row_stack"):   # numba-cuda 0.30 names it; numpy 2.5 removed it
        np.row_stack = np.vstack
    from nvmath.device import FFT, Matmul
else:
    from cudajit.mathdx import FFT, Matmul


def plain(v):
    # Dim3, LeadingDimension, Arrangement, Alignment (namedtuples) and numpy
    # types as JSON: lists, and the dtype's name.
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, tuple):
        return [plain(x) for x in v]
    if isinstance(v, type) or isinstance(v, np.dtype):
        return np.dtype(v).name
    real = getattr(v, "real_dtype", None)   # nvmath's Complex(real_dtype): the complex type it stands for
    if real is not None:
        return {"float16": "complex32", "float32": "complex64", "float64": "complex128"}.get(np.dtype(real).name,
                                                                                          str(v))
    name = getattr(v, "name", None)      # numba value types
    return name if isinstance(name, str) else str(v)


def trait(obj, k):
    if k == "shared_memory_size" and not hasattr(obj, k):
        return obj.get_shared_storage_size()      # nvmath's Matmul names it so
    return getattr(obj, k)


rows = []
for s in specs:
    p = s["precision"]
    s = dict(s, precision=tuple(np.dtype(x).type for x in p) if isinstance(p, list) else np.dtype(p).type)
    for key in ("size", "arrangement", "transpose_mode", "leading_dimension"):
        if isinstance(s.get(key), list):   # JSON's lists back to tuples (an FFT's size is an int)
            s[key] = tuple(s[key])
    try:
        obj = (FFT if routine == "fft" else Matmul)(sm=90, **s)
        rows.append({k: plain(trait(obj, k)) for k in fields})
    except Exception as e:
        rows.append({"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
print(json.dumps(rows))
"""


def side(python, which, env, routine, specs, fields):
    out = subprocess.run([python, "-c", SIDE], input=json.dumps([routine, specs, fields, which]), capture_output=True,
                         text=True, env=env, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"{which} side failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nvmath-python", required=True, help="an interpreter that can import nvmath.device")
    ap.add_argument("--nvmath-path", default="", help="prepended to PYTHONPATH for nvmath's side only")
    ap.add_argument("--routines", default="fft,matmul")
    a = ap.parse_args()
    env = dict(os.environ)
    if a.nvmath_path:
        env["PYTHONPATH"] = a.nvmath_path + os.pathsep + env.get("PYTHONPATH", "")
    todo = [r for r in (("fft", SPECS, FIELDS), ("matmul", MM_SPECS, MM_FIELDS)) if r[0] in a.routines.split(",")]
    total = same = 0
    for routine, specs, fields in todo:
        with tempfile.TemporaryDirectory() as tmp:
            if not os.path.exists("/dev/nvidia0"):
                cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
                subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC",
                                os.path.join(ROOT, "runtime", "testing", "mock_libcuda.cpp"), "-o",
                                os.path.join(tmp, "libcuda.so.1")], check=True)
                env["LD_LIBRARY_PATH"] = tmp + os.pathsep + env.get("LD_LIBRARY_PATH", "")
            theirs = side(a.nvmath_python, "nvmath", env, routine, specs, fields)
        ours = side(sys.executable, "cudajit", dict(os.environ), routine, specs, fields)
        n = 0
        for spec, x, y in zip(specs, theirs, ours):
            ok = x == y and "error" not in x
            n += ok
            print(f"{'EQUAL' if ok else 'DIFF '} {routine} {spec}"
                  + ("" if ok else f"\n    nvmath  {x}\n    cudajit {y}"))
        print(f"{routine}: {n} of {len(specs)} descriptors have equal traits ({', '.join(fields)})")
        total += len(specs)
        same += n
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
