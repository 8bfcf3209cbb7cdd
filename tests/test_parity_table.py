"""Backs docs/numba_parity.md, the table of numba-cuda's documented API and
what cudajit does with each item.

Every "supported" kernel-language row has a probe here that must compile
(compile_ptx, no GPU); every "not supported" or "partial" row has a test
that the user sees the error the table quotes (type and a distinctive part
of the message). Host-API rows are checked by attribute; the launch-side
rows (kernel arguments, launch configuration, mapped arrays, the high-level
API) run once against the mock driver (tests/conftest.py: mock_driver).
When one of these tests starts failing because cudajit gained a feature,
update the table's row with the test.
"""
import cmath  # noqa: F401  (the probes' globals)
import collections
import enum
import math  # noqa: F401
import operator  # noqa: F401
import sys

import numpy as np
import pytest

import cudajit as cuda
from cudajit.errors import CompileError


def compile_probe(fn, sig, device=False, **options):
    return cuda.compile_ptx(fn, sig, device=device, cc=(9, 0), **options)


# ---------------------------------------------------------------------------
# Kernel language: supported rows (each probe must compile)
# ---------------------------------------------------------------------------

def k_thread_indexing(x):
    x[0] = (cuda.threadIdx.x + cuda.threadIdx.y + cuda.threadIdx.z + cuda.blockIdx.x
            + cuda.blockIdx.y + cuda.blockIdx.z)
    x[1] = (cuda.blockDim.x + cuda.blockDim.y + cuda.blockDim.z + cuda.gridDim.x
            + cuda.gridDim.y + cuda.gridDim.z)


def k_grid_gridsize(x):
    i = cuda.grid(1)
    j, k = cuda.grid(2)
    a, b, c = cuda.grid(3)
    n = cuda.gridsize(1)
    m, o = cuda.gridsize(2)
    p, q, r = cuda.gridsize(3)
    x[0] = i + j + k + a + b + c + n + m + o + p + q + r


def k_laneid_warpsize(x):
    x[0] = cuda.laneid + cuda.warpsize


def k_syncthreads(x):
    cuda.syncthreads()
    x[0] = (cuda.syncthreads_count(x[1] > 0) + cuda.syncthreads_and(x[1] > 0)
            + cuda.syncthreads_or(x[1] > 0))


def k_fences(x):
    cuda.threadfence()
    cuda.threadfence_block()
    cuda.threadfence_system()
    x[0] = 1


N_SHARED = 16


def k_shared_array(x):
    n = 8
    s = cuda.shared.array(32, np.float32)
    t = cuda.shared.array((N_SHARED, 2), dtype=cuda.float32)
    u = cuda.shared.array(n, "float32")
    s[cuda.threadIdx.x] = x[0]
    t[1, 1] = 1.0
    u[0] = 2.0
    cuda.syncthreads()
    x[1] = s[0] + t[1, 1] + u[0]


def k_dynamic_shared(x):
    s = cuda.shared.array(0, np.float32)
    v = cuda.shared.array(0, np.int32)[1:]
    s[cuda.threadIdx.x] = x[0]
    v[0] = 1
    cuda.syncthreads()
    x[1] = s[0] + v[0]


def k_local_array(x):
    a = cuda.local.array(4, np.float32)
    b = cuda.local.array((2, 2), np.int32)
    for i in range(4):
        a[i] = x[i]
    b[1, 1] = 3
    x[0] = a[3] + b[1, 1]


CONST_TABLE = np.arange(8, dtype=np.float64)
SCALE = 2.5


def k_const_array_like(x):
    c = cuda.const.array_like(CONST_TABLE)
    x[0] = c[3]


def k_global_constants(x):
    x[0] = CONST_TABLE[3] * SCALE


def k_atomic_arith(x, v):
    x[1] = (cuda.atomic.add(x, 0, v) + cuda.atomic.sub(x, 0, v) + cuda.atomic.max(x, 0, v)
            + cuda.atomic.min(x, 0, v) + cuda.atomic.nanmax(x, 0, v) + cuda.atomic.nanmin(x, 0, v))


def k_atomic_bits(x, v):
    x[1] = (cuda.atomic.and_(x, 0, v) + cuda.atomic.or_(x, 0, v) + cuda.atomic.xor(x, 0, v)
            + cuda.atomic.exch(x, 0, v) + cuda.atomic.cas(x, 0, v, v)
            + cuda.atomic.compare_and_swap(x, v, v))


def k_atomic_inc_dec(x, v):
    x[1] = cuda.atomic.inc(x, 0, v) + cuda.atomic.dec(x, 0, v)


def k_atomic_shared_and_tuple_index(x, v):
    s = cuda.shared.array((2, 2), np.float64)
    cuda.atomic.add(s, (0, 1), v)
    cuda.atomic.max(x, (1, 1), v)
    cuda.syncthreads()
    x[0, 0] = s[0, 1]


def k_vote(x):
    m = 0xFFFFFFFF
    cuda.syncwarp()
    cuda.syncwarp(m)
    x[0] = (cuda.all_sync(m, x[1] > 0) + cuda.any_sync(m, x[1] > 0)
            + cuda.eq_sync(m, x[1] > 0) + cuda.ballot_sync(m, x[1] > 0))


def k_shuffle(x):
    m = 0xFFFFFFFF
    x[0] = (cuda.shfl_sync(m, x[1], 0) + cuda.shfl_up_sync(m, x[1], 1)
            + cuda.shfl_down_sync(m, x[1], 1) + cuda.shfl_xor_sync(m, x[1], 1))


def k_match(x, y):
    m = 0xFFFFFFFF
    y[0] = cuda.match_any_sync(m, x[0])
    mask, pred = cuda.match_all_sync(m, x[0])
    y[1] = mask + pred


def k_masks(x):
    x[0] = cuda.activemask() + cuda.lanemask_lt()


def k_int_intrinsics(x, y):
    y[0] = cuda.popc(x[0]) + cuda.clz(x[0]) + cuda.ffs(x[0]) + cuda.brev(x[1])


def k_float_intrinsics(x):
    x[0] = cuda.fma(x[1], x[2], x[3]) + cuda.cbrt(x[1])


def k_selp(x):
    x[0] = cuda.selp(x[1] > 0, x[2], x[3])


