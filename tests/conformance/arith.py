"""Arithmetic on every scalar type: + - * / // % **, bit ops, shifts,
comparisons, unary ops, mixed-type promotion. One operator and dtype per
kernel (a failure names exactly what is missing).

References compute in a wide type and cast to the output dtype, as the
kernel's store does (integer results are compared modulo the output width,
so they hold whatever intermediate width numba picks).
"""
import math

import numpy as np

from ._registry import build, case, cuda, fma_slack, n_of, one_d, poison, rand, sn  # noqa: F401

TOPIC = "arith"

BINARY_SRC = '''
def {name}(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        x = a[i]
        y = b[i]
        out[i] = {expr}
'''

UNARY_SRC = '''
def {name}(a, out):
    i = cuda.grid(1)
    if i < out.size:
        x = a[i]
        out[i] = {expr}
'''

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
G = globals()


def _wide(v):
    dt = v.dtype
    if dt.kind == "u" and dt.itemsize == 8:
        return v.astype(np.uint64)
    if dt.kind in "iub":
        return v.astype(np.int64)
    return v


def _ref_binary(fn, out_dt, wide=True):
    def ref(a, b, out):
        x, y = (_wide(a), _wide(b)) if wide else (a, b)
        with np.errstate(all="ignore"):
            out[...] = np.asarray(fn(x, y)).astype(out_dt)
    return ref


def _ref_unary(fn, out_dt, wide=True):
    def ref(a, out):
        x = _wide(a) if wide else a
        with np.errstate(all="ignore"):
            out[...] = np.asarray(fn(x)).astype(out_dt)
    return ref


def _binary(name, expr, dt_a, dt_b, out_dt, fn, *, lo=None, hi=None, nonzero_b=False,
            lo_b=None, hi_b=None, rtol=0.0, atol=0.0, covers=(), wide=True, slack=None):
    k = build(BINARY_SRC.format(name=name, expr=expr), name, G)
    case(name, f"void({sn(dt_a)}[::1], {sn(dt_b)}[::1], {sn(out_dt)}[::1])",
         lambda r: [rand(r, n := n_of(r), dt_a, lo, hi), rand(r, n, dt_b, lo_b if lo_b is not None else lo,
                                                           hi_b if hi_b is not None else hi, nonzero_b),
                    poison(n, out_dt)],
         one_d(256, arg=2), _ref_binary(fn, out_dt, wide), [2], kernel=k, rtol=rtol, atol=atol,
         topic=TOPIC, covers=covers or (expr, dt_a, dt_b), slack=slack)


def _unary(name, expr, dt, out_dt, fn, *, lo=None, hi=None, rtol=0.0, atol=0.0, covers=(), wide=True):
    k = build(UNARY_SRC.format(name=name, expr=expr), name, G)
    case(name, f"void({sn(dt)}[::1], {sn(out_dt)}[::1])",
         lambda r: [rand(r, n := n_of(r), dt, lo, hi), poison(n, out_dt)],
         one_d(256, arg=1), _ref_unary(fn, out_dt, wide), [1], kernel=k, rtol=rtol, atol=atol,
         topic=TOPIC, covers=covers or (expr, dt))


def _cmp_code(x, y):
    return ((x < y) * 1 + (x <= y) * 2 + (x == y) * 4 + (x != y) * 8 + (x > y) * 16 + (x >= y) * 32)


CMP_EXPR = "(x < y) * 1 + (x <= y) * 2 + (x == y) * 4 + (x != y) * 8 + (x > y) * 16 + (x >= y) * 32"

# ---- integers -----------------------------------------------------------------------

