"""The kernel cases: every kernel the test suite compiles and launches.

Each case is a numba.cuda-style kernel (plain Python, `cuda` = cudajit), the
numba signature string it compiles with, a function making fresh random
inputs, a launch configuration and a numpy reference. Two test files read
this registry:

  tests/test_kernels_compile.py   (CI, no GPU) compile_ptx -> ptxas -> cubin
  tests/gpu/test_kernels_gpu.py   (GPU) launch on cudajit / numpy / CuPy /
                                  PyTorch arrays, compare with the reference

Conventions
-----------
* `make_inputs(rng)` returns the kernel arguments as numpy arrays, numpy or
  Python scalars, or `View`s (a numpy base array and the slicing/transposing
  that makes the non-contiguous view the kernel sees). Inputs are random and
  never all zeros; outputs are poisoned (NaN for floats, a sentinel for ints,
  random values for accumulators), so a kernel that writes nothing fails.
* `reference(*args)` receives numpy copies of the arguments (views into
  copied bases) and writes the expected results into the output arguments in
  place, exactly as the kernel does. The tests compare the output arguments
  listed in `outputs` (for a `View`, the whole base: writes outside the view
  are caught too).
* `sig` is the numba signature of the arguments `make_inputs` produces, e.g.
  "void(float32, float32[::1], float32[::1])"; the compile tests use it and
  `test_signature_matches_inputs` keeps it honest.
* Set CUDAJIT_CASES_WITH_NUMBA=1 to bind `cuda` to numba.cuda instead (with
  NUMBA_ENABLE_CUDASIM=1 this checks the cases and references on the CPU:
  tests/gpu/check_cases_with_numba.py).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

if os.environ.get("CUDAJIT_CASES_WITH_NUMBA"):
    from numba import cuda  # noqa: F401  (validation of the cases only)
else:
    import cudajit as cuda  # noqa: F401

# ---------------------------------------------------------------------------
# Registry types
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """A non-contiguous view of `base`: `ops` are applied in order, each
    ("slice", tuple_of_slices) or ("permute", axes). numpy, CuPy, PyTorch
    (positive steps only) and cudajit device arrays all understand both."""

    base: np.ndarray
    ops: tuple

    def apply(self, arr):
        return apply_view_ops(arr, self.ops)

    def numpy_view(self, base_copy: np.ndarray) -> np.ndarray:
        return apply_view_ops(base_copy, self.ops)

    @property
    def has_negative_step(self) -> bool:
        for kind, arg in self.ops:
            if kind == "slice" and any(s.step is not None and s.step < 0 for s in arg):
                return True
        return False


def apply_view_ops(arr, ops):
    for kind, arg in ops:
        if kind == "slice":
            arr = arr[arg]
        elif kind == "permute":
            arr = arr.permute(*arg) if hasattr(arr, "permute") else arr.transpose(arg)
        else:
            raise ValueError(kind)
    return arr


def cols(step, start=0):
    return ("slice", (slice(None), slice(start, None, step)))


def transpose2d():
    return ("permute", (1, 0))


@dataclass(frozen=True)
class Case:
    name: str
    kernel: Callable                     # plain Python function (numba.cuda dialect)
    sig: str                             # numba signature of make_inputs' arguments
    make_inputs: Callable[[np.random.Generator], list]
    launch: Any                          # (griddim, blockdim) or callable(args) -> that
    reference: Callable[..., None]       # writes expected outputs into its args
    outputs: tuple                       # indices of the output arguments
    rtol: float = 0.0
    atol: float = 0.0
    covers: tuple = ()                   # language items this case exercises (docs)
    backends: tuple = ("device", "host", "cupy", "torch")

    def config(self, args):
        return self.launch(args) if callable(self.launch) else self.launch


def uses_views(args) -> bool:
    return any(isinstance(a, View) for a in args)


CASES: list[Case] = []


def case(name, sig, inputs, launch, reference, outputs, kernel=None, *, rtol=0.0, atol=0.0,
         covers=(), backends=("device", "host", "cupy", "torch")):
    """Registers a case; used as a decorator on the kernel or with kernel=."""

    def register(fn):
        CASES.append(Case(name, fn, sig, inputs, launch, reference, tuple(outputs), rtol, atol,
                          tuple(covers), tuple(backends)))
        return fn

    return register(kernel) if kernel is not None else register


# ---------------------------------------------------------------------------
# Input helpers
# ---------------------------------------------------------------------------

TPB = 128          # threads per block of the shared-memory kernels (constant shapes)
NBINS = 64         # histogram bins
TILE = 16          # transpose tile
TILE_PAD = TILE + 1
K = 8              # local-array length


def blocks(n, tpb):
    return (n + tpb - 1) // tpb


def f32(rng, shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def f64(rng, shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, shape)


def ints(rng, shape, lo, hi, dtype=np.int64):
    return rng.integers(lo, hi, shape, endpoint=False).astype(dtype)


def nonzero_ints(rng, shape, lo, hi, dtype=np.int64):
    v = rng.integers(lo, hi, shape).astype(dtype)
    v[v == 0] = 1
    return v


def poison(shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    if dt.kind == "b":
        return np.zeros(shape, dt)   # callers that need it use random bools
    if dt.kind == "u":
        return np.full(shape, np.iinfo(dt).max - 7, dt)
    return np.full(shape, -123457, dt)


def size(rng, lo=1500, hi=5000):
    return int(rng.integers(lo, hi))


def one_d(tpb=256, extra=0, arg=None, axis=None):
    """Launch config: one thread per element of args[arg] (default: the first
    array argument), or per index along `axis`; `extra` surplus blocks."""

    def cfg(args):
        a = args[arg] if arg is not None else next(x for x in args if _is_array(x))
        a = _arr(a)
        n = a.size if axis is None else a.shape[axis]
        return (blocks(n, tpb) + extra, tpb)

    return cfg


def _is_array(a):
    return isinstance(a, (np.ndarray, View))


def _arr(a):
    return a.numpy_view(a.base) if isinstance(a, View) else a


def grid2(shape, b=(16, 16)):
    return ((blocks(shape[0], b[0]), blocks(shape[1], b[1])), b)


def grid3(shape, b=(8, 8, 4)):
    return ((blocks(shape[0], b[0]), blocks(shape[1], b[1]), blocks(shape[2], b[2])), b)


# ---------------------------------------------------------------------------
# Elementwise arithmetic
# ---------------------------------------------------------------------------


def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def _axpy_ref(a, x, y):
    if isinstance(a, (float, np.float64)) or y.dtype == np.float64:
        y[...] = (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(y.dtype)
    else:
        y[...] = a * x + y


case("axpy_f32", "void(float32, float32[::1], float32[::1])",
     lambda r: [np.float32(r.uniform(-2, 2)), f32(r, n := size(r)), f32(r, n)],
     one_d(256), _axpy_ref, [2], kernel=axpy, rtol=2e-6, atol=1e-6,
     covers=("cuda.grid(1)", ".size", "float32"))

case("axpy_f64_pyfloat_extra_blocks", "void(float64, float64[::1], float64[::1])",
     lambda r: [float(r.uniform(-2, 2)), f64(r, n := size(r)), f64(r, n)],
     one_d(128, extra=3), _axpy_ref, [2], kernel=axpy, rtol=1e-14, atol=1e-14,
     covers=("python float scalar", "float64", "guard beyond size"))

case("axpy_mixed_f64_scalar_f32_arrays", "void(float64, float32[::1], float32[::1])",
     lambda r: [float(r.uniform(-2, 2)), f32(r, n := size(r)), f32(r, n)],
     one_d(256), _axpy_ref, [2], kernel=axpy, rtol=2e-6, atol=1e-6,
     covers=("float64*float32 promotion", "store truncation to float32"))

case("axpy_strided_1d_views", "void(float32, float32[:], float32[:])",
     lambda r: [np.float32(r.uniform(-2, 2)),
                View(f32(r, 3 * (n := size(r))), (("slice", (slice(None, None, 3),)),)),
                View(f32(r, 2 * n + 1), (("slice", (slice(1, None, 2),)),))],
     lambda args: (blocks(args[1].base.size // 3, 128), 128), _axpy_ref, [2], kernel=axpy,
     rtol=2e-6, atol=1e-6, covers=("1-D non-contiguous arrays (layout A)",),
     backends=("device", "cupy", "torch"))


def arith_float(x, y, out):
    i = cuda.grid(1)
    if i < out.shape[1]:
        a = x[i]
        b = y[i]
        out[0, i] = a + b
        out[1, i] = a - b
        out[2, i] = a * b
        out[3, i] = a / b
        out[4, i] = -a
        out[5, i] = a // b
        out[6, i] = a % b
        out[7, i] = a ** 2


def _arith_float_ref(x, y, out):
    out[0] = x + y
    out[1] = x - y
    out[2] = x * y
    out[3] = x / y
    out[4] = -x
    out[5] = np.floor_divide(x, y)
    out[6] = np.remainder(x, y)
    out[7] = x.astype(np.float64) ** 2


def _signed_away_from_zero(r, n, dtype):
    v = r.uniform(0.25, 3.0, n) * r.choice([-1.0, 1.0], n)
    return v.astype(dtype)


for _dt, _name, _tol in ((np.float32, "float32", 1e-5), (np.float64, "float64", 1e-12)):
    case(f"arith_{_name}", f"void({_name}[::1], {_name}[::1], {_name}[:, ::1])",
         (lambda dt: lambda r: [(f32 if dt == np.float32 else f64)(r, n := size(r), -50, 50),
                                _signed_away_from_zero(r, n, dt), poison((8, n), dt)])(_dt),
         one_d(256, arg=0), _arith_float_ref, [2], kernel=arith_float, rtol=_tol, atol=_tol,
         covers=("+ - * / // % ** unary-", "float floordiv/mod python semantics", _name))


def float_mod_large_quotient(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = x[i] % y[i]
        out[1, i] = (-x[i]) % y[i]


def _float_mod_large_quotient_ref(x, y, out):
    out[0] = np.remainder(x, y)    # fmod-exact, as CPython's float %
    out[1] = np.remainder(-x, y)


# x / y far above 2**53: the remainder must still be exact (LLVM's frem on
# NVPTX computes x - y * trunc(x / y), wrong there).
for _dt, _name, _top in ((np.float32, "float32", 37), (np.float64, "float64", 300)):
    case(f"float_mod_large_quotient_{_name}", f"void({_name}[::1], {_name}[::1], {_name}[:, ::1])",
         (lambda dt, top: lambda r: [(10.0 ** r.uniform(8, top, n := size(r))).astype(dt),
                                     _signed_away_from_zero(r, n, dt) * dt(300), poison((2, n), dt)])(_dt, _top),
         one_d(256, arg=0), _float_mod_large_quotient_ref, [2], kernel=float_mod_large_quotient, rtol=0, atol=0,
         covers=("float % exact for huge quotients", _name))


def narrow_int_negate_invert(s, u, out_s, out_u):
    i = cuda.grid(1)
    if i < s.size:
        out_s[0, i] = -s[i]    # int64 in numba's typing, negated as int32 first
        out_s[1, i] = ~s[i]
        out_u[0, i] = -u[i]    # uint64, negated as uint32 first
        out_u[1, i] = ~u[i]


def _narrow_int_negate_invert_ref(s, u, out_s, out_u):
    # numba negates and inverts an integer in its own type, then widens it
    # (int_negate_impl: "Negate before upcasting, for unsigned numbers")
    with np.errstate(over="ignore"):
        out_s[0] = np.negative(s).astype(np.int64)
        out_s[1] = np.invert(s).astype(np.int64)
        out_u[0] = np.negative(u).astype(np.uint64)
        out_u[1] = np.invert(u).astype(np.uint64)


def _narrow_int_inputs(r):
    n = size(r)
    s = r.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    u = r.integers(0, 2**32, n, dtype=np.int64).astype(np.uint32)
    s[:3] = [-2**31, -1, 2**31 - 1]   # -(-2**31) is -2**31 in int32
    u[:3] = [1, 2**32 - 1, 2**31]
    return [s, u, poison((2, n), np.int64), poison((2, n), np.uint64)]


# Found by scripts/fuzz.py (issue 15): cudajit widened first (-np.uint32(1)
# was 2**64 - 1, -np.int32(-2**31) was 2**31).
case("narrow_int_negate_invert", "void(int32[::1], uint32[::1], int64[:, ::1], uint64[:, ::1])",
     _narrow_int_inputs, one_d(256, arg=0), _narrow_int_negate_invert_ref, [2, 3],
     kernel=narrow_int_negate_invert, covers=("unary - and ~ of int32/uint32 as numba", "uint32", "int32"))


def array_views(x, y, z, parts, bits, halves):
    i = cuda.grid(1)
    if i < x.size:
        t = cuda.local.array(2, np.complex64)
        t[0] = x[i]
        t[1] = x[i] * 2
        r = t.view(np.float32)          # a local complex array as 4 reals
        for k in range(r.size):
            parts[i, k] = r[k]
        bits[i] = y.view(np.int32)[i]   # same item size: same shape
        zv = z.view(np.float32)         # 2-D C array, (n, 2) float64 -> (n, 4) float32
        for k in range(zv.shape[1]):
            halves[i, k] = zv[i, k]


def _array_views_ref(x, y, z, parts, bits, halves):
    parts[:, 0], parts[:, 1] = x.real, x.imag
    parts[:, 2], parts[:, 3] = 2 * x.real, 2 * x.imag
    bits[...] = y.view(np.int32)
    halves[...] = z.view(np.float32)


case("array_view_dtype", "void(complex64[::1], float32[::1], float64[:, ::1], float32[:, ::1], int32[::1], "
     "float32[:, ::1])",
     lambda r: [(f32(r, n := size(r)) + 1j * f32(r, n)).astype(np.complex64), f32(r, n),
                r.standard_normal((n, 2)), poison((n, 4), np.float32), poison(n, np.int32),
                poison((n, 4), np.float32)],
     one_d(256, arg=0), _array_views_ref, [3, 4, 5], kernel=array_views,
     covers=("array.view(dtype): local, same item size, 2-D C array",))


def cache_hints(x, m, h, out, outm):
    i = cuda.grid(1)
    if i < x.size:
        v = cuda.ldcg(x, i) + cuda.ldca(x, i) * 2 + cuda.ldcs(x, -1 - i) + cuda.ldlu(x, i) + cuda.ldcv(x, i)
        cuda.stcg(out, (i, 0), v)
        cuda.stcs(out, (i, 1), cuda.ldcg(h, i))         # float16 in, float32 out
        cuda.stwb(outm, i, cuda.ldcg(m, i) * 3)         # int8
        cuda.stwt(out, (i, 2), cuda.ldcv(m, i) > 0)     # bool -> float


def _cache_hints_ref(x, m, h, out, outm):
    out[:, 0] = x + 2 * x + x[::-1] + x + x
    out[:, 1] = h.astype(np.float32)
    outm[...] = (m.astype(np.int64) * 3).astype(np.int8)
    out[:, 2] = (m > 0).astype(np.float32)


case("cache_hint_loads_stores", "void(float32[::1], int8[::1], float16[::1], float32[:, ::1], int8[::1])",
     # integral float32 values: the sums are exact whatever order or FMA contraction the GPU uses
     lambda r: [ints(r, n := size(r), -100000, 100000, np.int32).astype(np.float32), ints(r, n, -40, 40, np.int8), f32(r, n).astype(np.float16),
                poison((n, 3), np.float32), np.full(n, 77, np.int8)],
     one_d(256, arg=0), _cache_hints_ref, [3, 4], kernel=cache_hints, rtol=1e-6,
     covers=("cuda.ldca/ldcg/ldcs/ldlu/ldcv, stcg/stcs/stwb/stwt",))


@cuda.jit(device=True)
def _vec_norm2(v):
    return v.x * v.x + v.y * v.y + v.z * v.z


@cuda.jit(device=True)
def _vec_swap(v):
    return cuda.int32x2(v.y, v.x)


def vector_types(x, out, iout):
    i = cuda.grid(1)
    if i < x.size:
        u2 = cuda.uint32x2(3, i)
        u4 = cuda.uint32x4(u2, u2)                  # from smaller vectors
        f = cuda.float32x3(x[i], 2.0, u4.w)         # converted to the base type
        d = cuda.double2(f.x, 0.5)                  # a C alias
        out[i] = _vec_norm2(f) + d.y                # passed to a device function
        s = _vec_swap(cuda.int2(i, -7))             # returned from one
        iout[i] = s.x * 1000 + s.y + u4.z


def _vector_types_ref(x, out, iout):
    i = np.arange(x.size)
    f = [x, np.float32(2.0), i.astype(np.float32)]
    out[:] = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).astype(np.float32) + np.float32(0.5)
    iout[:] = -7 * 1000 + i + 3


case("vector_types", "void(float32[::1], float32[::1], int64[::1])",
     lambda r: [f32(r, n := size(r)), poison(n, np.float32), np.full(n, 77, np.int64)],
     one_d(256, arg=0), _vector_types_ref, [1, 2], kernel=vector_types, rtol=1e-6,
     covers=("vector types (float32x3, uint32x4 from uint32x2, double2, int2; device function argument and result)",))


_Pt = __import__("collections").namedtuple("_Pt", ["x", "y"])


@cuda.jit(device=True)
def _pt_swap(p):
    return _Pt(y=p.x, x=p.y)   # built in a device function (by keyword), returned


def namedtuple_build(x, out):
    i = cuda.grid(1)
    if i < x.size:
        p = _Pt(x[i], i)                      # fields take their arguments' types
        q = _pt_swap(p)
        out[i] = q.x * 2.0 + q.y


def _namedtuple_build_ref(x, out):
    out[:] = (np.arange(x.size) * 2.0 + x).astype(np.float32)


case("namedtuple_build", "void(float32[::1], float32[::1])",
     lambda r: [f32(r, n := size(r)), poison(n, np.float32)],
     one_d(256, arg=0), _namedtuple_build_ref, [1], kernel=namedtuple_build, rtol=1e-6,
     covers=("namedtuple construction in kernels and device functions",))


def arith_int(x, y, out, q):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
        out[0, i] = a + b
        out[1, i] = a - b
        out[2, i] = a * b
        out[3, i] = a // b
        out[4, i] = a % b
        out[5, i] = -a
        q[i] = a / b


def _arith_int_ref(x, y, out, q):
    a = x.astype(np.int64)
    b = y.astype(np.int64)
    for k, v in enumerate((a + b, a - b, a * b, a // b, a % b, -a)):
        out[k] = v.astype(out.dtype)
    q[...] = a / b


case("arith_int32_negative_floordiv_mod", "void(int32[::1], int32[::1], int32[:, ::1], float64[::1])",
     lambda r: [ints(r, n := size(r), -1000, 1000, np.int32), nonzero_ints(r, n, -37, 37, np.int32),
                poison((6, n), np.int32), poison(n, np.float64)],
     one_d(256), _arith_int_ref, [2, 3], kernel=arith_int, rtol=1e-15,
     covers=("int32 arithmetic", "// and % floor toward -inf", "int / int -> float64"))

case("arith_int64_negative_floordiv_mod", "void(int64[::1], int64[::1], int64[:, ::1], float64[::1])",
     lambda r: [ints(r, n := size(r), -10**12, 10**12), nonzero_ints(r, n, -10**6, 10**6),
                poison((6, n), np.int64), poison(n, np.float64)],
     one_d(128), _arith_int_ref, [2, 3], kernel=arith_int, rtol=1e-15,
     covers=("int64 arithmetic", "// and % floor toward -inf"))


def floordiv_mod_scalar(x, d, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = x[i] // d
        out[1, i] = x[i] % d
        out[2, i] = (-x[i]) // d
        out[3, i] = (-x[i]) % d


def _floordiv_mod_scalar_ref(x, d, out):
    out[0] = x // d
    out[1] = x % d
    out[2] = (-x) // d
    out[3] = (-x) % d


case("floordiv_mod_negative_scalar_divisor", "void(int64[::1], int64, int64[:, ::1])",
     lambda r: [ints(r, n := size(r), -10**9, 10**9), -int(r.integers(2, 1000)),
                poison((4, n), np.int64)],
     one_d(256), _floordiv_mod_scalar_ref, [2], kernel=floordiv_mod_scalar,
     covers=("python int scalar (int64)", "negative divisor floor semantics"))


def power_ops(bi, ei, bf, ef, oi, of):
    i = cuda.grid(1)
    if i < bi.size:
        oi[i] = bi[i] ** ei[i]
        of[0, i] = bf[i] ** ef[i]
        of[1, i] = bf[i] ** 3
        of[2, i] = bf[i] ** 0.5


def _power_ref(bi, ei, bf, ef, oi, of):
    oi[...] = bi ** ei
    of[0] = bf ** ef
    of[1] = bf ** 3
    of[2] = bf ** 0.5


case("power_int_and_float", "void(int64[::1], int64[::1], float64[::1], float64[::1], int64[::1], float64[:, ::1])",
     lambda r: [ints(r, n := size(r), -6, 7), ints(r, n, 0, 7), f64(r, n, 0.1, 5.0), f64(r, n, -3, 3),
                poison(n, np.int64), poison((3, n), np.float64)],
     one_d(256), _power_ref, [4, 5], kernel=power_ops, rtol=1e-13,
     covers=("** int and float",))


def mixed_promotion(xi, xl, s, flags, of, ol):
    i = cuda.grid(1)
    if i < xi.size:
        of[0, i] = xi[i] * s          # int32 * float32 -> float64
        of[1, i] = xl[i] + s          # int64 + float32 -> float64
        ol[0, i] = xi[i] + xl[i]      # int32 + int64 -> int64
        ol[1, i] = flags[i] + xi[i]   # bool + int32 -> int64


def _mixed_ref(xi, xl, s, flags, of, ol):
    of[0] = xi.astype(np.float64) * np.float64(s)
    of[1] = xl.astype(np.float64) + np.float64(s)
    ol[0] = xi.astype(np.int64) + xl
    ol[1] = flags.astype(np.int64) + xi


case("mixed_type_promotion", "void(int32[::1], int64[::1], float32, boolean[::1], float64[:, ::1], int64[:, ::1])",
     lambda r: [ints(r, n := size(r), -10**6, 10**6, np.int32), ints(r, n, -10**12, 10**12),
                np.float32(r.uniform(-3, 3)), r.random(n) < 0.5,
                poison((2, n), np.float64), poison((2, n), np.int64)],
     one_d(256), _mixed_ref, [4, 5], kernel=mixed_promotion, rtol=1e-15,
     covers=("numba promotion int32*float32->float64", "bool arithmetic"))


def unsigned_ops(a, b, out, cmp):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x * y
        out[2, i] = x // y
        out[3, i] = x % y
        out[4, i] = max(x, y) - min(x, y)
        cmp[i] = x > y


def _unsigned_ref(a, b, out, cmp):
    with np.errstate(over="ignore"):
        out[0] = a + b
        out[1] = a * b
    out[2] = a // b
    out[3] = a % b
    out[4] = np.maximum(a, b) - np.minimum(a, b)
    cmp[...] = a > b


def _unsigned_inputs(dtype):
    def make(r):
        n = size(r)
        info = np.iinfo(dtype)
        a = r.integers(0, info.max, n, dtype=dtype, endpoint=True)
        b = r.integers(1, info.max, n, dtype=dtype, endpoint=True)
        b[: n // 4] = r.integers(1, 1000, n // 4).astype(dtype)   # small divisors too
        return [a, b, poison((5, n), dtype), r.random(n) < 0.5]
    return make


for _dt, _name in ((np.uint32, "uint32"), (np.uint64, "uint64")):
    case(f"unsigned_{_name}_wraparound_div_cmp", f"void({_name}[::1], {_name}[::1], {_name}[:, ::1], boolean[::1])",
         _unsigned_inputs(_dt), one_d(256), _unsigned_ref, [2, 3], kernel=unsigned_ops,
         covers=(f"{_name} wraparound", "unsigned division and compare", "bool array output"))


# ---------------------------------------------------------------------------
# Comparisons, boolean logic, branches
# ---------------------------------------------------------------------------


def compare_codes(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
        c = 0
        if a < b:
            c += 1
        if a <= b:
            c += 2
        if a == b:
            c += 4
        if a != b:
            c += 8
        if a > b:
            c += 16
        if a >= b:
            c += 32
        out[i] = c


def _compare_ref(x, y, out):
    out[...] = ((x < y) * 1 + (x <= y) * 2 + (x == y) * 4 + (x != y) * 8 + (x > y) * 16
                + (x >= y) * 32)


def _with_ties(r, x):
    y = x.copy()
    m = r.random(x.size) < 0.6
    y[m] = (x[m] + r.uniform(-1, 1, m.sum())).astype(x.dtype)
    return y


case("compare_all_ops_f64", "void(float64[::1], float64[::1], int32[::1])",
     lambda r: [x := f64(r, n := size(r)), _with_ties(r, x), poison(n, np.int32)],
     one_d(256), _compare_ref, [2], kernel=compare_codes,
     covers=("< <= == != > >=", "augmented assignment"))

case("compare_all_ops_i32", "void(int32[::1], int32[::1], int32[::1])",
     lambda r: [x := ints(r, n := size(r), -50, 50, np.int32), _with_ties(r, x), poison(n, np.int32)],
     one_d(256), _compare_ref, [2], kernel=compare_codes,
     covers=("int comparisons",))


def logic_ops(x, y, flags, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
        f = flags[i]
        r = 0
        if a > 0 and b > 0:
            r += 1
        if a > 0 or b > 0:
            r += 2
        if not (a > b):
            r += 4
        if f and not a > 0:
            r += 8
        if (a > 0 and b < 0) or (f and b > 0.5):
            r += 16
        if not f:
            r += 32
        out[i] = r


def _logic_ref(x, y, f, out):
    out[...] = (((x > 0) & (y > 0)) * 1 + ((x > 0) | (y > 0)) * 2 + (~(x > y)) * 4
                + (f & ~(x > 0)) * 8 + (((x > 0) & (y < 0)) | (f & (y > 0.5))) * 16 + (~f) * 32)


case("and_or_not", "void(float32[::1], float32[::1], boolean[::1], int32[::1])",
     lambda r: [f32(r, n := size(r), -1, 1), f32(r, n, -1, 1), r.random(n) < 0.5, poison(n, np.int32)],
     one_d(256), _logic_ref, [3], kernel=logic_ops,
     covers=("and", "or", "not", "bool array input"))


def bool_logic(m, x, invert, out):
    i = cuda.grid(1)
    if i < m.size:
        r = (m[i] and x[i] > 0) or (not m[i] and x[i] < -0.5)
        if invert:
            r = not r
        out[i] = r


def _bool_logic_ref(m, x, invert, out):
    r = (m & (x > 0)) | (~m & (x < -0.5))
    out[...] = ~r if invert else r


case("bool_arrays_and_bool_scalar", "void(boolean[::1], float64[::1], boolean, boolean[::1])",
     lambda r: [r.random(n := size(r)) < 0.5, f64(r, n, -1, 1), bool(r.random() < 0.5),
                r.random(n) < 0.5],
     one_d(256), _bool_logic_ref, [3], kernel=bool_logic,
     covers=("bool scalar argument", "bool arrays in and out", "and/or as values"))


def piecewise(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v < -1.0:
            r = -1.0
        elif v < 0.0:
            r = v * v
        elif v < 1.0:
            r = 2.0 * v
        else:
            r = v + 1.0
        out[i] = r


def _piecewise_ref(x, out):
    v = x.astype(np.float64)
    r = np.where(v < -1, -1.0, np.where(v < 0, v * v, np.where(v < 1, 2 * v, v + 1)))
    out[...] = r.astype(out.dtype)


case("if_elif_else_unify_f32_f64", "void(float32[::1], float32[::1])",
     lambda r: [f32(r, n := size(r), -3, 3), poison(n, np.float32)],
     one_d(256), _piecewise_ref, [1], kernel=piecewise, rtol=1e-6,
     covers=("if/elif/else", "unification of float32 and float64 in a variable"))


def cond_expr(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = v if v > 0 else -2 * v


case("conditional_expression_int64", "void(int64[::1], int64[::1])",
     lambda r: [ints(r, n := size(r), -1000, 1000), poison(n, np.int64)],
     one_d(256), lambda x, out: out.__setitem__(Ellipsis, np.where(x > 0, x, -2 * x)), [1],
     kernel=cond_expr, covers=("conditional expression",))


def early_return(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    v = x[i]
    if v < 0:
        out[i] = -1
        return
    out[i] = v * 2


def _early_return_ref(x, out):
    out[...] = np.where(x < 0, -1, x * 2)


case("early_return", "void(int32[::1], int32[::1])",
     lambda r: [ints(r, n := size(r), -1000, 1000, np.int32), poison(n, np.int32)],
     one_d(256, extra=2), _early_return_ref, [1], kernel=early_return,
     covers=("early return", "return in a branch"))


# ---------------------------------------------------------------------------
# Loops
# ---------------------------------------------------------------------------


def collatz_steps(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        steps = 0
        while v != 1:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            steps += 1
        out[i] = steps


def _collatz_ref(x, out):
    for k, v in enumerate(x.tolist()):
        s = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            s += 1
        out[k] = s


case("while_collatz", "void(int64[::1], int32[::1])",
     lambda r: [ints(r, n := size(r, 500, 1500), 1, 100000), poison(n, np.int32)],
     one_d(128), _collatz_ref, [1], kernel=collatz_steps, covers=("while", "int %, //"))


def horner(coef, x, out):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(coef.size):
            acc = acc * x[i] + coef[k]
        out[i] = acc


def _horner_ref(coef, x, out):
    acc = np.zeros_like(x)
    for c in coef:
        acc = acc * x + c
    out[...] = acc


case("for_range_stop_horner", "void(float64[::1], float64[::1], float64[::1])",
     lambda r: [f64(r, int(r.integers(3, 12)), -2, 2), f64(r, n := size(r), -1.5, 1.5), poison(n, np.float64)],
     one_d(256, arg=1), _horner_ref, [2], kernel=horner, rtol=1e-12, atol=1e-12,
     covers=("for range(stop)", "loop-carried float"))


def window_sum(x, w, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        lo = max(0, i - w)
        hi = min(n, i + w + 1)
        s = 0
        for k in range(lo, hi):
            s += x[k]
        out[i] = s


def _window_ref(x, w, out):
    c = np.concatenate([[0], np.cumsum(x)])
    n = x.size
    idx = np.arange(n)
    out[...] = c[np.minimum(n, idx + w + 1)] - c[np.maximum(0, idx - w)]


case("for_range_start_stop_window", "void(int64[::1], int64, int64[::1])",
     lambda r: [ints(r, n := size(r), -1000, 1000), int(r.integers(1, 9)), poison(n, np.int64)],
     one_d(256), _window_ref, [2], kernel=window_sum,
     covers=("for range(start, stop)", "min/max of ints", "local variable n"))


def range_steps(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        s = 0
        for k in range(i % 7, x.size, 5 + i % 3):
            s += x[k]
        t = 0
        for k in range(x.size - 1, -1, -(1 + i % 4)):
            t += x[k]
        u = 0
        for k in range(i % 4, 2):
            u += 1
        out[i, 0] = s
        out[i, 1] = t
        out[i, 2] = u


def _range_steps_ref(x, out):
    for i in range(out.shape[0]):
        out[i, 0] = x[i % 7::5 + i % 3].sum()
        out[i, 1] = x[::-(1 + i % 4)].sum()
        out[i, 2] = max(0, 2 - i % 4)


case("for_range_step_positive_negative_empty", "void(int64[::1], int64[:, ::1])",
     lambda r: [ints(r, int(r.integers(40, 120)), -100, 100), poison((size(r, 300, 900), 3), np.int64)],
     lambda args: (blocks(args[1].shape[0], 64), 64), _range_steps_ref, [1], kernel=range_steps,
     covers=("for range(start, stop, step)", "negative step", "empty range"))


def break_continue(x, limit, out, cnt):
    i = cuda.grid(1)
    if i < x.shape[0]:
        s = 0.0
        count = 0
        for j in range(x.shape[1]):
            v = x[i, j]
            if v < 0:
                continue
            if s + v > limit:
                break
            s += v
            count += 1
        out[i] = s
        cnt[i] = count


def _break_continue_ref(x, limit, out, cnt):
    for i in range(x.shape[0]):
        s, c = 0.0, 0
        for v in x[i]:
            if v < 0:
                continue
            if s + v > limit:
                break
            s += v
            c += 1
        out[i] = s
        cnt[i] = c


case("break_continue", "void(float64[:, ::1], float64, float64[::1], int32[::1])",
     lambda r: [f64(r, (n := size(r, 500, 1500), 24), -1, 1), float(r.uniform(1, 5)),
                poison(n, np.float64), poison(n, np.int32)],
     one_d(128, axis=0), _break_continue_ref, [2, 3], kernel=break_continue, rtol=1e-13,
     covers=("break", "continue", "2-D indexing"))


def first_over(x, thresh, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        j = 0
        s = 0
        while True:
            if j >= x.shape[1]:
                j = -1
                break
            s += x[i, j]
            if s > thresh:
                break
            j += 1
        out[i] = j


def _first_over_ref(x, thresh, out):
    c = np.cumsum(x, axis=1)
    hit = c > thresh
    out[...] = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)


case("while_true_break", "void(int32[:, ::1], int64, int64[::1])",
     lambda r: [ints(r, (n := size(r, 500, 1500), 32), 0, 10, np.int32), int(r.integers(50, 200)),
                poison(n, np.int64)],
     one_d(128, axis=0), _first_over_ref, [2], kernel=first_over, covers=("while True", "break out of while"))


def stencil3x3(a, w, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        acc = 0.0
        for di in range(-1, 2):
            for dj in range(-1, 2):
                ii = i + di
                jj = j + dj
                if ii < 0 or jj < 0 or ii >= a.shape[0] or jj >= a.shape[1]:
                    continue
                acc += w[di + 1, dj + 1] * a[ii, jj]
        out[i, j] = acc


def _stencil_ref(a, w, out):
    p = np.pad(a.astype(np.float64), 1)
    acc = np.zeros(a.shape)
    for di in range(3):
        for dj in range(3):
            acc += w[di, dj] * p[di:di + a.shape[0], dj:dj + a.shape[1]]
    out[...] = acc


case("nested_loops_stencil_2d_grid", "void(float64[:, ::1], float64[:, ::1], float64[:, ::1])",
     lambda r: [a := f64(r, (int(r.integers(40, 90)), int(r.integers(40, 90)))), f64(r, (3, 3), -1, 1),
                poison(a.shape, np.float64)],
     lambda args: grid2(args[0].shape, (16, 8)), _stencil_ref, [2], kernel=stencil3x3, rtol=1e-12, atol=1e-12,
     covers=("nested for loops", "tuple unpacking of cuda.grid(2)", "or chains", "continue"))


def matmul(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        c[i, j] = acc


def _matmul_ref(a, b, c):
    c[...] = (a.astype(np.float64) @ b.astype(np.float64)).astype(c.dtype)


case("matmul_naive_f32", "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
     lambda r: [f32(r, (m := int(r.integers(50, 130)), kk := int(r.integers(20, 70))), -1, 1),
                f32(r, (kk, nn := int(r.integers(50, 130))), -1, 1), poison((m, nn), np.float32)],
     lambda args: grid2(args[2].shape), _matmul_ref, [2], kernel=matmul, rtol=1e-5, atol=1e-5,
     covers=("2-D grid", "float32 products accumulated in float64"))

case("matmul_fortran_order_f64", "void(float64[::1, :], float64[::1, :], float64[::1, :])",
     lambda r: [np.asfortranarray(f64(r, (m := int(r.integers(50, 130)), kk := int(r.integers(20, 70))))),
                np.asfortranarray(f64(r, (kk, nn := int(r.integers(50, 130))))),
                np.asfortranarray(poison((m, nn), np.float64))],
     lambda args: grid2(args[2].shape, (8, 32)), _matmul_ref, [2], kernel=matmul, rtol=1e-12, atol=1e-12,
     covers=("F-contiguous arrays",))


# ---------------------------------------------------------------------------
# Grids, thread indices, array attributes
# ---------------------------------------------------------------------------


def scale_add_2d(a, b, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * b[i, j] - a[i, j]


def _scale_add_2d_ref(a, b, out):
    out[...] = a * b - a


case("grid2d_c_order", "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
     lambda r: [f32(r, (m := int(r.integers(60, 200)), n := int(r.integers(60, 200)))), f32(r, (m, n)),
                poison((m, n), np.float32)],
     lambda args: grid2(args[2].shape), _scale_add_2d_ref, [2], kernel=scale_add_2d, rtol=1e-6, atol=1e-6,
     covers=("cuda.grid(2)", "C-contiguous 2-D"))

case("grid2d_fortran_order", "void(float32[::1, :], float32[::1, :], float32[::1, :])",
     lambda r: [np.asfortranarray(f32(r, (m := int(r.integers(60, 200)), n := int(r.integers(60, 200))))),
                np.asfortranarray(f32(r, (m, n))), np.asfortranarray(poison((m, n), np.float32))],
     lambda args: grid2(args[2].shape), _scale_add_2d_ref, [2], kernel=scale_add_2d, rtol=1e-6, atol=1e-6,
     covers=("F-contiguous 2-D",))

case("grid2d_strided_views", "void(float32[:, :], float32[::1, :], float32[:, :])",
     lambda r: [View(f32(r, (m := int(r.integers(60, 200)), 2 * (n := int(r.integers(60, 200))))), (cols(2),)),
                View(f32(r, (n, m)), (transpose2d(),)),
                View(poison((m + 1, 3 * n + 1), np.float32), (("slice", (slice(1, None), slice(1, None, 3))),))],
     lambda args: grid2((args[0].base.shape[0], args[1].base.shape[0])), _scale_add_2d_ref, [2],
     kernel=scale_add_2d, rtol=1e-6, atol=1e-6,
     covers=("non-contiguous 2-D (a[:, ::2])", "transposed (F) view", "strided output view"),
     backends=("device", "cupy", "torch"))

case("grid2d_negative_strides", "void(float32[:, :], float32[:, :], float32[:, :])",
     lambda r: [View(f32(r, (m := int(r.integers(60, 200)), n := int(r.integers(60, 200)))),
                     (("slice", (slice(None, None, -1), slice(None))),)),
                View(f32(r, (m, 2 * n)), (("slice", (slice(None), slice(None, None, -2))),)),
                View(poison((m, n), np.float32), (("slice", (slice(None, None, -1), slice(None, None, -1))),))],
     lambda args: grid2(args[0].base.shape), _scale_add_2d_ref, [2], kernel=scale_add_2d, rtol=1e-6, atol=1e-6,
     covers=("negative strides",), backends=("device", "cupy"))


def add3d(a, b, out):
    i, j, k = cuda.grid(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = a[i, j, k] * 2.0 + b[i, j, k]


def _add3d_ref(a, b, out):
    out[...] = a * 2.0 + b


def _shape3(r):
    return (int(r.integers(9, 40)), int(r.integers(9, 40)), int(r.integers(5, 20)))


case("grid3d_c_order", "void(float64[:, :, ::1], float64[:, :, ::1], float64[:, :, ::1])",
     lambda r: [f64(r, s := _shape3(r)), f64(r, s), poison(s, np.float64)],
     lambda args: grid3(args[2].shape), _add3d_ref, [2], kernel=add3d, rtol=1e-14,
     covers=("cuda.grid(3)", "3-D arrays"))

case("grid3d_permuted_views", "void(float64[:, :, :], float64[:, :, :], float64[:, :, :])",
     lambda r: [View(f64(r, ((s := _shape3(r))[2], s[0], s[1])), (("permute", (1, 2, 0)),)),
                View(f64(r, (s[1], s[2], s[0])), (("permute", (2, 0, 1)),)),
                View(poison((s[0] + 2, s[1], 2 * s[2]), np.float64),
                     (("slice", (slice(2, None), slice(None), slice(None, None, 2))),))],
     lambda args: grid3(args[2].numpy_view(args[2].base).shape), _add3d_ref, [2], kernel=add3d,
     rtol=1e-14, covers=("3-D any strides (permuted)", "3-D strided output"),
     backends=("device", "cupy", "torch"))


def thread_indices_1d(out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < out.shape[0]:
        out[i, 0] = cuda.threadIdx.x
        out[i, 1] = cuda.blockIdx.x
        out[i, 2] = cuda.blockDim.x
        out[i, 3] = cuda.gridDim.x


def _tid1_ref(out):
    n = out.shape[0]
    i = np.arange(n)
    out[:, 0] = i % 96
    out[:, 1] = i // 96
    out[:, 2] = 96
    out[:, 3] = blocks(n, 96)


case("thread_block_indices_1d", "void(int32[:, ::1])",
     lambda r: [poison((size(r), 4), np.int32)],
     lambda args: (blocks(args[0].shape[0], 96), 96), _tid1_ref, [0], kernel=thread_indices_1d,
     covers=("threadIdx.x", "blockIdx.x", "blockDim.x", "gridDim.x"))


def thread_indices_3d(out):
    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    z = cuda.threadIdx.z + cuda.blockIdx.z * cuda.blockDim.z
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z, 0] = cuda.threadIdx.y
        out[x, y, z, 1] = cuda.threadIdx.z
        out[x, y, z, 2] = cuda.blockIdx.y
        out[x, y, z, 3] = cuda.blockIdx.z
        out[x, y, z, 4] = cuda.blockDim.y
        out[x, y, z, 5] = cuda.blockDim.z
        out[x, y, z, 6] = cuda.gridDim.y
        out[x, y, z, 7] = cuda.gridDim.z


_B3 = (4, 4, 2)


def _tid3_ref(out):
    X, Y, Z = out.shape[:3]
    y = np.arange(Y)[None, :, None]
    z = np.arange(Z)[None, None, :]
    full = np.broadcast_to
    out[..., 0] = full(y % _B3[1], (X, Y, Z))
    out[..., 1] = full(z % _B3[2], (X, Y, Z))
    out[..., 2] = full(y // _B3[1], (X, Y, Z))
    out[..., 3] = full(z // _B3[2], (X, Y, Z))
    out[..., 4] = _B3[1]
    out[..., 5] = _B3[2]
    out[..., 6] = blocks(Y, _B3[1])
    out[..., 7] = blocks(Z, _B3[2])


case("thread_block_indices_3d", "void(int32[:, :, :, ::1])",
     lambda r: [poison((int(r.integers(5, 15)), int(r.integers(5, 15)), int(r.integers(3, 9)), 8), np.int32)],
     lambda args: (tuple(blocks(args[0].shape[d], _B3[d]) for d in range(3)), _B3), _tid3_ref, [0],
     kernel=thread_indices_3d, covers=("threadIdx/blockIdx/blockDim/gridDim .y .z", "4-D output"))


def grid_stride_scale(x, out, s):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = x[i] * s


case("grid_stride_loop_gridsize1", "void(float32[::1], float32[::1], float32)",
     lambda r: [f32(r, n := size(r, 20000, 40000)), poison(n, np.float32), np.float32(r.uniform(-3, 3))],
     (4, 64), lambda x, out, s: out.__setitem__(Ellipsis, x * s), [1], kernel=grid_stride_scale,
     rtol=1e-7, covers=("cuda.gridsize(1)", "range(start, stop, step) with runtime step"))


def grid_stride_2d(a, out):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            out[i, j] = a[i, j] + i - j


def _gs2_ref(a, out):
    i = np.arange(a.shape[0])[:, None]
    j = np.arange(a.shape[1])[None, :]
    out[...] = a + i - j


case("grid_stride_gridsize2", "void(int64[:, ::1], int64[:, ::1])",
     lambda r: [ints(r, (m := int(r.integers(100, 300)), n := int(r.integers(100, 300))), -10**6, 10**6),
                poison((m, n), np.int64)],
     ((3, 2), (8, 16)), _gs2_ref, [1], kernel=grid_stride_2d, covers=("cuda.gridsize(2)",))


def grid_stride_3d(a, out):
    x0, y0, z0 = cuda.grid(3)
    sx, sy, sz = cuda.gridsize(3)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            for k in range(z0, a.shape[2], sz):
                out[i, j, k] = a[i, j, k] * 3 + 1


case("grid_stride_gridsize3_nested3", "void(int32[:, :, ::1], int32[:, :, ::1])",
     lambda r: [ints(r, s := (int(r.integers(20, 40)), int(r.integers(20, 40)), int(r.integers(20, 40))),
                     -10**5, 10**5, np.int32), poison(s, np.int32)],
     ((2, 2, 2), (4, 4, 4)), lambda a, out: out.__setitem__(Ellipsis, a * 3 + 1), [1],
     kernel=grid_stride_3d, covers=("cuda.gridsize(3)", "triple nested loops"))


def array_attrs(a, v, out):
    if cuda.grid(1) == 0:
        out[0] = a.shape[0]
        out[1] = a.shape[1]
        out[2] = a.shape[2]
        out[3] = a.size
        out[4] = a.ndim
        out[5] = len(a)
        out[6] = a[-1, -1, -1]
        out[7] = len(v) + v.ndim
        out[8] = v[-2]


def _attrs_ref(a, v, out):
    out[:] = [a.shape[0], a.shape[1], a.shape[2], a.size, a.ndim, len(a), a[-1, -1, -1],
              len(v) + v.ndim, v[-2]]


case("array_shape_size_ndim_len_negative_index", "void(int64[:, :, ::1], int64[::1], int64[::1])",
     lambda r: [ints(r, (int(r.integers(2, 9)), int(r.integers(2, 9)), int(r.integers(2, 9))), 1, 10**9),
                ints(r, int(r.integers(5, 50)), 1, 10**9), poison(9, np.int64)],
     (1, 32), _attrs_ref, [2], kernel=array_attrs,
     covers=(".shape", ".size", ".ndim", "len", "negative index wraps"))


def tuple_index(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        idx = (i, j)
        tidx = (j, i)
        out[tidx] = a[idx] * 3


case("tuple_variable_index_transpose", "void(int32[:, ::1], int32[:, ::1])",
     lambda r: [ints(r, (m := int(r.integers(30, 150)), n := int(r.integers(30, 150))), -10**6, 10**6, np.int32),
                poison((n, m), np.int32)],
     lambda args: grid2(args[0].shape), lambda a, out: out.__setitem__(Ellipsis, (a * 3).T), [1],
     kernel=tuple_index, covers=("index with a tuple variable",))


def scalar_args(x, out, n, k, flag):
    i = cuda.grid(1)
    if i < n:
        v = x[i] + k
        if flag:
            v = v + v
        out[i] = v


case("scalar_args_int32_uint64_bool", "void(uint64[::1], uint64[::1], int32, uint64, boolean)",
     lambda r: [r.integers(0, 2**62, n := size(r), dtype=np.uint64), poison(n, np.uint64),
                np.int32(n - int(r.integers(0, 100))), np.uint64(r.integers(1, 2**40)), bool(r.random() < 0.5)],
     one_d(256), lambda x, out, n, k, flag: out.__setitem__(slice(0, n), (x[:n] + k) * (2 if flag else 1)),
     [1], kernel=scalar_args, covers=("int32/uint64/bool scalar args", "compare int64 with int32"))


def uint32_scalar(x, k, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] % k + k


case("scalar_arg_uint32", "void(uint32[::1], uint32, uint32[::1])",
     lambda r: [r.integers(0, 2**32, n := size(r), dtype=np.uint32), np.uint32(r.integers(2, 2**31)),
                poison(n, np.uint32)],
     one_d(256), lambda x, k, out: out.__setitem__(Ellipsis, (x.astype(np.uint64) % k + k).astype(np.uint32)),
     [2], kernel=uint32_scalar, covers=("uint32 scalar argument",))


# ---------------------------------------------------------------------------
# Shared memory, local memory, atomics
# ---------------------------------------------------------------------------


def block_sum_f32(x, partial):
    sm = cuda.shared.array(TPB, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        sm[tid] = x[i]
    else:
        sm[tid] = 0
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sm[0]


def _block_sums(x, tpb):
    nb = blocks(x.size, tpb)
    p = np.zeros(nb * tpb, np.float64)
    p[: x.size] = x
    return p.reshape(nb, tpb).sum(axis=1)


case("shared_tree_reduction_f32", "void(float32[::1], float32[::1])",
     lambda r: [f32(r, n := size(r, 5000, 20000), -1, 1), poison(blocks(n, TPB), np.float32)],
     lambda args: (args[1].size, TPB),
     lambda x, p: p.__setitem__(Ellipsis, _block_sums(x, TPB).astype(np.float32)), [1],
     kernel=block_sum_f32, rtol=1e-4, atol=2e-5,
     covers=("cuda.shared.array", "cuda.syncthreads", "tree reduction", "while loop with //="))


def block_sum_i64(x, partial):
    sm = cuda.shared.array(shape=TPB, dtype=np.int64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    acc = 0
    while i < x.size:
        acc += x[i]
        i += cuda.gridsize(1)
    sm[tid] = acc
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sm[tid] = sm[tid] + sm[tid + s]
        cuda.syncthreads()
        s = s // 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sm[0]


def _block_sum_gs_ref(x, partial):
    nb = partial.size
    owner = (np.arange(x.size) // TPB) % nb      # the block whose threads read x[k]
    for b in range(nb):
        partial[b] = x[owner == b].sum()


case("shared_reduction_i64_grid_stride", "void(int64[::1], int64[::1])",
     lambda r: [ints(r, size(r, 20000, 60000), -10**9, 10**9), poison(int(r.integers(3, 9)), np.int64)],
     lambda args: (args[1].size, TPB), _block_sum_gs_ref, [1], kernel=block_sum_i64,
     covers=("shared.array with keywords", "blockDim-driven loop", "int64 exact reduction"))


def block_scan(x, out):
    buf = cuda.shared.array(TPB, np.int64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.size else 0
    cuda.syncthreads()
    off = 1
    while off < TPB:
        v = 0
        if tid >= off:
            v = buf[tid - off]
        cuda.syncthreads()
        buf[tid] += v
        cuda.syncthreads()
        off *= 2
    if i < x.size:
        out[i] = buf[tid]


def _block_scan_ref(x, out):
    for b in range(0, x.size, TPB):
        out[b:b + TPB] = np.cumsum(x[b:b + TPB])


case("shared_inclusive_scan", "void(int32[::1], int64[::1])",
     lambda r: [ints(r, n := size(r), -1000, 1000, np.int32), poison(n, np.int64)],
     lambda args: (blocks(args[0].size, TPB), TPB), _block_scan_ref, [1], kernel=block_scan,
     covers=("Hillis-Steele scan", "several syncthreads in a loop", "int32 into int64 shared"))


def transpose_tiled(a, out):
    tile = cuda.shared.array(shape=(TILE, TILE_PAD), dtype=np.float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    orow = cuda.blockIdx.x * TILE + ty
    ocol = cuda.blockIdx.y * TILE + tx
    if orow < out.shape[0] and ocol < out.shape[1]:
        out[orow, ocol] = tile[tx, ty]


case("shared_2d_tile_transpose", "void(float64[:, ::1], float64[:, ::1])",
     lambda r: [f64(r, (m := int(r.integers(40, 200)), n := int(r.integers(40, 200)))), poison((n, m), np.float64)],
     lambda args: ((blocks(args[0].shape[1], TILE), blocks(args[0].shape[0], TILE)), (TILE, TILE)),
     lambda a, out: out.__setitem__(Ellipsis, a.T), [1], kernel=transpose_tiled,
     covers=("2-D shared array", "threadIdx.y", "blockIdx.y"))


def local_sort(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        buf = cuda.local.array(K, np.float32)
        for j in range(K):
            buf[j] = x[i, j]
        for j in range(1, K):
            v = buf[j]
            k = j - 1
            while k >= 0 and buf[k] > v:
                buf[k + 1] = buf[k]
                k -= 1
            buf[k + 1] = v
        for j in range(K):
            out[i, j] = buf[j]


case("local_array_insertion_sort", "void(float32[:, ::1], float32[:, ::1])",
     lambda r: [f32(r, (n := size(r, 500, 2000), K)), poison((n, K), np.float32)],
     one_d(64, axis=0), lambda x, out: out.__setitem__(Ellipsis, np.sort(x, axis=1)), [1], kernel=local_sort,
     covers=("cuda.local.array", "while with and (short circuit)", "nested loops"))


def local_matvec3(m, v, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        a = cuda.local.array((3, 3), np.float64)
        for r in range(3):
            for c in range(3):
                a[r, c] = m[i, r, c]
        for r in range(3):
            s = 0.0
            for c in range(3):
                s += a[r, c] * v[i, c]
            out[i, r] = s


case("local_array_2d", "void(float64[:, :, ::1], float64[:, ::1], float64[:, ::1])",
     lambda r: [f64(r, (n := size(r, 500, 2000), 3, 3)), f64(r, (n, 3)), poison((n, 3), np.float64)],
     one_d(128, axis=0), lambda m, v, out: out.__setitem__(Ellipsis, np.einsum("nrc,nc->nr", m, v)), [2],
     kernel=local_matvec3, rtol=1e-13, atol=1e-13, covers=("2-D local array",))


def hist_global(x, hist):
    i = cuda.grid(1)
    if i < x.size:
        b = int(x[i] * NBINS)
        if b >= NBINS:
            b = NBINS - 1
        cuda.atomic.add(hist, b, 1)


def _hist_ref(x, hist):
    b = np.minimum((x.astype(np.float64) * NBINS).astype(np.int64), NBINS - 1)
    hist += np.bincount(b, minlength=NBINS).astype(hist.dtype)


case("atomic_histogram_global", "void(float32[::1], int32[::1])",
     lambda r: [r.random(size(r, 20000, 60000)).astype(np.float32), ints(r, NBINS, 1, 1000, np.int32)],
     one_d(256), _hist_ref, [1], kernel=hist_global,
     covers=("cuda.atomic.add on global", "int() of a float"))


def hist_shared(x, hist):
    sh = cuda.shared.array(NBINS, np.int32)
    tid = cuda.threadIdx.x
    if tid < NBINS:
        sh[tid] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        cuda.atomic.add(sh, x[i] % 37, 1)
        i += stride
    cuda.syncthreads()
    if tid < NBINS:
        cuda.atomic.add(hist, tid, sh[tid])


def _hist_mod_ref(x, hist):
    hist += np.bincount(x % 37, minlength=NBINS).astype(hist.dtype)


case("atomic_histogram_shared", "void(int64[::1], int32[::1])",
     lambda r: [ints(r, size(r, 20000, 60000), -10**6, 10**6), ints(r, NBINS, 1, 1000, np.int32)],
     (8, TPB), _hist_mod_ref, [1], kernel=hist_shared,
     covers=("cuda.atomic.add on shared", "python % of negative ints as index"))


def atomic_float_sum(x, key, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, key[i], x[i])


def _atomic_float_ref(x, key, out):
    acc = out.astype(np.float64)
    np.add.at(acc, key, x.astype(np.float64))
    out[...] = acc.astype(out.dtype)


def _quantized(r, n, dtype, q):
    return (r.integers(-64, 64, n) / q).astype(dtype)   # sums exact in any order


case("atomic_add_float64_exact", "void(float64[::1], int64[::1], float64[::1])",
     lambda r: [_quantized(r, n := size(r, 10000, 30000), np.float64, 8), ints(r, n, 0, 37),
                _quantized(r, 37, np.float64, 4)],
     one_d(256), _atomic_float_ref, [2], kernel=atomic_float_sum,
     covers=("atomic add float64",))

case("atomic_add_float32_exact", "void(float32[::1], int32[::1], float32[::1])",
     lambda r: [_quantized(r, n := size(r, 10000, 30000), np.float32, 2), ints(r, n, 0, 53, np.int32),
                _quantized(r, 53, np.float32, 4)],
     one_d(256), _atomic_float_ref, [2], kernel=atomic_float_sum,
     covers=("atomic add float32", "int32 index"))


def atomic_2d(rows, cols, counts):
    i = cuda.grid(1)
    if i < rows.size:
        cuda.atomic.add(counts, (rows[i], cols[i]), 1)


def _atomic_2d_ref(rows, cols, counts):
    np.add.at(counts, (rows, cols), np.uint32(1))


case("atomic_add_2d_tuple_index_uint32", "void(int64[::1], int64[::1], uint32[:, ::1])",
     lambda r: [ints(r, n := size(r, 10000, 30000), 0, 7), ints(r, n, 0, 11),
                r.integers(1, 100, (7, 11)).astype(np.uint32)],
     one_d(256), _atomic_2d_ref, [2], kernel=atomic_2d,
     covers=("atomic add with tuple index", "uint32 atomics"))


# ---------------------------------------------------------------------------
# Math and builtins
# ---------------------------------------------------------------------------


def math_funcs(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
        out[0, i] = math.sqrt(a)
        out[1, i] = math.exp(b)
        out[2, i] = math.log(a)
        out[3, i] = math.sin(b)
        out[4, i] = math.cos(b)
        out[5, i] = math.tanh(b)
        out[6, i] = math.pow(a, b)
        out[7, i] = math.floor(b)
        out[8, i] = math.ceil(b)
        out[9, i] = math.fabs(b)


def _math_ref(x, y, out):
    a = x.astype(np.float64)
    b = y.astype(np.float64)
    for k, v in enumerate((np.sqrt(a), np.exp(b), np.log(a), np.sin(b), np.cos(b), np.tanh(b),
                           np.power(a, b), np.floor(b), np.ceil(b), np.fabs(b))):
        out[k] = v.astype(out.dtype)


for _dt, _name, _rt, _at in ((np.float32, "float32", 2e-6, 2e-6), (np.float64, "float64", 1e-14, 1e-15)):
    case(f"math_functions_{_name}", f"void({_name}[::1], {_name}[::1], {_name}[:, ::1])",
         (lambda dt: lambda r: [r.uniform(0.05, 9.0, n := size(r)).astype(dt),
                                r.uniform(-4.0, 4.0, n).astype(dt), poison((10, n), dt)])(_dt),
         one_d(256), _math_ref, [2], kernel=math_funcs, rtol=_rt, atol=_at,
         covers=("math.sqrt/exp/log/sin/cos/tanh/pow/floor/ceil/fabs", _name))


def math_int_args(n, out, idx):
    i = cuda.grid(1)
    if i < out.shape[1]:
        out[0, i] = math.sqrt(i)
        out[1, i] = math.exp(i / n) + math.log(i + 1)
        out[2, i] = math.pow(2, i % 20)
        idx[i] = math.floor(math.sqrt(i)) + math.ceil(i / 7)


def _math_int_ref(n, out, idx):
    i = np.arange(out.shape[1], dtype=np.float64)
    out[0] = np.sqrt(i)
    out[1] = np.exp(i / n) + np.log(i + 1)
    out[2] = np.power(2.0, i % 20)
    idx[...] = np.floor(np.sqrt(i)).astype(np.int64) + np.ceil(i / 7).astype(np.int64)


case("math_on_integers", "void(int64, float64[:, ::1], int64[::1])",
     lambda r: [int(r.integers(100, 1000)), poison((3, n := size(r)), np.float64), poison(n, np.int64)],
     one_d(256, arg=1, axis=1), _math_int_ref, [1, 2], kernel=math_int_args, rtol=1e-14, atol=1e-15,
     covers=("math.* on ints -> float64", "math.floor/ceil results as ints"))


def min_max_abs(xi, yi, xf, yf, oi, of):
    i = cuda.grid(1)
    if i < xi.size:
        oi[0, i] = min(xi[i], yi[i])
        oi[1, i] = max(xi[i], yi[i])
        oi[2, i] = abs(xi[i])
        of[0, i] = min(xf[i], yf[i])
        of[1, i] = max(xf[i], yf[i])
        of[2, i] = abs(xf[i])
        of[3, i] = max(xi[i], xf[i])


def _min_max_abs_ref(xi, yi, xf, yf, oi, of):
    oi[0] = np.minimum(xi, yi)
    oi[1] = np.maximum(xi, yi)
    oi[2] = np.abs(xi)
    of[0] = np.minimum(xf, yf)
    of[1] = np.maximum(xf, yf)
    of[2] = np.abs(xf)
    of[3] = np.maximum(xi.astype(np.float64), xf.astype(np.float64))


case("min_max_abs_int_float", "void(int32[::1], int32[::1], float32[::1], float32[::1], int32[:, ::1], float64[:, ::1])",
     lambda r: [ints(r, n := size(r), -10**6, 10**6, np.int32), ints(r, n, -10**6, 10**6, np.int32),
                f32(r, n, -100, 100), f32(r, n, -100, 100), poison((3, n), np.int32), poison((4, n), np.float64)],
     one_d(256), _min_max_abs_ref, [4, 5], kernel=min_max_abs,
     covers=("min", "max", "abs", "max(int32, float32) -> float64"))


def conversions(xf, xi, oi, of):
    i = cuda.grid(1)
    if i < xf.size:
        oi[i] = int(xf[i])
        of[i] = float(xi[i]) / 3.0 + int(xf[i] * 2.5)


def _conversions_ref(xf, xi, oi, of):
    oi[...] = np.trunc(xf).astype(np.int64)
    of[...] = xi.astype(np.float64) / 3.0 + np.trunc(xf * 2.5)


case("int_float_conversions", "void(float64[::1], int32[::1], int64[::1], float64[::1])",
     lambda r: [f64(r, n := size(r), -100, 100), ints(r, n, -10**6, 10**6, np.int32),
                poison(n, np.int64), poison(n, np.float64)],
     one_d(256), _conversions_ref, [2, 3], kernel=conversions, rtol=1e-15,
     covers=("int() truncates toward zero", "float()"))


# ---------------------------------------------------------------------------
# Device functions
# ---------------------------------------------------------------------------


@cuda.jit(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@cuda.jit(device=True)
def smoothstep(e0, e1, v):
    t = clamp((v - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def smoothstep_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = smoothstep(-1.0, 1.0, x[i])


def _smoothstep_ref(x, out):
    t = np.clip((x + 1.0) / 2.0, 0.0, 1.0)
    out[...] = t * t * (3.0 - 2.0 * t)


case("device_functions_nested_multiple_returns", "void(float64[::1], float64[::1])",
     lambda r: [f64(r, n := size(r), -2, 2), poison(n, np.float64)],
     one_d(256), _smoothstep_ref, [1], kernel=smoothstep_kernel, rtol=1e-14, atol=1e-15,
     covers=("device function returning a value", "device function calling another", "several returns"))


@cuda.jit(device=True)
def laplace_at(a, i):
    if i == 0 or i == a.size - 1:
        return 0.0
    return a[i - 1] - 2.0 * a[i] + a[i + 1]


@cuda.jit(device=True)
def store_pair(out, i, first, second):
    out[i, 0] = first
    out[i, 1] = second


def laplace_kernel(a, out):
    i = cuda.grid(1)
    if i < a.size:
        store_pair(out, i, laplace_at(a, i), a[i])


def _laplace_ref(a, out):
    lap = np.zeros_like(a)
    lap[1:-1] = a[:-2] - 2.0 * a[1:-1] + a[2:]
    out[:, 0] = lap
    out[:, 1] = a


case("device_functions_with_arrays_and_void", "void(float32[::1], float64[:, ::1])",
     lambda r: [f32(r, n := size(r)), poison((n, 2), np.float64)],
     one_d(256), _laplace_ref, [1], kernel=laplace_kernel, rtol=1e-6, atol=1e-6,
     covers=("device function taking an array", "device function returning nothing"))


@cuda.jit(device=True)
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@cuda.jit(device=True)
def find_first(a, row, value):
    for j in range(a.shape[1]):
        if a[row, j] == value:
            return j
    return -1


def gcd_find_kernel(x, y, g, table, needle, pos):
    i = cuda.grid(1)
    if i < x.size:
        g[i] = gcd(x[i], y[i])
    if i < table.shape[0]:
        pos[i] = find_first(table, i, needle[i])


def _gcd_find_ref(x, y, g, table, needle, pos):
    g[...] = np.gcd(x, y)
    hit = table == needle[:, None]
    pos[...] = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)


case("device_functions_loops_return_in_loop", "void(int64[::1], int64[::1], int64[::1], int32[:, ::1], int32[::1], int64[::1])",
     lambda r: [ints(r, n := size(r), 1, 10**9), ints(r, n, 1, 10**6), poison(n, np.int64),
                ints(r, (m := size(r, 300, 1000), 20), 0, 40, np.int32), ints(r, m, 0, 40, np.int32),
                poison(m, np.int64)],
     one_d(128), _gcd_find_ref, [2, 5], kernel=gcd_find_kernel,
     covers=("device function with while", "tuple swap", "return inside a for loop"))


@cuda.jit(device=True)
def dot3(a, i, b, j):
    s = 0.0
    for k in range(3):
        s += a[i, k] * b[j, k]
    return s


def pair_dist_kernel(p, q, out):
    i, j = cuda.grid(2)
    if i < p.shape[0] and j < q.shape[0]:
        out[i, j] = math.sqrt(max(dot3(p, i, p, i) - 2.0 * dot3(p, i, q, j) + dot3(q, j, q, j), 0.0))


def _pair_dist_ref(p, q, out):
    d = (p * p).sum(1)[:, None] - 2 * p @ q.T + (q * q).sum(1)[None, :]
    out[...] = np.sqrt(np.maximum(d, 0.0))


case("device_function_2d_grid_math", "void(float64[:, ::1], float64[:, ::1], float64[:, ::1])",
     lambda r: [f64(r, (m := int(r.integers(30, 120)), 3)), f64(r, (n := int(r.integers(30, 120)), 3)),
                poison((m, n), np.float64)],
     lambda args: grid2(args[2].shape), _pair_dist_ref, [2], kernel=pair_dist_kernel, rtol=1e-10, atol=1e-10,
     covers=("device function called several times", "math in 2-D grid"))


# ---------------------------------------------------------------------------
# Lookup
# ---------------------------------------------------------------------------

CASES_BY_NAME = {c.name: c for c in CASES}
assert len(CASES_BY_NAME) == len(CASES), "duplicate case names"


def new_rng():
    """A generator with a fresh seed (or CUDAJIT_TEST_SEED) and that seed, for messages."""
    env = os.environ.get("CUDAJIT_TEST_SEED")
    seed = int(env) if env else int(np.random.SeedSequence().entropy % (2**63))
    return np.random.default_rng(seed), seed


# numba's typeof, spelled as in signatures (for test_signature_matches_inputs)
_SCALAR_NAMES = {np.dtype(np.bool_): "boolean", **{np.dtype(t): np.dtype(t).name for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128)}}


def numba_typeof_str(value) -> str:
    if isinstance(value, View):
        value = value.numpy_view(value.base)
    if isinstance(value, np.ndarray):
        name = _SCALAR_NAMES[value.dtype]
        nd = value.ndim
        if value.flags.c_contiguous:
            dims = [":"] * (nd - 1) + ["::1"]
        elif value.flags.f_contiguous:
            dims = ["::1"] + [":"] * (nd - 1)
        else:
            dims = [":"] * nd
        return f"{name}[{', '.join(dims)}]"
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, np.generic):
        return _SCALAR_NAMES[value.dtype]
    raise TypeError(f"no numba type for {type(value).__name__}")


def signature_of(args: Sequence) -> str:
    return "void(" + ", ".join(numba_typeof_str(a) for a in args) + ")"


# ---------------------------------------------------------------------------
# Checking results (shared by the GPU tests and the numba cross-check)
# ---------------------------------------------------------------------------


def numpy_args(args):
    """Copies of the arguments for the reference: arrays copied, Views made
    into views of a copied base. Returns (args, bases) where bases[i] is the
    array whose whole content is compared for argument i."""
    out, bases = [], {}
    for i, a in enumerate(args):
        if isinstance(a, View):
            base = a.base.copy(order="K")
            bases[i] = base
            out.append(a.numpy_view(base))
        elif isinstance(a, np.ndarray):
            c = a.copy(order="K")
            bases[i] = c
            out.append(c)
        else:
            out.append(a)
    return out, bases


def expected_outputs(case: Case, args) -> dict:
    """{output index: expected content of that argument's base array}."""
    ref_args, bases = numpy_args(args)
    with np.errstate(all="ignore"):
        case.reference(*ref_args)
    return {i: bases[i] for i in case.outputs}


def assert_output_matches(case: Case, index: int, actual: np.ndarray, expected: np.ndarray,
                          context: str = ""):
    where = f"{case.name}: argument {index} {context}".rstrip()
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=case.rtol, atol=case.atol,
                                   equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=where)


