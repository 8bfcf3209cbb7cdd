"""The pass manager (compiler/passes/pipeline.h): named pipelines, the
verifier after every pass, print-after (CUDAJIT_PRINT_AFTER and
inspect_ir(after=...)), and the cub-barriers pass beyond its goldens
(tests/ir/cub_barriers*.txt). No GPU needed."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")
import cudajit as cuda  # noqa: E402
from cudajit.errors import CompileError  # noqa: E402

PYTHON_DIR = str(Path(core.__file__).resolve().parents[1])

LOOP = """func f(v0:array(i32, 1d, C) a) -> none kernel  @p.py:1
bb0:
  v1:i64 = const 4
  v2:i64 = const 8
  v3:i64 = mul v1, v2
  v4:i64 = const 0
  v5:i64 = const 1
  v6:range(i64) = range v4, v3, v5
  v7:rangeiter(i64) = getiter v6
  br bb1(v3, v7)
bb1(v8:i64 n, v9:rangeiter(i64)) (preds bb0, bb2):
  v10:b1 = iter_valid v9
  v11:i64 = iter_next v9
  cbr v10, bb2(v11), bb3
bb2(v12:i64 i) (preds bb1):
  v13:i32 = cast v12
  store v0, v12, v13
  br bb1(v8, v9)
bb3 (preds bb1):
  v14:none = const none
  ret v14
