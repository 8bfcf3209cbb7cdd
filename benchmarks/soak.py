"""Soak test (issue 15): resident and GPU memory stay flat under sustained use.

    python benchmarks/soak.py [--launches 1000000] [--threads 8] [--allocs 100000]
                              [--kernels 10000] [--compile-threads 8] [--json out.json]

Three phases, each reporting the process's resident memory (RSS, /proc/self/statm)
and the GPU memory in use (cuMemGetInfo through current_context().get_memory_info())
at its start, after a warm-up, and at its end; the growth after the warm-up is what
must stay flat:

  launches     `threads` threads launch one small kernel `launches` times in all, each
               thread on its own arrays and stream; the results are checked.
  allocations  `allocs` device arrays of random sizes (1 B .. 1 MB) allocated, written
               and dropped, in batches of 100 alive at a time.
  kernels      `kernels` distinct kernels (one source, a different frozen constant each:
               a different cache key), each compiled, launched, checked and dropped,
               from `compile-threads` threads; growth reported per kernel.

This is a script, not a timed test: it takes minutes at full size. Exit status 1 when
a result is wrong; the memory figures are for the reader (and the JSON) to judge.
"""
import argparse
import gc
import json
import os
import random
import sys
import threading
import time

import numpy as np

import cudajit as cuda


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def gpu_used_mb():
    free, total = cuda.current_context().get_memory_info()
    return (total - free) / 2**20


class Phase:
    def __init__(self, name):
        self.name, self.marks = name, []

    def mark(self, label):
        gc.collect()
        self.marks.append((label, time.perf_counter(), rss_mb(), gpu_used_mb()))

    def report(self, per=None, count=None):
        (_, t0, r0, g0), (_, tw, rw, gw), (_, t1, r1, g1) = self.marks[0], self.marks[1], self.marks[-1]
        out = {"phase": self.name, "seconds": round(t1 - t0, 2), "rss_start_mb": round(r0, 1),
               "rss_after_warmup_mb": round(rw, 1), "rss_end_mb": round(r1, 1),
               "rss_growth_after_warmup_mb": round(r1 - rw, 2), "gpu_start_mb": round(g0, 1),
               "gpu_after_warmup_mb": round(gw, 1), "gpu_end_mb": round(g1, 1),
               "gpu_growth_after_warmup_mb": round(g1 - gw, 2)}
        if per and count:
            out[f"rss_growth_per_{per}_kb"] = round((r1 - rw) * 1024 / count, 3)
        print(f"{self.name:12s} {out['seconds']:8.1f} s  RSS {r0:7.1f} -> {rw:7.1f} (warm) -> {r1:7.1f} MB "
              f"({r1 - rw:+.1f})  GPU {g0:8.1f} -> {gw:8.1f} -> {g1:8.1f} MB ({g1 - gw:+.1f})", flush=True)
        return out


def run_threads(count, body, errors):
    """body(t) on `count` threads at once; an exception becomes a line of `errors`."""
    def guarded(t):
        try:
            body(t)
        except Exception as e:  # noqa: BLE001  (reported by the caller)
            errors.append(repr(e))   # list.append is atomic under the GIL
    ts = [threading.Thread(target=guarded, args=(t,)) for t in range(count)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


@cuda.jit
def bump(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


def phase_launches(total, threads):
    p = Phase("launches")
    p.mark("start")
    n = 1024
    arrays = [cuda.to_device(np.zeros(n, np.int64)) for _ in range(threads)]
    streams = [cuda.stream() for _ in range(threads)]
    per_thread = total // threads
    warm = min(1000, per_thread)
    for a, s in zip(arrays, streams):
        for _ in range(warm):
            bump[(n + 127) // 128, 128, s](a, 1)
    cuda.synchronize()
    p.mark("warm")
    errors = []

    def work(k):
        for _ in range(per_thread - warm):
            bump[(n + 127) // 128, 128, streams[k]](arrays[k], 1)
        streams[k].synchronize()
    run_threads(threads, work, errors)
    cuda.synchronize()
    ok = not errors and all((a.copy_to_host() == per_thread).all() for a in arrays)
    p.mark("end")
    out = p.report()
    out.update(launches=per_thread * threads, threads=threads, correct=ok, errors=errors[:3])
    return out


def phase_allocations(total):
    p = Phase("allocations")
    p.mark("start")
    rng = random.Random(1)

    def batch(count):
        alive = []
        for _ in range(count):
            nbytes = rng.randint(1, 1 << 20)
            a = cuda.device_array(nbytes, np.uint8)
            alive.append(a)
            if len(alive) == 100:
                alive.clear()
        alive.clear()
    batch(min(1000, total))
    p.mark("warm")
    batch(max(0, total - 1000))
    p.mark("end")
    out = p.report()
    out.update(allocations=total)
    return out


KERNEL_SOURCE = """
def make(scale):
    @cuda.jit
    def scaled(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * scale + {k}
    return scaled
"""


def phase_kernels(total, threads):
    p = Phase("kernels")
    p.mark("start")
    x = cuda.to_device(np.arange(256, dtype=np.float64))
    errors = []

    def one(k):
        ns = {"cuda": cuda}
        exec(KERNEL_SOURCE.format(k=k), ns)      # a fresh function: a distinct kernel and cache key
        kern = ns["make"](float(k % 7))
        out = cuda.device_array(256, np.float64)
        kern[2, 128](x, out)
        got = out.copy_to_host()
        want = np.arange(256, dtype=np.float64) * float(k % 7) + k
        if not np.array_equal(got, want):
            errors.append(f"kernel {k}: wrong result")

    def run(first, count):
        def work(t):
            for k in range(first + t, first + count, threads):
                one(k)
        run_threads(threads, work, errors)
    warm = min(200, total)
    run(0, warm)
    p.mark("warm")
    run(warm, total - warm)
    p.mark("end")
    out = p.report(per="kernel", count=max(1, total - warm))
    out.update(kernels=total, threads=threads, correct=not errors, errors=errors[:3])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--allocs", type=int, default=100_000)
    ap.add_argument("--kernels", type=int, default=10_000)
    ap.add_argument("--compile-threads", type=int, default=8)
    ap.add_argument("--only", default="launches,allocations,kernels")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    only = a.only.split(",")
    results = []
    if "launches" in only:
        results.append(phase_launches(a.launches, a.threads))
    if "allocations" in only:
        results.append(phase_allocations(a.allocs))
    if "kernels" in only:
        results.append(phase_kernels(a.kernels, a.compile_threads))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    bad = [r["phase"] for r in results if r.get("correct") is False]
    if bad:
        print("WRONG results in:", ", ".join(bad), [r.get("errors") for r in results if r.get("errors")])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