# --- language (issue 5) -------------------------------------------------------
# Small int / float16 / complex types, numpy scalar constructors, operators,
# loops over tuples / enumerate / zip, slicing, device-function defaults.


def _wrap(v, dtype):
    """int64 results stored into a narrower int array: wraps like a C cast."""
    return np.asarray(v).astype(np.int64).astype(dtype)


def lang_small_ints(a8, b16, c8u, d16u, out16, out8u):
    i = cuda.grid(1)
    if i < a8.size:
        out16[i] = a8[i] * 3 + b16[i] - (b16[i] >> 2)
        out8u[i] = (c8u[i] ^ (d16u[i] >> 3)) | (c8u[i] << 1) & 0xF0


def _lang_small_ints_ref(a8, b16, c8u, d16u, out16, out8u):
    a, b = a8.astype(np.int64), b16.astype(np.int64)
    out16[...] = _wrap(a * 3 + b - (b >> 2), np.int16)
    c, d = c8u.astype(np.int64), d16u.astype(np.int64)
    out8u[...] = _wrap((c ^ (d >> 3)) | ((c << 1) & 0xF0), np.uint8)


case("lang_small_int_types", "void(int8[::1], int16[::1], uint8[::1], uint16[::1], int16[::1], uint8[::1])",
     lambda r: [ints(r, n := size(r), -40, 40, np.int8), ints(r, n, -3000, 3000, np.int16),
                ints(r, n, 1, 250, np.uint8), ints(r, n, 1, 60000, np.uint16),
                np.full(n, -12345, np.int16), np.full(n, 77, np.uint8)],
     one_d(128), _lang_small_ints_ref, [4, 5], kernel=lang_small_ints,
     covers=("int8", "int16", "uint8", "uint16", "shifts", "bit ops"))


