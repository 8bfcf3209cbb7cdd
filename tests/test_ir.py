"""The IR text form (parser <-> printer) and the verifier, through _core."""

from pathlib import Path

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")
from cudajit.errors import CompileError  # noqa: E402

from test_golden import CaseFile, is_untyped_ir  # noqa: E402

CASES = sorted((Path(__file__).parent / "ir").glob("*.txt"))

AXPY = """\
func axpy(v0:f32 a, v1:array(f32, 1d, C) x, v2:array(f32, 1d, C) y) -> none kernel  @axpy.py:3
bb0:
  v3:i32 = intrinsic sreg.tid.x()  @4:9
  v4:i64 = cast v3  @4:9 [i]
  v5:i64 = array_size v1  @5:12
  v6:b1 = lt v4, v5  @5:8
  cbr v6, bb1, bb2  @5:5
bb1 (preds bb0):
  v7:f32 = load v1, v4  @6:20
  v8:f32 = mul v0, v7  @6:16
  v9:f32 = load v2, v4  @6:27
  v10:f32 = add v8, v9  @6:16
  store v2, v4, v10  @6:9
  br bb2  @6:9
bb2 (preds bb0, bb1):
  v11:none = const none
  ret v11  @6:9
"""


def ir_inputs():
    out = []
    for p in CASES:
        case = CaseFile.read(p)
        if not case.is_python and not p.stem.startswith("parse_error"):
            out.append(pytest.param(case.input, id=p.stem))
    return out


def test_axpy_round_trip():
    assert core.parse_print_ir(AXPY) == AXPY
    assert core.verify_ir(AXPY, True) == ""


@pytest.mark.parametrize("text", ir_inputs())
def test_print_is_a_fixpoint(text):
    """print(parse(t)) parses and prints to itself, for every IR in the goldens
    (inputs whose spelling is not canonical, such as `-2.7`, settle after one print)."""
    once = core.parse_print_ir(text)
    assert core.parse_print_ir(once) == once


def test_expected_outputs_verify():
    """Every IR a pass golden expects is itself valid IR."""
    checked = 0
    for p in CASES:
        case = CaseFile.read(p)
        section = case.expected_section()
        if case.is_python or section is None:
            continue
        want = case.get(section)
        if want.startswith("error:"):
            continue
        assert core.verify_ir(want, not is_untyped_ir(want)) == "", p.name
        checked += 1
    assert checked >= 12


def test_untyped_inputs_fail_typed_verification():
    text = CaseFile.read(Path(__file__).parent / "ir" / "roundtrip_untyped.txt").input
    assert core.verify_ir(text, False) == ""
    assert core.verify_ir(text, True) == "k: return type is not inferred"
    text = text.replace("-> ?", "-> none", 1)
    assert core.verify_ir(text, True) == "k:bb0:v0: type is '?' in typed IR"


