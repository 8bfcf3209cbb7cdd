"""The math module (and cmath, builtins abs/min/max/round) on float32 and
float64, as numba.cuda types them: math.f(float32) -> float32 (the libdevice
*f function), math.f(float64) -> float64; predicates -> bool; int-valued
floor/ceil/trunc -> int64 stored into an int64 array.
"""
import cmath
import math

import numpy as np

from ._registry import build, case, cuda, n_of, one_d, poison, rand, sn  # noqa: F401

TOPIC = "math"
G = globals()

UNARY_SRC = '''
def {name}(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = {expr}
'''

BINARY_SRC = '''
def {name}(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = {expr}
'''

V = np.vectorize


def _ref1(fn, out_dt):
    def ref(a, out):
        out[...] = np.asarray(fn(a.astype(np.float64))).astype(out_dt)
    return ref


def _ref2(fn, out_dt):
    def ref(a, b, out):
        out[...] = np.asarray(fn(a.astype(np.float64), b.astype(np.float64))).astype(out_dt)
    return ref


TOL = {"float32": (2e-6, 1e-6), "float64": (1e-14, 1e-15)}

# name: (expression on a[i] / b[i], numpy reference, domain lo, hi, tolerance scale, out kind)
UNARY = {
    "sin": ("math.sin(a[i])", np.sin, -6, 6, 4, "f"),
    "cos": ("math.cos(a[i])", np.cos, -6, 6, 4, "f"),
    "tan": ("math.tan(a[i])", np.tan, -1.4, 1.4, 8, "f"),
    "asin": ("math.asin(a[i])", np.arcsin, -0.99, 0.99, 4, "f"),
    "acos": ("math.acos(a[i])", np.arccos, -0.99, 0.99, 4, "f"),
    "atan": ("math.atan(a[i])", np.arctan, -20, 20, 4, "f"),
    "sinh": ("math.sinh(a[i])", np.sinh, -5, 5, 4, "f"),
    "cosh": ("math.cosh(a[i])", np.cosh, -5, 5, 4, "f"),
    "tanh": ("math.tanh(a[i])", np.tanh, -5, 5, 4, "f"),
    "asinh": ("math.asinh(a[i])", np.arcsinh, -20, 20, 4, "f"),
    "acosh": ("math.acosh(a[i])", np.arccosh, 1.01, 20, 4, "f"),
    "atanh": ("math.atanh(a[i])", np.arctanh, -0.95, 0.95, 4, "f"),
    "exp": ("math.exp(a[i])", np.exp, -10, 10, 4, "f"),
    "expm1": ("math.expm1(a[i])", np.expm1, -2, 2, 4, "f"),
    "log": ("math.log(a[i])", np.log, 0.01, 100, 4, "f"),
    "log1p": ("math.log1p(a[i])", np.log1p, -0.9, 10, 4, "f"),
    "log2": ("math.log2(a[i])", np.log2, 0.01, 100, 4, "f"),
    "log10": ("math.log10(a[i])", np.log10, 0.01, 100, 4, "f"),
    "sqrt": ("math.sqrt(a[i])", np.sqrt, 0, 100, 2, "f"),
    "erf": ("math.erf(a[i])", V(math.erf), -3, 3, 4, "f"),
    "erfc": ("math.erfc(a[i])", V(math.erfc), -2, 3, 8, "f"),
    "gamma": ("math.gamma(a[i])", V(math.gamma), 0.1, 8, 16, "f"),
    "lgamma": ("math.lgamma(a[i])", V(math.lgamma), 0.1, 20, 16, "f"),
    "fabs": ("math.fabs(a[i])", np.abs, -9, 9, 0, "f"),
    "floor": ("math.floor(a[i])", np.floor, -50, 50, 0, "i"),
    "ceil": ("math.ceil(a[i])", np.ceil, -50, 50, 0, "i"),
    "trunc": ("math.trunc(a[i])", np.trunc, -50, 50, 0, "i"),
    "degrees": ("math.degrees(a[i])", np.degrees, -6, 6, 2, "f"),
    "radians": ("math.radians(a[i])", np.radians, -360, 360, 2, "f"),
    "abs": ("abs(a[i])", np.abs, -9, 9, 0, "f"),
    "round": ("round(a[i])", np.round, -50, 50, 0, "i"),
}

