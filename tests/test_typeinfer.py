"""Stage 2, type inference: numba's typing rules, the fixpoint, the rewrite
into typed IR, and the errors. Runs without a GPU.

The numba cross-checks ask numba-cuda's own typing context (installed for
Python 3.11) for the facts and compare them with cudajit's tables.
"""
import math
import operator
import re

import numpy as np
import pytest

from cudajit import _core
from cudajit.errors import CompileError


# ---- device-only objects, as the decoder sees them ------------------------------

class _Symbol:
    """A stand-in for cudajit's device-only stubs: an object with `_cudajit_symbol_`."""

    def __init__(self, name):
        self._cudajit_symbol_ = name

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        return _Symbol(self._cudajit_symbol_ + "." + attr)


try:
    import cudajit as cuda
    cuda.grid, cuda.shared.array, cuda.atomic.add   # the package's stubs, once it has them
except (ImportError, AttributeError):
    cuda = _Symbol("cudajit")


def device(fn):
    """A device function as the decoder sees it: `_cudajit_device_py_func_`."""

    class DeviceFunction:
        def __init__(self):
            self._cudajit_device_py_func_ = fn

    return DeviceFunction()


# ---- helpers ----------------------------------------------------------------------

SCALARS7 = ["int32", "int64", "uint32", "uint64", "float32", "float64", "bool"]
SCALARS_ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"]
SHORT = {"bool": "b1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
         "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
         "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}


def infer(fn, types, kernel=None):
    return _core.infer_ir(fn, types, kernel=kernel)


def ret_type(fn, types):
    """The inferred return type of fn (IR type text)."""
    text = infer(fn, types)
    return re.match(r"func [^(]+\(.*\) -> (.+?)(  @| kernel|$| py=)", text.splitlines()[0]).group(1)


def lines_with(text, needle):
    return [line.strip() for line in text.splitlines() if needle in line]


@pytest.fixture(scope="module")
def numba_ctx():
    pytest.importorskip("numba.cuda")
    from numba.cuda.descriptor import cuda_target
    ctx = cuda_target.typing_context
    ctx.refresh()
    return ctx


def nbtype(name):
    from numba.cuda import types
    return types.boolean if name == "bool" else getattr(types, name)


def nb_result(ctx, fn, args):
    """numba's result type (as IR short text) of fn on numba type names, or None."""
    try:
        sig = ctx.resolve_function_type(fn, tuple(nbtype(a) for a in args), {})
    except Exception:
        return None
    if sig is None:
        return None
    return _core.parse_numba_type(str(sig.return_type))


# ---- numba's scalar rules, compared with numba ---------------------------------------

BINARY_OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "lshift": operator.lshift, "rshift": operator.rshift,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary_result_type_matches_numba_for_main_scalars(numba_ctx, op):
    mismatches = []
    for a in SCALARS7:
        for b in SCALARS7:
            want = nb_result(numba_ctx, BINARY_OPS[op], (a, b))
            got = _core.binary_result_type(op, a, b)
            if got != want:
                mismatches.append(f"{a} {op} {b}: numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary_result_type_matches_numba_for_every_scalar(numba_ctx, op):
    mismatches = []
    for a in SCALARS_ALL:
        for b in SCALARS_ALL:
            want = nb_result(numba_ctx, BINARY_OPS[op], (a, b))
            got = _core.binary_result_type(op, a, b)
            if got != want:
                mismatches.append(f"{a} {op} {b}: numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


def test_binary_result_type_spot_checks():
    # The rules the team brief names, spelled out.
    assert _core.binary_result_type("add", "int32", "int32") == "i64"
    assert _core.binary_result_type("add", "float32", "int64") == "f64"
    assert _core.binary_result_type("add", "float32", "float32") == "f32"
    assert _core.binary_result_type("add", "bool", "bool") == "i64"
    assert _core.binary_result_type("truediv", "int64", "int64") == "f64"
    assert _core.binary_result_type("truediv", "float32", "int32") == "f64"
    assert _core.binary_result_type("pow", "int64", "int64") == "i64"
    assert _core.binary_result_type("pow", "float32", "int32") == "f32"
    assert _core.binary_result_type("floordiv", "uint32", "uint32") == "u64"
    assert _core.binary_result_type("lt", "int64", "uint64") == "b1"
    # numba-cuda 0.30 (integer typing NBEP): int64 + uint64 is int64, not float64.
    assert _core.binary_result_type("add", "int64", "uint64") == "i64"
    assert _core.binary_result_type("lshift", "float32", "int32") is None
    assert _core.binary_result_type("and", "float64", "float64") is None


def test_scalar_conversions_match_numba(numba_ctx):
    mismatches = []
    for a in SCALARS_ALL:
        for b in SCALARS_ALL:
            conv = numba_ctx.can_convert(nbtype(a), nbtype(b))
            want = "none" if conv is None else conv.name
            got = _core.scalar_conversion(a, b)
            if got != want:
                mismatches.append(f"{a} -> {b}: numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


def test_unification_matches_numba(numba_ctx):
    mismatches = []
    for a in SCALARS_ALL:
        for b in SCALARS_ALL:
            u = numba_ctx.unify_pairs(nbtype(a), nbtype(b))
            want = None if u is None else _core.parse_numba_type(str(u))
            got = _core.unify_types(a, b)
            if got != want:
                mismatches.append(f"unify({a}, {b}): numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


def test_unification_of_containers():
    assert _core.unify_types("float32[::1]", "float32[::1]") == "array(f32, 1d, C)"
    assert _core.unify_types("float32[::1]", "float32[:]") == "array(f32, 1d, A)"
    assert _core.unify_types("float32[:, ::1]", "float32[::1, :]") == "array(f32, 2d, A)"
    assert _core.unify_types("float32[:]", "float64[:]") is None
    assert _core.unify_types("float32[:]", "float32[:, :]") is None
    assert _core.unify_types("float32[:]", "float32") is None
    assert _core.unify_types("UniTuple(int32, 2)", "Tuple(int64, float32)") == "tuple(i64, f64)"
    assert _core.unify_types("UniTuple(int32, 2)", "UniTuple(int32, 3)") is None


UNARY_OPS = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
             "not": operator.not_}


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_result_types_match_numba(numba_ctx, op):
    body = {"neg": "-x", "pos": "+x", "invert": "~x", "not": "not x"}[op]
    scope = {}
    exec(f"def f(x):\n    return {body}\n", scope)
    mismatches = []
    for a in SCALARS7:
        want = nb_result(numba_ctx, UNARY_OPS[op], (a,))
        try:
            got = ret_type(scope["f"], [a])
        except CompileError:
            got = None
        if got != want:
            mismatches.append(f"{op} {a}: numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


# ---- calls typed as numba types them ------------------------------------------------------

def _sqrt(x): return math.sqrt(x)
def _exp(x): return math.exp(x)
def _log(x): return math.log(x)
def _sin(x): return math.sin(x)
def _cos(x): return math.cos(x)
def _tan(x): return math.tan(x)
def _tanh(x): return math.tanh(x)
def _floor(x): return math.floor(x)
def _ceil(x): return math.ceil(x)
def _fabs(x): return math.fabs(x)
def _abs(x): return abs(x)
def _int(x): return int(x)
def _float(x): return float(x)


UNARY_CALLS = [(_sqrt, math.sqrt), (_exp, math.exp), (_log, math.log), (_sin, math.sin),
               (_cos, math.cos), (_tan, math.tan), (_tanh, math.tanh), (_floor, math.floor),
               (_ceil, math.ceil), (_fabs, math.fabs), (_abs, abs), (_int, int), (_float, float)]


@pytest.mark.parametrize("fn,target", UNARY_CALLS, ids=[f.__name__ for f, _ in UNARY_CALLS])
def test_unary_calls_match_numba(numba_ctx, fn, target):
    mismatches = []
    for a in SCALARS7:
        want = nb_result(numba_ctx, target, (a,))
        try:
            got = ret_type(fn, [a])
        except CompileError:
            got = None
        if got != want:
            mismatches.append(f"{target.__name__}({a}): numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


def _min(x, y): return min(x, y)
def _max(x, y): return max(x, y)
def _mpow(x, y): return math.pow(x, y)


@pytest.mark.parametrize("fn,target", [(_min, min), (_max, max), (_mpow, math.pow)],
                         ids=["min", "max", "math.pow"])
def test_binary_calls_match_numba(numba_ctx, fn, target):
    mismatches = []
    for a in SCALARS7:
        for b in SCALARS7:
            want = nb_result(numba_ctx, target, (a, b))
            try:
                got = ret_type(fn, [a, b])
            except CompileError:
                got = None
            if got != want:
                mismatches.append(f"{target.__name__}({a}, {b}): numba {want}, cudajit {got}")
    assert not mismatches, "\n".join(mismatches)


def test_math_floor_returns_a_float_as_numba_cuda():
    # numba-cuda types math.floor/ceil as float -> float (CPU numba returns int64).
    assert ret_type(_floor, ["float32"]) == "f32"
    assert ret_type(_floor, ["float64"]) == "f64"
    assert ret_type(_floor, ["int32"]) == "f64"
    text = infer(_floor, ["int32"])
    assert "v1:f64 = cast v0" in text
    assert "v2:f64 = intrinsic math.floor(v1)" in text


# ---- typed IR of whole functions ------------------------------------------------------------

def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def test_axpy_typed_ir():
    text = infer(axpy, ["float32", "float32[::1]", "float32[::1]"], kernel=True)
    body = [re.sub(r"\s+@.*$", "", line.strip()) for line in text.splitlines()[1:]]
    assert text.splitlines()[0].startswith(
        "func axpy(v0:f32 a, v1:array(f32, 1d, C) x, v2:array(f32, 1d, C) y) -> none kernel")
    # grid(1) = ctaid.x * ntid.x + tid.x, each register sign-extended to i64 (numba).
    assert body[:9] == [
        "bb0:",
        "v3:i32 = intrinsic sreg.tid.x()",
        "v4:i64 = cast v3",
        "v5:i32 = intrinsic sreg.ntid.x()",
        "v6:i64 = cast v5",
        "v7:i32 = intrinsic sreg.ctaid.x()",
        "v8:i64 = cast v7",
        "v9:i64 = mul v6, v8",
        "v10:i64 = add v9, v4",
    ]
    assert "v11:i64 = array_size v1" in body
    assert "v12:b1 = lt v10, v11" in body
    assert "v14:f32 = load v1, v10" in body
    assert "v15:f32 = mul v0, v14" in body
    assert "store v2, v10, v17" in body
    assert not any(op in text for op in (" call ", "getattr", "getitem", "setitem", ":?"))


def test_loop_carried_value_widens_to_float():
    def total(a):
        acc = 0
        for i in range(a.shape[0]):
            acc += a[i]
        return acc

    text = infer(total, ["float32[:]"])
    assert re.match(r"func total\(v0:array\(f32, 1d, A\) a\) -> f64 .*@test_typeinfer.py:%d$"
                    % total.__code__.co_firstlineno, text.splitlines()[0])
    # acc starts as an i64 constant; the loop makes it f64: the entry edge casts.
    assert re.search(r"bb1\(v\d+:f64 acc[,)]", text)
    assert re.search(r"v\d+:f64 = cast v\d+", text)
    assert re.search(r"v\d+:range\(i64\) = range v\d+, v\d+, v\d+", text)
    assert re.search(r"v\d+:i64 = array_dim v0 \[0\]", text)


def test_range_index_type_follows_numba():
    def count(n):
        c = 0
        for i in range(n):
            c += 1
        return c

    assert "range(i32)" in infer(count, ["int32"])
    assert "range(i64)" in infer(count, ["int64"])
    assert "range(u64)" in infer(count, ["uint32"])

    def stepped(a, b):
        s = 0
        for i in range(a, b, 2):
            s += i
        return s

    text = infer(stepped, ["int32", "int64"])
    assert re.search(r"v\d+:range\(i64\) = range v\d+, v\d+, v\d+", text)
    assert ret_type(stepped, ["int32", "int32"]) == "i64"


def test_grid_and_gridsize_tuples():
    def k(a):
        x, y = cuda.grid(2)
        w, h = cuda.gridsize(2)
        a[x, y] = w * h

    text = infer(k, ["int64[:, ::1]"], kernel=True)
    for reg in ("tid.x", "tid.y", "ctaid.x", "ctaid.y", "ntid.x", "ntid.y", "nctaid.x", "nctaid.y"):
        assert f"intrinsic sreg.{reg}()" in text
    assert re.search(r"store v0, v\d+, v\d+, v\d+", text)
    assert "tuple_get" not in text   # unpacking a tuple built here reads its operands


def test_special_registers_are_i32_values():
    def k(a):
        a[0] = cuda.threadIdx.x + cuda.blockIdx.y + cuda.blockDim.z + cuda.gridDim.x
        a[1] = cuda.laneid + cuda.warpsize

    text = infer(k, ["int32[:]"], kernel=True)
    for reg in ("tid.x", "ctaid.y", "ntid.z", "nctaid.x", "laneid", "warpsize"):
        assert re.search(rf"v\d+:i32 = intrinsic sreg\.{reg}\(\)", text)
    # i32 + i32 is i64 in numba; the store casts back to the array's i32.
    assert re.search(r"v\d+:i32 = cast v\d+", text)


def test_shared_and_local_arrays():
    def k(a):
        s = cuda.shared.array((4, 8), np.float32)
        t = cuda.local.array(shape=3, dtype="int16")
        s[0, 1] = a[0]
        t[2] = 7
        cuda.syncthreads()
        cuda.threadfence()
        cuda.threadfence_block()
        a[1] = s[0, 1] + t[2]

    text = infer(k, ["float64[:]"], kernel=True)
    assert re.search(r"v\d+:array\(f32, 2d, C, shared\) = intrinsic shared_array\[4, 8\]\(\)", text)
    assert re.search(r"v\d+:array\(i16, 1d, C, local\) = intrinsic local_array\[3\]\(\)", text)
    assert "intrinsic syncthreads()" in text
    assert "intrinsic threadfence()" in text
    assert "intrinsic threadfence_block()" in text
    assert re.search(r"v\d+:i16 = cast v\d+", text)   # 7 stored as int16


def test_atomic_add_casts_index_and_value():
    def k(a, b):
        old = cuda.atomic.add(a, 0, 1)
        cuda.atomic.add(b, (1, 2), 2.5)
        a[1] = old

    text = infer(k, ["float32[:]", "int32[:, :]"], kernel=True)
    assert re.search(r"v\d+:f32 = intrinsic atomic_add\(v0, v\d+, v\d+\)", text)
    assert re.search(r"v\d+:i32 = intrinsic atomic_add\(v1, v\d+, v\d+, v\d+\)", text)
    assert re.search(r"v\d+:f32 = cast v\d+", text)   # 1 -> f32
    assert re.search(r"v\d+:i32 = cast v\d+", text)   # 2.5 -> i32


def test_array_attributes():
    def f(a):
        n, m = a.shape
        s0, s1 = a.strides
        return n + m + s0 + s1 + a.size + a.ndim + len(a)

    text = infer(f, ["float32[:, :]"])
    assert re.search(r"v\d+:i64 = array_dim v0 \[0\]", text)
    assert re.search(r"v\d+:i64 = array_dim v0 \[1\]", text)
    assert re.search(r"v\d+:i64 = array_stride v0 \[1\]", text)
    assert re.search(r"v\d+:i64 = array_size v0", text)
    assert re.search(r"v\d+:i64 = const 2", text)   # ndim
    assert ret_type(f, ["float32[:, :]"]) == "i64"


def test_min_max_abs_lowering():
    def f(x, y):
        return min(x, y), max(x, y, 0.5), abs(x)

    text = infer(f, ["int32", "float32"])
    assert ret_type(f, ["int32", "float32"]) == "tuple(f64, f64, i32)"
    assert re.search(r"v\d+:b1 = lt v\d+, v\d+", text)
    assert re.search(r"v\d+:f64 = select v\d+, v\d+, v\d+", text)
    assert re.search(r"v\d+:b1 = gt v\d+, v\d+", text)
    assert re.search(r"v\d+:i32 = neg v0", text)
    assert re.search(r"v\d+:i32 = select v\d+, v\d+, v0", text)
    assert "math.fabs" in infer(lambda x: abs(x), ["float32"])


def test_operators_insert_casts_to_the_result_type():
    def f(x, y):
        return x + y, x / y, x // y, x % y, x ** y, x < y

    text = infer(f, ["int32", "uint32"])
    assert ret_type(f, ["int32", "uint32"]) == "tuple(i64, f64, i64, i64, i64, b1)"
    assert re.search(r"v\d+:i64 = add v\d+, v\d+", text)
    assert re.search(r"v\d+:f64 = truediv v\d+, v\d+", text)
    assert re.search(r"v\d+:i64 = floordiv v\d+, v\d+", text)
    assert re.search(r"v\d+:i64 = mod v\d+, v\d+", text)
    assert re.search(r"v\d+:i64 = pow v\d+, v\d+", text)
    # int32 < uint32 compares as int64 (numba's best case), result b1.
    lt = lines_with(text, " = lt ")[0]
    a, b = re.search(r"lt (v\d+), (v\d+)", lt).groups()
    assert re.search(rf"{a}:i64 = cast v0", text) and re.search(rf"{b}:i64 = cast v1", text)

    def g(x, y):
        return x < y

    # int64 < uint64 compares as float64, as numba does.
    assert re.search(r"v\d+:f64 = cast v0", infer(g, ["int64", "uint64"]))


def test_float_power_with_int_exponent():
    def f(x, n):
        return x ** n

    assert ret_type(f, ["float32", "int32"]) == "f32"
    assert ret_type(f, ["float32", "int64"]) == "f32"
    assert ret_type(f, ["int32", "float32"]) == "f64"
    # numba keeps the integer exponent (float ** int is repeated multiplication).
    assert "v2:f32 = pow v0, v1" in infer(f, ["float32", "int32"])
    assert re.search(r"v\d+:i32 = cast v1", infer(f, ["float64", "int16"]))
    assert re.search(r"v\d+:u64 = cast v1", infer(f, ["float32", "uint32"]))
    assert re.search(r"v\d+:f64 = pow v\d+, v\d+", infer(f, ["int32", "float32"]))


def test_truth_not_and_is_none():
    def f(x, y):
        if x:
            return not y
        return y is None

    text = infer(f, ["float32", "int64"])
    assert ret_type(f, ["float32", "int64"]) == "b1"
    assert re.search(r"v\d+:b1 = truth v0", text)
    assert re.search(r"v\d+:b1 = not v\d+", text)
    assert re.search(r"v\d+:b1 = const false", text)   # `y is None` folded
    assert " is " not in text


def test_casts_between_scalar_types():
    def f(x):
        return np.float32(x), np.int16(x), int(x), float(x), bool(x)

    assert ret_type(f, ["float64"]) == "tuple(f32, i16, i64, f64, b1)"
    assert ret_type(f, ["int32"]) == "tuple(f32, i16, i32, f64, b1)"


def test_tuples_constant_index_and_return():
    def f(t):
        a = t[0]
        b = t[-1]
        return (a, b, (1, 2.0))

    assert ret_type(f, ["Tuple(int32, float32)"]) == "tuple(i32, f32, tuple(i64, f64))"
    text = infer(f, ["Tuple(int32, float32)"])
    assert "tuple_get v0 [0]" in text and "tuple_get v0 [1]" in text
    assert "const (" not in text   # constant tuples are built element by element


# ---- device functions -------------------------------------------------------------------

@device
def scale(x, k):
    return x * k


@device
def twice(x):
    return scale(x, 2)


def test_device_function_specialised_per_signature():
    def k(a, b):
        a[0] = scale(a[1], 3)
        a[2] = scale(a[3], 4)       # same signature: one specialisation
        b[0] = scale(b[1], 0.5)     # another signature

    text = infer(k, ["int32[:]", "float32[:]"], kernel=True)
    funcs = re.findall(r"^func (\w+)\((.*)\) -> (\S+)", text, re.M)
    assert [f[0] for f in funcs] == ["k", "scale__i32_i64", "scale__f32_f64"]
    assert funcs[1][2] == "i64" and funcs[2][2] == "f64"
    assert len(re.findall(r"call_func scale__i32_i64\(", text)) == 2
    assert re.search(r"v\d+:f64 = call_func scale__f32_f64\(v\d+, v\d+\)", text)


def test_nested_device_calls_and_keywords():
    def k(a):
        a[0] = twice(x=a[1])

    text = infer(k, ["float64[:]"], kernel=True)
    funcs = re.findall(r"^func (\w+)", text, re.M)
    assert funcs == ["k", "twice__f64", "scale__f64_i64"]
    assert "call_func scale__f64_i64(v0, v" in text


def test_mangled_names():
    assert _core.mangle_function_name("h", ["float32", "float32[:, ::1]"]) == "h__f32_a2f32C"
    assert _core.mangle_function_name("h", ["UniTuple(int64, 2)", "int8"]) == "h__Ti64_i64E_i8"
    assert _core.mangle_function_name("h", []) == "h__"


# ---- signatures -------------------------------------------------------------------------

def test_parse_numba_types():
    p = _core.parse_numba_type
    assert p("float32") == "f32"
    assert p("float32[:]") == "array(f32, 1d, A)"
    assert p("float32[::1]") == "array(f32, 1d, C)"
    assert p("float32[:, ::1]") == "array(f32, 2d, C)"
    assert p("float32[::1, :]") == "array(f32, 2d, F)"
    assert p("int64[:, :, :]") == "array(i64, 3d, A)"
    assert p("array(f32, 2d, C)") == "array(f32, 2d, C)"
    assert p("UniTuple(int64, 2)") == "tuple(i64, i64)"
    assert p("Tuple(int32, float64[:])") == "tuple(i32, array(f64, 1d, A))"
    # numba's own spelling: Tuple takes a tuple of types
    assert p("Tuple((int64, float64))") == "tuple(i64, f64)"
    assert p("Tuple((int64,))") == "tuple(i64)"
    assert p("Tuple((UniTuple(int32, 2), Tuple((float32, int8))))") == "tuple(tuple(i32, i32), tuple(f32, i8))"
    assert p("boolean") == "b1" and p("bool_") == "b1" and p("intp") == "i64"
    assert p("f4") == "f32" and p("i8") == "i64" and p("u4") == "u32"
    for bad in ("float31", "float32[:", "float32[::2]", "float32[:, ::1, :]", "UniTuple(int64)",
                "Tuple((int64, float64)", "Tuple((int64 float64))"):
        with pytest.raises(CompileError, match="cannot parse type signature"):
            p(bad)


def test_parse_signatures():
    assert _core.parse_signature("void(float32, float32[:], int64)") == (
        "none", ["f32", "array(f32, 1d, A)", "i64"])
    assert _core.parse_signature("float64(float64)") == ("f64", ["f64"])
    assert _core.parse_signature("(int32[::1],)".replace(",)", ")")) == (None, ["array(i32, 1d, C)"])
    assert _core.parse_signature("void()") == ("none", [])
    with pytest.raises(CompileError, match="cannot parse type signature 'void\\(float32'"):
        _core.parse_signature("void(float32")


# ---- errors -------------------------------------------------------------------------------

def line_of(fn, offset):
    return fn.__code__.co_firstlineno + offset


def test_error_unsupported_function():
    def f(a):
        return math.factorial(a[0])

    with pytest.raises(CompileError) as e:
        infer(f, ["float32[:]"])
    assert e.value.message == "unsupported function math.factorial"
    assert e.value.construct == "math.factorial"
    assert e.value.file.endswith("test_typeinfer.py")
    assert e.value.line == line_of(f, 1)


def test_error_unknown_array_attribute():
    def f(a):
        return a.foo

    with pytest.raises(CompileError, match="array has no attribute 'foo'") as e:
        infer(f, ["float32[:]"])
    assert e.value.line == line_of(f, 1)
    assert "array(f32, 1d, A)" in e.value.hint


def test_error_conflicting_types_names_the_variable():
    def f(a, n):
        if n > 0:
            acc = a
        else:
            acc = 1.0
        n = n + 1   # a join block too big for Python 3.12 to copy into both branches
        n = n * 2
        return acc

    with pytest.raises(CompileError) as e:
        infer(f, ["float32[:]", "int64"])
    msg = e.value.message
    assert "variable 'acc'" in msg
    assert "array(f32, 1d, A)" in msg and "f64" in msg
    assert line_of(f, 1) <= e.value.line <= line_of(f, 7)
    assert e.value.file.endswith("test_typeinfer.py")


def test_error_tuple_shapes_conflict():
    def f(n):
        t = (1, 2)
        if n > 0:
            t = (1, 2, 3)
        return t

    with pytest.raises(CompileError, match=r"variable 't' is tuple\(i64, i64\) on one path and "
                                           r"tuple\(i64, i64, i64\) on another"):
        infer(f, ["int64"])


def test_error_recursion():
    @device
    def rec(n):
        return rec(n - 1)

    def f(n):
        return rec(n)

    with pytest.raises(CompileError, match="recursive call to device function 'rec'"):
        infer(f, ["int64"])


def test_error_kernel_returns_value():
    def k(a):
        return a[0]

    with pytest.raises(CompileError, match=r"a kernel must not return a value \(it returns f32\)"):
        infer(k, ["float32[:]"], kernel=True)
    assert ret_type(k, ["float32[:]"]) == "f32"   # as a device function it may


def test_error_messages_for_bad_operations():
    cases = [
        (lambda a, b: a + b, ["float32[:]", "int32"],
         r"unsupported operand types for \+: array\(f32, 1d, A\) and i32"),
        (lambda a: a[0, 1], ["float32[:]"], r"2 indexes on a 1-d array"),
        (lambda a: a[1.5], ["float32[:]"], r"array index must be an integer"),
        (lambda t: t[2], ["UniTuple(int64, 2)"], r"tuple index 2 out of range"),
        (lambda t, i: t[i], ["Tuple(int64, float64)", "int64"], r"tuple index must be a constant"),
        (lambda x: x.foo, ["float32"], r"f32 has no attribute 'foo'"),
        (lambda x: x(), ["float32"], r"a value of type f32 is not callable"),
        (lambda x: x << 1.0, ["int32"], r"unsupported operand types for <<"),
        (lambda x: cuda.grid(x), ["int64"], r"cudajit.grid\(\) argument must be the constant 1, 2 or 3"),
        (lambda x: cuda.shared.array(x, np.float32), ["int64"], r"shape must be a constant"),
        (lambda x: cuda.shared.array(4, x), ["int64"], r"dtype must be a numpy scalar type"),
        (lambda x: cuda.local.array(4, np.float32, 3), ["int64"], r"alignment must be a constant power of two"),
        (lambda x: cuda.local.array(4, np.float32, 16, 1), ["int64"], r"takes at most 3 arguments"),
        (lambda x: cuda.atomic.add(x, 0, 1), ["bool[:]"], r"does not support arrays of bool"),
        (lambda x: math.sqrt(x), ["float32[:]"], r"math.sqrt\(\) argument must be a number"),
        (lambda x: range(x), ["float32"], r"range\(\) arguments must be integers"),
        (lambda x: min(x), ["int32"], r"min\(\) expects a tuple or at least two arguments"),
        (lambda x: len(x), ["int32"], r"len\(\) of i32 is not supported"),
        (lambda x, y: x is y, ["int32", "int32"], r"'is' is only supported with None"),
    ]
    for fn, types, pattern in cases:
        with pytest.raises(CompileError, match=pattern):
            infer(fn, types)


def test_error_setitem_value_and_readonly():
    def f(a):
        a[0] = a

    with pytest.raises(CompileError, match=r"cannot store array\(f32, 1d, A\) into an array of f32"):
        infer(f, ["float32[:]"])

    def g(a):
        a[0] = 1

    with pytest.raises(CompileError, match="readonly"):
        infer(g, ["array(f32, 1d, A, readonly)"])


def test_error_wrong_argument_count():
    def f(a, b):
        return a

    with pytest.raises(CompileError, match=r"'.*f' takes 2 arguments but 1 type was given"):
        infer(f, ["int32"])


def test_maybe_unassigned_variable_is_undef_not_error():
    # As numba: a local assigned on one path only reads as undefined on the other.
    def f(n):
        if n > 0:
            x = 1
        return x

    text = infer(f, ["int64"])
    assert re.search(r"v\d+:i64 = undef", text)
    assert ret_type(f, ["int64"]) == "i64"


# ---- untyped IR text in, typed IR text out ------------------------------------------------

UNTYPED_SUM = """\
func f(v0:? a, v1:? n) -> ?  @sum.py:2
bb0:
  v2:? = undef  @4:5 [i]
  v3:? = const 0  @3:11 [acc]
  v4:? = const sym(builtins.range)  @4:14
  v5:? = call v4(v1)  @4:14
  v6:? = getiter v5  @4:5
  br bb1(v3, v2)  @4:5
bb1(v8:? acc, v9:? i) (preds bb0, bb2):
  v10:? = iter_valid v6  @4:5
  v11:? = iter_next v6  @4:5 [i]
  cbr v10, bb2, bb3  @4:5
bb2 (preds bb1):
  v13:? = getitem v0, v11  @5:16
  v14:? = add v8, v13  @5:9 [acc]
  br bb1(v14, v11)  @5:9
bb3 (preds bb1):
  ret v8  @6:5
"""

TYPED_SUM = """\
func f(v0:array(f32, 1d, C) a, v1:i32 n) -> f64  @sum.py:2
bb0:
  v2:i64 = const 0  @3:11 [acc]
  v3:i32 = const 0  @4:14
  v4:i32 = const 1  @4:14
  v5:range(i32) = range v3, v1, v4  @4:14
  v6:rangeiter(i32) = getiter v5  @4:5
  v7:f64 = cast v2  @4:5
  v8:i32 = undef  @4:5
  br bb1(v7, v8)  @4:5
bb1(v10:f64 acc, v11:i32 i) (preds bb0, bb2):
  v12:b1 = iter_valid v6  @4:5
  v13:i32 = iter_next v6  @4:5 [i]
  cbr v12, bb2, bb3  @4:5
bb2 (preds bb1):
  v15:i64 = cast v13  @5:16
  v16:f32 = load v0, v15  @5:16
  v17:f64 = cast v16  @5:9
  v18:f64 = add v10, v17  @5:9 [acc]
  br bb1(v18, v13)  @5:9
bb3 (preds bb1):
  ret v10  @6:5
"""


def test_typed_ir_text_from_untyped_ir_text():
    assert _core.infer_ir_text(UNTYPED_SUM, ["float32[::1]", "int32"]) == TYPED_SUM


def test_untyped_input_is_not_modified_and_reinference_is_stable():
    first = _core.infer_ir_text(UNTYPED_SUM, ["float32[::1]", "int32"])
    second = _core.infer_ir_text(UNTYPED_SUM, ["float32[::1]", "int32"])
    assert first == second
    assert "range(i64)" in _core.infer_ir_text(UNTYPED_SUM, ["float32[::1]", "int64"])


def test_constant_tuple_of_special_registers():
    # The decoder folds `(ty, tx)` of locals bound to cuda.threadIdx.* into a
    # constant tuple of symbols; each element is an i32 special register.
    def k(a, out):
        tile = cuda.shared.array(shape=(16, 17), dtype=np.float64)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tile[ty, tx] = a[0]
        cuda.syncthreads()
        out[ty, tx] = tile[tx, ty]

    text = infer(k, ["float64[::1]", "float64[:, ::1]"], kernel=True)
    assert re.search(r"v\d+:array\(f64, 2d, C, shared\) = intrinsic shared_array\[16, 17\]\(\)", text)
    assert len(re.findall(r"v\d+:i32 = intrinsic sreg\.tid\.y\(\)", text)) >= 1
    stores = lines_with(text, "store ")
    assert len(stores) == 2 and all(re.search(r"store v\d+, v\d+, v\d+, v\d+", s) for s in stores)
    assert "sym(" not in text


# ---- the kernel registry, typed by cudajit and by numba ------------------------------------

def _load_cases(module_name, with_numba):
    import importlib.util
    import os
    import pathlib
    path = pathlib.Path(__file__).with_name("kernel_cases.py")
    if not path.exists():
        pytest.skip("tests/kernel_cases.py is not in this checkout")
    old = os.environ.get("CUDAJIT_CASES_WITH_NUMBA")
    try:
        if with_numba:
            os.environ["CUDAJIT_CASES_WITH_NUMBA"] = "1"
        else:
            os.environ.pop("CUDAJIT_CASES_WITH_NUMBA", None)
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        import sys
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        if old is None:
            os.environ.pop("CUDAJIT_CASES_WITH_NUMBA", None)
        else:
            os.environ["CUDAJIT_CASES_WITH_NUMBA"] = old


def _sig_args(sig):
    inner = re.match(r"\w*\((.*)\)$", sig).group(1)
    return [a.strip() for a in re.split(r",(?![^\[]*\])", inner)] if inner.strip() else []


SCALAR_RE = re.compile(r"[biuf]\d+|c\d+")


def test_registry_kernels_type_as_numba_types_them():
    """Every registry kernel types; each named scalar variable gets the types
    numba gives it (numba's literal constants aside)."""
    if isinstance(cuda, _Symbol):
        pytest.skip("the cudajit package (jit, stubs) is not in this checkout")
    pytest.importorskip("numba.cuda")
    import numpy
    numpy.row_stack = getattr(numpy, "row_stack", numpy.vstack)
    from numba.core import sigutils
    from numba.cuda.compiler import compile_cuda
    ours = _load_cases("kernel_cases_cudajit", with_numba=False)
    theirs = _load_cases("kernel_cases_numba", with_numba=True)
    diffs, compared = [], 0
    for ca, cb in zip(ours.CASES, theirs.CASES):
        text = infer(ca.kernel, _sig_args(ca.sig), kernel=True).split("\nfunc ")[0]
        fn = getattr(cb.kernel, "py_func", cb.kernel)
        try:
            cres = compile_cuda(fn, None, sigutils.normalize_signature(cb.sig)[0], cc=(9, 0))
        except Exception:
            continue   # device-function cases need numba's dispatcher (a driver)
        compared += 1
        ours_types = {}
        for m in re.finditer(r"v\d+:(\S+) (\w+)[,)]|v\d+:(\S+) = .*\[(\w+)\]$", text, re.M):
            t, n = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            ours_types.setdefault(n, set()).add(t)
        numba_types = {}
        for k, t in cres.type_annotation.typemap.items():
            if not k.startswith(("$", "arg.")):
                numba_types.setdefault(k.split(".")[0], set()).add(str(t))
        for name, ts in numba_types.items():
            want = {_core.parse_numba_type(t) for t in ts
                    if re.fullmatch(r"u?int\d+|float\d+|bool|complex\d+", t)}
            got = {t for t in ours_types.get(name, ()) if SCALAR_RE.fullmatch(t)}
            literal = any(t.startswith("Literal") for t in ts)
            if want and (not want <= got or (got - want and not literal)):
                diffs.append(f"{ca.name}: {name}: numba {sorted(want)}, cudajit {sorted(got)}")
    assert compared >= 50
    assert not diffs, "\n".join(diffs)


def test_tuple_concatenation_and_growth_in_a_loop():
    def f(a, b):
        return (a,) + (b, 1.5)

    assert ret_type(f, ["int32", "float32"]) == "tuple(i32, f32, f64)"
    assert "add" not in infer(f, ["int32", "float32"])

    def grow(n):
        t = ()
        for i in range(n):
            t = t + (i,)
        return t

    with pytest.raises(CompileError, match=r"variable 't' is tuple\(\) on one path and tuple\(i64\)"):
        infer(grow, ["int64"])


def test_short_circuit_and_conditional_expressions_unify():
    # a and b: int32 | float64 -> float64; float32 | int literal -> float64 (numba).
    assert ret_type(lambda a, b: a and b, ["int32", "float64"]) == "f64"
    assert ret_type(lambda a, n: a[0] if n > 0 else 0, ["float32[:]", "int64"]) == "f64"
    assert ret_type(lambda a, n: a[0] if n > 0 else 0, ["int32[:]", "int64"]) == "i64"


def test_error_unknown_cudajit_name():
    def k(a):
        a[0] = cuda.no_such_thing + 1

    with pytest.raises(CompileError, match=r"unsupported attribute cudajit.no_such_thing") as e:
        infer(k, ["int64[:]"], kernel=True)
    assert e.value.line == line_of(k, 1)


@device
def store_first(arr, v):
    arr[0] = v


@device
def pick(n):
    if n > 0:
        return 1
    return 2.5


def test_device_function_returns():
    def k(a, n):
        store_first(a, n)
        a[1] = pick(n)

    text = infer(k, ["float32[::1]", "int32"], kernel=True)
    funcs = re.findall(r"^func (\w+)\((.*)\) -> (\S+)", text, re.M)
    assert funcs[1] == ("store_first__a1f32C_i32", "v0:array(f32, 1d, C) arr, v1:i32 v", "none")
    # Returns unify as numba does: int64 and float64 -> float64, the int return is cast.
    assert funcs[2][0] == "pick__i32" and funcs[2][2] == "f64"
    assert re.search(r"v\d+:none = call_func store_first__a1f32C_i32\(v0, v1\)", text)
    pick_text = text.split("\nfunc pick__i32")[1]
    assert re.search(r"v\d+:f64 = cast v\d+", pick_text)


def test_error_return_types_conflict():
    def f(a, n):
        if n > 0:
            return a
        return 1

    with pytest.raises(CompileError, match=r"here but the function returns .* on another path"):
        infer(f, ["float32[:]", "int64"])


def test_arrays_of_different_layouts_merge_into_layout_a():
    # As numba: C and A (or F) arrays joining at a block parameter give layout A;
    # the typed IR converts the incoming views with array_view (issue 5).
    def f(a, b, n):
        x = a
        if n > 0:
            x = b
        return x[0]

    text = infer(f, ["float32[::1]", "float32[:]", "int64"])
    assert "array(f32, 1d, A) x" in text and "array_view" in text
    assert ret_type(f, ["float32[::1]", "float32[:]", "int64"]) == "f32"
    assert ret_type(f, ["float32[::1]", "float32[::1]", "int64"]) == "f32"