def k_nanosleep(x):
    cuda.nanosleep(100)
    x[0] = 1


def k_fp16(x):
    a = x[0]
    b = x[1]
    h = cuda.fp16
    x[2] = (h.hadd(a, b) + h.hsub(a, b) + h.hmul(a, b) + h.hdiv(a, b) + h.hneg(a) + h.habs(a)
            + h.hfma(a, b, a) + h.hmax(a, b) + h.hmin(a, b))
    x[3] = (h.hsin(a) + h.hcos(a) + h.hlog(a) + h.hlog10(a) + h.hlog2(a) + h.hexp(a)
            + h.hexp10(a) + h.hexp2(a) + h.hsqrt(a) + h.hrsqrt(a) + h.hrcp(a))
    x[4] = h.hfloor(a) + h.hceil(a) + h.hrint(a) + h.htrunc(a)
    x[5] = (h.heq(a, b) + h.hne(a, b) + h.hgt(a, b) + h.hge(a, b) + h.hlt(a, b) + h.hle(a, b))


def k_float16_operators(x):
    x[2] = x[0] + x[1] * x[0] - x[1] / x[0]
    x[3] = math.sin(x[0]) + math.sqrt(x[1])


def k_grid_sync(x):
    g = cuda.cg.this_grid()
    g.sync()
    x[0] = 1


def d_grid_sync(x):
    cuda.cg.this_grid().sync()
    return x[0]


def k_builtins(x, y):
    s = 0.0
    for k, v in enumerate(range(3)):
        s += k * v
    for p, q in zip(range(2), range(2)):
        s += p + q
    c = complex(x[0], x[1])
    y[0] = (abs(x[0]) + bool(x[1]) + c.real + float(x[2]) + int(x[3]) + len(x)
            + min(x[0], x[1]) + max(x[0], x[1], x[2]) + pow(x[0], 2) + round(x[0]) + s)


def k_array_attributes(a, out):
    b = a[1:, ::2]
    out[0] = a.shape[0] + a.strides[1] + a.ndim + a.size + b[0, 0] + a.itemsize + b.nbytes + a.T[0, 1]


def k_print(x):
    print("x", x[0], 1.5, True)


@cuda.jit(device=True)
def dev_mul_add(a, b):
    return a * b + 1


@cuda.jit(device=True, inline="always", forceinline=True)
def dev_inline(a):
    return a + 1


def k_device_functions(x):
    x[0] = dev_mul_add(x[1], x[2]) + dev_inline(x[3])


def k_numpy_scalar_ufuncs(x, y):
    y[0] = (np.sin(x[0]) + np.arctan2(x[0], x[1]) + np.hypot(x[0], x[1]) + np.degrees(x[0])
            + np.log2(x[0]) + np.maximum(x[0], x[1]) + np.fmin(x[0], x[1])
            + np.logical_and(x[0] > 0, x[1] > 0) + np.greater(x[0], x[1]))


GLOBAL_CAI = type("GlobalDeviceArray", (), {"__cuda_array_interface__": {
    "shape": (4,), "typestr": "<f4", "data": (0x7F0000000000, False), "version": 3,
    "strides": None}})()


def k_global_device_array(x):
    x[0] = GLOBAL_CAI[1]


def k_ufunc_out(a, b, out):
    np.add(a, b, out)           # numba-cuda: each thread runs the whole array operation
    np.sin(a, out=out)


def k_numpy_int_ufuncs(x, y):
    y[0] = (np.bitwise_and(x[0], x[1]) + np.left_shift(x[0], 2) + np.invert(x[0])
            + np.bitwise_not(x[1]) + np.right_shift(x[1], 1))


Pt = collections.namedtuple("Pt", ["x", "y"])
ORIGIN = Pt(1.0, 2.0)


def k_tuple_args(x, t):
    x[0] = t[0] + t[1][0] + ORIGIN.x + ORIGIN[1]


def k_complex(z):
    z[0] = z[1] * z[2] / z[3] + abs(z[3]) + z[1].conjugate() + cmath.exp(z[1])


def k_none_argument(x, y):
    if y is None:
        x[0] = 1


def k_heterogeneous_tuple_loop(x):
    for v in (1, 2.0, 3):
        x[0] += v


MATH_UNARY = ["acos", "asin", "atan", "acosh", "asinh", "atanh", "cos", "sin", "tan", "cosh",
              "sinh", "tanh", "erf", "erfc", "exp", "expm1", "fabs", "gamma", "lgamma", "log",
              "log2", "log10", "log1p", "sqrt", "ceil", "floor", "isnan", "isinf", "isfinite",
              "frexp", "modf"]
MATH_BINARY = ["hypot", "atan2", "ldexp", "remainder", "pow", "copysign", "fmod"]
CMATH_SUPPORTED = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                   "phase", "polar", "isnan", "isinf", "isfinite", "acos", "acosh", "asin", "asinh",
                   "atan", "atanh"]
NP_UNARY = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
            "arccosh", "arctanh", "deg2rad", "radians", "rad2deg", "degrees", "log", "log2", "log10",
            "logical_not"]
