"""The passes, beyond the goldens: `fold` against numpy / Python semantics on
fresh random operands, the pass runner's errors, idempotence."""

import math
import re
import struct

import numpy as np
import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")
from cudajit.errors import CompileError  # noqa: E402

INT_TYPES = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
RESULT_RE = re.compile(r"= const (\S+)(?:  @\S+)? \[(r\d+)\]")


def fold_results(lines, extra_passes=()):
    """Folds one function holding `lines`; returns {var: printed constant or None}."""
    text = "func f() -> none\nbb0:\n" + "".join(f"  {l}\n" for l in lines)
    text += f"  v{10**6}:none = const none\n  ret v{10**6}\n"
    out = core.run_passes(text, ["fold", *extra_passes], True)
    got = {m.group(2): m.group(1) for m in RESULT_RE.finditer(out)}
    names = re.findall(r"\[(r\d+)\]", text)
    return {n: got.get(n) for n in names}


def int_samples(rng, np_t, n):
    info = np.iinfo(np_t)
    edges = [info.min, info.max, 0, 1, -1, 2, -2, 7, -7, 3]
    edges = [e for e in edges if info.min <= e <= info.max]
    rand = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=np_t).tolist()
    small = rng.integers(max(info.min, -20), min(info.max, 20), size=n, endpoint=True).tolist()
    return edges + rand + small


def as_stored(v, ty):
    """How the printer writes an int constant of type ty (u64 bit-cast to i64)."""
    return v - 2**64 if ty == "u64" and v >= 2**63 else v


def build_binary(op, ty, pairs):
    lines, k = [], 0
    for i, (a, b) in enumerate(pairs):
        lines.append(f"v{k}:{ty} = const {a}")
        lines.append(f"v{k + 1}:{ty} = const {b}")
        lines.append(f"v{k + 2}:{ty} = {op} v{k}, v{k + 1} [r{i}]")
        k += 3
    return lines


@pytest.mark.parametrize("ty", list(INT_TYPES))
@pytest.mark.parametrize("op", ["add", "sub", "mul", "floordiv", "mod", "and", "or", "xor"])
def test_fold_int_binary_matches_numpy(op, ty):
    np_t = INT_TYPES[ty]
    rng = np.random.default_rng()
    xs = int_samples(rng, np_t, 30)
    ys = int_samples(rng, np_t, 30)
    rng.shuffle(ys)
    pairs = list(zip(xs, ys))
    got = fold_results(build_binary(op, ty, [(as_stored(a, ty), as_stored(b, ty)) for a, b in pairs]))
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "floordiv": np.floor_divide,
          "mod": np.remainder, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    info = np.iinfo(np_t)
    checked = 0
    for i, (a, b) in enumerate(pairs):
        r = got[f"r{i}"]
        if op in ("floordiv", "mod") and (b == 0 or (a == info.min and b == -1 and op == "floordiv")):
            assert r is None, f"{a} {op} {b} must be left to run time"
            continue
        with np.errstate(all="ignore"):
            want = int(fn(np.array([a], dtype=np_t), np.array([b], dtype=np_t))[0])
        assert r is not None, f"{ty} {a} {op} {b} was not folded"
        assert int(r) == as_stored(want, ty), f"{ty} {a} {op} {b}: folded {r}, numpy {want}"
        checked += 1
    assert checked >= 40


@pytest.mark.parametrize("ty", ["i8", "i32", "i64", "u16", "u64"])
@pytest.mark.parametrize("op", ["lt", "le", "eq", "ne", "gt", "ge"])
def test_fold_int_compare_matches_numpy(op, ty):
    np_t = INT_TYPES[ty]
    rng = np.random.default_rng()
    xs, ys = int_samples(rng, np_t, 20), int_samples(rng, np_t, 20)
    rng.shuffle(ys)
    pairs = list(zip(xs, ys))
    lines, k = [], 0
    for i, (a, b) in enumerate(pairs):
        lines += [f"v{k}:{ty} = const {as_stored(a, ty)}", f"v{k + 1}:{ty} = const {as_stored(b, ty)}",
                  f"v{k + 2}:b1 = {op} v{k}, v{k + 1} [r{i}]"]
        k += 3
    got = fold_results(lines)
    fn = {"lt": np.less, "le": np.less_equal, "eq": np.equal, "ne": np.not_equal,
          "gt": np.greater, "ge": np.greater_equal}[op]
    for i, (a, b) in enumerate(pairs):
        want = bool(fn(np_t(a), np_t(b)))
        assert got[f"r{i}"] == ("true" if want else "false"), f"{ty} {a} {op} {b}"


