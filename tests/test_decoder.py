"""Stage 1: the bytecode decoder (Python function -> untyped SSA IR text).

Each test decodes a small Python function with `_core.decode_ir` and asserts
structural facts of the printed IR (which ops appear, which constants and
symbols were frozen, block parameters at joins, source lines), so the same
assertions hold for the bytecode of CPython 3.10 to 3.13.
"""
import cmath
import importlib.util
import inspect
import math
import operator
import pathlib
import re
import sys

import numpy as np
import pytest

from cudajit import _core
from cudajit.errors import CompileError


# ---- stand-ins for the cudajit package's symbols ------------------------------------
# The decoder only looks at `_cudajit_symbol_` / `_cudajit_device_py_func_`,
# so these tests do not depend on the Python package's implementation.
class _Sym:
    def __init__(self, name, *children):
        self._cudajit_symbol_ = name
        for child in children:
            setattr(self, child, _Sym(f"{name}.{child}"))

    def __call__(self, *args, **kwargs):  # pragma: no cover - never run
        raise RuntimeError("symbol called from Python")


cuda = _Sym("cudajit", "grid", "gridsize", "syncthreads", "threadfence", "laneid", "warpsize")
cuda.threadIdx = _Sym("cudajit.threadIdx", "x", "y", "z")
cuda.blockIdx = _Sym("cudajit.blockIdx", "x")          # .y/.z resolve by name (fallback)
cuda.blockDim = _Sym("cudajit.blockDim", "x", "y", "z")
cuda.gridDim = _Sym("cudajit.gridDim", "x", "y", "z")
cuda.shared = _Sym("cudajit.shared", "array")
cuda.local = _Sym("cudajit.local", "array")
cuda.atomic = _Sym("cudajit.atomic", "add")


class _DeviceDispatcher:
    """What @cudajit.jit(device=True) returns, as far as the decoder cares."""

    def __init__(self, fn):
        self._cudajit_device_py_func_ = fn
        self.__name__ = fn.__name__


def device(fn):
    return _DeviceDispatcher(fn)


# ---- reading the IR text --------------------------------------------------------------
INSTR = re.compile(
    r"^  (?:(?P<def>v\d+):(?P<type>\S+) = )?(?P<op>[a-z_]+)(?P<rest>.*?)"
    r"(?:  @(?P<line>\d+)(?::(?P<col>\d+))?)?(?: \[(?P<var>[^\]]+)\])?$"
)
BLOCK = re.compile(r"^bb(?P<id>\d+)(?:\((?P<params>[^)]*)\))?(?: \(preds (?P<preds>[^)]*)\))?:$")
FUNC = re.compile(r"^func (?P<name>\S+)\((?P<params>[^)]*)\) -> (?P<ret>\S+)(?P<rest>.*)$")


class Instr:
    def __init__(self, m):
        self.value = m["def"]
        self.type = m["type"]
        self.op = m["op"]
        self.rest = m["rest"].strip()
        self.line = int(m["line"]) if m["line"] else 0
        self.col = int(m["col"]) if m["col"] else 0
        self.var = m["var"]

    def __repr__(self):
        return f"{self.value} = {self.op} {self.rest} @{self.line}:{self.col} [{self.var}]"


class Block:
    def __init__(self, m):
        self.id = int(m["id"])
        self.params = [p.strip() for p in (m["params"] or "").split(",") if p.strip()]
        self.preds = [p.strip() for p in (m["preds"] or "").split(",") if p.strip()]
        self.instrs = []

    @property
    def param_vars(self):
        return [p.split()[1] if len(p.split()) > 1 else None for p in self.params]


class Func:
    def __init__(self, m):
        self.name = m["name"]
        self.params = [p.strip() for p in m["params"].split(",") if p.strip()]
        self.header = m.group(0)
        self.blocks = []

    @property
    def arg_names(self):
        return [p.split()[1] for p in self.params]

    @property
    def instrs(self):
        return [i for b in self.blocks for i in b.instrs]

    def ops(self, op):
        return [i for i in self.instrs if i.op == op]

    def consts(self):
        return [i.rest for i in self.ops("const")]

    def count(self, op):
        return len(self.ops(op))

    def defining(self, value):
        for i in self.instrs:
            if i.value == value:
                return i
        return None


def parse(text):
    funcs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        m = FUNC.match(line)
        if m:
            funcs.append(Func(m))
            continue
        m = BLOCK.match(line)
        if m:
            funcs[-1].blocks.append(Block(m))
            continue
        m = INSTR.match(line)
        assert m, f"unparsable IR line: {line!r}"
        funcs[-1].blocks[-1].instrs.append(Instr(m))
    return funcs


def decode(fn):
    """Decodes fn; checks the module verifies as untyped IR and that its text
    round-trips through the IR parser; returns (first function, all, text)."""
    text = _core.decode_ir(fn)
    if hasattr(_core, "verify_ir"):
        problem = _core.verify_ir(text, False)
        assert problem == "", f"{problem}\n{text}"
        assert _core.parse_print_ir(text) == text
    funcs = parse(text)
    assert funcs, text
    return funcs[0], funcs, text


def line_of(fn, marker):
    """Absolute source line of the line in `fn` that contains `marker`."""
    lines, first = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return first + k
    raise AssertionError(f"marker {marker!r} not in {fn.__name__}")


# 3.10's bytecode has source lines and no columns (no co_positions).
HAS_COLUMNS = sys.version_info >= (3, 11)


def col_of(fn, marker, token):
    """1-based column of `token` on the line marked `marker` (0 without columns)."""
    if not HAS_COLUMNS:
        return 0
    lines, _ = inspect.getsourcelines(fn)
    for text in lines:
        if marker in text:
            return text.index(token) + 1
    raise AssertionError(marker)


def compile_error(fn):
    with pytest.raises(CompileError) as info:
        _core.decode_ir(fn)
    return info.value


# ---- module-level globals the kernels below read ------------------------------------
N = 128
SCALE = 2.5
FLAG = True
ZC = 1 + 2j
NOTHING = None
LABEL = "hello"
SHAPE = (16, 8)
BIG_UNSIGNED = 2**64 - 1
NP_SCALAR = np.float32(0.5)
LIST_GLOBAL = [1, 2, 3]
TPB = 16

try:
    from numba import float32 as nb_float32, int64 as nb_int64, boolean as nb_boolean
