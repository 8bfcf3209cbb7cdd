"""The on-disk kernel cache (@jit(cache=True)): hits and misses for every
part of the key, corrupt and truncated entries, concurrent writers. CI: no
GPU needed (explicit signatures compile eagerly, through the cache)."""

import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit import cache as cj_cache

SIG = "void(float32[::1], float32[::1], int64)"
KEY = ("float32[::1]", "float32[::1]", "int64")

BASE = """
    import cudajit as cuda
    G = 2.0

    @cuda.jit(device=True)
    def scale(v):
        return v * G

    def k(x, y, n):
        i = cuda.grid(1)
        if i < n:
            y[i] = scale(x[i]) + 1.0
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(d))
    monkeypatch.delenv("CUDAJIT_CACHE", raising=False)
    return d


def kernel_from(src, sig=SIG, filename="/virtual/cj_cache_kernels.py", name="k", **options):
    """A kernel compiled (eagerly, through the cache) from source text; the
    file name is fixed so that equal sources give equal IR."""
    g = {}
    exec(compile(textwrap.dedent(src), filename, "exec"), g)
    options.setdefault("cache", True)
    return cuda.jit(sig, **options)(g[name])


def outcome(kernel, key=KEY):
    return kernel.stats[key]["cache_result"]


def entries(cache_dir):
    return sorted((cache_dir / "kernels").glob("*.cjk"))


def test_miss_then_hit_with_the_same_code(cache_dir):
    first = kernel_from(BASE)
    assert outcome(first) == "miss"
    assert len(entries(cache_dir)) == 1
    second = kernel_from(BASE)
    assert outcome(second) == "hit"
    a, b = first.overloads[KEY], second.overloads[KEY]
    assert a.cubin == b.cubin and a.cubin[:4] == b"\x7fELF"
    assert a.symbol == b.symbol
    # what the entry holds serves inspection without compiling again
    assert second.inspect_ptx(KEY) == first.inspect_ptx(KEY) and ".entry" in second.inspect_ptx(KEY)
    assert second.inspect_ir(KEY) == first.inspect_ir(KEY)
    assert second.inspect_nvvm(KEY) == first.inspect_nvvm(KEY)
    stats = second.stats[KEY]
    assert stats["nvvm"] == 0 and stats["link"] == 0 and stats["cache"] > 0


def test_off_by_default(cache_dir):
    k = kernel_from(BASE, cache=False)
    assert outcome(k) == "off"
    assert not (cache_dir / "kernels").exists()


def test_environment_overrides(cache_dir, monkeypatch):
    monkeypatch.setenv("CUDAJIT_CACHE", "0")
    assert outcome(kernel_from(BASE, cache=True)) == "off"
    monkeypatch.setenv("CUDAJIT_CACHE", "1")
    assert outcome(kernel_from(BASE, cache=False)) == "miss"
    assert outcome(kernel_from(BASE, cache=False)) == "hit"


# Each variant changes one thing the code depends on: it must miss, and the
# unchanged base must still hit afterwards.
VARIANTS = {
    "kernel bytecode": BASE.replace("scale(x[i]) + 1.0", "scale(x[i]) + 2.0"),
    "kernel operation": BASE.replace("scale(x[i]) + 1.0", "scale(x[i]) - 1.0"),
    "frozen global": BASE.replace("G = 2.0", "G = 3.0"),
    "frozen global, tiny change": BASE.replace("G = 2.0", "G = 2.0000000000000004"),
    "device function body": BASE.replace("return v * G", "return v * G * G"),
    "device function name": BASE.replace("scale", "scale2"),
}


@pytest.mark.parametrize("what", sorted(VARIANTS))
def test_source_changes_miss(cache_dir, what):
    assert outcome(kernel_from(BASE)) == "miss"
    assert outcome(kernel_from(VARIANTS[what])) == "miss", what
    assert outcome(kernel_from(BASE)) == "hit"
    assert outcome(kernel_from(VARIANTS[what])) == "hit"
    assert len(entries(cache_dir)) == 2


def test_closure_cell_value_misses(cache_dir):
    def make(c):
        def k(x, y, n):
            i = cuda.grid(1)
            if i < n:
                y[i] = x[i] * c
        return cuda.jit(SIG, cache=True)(k)

    assert outcome(make(2.0)) == "miss"
    assert outcome(make(5.0)) == "miss"
    assert outcome(make(2.0)) == "hit"


def test_unrelated_code_in_the_file_hits(cache_dir):
    assert outcome(kernel_from(BASE)) == "miss"
    # code after the kernel moves no line of it and changes none of its IR
    assert outcome(kernel_from(BASE + "\n    def unrelated():\n        return 42\n")) == "hit"


def test_signature_misses(cache_dir):
    assert outcome(kernel_from(BASE)) == "miss"
    k64 = kernel_from(BASE, sig="void(float64[::1], float64[::1], int64)")
    assert outcome(k64, ("float64[::1]", "float64[::1]", "int64")) == "miss"
    kA = kernel_from(BASE, sig="void(float32[:], float32[::1], int64)")
    assert outcome(kA, ("float32[:]", "float32[::1]", "int64")) == "miss"
    assert len(entries(cache_dir)) == 3


@pytest.mark.parametrize("option,value", [("fastmath", True), ("opt", False), ("lineinfo", True),
                                          ("debug", True), ("fast_compile", "mid")])
def test_options_miss(cache_dir, option, value):
    assert outcome(kernel_from(BASE)) == "miss"
    assert outcome(kernel_from(BASE, **{option: value})) == "miss"
    assert outcome(kernel_from(BASE, **{option: value})) == "hit"


def test_arch_misses(cache_dir):
    k = kernel_from(BASE, cache=False)
    assert k._warm(SIG, "sm_90") is True
    assert k._warm(SIG, "sm_80") is True      # another arch: another entry
    assert k._warm(SIG, "sm_90") is False     # both there now
    assert k._warm(SIG, 80) is False
    archs = sorted(e["arch"] for e in cj_cache.entries())
    assert archs == [80, 90]


def run_compile(tmp_path, env_extra, prologue=""):
    """Compiles BASE in a fresh process; returns its cache result."""
    src = tmp_path / "child_kernels.py"
    src.write_text(textwrap.dedent(BASE))
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import cudajit as cuda
        from cudajit import _core
        {prologue}
        import child_kernels
        k = cuda.jit({SIG!r}, cache=True)(child_kernels.k)
        print(k.stats[{KEY!r}]["cache_result"])
    """)
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = str(Path(cuda.__file__).resolve().parents[1])
    env.pop("CUDAJIT_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_fresh_process_hits(tmp_path):
    env = {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache")}
    assert run_compile(tmp_path, env) == "miss"
    assert run_compile(tmp_path, env) == "hit"


def test_cudajit_version_misses(tmp_path):
    env = {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache")}
    assert run_compile(tmp_path, env) == "miss"
    assert run_compile(tmp_path, env, '_core._set_package_version("99.0")') == "miss"
    assert run_compile(tmp_path, env, '_core._set_package_version("99.0")') == "hit"
    assert run_compile(tmp_path, env) == "hit"


def toolkit_identity_in(tmp_path, env_extra):
    """The toolkit identity a fresh process computes."""
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = str(Path(cuda.__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", "from cudajit import _core; print(_core.toolkit_identity(), end='')"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_same_toolkit_elsewhere_hits(tmp_path):
    """The identity is the toolkit's versions and content, not where it is or
    when it was copied: a copy of libdevice elsewhere (another virtual
    environment, container or machine) reads the same entries."""
    libdevice = Path(_core.toolchain_paths()["libdevice"])
    other = tmp_path / "toolkit" / "libdevice.10.bc"
    other.parent.mkdir()
    shutil.copy(libdevice, other)
    env = {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache")}
    assert run_compile(tmp_path, env) == "miss"
    assert run_compile(tmp_path, dict(env, CUDAJIT_LIBDEVICE=str(other))) == "hit"
    st = other.stat()   # a new modification time alone changes nothing
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert run_compile(tmp_path, dict(env, CUDAJIT_LIBDEVICE=str(other))) == "hit"
    identity = toolkit_identity_in(tmp_path, dict(env, CUDAJIT_LIBDEVICE=str(other)))
    assert str(tmp_path) not in identity and "/" not in identity, identity


def test_other_toolkit_content_is_another_identity(tmp_path):
    """A libdevice with other bytes (an upgrade) gives another identity,
    through the remembered note too (its size and time changed)."""
    libdevice = Path(_core.toolchain_paths()["libdevice"])
    other = tmp_path / "toolkit" / "libdevice.10.bc"
    other.parent.mkdir()
    data = bytearray(libdevice.read_bytes())
    env = {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache"), "CUDAJIT_LIBDEVICE": str(other)}
    other.write_bytes(bytes(data))
    same = toolkit_identity_in(tmp_path, env)
    data[len(data) // 2] ^= 0xFF
    other.write_bytes(bytes(data))
    changed = toolkit_identity_in(tmp_path, env)
    lines = lambda text, what: [l for l in text.splitlines() if l.startswith(what)]
    assert lines(same, "libdevice") != lines(changed, "libdevice")
    assert lines(same, "libnvvm") == lines(changed, "libnvvm")


def test_toolkit_identity_is_remembered(tmp_path):
    env = {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache")}
    run_compile(tmp_path, env)
    notes = list((tmp_path / "cache" / "toolkit").glob("*.txt"))
    assert len(notes) == 1
    text = notes[0].read_text()
    # the identity (versions, content fingerprints), then the local stamps that say when to redo it
    assert "libNVVM" in text and "\nlibdevice " in text and "\nnvjitlink " in text
    assert "stamp libdevice /" in text and "stamp nvjitlink /" in text


# ------------------------------------------------------------ damaged entries

def damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":
        mid = len(data) // 2
        path.write_bytes(data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1:])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif how == "checksum":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif how == "directory":
        path.unlink()
        path.mkdir()


def test_a_miss_says_what_differed(cache_dir):
    assert outcome(kernel_from(BASE)) == "miss"
    fresh = kernel_from(BASE)
    assert outcome(fresh) == "hit" and "cache_miss_reason" not in fresh.stats[KEY]
    assert kernel_from(BASE, fastmath=True).stats[KEY]["cache_miss_reason"] == (
        "an entry for this kernel, signature and arch differs in: options")
    changed = kernel_from(BASE.replace("+ 1.0", "+ 2.0")).stats[KEY]["cache_miss_reason"]
    assert changed == "an entry for this kernel, signature and arch differs in: the kernel's code"
    other = kernel_from(BASE, sig="void(float64[::1], float64[::1], int64)")
    assert other.stats[("float64[::1]", "float64[::1]", "int64")]["cache_miss_reason"] == (
        "no entry for this kernel, signature and arch")
    counters = _core.cache_counters()
    assert counters["hits"] >= 1 and counters["misses"] >= 4
    assert any("differs in: options" in r for r in counters["miss_reasons"])


@pytest.mark.parametrize("how", ["truncated", "flipped", "empty", "garbage", "checksum", "directory"])
def test_damaged_entry_is_recompiled_with_a_warning(cache_dir, how):
    good = kernel_from(BASE)
    (entry,) = entries(cache_dir)
    damage(entry, how)
    with pytest.warns(cuda.CacheWarning, match="corrupt"):
        again = kernel_from(BASE)
    assert outcome(again) == "corrupt"
    assert again.overloads[KEY].cubin == good.overloads[KEY].cubin
    if how != "directory":   # a directory in the way cannot be replaced by rename
        assert outcome(kernel_from(BASE)) == "hit"   # rewritten whole


def test_unwritable_cache_still_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(blocker / "cache"))
    with warnings.catch_warnings():   # warned once per process: maybe by an earlier test
        warnings.simplefilter("ignore", cuda.CacheWarning)
        k = kernel_from(BASE)
    assert outcome(k) == "unwritable"
    assert k.overloads[KEY].cubin[:4] == b"\x7fELF"


def test_unwritable_cache_warns_once(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    code = textwrap.dedent(f"""
        import warnings
        import cudajit as cuda
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as w:
            for c in (1.0, 2.0):   # two kernels, two failed writes
                exec("def k(x, y, n):\\n    y[0] = x[0] * %r" % c, globals())
                cuda.jit({SIG!r}, cache=True)(k)
        print(sum(issubclass(x.category, cuda.CacheWarning) for x in w))
    """)
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(blocker / "cache"),
               PYTHONPATH=str(Path(cuda.__file__).resolve().parents[1]))
    env.pop("CUDAJIT_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"


def test_entry_listing_and_clear(cache_dir):
    kernel_from(BASE)
    kernel_from(BASE, sig="void(float64[::1], float64[::1], int64)")
    listed = cj_cache.entries()
    assert len(listed) == 2 and all(e["valid"] for e in listed)
    e = listed[0]
    assert e["qualname"] == "k" and e["filename"] == "/virtual/cj_cache_kernels.py"
    assert e["arch"] == 90 and e["cubin_bytes"] > 0 and e["ptx_bytes"] > 0
    assert {x["signature"] for x in listed} == {"(float32[::1], float32[::1], int64)",
                                               "(float64[::1], float64[::1], int64)"}
    info = cj_cache.info()
    assert info["entries"] == 2 and info["invalid"] == 0 and info["archs"] == [90]
    assert "libNVVM" in info["toolkit"] and info["cudajit"].startswith("cudajit ")
    damage(entries(cache_dir)[0], "truncated")
    assert cj_cache.info()["invalid"] == 1
    assert cj_cache.clear() == 2
    assert cj_cache.entries() == []


# ------------------------------------------------------------ several processes

WRITER = """
import sys, time
sys.path.insert(0, {dir!r})
start = float(sys.argv[1])
import cudajit as cuda
import child_kernels
while time.time() < start:
    time.sleep(0.001)
k = cuda.jit({sig!r}, cache=True)(child_kernels.k)
print(k.stats[{key!r}]["cache_result"])
"""


def test_concurrent_writers_leave_one_valid_entry(tmp_path):
    import time
    (tmp_path / "child_kernels.py").write_text(textwrap.dedent(BASE))
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(dir=str(tmp_path), sig=SIG, key=KEY))
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(Path(cuda.__file__).resolve().parents[1]))
    env.pop("CUDAJIT_CACHE", None)
    start = time.time() + 8.0   # all of them import first, then compile at once
    procs = [subprocess.Popen([sys.executable, str(script), str(start)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(out.strip())
    assert all(r in ("miss", "hit") for r in results), results
    kernels = tmp_path / "cache" / "kernels"
    files = sorted(os.listdir(kernels))
    assert len(files) == 1 and files[0].endswith(".cjk"), files   # no temp files left over
    (entry,) = [e for e in _core_entries(tmp_path / "cache")]
    assert entry["valid"]
    assert run_compile(tmp_path, {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache")}) == "hit"


def _core_entries(root):
    old = os.environ.get("CUDAJIT_CACHE_DIR")
    os.environ["CUDAJIT_CACHE_DIR"] = str(root)
    try:
        return _core.cache_entries()
    finally:
        if old is None:
            del os.environ["CUDAJIT_CACHE_DIR"]
        else:
            os.environ["CUDAJIT_CACHE_DIR"] = old


# ------------------------------------------------------------ statistics

def test_compile_stats_line(cache_dir, capfd):
    os.environ["CUDAJIT_COMPILE_STATS"] = "1"
    try:
        kernel_from(BASE)
    finally:
        del os.environ["CUDAJIT_COMPILE_STATS"]
    err = capfd.readouterr().err
    assert "cudajit: compile k(float32[::1], float32[::1], int64) sm_90" in err
    assert "nvvm" in err and "link" in err and "cache=miss" in err


def test_stats_stages(cache_dir):
    k = kernel_from(BASE, cache=False)
    s = k.stats[KEY]
    assert set(s) == {"decode", "infer", "passes", "emit", "nvvm", "link", "cache", "load", "total",
                      "cache_result", "assembler"}
    # ptxas runs in the driver for the GPU in hand, else in nvJitLink.
    assert s["assembler"] == ("driver" if cuda.is_available() else "nvJitLink")
    assert s["nvvm"] > 0 and s["link"] > 0 and s["decode"] > 0
    assert s["total"] == pytest.approx(sum(s[x] for x in ("decode", "infer", "passes", "emit",
                                                          "nvvm", "link", "cache", "load")))
    # the compiler's own stages are a small part of a cold compile
    ours = s["decode"] + s["infer"] + s["passes"] + s["emit"]
    assert ours < s["nvvm"] + s["link"]
