"""Compile time: the first call of a freshly defined kernel in a warm process,
and a fresh process reading a warm disk cache.

    python benchmarks/bench_compile.py [--runs 15] [--fresh-runs 7] [--out compile.json]

Warm process (each library loaded and its toolchain used once before timing):
  empty     a one-store kernel: the toolkit's fixed cost per program (the
            floor under any first compile), cudajit only
  small     a 3-line kernel, defined anew each time (a new constant, so that
            nothing is reused), first launch [1, 32] + synchronize:
            cudajit, numba-cuda, and the same kernel in CUDA C++ through NVRTC
            (cuda.bindings: compile to a cubin, load, launch)
  k100      a ~100-line kernel (shared and local arrays, a block reduction,
            device functions, math, atomics, loops): cudajit and numba-cuda
  stages    cudajit's own figures per stage (kernel.stats): decode, infer,
            passes, emit (NVVM IR), nvvm (libNVVM), link (ptxas: the driver's
            JIT compiler, or nvJitLink with CUDAJIT_ASSEMBLER=nvjitlink, the
            "cudajit (nvJitLink)" column), load (cuModuleLoadData);
            the "cudajit LLVM" column compiles through backend="llvm" (its
            "nvvm" stage is LLVM: parse, libdevice, O3, NVPTX);
            "toolkit share" = (nvvm + link) / total
  fast_compile=mid / max   the opt-in @jit(fast_compile=...) levels (less
            optimised code: docs/caching.md has what they cost at run time);
            the targets are checked on the default column
All cudajit columns take turns, one new kernel each.
Fresh process, warm disk cache (a kernel with cache=True, warmed by a first
run): `import cudajit` and the first launch of the cached kernel (after the
CUDA context exists: creating it is the driver's cost, timed apart).

Targets (PASS/FAIL): small first call <= 15 ms, >= 5x faster than numba-cuda,
>= 2x faster than NVRTC; k100 <= 60 ms; fresh process: import <= 100 ms,
first cached launch <= 5 ms.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

N = 32

SMALL = """
def small(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i] * {c!r} + 1.0
"""

# The toolkit's floor: a kernel with nothing to compile (one store of a new
# constant) still pays libNVVM's and ptxas's fixed cost per program.
EMPTY = """
def empty(x):
    x[0] = {c!r}