for dt in INTS:
    signed = not dt.startswith("u")
    lo = -60 if signed else 0
    hi = 60
    _binary(f"add_{dt}", "x + y", dt, dt, dt, lambda x, y: x + y, lo=lo, hi=hi)
    _binary(f"mul_{dt}", "x * y", dt, dt, dt, lambda x, y: x * y, lo=lo, hi=hi)
    _binary(f"floordiv_{dt}", "x // y", dt, dt, dt, lambda x, y: x // y, lo=lo, hi=hi, nonzero_b=True,
            lo_b=-9 if signed else 1, hi_b=9, covers=("// floors toward -inf", dt))
    _binary(f"mod_{dt}", "x % y", dt, dt, dt, lambda x, y: x % y, lo=lo, hi=hi, nonzero_b=True,
            lo_b=-9 if signed else 1, hi_b=9, covers=("% takes the divisor's sign", dt))
    _binary(f"cmp_{dt}", CMP_EXPR, dt, dt, "int64", _cmp_code, lo=lo, hi=hi // 4 if signed else 12,
            lo_b=-15 if signed else 0, hi_b=15, covers=("< <= == != > >=", dt))

for dt in ("int8", "int32", "int64", "uint8", "uint32", "uint64"):
    signed = not dt.startswith("u")
    lo = -100 if signed else 0
    _binary(f"sub_{dt}", "x - y", dt, dt, dt, lambda x, y: x - y, lo=lo, hi=100)
    _binary(f"bitops_{dt}", "(x & y) ^ ((x | y) << 1)", dt, dt, dt, lambda x, y: (x & y) ^ ((x | y) << 1),
            lo=lo, hi=100, covers=("& | ^ <<", dt))
    _binary(f"shifts_{dt}", "(x << (y & 7)) + (x >> (y & 3))", dt, dt, dt,
            lambda x, y: (x << (y & 7)) + (x >> (y & 3)), lo=lo, hi=100, lo_b=0, hi_b=64,
            covers=("<< >> by a variable amount", "arithmetic >> when signed", dt))
    _unary(f"invert_{dt}", "~x", dt, dt, lambda x: ~x, lo=lo, hi=100, covers=("~", dt))
    _binary(f"truediv_{dt}", "x / y", dt, dt, "float64", lambda x, y: x / y, lo=lo, hi=100,
            nonzero_b=True, lo_b=-9 if signed else 1, hi_b=9, rtol=1e-15, covers=("int / int -> float64", dt))
    _unary(f"pow3_{dt}", "x ** 3", dt, dt, lambda x: x ** 3, lo=-20 if signed else 0, hi=20,
           covers=("int ** int literal", dt))

for dt in ("int32", "int64"):
    _unary(f"neg_abs_{dt}", "-x + abs(x) * 3", dt, dt, lambda x: -x + np.abs(x) * 3, lo=-1000, hi=1000,
           covers=("unary -", "abs(int)", dt))
    _binary(f"pow_var_{dt}", "x ** y", dt, dt, "int64", lambda x, y: x ** y, lo=-9, hi=9, lo_b=0, hi_b=6,
            covers=("int ** int (variable exponent)", dt))

# ---- floats ---------------------------------------------------------------------------

FTOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-15}

