"""numba.cuda features beyond issue 5's language list: cmath, complex ** ,
round(), pow(), tuple comparisons (this file), global numpy arrays /
cuda.const.array_like and None arguments / Optional locals (further down).

Without a GPU the values are checked by running the compiled device
functions on the host (tests/host_exec.py: cudajit's NVVM IR, JIT-compiled
for the CPU by llvmlite with libdevice bound to libm) against Python /
numpy on fresh random data; types against numba-cuda's; PTX through ptxas.
"""
import cmath
import math

import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit.errors import CompileError

from host_exec import host_function

ARCH = "sm_90"


from ptxas_check import assemble  # noqa: E402


def ret_of(fn, sig):
    sig = sig.replace(",)", ")")   # numba's one-element tuple spelling
    return str(cuda.compile_ptx(fn, sig, cc=(9, 0), device=True)[1])


@pytest.fixture(scope="module")
def numba_cuda():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    return pytest.importorskip("numba.cuda")


def rng():
    return np.random.default_rng()


def close(got, want, tol):
    """Complex/float closeness with NaN == NaN and exact infinities."""
    def one(a, b):
        if math.isnan(b):
            return math.isnan(a)
        if math.isinf(b):
            return a == b
        return abs(a - b) <= tol * max(1.0, abs(b))
    got, want = complex(got), complex(want)
    return one(got.real, want.real) and one(got.imag, want.imag)


def random_complex(r, n, lo=-3.0, hi=3.0):
    return [complex(a, b) for a, b in r.uniform(lo, hi, (n, 2))]


# ---------------------------------------------------------------------------
# cmath
# ---------------------------------------------------------------------------

def c_exp(z):
    return cmath.exp(z)


def c_log(z):
    return cmath.log(z)


def c_log_base(z, b):
    return cmath.log(z, b)


def c_log10(z):
    return cmath.log10(z)


def c_sqrt(z):
    return cmath.sqrt(z)


def c_sin(z):
    return cmath.sin(z)


def c_cos(z):
    return cmath.cos(z)


def c_tan(z):
    return cmath.tan(z)


def c_sinh(z):
    return cmath.sinh(z)


def c_cosh(z):
    return cmath.cosh(z)


def c_tanh(z):
    return cmath.tanh(z)


def c_phase(z):
    return cmath.phase(z)


def c_polar(z):
    r, p = cmath.polar(z)
    return r * 1000.0 + p


def c_rect(r, p):
    return cmath.rect(r, p)


def c_isnan(z):
    return cmath.isnan(z)


def c_isinf(z):
    return cmath.isinf(z)


def c_isfinite(z):
    return cmath.isfinite(z)


UNARY = [c_exp, c_log, c_log10, c_sqrt, c_sin, c_cos, c_tan, c_sinh, c_cosh, c_tanh]


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("ctype,tol", [("complex128", 1e-13), ("complex64", 3e-6)])
def test_cmath_unary_values(fn, ctype, tol):
    r = rng()
    h = host_function(fn, [ctype])
    dt = np.complex64 if ctype == "complex64" else np.complex128
    for z in random_complex(r, 200):
        z = complex(dt(z))          # the argument as the kernel sees it
        assert close(h(z), fn(z), tol), (fn.__name__, z, h(z), fn(z))


@pytest.mark.parametrize("ctype,tol", [("complex128", 1e-13), ("complex64", 3e-6)])
def test_cmath_phase_polar_log_base(ctype, tol):
    r = rng()
    dt = np.complex64 if ctype == "complex64" else np.complex128
    hp, hq = host_function(c_phase, [ctype]), host_function(c_polar, [ctype])
    hl = host_function(c_log_base, [ctype, ctype])
    for z, b in zip(random_complex(r, 100), random_complex(r, 100, 1.5, 4)):
        z, b = complex(dt(z)), complex(dt(b))
        assert close(hp(z), cmath.phase(z), tol)
        assert close(hq(z), c_polar(z), tol * 1000)
        assert close(hl(z, b), cmath.log(z, b), tol * 10)


def test_cmath_rect_and_predicates():
    r = rng()
    h = host_function(c_rect, ["float64", "float64"])
    for m, p in r.uniform(-5, 5, (100, 2)):
        assert close(h(m, p), cmath.rect(m, p), 1e-13)
    inf, nan = math.inf, math.nan
    # numba's special cases (cmathimpl.impl_cmath_rect): 0 * inf keeps 0
    assert h(inf, 0.0) == complex(inf, 0.0)
    assert h(0.0, inf) == 0j and h(-0.0, nan) == 0j
    z = h(inf, nan)
    assert z.real == inf and math.isnan(z.imag)
    values = [complex(a, b) for a in (0.0, 1.5, inf, -inf, nan) for b in (0.0, -2.0, inf, nan)]
    for fn in (c_isnan, c_isinf, c_isfinite):
        h = host_function(fn, ["complex128"])
        for z in values:
            assert h(z) == fn(z), (fn.__name__, z)


