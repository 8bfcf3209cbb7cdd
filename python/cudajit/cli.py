"""``python -m cudajit``: warm the disk cache ahead of time, inspect it.

    python -m cudajit warm MODULE_OR_FILE ... [--arch sm_80,sm_90] [--from RECORDS]
    python -m cudajit cache list|clear|info [--json] [--all]

``warm`` imports each module (``pkg.kernels``) or file (``path/kernels.py``)
with eager compiles held back, finds the kernels that declare signatures
(``@cudajit.jit("void(float32[::1])")``) and compiles each signature for each
architecture into the cache; no GPU is needed. ``--from PATH`` replays the
signatures a program launched with ``CUDAJIT_RECORD=PATH`` set. A kernel
reads the cache at run time when it has ``cache=True`` (or ``CUDAJIT_CACHE=1``
is set). ``--cache-dir`` (or ``$CUDAJIT_CACHE_DIR``) picks the cache.
"""

import argparse
import importlib
import importlib.util
import json
import os
import re
import sys
import time

from . import _core
from . import cache as _cache
from .decorators import _arch_number
from .dispatcher import Dispatcher


def _say(args, text):
    if not getattr(args, "quiet", False):
        print(text)


def _archs(specs):
    """--arch values ("sm_80,sm_90", repeatable) -> [80, 90]; default: this
    machine's GPU, else sm_90 (what a compile without a GPU targets)."""
    out = []
    for spec in specs or ():
        for part in spec.split(","):
            part = part.strip()
            if part:
                try:
                    out.append(_arch_number(None, part))
                except ValueError:
                    raise SystemExit(f"cudajit warm: cannot read the architecture {part!r} "
                                     "(write sm_90, compute_90 or 90)") from None
    if out:
        return sorted(set(out), key=out.index)
    if _core.is_available():
        major, minor = _core.device_info(_core.current_device())["compute_capability"]
        return [major * 10 + minor]
    return [90]


def _is_file(target):
    return target.endswith(".py") or os.sep in target or os.path.isfile(target)