BINARY = {
    "pow": ("math.pow(a[i], b[i])", np.power, (0.1, 4), (-3, 3), 8, "f"),
    "hypot": ("math.hypot(a[i], b[i])", np.hypot, (-9, 9), (-9, 9), 4, "f"),
    "atan2": ("math.atan2(a[i], b[i])", np.arctan2, (-9, 9), (-9, 9), 4, "f"),
    "copysign": ("math.copysign(a[i], b[i])", np.copysign, (-9, 9), (-9, 9), 0, "f"),
    "fmod": ("math.fmod(a[i], b[i])", np.fmod, (-50, 50), (0.5, 7), 4, "f"),
    "min": ("min(a[i], b[i])", np.minimum, (-9, 9), (-9, 9), 0, "f"),
    "max": ("max(a[i], b[i])", np.maximum, (-9, 9), (-9, 9), 0, "f"),
    "max3": ("max(a[i], b[i], a[i] * b[i])", lambda x, y: np.maximum(np.maximum(x, y), x * y),
             (-3, 3), (-3, 3), 1, "f"),
}

for dt in ("float32", "float64"):
    rtol, atol = TOL[dt]
    for fname, (expr, fn, lo, hi, scale, kind) in UNARY.items():
        out_dt = dt if kind == "f" else "int64"
        name = f"math_{fname}_{dt}"
        k = build(UNARY_SRC.format(name=name, expr=expr), name, G)
        case(name, f"void({dt}[::1], {out_dt}[::1])",
             (lambda dt, lo, hi, out_dt: lambda r: [rand(r, n := n_of(r), dt, lo, hi), poison(n, out_dt)])(
                 dt, lo, hi, out_dt),
             one_d(256, arg=1),
             _ref1((lambda fn, dt: lambda x: fn(x.astype(dt)).astype(np.float64) if dt == "float32" and
                    fn in (np.abs, np.floor, np.ceil, np.trunc, np.round) else fn(x))(fn, dt), out_dt),
             [1], kernel=k, rtol=rtol * max(scale, 1), atol=atol * max(scale, 1), topic=TOPIC,
             covers=(expr.split("(")[0], dt))
    for fname, (expr, fn, (lo, hi), (lo2, hi2), scale, kind) in BINARY.items():
        name = f"math_{fname}_{dt}"
        k = build(BINARY_SRC.format(name=name, expr=expr), name, G)
        case(name, f"void({dt}[::1], {dt}[::1], {dt}[::1])",
             (lambda dt, lo, hi, lo2, hi2: lambda r: [rand(r, n := n_of(r), dt, lo, hi),
                                                      rand(r, n, dt, lo2, hi2), poison(n, dt)])(
                 dt, lo, hi, lo2, hi2),
             one_d(256, arg=2), _ref2(fn, dt), [2], kernel=k, rtol=rtol * max(scale, 1),
             atol=atol * max(scale, 1), topic=TOPIC, covers=(expr.split("(")[0], dt))


# ---- predicates, tuple-returning and int-argument functions ----------------------------