def test_cmath_special_values_follow_numba():
    inf, nan = math.inf, math.nan
    specials = [complex(x, y) for x in (0.0, -0.0, 1.5, -2.0, inf, -inf, nan)
                for y in (0.0, -0.0, 0.7, -3.0, inf, -inf, nan)]
    # exp, log, sqrt: numba's algorithms agree with CPython's cmath here
    for fn in (c_exp, c_log, c_sqrt):
        h = host_function(fn, ["complex128"])
        for z in specials:
            try:
                want = fn(z)
            except (ValueError, OverflowError):
                continue
            assert close(h(z), want, 1e-13), (fn.__name__, z, h(z), want)
    # sinh/cosh/tanh: numba's overloads are plain Python, run them as the reference
    cm = pytest.importorskip("numba.cuda.cpython.cmathimpl")
    from numba.cuda import types
    for fn, impl in ((c_sinh, cm.impl_cmath_sinh), (c_cosh, cm.impl_cmath_cosh),
                     (c_tanh, cm.impl_cmath_tanh)):
        ref = impl(types.complex128)
        h = host_function(fn, ["complex128"])
        for z in specials:
            try:
                want = ref(z)
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
            assert close(h(z), want, 1e-13), (fn.__name__, z, h(z), want)


CMATH_TYPES = [   # (parameters, expression, numba signature)
    ("z", "cmath.exp(z)", "(complex64,)"), ("z", "cmath.exp(z)", "(complex128,)"),
    ("x", "cmath.exp(x)", "(float64,)"), ("n", "cmath.sqrt(n)", "(int64,)"), ("x", "cmath.sqrt(x)", "(float32,)"),
    ("z, x", "cmath.log(z, x)", "(complex64, float64)"), ("z, w", "cmath.log(z, w)", "(complex64, complex64)"),
    ("z", "cmath.isnan(z)", "(complex64,)"), ("x", "cmath.isfinite(x)", "(float64,)"), ("z", "abs(z)", "(complex64,)"),
    ("z, w", "z ** w", "(complex64, complex64)"), ("z, n", "z ** n", "(complex64, int64)"), ("z", "z ** 2", "(complex64,)"),
    ("z, x", "z ** x", "(complex64, float32)"), ("x, z", "x ** z", "(float64, complex128)"),
    ("z, w", "pow(z, w)", "(complex64, complex64)"), ("n", "pow(n, 3)", "(int64,)"), ("x, n", "pow(x, n)", "(float32, int64)"),
    ("x, y", "pow(x, y)", "(float32, float32)"), ("x", "round(x)", "(float32,)"), ("x", "round(x)", "(float64,)"),
    ("n", "round(n)", "(int32,)"), ("x, n", "round(x, n)", "(float32, int64)"), ("x, n", "round(x, n)", "(float64, int32)"),
    ("x", "round(x, 2)", "(float16,)"),
]


@pytest.mark.parametrize("params,expr,sig", CMATH_TYPES)
def test_types_match_numba(params, expr, sig, numba_cuda):
    ns = {"cmath": cmath, "math": math}
    exec(f"def f({params}):\n    return {expr}\n", ns)
    assert ret_of(ns["f"], sig) == str(numba_cuda.compile_ptx(ns["f"], sig, cc=(9, 0), device=True)[1])


def test_overload_only_functions_type_as_numba():
    # numba-cuda's @overload cmath functions (sinh, phase, rect, ...) need a
    # driver to compile even to PTX; their types follow the overloads.
    assert ret_of(c_sinh, "(complex64,)") == "complex64"
    assert ret_of(c_phase, "(complex64,)") == "float32"
    assert ret_of(c_rect, "(float32, float32)") == "complex128"
    assert ret_of(c_log10, "(complex64,)") == "complex64"


@pytest.mark.parametrize("fn,sig,msg", [
    (c_sinh, "(float64,)", "cmath.sinh() argument must be complex"),
    (c_phase, "(float64,)", "cmath.phase() argument must be complex"),
    (c_rect, "(int64, int64)", "cmath.rect() arguments must be float32 or float64"),
])
def test_cmath_errors_name_the_line(fn, sig, msg):
    with pytest.raises(CompileError) as e:
        ret_of(fn, sig)
    assert msg in str(e.value)
    assert e.value.line == fn.__code__.co_firstlineno + 1