except ImportError:  # numba is installed for 3.11 only
    nb_float32 = nb_int64 = nb_boolean = None


def plain_helper(x):
    return x


@device
def dev_square(x):
    return x * x


@device
def dev_twice(x):
    return dev_square(x) + dev_square(x)


@device
def dev_fact(n):
    if n <= 1:
        return 1
    return n * dev_fact(n - 1)


# ---- tests ------------------------------------------------------------------------------
def test_version_tag():
    assert _core.python_version_tag() == f"{sys.version_info.major}.{sys.version_info.minor}"


def test_arguments_return_and_header():
    def add(a, b):
        c = a + b  # L:add
        return c  # L:ret

    f, funcs, text = decode(add)
    assert len(funcs) == 1
    assert f.name == "add"
    assert f.arg_names == ["a", "b"]
    assert all(":?" in p for p in f.params)
    assert f.header.endswith(f"@test_decoder.py:{add.__code__.co_firstlineno}")
    (addi,) = f.ops("add")
    assert addi.var == "c"
    assert addi.line == line_of(add, "L:add")
    assert addi.col == col_of(add, "L:add", "a + b")
    (ret,) = f.ops("ret")
    assert ret.line == line_of(add, "L:ret")
    assert ret.rest == addi.value
    assert len(f.blocks) == 1
    # every result is untyped
    assert {i.type for i in f.instrs if i.value} == {"?"}


def test_if_elif_else_joins_with_a_param():
    def branchy(x, out):
        if x < 0:  # L:if
            y = -1
        elif x == 0:
            y = 0
        else:
            y = 1
        # (a join big enough that CPython 3.12 does not copy it into each branch)
        out[0] = y
        return y

    f, _, _ = decode(branchy)
    assert f.count("cbr") == 2
    assert f.count("truth") == 2
    assert f.ops("lt")[0].line == line_of(branchy, "L:if")
    assert sorted(f.consts()) == ["-1", "0", "0", "0", "0", "1"]   # two compared, one index
    join = [b for b in f.blocks if "y" in b.param_vars]
    assert len(join) == 1 and len(join[0].preds) == 3
    (ret,) = f.ops("ret")
    assert ret.rest == join[0].params[0].split(":")[0]
    assert f.ops("setitem")[0].rest.endswith(ret.rest)


def test_while_loop_header_params():
    def count(n):
        i = 0
        s = 0
        while i < n:  # L:while
            s += i
            i += 1
        return s

    f, _, _ = decode(count)
    headers = [b for b in f.blocks if set(b.param_vars) >= {"i", "s"}]
    assert headers, [b.params for b in f.blocks]
    assert f.count("add") == 2
    assert {i.var for i in f.ops("add")} == {"s", "i"}
    assert all(i.line == line_of(count, "L:while") for i in f.ops("lt"))


@pytest.mark.parametrize("nargs", [1, 2, 3])
def test_for_range(nargs):
    def r1(n):
        s = 0
        for i in range(n):
            s += i
        return s

    def r2(n):
        s = 0
        for i in range(2, n):
            s += i
        return s

    def r3(n):
        s = 0
        for i in range(n, 0, -1):
            s += i
        return s

    f, _, _ = decode([r1, r2, r3][nargs - 1])
    (rng,) = [i for i in f.ops("const") if i.rest == "sym(builtins.range)"]
    (call,) = f.ops("call")
    assert call.rest.startswith(rng.value + "(")
    assert call.rest.count("v") == 1 + nargs
    (it,) = f.ops("getiter")
    assert it.rest == call.value
    (valid,) = f.ops("iter_valid")
    (nxt,) = f.ops("iter_next")
    assert valid.rest == it.value and nxt.rest == it.value
    assert nxt.var == "i"
    header = [b for b in f.blocks if valid in b.instrs][0]
    term = header.instrs[-1]
    assert term.op == "cbr" and term.rest.startswith(valid.value + ",")
    assert "s" in header.param_vars
    # the loop's back edge returns to the header
    assert len(header.preds) == 2


def test_break_and_continue():
    def bc(x, n):
        s = 0
        for i in range(n):
            if x[i] < 0:
                continue
            if x[i] > 100:
                break
            s += x[i]
        x[0] = s
        return s

    f, _, _ = decode(bc)
    header = [b for b in f.blocks if any(i.op == "iter_valid" for i in b.instrs)][0]
    # entry, continue and the normal latch all reach the header
    assert len(header.preds) == 3
    ret_block = [b for b in f.blocks if b.instrs[-1].op == "ret"]
    assert len(ret_block) == 1
    # the exit joins the loop's exhaustion and the break; both carry the
    # header's `s`, so no parameter is needed there
    assert len(ret_block[0].preds) == 2
    (ret,) = f.ops("ret")
    assert ret.rest == header.params[header.param_vars.index("s")].split(":")[0]
    assert f.count("cbr") == 3 and f.count("br") == 4


def test_early_return():
    def early(x, y):
        if x > 0:
            return x  # L:r1
        y[0] = 1.0
        return None  # L:r2

    f, _, _ = decode(early)
    rets = f.ops("ret")
    assert len(rets) == 2
    assert {r.line for r in rets} == {line_of(early, "L:r1"), line_of(early, "L:r2")}
    none_ret = [r for r in rets if r.line == line_of(early, "L:r2")][0]
    assert f.defining(none_ret.rest).rest == "none"


def test_fall_off_returns_none():
    def noreturn(y):
        y[0] = 1

    f, _, _ = decode(noreturn)
    (ret,) = f.ops("ret")
    assert f.defining(ret.rest).rest == "none"
    (si,) = f.ops("setitem")
    assert si.value is None  # setitem has no result


def test_nested_loops():
    def nested(a, n, m):
        for i in range(n):
            for j in range(m):
                a[i, j] = i * j
        return

    f, _, _ = decode(nested)
    assert f.count("getiter") == 2
    assert f.count("iter_valid") == 2
    assert {i.var for i in f.ops("iter_next")} == {"i", "j"}
    (t,) = f.ops("tuple")
    (si,) = f.ops("setitem")
    assert si.rest.split(", ")[1] == t.value