"""

SMALL_CPP = r"""
extern "C" __global__ void small(const float* x, float* y, long long n) {{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * {c!r}f + 1.0f;
}}
"""

# About 100 lines in the numba.cuda dialect; {c} makes each definition new.
K100 = '''
EPS = 1e-6
BINS = 16


@cuda.jit(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@cuda.jit(device=True)
def smooth(a, b, t):
    t = clamp(t, 0.0, 1.0)
    t = t * t * (3.0 - 2.0 * t)
    return a + (b - a) * t


@cuda.jit(device=True)
def bucket(z, nbins):
    b = int((z + 4.0) * 2.0)
    if b < 0:
        b = 0
    if b >= nbins:
        b = nbins - 1
    return b


def k100(x, w, out, hist, n, scale):
    tile = cuda.shared.array(128, np.float32)
    acc = cuda.local.array(4, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    for k in range(4):
        acc[k] = 0.0
    v = np.float32(0.0)
    if i < n:
        v = x[i]
    tile[tid] = v
    cuda.syncthreads()
    # block mean: a tree reduction in shared memory
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            tile[tid] = tile[tid] + tile[tid + stride]
        cuda.syncthreads()
        stride //= 2
    mean = tile[0] / cuda.blockDim.x
    cuda.syncthreads()
    d = v - mean
    tile[tid] = d * d
    cuda.syncthreads()
    # block variance, the same way
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            tile[tid] = tile[tid] + tile[tid + stride]
        cuda.syncthreads()
        stride //= 2
    var = tile[0] / cuda.blockDim.x
    std = math.sqrt(var + EPS)
    if i < n:
        z = d / std
        acc[0] = z
        acc[1] = math.exp(-0.5 * z * z)
        acc[2] = math.log(1.0 + abs(z))
        acc[3] = smooth(0.0, 1.0, (z + 3.0) / 6.0)
        total = np.float32(0.0)
        for k in range(4):
            total += acc[k] * w[k]
        if total > 10.0:
            total = 10.0
        elif total < -10.0:
            total = -10.0
        out[i] = total * scale * {c!r}
        cuda.atomic.add(hist, bucket(z, hist.size), 1)
        j = 0
        s = np.float32(0.0)
        while j < 8:
            s += z * j / (j + 1)
            j += 1
        out[i] += s * 1e-3
        if i % 2 == 0:
            out[i] = out[i] * 1.0
        else:
            out[i] = out[i] + 0.0
'''


# cudajit's columns: the environment each runs under. "cudajit" assembles
# with the driver's JIT compiler (the default for the GPU in hand); the
# fast_compile ones trade optimisation for compile time (opt-in).
VARIANTS = {
    "cudajit": {},
    "cudajit_nvjitlink": {"CUDAJIT_ASSEMBLER": "nvjitlink"},
    "cudajit_fast_mid": {"CUDAJIT_FAST_COMPILE": "mid"},
    "cudajit_fast_max": {"CUDAJIT_FAST_COMPILE": "max"},
    # LLVM's NVPTX back end (issue 16): "nvvm" is then LLVM's parse + O3 + PTX
    "cudajit_llvm": {"CUDAJIT_BACKEND": "llvm"},
}


def define(module, template, name, c, tag):
    """A new function from `template` with constant `c`, compiled by `module`
    (cudajit or numba.cuda) lazily."""
    g = {"cuda": module, "np": np, "math": math, "__name__": f"bench_{tag}"}
    exec(compile(textwrap.dedent(template.format(c=c)), f"<bench-{tag}>", "exec"), g)
    return module.jit(g[name])


def first_calls(module, sync, template, name, make_args, runs, warmup=3):
    """Seconds from a new kernel's first launch to its completion, per
    definition; also the kernels (for their stats)."""
    times, kernels = [], []
    for r in range(warmup + runs):
        c = 1.0 + r / 1024.0 + time.time() % 1 / 1e6
        k = define(module, template, name, c, f"{name}{r}")
        args = make_args()
        sync()
        t0 = time.perf_counter()
        k[4, 128](*args) if name == "k100" else k[1, 32](*args)
        sync()
        if r >= warmup:
            times.append(time.perf_counter() - t0)
            kernels.append(k)
    return times, kernels


def nvrtc_first_calls(raw, runs, warmup=3):
    times = []
    dx = C._check(raw.driver.cuMemAlloc(N * 4))
    dy = C._check(raw.driver.cuMemAlloc(N * 4))
    params = C.PackedParams(ctypes.c_void_p(int(dx)), ctypes.c_void_p(int(dy)), ctypes.c_longlong(N))
    for r in range(warmup + runs):
        c = 1.0 + r / 1024.0 + time.time() % 1 / 1e6
        raw.synchronize()
        t0 = time.perf_counter()
        f = raw.compile(SMALL_CPP.format(c=c), ["small"])["small"]
        raw.launch(f, 1, 32, params.address)
        raw.synchronize()
        if r >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def stage_medians(kernels):
    keys = ("decode", "infer", "passes", "emit", "nvvm", "link", "load", "total")
    stats = [next(iter(k.stats.values())) for k in kernels]
    out = {key: statistics.median(s[key] for s in stats) for key in keys}
    out["toolkit_share"] = statistics.median((s["nvvm"] + s["link"]) / s["total"] for s in stats)
    out["assembler"] = "/".join(sorted({s["assembler"] for s in stats}))
    return out


CHILD = '''
import json, sys, time
t0 = time.perf_counter()
import cudajit as cuda
t_import = time.perf_counter() - t0
import numpy as np
sys.path.insert(0, {dir!r})
t1 = time.perf_counter()
cuda.synchronize()                      # the CUDA context: the driver's cost
x = cuda.to_device(np.arange(32, dtype=np.float32))
y = cuda.device_array(32, np.float32)
cuda.synchronize()
t_context = time.perf_counter() - t1
import cached_kernel
t2 = time.perf_counter()
cached_kernel.small[1, 32](x, y, 32)
cuda.synchronize()
t_first = time.perf_counter() - t2
assert np.allclose(y.copy_to_host(), np.arange(32) * 3.0 + 1.0)
(s,) = cached_kernel.small.stats.values()
print(json.dumps(dict(import_s=t_import, context_s=t_context, first_launch_s=t_first,
                      cache=s["cache_result"], load_s=s["load"], lookup_s=s["cache"])))
'''

CACHED_KERNEL = '''
import cudajit as cuda

@cuda.jit(cache=True)
def small(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i] * 3.0 + 1.0
'''


def fresh_process(cj, runs):
    with tempfile.TemporaryDirectory() as d:
        Path(d, "cached_kernel.py").write_text(CACHED_KERNEL)
        Path(d, "child.py").write_text(CHILD.format(dir=d))
        env = dict(os.environ, CUDAJIT_CACHE_DIR=str(Path(d, "cache")))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(cj.__file__).resolve().parents[1]),
                                                          env.get("PYTHONPATH", "")]))
        results = []
        for r in range(runs + 1):
            p = subprocess.run([sys.executable, str(Path(d, "child.py"))], env=env,
                               capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                C.note(f"fresh-process run failed: {p.stderr.strip().splitlines()[-1:]}")
                return None
            res = json.loads(p.stdout.strip().splitlines()[-1])
            if r == 0:
                if res["cache"] != "miss":
                    C.note(f"the warming run reported cache={res['cache']}")
                continue
            results.append(res)
        if any(r["cache"] != "hit" for r in results):
            C.note("fresh-process runs did not all hit the cache: " +
                   ", ".join(r["cache"] for r in results))
        keys = ("import_s", "context_s", "first_launch_s", "load_s", "lookup_s")
        return {k: statistics.median(r[k] for r in results) for k in keys}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15, help="timed first calls per column (median)")
    ap.add_argument("--fresh-runs", type=int, default=7, help="fresh processes (median)")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    raw = C.load_raw_cuda()
    cj, nb = C.load_cudajit(), C.load_numba()
    rng = np.random.default_rng()
    out = {"small": {}, "k100": {}}

    def small_args(mod):
        return lambda: (mod.to_device(rng.standard_normal(N).astype(np.float32)),
                        mod.device_array(N, np.float32), N)

    def k100_args(mod):
        n = 512
        return lambda: (mod.to_device(rng.standard_normal(n).astype(np.float32)),
                        mod.to_device(rng.standard_normal(4).astype(np.float32)),
                        mod.device_array(n, np.float32), mod.to_device(np.zeros(16, np.int32)),
                        n, np.float32(0.5))

    if cj is not None:
        # The variants take turns, one new kernel each, so that a machine that
        # slows down or speeds up during the run favours none.
        for name, template, make in (("small", SMALL, small_args), ("k100", K100, k100_args)):
            first_calls(cj, cj.synchronize, template, name, make(cj), 0)      # warm-up only
            times = {v: ([], []) for v in VARIANTS}
            for r in range(a.runs):
                for variant, (t, ks) in times.items():
                    env = VARIANTS[variant]
                    saved = {key: os.environ.get(key) for key in env}
                    os.environ.update(env)
                    try:
                        t1, k1 = first_calls(cj, cj.synchronize, template, name, make(cj), 1, warmup=0)
                    finally:
                        for key, value in saved.items():
                            if value is None:
                                del os.environ[key]
                            else:
                                os.environ[key] = value
                    t += t1
                    ks += k1
            for variant, (t, ks) in times.items():
                out[name][variant] = statistics.median(t)
                out[name][variant + "_stages"] = stage_medians(ks)
        t, ks = first_calls(cj, cj.synchronize, EMPTY, "empty", lambda: (cj.device_array(1, np.float32),),
                            a.runs)
        out["empty"] = {"cudajit": statistics.median(t), "cudajit_stages": stage_medians(ks)}
    if nb is not None:
        t, _ = first_calls(nb, nb.synchronize, SMALL, "small", small_args(nb), a.runs)
        out["small"]["numba"] = statistics.median(t)
        t, _ = first_calls(nb, nb.synchronize, K100, "k100", k100_args(nb), max(5, a.runs // 3))
        out["k100"]["numba"] = statistics.median(t)
    if raw is not None:
        out["small"]["nvrtc"] = statistics.median(nvrtc_first_calls(raw, a.runs))
    if cj is not None:
        out["fresh_process"] = fresh_process(cj, a.fresh_runs)

    table = C.Table("First call of a freshly defined kernel in a warm process (ms, median)",
                    ["kernel", "cudajit", "cudajit (nvJitLink)", "fast_compile=mid", "fast_compile=max",
                     "cudajit LLVM", "numba-cuda", "CUDA C++ (NVRTC)", "numba / cudajit", "NVRTC / cudajit",
                     "numba / fast=max", "LLVM / libNVVM"])
    for name in ("small", "k100"):
        r = out[name]
        ms = lambda v: None if v is None else v * 1e3  # noqa: E731
        table.add(name, ms(r.get("cudajit")), ms(r.get("cudajit_nvjitlink")),
                  ms(r.get("cudajit_fast_mid")), ms(r.get("cudajit_fast_max")), ms(r.get("cudajit_llvm")),
                  ms(r.get("numba")), ms(r.get("nvrtc")), C.ratio(r.get("numba"), r.get("cudajit")),
                  C.ratio(r.get("nvrtc"), r.get("cudajit")), C.ratio(r.get("numba"), r.get("cudajit_fast_max")),
                  C.ratio(r.get("cudajit_llvm"), r.get("cudajit")))
    print(table.render())
    for name in ("empty", "small", "k100"):
        for key, label in (("cudajit_stages", ""), ("cudajit_nvjitlink_stages", ", nvJitLink"),
                           ("cudajit_fast_mid_stages", ", fast_compile=mid"),
                           ("cudajit_fast_max_stages", ", fast_compile=max"),
                           ("cudajit_llvm_stages", ", LLVM back end")):
            s = out.get(name, {}).get(key)
            if s:
                print(f"cudajit {name}{label} stages (ms): " + ", ".join(
                    f"{k} {s[k] * 1e3:.2f}" for k in ("decode", "infer", "passes", "emit", "nvvm",
                                                       "link", "load", "total"))
                      + f"; toolkit share {s['toolkit_share'] * 100:.0f}%; assembler {s['assembler']}")
    floor = out.get("empty", {}).get("cudajit_stages")
    if floor:
        toolkit = floor["nvvm"] + floor["link"]
        print(f"Toolkit floor: libNVVM + ptxas on a one-store kernel {toolkit * 1e3:.2f} ms "
              f"(libNVVM {floor['nvvm'] * 1e3:.2f}, ptxas {floor['link'] * 1e3:.2f})"
              + (f"; 5x faster than numba-cuda on the small kernel means "
                 f"<= {out['small']['numba'] / 5 * 1e3:.2f} ms in all" if "numba" in out["small"] else ""))
    fp = out.get("fresh_process")
    if fp:
        print("Fresh process, warm disk cache (ms, median): import cudajit {:.1f}, CUDA context "
              "{:.1f}, first launch of the cached kernel {:.2f} (module load {:.2f}, cache lookup "
              "{:.2f})".format(fp["import_s"] * 1e3, fp["context_s"] * 1e3, fp["first_launch_s"] * 1e3,
                               fp["load_s"] * 1e3, fp["lookup_s"] * 1e3))

    checks = []
    s, k = out["small"], out["k100"]

    def add(name, ok, value):
        if value is not None:
            checks.append({"target": name, "value": value, "pass": bool(ok)})

    if "cudajit" in s:
        add("small first call <= 15 ms", s["cudajit"] <= 0.015, s["cudajit"] * 1e3)
        if "numba" in s:
            v = s["numba"] / s["cudajit"]
            add("small: >= 5x faster than numba-cuda", v >= 5, v)
        if "nvrtc" in s:
            v = s["nvrtc"] / s["cudajit"]
            add("small: >= 2x faster than NVRTC", v >= 2, v)
        st = s["cudajit_stages"]
        add("small: compile dominated by the toolkit (libNVVM + ptxas > 50%)",
            st["toolkit_share"] > 0.5, st["toolkit_share"])
    if "cudajit" in k:
        add("k100 first call <= 60 ms", k["cudajit"] <= 0.060, k["cudajit"] * 1e3)
    if fp:
        add("fresh process: import cudajit <= 100 ms", fp["import_s"] <= 0.1, fp["import_s"] * 1e3)
        add("fresh process: first launch of a cached kernel <= 5 ms", fp["first_launch_s"] <= 0.005,
            fp["first_launch_s"] * 1e3)
    for c in checks:
        print(f"  {'PASS' if c['pass'] else 'FAIL'}  {c['target']}: {c['value']:.2f}")
    out["targets"] = checks
    C.write_json(a.out, {"environment": C.environment(raw, cj, nb, None), "runs": a.runs,
                         "compile": out})
    return out


if __name__ == "__main__":
    main()
