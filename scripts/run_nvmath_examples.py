"""Runs nvmath-python's device examples (examples/device of NVIDIA/nvmath-python)
under cudajit, changing only their imports (issue 13).

    python scripts/run_nvmath_examples.py EXAMPLES_DIR [--mode gpu|mock|auto] [-j N]
        [--timeout S] [--only NAME ...] [--logs DIR] [--markdown FILE]

The folder is copied to a temporary directory and, in every .py file there
(the examples and their helpers common*.py), two kinds of line are rewritten
and nothing else:

    from numba import cuda                  ->  import cudajit as cuda
    from nvmath.device[.sub] import names   ->  from cudajit.mathdx import names
    from cuda import coop                   ->  from cudajit import coop

(a name cudajit.mathdx lacks is then the ImportError the table shows). Any
other edit an example would need is what its row reports as the failure.
Each example runs in a process of its own with a time limit.

Modes:
  gpu   a real run: the examples check their results against numpy / cupy
        themselves; a row is "passed" when the process exits 0.
  mock  no GPU: cudajit's fake driver (runtime/testing/mock_libcuda.cpp,
        built here with the C++ compiler) stands in for libcuda, a kernel
        compiles at its first launch and nothing runs, so results mean
        nothing; examples run with python -O, which drops their `assert`
        statements on results. A row is "compiles" when the example ran to
        its end with every launched kernel compiled (or stopped at a result
        check that is not an assert statement), "compile
        error: ..." for a cudajit.CompileError / ToolchainError, and
        "other error: ..." for anything else before or between launches.
        Examples that import CuPy cannot run without a GPU: "needs cupy".
  auto  gpu where /dev/nvidia0 exists, else mock.

Prints a table (example, result, first line of the error) and exits 0.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Examples that only time kernels: a short budget on a GPU (their results
# are checked after the timing loops, so they do run to the end).
PERFORMANCE = re.compile(r"_performance|autotuning")

# The rewritten import lines: (pattern, its replacement given the match).
_REWRITES = (
    (re.compile(r"^(\s*)from\s+numba\s+import\s+cuda\s*(#.*)?$"),
     lambda m: f"{m.group(1)}import cudajit as cuda"),
    (re.compile(r"^(\s*)from\s+nvmath\.device(\.[\w.]+)?\s+import\s+(.*)$"),
     lambda m: f"{m.group(1)}from cudajit.mathdx import {m.group(3)}"),
    (re.compile(r"^(\s*)from\s+cuda\s+import\s+coop\s*(#.*)?$"),
     lambda m: f"{m.group(1)}from cudajit import coop"),
)


def rewrite(text):
    """The example's text with its imports rewritten, and how many lines changed."""
    out, changed = [], 0
    for line in text.split("\n"):
        for pattern, replacement in _REWRITES:
            m = pattern.match(line)
            if m:
                line, changed = replacement(m), changed + 1
                break
        out.append(line)
    return "\n".join(out), changed


# Runs one example as __main__ and writes what happened as JSON: the kernels
# made and compiled, the exception (class, module, first line, the last frame
# in the example's folder).
_HARNESS = r'''
import json, os, runpy, site, sys, traceback
for d in os.environ.get("CJ_EXAMPLES_SITE", "").split(os.pathsep):
    if d:
        site.addsitedir(d)   # --site: packages the examples import (numba-cuda, cuda-bindings)
result_path, example = sys.argv[1], sys.argv[2]
sys.argv = [example]
sys.path.insert(0, os.path.dirname(os.path.abspath(example)))
made = []
res = {"kernels": 0, "compiled": 0, "error": None}
try:
    import cudajit.dispatcher as _d
    _init = _d.Dispatcher.__init__
    def _record(self, *a, **k):
        _init(self, *a, **k)
        made.append(self)
    _d.Dispatcher.__init__ = _record
    runpy.run_path(example, run_name="__main__")
except SystemExit as e:
    if e.code not in (None, 0):
        res["error"] = {"type": "SystemExit", "module": "builtins", "text": str(e.code), "where": ""}
except BaseException as e:
    where = ""
    here = os.path.dirname(os.path.abspath(example))
    for fr in traceback.extract_tb(e.__traceback__):
        if os.path.abspath(fr.filename).startswith(here):
            where = f"{os.path.basename(fr.filename)}:{fr.lineno}"
    text = str(e).strip().splitlines()
    res["error"] = {"type": type(e).__name__, "module": type(e).__module__,
                    "text": text[0] if text else "", "where": where,
                    "compile": any(c.__name__ in ("CompileError", "ToolchainError") and
                                   c.__module__.startswith("cudajit") for c in type(e).__mro__)}
    traceback.print_exc()
res["kernels"] = len(made)
for k in made:
    try:
        res["compiled"] += len(k.overloads)
    except Exception:
        pass
with open(result_path, "w") as f:
    json.dump(res, f)
'''


