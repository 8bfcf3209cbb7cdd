"""`python -m cudajit warm` and `python -m cudajit cache ...`: warming a
sample module offline (no GPU), replaying recorded signatures, and the run
that follows reading what was warmed. CI: the toolkit only (the replay test
records its signatures under the mock driver)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cudajit

PACKAGE_DIR = str(Path(cudajit.__file__).resolve().parents[1])

SAMPLE = '''
import cudajit as cuda

SCALE = 3.0

@cuda.jit(device=True)
def twice(v):
    return v * 2

@cuda.jit(["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"], cache=True)
def scale(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = twice(x[i]) * SCALE

@cuda.jit("void(int32[:, ::1], int32)", cache=True)
def fill(a, v):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] = v

@cuda.jit("void(float32[::1])")          # declared, but does not read the cache
def no_cache(x):
    x[0] = 1.0

@cuda.jit(cache=True)                    # lazy: nothing declared to warm
def lazy(x):
    x[0] = 2.0

if __name__ == "__main__":
    raise SystemExit("the warm CLI must not run the main block")
'''


def run(args, env_extra=None, cwd=None, check=True):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_DIR, env_extra.pop("PYTHONPATH", "")
                                                     if env_extra else "") if p)
    env.pop("CUDAJIT_CACHE", None)
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable] + args, env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    if check and proc.returncode != 0:
        pytest.fail(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample_kernels.py"
    path.write_text(SAMPLE)
    return path


@pytest.fixture
def cache_env(tmp_path):
    return {"CUDAJIT_CACHE_DIR": str(tmp_path / "cache")}


def cache_list(env):
    out = run(["-m", "cudajit", "cache", "list", "--json"], dict(env)).stdout
    return json.loads(out)


def test_warm_a_file_for_two_archs(sample, cache_env):
    p = run(["-m", "cudajit", "warm", str(sample), "--arch", "sm_80,sm_90"], dict(cache_env))
    # 3 declared signatures with cache=True + 1 without, for 2 archs
    assert p.stdout.count("compiled ") == 8, p.stdout
    assert "4 kernel(s) with declared signatures" not in p.stdout
    assert "3 kernel(s) with declared signatures" in p.stdout
    assert "no_cache does not read the cache" in p.stderr
    entries = cache_list(cache_env)
    assert len(entries) == 8 and all(e["valid"] for e in entries)
    assert sorted({e["arch"] for e in entries}) == [80, 90]
    assert {e["qualname"] for e in entries} == {"scale", "fill", "no_cache"}
    assert {e["signature"] for e in entries if e["qualname"] == "scale"} == {
        "(float32[::1], float32[::1])", "(float64[::1], float64[::1])"}
    # again: everything is there
    p = run(["-m", "cudajit", "warm", str(sample), "--arch", "sm_90", "--arch", "sm_80"],
            dict(cache_env))
    assert p.stdout.count("cached ") == 8 and "compiled " not in p.stdout


def test_warmed_entries_are_hits_at_run_time(sample, cache_env):
    run(["-m", "cudajit", "warm", str(sample)], dict(cache_env))   # default arch: sm_90 here
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(sample.parent)!r})
        import sample_kernels as m
        for k in (m.scale, m.fill):
            for sig, s in k.stats.items():
                print(k.__name__, s["cache_result"], s["nvvm"])
    """)
    out = run(["-c", code], dict(cache_env)).stdout.split("\n")
    lines = [l.split() for l in out if l]
    assert len(lines) == 3
    assert all(result == "hit" and float(nvvm) == 0.0 for _, result, nvvm in lines), out


def test_warm_a_module_by_name(sample, cache_env):
    env = dict(cache_env, PYTHONPATH=str(sample.parent))
    p = run(["-m", "cudajit", "warm", "sample_kernels", "--arch", "90"], env)
    assert p.stdout.count("compiled ") == 4
    # the module imported by name and the file loaded by path are the same
    # source: the same entries
    p = run(["-m", "cudajit", "warm", str(sample), "--arch", "90"], dict(cache_env))
    assert p.stdout.count("cached ") == 4