"""


def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


SIG = ("float32", "float32[::1]", "float32[::1]")


def run_core(code, **env):
    """Runs `code` (with `core` imported) in a fresh interpreter; returns the CompletedProcess."""
    full = dict(os.environ, PYTHONPATH=PYTHON_DIR, **env)
    prog = "import cudajit._core as core\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", prog], env=full, capture_output=True, text=True,
                          timeout=120)


# ------------------------------------------------------------------ pipelines

def test_simt_pipeline_is_the_default():
    assert core.pipeline_passes("simt") == ["simplify-params", "fold", "dce", "range", "cub-barriers"]
    assert core.pipeline_passes("default") == core.pipeline_passes("simt")
    assert core.run_passes(LOOP, ["simt"], True) == core.run_passes(LOOP, ["default"], True)
    assert core.run_passes(LOOP, ["simt"], True) == core.run_passes(LOOP, core.pipeline_passes("simt"), True)


def test_unknown_pipeline_is_a_compile_error():
    with pytest.raises(CompileError) as info:
        core.pipeline_passes("tiles")
    assert info.value.message == "unknown pipeline 'tiles'"
    assert "simt" in info.value.hint


def test_unknown_pass_names_the_known_passes_and_pipelines():
    with pytest.raises(CompileError) as info:
        core.run_passes(LOOP, ["fold", "flod"], True)
    assert info.value.message == "unknown pass 'flod'"
    assert "cub-barriers" in info.value.hint and "pipelines: simt" in info.value.hint


# ------------------------------------------------------------ the verifier

def test_verifier_names_the_pass_that_broke_the_ir():
    core._register_test_pass()   # "test-break-terminators": drops the entry block's terminator
    with pytest.raises(CompileError) as info:
        core.run_passes(LOOP, ["fold", "test-break-terminators", "dce"], True)
    msg = info.value.message
    assert msg.startswith("IR invalid after pass 'test-break-terminators': "), msg
    assert "terminator" in msg
    assert info.value.construct == "pass test-break-terminators"


def test_suite_runs_with_the_verifier_on():
    # tests/conftest.py turns it on for every test (and its subprocesses).
    assert os.environ.get("CUDAJIT_VERIFY_IR") == "1"


# ------------------------------------------------------------ print-after

def test_print_after_env_prints_the_named_passes_to_stderr():
    r = run_core(f"print(core.run_passes({LOOP!r}, ['simt'], True), end='')",
                 CUDAJIT_PRINT_AFTER="fold, range")
    assert r.returncode == 0, r.stderr
    headers = [l for l in r.stderr.splitlines() if l.startswith("; *** IR after pass")]
    assert headers == ["; *** IR after pass 'fold' ***", "; *** IR after pass 'range' ***"]
    # after range: the final IR (cub-barriers changes nothing here)
    after_range = r.stderr.split("; *** IR after pass 'range' ***\n", 1)[1]
    assert after_range == r.stdout
    # after fold: `4 * 8` folded, not yet cleaned up by dce
    after_fold = r.stderr.split("; *** IR after pass 'fold' ***\n", 1)[1].split("; ***")[0]
    assert "const 32" in after_fold and "mul v1, v2" not in after_fold


def test_print_after_all():
    r = run_core(f"core.run_passes({LOOP!r}, ['simt'], True)", CUDAJIT_PRINT_AFTER="all")
    assert r.returncode == 0, r.stderr
    headers = [l for l in r.stderr.splitlines() if l.startswith("; *** IR after pass")]
    assert headers == [f"; *** IR after pass '{p}' ***" for p in core.pipeline_passes("simt")]


def test_print_after_unknown_pass_is_a_clear_error():
    r = run_core(f"core.run_passes({LOOP!r}, ['simt'], True)", CUDAJIT_PRINT_AFTER="fold,flod")
    assert r.returncode != 0
    assert "CUDAJIT_PRINT_AFTER names an unknown pass 'flod'" in r.stderr


def test_print_after_env_applies_to_kernel_compiles():
    r = run_core("""
        import cudajit as cuda
        def k(x):
            x[0] = 2 * 3
        cuda.jit("void(int64[::1])")(k)
    """, CUDAJIT_PRINT_AFTER="dce")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("; *** IR after pass 'dce' ***") == 1
    assert "func k" in r.stderr


def test_inspect_ir_after_a_pass():
    k = cuda.jit("void(float32, float32[::1], float32[::1])")(axpy)
    final = k.inspect_ir(SIG)
    assert k.inspect_ir(SIG, after="cub-barriers") == final        # the last pass
    after_fold = k.inspect_ir(SIG, after="fold")
    assert after_fold != final and after_fold.startswith("func axpy")
    assert "nsw" not in after_fold and "nonneg" in final           # facts come from range
    assert k.inspect_ir(after="fold")[SIG] == after_fold            # per signature, like inspect_ir()
    assert k.inspect_ir() [SIG] == final                            # no argument: as before


def test_inspect_ir_after_several_passes():
    k = cuda.jit("void(float32, float32[::1], float32[::1])")(axpy)
    snaps = k.inspect_ir(SIG, after="fold,range")
    assert list(snaps) == ["fold", "range"]
    assert snaps["fold"] == k.inspect_ir(SIG, after="fold")
    everything = k.inspect_ir(SIG, after="all")
    assert list(everything) == core.pipeline_passes("simt")


def test_inspect_ir_after_unknown_or_absent_pass():
    k = cuda.jit("void(float32, float32[::1], float32[::1])")(axpy)
    with pytest.raises(CompileError) as info:
        k.inspect_ir(SIG, after="flod")
    assert info.value.message == "inspect_ir(after=...) names an unknown pass 'flod'"
    assert "fold" in info.value.hint
    with pytest.raises(CompileError) as info:
        k.inspect_ir(SIG, after="remove-unreachable")
    assert info.value.message == "pass 'remove-unreachable' is not in the pipeline 'simt'"


# ------------------------------------------------------------ cub-barriers

DEVICE_ONLY = """func helper(v0:f32 x) -> f32  @k.py:10
bb0:
  v1:f32 = intrinsic cub "block_reduce float32 op=sum block=128x1x1 ipt=1"(v0)
  v2:f32 = intrinsic cub "block_reduce float32 op=sum block=128x1x1 ipt=1"(v1)
  ret v2
"""


def test_cub_barriers_leaves_device_function_compiles_alone():
    # compile_ptx(device=True): no kernel in the module, every barrier stays
    assert core.run_passes(DEVICE_ONLY, ["cub-barriers"], True) == core.parse_print_ir(DEVICE_ONLY)
    kernel = DEVICE_ONLY.replace("-> f32  @k.py:10", "-> f32 kernel  @k.py:10")
    out = core.run_passes(kernel, ["cub-barriers"], True)
    assert out.count("nosync") == 1 and 'ipt=1 nosync"(v1)' in out


def test_cub_barriers_keeps_histogram_barriers():
    text = """func k(v0:array(i32, 1d, C) s, v1:array(u32, 1d, C) h) -> none kernel  @k.py:1
bb0:
  v2:i64 = const 0
  v3:i32 = load v0, v2
  intrinsic cub "block_histogram int32 value=uint32 block=128x1x1 ipt=1 arrangement=atomic bins=16"(v3, v1)
  v4:none = const none
  ret v4
"""
    assert "nosync" not in core.run_passes(text, ["cub-barriers"], True)
