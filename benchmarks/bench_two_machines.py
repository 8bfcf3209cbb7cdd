"""The cache that travels (issue 12), measured across two machines: warm a
cache on a machine without a GPU, carry it to a GPU machine, and launch from a
fresh process that reads it read-only, with the kernels' module imported
from another directory.

    python benchmarks/bench_two_machines.py warm DIR     # the CPU machine: DIR/warm_kernels.py, DIR/cache
    python benchmarks/bench_two_machines.py run DIR      # the GPU machine, DIR carried there

`run` reports the cache hits and misses of the import (100 declared
signatures, bench_warm.py's module), and for each of the 25 kernels its first
launch in the fresh process against a launch of the already loaded kernel
and the module load (`stats["load"]`): the issue asks the first call to be
within 1 ms of the other two together.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_warm  # noqa: E402

MEASURE = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, {module_dir!r})
    import numpy as np
    import cudajit
    from cudajit import _core
    t0 = time.perf_counter()
    import warm_kernels as wk
    imported = time.perf_counter() - t0
    counters = _core.cache_counters()
    sig = ("float32[::1]", "float32[::1]")
    n = 1 << 16
    x = cudajit.to_device(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    y = cudajit.device_array(n, np.float32)
    cudajit.synchronize()
    rows = []
    for k in range(25):
        kernel = getattr(wk, f"k{{k}}")
        t = time.perf_counter(); kernel[n // 256, 256](x, y); cudajit.synchronize()
        first = time.perf_counter() - t
        t = time.perf_counter(); kernel[n // 256, 256](x, y); cudajit.synchronize()
        second = time.perf_counter() - t
        st = kernel.stats.get(sig, {{}})
        rows.append({{"kernel": k, "first_ms": first * 1e3, "second_ms": second * 1e3,
                      "load_ms": st.get("load", 0.0) * 1e3, "cache": st.get("cache_result")}})
    after = _core.cache_counters()
    print(json.dumps({{"import_s": imported, "hits": counters["hits"], "misses": counters["misses"],
                      "misses_after_launches": after["misses"], "rows": rows}}))
''')


def cmd_warm(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    module = bench_warm.write_module(out)
    env = dict(os.environ)
    env.pop("CUDAJIT_CACHE", None)
    seconds = bench_warm.warm(module, out / "cache", os.cpu_count() or 1, env)
    entries = len(list((out / "cache" / "kernels").glob("*.cjk")))
    print(f"warmed {entries} entries for sm_90 in {seconds:.1f} s into {out / 'cache'}")
    return 0


def cmd_run(src: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        elsewhere = Path(tmp) / "elsewhere"
        elsewhere.mkdir()
        shutil.copy(src / "warm_kernels.py", elsewhere / "warm_kernels.py")
        env = dict(os.environ, CUDAJIT_CACHE_DIR=str(src / "cache"), CUDAJIT_CACHE_READONLY="1")
        proc = subprocess.run([sys.executable, "-c", MEASURE.format(module_dir=str(elsewhere))],
                              capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr)
        return 1
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = r["rows"]
    over = sorted(row["first_ms"] - row["second_ms"] - row["load_ms"] for row in rows)
    print(f"fresh process, read-only cache warmed elsewhere: {r['hits']} hits, {r['misses']} misses at import "
          f"({r['import_s']:.2f} s); misses after 25 first launches: {r['misses_after_launches']}")
    print(f"first launch: median {sorted(x['first_ms'] for x in rows)[12]:.3f} ms; launch of a loaded kernel: "
          f"median {sorted(x['second_ms'] for x in rows)[12]:.3f} ms; module load: median "
          f"{sorted(x['load_ms'] for x in rows)[12]:.3f} ms")
    print(f"first - (loaded launch + module load): median {over[12]:.3f} ms, max {over[-1]:.3f} ms "
          f"(target <= 1 ms); cache results: {sorted(set(str(x['cache']) for x in rows))}")
    return 0 if r["misses"] == 0 and over[-1] <= 1.0 else 1


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("warm", "run"):
        print(__doc__)
        return 2
    return (cmd_warm if argv[0] == "warm" else cmd_run)(Path(argv[1]).resolve())


if __name__ == "__main__":
    raise SystemExit(main())