def test_warm_reports_failures(tmp_path, cache_env):
    bad = tmp_path / "bad_kernels.py"
    bad.write_text(textwrap.dedent('''
        import cudajit as cuda
        @cuda.jit("void(float32[::1])", cache=True)
        def good(x):
            x[0] = 1.0
        @cuda.jit("void(float32[::1])", cache=True)
        def broken(x):
            x[0] = "a string"
    '''))
    p = run(["-m", "cudajit", "warm", str(bad)], dict(cache_env), check=False)
    assert p.returncode == 1
    assert "FAILED    broken" in p.stderr and "compiled  good" in p.stdout
    p = run(["-m", "cudajit", "warm", "no_such_module_anywhere"], dict(cache_env), check=False)
    assert p.returncode == 1 and "cannot import no_such_module_anywhere" in p.stderr
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    p = run(["-m", "cudajit", "warm", str(empty)], dict(cache_env), check=False)
    assert p.returncode == 1 and "nothing to warm" in p.stderr
    p = run(["-m", "cudajit", "warm", str(bad), "--arch", "sm_nine"], dict(cache_env), check=False)
    assert p.returncode != 0 and "sm_nine" in p.stderr


def test_cache_info_list_clear(sample, cache_env):
    run(["-m", "cudajit", "warm", str(sample)], dict(cache_env))
    info = run(["-m", "cudajit", "cache", "info"], dict(cache_env)).stdout
    assert "entries:       4" in info and "libNVVM" in info and "sm_90" in info
    listing = run(["-m", "cudajit", "cache", "list"], dict(cache_env)).stdout
    assert listing.startswith("4 entries") and "scale(float32[::1], float32[::1])" in listing
    out = run(["-m", "cudajit", "cache", "clear"], dict(cache_env)).stdout
    assert "removed 4 file(s)" in out
    assert cache_list(cache_env) == []
    run(["-m", "cudajit", "warm", str(sample)], dict(cache_env))
    out = run(["-m", "cudajit", "cache", "clear", "--all"], dict(cache_env)).stdout
    assert "removed" in out and not Path(cache_env["CUDAJIT_CACHE_DIR"]).exists()


def test_cache_dir_option(sample, tmp_path):
    other = tmp_path / "elsewhere"
    run(["-m", "cudajit", "warm", str(sample), "--cache-dir", str(other)], {})
    assert len(list((other / "kernels").glob("*.cjk"))) == 4
    assert "4 entries" in run(["-m", "cudajit", "cache", "list", "--cache-dir", str(other)],
                              {}).stdout


# ------------------------------------------------------------ record and replay

APP = '''
import numpy as np
import cudajit as cuda

@cuda.jit(cache=True)
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]

def main():
    x = cuda.to_device(np.ones(8, np.float32))
    y = cuda.to_device(np.ones(8, np.float32))
    for _ in range(3):                       # one record per signature, not per launch
        saxpy[1, 32](2.0, x, y)
    saxpy[1, 32](np.float32(2.0), x, y)
    xd = cuda.to_device(np.ones((2, 4)))
    def local(v):
        v[0, 0] = 1.0
    cuda.jit(local)[1, 1](xd)                # defined in a function: recorded, not replayable
    for sig, s in saxpy.stats.items():
        print("RESULT", s["cache_result"])

if __name__ == "__main__":
    main()
'''