def _load_file(path):
    """Imports a source file as a module (not as __main__: its
    ``if __name__ == "__main__":`` block does not run)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_cudajit_warm_{stem}"
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
        return sys.modules[name]
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)   # its own imports resolve as when it runs
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load(target):
    if _is_file(target):
        return _load_file(target)
    return importlib.import_module(target)


def _kernels_of(module):
    seen, out = set(), []
    for name, obj in vars(module).items():
        if isinstance(obj, Dispatcher) and id(obj) not in seen:
            seen.add(id(obj))
            out.append((name, obj))
    return out


def _add_compute_objects(args, target, module, archs, warmer):
    """cudajit.compute's make_* objects at module level (built on ProxyArrays
    or arrays): the kernels they launch, for each architecture."""
    from .compute import _build
    objects = [(n, o) for n, o in sorted(vars(module).items()) if _build.is_compute_object(o)]
    if objects:
        _say(args, f"{target}: {len(objects)} cudajit.compute object(s)")
    for name, obj in objects:
        for kernel, signature, block in _build.kernels_to_warm(obj):
            for arch in archs:
                warmer.jobs.append((f"{name}:{kernel.py_func.__name__}", kernel, signature, arch, block))


def _sig_text(sig):
    return "(" + ", ".join(sig) + ")"


class _Warmer:
    def __init__(self, args):
        self.args = args
        self.compiled = self.cached = self.failed = 0
        self.uncached_kernels = set()
        self.jobs = []   # (label, kernel, signature, arch, block)

    def run(self, jobs):
        """Every job, in `jobs` processes forked from this one (they share the
        imported kernels; each compiles its share into the cache), or here
        (one job, -j 1, or no fork: not Linux)."""
        import multiprocessing
        ctx = None
        if jobs > 1 and len(self.jobs) > 1:
            try:
                ctx = multiprocessing.get_context("fork")
            except ValueError:
                pass
        if ctx is None:
            for job in self.jobs:
                self.warm(*job)
            return
        global _FORKED_WARMER
        _FORKED_WARMER = self   # the workers inherit it (nothing is pickled but counts)
        n = min(jobs, len(self.jobs))
        with ctx.Pool(n) as pool:
            for compiled, cached, failed, uncached in pool.map(_warm_share, [(k, n) for k in range(n)]):
                self.compiled += compiled
                self.cached += cached
                self.failed += failed
                self.uncached_kernels |= uncached

    def warm(self, label, kernel, sig, arch, block=None):
        t0 = time.perf_counter()
        try:
            # block: the launch block shape of kernels with block algorithms
            # (recorded; declared signatures carry their own)
            fresh = kernel._warm(tuple(sig), arch, block)
        except Exception as e:  # noqa: BLE001  (report every failure, go on with the rest)
            self.failed += 1
            print(f"  FAILED    {label}{_sig_text(sig)} sm_{arch}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return
        ms = (time.perf_counter() - t0) * 1e3
        if fresh:
            self.compiled += 1
            _say(self.args, f"  compiled  {label}{_sig_text(sig)} sm_{arch}  {ms:.1f} ms")
        else:
            self.cached += 1
            _say(self.args, f"  cached    {label}{_sig_text(sig)} sm_{arch}")
        if not kernel._cache and os.environ.get("CUDAJIT_CACHE") != "1":
            self.uncached_kernels.add(label)


_FORKED_WARMER = None


def _warm_share(work):
    """In a forked worker: jobs k, k + n, k + 2n, ... of the warmer."""
    k, n = work
    warmer = _FORKED_WARMER
    mine = _Warmer(warmer.args)
    for job in warmer.jobs[k::n]:
        mine.warm(*job)
    sys.stdout.flush()
    return mine.compiled, mine.cached, mine.failed, mine.uncached_kernels


def _resolve(module, qualname):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _replay(args, warmer, archs_given):
    """Signatures recorded with CUDAJIT_RECORD: one JSON object per line."""
    todo = {}
    for path in args.records:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                    block = rec.get("block")
                    key = (rec.get("module", ""), rec.get("file", ""), rec["qualname"],
                           tuple(rec["signature"]), int(rec.get("arch", 90)),
                           tuple(int(b) for b in block) if block else None)
                except (ValueError, KeyError, TypeError) as e:
                    print(f"  skipped   {path}:{lineno}: not a signature record ({e})",
                          file=sys.stderr)
                    warmer.failed += 1
                    continue
                todo[key] = True
    modules = {}
    for module_name, file, qualname, sig, arch, block in todo:
        label = f"{module_name}.{qualname}" if module_name else qualname
        if "<locals>" in qualname:
            print(f"  skipped   {label}: defined inside a function, it cannot be found by name "
                  "(define it at module level, or declare its signatures)", file=sys.stderr)
            warmer.failed += 1
            continue
        where = (module_name, file)
        if where not in modules:
            modules[where] = None
            errors = []
            if module_name and module_name != "__main__":
                try:
                    modules[where] = importlib.import_module(module_name)
                except Exception as e:  # noqa: BLE001
                    errors.append(f"import {module_name}: {e}")
            if modules[where] is None and file and os.path.isfile(file):
                try:
                    modules[where] = _load_file(file)
                except Exception as e:  # noqa: BLE001
                    errors.append(f"load {file}: {e}")
            if modules[where] is None:
                print(f"  skipped   {label}: cannot load its module ({'; '.join(errors) or 'no file'})",
                      file=sys.stderr)
        module = modules[where]
        if module is None:
            warmer.failed += 1
            continue
        try:
            kernel = _resolve(module, qualname)
        except AttributeError:
            kernel = None
        if not isinstance(kernel, Dispatcher):
            print(f"  skipped   {label}: no cudajit kernel of that name in {module.__name__}",
                  file=sys.stderr)
            warmer.failed += 1
            continue
        for a in (archs_given or [arch]):
            warmer.jobs.append((label, kernel, sig, a, block))


def _warm(args):
    if args.cache_dir:
        os.environ["CUDAJIT_CACHE_DIR"] = os.path.abspath(args.cache_dir)
    if not args.targets and not args.records:
        print("cudajit warm: name modules or files to warm, or --from a record file",
              file=sys.stderr)
        return 2
    archs_given = _archs(args.arch) if args.arch else None
    archs = archs_given or _archs(None)
    warmer = _Warmer(args)
    _core._set_defer_explicit_compiles(True)   # imports record signatures; compiles happen here
    try:
        for target in args.targets:
            try:
                module = _load(target)
            except Exception as e:  # noqa: BLE001
                print(f"cudajit warm: cannot import {target}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                warmer.failed += 1
                continue
            kernels = [(n, k) for n, k in _kernels_of(module) if k._declared_signatures]
            _say(args, f"{target}: {len(kernels)} kernel(s) with declared signatures")
            for name, kernel in kernels:
                for sig in kernel._declared_signatures:
                    for arch in archs:
                        warmer.jobs.append((name, kernel, sig, arch, None))
            _add_compute_objects(args, target, module, archs, warmer)
        if args.records:
            _replay(args, warmer, archs_given)
        warmer.run(args.jobs or os.cpu_count() or 1)
    finally:
        _core._set_defer_explicit_compiles(False)
    total = warmer.compiled + warmer.cached
    _say(args, f"warm: {warmer.compiled} compiled, {warmer.cached} already cached, "
               f"{warmer.failed} failed; cache: {_cache.cache_dir()}")
    for label in sorted(warmer.uncached_kernels):
        print(f"note: {label} does not read the cache at run time: give it cache=True "
              "(or set CUDAJIT_CACHE=1)", file=sys.stderr)
    if warmer.failed:
        return 1
    if total == 0:
        print("cudajit warm: nothing to warm (no kernel declares a signature)", file=sys.stderr)
        return 1
    return 0


def _when(t):
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else "-"


def _cache_cmd(args):
    if args.cache_dir:
        os.environ["CUDAJIT_CACHE_DIR"] = os.path.abspath(args.cache_dir)
    if args.action == "list":
        entries = _cache.entries()
        if args.json:
            print(json.dumps(entries, indent=2))
            return 0
        print(f"{len(entries)} entries in {_cache.cache_dir()}")
        for e in entries:
            if not e["valid"]:
                print(f"  {e['key'][:12]}  INVALID (truncated or corrupt: recompiled on next use)  "
                      f"{e['size']} B")
                continue
            print(f"  {e['key'][:12]}  sm_{e['arch']}  {e['qualname']}{e['signature']}  "
                  f"{e['size']} B  {_when(e['created'])}  {e['filename']}")
        return 0
    if args.action == "clear":
        n = _cache.clear(everything=args.all)
        print(f"removed {n} file(s) from {_cache.cache_root() if args.all else _cache.cache_dir()}")
        return 0
    info = _cache.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"cache root:    {info['root']}")
    print(f"kernels:       {info['kernels_dir']}")
    print(f"entries:       {info['entries']} ({info['bytes']} bytes, {info['invalid']} invalid)")
    print(f"usable here:   {info['current']} (this cudajit build and toolkit)")
    for why, n in sorted(info["foreign"].items()):
        print(f"not usable:    {n} from another {why} (never loaded)")
    print(f"read-only:     {'yes' if info['read_only'] else 'no'}")
    print(f"archs:         {', '.join(f'sm_{a}' for a in info['archs']) or '-'}")
    print(f"cudajit:       {info['cudajit']}")
    print(f"driver:        {info['driver'] if info['driver'] is not None else 'none (no GPU)'}")
    print("toolkit:       " + info["toolkit"].replace("\n", "\n               "))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m cudajit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    w = sub.add_parser("warm", help="compile declared (or recorded) signatures into the cache")
    w.add_argument("targets", nargs="*", help="modules (pkg.kernels) or files (path/kernels.py)")
    w.add_argument("--arch", action="append",
                   help="architectures, comma-separated, repeatable (sm_80,sm_90); default: "
                        "this machine's GPU, else sm_90")
    w.add_argument("--from", dest="records", action="append", default=[],
                   help="a file written by a run with CUDAJIT_RECORD=file (repeatable)")
    w.add_argument("--cache-dir", help="the cache root (default $CUDAJIT_CACHE_DIR or the user "
                                       "cache directory)")
    w.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    w.add_argument("-j", "--jobs", type=int, default=0,
                   help="compile in this many processes (default: one per core; 1: here)")
    c = sub.add_parser("cache", help="inspect or clear the kernel cache")
    c.add_argument("action", choices=["list", "clear", "info"])
    c.add_argument("--json", action="store_true", help="machine-readable output (list, info)")
    c.add_argument("--all", action="store_true",
                   help="clear: the whole cache root (CUB builds and toolkit notes too)")
    c.add_argument("--cache-dir", help="the cache root")
    args = parser.parse_args(argv)
    if args.command == "warm":
        return _warm(args)
    if args.command == "cache":
        return _cache_cmd(args)
    parser.print_help()
    return 2