def test_and_or_as_values_and_conditions():
    def andor(a, b, c):
        x = a and b
        y = a or c
        if a and b or c:
            return x
        return y

    f, _, _ = decode(andor)
    assert any("x" in b.param_vars for b in f.blocks)
    assert any("y" in b.param_vars for b in f.blocks)
    # no Python-level boolean op exists: and/or are control flow
    assert not {"and", "or"} & {i.op for i in f.instrs}
    assert f.count("cbr") >= 5


def test_conditional_expression():
    def ternary(a, b, out):
        m = a if a > b else b  # L:t
        out[0] = m
        return m

    f, _, _ = decode(ternary)
    join = [b for b in f.blocks if "m" in b.param_vars]
    assert len(join) == 1 and len(join[0].preds) == 2
    assert f.ops("gt")[0].line == line_of(ternary, "L:t")


def test_tuple_build_and_unpack():
    def tup(a, b, pair):
        t = (a, b)  # L:build
        x, y = pair  # L:unpack
        p, q = t
        a, b = b, a
        return t, x - y, p - q, a - b

    f, _, _ = decode(tup)
    t = f.ops("tuple")[0]
    assert t.rest == "v0, v1"
    assert t.var == "t" and t.line == line_of(tup, "L:build")
    gets = f.ops("tuple_get")
    assert [g.rest for g in gets] == ["v2 [0]", "v2 [1]"]
    assert [g.var for g in gets] == ["x", "y"]
    assert all(g.line == line_of(tup, "L:unpack") for g in gets)
    # unpacking a tuple built in place uses its elements directly
    subs = f.ops("sub")
    assert [s.rest for s in subs] == [f"{gets[0].value}, {gets[1].value}", "v0, v1", "v1, v0"]


def test_constant_tuple_and_global_tuple():
    def shapes():
        a = (1, 2.5, None)
        b = (TPB, TPB)
        return SHAPE, a, b

    f, _, _ = decode(shapes)
    # BUILD_TUPLE of constants folds, up to the returned tuple itself
    assert f.consts() == ["((16, 8), (1, 2.5, none), (16, 16))"]
    assert not f.ops("tuple")


def test_subscripts():
    def subs(x, m, i, j):
        a = x[i]  # L:1d
        b = m[i, j]  # L:2d
        c = m[0, 1]
        return a + b + c

    f, _, _ = decode(subs)
    gets = f.ops("getitem")
    assert len(gets) == 3
    assert gets[0].rest == "v0, v2" and gets[0].var == "a"
    assert gets[0].line == line_of(subs, "L:1d")
    (t,) = f.ops("tuple")
    assert t.rest == "v2, v3"
    assert gets[1].rest == f"v1, {t.value}"
    assert f.defining(gets[2].rest.split(", ")[1]).rest == "(0, 1)"


def test_setitem_1d_and_tuple():
    def store(x, m, i, j, v):
        x[i] = v  # L:s1
        m[i, j] = v

    f, _, _ = decode(store)
    s = f.ops("setitem")
    assert len(s) == 2
    assert s[0].rest == "v0, v2, v4" and s[0].line == line_of(store, "L:s1")
    (t,) = f.ops("tuple")
    assert s[1].rest == f"v1, {t.value}, v4"


def test_augmented_assignment_on_locals_and_elements():
    def aug(x, i, v):
        s = v
        s *= 2
        s -= 1
        x[i] += s  # L:aug
        x[i, 0] //= 3
        return s

    f, _, _ = decode(aug)
    assert [i.var for i in f.ops("mul")] == ["s"]
    assert [i.var for i in f.ops("sub")] == ["s"]
    adds = f.ops("add")
    assert len(adds) == 1 and adds[0].line == line_of(aug, "L:aug")
    assert len(f.ops("getitem")) == 2 and len(f.ops("setitem")) == 2
    assert f.count("floordiv") == 1
    s0 = f.ops("setitem")[0]
    assert s0.rest == f"v0, v1, {adds[0].value}"


def test_binary_unary_and_compare_ops():
    def arith(a, b):
        r = (a + b, a - b, a * b, a / b, a // b, a % b, a ** b, a << b, a >> b,
             a & b, a | b, a ^ b, -a, +a, ~a, not a)
        c = (a < b, a <= b, a == b, a != b, a > b, a >= b, a is None, a is not None)
        return r, c

    f, _, _ = decode(arith)
    ops = {i.op for i in f.instrs}
    for op in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
               "and", "or", "xor", "neg", "pos", "invert", "not",
               "lt", "le", "eq", "ne", "gt", "ge", "is", "isnot"]:
        assert op in ops, op
    assert "none" in f.consts()


def test_undefined_local_is_undef():
    def maybe(c):
        if c:
            x = 1
        return x

    f, _, _ = decode(maybe)
    (u,) = f.ops("undef")
    assert u.var == "x"
    assert u in f.blocks[0].instrs
    join = [b for b in f.blocks if "x" in b.param_vars]
    assert len(join) == 1
    args = [i.rest for i in f.instrs if i.op in ("br", "cbr")]
    assert any(u.value in a for a in args)


def test_globals_of_each_kind():
    def g(out):
        out(N, SCALE, FLAG, ZC, NOTHING, LABEL, BIG_UNSIGNED, NP_SCALAR, abs, min, range,
            float, np.float32, np.int64, np.sqrt, np.pi, math, operator.add, cmath.exp,
            np.bool_)

    f, _, _ = decode(g)
    consts = f.consts()[:-1]   # the last is the implicit `return None`
    assert consts == ["128", "2.5", "true", "(1.0+2.0j)", "none", '"hello"',
                      "-1",   # 2**64 - 1 is kept bit-cast ...
                      "sym(numpy.uint64)",   # ... and typed uint64 (numba), as np.uint64(-1)
                      "0.5", "sym(numpy.float32)",   # np.float32(0.5): float32(0.5)
                      "sym(builtins.abs)", "sym(builtins.min)", "sym(builtins.range)",
                      "sym(builtins.float)", "sym(numpy.float32)", "sym(numpy.int64)",
                      "sym(numpy.sqrt)", "3.1415926535897931", "sym(math)", "sym(operator.add)",
                      "sym(cmath.exp)", "sym(numpy.bool_)"]
    assert float(consts[17]) == np.pi
    # no Python-level op remains for globals: all frozen
    assert not f.ops("getattr")
    big, cast, out = f.ops("call")
    assert len(out.rest.split(",")) == 20
    assert big.rest == f"{f.ops('const')[7].value}({f.ops('const')[6].value})"
    assert cast.rest == f"{f.ops('const')[9].value}({f.ops('const')[8].value})"
    assert out.rest.split(", ")[6] == big.value
    assert out.rest.split(", ")[7] == cast.value


