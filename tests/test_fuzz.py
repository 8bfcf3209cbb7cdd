"""scripts/fuzz.py (issue 15) in CI: a short, seeded run of the differential
fuzzer must find no mismatch, crash or generator error, and its harness
must notice a wrong answer when one is planted."""
import math
import os
import sys

import pytest

pytest.importorskip("llvmlite.binding")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import fuzz  # noqa: E402


def test_seeded_run_agrees(tmp_path, capsys):
    assert fuzz.main(["--seconds", "120", "--max-programs", "150", "--seed", "7", "--out", str(tmp_path)]) == 0
    summary = capsys.readouterr().out
    assert "programs 150" in summary and "mismatch 0, crash 0, generator 0" in summary
    assert not list(tmp_path.iterdir())


def test_llvm_back_end_optimiser_agrees(tmp_path, capsys):
    # issue 16: the same programs through the LLVM back end's O3 (NVPTX target), run on the CPU
    try:
        from cudajit import _core
        _core.llvm_backend_version()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no LLVM back end in this build: {e}")
    assert fuzz.main(["--seconds", "120", "--max-programs", "150", "--seed", "7", "--out", str(tmp_path),
                      "--backend", "llvm"]) == 0
    summary = capsys.readouterr().out
    assert "programs 150" in summary and "mismatch 0, crash 0, generator 0" in summary


V = tuple(range(-8, 8))   # the array argument v


def test_the_harness_catches_a_wrong_answer(monkeypatch):
    body = ["    i1 = (a // (b | 1)) % 1000003", "    return float(i1) + x + v[-1]"]
    args = [(7, -2, 1.5, 2.0, V), (-7, 2, 1.5, 2.0, V)]
    assert fuzz.run_one(body, args) == "ok"
    real = fuzz.reference
    monkeypatch.setattr(fuzz, "reference", lambda src: (lambda *a: real(src)(*a) + 1))
    assert fuzz.run_one(body, args).startswith("mismatch: args=(7, -2, 1.5, 2.0")


def test_typed_values_follow_numba():
    # numba's typing and wraparound, as the reference computes them and
    # cudajit runs them (tests/host_exec.py): uint32 * uint32 is uint64 (and
    # int64() of it wraps); int32 + uint32 is int64; int64 < uint64 compares
    # as float64; a conversion to uint32 wraps; float32 arithmetic rounds to
    # float32; a view with a negative step writes through to v.
    body = ["    u = np.uint32(a) * np.uint32(b)",
            "    s = np.int32(a) + np.uint32(b)",
            "    c = np.int64(-1) < np.uint64(18446744073709551615)",
            "    f = np.float32(x) / np.float32(3.0) + np.float32(16777216.0)",
            "    w = v[::-3]",
            "    w[1] = (a * 7) % 1000003",
            "    i = (np.int64(u) % 1000003) + (s % 1000003) + (np.int64(np.uint32(-a)) % 1000003)",
            "    return float(i + (1 if c else 0) + v[-4] + w[-1]) + np.float64(f)"]
    args = [(-5, 3000000000, 1.0, 2.0, V), (4000000000, -7, 0.1, 0.0, V), (0, 0, -0.0, 1.0, V)]
    u = (2**32 - 5) * 3000000000 - 2**64           # < 2**64: no wrap as uint64; as int64, negative
    i = u % 1000003 + (-5 + 3000000000) % 1000003 + 5
    v12 = (-5 * 7) % 1000003                        # w[1] is v[12], which v[-4] reads
    want = float(i + 1 + v12 + V[0]) + 16777216.0   # 1/3 is lost in float32, not in float64
    assert fuzz.reference(fuzz.source_of(body))(*fuzz.ref_args(args[0])) == want
    assert fuzz.run_one(body, args) == "ok"


def test_undefined_in_numba_is_not_compared():
    # a signed overflow (numba's nsw) and a NaN to int leave the subset: not compared
    body = ["    return float(np.int64(a) * np.int64(a) % 1000003) + float(np.int32(x))"]
    args = [(3037000500, 1, 1.0, 0.0, V), (2, 1, math.nan, 0.0, V), (2, 1, 5.5, 0.0, V)]
    ref = fuzz.reference(fuzz.source_of(body))
    for bad in args[:2]:
        with pytest.raises(ValueError):
            ref(*fuzz.ref_args(bad))
    assert ref(*fuzz.ref_args(args[2])) == 4.0 + 5.0
    assert fuzz.run_one(body, args) == "ok"


@pytest.mark.parametrize("backend", ["nvvm", "llvm"])
def test_gpu_kernels_compile_without_a_gpu(backend):
    # --target gpu's kernel (a block per argument set, a row of v each, the
    # program's shared array in the block's shared memory) compiles to PTX here
    import random
    import cudajit
    if backend == "llvm":
        try:
            from cudajit import _core
            _core.llvm_backend_version()
        except Exception as e:  # noqa: BLE001
            pytest.skip(f"no LLVM back end in this build: {e}")
    rng = random.Random(3)
    for _ in range(4):
        gen = fuzz.Gen(rng)
        kernel = fuzz.gpu_kernel(fuzz.build(fuzz.source_of(gen.program())), backend)
        ptx, _ = cudajit.compile_ptx(kernel, fuzz.gpu_signature(gen.vtype), backend=backend)
        assert ".shared" in ptx and ".entry" in ptx


def test_reference_agrees_with_numba(tmp_path, capsys):
    # --target numba: the reference's typing rules against numba's own njit
    # (numba is not a dependency: skipped where it is not installed)
    pytest.importorskip("numba")
    assert fuzz.main(["--seconds", "120", "--max-programs", "20", "--seed", "5", "--out", str(tmp_path),
                      "--target", "numba"]) == 0
    assert "mismatch 0, crash 0, generator 0" in capsys.readouterr().out


def test_programs_are_reproducible():
    import random
    one = fuzz.Gen(random.Random(5)).program()
    two = fuzz.Gen(random.Random(5)).program()
    assert one == two and len(one) >= 3


def test_front_end_mutants_raise_and_never_crash(capsys):
    # scripts/fuzz_frontend.py: mutated code objects compile or raise a Python
    # exception; a child process that dies is a crash (reported with the mutant).
    import fuzz_frontend
    assert fuzz_frontend.main(["--count", "120", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "mutants 120 (seed 5)" in out and "crashes 0" in out