NP_BINARY = ["arctan2", "hypot", "greater", "greater_equal", "less", "less_equal", "not_equal",
             "equal", "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "fmax", "fmin"]
NP_INT_UNARY = ["invert", "bitwise_not"]
NP_INT_BINARY = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
OPERATOR_BINARY = ["add", "and_", "eq", "floordiv", "ge", "gt", "iadd", "iand", "ifloordiv",
                   "ilshift", "imod", "imul", "ior", "ipow", "irshift", "isub", "itruediv", "ixor",
                   "le", "lshift", "lt", "mod", "mul", "ne", "or_", "pow", "rshift", "sub",
                   "truediv", "xor"]
OPERATOR_UNARY = ["invert", "neg", "not_", "pos"]


def _functions(template, names):
    """{name: function} made from `template` (its `{n}` the name), with this
    module's globals, so that the decoder sees ordinary module functions."""
    namespace = globals()
    out = {}
    for n in names:
        fname = "gen_" + template.split("(")[0].split()[-1] + "_" + n
        source = template.format(n=n).replace("FNAME", fname)
        exec(compile(source, __file__, "exec"), namespace)
        out[n] = namespace[fname]
    return out


MATH1 = _functions("def FNAME(x):\n    return math.{n}(x)\n", MATH_UNARY)
MATH2 = _functions("def FNAME(x, y):\n    return math.{n}(x, y)\n", MATH_BINARY)
CMATH1 = _functions("def FNAME(z):\n    return cmath.{n}(z)\n", CMATH_SUPPORTED)
NP1 = _functions("def FNAME(x):\n    return np.{n}(x)\n", NP_UNARY + NP_INT_UNARY)
NP2 = _functions("def FNAME(x, y):\n    return np.{n}(x, y)\n", NP_BINARY + NP_INT_BINARY)
OP2 = _functions("def FNAME(a, b):\n    return operator.{n}(a, b)\n", OPERATOR_BINARY)
OP1 = _functions("def FNAME(a):\n    return operator.{n}(a)\n", OPERATOR_UNARY)


def c_rect(r, p):
    return cmath.rect(r, p)


def k_local_alignment(x):
    a = cuda.local.array(4, np.float32, alignment=16)
    a[0] = x[0]
    x[1] = a[0]


def k_shared_alignment(x):
    a = cuda.shared.array(4, np.float32, alignment=16)
    a[0] = x[0]
    x[1] = a[0]


class Shape2(enum.Enum):
    CIRCLE = 10
    SQUARE = 20


def k_enum_members(x):
    x[0] = Color.GREEN + 1
    if x[1] == Shape2.SQUARE.value:
        x[2] = Shape2.CIRCLE.value


def k_cache_hints(x):
    x[0] = cuda.ldcg(x, 1) + cuda.ldca(x, 2) + cuda.ldcs(x, 3) + cuda.ldlu(x, 4) + cuda.ldcv(x, 5)
    cuda.stcg(x, 6, 1.0)
    cuda.stcs(x, 7, 2.0)
    cuda.stwb(x, 8, 3.0)
    cuda.stwt(x, 9, 4.0)


def k_array_view(x, out):
    t = cuda.local.array(2, np.complex64)
    t[0] = x[0]
    r = t.view(np.float32)
    out[0] = r[1] + x.view(np.float32)[0]


def k_namedtuple_construct(x):
    p = Pt(x[0], y=x[1])      # built in the kernel, a keyword too
    q = Pt(p.y, p.x)
    x[2] = p.x + q.x


def k_literal_unroll(x):
    s = 0.0
    for v in cuda.literal_unroll((1, 2.5, x[1])):   # numbers of several types: one loop
        s += v
    x[0] = s


def k_literal_unroll_mixed(x):
    for v in cuda.literal_unroll((x, 1.0)):
        x[0] = 1.0


def k_bf16(x, f, i):
    x[0] = cuda.bf16.hfma(x[1], x[2], cuda.bf16.hsin(x[3]))
    f[0] = cuda.bf16.bfloat16_to_float32(x[0])
    i[0] = cuda.bf16.bfloat16_as_int16(x[1]) + cuda.bf16.bfloat16_as_uint16(x[2])


def k_bf16_float32(x):
    x[0] = cuda.bf16.hadd(x[1], x[2])


def k_vector_type(x):
    v = cuda.float32x4(1.0, 2.0, 3.0, 4.0)
    u = cuda.uint32x4(cuda.uint32x2(1, 2), cuda.uint2(3, 4))   # from smaller vectors; C alias
    x[0] = v.x + v.w + cuda.float3(v.y, v.z, u.w).z


REC_DTYPE = np.dtype([("x", np.float32), ("y", np.int32), ("v", np.float64, (3,)),
                      ("inner", [("p", np.int16), ("q", np.complex64)])], align=True)
REC_ARRAY = f"array({cuda._core.record_type(REC_DTYPE)}, 1d, C)"


def k_records(a, b, out):
    i = cuda.grid(1)
    loc = cuda.local.array(2, REC_DTYPE)
    sh = cuda.shared.array(32, REC_DTYPE)
    if i < a.shape[0]:
        r = a[i]
        out[i] = r.x + r["y"] + r.v[1] + a[i].inner.p
        r.x = 2.5
        a[i]["y"] = 7
        r.v[2] = r.v[0]
        r.inner.q = 1j
        b[i] = a[i]
        loc[0] = a[i]
        sh[cuda.threadIdx.x] = loc[0]


SUPPORTED = [
    ("vector types", k_vector_type, "void(float32[::1])", False),
    ("cuda.bf16 arithmetic, math and exact conversions", k_bf16,
     "void(bfloat16[::1], float32[::1], int32[::1])", False),
    ("literal_unroll over numbers", k_literal_unroll, "void(float64[::1])", False),
    ("namedtuple construction", k_namedtuple_construct, "void(float64[::1])", False),
    ("cache-hint loads and stores", k_cache_hints, "void(float32[::1])", False),
    ("Enum / IntEnum members", k_enum_members, "void(int64[::1])", False),
    ("array .view(dtype)", k_array_view, "void(complex64[::1], float32[::1])", False),
    ("thread indexing", k_thread_indexing, "void(int64[::1])", False),
    ("grid/gridsize", k_grid_gridsize, "void(int64[::1])", False),
    ("laneid/warpsize", k_laneid_warpsize, "void(int64[::1])", False),
    ("syncthreads family", k_syncthreads, "void(int32[::1])", False),
    ("memory fences", k_fences, "void(int32[::1])", False),
    ("shared.array", k_shared_array, "void(float32[::1])", False),
    ("local.array alignment=", k_local_alignment, "void(float32[::1])", False),
    ("shared.array alignment=", k_shared_alignment, "void(float32[::1])", False),
    ("dynamic shared.array(0)", k_dynamic_shared, "void(float32[::1])", False),
    ("local.array", k_local_array, "void(float32[::1])", False),
    ("const.array_like", k_const_array_like, "void(float64[::1])", False),
    ("global constants", k_global_constants, "void(float64[::1])", False),
    *[(f"atomic add/sub/max/min/nanmax/nanmin[{t}]", k_atomic_arith, f"void({t}[::1], {t})", False)
      for t in ("int32", "uint32", "int64", "uint64", "float32", "float64")],
    *[(f"atomic and_/or_/xor/exch/cas[{t}]", k_atomic_bits, f"void({t}[::1], {t})", False)
      for t in ("int32", "uint32", "int64", "uint64")],
    *[(f"atomic inc/dec[{t}]", k_atomic_inc_dec, f"void({t}[::1], {t})", False)
      for t in ("uint32", "uint64")],
    ("atomics on shared arrays, tuple index", k_atomic_shared_and_tuple_index,
     "void(float64[:, ::1], float64)", False),
    ("vote intrinsics", k_vote, "void(int32[::1])", False),
    *[(f"shuffles[{t}]", k_shuffle, f"void({t}[::1])", False)
      for t in ("int32", "int64", "float32", "float64")],
    *[(f"match_any/all_sync[{t}]", k_match, f"void({t}[::1], int32[::1])", False)
      for t in ("int32", "int64", "float32", "float64")],
    ("activemask/lanemask_lt", k_masks, "void(uint32[::1])", False),
    *[(f"popc/clz/ffs/brev[{t}]", k_int_intrinsics, f"void({t}[::1], int64[::1])", False)
      for t in ("uint32", "uint64")],
    *[(f"popc/clz/ffs[{t}]", k_int_intrinsics, f"void({t}[::1], int64[::1])", False)
      for t in ("int8", "int16", "int32", "int64")],
    *[(f"fma/cbrt[{t}]", k_float_intrinsics, f"void({t}[::1])", False) for t in ("float32", "float64")],
    *[(f"selp[{t}]", k_selp, f"void({t}[::1])", False) for t in ("int32", "uint64", "float64")],
    ("nanosleep", k_nanosleep, "void(int32[::1])", False),
    ("cuda.fp16", k_fp16, "void(float16[::1])", False),
    ("float16 operators and math", k_float16_operators, "void(float16[::1])", False),
    ("cg.this_grid().sync()", k_grid_sync, "void(int32[::1])", False),
    ("grid sync in a device function", d_grid_sync, "int32(int32[::1])", True),
    ("builtins", k_builtins, "void(float64[::1], float64[::1])", False),
    ("array attributes and slicing", k_array_attributes, "void(float32[:, :], float32[::1])", False),
    ("print", k_print, "void(float32[::1])", False),
    ("device functions", k_device_functions, "void(float32[::1])", False),
    ("numpy ufuncs on scalars (float)", k_numpy_scalar_ufuncs, "void(float64[::1], float64[::1])", False),
    ("numpy ufuncs on scalars (int)", k_numpy_int_ufuncs, "void(int64[::1], int64[::1])", False),
    ("global device array captured by pointer", k_global_device_array, "void(float32[::1])", False),
    ("numpy ufuncs on arrays with an output", k_ufunc_out, "void(float32[::1], float32[::1], float32[::1])",
     False),
    ("tuple/namedtuple values", k_tuple_args, "void(float64[::1], Tuple(float64, UniTuple(int64, 2)))",
     False),
    ("complex", k_complex, "void(complex64[::1])", False),
    ("heterogeneous tuple loop", k_heterogeneous_tuple_loop, "void(float64[::1])", False),
    *[(f"math.{n}[{t}]", fn, f"({t})", True) for n, fn in MATH1.items()
      for t in ("float32", "float64", "int64")],
    *[(f"math.{n}[{t}]", fn, f"({t}, {'int64' if n == 'ldexp' else t})", True)
      for n, fn in MATH2.items() for t in ("float32", "float64")],
    *[(f"cmath.{n}[{t}]", CMATH1[n], f"({t})", True) for n in CMATH_SUPPORTED
      for t in ("complex64", "complex128")],
    ("cmath.rect", c_rect, "(float64, float64)", True),
    *[(f"np.{n}[{t}]", NP1[n], f"({t})", True) for n in NP_UNARY for t in ("float32", "float64")],
    *[(f"np.{n}[{t}]", NP2[n], f"({t}, {t})", True) for n in NP_BINARY
      for t in ("float32", "float64", "int64")],
    *[(f"np.{n}", NP1[n], "(int32)", True) for n in NP_INT_UNARY],
    *[(f"np.{n}", NP2[n], "(int64, int64)", True) for n in NP_INT_BINARY],
    ("None argument", k_none_argument, "void(float32[::1], none)", False),
    ("records (structured dtypes)", k_records, f"void({REC_ARRAY}, {REC_ARRAY}, float64[::1])", False),
]


@pytest.mark.parametrize("fn,sig,device", [p[1:] for p in SUPPORTED],
                         ids=[p[0] for p in SUPPORTED])
def test_supported_kernel_language(fn, sig, device):
    ptx, _ = compile_probe(fn, sig, device=device)
    assert ".version" in ptx


def test_random_device_functions_compile():
    from cudajit.random import (xoroshiro128p_normal_float32, xoroshiro128p_normal_float64,
                                xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

    def draw(states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = (xoroshiro128p_uniform_float32(states, i) + xoroshiro128p_normal_float32(states, i)
                      + xoroshiro128p_uniform_float64(states, i)
                      + xoroshiro128p_normal_float64(states, i))

    compile_probe(draw, "void(uint64[:, ::1], float64[::1])")
    from cudajit.random import create_xoroshiro128p_states, init_xoroshiro128p_states  # noqa: F401
    assert callable(create_xoroshiro128p_states) and callable(init_xoroshiro128p_states)


# ---------------------------------------------------------------------------
# Kernel language: unsupported and partial rows (the error a user sees)
# ---------------------------------------------------------------------------

def k_tuple_dtype(x):
    a = cuda.local.array(2, (np.int32, np.int32))
    x[0] = 1




def k_atomic_float16(x, v):
    cuda.atomic.add(x, 0, v)


def k_shfl_unsigned(x):
    x[0] = cuda.shfl_sync(0xFFFFFFFF, x[1], 0)


def k_clock64(x):
    x[0] = cuda.clock64()


def k_libdevice(x):
    x[0] = cuda.libdevice.sinf(x[1])






def k_slice_assign(a, out):
    a[0, 1:3] = 0


def k_array_method(x, y):
    y[0] = x.sum()


def k_array_creation(x):
    y = np.zeros(4)
    x[0] = y[0]


@cuda.jit("int64(int64)", device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def k_recursion(x):
    x[0] = fib(x[1])


def k_breakpoint(x):
    breakpoint()


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2


def k_enum_member(x):
    x[0] = Color.GREEN + 1


def k_pointer(p, x):
    x[0] = p[0]


STRING_REC = np.dtype([("x", np.float32), ("label", "U4")])


def k_string_field(x):
    a = cuda.local.array(2, STRING_REC)
    x[0] = len(a[0].label)


def k_atomic_on_records(a):
    cuda.atomic.add(a, 0, 1)


UNSUPPORTED = [
    ("literal_unroll over elements that do not unify", k_literal_unroll_mixed, "void(float64[::1])",
     r"iterating over tuple\(array\(f64, 1d, C\), f64\) is not supported: its elements have different types"),
    ("string field in a record", k_string_field, "void(float32[::1])",
     r"field 'label' holds numpy <U4 strings, which kernels cannot read or write"),
    ("array operations on arrays of records", k_atomic_on_records, f"void({REC_ARRAY})",
     r"cudajit\.atomic\.add\(\) does not take arrays of records"),
    ("local.array of tuples", k_tuple_dtype, "void(int32[::1])",
     r"dtype must be a numpy scalar type"),
    ("atomic on float16 (numba neither)", k_atomic_float16, "void(float16[::1], float16)",
     r"atomic\.add\(\) does not support arrays of float16"),
    ("shfl_sync on uint32 (numba neither)", k_shfl_unsigned, "void(uint32[::1])",
     r"only supports 32- and 64-bit ints and floats"),
    ("clock64 (numba neither)", k_clock64, "void(int64[::1])", r"unsupported attribute cudajit\.clock64"),
    ("cuda.bf16 on float32 (numba neither)", k_bf16_float32, "void(float32[::1])",
     r"cuda\.bf16\.hadd\(\) takes bfloat16 arguments \(as numba's does\), got f32"),
    ("slice assignment", k_slice_assign, "void(float32[:, :], float32[::1])",
     r"assigning to a slice of an array is not supported"),
    ("array methods", k_array_method, "void(float64[::1], float64[::1])",
     r"array has no attribute 'sum'"),
    ("array creation", k_array_creation, "void(float64[::1])", r"unsupported function numpy\.zeros"),
    ("recursion", k_recursion, "void(int64[::1])",
     r"recursive call to device function 'fib' is not supported"),
    ("breakpoint()", k_breakpoint, "void(float32[::1])", r"unsupported function builtins\.breakpoint"),
    ("pointer arguments", k_pointer, "void(CPointer(float32), float32[::1])",
     r"unknown type name 'CPointer'"),
]


@pytest.mark.parametrize("fn,sig,match", [p[1:] for p in UNSUPPORTED],
                         ids=[p[0] for p in UNSUPPORTED])
def test_unsupported_kernel_language(fn, sig, match):
    if sys.version_info < (3, 11) and "EnumType" in match:
        match = match.replace("EnumType", "EnumMeta")   # enum's metaclass before 3.11
    with pytest.raises(CompileError, match=match):
        compile_probe(fn, sig, device=not sig.startswith("void"))


@pytest.mark.parametrize("name", OPERATOR_BINARY + OPERATOR_UNARY)
def test_operator_module_functions(name):
    # each is its operator: the same type as `a + b`, `-a`, `a < b` ...
    fn = OP2.get(name) or OP1[name]
    sig = "(int64, int64)" if name in OP2 else "(int64)"
    ptx, ret = compile_probe(fn, sig, device=True)
    want = "bool" if name in ("eq", "ne", "lt", "le", "gt", "ge", "not_") else \
        "float64" if name in ("truediv", "itruediv") else "int64"
    assert str(ret) == want


def test_operator_module_function_outside_the_list():
    def mm(a):
        return operator.matmul(a, a)
    with pytest.raises(CompileError, match=r"unsupported function operator\.matmul"):
        compile_probe(mm, "(int64)", device=True)


def test_cffi_from_buffer_unsupported():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    namespace = {"ffi": ffi}
    exec(compile("def k(x):\n    p = ffi.from_buffer(x)\n    x[0] = 1\n", __file__, "exec"),
         namespace)
    with pytest.raises(CompileError, match=r"global 'ffi' of type 'cffi.api.FFI' cannot be used"):
        compile_probe(namespace["k"], "void(float32[::1])")


def test_libdevice_direct_calls():
    # tests/test_libdevice.py (every function compiles, values) and tests/gpu/test_libdevice_gpu.py
    from cudajit import libdevice  # noqa: F401
    assert ".entry" in compile_probe(k_libdevice, "void(float32[::1])")[0]


def test_raise_and_assert_compile_to_a_trap():
    # (exec: pytest rewrites the asserts written in this file)
    exec(compile("def k_assert(x):\n    assert x[0] > 0, 'positive'\n    x[1] = 1\n",
                 __file__, "exec"), globals())

    def k_raise(x):
        if x[0] < 0:
            raise ValueError("negative")
        x[1] = 1

    def k_div(x):
        x[0] = x[1] / x[2]

    for fn in (globals()["k_assert"], k_raise):
        plain = compile_probe(fn, "void(float32[::1])")[0]
        debug = compile_probe(fn, "void(float32[::1])", debug=True)[0]
        assert "trap;" in plain and "vprintf" not in plain   # numba: no effect without debug
        assert "trap;" in debug and "vprintf" in debug
    # debug=True division by zero: a trap, not a ZeroDivisionError on the host
    assert "trap;" not in compile_probe(k_div, "void(float64[::1])")[0]
    assert "trap;" in compile_probe(k_div, "void(float64[::1])", debug=True)[0]


def test_explicit_device_signature_is_applied():
    @cuda.jit("float32(float32)", device=True)
    def square(x):
        return x * x

    @cuda.jit(["int32(int32)", "float64(float64)"], device=True)
    def inc(x):
        return x + 1

    def caller(a):
        return square(a)

    def caller_inc(a):
        return inc(a)

    def add(a, b):
        return a + b

    # numba converts the arguments and the result to the declared types
    assert compile_probe(caller, "(float64)", device=True)[1] == "float32"
    assert compile_probe(add, "int32(int32, int32)", device=True)[1] == "int32"
    # of several signatures, the cheapest conversion (numba's overload ranking)
    assert compile_probe(caller_inc, "(int16)", device=True)[1] == "int32"      # promote
    assert compile_probe(caller_inc, "(float32)", device=True)[1] == "float64"  # safe, not unsafe
    assert compile_probe(caller_inc, "(int64)", device=True)[1] == "float64"
    with pytest.raises(CompileError, match=r"square\(\) is declared with the signatures float32\(float32\); "
                                           r"none takes the arguments \(complex128\)"):
        compile_probe(caller, "(complex128)", device=True)


def test_numba_type_objects_in_signatures():
    with pytest.raises(TypeError, match="There are no type variables left in numpy.float32"):
        cuda.float32[:]
    with pytest.raises(AttributeError, match="has no attribute 'void'"):
        cuda.void


def test_vector_type_names_are_device_only_objects():
    from cudajit.errors import DeviceOnlyError
    for name in ("float32x4", "float4", "int64x2", "longlong2", "uchar3", "half2", "float16x1"):
        assert getattr(cuda, name)._cudajit_symbol_ == f"cudajit.{name}"
    with pytest.raises(DeviceOnlyError, match="cudajit.float32x4 can only be used inside"):
        cuda.float32x4(1.0, 2.0, 3.0, 4.0)


# ---------------------------------------------------------------------------
# Kernel objects
# ---------------------------------------------------------------------------

def k_store(x):
    x[cuda.grid(1)] = 1.0


def eager(**options):
    return cuda.jit("void(float32[::1])", **options)(k_store)


def only_ptx(kernel):
    (ptx,) = kernel.inspect_ptx().values()
    return ptx


def test_kernel_object_members():
    k = eager()
    assert k.signatures == [("float32[::1]",)]
    overload = k.overloads[("float32[::1]",)]
    assert callable(overload.max_cooperative_grid_blocks)
    assert callable(k.forall)
    sig = ("float32[::1]",)
    assert "define" in k.inspect_llvm(sig)          # NVVM IR
    assert ".entry" in k.inspect_asm(sig)           # PTX
    assert "func" in k.inspect_ir(sig)              # typed IR (numba: inspect_types)
    assert not hasattr(k, "max_cooperative_grid_blocks")   # on overloads only, as in numba


@pytest.mark.parametrize("name", ["specialize", "specialized", "get_regs_per_thread", "get_shared_mem_per_block",
                                  "get_local_mem_per_thread", "get_const_mem_size", "get_max_threads_per_block"])
def test_present_dispatcher_members(name):
    # tests/test_kernel_queries.py (mock driver) and tests/gpu/test_kernel_queries_gpu.py
    assert hasattr(eager(), name)


def test_inspect_types_prints_the_source_with_its_typed_ir():
    import io
    buf = io.StringIO()
    eager().inspect_types(file=buf)
    text = buf.getvalue()
    assert text.startswith("k_store (float32[::1])\n" + "-" * 80)
    assert "# --- LINE" in text and "x[cuda.grid(1)] = 1.0" in text and text.rstrip().endswith("=" * 80)
    # the store of that line is listed under it, typed
    after = text.split("x[cuda.grid(1)] = 1.0", 1)[1]
    assert after.lstrip().startswith("#") and "store" in after.split("# --- LINE", 1)[0]


def test_extensions_member_and_option():
    """extensions= and kernel.extensions (numba's list); their launches:
    tests/test_host_api_parity.py."""
    assert eager().extensions == []
    assert eager(extensions=[]).extensions == []


def test_launchconfig_module_partial():
    from cudajit import launchconfig
    assert launchconfig.current_launch_config() is None
    with pytest.raises(RuntimeError, match="No launch config set for this thread"):
        launchconfig.ensure_current_launch_config()
    with pytest.raises(AttributeError, match="'Dispatcher' object has no attribute 'mark_launch_config_sensitive'"):
        eager().mark_launch_config_sensitive


@pytest.mark.parametrize("value, want", [("MaxShared", 100), ("MaxL1", 0), ("default", -1), (30, 30)])
def test_shared_memory_carveout_option(value, want):
    # set on the loaded kernel: tests/test_host_api_parity.py (mock), tests/gpu/test_host_api_parity_gpu.py
    assert eager(shared_memory_carveout=value)._options["shared_memory_carveout"] == want
    with pytest.raises(ValueError, match="Carveout must be between -1 and 100"):
        eager(shared_memory_carveout=101)


@pytest.mark.parametrize("options", [dict(max_registers=32), dict(lto=True), dict(boundscheck=True)],
                         ids=lambda o: next(iter(o)))
def test_options_accepted_without_effect(options):
    assert only_ptx(eager(**options)) == only_ptx(eager())


@pytest.mark.parametrize("bounds, directives", [
    (128, [".maxntid 128, 1, 1"]),
    ((128, 2), [".maxntid 128, 1, 1", ".minnctapersm 2"]),
    ((256, 1, 4), [".maxntid 256, 1, 1", ".minnctapersm 1", ".maxclusterrank 4"]),
])
def test_launch_bounds(bounds, directives):
    ptx = only_ptx(eager(launch_bounds=bounds))
    for d in directives:
        assert d in ptx
    assert ".maxntid" not in only_ptx(eager())
    with pytest.raises(ValueError, match="launch_bounds: max threads per block must be 1 to 1024"):
        eager(launch_bounds=(4096, 1))


def test_declare_device_and_link(tmp_path):
    # tests/test_foreign.py (compile and link) and tests/gpu/test_foreign_gpu.py (run)
    cu = tmp_path / "functions.cu"
    cu.write_text('extern "C" __device__ int twice(float* r, float x) { *r = 2 * x; return 0; }\n')
    twice = cuda.declare_device("twice", "float32(float32)")

    def k(x):
        x[0] = twice(x[1])

    assert cuda.jit("void(float32[::1])", link=[str(cu)])(k).signatures == [("float32[::1]",)]
    with pytest.raises(FileNotFoundError, match="no such file"):
        eager(link=["/nonexistent/functions.cu"])
    with pytest.raises(NotImplementedError, match=r"use_cooperative=True\) is not supported"):
        cuda.declare_device("twice", "float32(float32)", use_cooperative=True)


def test_options_with_effect():
    def k_math(x):
        x[0] = math.sqrt(x[1]) / x[2]

    base = cuda.jit("void(float32[::1])")(k_math)
    assert "approx" in only_ptx(cuda.jit("void(float32[::1])", fastmath=True)(k_math))
    assert "approx" not in only_ptx(base)
    assert ".loc" in only_ptx(eager(lineinfo=True)) and ".loc" not in only_ptx(eager())
    assert only_ptx(eager(debug=True)) != only_ptx(eager())
    assert only_ptx(eager(opt=False)) != only_ptx(eager())


# ---------------------------------------------------------------------------
# High-level API
# ---------------------------------------------------------------------------

def test_high_level_api_present():
    assert isinstance(cuda.vectorize(["float32(float32)"], target="cuda")(lambda a: a + 1),
                      cuda.CUDAUFunc)
    assert isinstance(cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)",
                                       target="cuda")(lambda a, o: None), cuda.CUDAGUFunc)
    assert isinstance(cuda.reduce(lambda a, b: a + b), cuda.Reduce)
    with pytest.raises(ValueError, match="compiles for target='cuda' only"):
        cuda.vectorize(["float32(float32)"], target="cpu")


# ---------------------------------------------------------------------------
# Host API
# ---------------------------------------------------------------------------

HOST_PRESENT = [
    "to_device", "device_array", "device_array_like", "as_cuda_array", "is_cuda_array",
    "from_cuda_array_interface", "pinned_array", "pinned_array_like", "pinned", "mapped_array",
    "mapped_array_like", "mapped", "managed_array", "stream", "default_stream",
    "legacy_default_stream", "per_thread_default_stream", "external_stream", "event",
    "event_elapsed_time", "defer_cleanup", "In", "Out", "InOut", "is_available", "detect",
    "select_device", "get_current_device", "list_devices", "gpus", "close", "current_context",
    "synchronize", "profile_start", "profile_stop", "profiling", "is_float16_supported",
    "is_bfloat16_supported", "runtime", "compile_ptx", "MemoryInfo", "compile", "compile_for_current_device",
    "compile_ptx_for_current_device", "declare_device", "open_ipc_array", "IpcArrayHandle",
    "IpcHandle", "require_context", "launchconfig",
]

HOST_MISSING = [
    "set_memory_manager", "BaseCUDAMemoryManager",
    "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin", "MemoryPointer", "MappedMemory",
    "PinnedMemory", "compile_all", "LTOIR", "CUSource", "PTXSource",
]


@pytest.mark.parametrize("name", HOST_PRESENT)
def test_host_api_present(name):
    assert getattr(cuda, name) is not None


@pytest.mark.parametrize("name", HOST_MISSING)
def test_host_api_missing(name):
    with pytest.raises(AttributeError, match=f"module 'cudajit' has no attribute '{name}'"):
        getattr(cuda, name)


@pytest.mark.parametrize("cls,present,missing", [
    ("DeviceNDArray", ["copy_to_host", "copy_to_device", "is_c_contiguous", "is_f_contiguous",
                       "ravel", "reshape", "split", "view", "squeeze", "T", "transpose", "bind",
                       "getitem", "setitem", "device_ctypes_pointer", "__cuda_array_interface__",
                       "get_ipc_handle"], []),
    ("Stream", ["synchronize", "auto_synchronize", "query", "add_callback", "async_done"], []),
    ("Event", ["query", "record", "synchronize", "wait", "elapsed_time"], []),
    ("Context", ["get_memory_info", "synchronize", "push", "pop"], []),
    ("Device", ["uuid", "supports_float16"], []),
])
def test_host_classes(cls, present, missing):
    klass = getattr(cuda, cls)
    for name in present:
        assert hasattr(klass, name), (cls, name)
    for name in missing:
        assert not hasattr(klass, name), (cls, name)


@pytest.mark.parametrize("variable", ["NUMBA_ENABLE_CUDASIM", "NUMBA_CUDA_MEMORY_MANAGER"])
def test_numba_environment_variables_not_read(variable):
    """No simulator, no EMM plugin: neither the package nor its extension
    mentions numba's variables."""
    from pathlib import Path
    package = Path(cuda.__file__).parent
    for path in package.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".so"):
            assert variable.encode() not in path.read_bytes(), path


def test_compile_ptx_of_a_lambda_device_function():
    """A lambda compiled alone as a device function: its IR name '<lambda>'
    becomes a PTX-safe symbol (libNVVM refuses '<' and '>'); a signature-free
    vectorize of a lambda types it the same way."""
    compile_probe(lambda a: a + 1, "(float64)", device=True)
    compile_probe(lambda x: None, "void(float64[::1])")
    ufunc = cuda.vectorize(lambda a, b: a * b)
    assert ufunc._resolve((np.ones(2, np.float32), np.ones(2, np.float32)))[1] == np.float32


def test_compile_ptx_abi_options():
    def add(a, b):
        return a + b

    ptx, _ = compile_probe(add, "(int32, int32)", device=True)
    assert ".func  (.param .b64 func_retval0) add(" in ptx   # the plain Python name, as abi="c"
    ptx, _ = cuda.compile_ptx(add, "int32(int32, int32)", device=True, abi="c", abi_info={"abi_name": "my_add"})
    assert "my_add(" in ptx and " add(" not in ptx
    with pytest.raises(NotImplementedError, match="abi='numba' for device functions"):
        cuda.compile_ptx(add, "int32(int32, int32)", device=True, abi="numba")
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        cuda.compile_ptx(k_store, "void(float32[::1])", abi="c")
    with pytest.raises(ValueError, match="compile_ptx: abi_info has unknown key"):
        cuda.compile_ptx(add, "int32(int32, int32)", device=True, abi_info={"name": "x"})


# ---------------------------------------------------------------------------
# Launch-side rows, against the mock driver (one subprocess)
# ---------------------------------------------------------------------------

MOCK_CHECKS = """
import collections, enum
import numpy as np
import cudajit as cuda

def outcome(f):
    try:
        f()
        return "ok"
    except Exception as e:
        return type(e).__name__ + ": " + str(e)

Pt = collections.namedtuple("Pt", ["x", "y"])

@cuda.jit
def by_index(p, out):
    out[0] = p[0] + p[1]

@cuda.jit
def by_field(p, out):
    out[0] = p.x

@cuda.jit
def by_missing_field(p, out):
    out[0] = p.z

@cuda.jit
def take(v, out):
    out[0] = 1

@cuda.jit
def take_enum(v, out):
    out[0] = 1 if v == Shape.SQUARE else 2

class Shape(enum.Enum):
    SQUARE = 1

class Named(enum.Enum):
    THING = "thing"

class Color(enum.IntEnum):
    RED = 1

G = cuda.device_array(4)

@cuda.jit
def uses_global(out):
    out[0] = G[0]

@cuda.jit
def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i

@cuda.jit
def grid_sync(out):
    cuda.cg.this_grid().sync()
    out[0] = 1

def multiply(a, b):
    return a * b

d = cuda.device_array(4)
results = {
    "namedtuple by index": outcome(lambda: by_index[1, 1](Pt(1.0, 2.0), d)),
    "namedtuple by field": outcome(lambda: by_field[1, 1](Pt(1.0, 2.0), d)),
    "namedtuple no such field": outcome(lambda: by_missing_field[1, 1](Pt(1.0, 2.0), d)),
    "IntEnum argument": outcome(lambda: take[1, 1](Color.RED, d)),
    "Enum argument": outcome(lambda: take_enum[1, 1](Shape.SQUARE, d)),
    "Enum argument of a string": outcome(lambda: take[1, 1](Named.THING, d)),
    "global device array": outcome(lambda: uses_global[1, 1](d)),
    "launch 4-tuple": outcome(lambda: fill[1, 4, cuda.stream(), 64](d)),
    "forall": outcome(lambda: fill.forall(4)(d)),
    "numpy argument": outcome(lambda: fill[1, 4](np.zeros(4))),
    "Out wrapper": outcome(lambda: fill[1, 4](cuda.Out(np.zeros(4)))),
    "gpus context": outcome(lambda: [cuda.gpus[0].__enter__(), cuda.gpus[0].__exit__(None, None, None)]),
    "vectorize": outcome(lambda: cuda.vectorize(["float32(float32)"], target="cuda")(
        lambda a: a + 1)(np.ones(4, np.float32))),
    "guvectorize": outcome(lambda: cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)",
        target="cuda")(lambda a, o: None)(np.ones((2, 3)))),
    "reduce": outcome(lambda: cuda.reduce(lambda a, b: a + b)(np.arange(10.0))),
    "mapped copy_to_host": outcome(lambda: cuda.mapped_array(4).copy_to_host()),
    "mapped members": [hasattr(cuda.mapped_array(4), n) for n in ("copy_to_device", "split")],
    "stream add_callback": outcome(lambda: cuda.stream().add_callback(lambda s, status, arg: None)),
    "get_ipc_handle": outcome(lambda: type(d.get_ipc_handle()).__name__),
    "context reset": outcome(lambda: cuda.current_context().reset()),
    "device reset": outcome(lambda: cuda.get_current_device().reset()),
    "vectorize without signatures": outcome(lambda: cuda.vectorize(target="cuda")(
        multiply)(np.ones(4), np.ones(4))),
    "vectorize without signatures, lambda": outcome(lambda: cuda.vectorize(target="cuda")(
        lambda a, b: a * b)(np.ones(4), np.ones(4))),
    "devices": outcome(lambda: [cuda.gpus.current, cuda.get_current_device().id,
        cuda.get_current_device().name, cuda.get_current_device().compute_capability,
        cuda.get_current_device().uuid, cuda.select_device(0), list(cuda.list_devices()),
        cuda.detect(), cuda.is_available()]),
    "context": outcome(lambda: [cuda.current_context().get_memory_info(), cuda.synchronize()]),
    "streams": outcome(lambda: [cuda.stream().synchronize(), cuda.default_stream(),
        cuda.legacy_default_stream(), cuda.per_thread_default_stream(), cuda.external_stream(0x10),
        cuda.stream().auto_synchronize().__enter__()]),
    "events": outcome(lambda: [cuda.event(), cuda.event(timing=False).record(),
        cuda.event().query()]),
    "profiler": outcome(lambda: [cuda.profile_start(), cuda.profile_stop()]),
    "host memory": outcome(lambda: [cuda.pinned_array(4), cuda.managed_array(4),
        cuda.mapped_array(4), cuda.pinned(np.zeros(4)).__enter__()]),
    "close": outcome(lambda: cuda.close()),
}
grid_sync[1, 32](d)
results["max_cooperative_grid_blocks"] = type(
    grid_sync.overloads[("float64[::1]",)].max_cooperative_grid_blocks(32)).__name__
results["launcher members"] = sorted(n for n in dir(fill[1, 1]) if not n.startswith("_"))
print(repr(results))
"""


def test_launch_side_rows_with_mock_driver(run_python, mock_driver):
    import ast
    r = ast.literal_eval(run_python(MOCK_CHECKS, driver=mock_driver).strip().splitlines()[-1])
    for ok in ("namedtuple by index", "namedtuple by field", "IntEnum argument", "Enum argument",
               "launch 4-tuple", "forall",
               "numpy argument", "Out wrapper", "gpus context", "vectorize", "guvectorize", "reduce",
               "vectorize without signatures", "devices", "context", "streams", "events",
               "profiler", "host memory", "close"):
        assert r[ok] == "ok", (ok, r[ok])
    assert r["namedtuple no such field"].startswith("CompileError") and \
        "has no attribute 'z'" in r["namedtuple no such field"]
    assert r["Enum argument of a string"].startswith("TypeError") and \
        "an enum member passes as its value, which must be a number" in r["Enum argument of a string"]
    assert r["global device array"] == "ok"   # captured by pointer, as numba-cuda does
    assert r["mapped copy_to_host"] == "ok" and r["stream add_callback"] == "ok"
    assert r["mapped members"] == [True, True]
    assert r["get_ipc_handle"] == "ok"
    for what in ("context", "device"):
        assert r[f"{what} reset"].startswith("NotImplementedError") and \
            "keeps each device's primary context" in r[f"{what} reset"]
    # the signature-free form compiles the function alone (compile_ptx, device=True),
    # a lambda too (test_compile_ptx_of_a_lambda_device_function)
    assert r["vectorize without signatures, lambda"] == "ok"
    assert r["max_cooperative_grid_blocks"] == "int"
    assert r["launcher members"] == ["args", "blockdim", "dispatcher", "griddim", "pre_launch_callbacks",
                                     "sharedmem", "stream"]