def test_numpy_scalars_and_dtypes_keep_their_type():
    I8 = np.int8(-3)
    U64 = np.uint64(2**63 + 5)
    B = np.bool_(True)
    DT = np.dtype("float32")

    def s(out):
        out(I8, U64, B, DT)

    f, _, _ = decode(s)
    calls = f.ops("call")
    assert len(calls) == 4
    pairs = [(f.defining(c.rest.split("(")[0]).rest, f.defining(c.rest[:-1].split("(")[1]).rest)
             for c in calls[:3]]
    assert pairs == [("sym(numpy.int8)", "-3"), ("sym(numpy.uint64)", str(2**63 + 5 - 2**64)),
                     ("sym(numpy.bool_)", "true")]
    assert "sym(numpy.float32)" in f.consts()


def test_complex_constant_text():
    def c():
        return ZC

    f, _, _ = decode(c)
    assert f.consts() == ["(1.0+2.0j)"]


@pytest.mark.skipif(nb_float32 is None, reason="numba not installed for this Python")
def test_numba_type_objects():
    def nb():
        return nb_float32(1.0), nb_int64, nb_boolean

    f, _, _ = decode(nb)
    consts = f.consts()
    assert "sym(numpy.float32)" in consts
    assert "sym(numpy.int64)" in consts
    assert "sym(numpy.bool_)" in consts


def test_closure_constants():
    def make(k, scale):
        def inner(x):
            return x * k + scale + SCALE

        return inner

    f, _, _ = decode(make(3, 0.25))
    consts = f.consts()
    assert "3" in consts and "0.25" in consts and "2.5" in consts
    assert f.name == "inner"
    assert f.header.split()[-2].endswith(".make.<locals>.inner")


def test_device_function_reference():
    def kern(x, y):
        y[0] = dev_square(x[0])  # L:call
        y[1] = dev_square(x[1])
        y[2] = dev_twice(x[2])

    f, funcs, text = decode(kern)
    names = [fn.name for fn in funcs]
    assert names[0] == "kern"
    assert sorted(names[1:]) == ["dev_square", "dev_twice"]
    assert names.count("dev_square") == 1     # decoded once
    consts = f.consts()
    assert consts.count("sym(fn:dev_square)") == 2
    assert "sym(fn:dev_twice)" in consts
    call = f.ops("call")[0]
    assert call.line == line_of(kern, "L:call")
    twice = [fn for fn in funcs if fn.name == "dev_twice"][0]
    assert twice.consts().count("sym(fn:dev_square)") == 2


def test_recursive_device_function_and_unique_names():
    def dev_square_inner(x):
        return x

    clash = _DeviceDispatcher(dev_square_inner)
    clash.__name__ = "dev_square"
    dev_square_inner.__name__ = "dev_square"  # same IR name as the global one

    def kern(x):
        return dev_fact(x) + dev_square(x) + clash(x)

    f, funcs, _ = decode(kern)
    names = [fn.name for fn in funcs]
    assert "dev_fact" in names
    fact = [fn for fn in funcs if fn.name == "dev_fact"][0]
    assert "sym(fn:dev_fact)" in fact.consts()          # recursion names itself
    assert "dev_square" in names and "dev_square_2" in names
    assert "sym(fn:dev_square_2)" in f.consts()


def test_cuda_symbols():
    def kern(x):
        i = cuda.grid(1)  # L:grid
        t = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
        u = cuda.blockIdx.y  # not an attribute of the stand-in: still a symbol
        cuda.syncthreads()
        x[i] = t + u + cuda.warpsize

    f, _, _ = decode(kern)
    consts = f.consts()
    for s in ["cudajit.grid", "cudajit.threadIdx.x", "cudajit.blockIdx.x",
              "cudajit.blockDim.x", "cudajit.blockIdx.y", "cudajit.syncthreads",
              "cudajit.warpsize"]:
        assert f"sym({s})" in consts, s
    # the namespaces themselves are folded away
    assert "sym(cudajit)" not in consts and "sym(cudajit.threadIdx)" not in consts
    assert not f.ops("getattr")
    grid_call = f.ops("call")[0]
    assert grid_call.var == "i" and grid_call.line == line_of(kern, "L:grid")
    assert len(f.ops("call")) == 2


def test_math_functions_and_constants():
    def m(x):
        return math.sqrt(x) + math.exp(x) * math.pi + cmath.sqrt(x).real

    f, _, _ = decode(m)
    consts = f.consts()
    assert "sym(math.sqrt)" in consts and "sym(math.exp)" in consts
    assert "sym(cmath.sqrt)" in consts
    assert [float(c) for c in consts if c[0].isdigit()] == [math.pi]
    (ga,) = f.ops("getattr")      # .real on a runtime value stays
    assert ga.rest.endswith(".real")


def test_keyword_arguments_in_calls():
    def kern(x):
        sm = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)  # L:sh
        loc = cuda.local.array(4, np.int32)
        cuda.atomic.add(x, 0, sm[0, 0] + loc[0])

    f, _, _ = decode(kern)
    calls = f.ops("call")
    assert len(calls) == 3
    sh = calls[0]
    assert sh.var == "sm" and sh.line == line_of(kern, "L:sh")
    callee, rest = sh.rest.split("(", 1)
    assert f.defining(callee).rest == "sym(cudajit.shared.array)"
    assert re.fullmatch(r"shape=v\d+, dtype=v\d+\)", rest), rest
    shape = re.search(r"shape=(v\d+)", rest).group(1)
    dtype = re.search(r"dtype=(v\d+)", rest).group(1)
    assert f.defining(shape).rest == "(16, 16)"
    assert f.defining(dtype).rest == "sym(numpy.float32)"
    assert "=" not in calls[1].rest   # positional only
    assert f.defining(calls[2].rest.split("(")[0]).rest == "sym(cudajit.atomic.add)"


def test_method_call_on_runtime_value_and_runtime_attributes():
    def meth(x, z):
        n = x.size  # L:size
        w = x.shape[0]
        return z.conjugate() + n + w

    f, _, _ = decode(meth)
    gas = f.ops("getattr")
    assert [g.rest for g in gas] == ["v0 .size", "v0 .shape", "v1 .conjugate"]
    assert gas[0].var == "n" and gas[0].line == line_of(meth, "L:size")
    (call,) = f.ops("call")
    assert call.rest == f"{gas[2].value}()"


