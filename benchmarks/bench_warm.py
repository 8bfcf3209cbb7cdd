"""Offline cache warming (issue 12): `python -m cudajit warm` on 100
declared signatures, in one process and with -j (one process per core), on a
machine without a GPU; then the same cache read by a fresh process from
another directory (the hit rate the two-machine scenario sees).

    python benchmarks/bench_warm.py [--jobs N] [--out warm.json]

The module holds 25 kernels of a few lines each (arithmetic, a loop, a
device function, math), each declared for 4 signatures (float32/float64,
contiguous/any layout) with cache=True; sm_90. Each timing warms an empty
cache. Prints seconds for -j 1 and -j N, the speed-up, and the hits of the
fresh process (all 100 expected).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

KERNEL = '''
@cuda.jit(SIGS, cache=True)
def k{n}(x, y):
    i = cuda.grid(1)
    if i < x.size:
        acc = x[i] * {n}.5
        for j in range({n} % 7 + 1):
            acc = helper(acc) + math.sin(acc) * j
        y[i] = acc
'''

HEADER = '''
import math
import cudajit as cuda

SIGS = ["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])",
        "void(float32[:], float32[:])", "void(float64[:], float64[:])"]

@cuda.jit(device=True)
def helper(v):
    return v * v - 1.0
'''


def write_module(directory: Path) -> Path:
    path = directory / "warm_kernels.py"
    path.write_text(HEADER + "".join(KERNEL.format(n=n) for n in range(25)))
    return path


def warm(module: Path, cache: Path, jobs: int, env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cudajit", "warm", str(module), "--arch", "sm_90", "-q",
                           "--cache-dir", str(cache), "-j", str(jobs)], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"warm failed:\n{proc.stdout}\n{proc.stderr}")
    return seconds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    env = dict(os.environ)
    env.pop("CUDAJIT_CACHE", None)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        module = write_module(tmp)
        one = warm(module, tmp / "cache1", 1, env)
        many = warm(module, tmp / "cacheN", args.jobs, env)
        entries = len(list((tmp / "cacheN" / "kernels").glob("*.cjk")))
        # The cache elsewhere, read-only, the module from another directory.
        other = tmp / "elsewhere"
        other.mkdir()
        shutil.copy(module, other / module.name)
        shutil.copytree(tmp / "cacheN", tmp / "shipped")
        code = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(other)!r})
            from cudajit import _core
            import warm_kernels
            c = _core.cache_counters()
            print(c["hits"], c["misses"])
        """)
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=dict(env, CUDAJIT_CACHE_DIR=str(tmp / "shipped"), CUDAJIT_CACHE_READONLY="1"))
        fresh = time.perf_counter() - start
        hits, misses = (int(v) for v in out.stdout.split())
    result = {"signatures": 100, "entries": entries, "warm_j1_s": round(one, 2), "jobs": args.jobs,
              f"warm_j{args.jobs}_s": round(many, 2), "speedup": round(one / many, 2),
              "fresh_process_hits": hits, "fresh_process_misses": misses, "fresh_process_s": round(fresh, 2)}
    print(f"warm 100 signatures (sm_90, no GPU): -j 1 {one:.1f} s, -j {args.jobs} {many:.1f} s "
          f"({one / many:.2f}x); {entries} entries")
    print(f"fresh process from another directory, read-only cache: {hits} hits, {misses} misses "
          f"({fresh:.2f} s including import and 100 lookups)")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return 0 if hits == 100 and misses == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
