"""The on-disk kernel cache: where it is, what it holds, clearing it.

Kernels compiled with ``@cudajit.jit(cache=True)`` (or with
``CUDAJIT_CACHE=1``) are stored under ``cache_dir()``, keyed by a hash of
everything that changes their code; ``python -m cudajit warm`` fills it ahead
of time and ``python -m cudajit cache list|clear|info`` inspects it. The
cache itself (keys, entry format, atomic writes, checksums) is C++
(runtime/kernel_cache.h); docs/caching.md describes it.
"""

import os
import shutil

from . import _core


def cache_root():
    """The root of cudajit's caches: ``$CUDAJIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/cudajit``, else ``~/.cache/cudajit``."""
    return _core.cache_root()


def cache_dir():
    """Where compiled kernels are stored (``<cache_root()>/kernels``)."""
    return _core.cache_dir()


def entries():
    """Every kernel entry, as dicts: path, key, size, valid, and for valid
    entries qualname, filename, signature, arch, created (unix time),
    compile_seconds, symbol, cubin_bytes, ptx_bytes."""
    return sorted(_core.cache_entries(), key=lambda e: (e.get("qualname", ""), e["path"]))


def clear(everything=False):
    """Removes the kernel entries (and leftover temp files); with
    ``everything``, the whole cache root (CUB builds, toolkit notes too).
    Returns the number of files removed."""
    target = cache_root() if everything else cache_dir()
    removed = 0
    if not os.path.isdir(target):
        return 0
    if everything:
        for _, _, files in os.walk(target):
            removed += len(files)
        shutil.rmtree(target, ignore_errors=True)
        return removed
    for name in os.listdir(target):
        if name.endswith(".cjk") or name.endswith(".tmp"):
            try:
                os.unlink(os.path.join(target, name))
                removed += 1
            except FileNotFoundError:
                pass   # another process removed it first
    return removed


def info():
    """A summary: directories, entry count and bytes, invalid entries, the
    identities (cudajit build, toolkit) that current keys are made of, how
    many entries were made under them (``current``) and how many under
    another cudajit build or toolkit (``foreign``, by what differs: such
    entries are never loaded), whether the cache is read-only, and this
    process's lookups (``process``: hits, misses, corrupt, and the last
    misses' reasons, e.g. "an entry for this kernel, signature and arch
    differs in: options")."""
    all_entries = _core.cache_entries()
    out = {
        "root": cache_root(),
        "kernels_dir": cache_dir(),
        "entries": len(all_entries),
        "bytes": sum(e["size"] for e in all_entries),
        "invalid": sum(1 for e in all_entries if not e["valid"]),
        "archs": sorted({e["arch"] for e in all_entries if e["valid"]}),
        "cudajit": _core.cudajit_identity(),
        "read_only": _core.cache_read_only(),
    }
    try:
        out["toolkit"] = _core.toolkit_identity().strip()
    except Exception as e:  # noqa: BLE001  (no toolkit: say so, do not fail)
        out["toolkit"] = f"unavailable ({e})"
    current, foreign = 0, {}
    for e in all_entries:
        if not e["valid"]:
            continue
        differs = [what for what, same in (("cudajit build", e["cudajit"] == out["cudajit"]),
                                           ("toolkit", e["toolkit"].strip() == out["toolkit"]))
                   if not same]
        if differs:
            why = " and ".join(differs)
            foreign[why] = foreign.get(why, 0) + 1
        else:
            current += 1
    out["current"] = current
    out["foreign"] = foreign
    out["process"] = _core.cache_counters()
    out["driver"] = _core.driver_version() if _core.is_available() else None
    return out


def memory_cache_limit():
    """The most entries each in-memory cache keeps (CUB's instantiations,
    whose entries are LTO-IR of hundreds of KB; each tile kernel's
    specialisations; each kernel's compiled signatures): the value given to
    set_memory_cache_limit(), else ``$CUDAJIT_MEMORY_CACHE_ENTRIES``, else 1024;
    0 means no bound."""
    return _core.memory_cache_limit()


def set_memory_cache_limit(entries):
    """Keeps only the ``entries`` most recently used instantiations in memory
    (0: no bound), as many specialisations of each tile kernel (one per set
    of Constant values), and as many compiled signatures of each kernel that
    compiles at launch (its module unloaded with it; a kernel with explicit
    signatures keeps them all). Those dropped are read again from the disk
    cache (``cache=True``), or compiled again, when a launch needs them; the
    bound is applied at the next compile."""
    _core.set_memory_cache_limit(int(entries))
