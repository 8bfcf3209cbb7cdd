"""Use lists (ir.h: Instr::uses): every value records who uses it, kept right by
Instr's setters. replaceAllUses walks the list; the verifier checks that every
list is exactly the set of operand slots and edge arguments holding the value,
after every pass (passes/pass_registry.cpp). Here: the lists of parsed IR,
RAUW, a corrupted list caught, and every pass in the registry alone (and the
default pipeline) over every golden input and every kernel of the GPU suite."""

import re
from pathlib import Path

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")
from cudajit.errors import CompileError  # noqa: E402

from test_golden import CaseFile, is_untyped_ir, load_python_function, split_signature  # noqa: E402

IR_DIR = Path(__file__).parent / "ir"

LOOP = """\
func f(v0:i64 n) -> i64
bb0:
  v1:i64 = const 0
  v2:i64 = const 1
  br bb1(v1, v1)
bb1(v3:i64 i, v4:i64 acc):
  v5:b1 = lt v3, v0
  cbr v5, bb2, bb3(v4)
bb2:
  v6:i64 = add v4, v3
  v7:i64 = add v3, v2
  br bb1(v7, v6)
bb3(v8:i64 r):
  ret v8
"""


def registry_passes():
    """The pass registry's names, from the runner's own 'known passes' hint."""
    with pytest.raises(CompileError) as info:
        core.run_passes(LOOP, ["no-such-pass"], True)
    # "known passes: a, b, ...; pipelines: ..."
    names = [n.strip() for n in info.value.hint.split(";")[0].split(":", 1)[1].split(",")]
    assert "dce" in names and "fold" in names
    # test_pass_manager registers passes that break the IR on purpose.
    return [n for n in names if not n.startswith("test-")]


# Terminators have no result; the parser numbers them after the values:
# br bb1 = v9, cbr = v10, br (bb2) = v11, ret = v12.
def test_uses_record_operands_and_edge_arguments():
    # (user id, successor or -1 for an operand, slot index)
    assert core.ir_uses(LOOP, 0) == [(5, -1, 1)]                       # lt v3, v0
    assert core.ir_uses(LOOP, 1) == [(9, 0, 0), (9, 0, 1)]             # br bb1(v1, v1): twice
    assert core.ir_uses(LOOP, 3) == [(5, -1, 0), (6, -1, 1), (7, -1, 0)]
    assert core.ir_uses(LOOP, 4) == [(6, -1, 0), (10, 1, 0)]           # cbr ..., bb3(v4): successor 1
    assert core.ir_uses(LOOP, 6) == [(11, 0, 1)]
    assert core.ir_uses(LOOP, 8) == [(12, -1, 0)]                      # ret v8
    assert core.ir_uses(LOOP, 5) == [(10, -1, 0)]


def test_replace_all_uses_moves_every_use():
    text, left = core.ir_replace_all_uses(LOOP, 3, 0)   # i -> n everywhere
    assert left == 0
    assert "v5:b1 = lt v0, v0" in text
    assert "v6:i64 = add v4, v0" in text
    assert "v7:i64 = add v0, v2" in text
    # Edge arguments too, and the result verifies (use lists included).
    text, left = core.ir_replace_all_uses(LOOP, 1, 2)
    assert left == 0 and "br bb1(v2, v2)" in text
    text, left = core.ir_replace_all_uses(LOOP, 4, 0)
    assert left == 0 and "cbr v5, bb2, bb3(v0)" in text and "v6:i64 = add v0, v3" in text


def test_replace_all_uses_result_has_exact_lists():
    text, _ = core.ir_replace_all_uses(LOOP, 3, 0)
    # Parsing the printed result rebuilds the lists from scratch: the same ones.
    assert core.ir_uses(text, 0) == [(5, -1, 0), (5, -1, 1), (6, -1, 1), (7, -1, 0)]
    assert core.ir_uses(text, 3) == []


@pytest.mark.parametrize("value", [0, 1, 3, 4, 8])
def test_verifier_rejects_a_stale_use_list(value):
    assert core.verify_ir(LOOP, True) == ""
    message = core.ir_verify_with_a_use_dropped(LOOP, value, True)
    assert "use lists record 12 use(s) but 13 operand slot(s)" in message


def test_verifier_ignores_values_without_uses():
    # v9 (a terminator) has no uses: nothing to drop, the IR stays valid.
    assert core.ir_verify_with_a_use_dropped(LOOP, 9, True) == ""


# ---- every pass keeps the lists right ---------------------------------------------

def golden_inputs():
    """(name, IR text, typed) of every golden case whose input verifies."""
    out = []
    for path in sorted(IR_DIR.glob("*.txt")):
        case = CaseFile.read(path)
        try:
            if case.is_python:
                sig = case.get("Signature")
                types = split_signature(sig) if sig is not None else []
                text = core.golden_ir(load_python_function(case), types)
                typed = bool(types)
            else:
                text = case.input
                typed = not is_untyped_ir(text)
            ok = core.verify_ir(text, typed) == ""
        except CompileError:
            continue   # a case about a front-end or parse error
        if (case.get("Expected") or "").startswith("error:"):
            continue   # a case about a pass refusing its input (tile-check-simt)
        if ok:
            out.append((path.stem, text, typed))
    return out


GOLDEN = golden_inputs()


def test_golden_inputs_found():
    assert len(GOLDEN) >= 25


@pytest.mark.parametrize("name,text,typed", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_each_pass_alone_keeps_use_lists(name, text, typed):
    # run_passes verifies after every pass, use lists included: a pass that
    # bypassed Instr's setters raises "IR invalid after pass ...".
    for p in registry_passes():
        core.run_passes(text, [p], typed)
    core.run_passes(text, ["default"], typed)


def kernel_cases():
    import kernel_cases as kc
    return kc.CASES


@pytest.mark.parametrize("case", kernel_cases(), ids=lambda c: c.name)
def test_decoder_typeinfer_and_passes_keep_use_lists(case):
    fn = getattr(case.kernel, "py_func", case.kernel)
    # The decoder's IR, verified in memory (a text round trip would rebuild the lists).
    assert core.verify_decoded(fn) == ""
    # Type inference verifies its own result in memory (typeinfer/infer.cpp);
    # then each pass alone and the default pipeline on the typed IR.
    sig = case.sig.strip()
    types = split_signature(sig[sig.index("(") + 1:sig.rindex(")")])   # "void(a, b)" -> [a, b]
    typed = core.infer_ir(fn, types, True)
    for p in registry_passes():
        core.run_passes(typed, [p], True)
    core.run_passes(typed, ["default"], True)