def _load_case(name):
    path = pathlib.Path(__file__).parent / "decoder_cases" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"decoder_cases_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_raise_and_assert():
    cases = _load_case("raising")
    f, _, _ = decode(cases.checked)
    raises = f.ops("raise")
    messages = [i.rest for i in raises]
    assert '"AssertionError: x must be positive"' in messages
    assert '"ValueError: too big"' in messages
    assert '"IndexError"' in messages
    assert not f.ops("call")    # the exception constructors are gone
    by_msg = {i.rest: i for i in raises}
    assert by_msg['"ValueError: too big"'].line == line_of(cases.checked, "L:value")
    assert by_msg['"AssertionError: x must be positive"'].line == line_of(cases.checked, "L:assert")
    f, _, _ = decode(cases.bare_assert)
    assert [i.rest for i in f.ops("raise")] == ['"AssertionError"']


def test_locations_are_one_based_columns():
    def loc(x, i):
        y = x[i] * 2.0  # L:mul
        return y

    f, _, _ = decode(loc)
    (mul,) = f.ops("mul")
    assert mul.line == line_of(loc, "L:mul")
    assert mul.col == col_of(loc, "L:mul", "x[i] * 2.0")
    (gi,) = f.ops("getitem")
    assert gi.col == col_of(loc, "L:mul", "x[i]")


def test_kernel_shape_axpy():
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    f, _, text = decode(axpy)
    assert [i.op for i in f.blocks[0].instrs] == [
        "const", "const", "call", "getattr", "lt", "truth", "cbr"]
    assert f.count("ret") == 1 or f.count("ret") == 2
    assert f.count("setitem") == 1


# ---- errors -----------------------------------------------------------------------------
def _err_try(x):
    try:  # L:try
        x[0] = 1
    except Exception:
        x[0] = 2


def _err_with(x):
    with x:  # L:with
        pass


def _err_gen(x):
    yield x


def _err_lambda(x):
    f = lambda v: v + 1  # L:lambda
    return f(x)


def _err_listcomp(x):
    return [v for v in x]  # L:comp


def _err_nested_def(x):
    def inner():  # L:def
        return x
    return inner()


def _err_varargs(*args):
    return args


def _err_kwargs(**kw):
    return kw


def _err_fstring(x):
    return f"{x}"  # L:fstr


def _err_fstring_conversion(x):
    return f"{x!r}"  # L:fconv


def _err_fstring_spec(x):
    return f"{x:>8}"  # L:fspec


def _err_nested_default(x):
    def inner(v=1):  # L:defv
        return v
    return inner(x)


def _err_lambda_closure(x):
    f = lambda: x  # L:lambdac
    return f()


def _err_import(x):
    import os  # L:import
    return x


def _err_global_store(x):
    global N
    N = x  # L:gstore


def _err_del(x):
    y = x
    del y  # L:del


def _err_in(x):
    return x in (1, 2)  # L:in


def _err_list_global(x):
    return LIST_GLOBAL[0]  # L:list


def _err_undefined(x):
    return not_defined_anywhere + x  # noqa: F821  # L:undef


def _err_plain_function(x):
    return plain_helper(x)  # L:plain




def _err_store_attr(x):
    x.foo = 1  # L:attr


def _err_matmul(a, b):
    return a @ b  # L:matmul


def _err_bad_math(x):
    return math.no_such_function(x)  # L:nomath


def _err_module(x):
    return sys.maxsize  # L:sys


def _err_reraise(x):
    raise  # L:raise


def _err_dict(x):
    return {"a": x}  # L:dict


def _err_star(x):
    a, *b = x  # L:star
    return a


ERROR_CASES = [
    (_err_try, "try/except", None),
    (_err_with, "with", "L:with"),
    (_err_gen, "generator", None),
    (_err_lambda, "lambda", "L:lambda"),
    (_err_listcomp, "comprehension", "L:comp"),
    (_err_nested_def, "nested function", "L:def"),
    (_err_varargs, "*args", None),
    (_err_kwargs, "**kwargs", None),
    (_err_fstring_conversion, "f-string", "L:fconv"),   # !r has no device form
    (_err_nested_default, "nested function", "L:defv"),
    (_err_lambda_closure, "lambda", "L:lambdac"),
    (_err_import, "import", "L:import"),
    (_err_global_store, "STORE_GLOBAL", "L:gstore"),
    (_err_del, "del", "L:del"),
    (_err_in, "in operator", "L:in"),
    (_err_list_global, "global 'LIST_GLOBAL'", "L:list"),
    (_err_undefined, "global 'not_defined_anywhere'", "L:undef"),
    (_err_plain_function, "global 'plain_helper'", "L:plain"),
    (_err_bad_math, "math.no_such_function", "L:nomath"),
    (_err_module, "global 'sys'", "L:sys"),
    (_err_reraise, "re-raise", "L:raise"),
    (_err_dict, "dict", "L:dict"),
    (_err_star, "starred assignment", "L:star"),
]


@pytest.mark.parametrize("fn,construct,marker", ERROR_CASES, ids=[c[1] for c in ERROR_CASES])
def test_unsupported_constructs_raise_compile_error(fn, construct, marker):
    e = compile_error(fn)
    assert e.construct == construct, str(e)
    assert e.file == __file__
    if marker:
        assert e.line == line_of(fn, marker), str(e)
        assert e.col > 0 or not HAS_COLUMNS, str(e)
    else:
        assert fn.__code__.co_firstlineno <= e.line <= fn.__code__.co_firstlineno + 4
    text = str(e)
    assert text.startswith(f"{__file__}:{e.line}")
    assert f"[{construct}]" in text


def test_fstrings_decode_and_are_print_arguments_only():
    # f"{x}" and f"{x:>8}" decode (print's arguments); anywhere else type
    # inference refuses them at their line.
    for fn, marker in [(_err_fstring, "L:fstr"), (_err_fstring_spec, "L:fspec")]:
        assert "sym(cudajit.fstring.value)" in _core.decode_ir(fn)
        with pytest.raises(CompileError) as info:
            _core.infer_ir(fn, ["float32"], kernel=False)
        e = info.value
        assert "f-strings are supported as arguments of print() and ct.print() only" in str(e)
        assert e.file == __file__ and e.line == line_of(fn, marker)