def math_predicates(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = math.isnan(x)
        out[1, i] = math.isinf(x)
        out[2, i] = math.isfinite(x)


def _with_specials(r, n, dt):
    v = rand(r, n, dt, -5, 5)
    idx = r.choice(n, size=n // 4, replace=False)
    v[idx[0::3]] = np.nan
    v[idx[1::3]] = np.inf
    v[idx[2::3]] = -np.inf
    return v


def _pred_ref(a, out):
    out[0] = np.isnan(a)
    out[1] = np.isinf(a)
    out[2] = np.isfinite(a)


for dt in ("float32", "float64"):
    case(f"math_predicates_{dt}", f"void({dt}[::1], boolean[:, ::1])",
         (lambda dt: lambda r: [_with_specials(r, n := n_of(r), dt), np.zeros((3, n), np.bool_) | (r.random((3, n)) < .5)])(dt),
         one_d(256, arg=0), _pred_ref, [1], kernel=math_predicates, topic=TOPIC,
         covers=("math.isnan", "math.isinf", "math.isfinite", dt))


def math_modf_frexp_ldexp(a, frac, whole, mant, expo, back):
    i = cuda.grid(1)
    if i < a.size:
        f, w = math.modf(a[i])
        frac[i] = f
        whole[i] = w
        m, e = math.frexp(a[i])
        mant[i] = m
        expo[i] = e
        back[i] = math.ldexp(m, e + 1)


def _modf_ref(a, frac, whole, mant, expo, back):
    frac[...], whole[...] = np.modf(a)
    m, e = np.frexp(a)
    mant[...] = m
    expo[...] = e
    back[...] = np.ldexp(m, e + 1)


case("math_modf_frexp_ldexp_float64", "void(float64[::1], float64[::1], float64[::1], float64[::1], int32[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64, -1e3, 1e3), poison(n, np.float64), poison(n, np.float64),
                poison(n, np.float64), poison(n, np.int32), poison(n, np.float64)],
     one_d(256, arg=0), _modf_ref, [1, 2, 3, 4, 5], kernel=math_modf_frexp_ldexp, rtol=0, atol=0,
     topic=TOPIC, covers=("math.modf -> tuple", "math.frexp -> (float, int)", "math.ldexp"))


def math_int_args(n, out):
    i = cuda.grid(1)
    if i < n.size:
        k = n[i]
        out[0, i] = math.sqrt(k)
        out[1, i] = math.exp(k / 16)
        out[2, i] = math.log(abs(k) + 1)
        out[3, i] = math.pow(2, k / 8)


def _int_args_ref(n, out):
    k = n.astype(np.float64)
    out[0] = np.sqrt(k)
    out[1] = np.exp(k / 16)
    out[2] = np.log(np.abs(k) + 1)
    out[3] = 2.0 ** (k / 8)


case("math_int_arguments", "void(int64[::1], float64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.int64, 1, 200), poison((4, n), np.float64)],
     one_d(256, arg=0), _int_args_ref, [1], kernel=math_int_args, rtol=1e-14, topic=TOPIC,
     covers=("math.f(int) -> float64",))


def math_constants(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * math.pi + math.e - math.tau / 4 + (a[i] < math.inf)


case("math_constants", "void(float64[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.float64)], one_d(256, arg=0),
     lambda a, out: out.__setitem__(..., a * math.pi + math.e - math.tau / 4 + 1), [1],
     kernel=math_constants, rtol=1e-15, atol=1e-15, topic=TOPIC,
     covers=("math.pi", "math.e", "math.tau", "math.inf"))


def builtin_minmax_int(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = min(a[i], b[i])
        out[1, i] = max(a[i], b[i], 7)
        out[2, i] = abs(a[i] - b[i])


def _minmax_int_ref(a, b, out):
    out[0] = np.minimum(a, b)
    out[1] = np.maximum(np.maximum(a, b), 7)
    out[2] = np.abs(a.astype(np.int64) - b)


case("builtin_min_max_abs_int32", "void(int32[::1], int32[::1], int64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.int32, -50, 50), rand(r, n, np.int32, -50, 50), poison((3, n), np.int64)],
     one_d(256, arg=0), _minmax_int_ref, [2], kernel=builtin_minmax_int, topic=TOPIC,
     covers=("min/max/abs on ints", "max of 3 args"))


def round_ndigits(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = round(a[i], 2)


case("builtin_round_ndigits_float64", "void(float64[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64, -50, 50), poison(n, np.float64)], one_d(256, arg=0),
     lambda a, out: out.__setitem__(..., np.round(a, 2)), [1], kernel=round_ndigits, rtol=1e-15,
     topic=TOPIC, covers=("round(x, ndigits)",))


def cmath_basics(z, out, mag):
    i = cuda.grid(1)
    if i < z.size:
        w = z[i]
        out[0, i] = cmath.exp(w)
        out[1, i] = cmath.sqrt(w)
        out[2, i] = cmath.log(w)
        out[3, i] = w.conjugate() * w.real + w.imag
        mag[0, i] = abs(w)
        mag[1, i] = cmath.phase(w)


def _cmath_ref(z, out, mag):
    out[0] = np.exp(z)
    out[1] = np.sqrt(z)
    out[2] = np.log(z)
    out[3] = np.conj(z) * z.real + z.imag
    mag[0] = np.abs(z)
    mag[1] = np.angle(z)


for cdt, fdt, tol in (("complex128", "float64", 1e-13), ("complex64", "float32", 3e-6)):
    case(f"cmath_basics_{cdt}", f"void({cdt}[::1], {cdt}[:, ::1], {fdt}[:, ::1])",
         (lambda cdt, fdt: lambda r: [rand(r, n := n_of(r), cdt, -3, 3), poison((4, n), cdt),
                                      poison((2, n), fdt)])(cdt, fdt),
         one_d(256, arg=0), _cmath_ref, [1, 2], kernel=cmath_basics, rtol=tol, atol=tol, topic=TOPIC,
         covers=("cmath.exp/sqrt/log/phase", "abs(complex)", ".real .imag .conjugate()", cdt))


def complex_arith(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x - y * 2
        out[2, i] = x * y
        out[3, i] = x / y
        out[4, i] = complex(x.real, -y.imag) + 1j
        out[5, i] = x ** 2


def _complex_ref(a, b, out):
    out[0] = a + b
    out[1] = a - b * 2
    out[2] = a * b
    out[3] = a / b
    out[4] = (a.real - 1j * b.imag + 1j).astype(a.dtype)
    out[5] = a * a


for cdt, tol in (("complex128", 1e-14), ("complex64", 2e-6)):
    case(f"complex_arith_{cdt}", f"void({cdt}[::1], {cdt}[::1], {cdt}[:, ::1])",
         (lambda cdt: lambda r: [rand(r, n := n_of(r), cdt), rand(r, n, cdt, 0.5, 3), poison((6, n), cdt)])(cdt),
         one_d(256, arg=0), _complex_ref, [2], kernel=complex_arith, rtol=tol, atol=tol, topic=TOPIC,
         covers=("complex + - * / **", "complex()", "1j literal", cdt))


# ---- numpy functions on scalars (the ufuncs numba-cuda lowers in kernels) --------------------
# np.f(x) on a float32 stays float32, on a float64 float64 (numpy's loops, as
# numba types them); numpy's integer loops keep the integer width
# (np.maximum(int32, int32) -> int32, unlike the builtin max).

NP_UNARY = {
    "sin": (-6, 6, 4), "cos": (-6, 6, 4), "tan": (-1.4, 1.4, 8), "arcsin": (-0.99, 0.99, 4),
    "arccos": (-0.99, 0.99, 4), "arctan": (-20, 20, 4), "sinh": (-5, 5, 4), "cosh": (-5, 5, 4),
    "tanh": (-5, 5, 4), "arcsinh": (-20, 20, 4), "arccosh": (1.01, 20, 4), "arctanh": (-0.95, 0.95, 4),
    "deg2rad": (-360, 360, 2), "rad2deg": (-6, 6, 2), "degrees": (-6, 6, 2), "radians": (-360, 360, 2),
    "log": (0.01, 100, 4), "log2": (0.01, 100, 4), "log10": (0.01, 100, 4),
}
NP_BINARY = {
    "arctan2": ((-9, 9), (-9, 9), 4), "hypot": ((-9, 9), (-9, 9), 4), "divide": ((-9, 9), (0.5, 9), 2),
}

for dt in ("float32", "float64"):
    rtol, atol = TOL[dt]
    for fname, (lo, hi, scale) in NP_UNARY.items():
        name = f"np_{fname}_{dt}"
        expr = f"np.{fname}(a[i])"
        k = build(UNARY_SRC.format(name=name, expr=expr), name, G)
        case(name, f"void({dt}[::1], {dt}[::1])",
             (lambda dt, lo, hi: lambda r: [rand(r, n := n_of(r), dt, lo, hi), poison(n, dt)])(dt, lo, hi),
             one_d(256, arg=1),
             (lambda fn: lambda a, out: out.__setitem__(..., fn(a)))(getattr(np, fname)),
             [1], kernel=k, rtol=rtol * scale, atol=atol * scale, topic=TOPIC, covers=(f"np.{fname}", dt))
    for fname, ((lo, hi), (lo2, hi2), scale) in NP_BINARY.items():
        name = f"np_{fname}_{dt}"
        expr = f"np.{fname}(a[i], b[i])"
        k = build(BINARY_SRC.format(name=name, expr=expr), name, G)
        case(name, f"void({dt}[::1], {dt}[::1], {dt}[::1])",
             (lambda dt, lo, hi, lo2, hi2: lambda r: [rand(r, n := n_of(r), dt, lo, hi),
                                                      rand(r, n, dt, lo2, hi2), poison(n, dt)])(
                 dt, lo, hi, lo2, hi2),
             one_d(256, arg=2),
             (lambda fn: lambda a, b, out: out.__setitem__(..., fn(a, b)))(getattr(np, fname)),
             [2], kernel=k, rtol=rtol * scale, atol=atol * scale, topic=TOPIC, covers=(f"np.{fname}", dt))


def np_min_max_nan(a, b, out, flags):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = np.maximum(x, y)
        out[1, i] = np.minimum(x, y)
        out[2, i] = np.fmax(x, y)
        out[3, i] = np.fmin(x, y)
        flags[0, i] = np.isnan(x)
        flags[1, i] = np.greater(x, y)
        flags[2, i] = np.less_equal(x, y)
        flags[3, i] = np.logical_and(x > 0, np.not_equal(y, 0))
        flags[4, i] = np.logical_or(np.isnan(y), np.equal(x, y))
        flags[5, i] = np.logical_xor(x > 0, y > 0)
        flags[6, i] = np.logical_not(x > 1)


def _np_min_max_ref(a, b, out, flags):
    out[0] = np.maximum(a, b)
    out[1] = np.minimum(a, b)
    out[2] = np.fmax(a, b)
    out[3] = np.fmin(a, b)
    flags[0] = np.isnan(a)
    flags[1] = np.greater(a, b)
    flags[2] = np.less_equal(a, b)
    flags[3] = np.logical_and(a > 0, b != 0)
    flags[4] = np.logical_or(np.isnan(b), a == b)
    flags[5] = np.logical_xor(a > 0, b > 0)
    flags[6] = np.logical_not(a > 1)


for dt in ("float32", "float64"):
    case(f"np_min_max_predicates_{dt}", f"void({dt}[::1], {dt}[::1], {dt}[:, ::1], boolean[:, ::1])",
         (lambda dt: lambda r: [_with_specials(r, n := n_of(r), dt), _with_specials(r, n, dt),
                                poison((4, n), dt), r.random((7, n)) < 0.5])(dt),
         one_d(256, arg=0), _np_min_max_ref, [2, 3], kernel=np_min_max_nan, topic=TOPIC,
         covers=("np.maximum/minimum propagate NaN", "np.fmax/fmin ignore NaN", "np.isnan",
                 "np comparison and logical ufuncs", dt))


def np_int_ufuncs(a, b, out, m):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        m[0, i] = np.maximum(x, y)          # int32 loop: an int32 result
        m[1, i] = np.minimum(x, y)
        m[2, i] = np.bitwise_and(x, y)
        m[3, i] = np.bitwise_or(x, y)
        m[4, i] = np.bitwise_xor(x, y)
        m[5, i] = np.invert(x)
        m[6, i] = np.left_shift(x, y & 7)
        m[7, i] = np.right_shift(x, y & 7)
        m[8, i] = np.conjugate(x)
        out[i] = np.divide(x, y)            # int / int: the float64 loop


def _np_int_ref(a, b, out, m):
    m[0] = np.maximum(a, b)
    m[1] = np.minimum(a, b)
    m[2] = a & b
    m[3] = a | b
    m[4] = a ^ b
    m[5] = ~a
    m[6] = np.left_shift(a, b & 7)
    m[7] = np.right_shift(a, b & 7)
    m[8] = a
    out[...] = a / b


case("np_int_ufuncs_int32", "void(int32[::1], int32[::1], float64[::1], int32[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.int32, -1000, 1000), rand(r, n, np.int32, 1, 50),
                poison(n, np.float64), poison((9, n), np.int32)],
     one_d(256, arg=0), _np_int_ref, [2, 3], kernel=np_int_ufuncs, rtol=1e-15, topic=TOPIC,
     covers=("np.maximum/minimum on int32 -> int32", "np.bitwise_*, np.invert, np shifts", "np.divide(int, int)"))


def np_constants(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = x * np.pi + np.e
        out[1, i] = np.deg2rad(x) * 180 / math.pi
        out[2, i] = np.inf if x > 0 else -np.inf
        out[3, i] = np.nan if x > 1 else x
        out[4, i] = np.sin(np.float32(x))


def _np_constants_ref(a, out):
    out[0] = a * np.pi + np.e
    out[1] = np.deg2rad(a) * 180 / np.pi
    out[2] = np.where(a > 0, np.inf, -np.inf)
    out[3] = np.where(a > 1, np.nan, a)
    out[4] = np.sin(a.astype(np.float32))


case("np_constants_float64", "void(float64[::1], float64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.float64, -3, 3), poison((5, n), np.float64)],
     one_d(256, arg=0), _np_constants_ref, [1], kernel=np_constants, rtol=2e-6, atol=2e-6, topic=TOPIC,
     covers=("np.pi", "np.e", "np.inf", "np.nan", "np.sin(np.float32(x)) -> float32"))