for dt in ("float32", "float64"):
    t = FTOL[dt]
    _binary(f"add_{dt}", "x + y", dt, dt, dt, lambda x, y: x + y, rtol=t, wide=False)
    _binary(f"sub_{dt}", "x - y", dt, dt, dt, lambda x, y: x - y, rtol=t, atol=t, wide=False)
    _binary(f"mul_{dt}", "x * y", dt, dt, dt, lambda x, y: x * y, rtol=t, wide=False)
    _binary(f"truediv_{dt}", "x / y", dt, dt, dt, lambda x, y: x / y, rtol=t, wide=False, nonzero_b=True)
    _binary(f"floordiv_{dt}", "x // y", dt, dt, dt, np.floor_divide, lo=-50, hi=50, nonzero_b=True,
            wide=False, rtol=t, covers=("float // floors toward -inf", dt))
    _binary(f"mod_{dt}", "x % y", dt, dt, dt, np.remainder, lo=-50, hi=50, nonzero_b=True, wide=False,
            rtol=1e-4 if dt == "float32" else 1e-12, atol=1e-5 if dt == "float32" else 1e-12,
            covers=("float % takes the divisor's sign", dt))
    _binary(f"pow_{dt}", "abs(x) ** y", dt, dt, dt, lambda x, y: np.abs(x) ** y, lo=-3, hi=3, wide=False,
            rtol=1e-5 if dt == "float32" else 1e-13, covers=("float ** float", dt))
    _unary(f"pow_int_exp_{dt}", "x ** 2 + x ** -1 + x ** 3", dt, dt, lambda x: x ** 2 + x ** -1.0 + x ** 3,
           lo=0.5, hi=3.0, wide=False, rtol=1e-5 if dt == "float32" else 1e-13,
           covers=("float ** int literal (incl. negative)", dt))
    _unary(f"neg_{dt}", "-x + (+x) * 2", dt, dt, lambda x: -x + x * 2, wide=False, rtol=t, atol=t)
    _binary(f"cmp_{dt}", CMP_EXPR, dt, dt, "int64", _cmp_code, lo=-3, hi=3, wide=False)

_binary("add_float16", "x + y", "float16", "float16", "float16", lambda x, y: x + y, lo=-8, hi=8, wide=False,
        rtol=1e-3, covers=("float16 arithmetic",))
_binary("mul_float16", "x * y", "float16", "float16", "float16", lambda x, y: x * y, lo=-8, hi=8, wide=False,
        rtol=1e-3, covers=("float16 arithmetic",))
_binary("cmp_float16", CMP_EXPR, "float16", "float16", "int64", _cmp_code, lo=-2, hi=2, wide=False,
        covers=("float16 comparisons",))

# ---- mixed types: numba's promotion --------------------------------------------------------


def _in(dt, fn):
    return lambda x, y: fn(x.astype(dt), y.astype(dt))


def _f64(fn):
    return _in(np.float64, fn)


# (a, b, numba's type of a * b): numba's typing, not numpy's: int8/int16/uint8
# with float32 stay float32, uint16 and the wider ints go to float64 (numba's
# PTX for `x * y + x`: fma.rn.f32 after cvt.rn.f32.s16 for int16, fma.rn.f64
# after cvt.rn.f64.u32 for uint32). x * y + x is one fma under libNVVM (both
# compilers): fma_slack. uint32 from [-50, 50) wraps to ~4e9: its products
# are not exact in float64 either.
for a, b, ct in (("int32", "float32", "float64"), ("int64", "float32", "float64"),
                 ("float32", "float64", "float64"), ("int8", "float64", "float64"),
                 ("uint32", "float32", "float64"), ("int16", "float32", "float32")):
    _binary(f"promote_{a}_{b}", "x * y + x", a, b, "float64", _in(ct, lambda x, y: x * y + x), lo=-50, hi=50,
            wide=False, rtol=1e-15 if ct == "float64" else 2 * float(np.finfo(np.float32).eps),
            covers=(f"{a} op {b} -> {ct}",),
            slack=fma_slack(ct, lambda x, y, out: {2: x.astype(np.float64) * y.astype(np.float64)}))

for a, b in (("int8", "uint8"), ("int32", "uint32"), ("int16", "int64"), ("uint16", "int32")):
    _binary(f"promote_{a}_{b}", "x * y - y", a, b, "int64", lambda x, y: x * y - y,
            lo=0 if a.startswith("u") else -100, hi=100, lo_b=0 if b.startswith("u") else -100, hi_b=100,
            covers=(f"{a} op {b} -> int64",))

_binary("promote_bool_int32", "x + y * 2", "bool", "int32", "int64", lambda x, y: x + y * 2, lo=-50, hi=50,
        covers=("bool + int",))
_binary("promote_bool_float32", "x * y - x", "bool", "float32", "float32",
        lambda x, y: (x.astype(np.float32) * y - x).astype(np.float32), wide=False, rtol=1e-6,
        covers=("bool * float32 -> float32",))