@pytest.mark.parametrize("ty", ["i8", "i32", "i64", "u8", "u32", "u64"])
def test_fold_shifts_match_numpy(ty):
    np_t = INT_TYPES[ty]
    bits = np.iinfo(np_t).bits
    rng = np.random.default_rng()
    xs = int_samples(rng, np_t, 20)
    amounts = [int(s) for s in rng.integers(0, bits, size=len(xs))]
    pairs = list(zip(xs, amounts))
    for op, fn in (("lshift", np.left_shift), ("rshift", np.right_shift)):
        got = fold_results(build_binary(op, ty, [(as_stored(a, ty), s) for a, s in pairs]))
        for i, (a, s) in enumerate(pairs):
            want = int(fn(np.array([a], dtype=np_t), np.array([s], dtype=np_t))[0])
            assert int(got[f"r{i}"]) == as_stored(want, ty), f"{ty} {a} {op} {s}"
    # Shifting by the width or more is poison in LLVM: left alone.
    got = fold_results(build_binary("lshift", ty, [(1, bits)]))
    assert got["r0"] is None


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def float_samples(rng, n, single):
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -7.5, 2.0, -2.0, 1e30, -1e-30, math.inf, -math.inf, math.nan]
    vals += (rng.standard_normal(n) * 10).tolist() + (rng.standard_normal(n) * 1e6).tolist()
    return [f32(v) for v in vals] if single else vals


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("ty", ["f32", "f64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "floordiv", "mod"])
def test_fold_float_binary_matches_numpy(op, ty):
    """numpy's float // and % follow CPython's float_divmod, as numba does."""
    single = ty == "f32"
    np_t = np.float32 if single else np.float64
    rng = np.random.default_rng()
    xs = float_samples(rng, 15, single)
    ys = float_samples(rng, 15, single)
    rng.shuffle(ys)
    pairs = list(zip(xs, ys))
    got = fold_results(build_binary(op, ty, [(repr(a), repr(b)) for a, b in pairs]))
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
          "floordiv": np.floor_divide, "mod": np.remainder}[op]
    for i, (a, b) in enumerate(pairs):
        r = got[f"r{i}"]
        if op in ("truediv", "floordiv", "mod") and b == 0:
            assert r is None
            continue
        with np.errstate(all="ignore"):
            want = float(fn(np_t(a), np_t(b)))
        assert r is not None, f"{ty} {a} {op} {b} not folded"
        assert same_float(float(r), want), f"{ty} {a!r} {op} {b!r}: folded {r}, numpy {want!r}"


def test_fold_float_to_int_casts_match_numpy():
    rng = np.random.default_rng()
    vals = [-2.7, 2.7, -0.5, 127.9, -128.9, 1e20, -1.0, math.nan] + (rng.standard_normal(30) * 300).tolist()
    targets = {"i8": np.int8, "i32": np.int32, "u8": np.uint8, "i64": np.int64, "u64": np.uint64}
    lines, expect, k = [], {}, 0
    for ty, np_t in targets.items():
        info = np.iinfo(np_t)
        for v in vals:
            name = f"r{k}"
            lines += [f"v{2 * k}:f64 = const {v!r}", f"v{2 * k + 1}:{ty} = cast v{2 * k} [{name}]"]
            t = math.trunc(v) if math.isfinite(v) else None
            expect[name] = as_stored(t, ty) if t is not None and info.min <= t <= info.max else None
            k += 1
    got = fold_results(lines)
    for name, want in expect.items():
        assert (None if got[name] is None else int(got[name])) == want, name


def test_fold_int_to_int_casts_match_numpy():
    rng = np.random.default_rng()
    lines, expect, k = [], {}, 0
    for src, src_t in INT_TYPES.items():
        for v in int_samples(rng, src_t, 6):
            for dst, dst_t in INT_TYPES.items():
                name = f"r{k}"
                lines += [f"v{2 * k}:{src} = const {as_stored(v, src)}",
                          f"v{2 * k + 1}:{dst} = cast v{2 * k} [{name}]"]
                expect[name] = as_stored(int(np.array([v], dtype=src_t).astype(dst_t)[0]), dst)
                k += 1
    got = fold_results(lines)
    for name, want in expect.items():
        if got[name] is None:   # same-type casts are forwarded, not folded into a new constant
            continue
        assert int(got[name]) == want, name


def test_unknown_pass_is_a_compile_error():
    text = "func f() -> none\nbb0:\n  v0:none = const none\n  ret v0\n"
    with pytest.raises(CompileError) as info:
        core.run_passes(text, ["fold", "nonsense"], True)
    assert info.value.message == "unknown pass 'nonsense'"
    assert "simplify-params" in info.value.hint


def test_invalid_input_is_reported_before_any_pass():
    text = "func f(v0:i64 x) -> i64\nbb0:\n  v1:i64 = add v0, v2\n  v2:i64 = add v0, v0\n  ret v1\n"
    with pytest.raises(CompileError) as info:
        core.run_passes(text, ["dce"], True)
    assert info.value.message == ("invalid IR before the passes: "
                                  "f:bb0:v1: operand v2 (defined in bb0) does not dominate its use")


def test_default_pipeline_is_idempotent():
    from test_golden import CaseFile
    from pathlib import Path
    case = CaseFile.read(Path(__file__).parent / "ir" / "default_pipeline.txt")
    once = core.run_passes(case.input, ["default"], True)
    assert core.run_passes(once, ["default"], True) == once
    assert core.run_passes(once, ["simplify-params", "fold", "dce", "remove-unreachable"], True) == once