def test_attribute_assignment_is_decoded_and_refused_on_non_records():
    # `x.foo = 1` decodes to setattr (records take it: r.x = v); on a number,
    # type inference refuses it at its line.
    assert "setattr" in _core.decode_ir(_err_store_attr) and ".foo" in _core.decode_ir(_err_store_attr)
    with pytest.raises(CompileError) as info:
        _core.infer_ir(_err_store_attr, ["float32"], kernel=False)
    e = info.value
    assert e.construct == "setattr .foo" and "attribute assignment is supported on records only" in str(e)
    assert e.file == __file__ and e.line == line_of(_err_store_attr, "L:attr")


def test_matmul_operator_is_decoded_and_refused_on_scalars():
    # `@` decodes (tile kernels use it); on numbers, type inference refuses it at its line.
    assert "matmul" in _core.decode_ir(_err_matmul)
    with pytest.raises(CompileError) as info:
        _core.infer_ir(_err_matmul, ["float32", "float32"], kernel=False)
    e = info.value
    assert e.construct == "@ operator" and "tiles only" in str(e)
    assert e.file == __file__ and e.line == line_of(_err_matmul, "L:matmul")


def test_unsupported_global_message_names_type_file_and_line():
    e = compile_error(_err_list_global)
    assert "LIST_GLOBAL" in e.message and "'list'" in e.message
    assert e.file.endswith("test_decoder.py") and e.line == line_of(_err_list_global, "L:list")
    e = compile_error(_err_plain_function)
    assert "plain_helper" in e.message and "device=True" in e.hint
    e = compile_error(_err_undefined)
    assert "not defined" in e.message


def test_non_function_is_rejected():
    with pytest.raises(CompileError) as info:
        _core.decode_ir(42)
    assert "int" in str(info.value)
    with pytest.raises(CompileError):
        _core.decode_ir(len)


def test_device_function_errors_name_their_own_file_and_line():
    @device
    def bad_dev(x):
        return x in (1, 2)  # L:baddev

    def kern(x):
        return bad_dev(x)

    e = compile_error(kern)
    assert e.construct == "in operator"
    assert e.line == line_of(bad_dev._cudajit_device_py_func_, "L:baddev")


# ---- more shapes of control flow and bytecode ------------------------------------------
def test_while_true_with_break():
    def wt(x, n):
        i = 0
        while True:
            i += 1
            if i > n:
                break
        x[0] = i
        return i

    f, _, _ = decode(wt)
    header = [b for b in f.blocks if "i" in b.param_vars]
    assert len(header) == 1 and len(header[0].preds) == 2
    (add,) = f.ops("add")
    assert add.rest.startswith(header[0].params[0].split(":")[0])
    # the value after the loop is the incremented one
    (si,) = f.ops("setitem")
    assert si.rest.endswith(add.value)


def test_for_else():
    def fe(x, n):
        for i in range(n):
            if x[i] == 0:
                break
        else:
            i = -1
        x[0] = i
        return i

    f, _, _ = decode(fe)
    join = [b for b in f.blocks if "i" in b.param_vars]
    assert len(join) == 1 and len(join[0].preds) == 2
    (nxt,) = f.ops("iter_next")
    edge_args = " ".join(i.rest for i in f.instrs if i.op in ("br", "cbr"))
    assert f"({nxt.value})" in edge_args        # the break passes the loop variable
    assert "-1" in f.consts()


def test_chained_comparison_and_none_tests():
    def cc(a, b, c, y=None):
        if y is None:
            return 0
        if y is not None and a < b < c:
            return 1
        return 2

    f, _, _ = decode(cc)
    if sys.version_info >= (3, 11):   # POP_JUMP_IF_NOT_NONE: `is not` jumps on `is`
        assert f.count("is") == 2 and f.count("isnot") == 0
    else:                             # 3.10: IS_OP 1, then POP_JUMP_IF_FALSE
        assert f.count("is") == 1 and f.count("isnot") == 1
    assert f.count("lt") == 2
    assert f.count("ret") >= 3          # 3.12 may copy a return into each path
    # every branch condition is a `truth` (the contract for POP_JUMP_IF_*)
    for br in f.ops("cbr"):
        assert f.defining(br.rest.split(",")[0]).op == "truth"
    # `y is None` tests compare with a none constant
    for i in f.ops("is") + f.ops("isnot"):
        assert f.defining(i.rest.split(", ")[1]).rest == "none"


def test_keyword_only_arguments_and_docstring():
    def kw(a, *, b=2):
        """A docstring is not code."""
        return a + b

    f, _, _ = decode(kw)
    assert f.arg_names == ["a", "b"]
    # The default of b stays as a constant for callers (bytecode/defaults.h).
    (default,) = f.ops("const")
    assert default.var == "default:b" and f.consts() == ["2"]
    (add,) = f.ops("add")
    assert add.rest == "v0, v1"


def test_specialised_bytecode_decodes_like_fresh_bytecode():
    def hot(a, b):
        s = 0
        for i in range(b):
            s += a * i + a.real
        return s

    before = _core.decode_ir(hot)
    for _ in range(3000):       # let CPython specialise (and quicken) the code
        hot(1.5, 8)
    assert _core.decode_ir(hot) == before


def test_long_function_uses_extended_args():
    body = "".join(f"        s += x[{k}] * {k}.5\n" for k in range(300))
    src = f"def big(x, n):\n    s = 0\n    for i in range(n):\n{body}    return s\n"
    ns = {}
    exec(compile(src, "/generated/big.py", "exec"), ns)
    f, _, _ = decode(ns["big"])
    assert f.count("iter_valid") == 1
    assert f.count("mul") == 300 and f.count("getitem") == 300
    header = [b for b in f.blocks if "s" in b.param_vars]
    assert len(header) == 1 and len(header[0].preds) == 2
    assert "299.5" in f.consts() and "299" in f.consts()
    assert f.header.endswith("@big.py:1")


def test_grid_unpack_and_shape_unpack():
    def k2(a):
        x, y = cuda.grid(2)
        h, w = a.shape
        if x < h and y < w:
            a[x, y] = 0

    f, _, _ = decode(k2)
    gets = f.ops("tuple_get")
    assert [g.var for g in gets] == ["x", "y", "h", "w"]
    assert gets[0].rest.startswith(f.ops("call")[0].value)