def c_acos(z):
    return cmath.acos(z)


def c_asin(z):
    return cmath.asin(z)


def c_atan(z):
    return cmath.atan(z)


def c_acosh(z):
    return cmath.acosh(z)


def c_asinh(z):
    return cmath.asinh(z)


def c_atanh(z):
    return cmath.atanh(z)


INVERSE = [c_acos, c_asin, c_atan, c_acosh, c_asinh, c_atanh]


@pytest.mark.parametrize("fn", INVERSE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("ctype,tol", [("complex128", 1e-13), ("complex64", 3e-6)])
def test_cmath_inverse_values(fn, ctype, tol):
    # numba's algorithms are CPython's (c_acos & co): the same values on
    # random arguments, near the branch points, and huge ones (the overflow-
    # free branch); complex64 is computed in float64 and rounded once.
    r = rng()
    h = host_function(fn, [ctype])
    dt = np.complex64 if ctype == "complex64" else np.complex128
    points = random_complex(r, 200) + [1 + 0j, -1 + 0j, 1j, -1j, 1 + 1e-30j, 0j, -0.0 + 0j]
    if ctype == "complex128":
        points += [complex(a, b) for a, b in r.uniform(-1e300, 1e300, (20, 2))]
    for z in points:
        z = complex(dt(z))
        try:
            want = fn(z)
        except ValueError:   # CPython raises at a pole (atanh(1)); numba returns inf (checked below)
            continue
        if ctype == "complex64":
            want = complex(np.complex64(want))
        assert close(h(z), want, tol), (fn.__name__, z, h(z), want)


def test_cmath_inverse_special_values():
    inf, nan = math.inf, math.nan
    h = {fn.__name__: host_function(fn, ["complex128"]) for fn in INVERSE}
    # C99 / CPython: atanh(1 +/- 0j) = inf +/- 0j, the large branch for infinities
    assert h["c_atanh"](1 + 0j) == complex(inf, 0.0)
    assert h["c_atanh"](complex(1, -0.0)) == complex(inf, -0.0)
    for fn in INVERSE:
        for z in (complex(inf, 1.0), complex(-inf, 2.0), complex(1.0, inf), complex(3.0, -inf)):
            want = fn(z)
            assert close(h[fn.__name__](z), want, 1e-13), (fn.__name__, z, h[fn.__name__](z), want)
    # a NaN imaginary part gives a NaN imaginary part of atanh
    assert math.isnan(h["c_atanh"](complex(0.5, nan)).imag)


@pytest.mark.parametrize("expr,sig,ret", [
    ("cmath.acos(z)", "(complex64,)", "complex64"), ("cmath.asinh(z)", "(complex128,)", "complex128"),
    ("cmath.atan(z)", "(float32,)", "complex64"), ("cmath.asin(z)", "(int64,)", "complex128"),
    ("cmath.acosh(z)", "(complex64,)", "complex64"), ("cmath.atanh(z)", "(float64,)", "complex128"),
])
def test_cmath_inverse_types(expr, sig, ret):
    ns = {"cmath": cmath}
    exec(f"def f(z):\n    return {expr}\n", ns)
    assert ret_of(ns["f"], sig) == ret


def test_cmath_acosh_takes_complex_only():
    # numba's acosh is an @overload for complex numbers only
    with pytest.raises(CompileError, match=r"cmath.acosh\(\) argument must be complex"):
        ret_of(c_acosh, "(float64,)")


COMPLEX_UFUNCS = ["exp", "exp2", "log", "log2", "log10", "expm1", "log1p", "sqrt", "sin", "cos", "tan",
                  "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
                  "rint", "square", "reciprocal"]


@pytest.mark.parametrize("name", COMPLEX_UFUNCS)
@pytest.mark.parametrize("ctype,tol", [("complex128", 1e-12), ("complex64", 2e-5)])
def test_numpy_ufuncs_on_complex_values(name, ctype, tol):
    # numba lowers them with cmath's algorithms or numpy's formulas
    # (npyfuncs.py); on ordinary arguments both agree with numpy's loops.
    ns = {"np": np}
    exec(f"def f(z):\n    return np.{name}(z)\n", ns)
    h = host_function(ns["f"], [ctype])
    dt = np.complex64 if ctype == "complex64" else np.complex128
    for z in random_complex(rng(), 100, -2.5, 2.5):
        z = dt(z)
        want = complex(getattr(np, name)(z))
        assert close(h(complex(z)), want, tol), (name, z, h(complex(z)), want)


def test_numpy_complex_order_and_power():
    # numpy orders complex numbers lexicographically (a NaN imaginary part
    # makes the real parts' comparison false); np.power is z ** w.
    nan = math.nan
    pairs = [(1 + 2j, 1 + 3j), (2 + 0j, 1 + 5j), (1 + 2j, 1 + 2j), (complex(1, nan), 0j), (0j, complex(1, nan)),
             (complex(2, nan), complex(2, 1)), (-1 - 1j, -1 + 1j)]
    for name in ("greater", "greater_equal", "less", "less_equal"):
        ns = {"np": np}
        exec(f"def f(a, b):\n    return np.{name}(a, b)\n", ns)
        h = host_function(ns["f"], ["complex128", "complex128"])
        for a, b in pairs:
            with np.errstate(invalid="ignore"):
                want = bool(getattr(np, name)(np.complex128(a), np.complex128(b)))
            assert h(a, b) == want, (name, a, b)
    ns = {"np": np}
    exec("def p(a, b):\n    return np.power(a, b)\n", ns)
    h = host_function(ns["p"], ["complex128", "complex128"])
    for a, b in zip(random_complex(rng(), 50, 0.1, 2), random_complex(rng(), 50, -2, 2)):
        assert close(h(a, b), complex(np.power(np.complex128(a), np.complex128(b))), 1e-12)


# ---------------------------------------------------------------------------
# complex ** and pow()
# ---------------------------------------------------------------------------

def c_pow(a, b):
    return a ** b


def c_pow_int(a, n):
    return a ** n


def c_square(a):
    return a ** 2


@pytest.mark.parametrize("ctype,tol", [("complex128", 1e-13), ("complex64", 3e-6)])
def test_complex_pow_values(ctype, tol):
    r = rng()
    dt = np.complex64 if ctype == "complex64" else np.complex128
    h = host_function(c_pow, [ctype, ctype])
    hi = host_function(c_pow_int, [ctype, "int64"])
    hs = host_function(c_square, [ctype])
    for a, b in zip(random_complex(r, 200), random_complex(r, 200, -2, 2)):
        a, b = complex(dt(a)), complex(dt(b))
        # against |a ** b|: a part much smaller than the other carries the
        # error of the whole in float32 (numpy's complex64 gives the same)
        got, want = h(a, b), a ** b
        assert abs(got - want) <= tol * 10 * max(1.0, abs(want)) or close(got, want, tol * 10), (a, b)
        n = int(r.integers(-4, 5))
        assert close(hi(a, n), a ** n, 1e-12), (a, n)      # computed in complex128 (numba)
        assert close(hs(a), a * a, 1e-12)
    # numba-cuda's special cases: b == 0 -> 1; a.real == 0 and b.real == 0 -> 0
    assert h(0j, 0j) == 1 + 0j and h(3 + 4j, 0j) == 1 + 0j
    assert h(0j, 2j) == 0j


def pow_builtin(a, b):
    return pow(a, b)


def test_pow_builtin_values():
    r = rng()
    hi = host_function(pow_builtin, ["int64", "int64"])
    hf = host_function(pow_builtin, ["float64", "int64"])
    for a, b in zip(r.integers(-9, 9, 50), r.integers(0, 12, 50)):
        assert hi(int(a), int(b)) == int(a) ** int(b)
        assert math.isclose(hf(float(a) + 0.5, int(b)), (float(a) + 0.5) ** int(b), rel_tol=1e-14)


# ---------------------------------------------------------------------------
# round()
# ---------------------------------------------------------------------------

def round1(x):
    return round(x)


def round2(x, n):
    return round(x, n)


@pytest.mark.parametrize("ftype", ["float32", "float64"])
def test_round_is_half_to_even(ftype):
    h = host_function(round1, [ftype])
    for x in (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.4999, 7.5000001, -7.6, 1e15 + 0.5):
        x = float(np.float32(x)) if ftype == "float32" else x
        assert h(x) == round(x), x
    r = rng()
    for x in r.uniform(-1e6, 1e6, 200):
        x = float(np.float32(x)) if ftype == "float32" else float(x)
        assert h(x) == round(x)


def test_round_ndigits_values():
    r = rng()
    h = host_function(round2, ["float64", "int64"])
    hf = host_function(round2, ["float32", "int64"])
    for x in r.uniform(-50, 50, 500):
        x = float(x)
        for n in (0, 1, 2, 3, -1, -2):
            assert h(x, n) == np.round(x, n) or math.isclose(h(x, n), round(x, n), rel_tol=1e-15)
        xf = float(np.float32(x))
        assert hf(xf, 2) == float(np.float32(round(xf, 2))) or \
            math.isclose(hf(xf, 2), round(xf, 2), rel_tol=1e-6)
    # halfway cases go to even, as CPython's fallback double_round
    assert h(0.125, 2) == 0.12 and h(0.375, 2) == 0.38 and h(2.5, 0) == 2.0 and h(25.0, -1) == 20.0
    for special in (math.inf, -math.inf):
        assert h(special, 3) == special
    assert math.isnan(h(math.nan, 2))
    assert h(1e300, 30) == 1e300          # x * 10**n overflows: x unchanged
    assert h(1234.5, 400) == 1234.5


def test_round_ptx(tmp_path):
    def k(x, n, out, idx):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = round(x[i], n)
            idx[i] = round(x[i])
    ptx = cuda.compile_ptx(k, "void(float32[::1], int64, float32[::1], int64[::1])", cc=(9, 0))[0]
    assert "cvt.rni.s64.f64" in ptx or "__nv_llrint" in ptx
    assemble(ptx, tmp_path)


# ---------------------------------------------------------------------------
# tuple comparisons
# ---------------------------------------------------------------------------

def t_lt(a, b, c):
    return (a, 1.5, c) < (b, 2, 3)


def t_ops(a, b, c, d):
    x = (a, b)
    y = (c, d)
    return ((x < y) * 1 + (x <= y) * 2 + (x > y) * 4 + (x >= y) * 8 + (x == y) * 16 + (x != y) * 32)


def t_lengths(a, b):
    return ((a, b) < (a, b, 0)) * 1 + ((a,) == (a, b)) * 2 + ((a, b, 1) > (a, b)) * 4 + \
        ((a, b) != (a,)) * 8 + ((a, (b, 1)) < (a, (b, 2))) * 16


def test_tuple_compare_values():
    r = rng()
    h = host_function(t_lt, ["int64", "int64", "float64"])
    for a, b, c in zip(r.integers(0, 3, 100), r.integers(0, 3, 100), r.integers(1, 5, 100)):
        assert h(int(a), int(b), float(c)) == t_lt(int(a), int(b), float(c))
    for types, gen in ((["int64", "int64", "int64", "int64"], lambda: r.integers(0, 3, 4).tolist()),
                       (["float64", "int32", "int64", "float32"], lambda: [float(v) for v in r.integers(0, 3, 4)]),
                       (["uint64", "int64", "float64", "int8"], lambda: r.integers(0, 3, 4).tolist())):
        h = host_function(t_ops, types)
        for _ in range(60):
            v = gen()
            assert h(*v) == t_ops(*v), (types, v)
    h = host_function(t_lengths, ["int64", "float64"])
    for a, b in zip(r.integers(-3, 3, 30), r.uniform(-3, 3, 30)):
        assert h(int(a), float(b)) == t_lengths(int(a), float(b))


def test_tuple_compare_typed_ir_is_branch_free():
    ir = _core.infer_ir(t_lt, ["int64", "int64", "float64"])
    assert "select" in ir and ir.count("ne ") == 3


def test_tuple_compare_errors():
    def k(a, b):
        return (a, 1) < (b, 2)
    with pytest.raises(CompileError, match="do not compare") as e:
        ret_of(k, "(complex128, complex128)")
    assert e.value.line == k.__code__.co_firstlineno + 1


def test_tuple_compare_type_matches_numba(numba_cuda):
    assert ret_of(t_ops, "(int64, float32, int32, int64)") == \
        str(numba_cuda.compile_ptx(t_ops, "(int64, float32, int32, int64)", cc=(9, 0), device=True)[1])


# ---------------------------------------------------------------------------
# Optional locals (None on one path, a number on another)
# ---------------------------------------------------------------------------

def opt_flag(x):
    v = None
    if x > 0:
        v = x
    return 1 if v is not None else 0


def opt_loop(x, n):
    v = None
    for i in range(n):
        if x > i:
            v = x * i
    if v is None:
        return -1.0
    return v + 1


def opt_truth(x):
    v = None
    if x > 0:
        v = x
    if v:
        return 1
    return 0


def opt_return(x):
    if x > 0:
        return x
    return None


def test_optional_local_types_and_ir():
    ir = _core.infer_ir(opt_flag, ["float64"])
    assert "optional(f64)" in ir
    assert ret_of(opt_return, "(float32,)") == "OptionalType(float32)"


def test_optional_types_match_numba(numba_cuda):
    for fn, sig in ((opt_return, "(float32,)"), (opt_return, "(int32,)"), (opt_flag, "(float64,)")):
        assert ret_of(fn, sig) == str(numba_cuda.compile_ptx(fn, sig, cc=(9, 0), device=True)[1])


def test_optional_values():
    r = rng()
    h = host_function(opt_flag, ["float64"])
    for x in list(r.uniform(-3, 3, 50)) + [0.0]:
        assert h(float(x)) == opt_flag(float(x))
    h = host_function(opt_loop, ["float64", "int64"])
    for x, n in zip(r.uniform(-2, 6, 50), r.integers(0, 6, 50)):
        assert h(float(x), int(n)) == opt_loop(float(x), int(n))
    h = host_function(opt_truth, ["int64"])
    for x in (-2, 0, 3):
        assert h(x) == opt_truth(x)


def test_optional_misuse_is_a_compile_error():
    def index(x):
        v = None
        if x > 0:
            v = x
        return v[0]

    def array_or_none(a, x):
        v = None
        if x > 0:
            v = a
        return v

    with pytest.raises(CompileError, match="not subscriptable") as e:
        ret_of(index, "(float64,)")
    assert e.value.line == index.__code__.co_firstlineno + 4
    with pytest.raises(CompileError, match="none on one path"):
        ret_of(array_or_none, "(float64[::1], float64)")


def opt_used_as_number(x):
    v = None
    if x > 0:
        v = x
    return v * 2.0      # numba: TypeError when v is None


def test_optional_used_as_a_number_is_checked(tmp_path):
    # numba checks for None at run time (TypeError); a kernel prints the
    # error with the place and traps (tests/gpu/test_kernels_gpu.py runs it).
    ir = _core.infer_ir(opt_used_as_number, ["float64"])
    assert "intrinsic none_check(" in ir
    ptx = cuda.compile_ptx(opt_used_as_number, "(float64)", cc=(9, 0), device=True)[0]
    strings = [bytes(int(b) for b in line.split("{")[1].split("}")[0].split(",")).decode(errors="ignore")
               for line in ptx.splitlines() if ".b8" in line and "{" in line]
    assert any("TypeError: expected float64, got None in 'opt_used_as_number' at" in t for t in strings)
    assert "trap;" in ptx
    # the present path computes as before
    h = host_function(opt_used_as_number, ["float64"])
    assert h(1.5) == 3.0
    # a flag known at compile time needs no check
    assert "none_check" not in _core.infer_ir(opt_flag, ["float64"])


def optional_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = None
        if x[i] > 0:
            v = x[i]
        out[i] = 1 if v is not None else 0


def test_optional_kernel_ptxas(tmp_path):
    assemble(cuda.compile_ptx(optional_kernel, "void(float64[::1], int64[::1])", cc=(9, 0))[0], tmp_path)


# ---------------------------------------------------------------------------
# global numpy arrays and cuda.const.array_like (constant memory)
# ---------------------------------------------------------------------------

COEFFS = np.array([0.5, -1.25, 2.0, 0.125], dtype=np.float64)
TABLE = (np.arange(12, dtype=np.int32) * 7 % 12).reshape(3, 4)
FLAGS = np.array([True, False, True])
ZC = np.array([1 + 2j, -0.5j], dtype=np.complex64)


def const_kernel(x, out):
    c = cuda.const.array_like(COEFFS)
    t = cuda.const.array_like(TABLE)
    i = cuda.grid(1)
    if i < x.size:
        s = 0.0
        for k in range(c.size):
            s = s * x[i] + c[k]
        out[i] = s + t[i % 3, i % 4] + FLAGS[i % 3] + ZC[i % 2].imag + TABLE.shape[1]


def test_global_arrays_are_constant_arrays():
    ir = _core.infer_ir(const_kernel, ["float64[::1]", "float64[::1]"])
    assert "array(f64, 1d, C, const, readonly) = const array(f64, (4,)" in ir
    assert "array(i32, 2d, C, const, readonly)" in ir and "array(b1, (3,), \"010001\")" in ir
    # the frozen bytes are the array's, C order (so the disk cache key covers them)
    assert COEFFS.tobytes().hex() in ir and TABLE.tobytes().hex() in ir


def test_const_array_ptx_reads_constant_memory(tmp_path):
    ptx = cuda.compile_ptx(const_kernel, "void(float64[::1], float64[::1])", cc=(9, 0))[0]
    # COEFFS and TABLE stay in constant memory (NVVM may fold loads of the small ones)
    assert ptx.count(".const .align 16 .b8 __cj_const_") >= 2
    assert "ld.const" in ptx
    assemble(ptx, tmp_path)


def test_const_array_values_are_frozen_at_compile_time():
    global COEFFS
    saved = COEFFS
    try:
        k = cuda.jit("void(float64[::1], float64[::1])")(const_kernel)
        before = k.inspect_ir()
        COEFFS = np.array([9.0, 9.0], dtype=np.float64)
        k2 = cuda.jit("void(float64[::1], float64[::1])")(const_kernel)
        after = k2.inspect_ir()
    finally:
        COEFFS = saved
    assert before != after and np.array([9.0, 9.0]).tobytes().hex() in str(after)


def test_array_constant_round_trips():
    text = ("func c() -> array(f64, 2d, C, const, readonly)\nbb0:\n"
            "  v0:array(f64, 2d, C, const, readonly) = const array(f64, (1, 2), \"000000000000f03f0000000000000040\")\n"
            "  ret v0\n")
    assert _core.parse_print_ir(text) == text
    assert _core.verify_ir(text, True) == ""


def test_const_array_errors():
    def store(x):
        COEFFS[0] = x

    def not_global(a, out):
        c = cuda.const.array_like(a)
        out[0] = c[0]

    obj = np.array([object()])

    def object_array(out):
        out[0] = obj[0]

    with pytest.raises(CompileError, match="readonly") as e:
        cuda.compile_ptx(store, "void(float64)", cc=(9, 0))
    assert e.value.line == store.__code__.co_firstlineno + 1
    with pytest.raises(CompileError, match="needs a global numpy array"):
        cuda.compile_ptx(not_global, "void(float64[::1], float64[::1])", cc=(9, 0))
    with pytest.raises(CompileError, match="dtype object"):
        cuda.compile_ptx(object_array, "void(float64[::1])", cc=(9, 0))


BIG = np.zeros(70000, dtype=np.uint8)


def test_const_array_over_64k_is_a_compile_error():
    def k(out):
        out[0] = BIG[3]
    with pytest.raises(CompileError, match="constant memory"):
        cuda.compile_ptx(k, "void(uint8[::1])", cc=(9, 0))


# ---------------------------------------------------------------------------
# PTX acceptance of everything above in kernels
# ---------------------------------------------------------------------------

def cmath_kernel(z, w, out, mag, n):
    i = cuda.grid(1)
    if i < z.size:
        a = z[i]
        out[0, i] = cmath.exp(a) + cmath.log(a) + cmath.sqrt(a) + cmath.log10(a)
        out[1, i] = cmath.sin(a) + cmath.cos(a) + cmath.tan(a) + cmath.log(a, w[i])
        out[2, i] = cmath.sinh(a) + cmath.cosh(a) + cmath.tanh(a) + cmath.rect(a.real, a.imag)
        out[3, i] = a ** w[i] + a ** n + pow(a, 2)
        r, p = cmath.polar(a)
        mag[i] = r + cmath.phase(a) + p + (cmath.isnan(a) or cmath.isinf(a)) + cmath.isfinite(a)


@pytest.mark.parametrize("ctype,ftype", [("complex128", "float64"), ("complex64", "float32")])
def test_cmath_kernel_ptxas(ctype, ftype, tmp_path):
    sig = f"void({ctype}[::1], {ctype}[::1], {ctype}[:, ::1], {ftype}[::1], int64)"
    ptx = cuda.compile_ptx(cmath_kernel, sig, cc=(9, 0))[0]
    assemble(ptx, tmp_path)
    fast = cuda.compile_ptx(cmath_kernel, sig, cc=(9, 0), fastmath=True)[0]
    assemble(fast, tmp_path)


# ---------------------------------------------------------------------------
# launch path (mock driver): None arguments, complex CuPy / PyTorch arrays
# ---------------------------------------------------------------------------

NONE_KERNEL = """
@cuda.jit
def scale(a, out):
    i = cuda.grid(1)
    if i >= a.size:
        return
    if out is None:
        a[i] = a[i] * 2
    else:
        out[i] = a[i] * 2

def play_inplace(params):          # scale(a, None): a's view only (None has no parameter)
    a, k = array_param(params, 0, 1, np.float32)
    a *= 2
def play_out(params):
    a, k = array_param(params, 0, 1, np.float32)
    out, k = array_param(params, k, 1, np.float32)
    out[...] = a * 2
"""


def test_none_argument_launch(run_python, mock_driver):
    from test_launch import mock_run
    out = mock_run(run_python, mock_driver, NONE_KERNEL, """
        rng = np.random.default_rng()
        h = rng.uniform(-3, 3, 64).astype(np.float32)
        d, o = cuda.to_device(h), cuda.device_array(64, np.float32)
        install(play_out)
        scale[1, 64](d, o)
        assert np.allclose(o.copy_to_host(), h * 2)
        install(play_inplace)
        scale[1, 64](d, None)
        assert np.allclose(d.copy_to_host(), h * 2)
        sigs = sorted(scale.signatures)
        assert sigs == [("float32[::1]", "float32[::1]"), ("float32[::1]", "none")], sigs
        scale[1, 64](d, None)                       # cached: no third overload
        assert len(scale.signatures) == 2
        print("OK")
    """)
    assert out.strip() == "OK"


def test_none_in_explicit_signature_launch(run_python, mock_driver):
    from test_launch import mock_run
    out = mock_run(run_python, mock_driver, """
        @cuda.jit("void(float64[::1], none)")
        def k(a, s):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] + 1.0 if s is None else a[i] * s
        def play(params):
            a, _ = array_param(params, 0, 1, np.float64)
            a += 1.0
        install(play)
        h = np.random.default_rng().random(32)
        d = cuda.to_device(h)
        k[1, 32](d, None)
        assert np.allclose(d.copy_to_host(), h + 1.0)
        try:
            k[1, 32](d, 2.0)
        except TypeError as e:
            print("refused", "none" in str(e))
        print("OK")
    """)
    assert out.split() == ["refused", "True", "OK"], out


COMPLEX_KERNEL = """
@cuda.jit
def cscale(x, y, s):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = x[i] * s

seen = []
def make_play(dtype):
    def play(params):
        x, k = array_param(params, 0, 1, dtype)
        y, k = array_param(params, k, 1, dtype)
        s = complex(*struct.unpack("dd", ctypes.string_at(params[k], 16)))
        seen.append((x.shape, x.strides))
        y[...] = x * s
    return play
"""


def test_complex_cupy_and_torch_arrays(run_python, mock_driver):
    from test_launch import FAKES, mock_run
    out = mock_run(run_python, mock_driver, FAKES, COMPLEX_KERNEL, """
        rng = np.random.default_rng()
        for dt in (np.complex64, np.complex128):
            h = (rng.random(16) + 1j * rng.random(16)).astype(dt)
            dx, dy = cuda.to_device(h), cuda.device_array(16, dt)
            install(make_play(dt))
            s = complex(rng.random(), rng.random())
            cscale[1, 32](ndarray(dx), ndarray(dy), s)              # CuPy-like
            assert np.allclose(dy.copy_to_host(), h * s, rtol=1e-6)
            tname = "complex64" if dt == np.complex64 else "complex128"
            cscale[1, 32](Tensor(dx, dt=dtype(tname)), Tensor(dy, dt=dtype(tname)), s)   # PyTorch-like
            assert np.allclose(dy.copy_to_host(), h * s, rtol=1e-6)
            cscale[1, 32](dx[::2], dy[:8], s)                       # strided cudajit array
            assert seen[-1] == ((8,), (2 * np.dtype(dt).itemsize,))
        print(sorted(cscale.signatures))
        print("OK")
    """)
    assert "complex64[::1]" in out and "complex128[::1]" in out and out.strip().endswith("OK")


def test_numba_tuple_spelling_in_signatures():
    for sig, want in (("(Tuple((int64, float64)), float32)", ("Tuple(int64, float64)", "float32")),
                      ("(Tuple((int64,)))", ("UniTuple(int64, 1)",)),
                      ("(Tuple(int64, float32))", ("Tuple(int64, float32)",))):
        assert _core.signature_types(sig)[1] == want

    def k(t, out):
        out[0] = t[0] + t[1]
    ptx = cuda.compile_ptx(k, "void(Tuple((int64, float64)), float64[::1])", cc=(9, 0))[0]
    assert ".entry" in ptx


def test_array_dtype_type_converts_to_the_item_type():
    # numba's arr.dtype.type(x) (nvmath's examples: alpha = c.dtype.type(alpha))
    def k(out, x):
        out[0] = out.dtype.type(x) * 2

    ptx = cuda.compile_ptx(k, "void(float16[::1], float64)", cc=(9, 0))[0]
    assert "cvt.rn.f16.f64" in ptx