def test_record_then_warm_from_then_hit(tmp_path, mock_driver):
    app = tmp_path / "app.py"
    app.write_text(APP)
    records = tmp_path / "sigs.jsonl"
    env = {"CUDAJIT_CUDA_DRIVER": mock_driver, "CUDAJIT_RECORD": str(records),
           "CUDAJIT_CACHE_DIR": str(tmp_path / "first")}
    out = run([str(app)], dict(env)).stdout
    assert out.count("RESULT miss") == 2
    lines = [json.loads(l) for l in records.read_text().splitlines()]
    assert len(lines) == 3, lines
    sigs = sorted(tuple(l["signature"]) for l in lines if l["qualname"] == "saxpy")
    assert sigs == [("float32", "float32[::1]", "float32[::1]"),
                    ("float64", "float32[::1]", "float32[::1]")]
    assert all(l["file"] == str(app) and l["arch"] == 90 for l in lines)
    assert lines[0]["options"]["cache"] is True

    # a fresh cache, warmed from the records only (no GPU, no mock driver)
    cache = {"CUDAJIT_CACHE_DIR": str(tmp_path / "warmed")}
    p = run(["-m", "cudajit", "warm", "--from", str(records)], dict(cache), check=False)
    assert p.stdout.count("compiled ") == 2, p.stdout + p.stderr
    assert "defined inside a function" in p.stderr
    assert p.returncode == 1   # the unreplayable record is reported

    # the application now finds both signatures in the cache
    env2 = {"CUDAJIT_CUDA_DRIVER": mock_driver, "CUDAJIT_CACHE_DIR": str(tmp_path / "warmed")}
    out = run([str(app)], env2).stdout
    assert out.count("RESULT hit") == 2, out


def test_replay_skips_malformed_records(tmp_path, sample, cache_env):
    records = tmp_path / "r.jsonl"
    records.write_text("not json\n" + json.dumps({
        "module": "", "file": str(sample), "qualname": "scale",
        "signature": ["float32[::1]", "float32[::1]"], "arch": 80}) + "\n")
    p = run(["-m", "cudajit", "warm", "--from", str(records)], dict(cache_env), check=False)
    assert p.returncode == 1 and "not a signature record" in p.stderr
    assert "compiled  scale(float32[::1], float32[::1]) sm_80" in p.stdout


# ------------------------------------------------ a cache that travels (issue 12)

def test_warmed_cache_travels_to_another_place(sample, tmp_path):
    """Warmed here (in parallel), copied elsewhere with its module, read by a
    fresh process from the copy as a read-only fleet cache: every declared
    signature hits, nothing compiles, nothing is written."""
    warmed = tmp_path / "warmed"
    p = run(["-m", "cudajit", "warm", str(sample), "--cache-dir", str(warmed), "-j", "2"])
    assert p.stdout.count("compiled ") == 4, p.stdout   # 3 cache=True signatures + no_cache's
    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    (elsewhere / "sample_kernels.py").write_text(sample.read_text())
    import shutil
    shipped = tmp_path / "shipped_cache"
    shutil.copytree(warmed, shipped)
    before = sorted(str(f.relative_to(shipped)) for f in shipped.rglob("*"))
    code = textwrap.dedent(f"""
        import sys, warnings
        warnings.simplefilter("error")
        sys.path.insert(0, {str(elsewhere)!r})
        from cudajit import _core
        import sample_kernels as m
        for k in (m.scale, m.fill):
            for sig, s in k.stats.items():
                print(k.__name__, s["cache_result"], s["nvvm"])
        c = _core.cache_counters()
        print("counters", c["hits"], c["misses"], c["corrupt"])
    """)
    env = {"CUDAJIT_CACHE_DIR": str(shipped), "CUDAJIT_CACHE_READONLY": "1"}
    out = [l.split() for l in run(["-c", code], env).stdout.splitlines() if l]
    assert out[-1] == ["counters", "3", "0", "0"], out
    assert len(out) == 4 and all(r == "hit" and float(nvvm) == 0.0 for _, r, nvvm in out[:-1]), out
    assert sorted(str(f.relative_to(shipped)) for f in shipped.rglob("*")) == before


def test_read_only_cache_compiles_without_writing(sample, tmp_path):
    cache = tmp_path / "ro_cache"
    cache.mkdir()
    code = textwrap.dedent(f"""
        import sys, warnings
        warnings.simplefilter("error")   # no CacheWarning: a read-only cache is not an error
        sys.path.insert(0, {str(sample.parent)!r})
        import sample_kernels as m
        print(sorted({{s["cache_result"] for s in m.scale.stats.values()}}))
        from cudajit import cache
        print(cache.info()["read_only"])
    """)
    out = run(["-c", code], {"CUDAJIT_CACHE_DIR": str(cache), "CUDAJIT_CACHE_READONLY": "1"}).stdout.split("\n")
    assert out[0] == "['read-only']" and out[1] == "True", out
    assert list(cache.rglob("*")) == []
    p = run(["-m", "cudajit", "warm", str(sample)], {"CUDAJIT_CACHE_DIR": str(cache),
                                                     "CUDAJIT_CACHE_READONLY": "1"}, check=False)
    assert p.returncode == 1 and "read-only" in p.stderr, p.stderr