def lang_f16(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * b[i] + a[i]


def _lang_f16_ref(a, b, out):
    out[...] = (a * b + a).astype(np.float16)


case("lang_float16_arrays", "void(float16[::1], float16[::1], float16[::1])",
     lambda r: [f32(r, n := size(r), -2, 2).astype(np.float16), f32(r, n, -2, 2).astype(np.float16),
                poison(n, np.float16)],
     one_d(128), _lang_f16_ref, [2], kernel=lang_f16, rtol=1e-2, atol=1e-2,
     covers=("float16",))


def lang_complex(a, b, out, mag):
    i = cuda.grid(1)
    if i < a.size:
        z = a[i] * b[i] + a[i] / b[i] - 1j
        out[i] = z * b[i].conjugate()
        mag[i] = abs(z) + z.real - z.imag


def _lang_complex_ref(a, b, out, mag):
    z = a * b + a / b - 1j
    out[...] = (z * np.conj(b)).astype(out.dtype)
    mag[...] = (np.abs(z) + z.real - z.imag).astype(mag.dtype)


def _cplx(r, n, dtype):
    return (r.uniform(-2, 2, n) + 1j * r.uniform(0.5, 2, n)).astype(dtype)


case("lang_complex128", "void(complex128[::1], complex128[::1], complex128[::1], float64[::1])",
     lambda r: [_cplx(r, n := size(r), np.complex128), _cplx(r, n, np.complex128),
                poison(n, np.complex128), poison(n, np.float64)],
     one_d(128), _lang_complex_ref, [2, 3], kernel=lang_complex, rtol=1e-12, atol=1e-12,
     covers=("complex128", "abs(complex)", ".real", ".imag", ".conjugate()", "complex literal"))

case("lang_complex64", "void(complex64[::1], complex64[::1], complex128[::1], float64[::1])",
     lambda r: [_cplx(r, n := size(r), np.complex64), _cplx(r, n, np.complex64),
                poison(n, np.complex128), poison(n, np.float64)],
     one_d(128), _lang_complex_ref, [2, 3], kernel=lang_complex, rtol=1e-5, atol=1e-5,
     covers=("complex64", "complex64 op complex128 literal"))


def lang_numpy_ctors(x, k, out, bits):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = np.float32(k[i]) * np.float32(0.5) + np.float64(x[i])
        bits[i] = (np.uint64(k[i]) * np.uint64(2654435761)) & 0xFFFFFFFFFFFFFFFF


def _lang_numpy_ctors_ref(x, k, out, bits):
    out[...] = (k.astype(np.float32) * np.float32(0.5)).astype(np.float64) + x.astype(np.float64)
    bits[...] = k.astype(np.uint64) * np.uint64(2654435761)


case("lang_numpy_scalar_ctors", "void(float32[::1], int64[::1], float64[::1], uint64[::1])",
     lambda r: [f32(r, n := size(r)), ints(r, n, 1, 1 << 40), poison(n, np.float64), poison(n, np.uint64)],
     one_d(128), _lang_numpy_ctors_ref, [2, 3], kernel=lang_numpy_ctors, rtol=1e-6, atol=1e-6,
     covers=("np.float32(x)", "np.uint64(x)", "int constant > INT64_MAX"))


def lang_operators(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        v = a[i, j]
        out[i, j] = 1.0 if -1.0 < v <= 1.0 else (2.0 if v > 1.0 else -2.0)
        out[i, j] += v
        out[i, j] *= 2.0


def _lang_operators_ref(a, out):
    r = np.where((a > -1) & (a <= 1), 1.0, np.where(a > 1, 2.0, -2.0)).astype(np.float32)
    out[...] = (r + a) * np.float32(2.0)


case("lang_chained_compare_ifexp_augassign", "void(float32[:, ::1], float32[:, ::1])",
     lambda r: [f32(r, (37, 45), -3, 3), poison((37, 45), np.float32)],
     grid2((37, 45)), _lang_operators_ref, [1], kernel=lang_operators, rtol=1e-6,
     covers=("chained comparison", "conditional expression", "a[i, j] += v"))


def lang_loops(a, out):
    i = cuda.grid(1)
    if i >= a.size:
        return
    s = 0
    for k in range(10, 0, -3):          # negative step
        s += k * a[i]
    for c in (1, 2, 3):                 # tuple of constants
        s += c
    for j, k in enumerate(range(2, 6)):
        s += j * k
    for x, y in zip(range(3), range(5, 10)):
        s += x * y
    for x in range(6):
        if x == 1:
            continue
        for y in range(6):
            if y > x:
                break
            s += y
    n = 0
    while n < 20 and (s > 0 or n < 3):
        n += 3
        s -= 1
    out[i] = s + n


def _lang_loops_ref(a, out):
    for i in range(a.size):
        s = 0
        for k in range(10, 0, -3):
            s += k * int(a[i])
        for c in (1, 2, 3):
            s += c
        for j, k in enumerate(range(2, 6)):
            s += j * k
        for x, y in zip(range(3), range(5, 10)):
            s += x * y
        for x in range(6):
            if x == 1:
                continue
            for y in range(6):
                if y > x:
                    break
                s += y
        n = 0
        while n < 20 and (s > 0 or n < 3):
            n += 3
            s -= 1
        out[i] = s + n


case("lang_loops", "void(int64[::1], int64[::1])",
     lambda r: [ints(r, n := size(r, 300, 900), -50, 50), poison(n, np.int64)],
     one_d(128), _lang_loops_ref, [1], kernel=lang_loops,
     covers=("range negative step", "for over tuple", "enumerate", "zip", "break/continue",
             "while with and/or", "early return"))


def lang_row_slices(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i, :]
        tail = row[1:]
        mid = row[2:7]
        every2 = row[::2]
        back = row[::-1]
        out[i] = tail[0] + mid.size * 100.0 + every2[1] * 10.0 + back[0] + a[i][3] + len(row[-4:])


def _lang_row_slices_ref(a, out):
    for i in range(a.shape[0]):
        row = a[i, :]
        out[i] = np.float32(row[1] + np.float32(5 * 100.0) + row[2] * np.float32(10.0)
                            + row[-1] + row[3] + np.float32(4))


case("lang_array_slicing", "void(float32[:, ::1], float32[::1])",
     lambda r: [f32(r, (333, 11)), poison(333, np.float32)],
     one_d(64, arg=1), _lang_row_slices_ref, [1], kernel=lang_row_slices, rtol=1e-5, atol=1e-4,
     covers=("a[i, :]", "x[1:]", "x[a:b]", "x[::2]", "x[::-1]", "a[i] row view"))


@cuda.jit(device=True)
def _lang_scale(x, factor=2.0, offset=0):
    return x * factor + offset


@cuda.jit(device=True)
def _lang_divmod(a, b):
    return a // b, a % b


# numba compiles a signed device function eagerly (needs its driver): the
# numba cross-check binds it lazily.
@(cuda.jit(device=True) if os.environ.get("CUDAJIT_CASES_WITH_NUMBA")
  else cuda.jit("float32(float32)", device=True))
def _lang_square32(x):
    return x * x


def lang_device_functions(a, out):
    i = cuda.grid(1)
    if i < a.size:
        q, r = _lang_divmod(i, 7)
        out[i] = _lang_scale(a[i]) + _lang_scale(a[i], 2.0, q) + _lang_scale(a[i], 3.0, r) + _lang_square32(a[i])


def _lang_device_functions_ref(a, out):
    idx = np.arange(a.size)
    q, r = idx // 7, idx % 7
    x = a.astype(np.float64)
    out[...] = (x * 2 + x * 2 + q + x * 3 + r + (a * a).astype(np.float64)).astype(np.float32)


case("lang_device_defaults_kwargs", "void(float32[::1], float32[::1])",
     lambda r: [f32(r, n := size(r)), poison(n, np.float32)],
     one_d(128), _lang_device_functions_ref, [1], kernel=lang_device_functions, rtol=1e-5, atol=1e-5,
     covers=("device function default arguments", "tuple return",
             "explicit device signature"))


def lang_layout_merge(a, b, out, use_a):
    i = cuda.grid(1)
    if i < out.size:
        x = a
        if not use_a:
            x = b               # C joins A: x is array(float32, 1d, A)
        out[i] = x[i] * 2.0


def _lang_layout_merge_ref(a, b, out, use_a):
    out[...] = (a if use_a else b) * np.float32(2.0)


case("lang_layout_merge_c_and_a", "void(float32[::1], float32[:], float32[::1], boolean)",
     lambda r: [f32(r, n := size(r)), View(f32(r, 2 * n), (("slice", (slice(None, None, 2),)),)),
                poison(n, np.float32), bool(r.integers(0, 2))],
     one_d(128, arg=2), _lang_layout_merge_ref, [2], kernel=lang_layout_merge, rtol=1e-6,
     covers=("array layout merge C/A",))
# --- intrinsics (issue 5)
# numba.cuda's atomics beyond add, warp shuffles/votes, predicate barriers,
# bit operations and the math module, as ported kernels use them.

def atomic_minmax_2d(x, key, mx, mn):
    i = cuda.grid(1)
    if i < x.size:
        k = key[i]
        cuda.atomic.max(mx, (k % 4, k // 4), x[i])
        cuda.atomic.min(mn, (k % 4, k // 4), x[i])


def _atomic_minmax_ref(x, key, mx, mn):
    for k in range(16):
        sel = x[key == k]
        if sel.size:
            mx[k % 4, k // 4] = max(mx[k % 4, k // 4], sel.max())
            mn[k % 4, k // 4] = min(mn[k % 4, k // 4], sel.min())


def _minmax_inputs(r):
    n = size(r)
    return [f64(r, n, -100, 100), ints(r, n, 0, 16), f64(r, (4, 4), -1, 1), f64(r, (4, 4), -1, 1)]


case("atomic_max_min_2d_tuple_index", "void(float64[::1], int64[::1], float64[:, ::1], float64[:, ::1])",
     _minmax_inputs, one_d(256, arg=0), _atomic_minmax_ref, [2, 3], kernel=atomic_minmax_2d,
     covers=("cuda.atomic.max/min on float64 with a tuple index",))


def atomic_bits_u32(x, acc):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.or_(acc, 0, x[i])
        cuda.atomic.and_(acc, 1, x[i])
        cuda.atomic.xor(acc, 2, x[i])
        cuda.atomic.inc(acc, 3, np.uint32(1000000))
        cuda.atomic.sub(acc, 4, np.uint32(1))


def _atomic_bits_ref(x, acc):
    acc[0] |= np.bitwise_or.reduce(x)
    acc[1] &= np.bitwise_and.reduce(x)
    acc[2] ^= np.bitwise_xor.reduce(x)
    acc[3] += np.uint32(x.size)   # below the bound 1000000: no wrap
    acc[4] -= np.uint32(x.size)


def _atomic_bits_inputs(r):
    x = r.integers(0, 2**32, size(r), dtype=np.uint64).astype(np.uint32)
    acc = r.integers(0, 2**32, 5, dtype=np.uint64).astype(np.uint32)
    acc[3] = r.integers(0, 1000)
    acc[4] = np.uint32(2**31)
    return [x, acc]


case("atomic_bitwise_inc_sub_u32", "void(uint32[::1], uint32[::1])", _atomic_bits_inputs, one_d(256),
     _atomic_bits_ref, [1], kernel=atomic_bits_u32,
     covers=("cuda.atomic.or_/and_/xor/inc/sub on uint32",))


def warp_sum_shfl(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else 0.0
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    if cuda.laneid == 0 and i // 32 < out.size:
        out[i // 32] = v


def _warp_sum_ref(x, out):
    pad = np.zeros(out.size * 32)
    pad[:x.size] = x
    out[:] = pad.reshape(-1, 32).sum(1)


def _warp_sum_inputs(r):
    n = size(r)
    return [f64(r, n), poison((n + 31) // 32, np.float64)]


case("warp_sum_shfl_down_f64", "void(float64[::1], float64[::1])", _warp_sum_inputs, one_d(256, arg=0),
     _warp_sum_ref, [1], kernel=warp_sum_shfl, rtol=1e-12, atol=1e-12,
     covers=("cuda.shfl_down_sync on float64 (two 32-bit shuffles)", "cuda.laneid"))


def ballot_popc(x, out):
    i = cuda.grid(1)
    b = cuda.ballot_sync(0xffffffff, x[i] > 0)
    c = cuda.syncthreads_count(x[i] > 0)
    if cuda.laneid == 0:
        out[i // 32, 0] = cuda.popc(b)
        out[i // 32, 1] = c


def _ballot_popc_ref(x, out):
    w = (x > 0).reshape(-1, 32)
    out[:, 0] = w.sum(1)
    out[:, 1] = np.repeat((x > 0).reshape(-1, TPB).sum(1), TPB // 32)


def _ballot_inputs(r):
    nb = int(r.integers(4, 40))
    return [f32(r, nb * TPB), poison((nb * TPB // 32, 2), np.int32)]


case("ballot_popc_syncthreads_count", "void(float32[::1], int32[:, ::1])", _ballot_inputs,
     lambda args: (args[0].size // TPB, TPB), _ballot_popc_ref, [1], kernel=ballot_popc,
     covers=("cuda.ballot_sync", "cuda.popc", "cuda.syncthreads_count"))


def math_mix(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        m, e = math.frexp(x[i])
        f, w = math.modf(y[i])
        out[i] = (math.atan2(x[i], y[i]) + math.hypot(x[i], y[i]) + math.erf(x[i]) +
                  math.expm1(x[i] / 4) + math.log1p(abs(y[i])) + math.cosh(x[i] / 4) +
                  math.ldexp(m, e) + f + w + math.degrees(math.radians(x[i])) +
                  (1.0 if math.isfinite(x[i]) else 0.0))


def _math_mix_ref(x, y, out):
    f, w = np.modf(y)
    out[:] = (np.arctan2(x, y) + np.hypot(x, y) + np.vectorize(math.erf)(x) + np.expm1(x / 4) +
              np.log1p(np.abs(y)) + np.cosh(x / 4) + x + f + w + x + 1.0)


case("math_module_mix_f64", "void(float64[::1], float64[::1], float64[::1])",
     lambda r: [f64(r, 3000), f64(r, 3000), poison(3000, np.float64)], one_d(128),
     _math_mix_ref, [2], kernel=math_mix, rtol=1e-12, atol=1e-12,
     covers=("math.atan2/hypot/erf/expm1/log1p/cosh/frexp/ldexp/modf/degrees/radians/isfinite",))


CASES_BY_NAME.update({c.name: c for c in CASES})