class _NumbaLikeType:
    """Mimics numba's scalar type objects: module under numba., str() is the name."""

    __module__ = "numba.core.types.scalars"

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


FAKE_NB_F32 = _NumbaLikeType("float32")
FAKE_NB_BOOL = _NumbaLikeType("bool")
FAKE_NB_ARRAY = _NumbaLikeType("array(float32, 1d, C)")


def test_numba_like_type_objects():
    def nb(x):
        return FAKE_NB_F32(x), FAKE_NB_BOOL

    f, _, _ = decode(nb)
    assert f.consts()[:2] == ["sym(numpy.float32)", "sym(numpy.bool_)"]

    def bad(x):
        return FAKE_NB_ARRAY  # L:nbarr

    e = compile_error(bad)
    assert e.construct == "global 'FAKE_NB_ARRAY'" and "numba" in e.message


def test_from_imports_and_numpy_functions():
    from math import sqrt as msqrt

    def fi(x):
        return msqrt(x) + np.float64(x) + np.empty((2,), np.int8)

    f, _, _ = decode(fi)
    consts = f.consts()
    assert "sym(math.sqrt)" in consts and "sym(numpy.float64)" in consts
    assert "sym(numpy.empty)" in consts and "sym(numpy.int8)" in consts


def test_nonlocal_and_async_and_del_names():
    def outer():
        v = 0

        def inner(x):
            nonlocal v
            v = x  # L:nonlocal

        return inner

    inner = outer()
    e = compile_error(inner)
    assert e.construct == "nonlocal assignment" and e.line == line_of(inner, "L:nonlocal")

    async def coro(x):
        return x

    assert compile_error(coro).construct == "async function"


def test_dispatchers_stand_for_their_python_function():
    class KernelDispatcher:
        def __init__(self, fn):
            self.py_func = fn

    def body(x):
        x[0] = dev_square(x[1])

    assert _core.decode_ir(KernelDispatcher(body)) == _core.decode_ir(body)
    f, funcs, _ = decode(dev_twice)     # a device dispatcher
    assert [fn.name for fn in funcs] == ["dev_twice", "dev_square"]


def test_tiled_matmul_kernel():
    float32 = np.float32

    def matmul(A, B, C):
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x
        if x >= C.shape[0] and y >= C.shape[1]:
            return
        tmp = float32(0.)
        for i in range(bpg):
            sA[tx, ty] = A[x, ty + i * TPB]
            sB[tx, ty] = B[tx + i * TPB, y]
            cuda.syncthreads()
            for j in range(TPB):
                tmp += sA[tx, j] * sB[j, ty]
            cuda.syncthreads()
        C[x, y] = tmp

    f, _, text = decode(matmul)
    assert f.count("iter_valid") == 2
    assert sum(c == "sym(cudajit.shared.array)" for c in f.consts()) == 2
    assert "sym(numpy.float32)" in f.consts()      # closure cell holding np.float32
    assert "sym(cudajit.syncthreads)" in f.consts()
    # tmp is carried by both loops
    carried = [b for b in f.blocks if "tmp" in b.param_vars]
    assert len(carried) == 2
    assert f.count("setitem") == 3
    assert len(f.ops("call")) == 2 + 1 + 1 + 2 + 2   # arrays, grid, float32, ranges, syncs


def test_device_closures_sharing_code_are_decoded_apart():
    def make_scaler(k):
        @device
        def scale(x):
            return x * k
        return scale

    by3, by5 = make_scaler(3), make_scaler(5)

    def kern(x):
        return by3(x) + by5(x)

    f, funcs, _ = decode(kern)
    assert [fn.name for fn in funcs] == ["kern", "scale", "scale_2"]
    assert f.consts() == ["sym(fn:scale)", "sym(fn:scale_2)"]
    assert funcs[1].consts() == ["3"] and funcs[2].consts() == ["5"]


# ---- one IR for each version's bytecode --------------------------------------------------
# The functions below are written to produce 3.13's new forms (superinstructions,
# CALL_KW, TO_BOOL, COMPARE_OP's bool bit, END_FOR + POP_TOP, PUSH_NULL after
# the callable); the tests assert what every version must decode them to.
def _paired_locals(a, b, n):
    a, b = b, a                    # 3.13: LOAD_FAST_LOAD_FAST, STORE_FAST_STORE_FAST
    c = a - b; d = c               # noqa: E702  L:chain  (3.13: STORE_FAST_LOAD_FAST)
    s = 0
    for i in range(n): s += i * d  # noqa: E701  (the loop body starts with a superinstruction)
    while a < b:
        b -= a                     # L:back  (the back edge lands on a superinstruction)
    return s, b


def _keyword_calls(x, z):
    w = z.astype(np.float32, copy=False)  # L:method  (3.13: [callable, NULL], CALL_KW)
    v = dev_square(x=x)                   # 3.13: LOAD_GLOBAL + NULL, CALL_KW
    u = np.float32(x)                     # 3.13: LOAD_ATTR, PUSH_NULL after it, CALL
    return w, v, u


def _truth_tests(a, b, x):
    y = not a          # 3.13: TO_BOOL, UNARY_NOT
    c = a < b          # 3.13: COMPARE_OP without the bool bit
    if not (a < b):    # 3.13: COMPARE_OP with the bool bit, POP_JUMP_IF_TRUE
        x[0] = 1
    if x[1]:           # 3.13: TO_BOOL, POP_JUMP_IF_FALSE
        x[0] = 2
    return y, c


# 3.10's stack shuffles: what 3.11+ write as COPY / SWAP.
def _stack_shuffles(x, i, v, lo, hi):
    x[i] += v              # L:aug  (3.10: DUP_TOP_TWO, INPLACE_ADD, ROT_THREE, STORE_SUBSCR)
    a, b, c = v, lo, hi
    b, c, a = a, b, c      # 3.10: ROT_THREE, ROT_TWO
    if lo < v < hi:        # 3.10: DUP_TOP, ROT_THREE, POP_JUMP_IF_FALSE to a POP_TOP
        x[0] = a - b
    return a, b, c


def _loop_exits(x, n):
    for i in range(n):
        for j in range(n):
            if x[j] < 0:
                break      # lands past END_FOR (3.13: and its POP_TOP), as exhaustion does
            if x[j] > 9:
                return j   # L:inner
        x[i] = 0
    for k in range(n):
        x[k] = 1
    return -1