def test_cache_info_tells_foreign_entries(sample, cache_env, tmp_path):
    """Entries of another cudajit build are counted as not usable (and never loaded)."""
    run(["-m", "cudajit", "warm", str(sample)], dict(cache_env))
    code = textwrap.dedent(f"""
        import sys
        from cudajit import _core
        _core._set_package_version("0.0-other")
        sys.path.insert(0, {str(sample.parent)!r})
        import sample_kernels as m
        print(sorted({{s["cache_result"] for s in m.scale.stats.values()}}))
        print(m.scale.stats[("float32[::1]", "float32[::1]")]["cache_miss_reason"])
    """)
    out = run(["-c", code], dict(cache_env)).stdout.split("\n")
    assert out[0] == "['miss']", out
    assert out[1] == "an entry for this kernel, signature and arch differs in: cudajit", out
    info = json.loads(run(["-m", "cudajit", "cache", "info", "--json"], dict(cache_env)).stdout)
    assert info["current"] == 4 and info["foreign"] == {"cudajit build": 3}, info   # scale x2, fill
    text = run(["-m", "cudajit", "cache", "info"], dict(cache_env)).stdout
    assert "not usable:    3 from another cudajit build" in text, text


def test_build_id_is_the_sources_hash(tmp_path):
    """The build part of the identity is a hash of the sources (the same
    sources built anywhere share entries), not of the extension's file."""
    root = Path(__file__).resolve().parents[1]
    script = root / "cmake" / "build_id.cmake"
    if not script.exists():
        pytest.skip("not run from a source checkout")
    import shutil as _shutil
    cmake = _shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    out = tmp_path / "id.h"
    subprocess.run([cmake, f"-DROOT={root}", f"-DOUT={out}", "-P", str(script)], check=True)
    build_id = out.read_text().split('"')[1]
    assert len(build_id) == 64
    assert cudajit._core.cudajit_identity().endswith("build " + build_id[:24])


def test_a_newer_gpu_jit_compiles_the_shipped_ptx(sample, tmp_path, mock_driver):
    """Warmed for sm_90 on a machine without a GPU; on a GPU of a newer
    generation (the mock driver says 10.0) with no sm_100 entry, the sm_90
    entry's PTX is what the driver loads (and JIT-compiles): no compile."""
    cache = tmp_path / "cache"
    run(["-m", "cudajit", "warm", str(sample), "--arch", "sm_90"], {"CUDAJIT_CACHE_DIR": str(cache)})
    code = textwrap.dedent(f"""
        import ctypes, sys
        import numpy as np
        sys.path.insert(0, {str(sample.parent)!r})
        import cudajit as cuda
        import sample_kernels as m
        for sig, s in sorted(m.scale.stats.items()):
            print("stats", s["cache_result"], s["nvvm"], s.get("cache_miss_reason", ""))
        x = cuda.to_device(np.ones(8, np.float32)); y = cuda.device_array(8, np.float32)
        m.scale[1, 8](x, y)
        mock = ctypes.CDLL({mock_driver!r})
        mock.cjmock_last_image_head.restype = ctypes.c_char_p
        print("image", mock.cjmock_last_image_head()[:2].decode())
    """)
    env = {"CUDAJIT_CACHE_DIR": str(cache), "CUDAJIT_CUDA_DRIVER": mock_driver, "CJMOCK_CC": "100"}
    lines = run(["-c", code], env).stdout.splitlines()
    stats = [l.split(" ", 3) for l in lines if l.startswith("stats")]
    assert len(stats) == 2 and all(s[1] == "hit-ptx" and float(s[2]) == 0.0 for s in stats), lines
    assert stats[0][3] == "no entry for sm_100: the PTX of the sm_90 entry, JIT-compiled by the driver"
    assert lines[-1] == "image //", lines   # PTX text, not an ELF cubin