def build_mock_driver(tmp):
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        sys.exit("mock mode needs a C++ compiler to build runtime/testing/mock_libcuda.cpp")
    out = os.path.join(tmp, "libcuda_mock.so")
    subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC",
                    os.path.join(ROOT, "runtime", "testing", "mock_libcuda.cpp"), "-o", out], check=True)
    return out


def run_one(name, work, mode, timeout, env, logs, deadline=None):
    if deadline is not None and time.time() > deadline:
        return name, "not run", "the run's --budget was spent before it started", 0.0
    path = os.path.join(work, name)
    result = os.path.join(work, f".{name}.json")
    t0 = time.time()
    try:
        # mock: -O drops the examples' `assert`s on their (meaningless) results,
        # so that an example goes on to compile the kernels after its first check
        opt = ["-O"] if mode == "mock" else []
        proc = subprocess.run([sys.executable, *opt, os.path.join(work, "_cj_harness.py"), result, path], cwd=work,
                              env=env, capture_output=True, text=True, timeout=timeout)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        out += (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        rc = None
    secs = time.time() - t0
    if logs:
        with open(os.path.join(logs, name[:-3] + ".log"), "w") as f:
            f.write(out)
    if rc is None:
        return name, "timeout", f"over {timeout} s", secs
    try:
        with open(result) as f:
            res = json.load(f)
    except (OSError, ValueError):
        last = [ln for ln in out.strip().splitlines() if ln.strip()]
        return name, "crashed", f"exit {rc}: {last[-1] if last else ''}", secs
    err = res["error"]
    detail = "" if err is None else f"{err['type']}: {err['text']}" + (f" [{err['where']}]" if err["where"] else "")
    if mode == "gpu":
        return name, ("passed" if err is None and rc == 0 else "failed"), detail, secs
    # mock: results are meaningless, the question is whether the kernels compiled
    if err is not None and err.get("compile"):
        return name, "compile error", detail, secs
    if err is not None and err["type"] == "ModuleNotFoundError" and "cupy" in err["text"]:
        return name, "needs cupy", detail, secs
    if err is None or err["type"] == "AssertionError":
        if res["compiled"] > 0:
            return name, "compiles", f"{res['compiled']} kernel(s) compiled", secs
        return name, "other error", "no kernel launched" + (f"; {detail}" if detail else ""), secs
    return name, "other error", detail + f" (after {res['compiled']} kernel(s) compiled)", secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples", help="a copy of nvmath-python's examples/device")
    ap.add_argument("--mode", choices=["gpu", "mock", "auto"], default="auto")
    ap.add_argument("-j", "--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--timeout", type=float, default=300, help="seconds an example may take")
    ap.add_argument("--perf-timeout", type=float, default=60,
                    help="seconds a *_performance / autotuning example may take")
    ap.add_argument("--skip-performance", action="store_true", help="leave the timing examples out")
    ap.add_argument("--budget", type=float, help="seconds for the whole run: examples not started by then "
                                                  "are reported 'not run'")
    ap.add_argument("--only", nargs="*", help="example names (with or without .py)")
    ap.add_argument("--logs", help="a folder for each example's output")
    ap.add_argument("--site", action="append", default=[],
                    help="a site directory (processed with its .pth files) for what the examples import "
                         "beside cudajit, e.g. a pip --target folder with numba-cuda and cuda-bindings")
    ap.add_argument("--markdown", help="also write the table as markdown here")
    a = ap.parse_args()
    mode = a.mode if a.mode != "auto" else ("gpu" if os.path.exists("/dev/nvidia0") else "mock")

    names = sorted(n for n in os.listdir(a.examples)
                   if n.endswith(".py") and re.match(r"(cublasdx|cufftdx|curand)_", n))
    if a.only:
        want = {n if n.endswith(".py") else n + ".py" for n in a.only}
        names = [n for n in names if n in want]
    if a.logs:
        os.makedirs(a.logs, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="nvmath_examples_") as tmp:
        work = os.path.join(tmp, "examples")
        shutil.copytree(a.examples, work)
        for n in os.listdir(work):
            if n.endswith(".py"):
                p = os.path.join(work, n)
                with open(p) as f:
                    text, _ = rewrite(f.read())
                with open(p, "w") as f:
                    f.write(text)
        with open(os.path.join(work, "_cj_harness.py"), "w") as f:
            f.write(_HARNESS)
        env = dict(os.environ)
        # this tree's cudajit where it is built in place (python/cudajit/_core*.so),
        # else the installed one
        pkg = os.path.join(ROOT, "python")
        built = any(n.startswith("_core") and n.endswith(".so") for n in os.listdir(os.path.join(pkg, "cudajit")))
        if built and "CUDAJIT_USE_INSTALLED" not in env:
            env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
        if a.site:
            env["CJ_EXAMPLES_SITE"] = os.pathsep.join(os.path.abspath(d) for d in a.site)
        if mode == "mock":
            env["CUDAJIT_CUDA_DRIVER"] = build_mock_driver(tmp)
            # cuda-bindings, which the examples' helpers call, loads libcuda.so.1
            # by name: the same mock there
            os.makedirs(os.path.join(tmp, "driver"))
            shutil.copy(env["CUDAJIT_CUDA_DRIVER"], os.path.join(tmp, "driver", "libcuda.so.1"))
            env["LD_LIBRARY_PATH"] = os.path.join(tmp, "driver") + os.pathsep + env.get("LD_LIBRARY_PATH", "")

        rows, skipped = [], []
        deadline = time.time() + a.budget if a.budget else None
        with cf.ThreadPoolExecutor(a.jobs) as pool:
            futs = []
            for n in names:
                perf = bool(PERFORMANCE.search(n))
                if perf and a.skip_performance:
                    skipped.append(n)
                    rows.append((n, "skipped", "a timing example (--skip-performance)", 0.0))
                    continue
                t = min(a.timeout, a.perf_timeout) if perf and mode == "gpu" else a.timeout
                futs.append(pool.submit(run_one, n, work, mode, t, env, a.logs, deadline))
            for fu in cf.as_completed(futs):
                rows.append(fu.result())
                r = rows[-1]
                print(f"  {r[0]:<55} {r[1]:<14} {r[3]:6.1f}s  {r[2][:150]}", file=sys.stderr, flush=True)

    rows.sort()
    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"\nmode: {mode}")
    print(f"{'example':<{width}}  {'result':<14}  first line of the error")
    for n, status, detail, _ in rows:
        print(f"{n:<{width}}  {status:<14}  {detail[:200]}")
    counts = {}
    for r in rows:
        counts[r[1]] = counts.get(r[1], 0) + 1
    print("\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" (of {len(rows)})")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"| example | {mode} | first line of the error |\n|---|---|---|\n")
            for n, status, detail, _ in rows:
                f.write(f"| {n[:-3]} | {status} | {detail[:200].replace('|', '/')} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