def test_opcode_table_is_what_its_generator_writes():
    # The table of this interpreter must be the generator's output, so that
    # the MEANING table in tools/ stays the one place that says what an opcode means.
    import subprocess
    root = pathlib.Path(__file__).resolve().parents[1] / "compiler" / "bytecode"
    table = root / f"opcodes_{sys.version_info.major}{sys.version_info.minor}.def"
    generated = subprocess.run([sys.executable, str(root / "tools" / "gen_opcode_table.py")],
                               capture_output=True, text=True, check=True).stdout
    # The first line names the micro version the table was generated under.
    assert generated.splitlines()[1:] == table.read_text().splitlines()[1:]


def test_paired_local_loads_and_stores_keep_their_order():
    f, _, _ = decode(_paired_locals)
    a, b, n = "v0", "v1", "v2"
    (sub_c, sub_b) = f.ops("sub")
    assert sub_c.rest == f"{b}, {a}" and sub_c.var == "c"     # after the swap a is b
    assert sub_c.line == line_of(_paired_locals, "L:chain")
    (mul,) = f.ops("mul")
    assert mul.rest.endswith(f", {sub_c.value}")              # d is c
    assert f.ops("add")[0].var == "s"
    # the while loop carries b (the swap made it a's value) and subtracts a (b's)
    (body,) = [blk for blk in f.blocks if any(i.value == sub_b.value for i in blk.instrs)]
    b_param = body.params[body.param_vars.index("b")].split(":")[0]
    assert sub_b.rest == f"{b_param}, {b}" and sub_b.var == "b"
    assert sub_b.line == line_of(_paired_locals, "L:back")


def test_keyword_calls_on_methods_globals_and_module_functions():
    f, _, _ = decode(_keyword_calls)
    calls = f.ops("call")
    assert len(calls) == 3
    (astype,) = f.ops("getattr")
    assert astype.rest == "v1 .astype"
    m = re.fullmatch(r"(v\d+)\((v\d+), copy=(v\d+)\)", calls[0].rest)
    assert m and m.group(1) == astype.value, calls[0].rest
    assert f.defining(m.group(2)).rest == "sym(numpy.float32)"
    assert f.defining(m.group(3)).rest == "false"
    assert calls[0].line == line_of(_keyword_calls, "L:method")
    m = re.fullmatch(r"(v\d+)\(x=v0\)", calls[1].rest)
    assert m and f.defining(m.group(1)).rest == "sym(fn:dev_square)", calls[1].rest
    m = re.fullmatch(r"(v\d+)\(v0\)", calls[2].rest)
    assert m and f.defining(m.group(1)).rest == "sym(numpy.float32)", calls[2].rest


def test_truth_tests_apply_once_per_condition():
    f, _, _ = decode(_truth_tests)
    (nt,) = f.ops("not")
    assert nt.rest == "v0" and nt.var == "y"
    assert [i.var for i in f.ops("lt")] == ["c", None]
    truths = f.ops("truth")
    assert len(truths) == 2
    for t in truths:
        assert f.defining(t.rest).op in ("lt", "getitem")
    for br in f.ops("cbr"):
        assert f.defining(br.rest.split(",")[0]).op == "truth"


def test_stack_shuffles_keep_every_value_in_its_place():
    f, _, _ = decode(_stack_shuffles)
    x, i, v, lo, hi = "v0", "v1", "v2", "v3", "v4"
    (get,) = [g for g in f.ops("getitem") if g.rest == f"{x}, {i}"]
    (add,) = f.ops("add")
    assert add.rest == f"{get.value}, {v}" and add.line == line_of(_stack_shuffles, "L:aug")
    assert f"{x}, {i}, {add.value}" in [st.rest for st in f.ops("setitem")]
    assert [c.rest for c in f.ops("lt")][0] == f"{lo}, {v}"     # then v < hi
    assert f.ops("lt")[1].rest == f"{v}, {hi}"
    (sub,) = f.ops("sub")
    assert sub.rest == f"{hi}, {v}"                              # a is hi, b is v
    (ret,) = [t for t in f.ops("tuple")]
    assert ret.rest == f"{hi}, {v}, {lo}"


def test_loop_exits_break_and_return_from_nested_loops():
    f, _, _ = decode(_loop_exits)
    assert f.count("iter_valid") == 3
    assert f.count("setitem") == 2
    rets = f.ops("ret")
    inner = [r for r in rets if r.line == line_of(_loop_exits, "L:inner")]
    assert len(inner) == 1
    assert f.defining(inner[0].rest).op == "iter_next" and f.defining(inner[0].rest).var == "j"
    assert "-1" in [f.defining(r.rest).rest for r in rets if r is not inner[0]]


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="3.10's bytecode forms")
def test_the_310_forms_are_in_these_tests():
    import dis
    names = {i.opname for fn in (_paired_locals, _keyword_calls, _truth_tests, _loop_exits,
                                 _stack_shuffles) for i in dis.get_instructions(fn)}
    assert {"ROT_TWO", "ROT_THREE", "DUP_TOP", "DUP_TOP_TWO", "INPLACE_ADD", "INPLACE_SUBTRACT",
            "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD", "LOAD_METHOD", "JUMP_ABSOLUTE",
            "POP_JUMP_IF_FALSE"} <= names, names


@pytest.mark.skipif(sys.version_info < (3, 13), reason="3.13's bytecode forms")
def test_the_313_forms_are_in_these_tests():
    import dis

    def ops(*fns):
        return {(i.opname, i.arg) for fn in fns for i in dis.get_instructions(fn)}

    names = {name for name, _ in ops(_paired_locals, _keyword_calls, _truth_tests, _loop_exits)}
    assert {"LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "CALL_KW",
            "TO_BOOL", "PUSH_NULL", "END_FOR"} <= names
    assert any(name == "COMPARE_OP" and arg & 16 for name, arg in ops(_truth_tests))
    assert any(name == "COMPARE_OP" and not arg & 16 for name, arg in ops(_truth_tests))
    errors = {name for name, _ in ops(_err_fstring_conversion, _err_fstring_spec, _err_nested_default)}
    assert {"CONVERT_VALUE", "FORMAT_WITH_SPEC", "FORMAT_SIMPLE", "SET_FUNCTION_ATTRIBUTE"} <= errors