def test_typed_inputs_verify_untyped_too():
    assert core.verify_ir(AXPY, False) == ""


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "line 1: expected 'func', found end of input"),
        ("bb0:\n  ret\n", "line 1: block outside a function"),
        ("func f() -> none\n  ret\n", "line 2: expected a block label 'bb0:', found 'ret'"),
        ("func f() none\nbb0:\n  ret\n", "line 1: expected '->', found 'none'"),
        ("func f() -> none\n", "line 1: expected a block 'bb0:', found end of function"),
        ("func f() -> none\nbb1:\n  ret\n", "line 2: expected 'bb0:' as the first block, found ':'"),
        ("func f() -> none\nbb0:\n  raise \"oops\n", "line 3: unterminated string"),
        ("func f(v0:i64 x) -> i64\nbb0:\n  br bb1(v0\nbb1(v1:i64 y):\n  ret v1\n",
         "line 3: expected ',' or ')' in edge arguments, found end of line"),
        ("func f(v0:i64 x) -> i64\nbb0:\n  v1:i64 = add v0, v0 junk\n  ret v1\n",
         "line 3: expected end of line, found 'junk'"),
        ("func f(v0:i64 x) -> i64\nbb0:\n  v1:i64 = tuple_get v0 1\n  ret v1\n",
         "line 3: expected '[index]', found '1'"),
        ("func f(v0:i64 x) -> i64\nbb0:\n  v1:i64 = const 1 @x\n  ret v1\n",
         "line 3: expected a source line after '@', found 'x'"),
        ("func f() -> none\nbb0:\n  ret\nfunc f() -> none\nbb0:\n  ret\n",
         "line 4: function 'f' defined twice"),
        ("func f() -> none kernel tmaps=0:f16:128\nbb0:\n  ret\n",
         "line 1: expected tensor maps such as 0:f16:128x64 after tmaps=, found end of line"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(CompileError) as info:
        core.parse_print_ir(text)
    assert info.value.message == message


def test_comments_and_blank_lines_are_skipped():
    text = "# a comment\n\n" + AXPY.replace("bb1 (preds bb0):\n", "bb1 (preds bb0):\n# inside\n\n")
    assert core.parse_print_ir(text) == AXPY


def test_preds_are_recomputed_not_read():
    stale = AXPY.replace("bb2 (preds bb0, bb1):", "bb2 (preds bb7):")
    assert core.parse_print_ir(stale) == AXPY


def test_forward_references_and_block_order_are_kept():
    text = """\
func f(v0:i64 n) -> i64
bb0:
  br bb2(v0)
bb2(v1:i64 x) (preds bb0, bb5):
  v2:b1 = lt v1, v3
  cbr v2, bb5, bb9
bb9 (preds bb2):
  ret v1
bb5 (preds bb2):
  v3:i64 = const 1
  br bb2(v3)
"""
    assert core.parse_print_ir(text) == text
    # The printed order is kept, but v3 does not dominate its use in bb2.
    assert core.verify_ir(text, True) == "f:bb2:v2: operand v3 (defined in bb5) does not dominate its use"


def test_constants_round_trip_exactly():
    values = ["0.10000000000000001", "-0.0", "nan", "inf", "-inf", "4.9406564584124654e-324", "1.7976931348623157e+308",
              "(1.0+-0.0j)", "(nan+infj)", "\"\\x00\\x1f \\\\ \\\"\"", "-9223372036854775808",
              "9223372036854775807", "((1, 2), (), (sym(math.pi),))"]
    body = "".join(f"  v{i}:? = const {v}\n" for i, v in enumerate(values))
    text = f"func c() -> ?\nbb0:\n{body}  ret\n"
    assert core.parse_print_ir(text) == text


def test_unsigned_constants_parse_above_int64():
    # u64 values are held bit-cast in an int64; the parser takes either spelling.
    a = "func c() -> u64\nbb0:\n  v0:u64 = const 18446744073709551615\n  ret v0\n"
    b = a.replace("18446744073709551615", "-1")
    assert core.parse_print_ir(a) == core.parse_print_ir(b) == b


def test_tensor_maps_round_trip():
    # A tile kernel's TMA tensor maps: argument, dtype, box rows x columns.
    text = ("func k(v0:array(f16, 2d, C) a, v1:array(bf16, 2d, C) b) -> none kernel num_warps=4 sm=90 "
            "tmaps=0:f16:128x64;1:bf16:64x64\nbb0:\n  ret\n")
    assert core.parse_print_ir(text) == text


def test_declared_signatures_round_trip():
    # A device function declared with signatures (@jit(["int32(int32)", ...], device=True)).
    text = ("func f(v0:i32 a) -> i32 sigs=[int32(int32); float64(float64); (float32[::1])]\n"
            "bb0:\n  ret v0\n")
    assert core.parse_print_ir(text) == text
    with pytest.raises(Exception, match="signatures such as float32"):
        core.parse_print_ir(text.replace("int32(int32)", "int32(nonsense)"))


def test_simt_block_round_trips():
    # A SIMT kernel with tile operations: the launch block shape it is lowered for.
    text = "func k(v0:array(f32, 1d, C) a) -> none kernel num_warps=4 sm=90 simt_block=32x2x2\nbb0:\n  ret\n"
    assert core.parse_print_ir(text) == text
    for bad in ("32x2", "32x2x0", "64x32x1", "axbxc"):
        with pytest.raises(Exception, match="a block shape such as 64x2x1"):
            core.parse_print_ir(text.replace("32x2x2", bad))
