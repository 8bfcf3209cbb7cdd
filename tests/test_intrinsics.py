"""Issue 5, the intrinsic part: numba.cuda's synchronisation, atomics, warp
functions, bit operations, math module and shared/local memory, with numba's
types and semantics.

CI (no GPU):
  * the result type of every intrinsic for every argument type equals the
    one numba-cuda 0.30 infers (`numba.cuda.compile_ptx(..., device=True)`),
  * every intrinsic/type compiles (typed IR verified, libNVVM) to PTX that
    holds the expected instruction and that ptxas accepts for sm_90.
GPU (@pytest.mark.gpu): each family launched on fresh random data and
compared with numpy.
"""
import math
import os
import re
import textwrap

import numpy as np
import pytest

import cudajit
from ptxas_check import assemble

ARCH = "sm_90"




def make(src, cuda_module=cudajit, name=None):
    """The function defined by `src` with `cuda` bound to `cuda_module`."""
    g = {"cuda": cuda_module, "math": math, "np": np}
    src = textwrap.dedent(src)
    exec(compile(src, f"<intrinsics:{name or 'k'}>", "exec"), g)
    fname = re.search(r"def (\w+)\(", src).group(1)
    return g[fname]


def ptxas_ok(ptx, tmp_path, tag="k"):
    assemble(ptx, tmp_path, ARCH, name=tag)


# ---------------------------------------------------------------------------
# Result types, cross-checked with numba-cuda
# ---------------------------------------------------------------------------

F = ("float32", "float64")
I = ("int32", "int64", "uint32", "uint64")
MATH_UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "erf", "erfc",
              "expm1", "gamma", "lgamma", "log1p", "log2", "log10", "exp2", "trunc", "degrees",
              "radians", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs")
MATH_BINARY_INT = ("atan2", "hypot")
MATH_BINARY = ("copysign", "fmod", "nextafter", "remainder")

TYPE_CASES = []   # (id, source of a device function `f`, numba signature)
for fn in MATH_UNARY:
    for t in F + ("int64", "int32", "uint64"):
        if fn == "exp2":
            continue   # numba-cuda registers exp2 only when math has it typed for fp16 (version-dependent)
        TYPE_CASES.append((f"math.{fn}({t})", f"def f(x):\n    return math.{fn}(x)\n", f"({t},)"))
for fn in MATH_BINARY_INT:
    for a, b in (("float32", "float32"), ("float64", "float64"), ("int64", "int64"),
                 ("float32", "int32"), ("float32", "float64")):
        TYPE_CASES.append((f"math.{fn}({a},{b})", f"def f(x, y):\n    return math.{fn}(x, y)\n",
                           f"({a}, {b})"))
for fn in MATH_BINARY:
    for a, b in (("float32", "float32"), ("float64", "float64"), ("float32", "float64")):
        TYPE_CASES.append((f"math.{fn}({a},{b})", f"def f(x, y):\n    return math.{fn}(x, y)\n",
                           f"({a}, {b})"))
for fn in ("isnan", "isinf", "isfinite"):
    for t in F + ("int64", "int32", "uint64"):
        TYPE_CASES.append((f"math.{fn}({t})", f"def f(x):\n    return math.{fn}(x)\n", f"({t},)"))
for t in F:
    TYPE_CASES.append((f"math.ldexp({t})", "def f(x, e):\n    return math.ldexp(x, e)\n", f"({t}, int32)"))
    TYPE_CASES.append((f"math.frexp({t})", "def f(x):\n    m, e = math.frexp(x)\n    return m + e\n",
                       f"({t},)"))
    TYPE_CASES.append((f"math.modf({t})", "def f(x):\n    a, b = math.modf(x)\n    return a * b\n",
                       f"({t},)"))
    TYPE_CASES.append((f"cuda.fma({t})", "def f(a, b, c):\n    return cuda.fma(a, b, c)\n",
                       f"({t}, {t}, {t})"))
    TYPE_CASES.append((f"cuda.cbrt({t})", "def f(a):\n    return cuda.cbrt(a)\n", f"({t},)"))
for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    for fn in ("popc", "clz", "ffs"):
        if fn == "ffs" and t in ("int8", "int16", "uint8", "uint16"):
            continue   # numba types these but has no lowering for them
        TYPE_CASES.append((f"cuda.{fn}({t})", f"def f(x):\n    return cuda.{fn}(x)\n", f"({t},)"))
for t in ("uint32", "uint64", "int32"):
    TYPE_CASES.append((f"cuda.brev({t})", "def f(x):\n    return cuda.brev(x)\n", f"({t},)"))
for t in ("float32", "float64", "int32", "uint64", "int16"):
    TYPE_CASES.append((f"cuda.selp({t})", "def f(c, a, b):\n    return cuda.selp(c, a, b)\n",
                       f"(boolean, {t}, {t})"))
for t in ("int32", "int64", "float32", "float64"):
    for fn in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
        TYPE_CASES.append((f"cuda.{fn}({t})", f"def f(v, l):\n    return cuda.{fn}(0xffffffff, v, l)\n",
                           f"({t}, int32)"))
    TYPE_CASES.append((f"cuda.match_any_sync({t})", "def f(v):\n    return cuda.match_any_sync(-1, v)\n",
                       f"({t},)"))
    TYPE_CASES.append((f"cuda.match_all_sync({t})",
                       "def f(v):\n    m, p = cuda.match_all_sync(-1, v)\n    return m + p\n", f"({t},)"))
for fn in ("all_sync", "any_sync", "eq_sync", "ballot_sync"):
    TYPE_CASES.append((f"cuda.{fn}", f"def f(p):\n    return cuda.{fn}(0xffffffff, p)\n", "(int32,)"))
for fn in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
    TYPE_CASES.append((f"cuda.{fn}", f"def f(p):\n    return cuda.{fn}(p)\n", "(int32,)"))
TYPE_CASES.append(("cuda.activemask", "def f():\n    return cuda.activemask()\n", "()"))
TYPE_CASES.append(("cuda.lanemask_lt", "def f():\n    return cuda.lanemask_lt()\n", "()"))
ATOMIC_TYPES = {
    "add": F + I, "sub": F + I, "max": F + I, "min": F + I, "nanmax": F + I, "nanmin": F + I,
    "and_": I, "or_": I, "xor": I, "exch": I, "inc": ("uint32", "uint64"), "dec": ("uint32", "uint64"),
}
for op, types in ATOMIC_TYPES.items():
    for t in types:
        TYPE_CASES.append((f"atomic.{op}({t})",
                           f"def f(a, i, v):\n    return cuda.atomic.{op}(a, i, v)\n",
                           f"({t}[::1], int64, {t})"))
        TYPE_CASES.append((f"atomic.{op}({t},2d)",
                           f"def f(a, i, v):\n    return cuda.atomic.{op}(a, (i, 1), v)\n",
                           f"({t}[:, ::1], int32, {t})"))
for t in I:
    TYPE_CASES.append((f"atomic.cas({t})", "def f(a, i, o, v):\n    return cuda.atomic.cas(a, i, o, v)\n",
                       f"({t}[::1], int64, {t}, {t})"))
    TYPE_CASES.append((f"atomic.compare_and_swap({t})",
                       "def f(a, o, v):\n    return cuda.atomic.compare_and_swap(a, o, v)\n",
                       f"({t}[::1], {t}, {t})"))


def _split_args(argsig):
    """'(a, b[:, ::1])' -> ('a', 'b[:, ::1]'): cudajit takes a tuple of argument types."""
    parts, depth, cur = [], 0, ""
    for ch in argsig.strip()[1:-1]:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch in "[(" 
        depth -= ch in "])"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return tuple(parts)


def _norm(t):
    return str(t).replace(" ", "").lower()


@pytest.fixture(scope="module")
def numba_cuda():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    return pytest.importorskip("numba.cuda")


@pytest.mark.parametrize("src,argsig", [pytest.param(s, a, id=i) for i, s, a in TYPE_CASES])
def test_result_type_matches_numba(numba_cuda, src, argsig):
    _, want = numba_cuda.compile_ptx(make(src, numba_cuda), argsig, device=True, cc=(9, 0))
    ptx, got = cudajit.compile_ptx(make(src), _split_args(argsig), device=True, arch=ARCH)
    assert _norm(got) == _norm(want), f"cudajit {got} != numba {want}"
    assert "Generated by NVIDIA NVVM" in ptx


# ---------------------------------------------------------------------------
# Kernels: PTX holds the instruction, ptxas accepts it
# ---------------------------------------------------------------------------

PTX_CASES = []   # (id, kernel source, signature, regex the PTX must match)


def ptx_case(name, src, sig, pattern):
    PTX_CASES.append(pytest.param(src, sig, pattern, id=name))


ptx_case("syncthreads_count", """
def k(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_count(a[i] > 0)
""", "void(float32[::1], int32[::1])", r"bar\.red\.popc")
ptx_case("syncthreads_and", """
def k(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_and(a[i] > 0)
""", "void(float32[::1], int32[::1])", r"bar\.red\.and")
ptx_case("syncthreads_or", """
def k(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_or(a[i] > 0)
""", "void(float32[::1], int32[::1])", r"bar\.red\.or")
ptx_case("threadfences", """
def k(a):
    cuda.threadfence()
    cuda.threadfence_block()
    cuda.threadfence_system()
    a[0] = 1
""", "void(int32[::1])", r"membar\.sys|fence\.sc\.sys")
ptx_case("syncwarp", """
def k(a):
    cuda.syncwarp()
    cuda.syncwarp(0xffff)
    a[0] = 1
""", "void(int32[::1])", r"bar\.warp\.sync")
ptx_case("nanosleep", """
def k(a):
    cuda.nanosleep(100)
    a[0] = 1
""", "void(int32[::1])", r"nanosleep")
ptx_case("activemask_lanemask", """
def k(a):
    i = cuda.grid(1)
    a[i] = cuda.activemask() + cuda.lanemask_lt() + cuda.laneid + cuda.warpsize
""", "void(uint32[::1])", r"activemask\.b32")

for t in ("int32", "int64", "float32", "float64"):
    for fn, mode in (("shfl_sync", "idx"), ("shfl_up_sync", "up"), ("shfl_down_sync", "down"),
                     ("shfl_xor_sync", "bfly")):
        ptx_case(f"{fn}_{t}", f"""
def k(a, out):
    i = cuda.grid(1)
    out[i] = cuda.{fn}(0xffffffff, a[i], 3)
""", f"void({t}[::1], {t}[::1])", rf"shfl\.sync\.{mode}\.b32")
    ptx_case(f"match_{t}", """
def k(a, out, ok):
    i = cuda.grid(1)
    m, p = cuda.match_all_sync(0xffffffff, a[i])
    out[i] = cuda.match_any_sync(0xffffffff, a[i]) + m
    ok[i] = p
""", f"void({t}[::1], int32[::1], boolean[::1])", r"match\.(any|all)\.sync")
for fn, ins in (("all_sync", "vote.sync.all"), ("any_sync", "vote.sync.any"),
                ("eq_sync", "vote.sync.uni"), ("ballot_sync", "vote.sync.ballot")):
    ptx_case(fn, f"""
def k(a, out):
    i = cuda.grid(1)
    out[i] = cuda.{fn}(0xffffffff, a[i] > 0)
""", "void(float64[::1], uint32[::1])", re.escape(ins))
for t in ("int32", "int64", "uint32", "uint64", "int8", "uint16"):
    ptx_case(f"bits_{t}", """
def k(a, out, f):
    i = cuda.grid(1)
    out[i] = cuda.popc(a[i]) + cuda.clz(a[i])
    f[i] = cuda.ffs(a[i])
""", f"void({t}[::1], {t}[::1], uint32[::1])", r"popc\.b(32|64)")
for t in ("uint32", "uint64"):
    ptx_case(f"brev_{t}", """
def k(a, out):
    i = cuda.grid(1)
    out[i] = cuda.brev(a[i])
""", f"void({t}[::1], {t}[::1])", r"brev\.b(32|64)")
for t in ("float32", "float64"):
    ptx_case(f"fma_cbrt_selp_{t}", """
def k(a, b, out):
    i = cuda.grid(1)
    out[i] = cuda.fma(a[i], b[i], a[i]) + cuda.cbrt(b[i]) + cuda.selp(a[i] > b[i], a[i], b[i])
""", f"void({t}[::1], {t}[::1], {t}[::1])", r"fma\.rn\.f(32|64)")

for op, types in ATOMIC_TYPES.items():
    for t in types:
        pattern = r"atom\.|red\."
        ptx_case(f"atomic_{op}_{t}_global", f"""
def k(a, v, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.{op}(a, i % 7, v[i])
""", f"void({t}[::1], {t}[::1], {t}[::1])", pattern)
        ptx_case(f"atomic_{op}_{t}_shared2d", f"""
def k(a, v, old):
    i = cuda.grid(1)
    s = cuda.shared.array((4, 8), np.{t})
    s[i % 4, i % 8] = v[i]
    cuda.syncthreads()
    old[i] = cuda.atomic.{op}(s, (i % 4, 1), v[i])
    cuda.syncthreads()
    a[i] = s[i % 4, i % 8]
""", f"void({t}[::1], {t}[::1], {t}[::1])", pattern)
for t in I:
    ptx_case(f"atomic_cas_{t}", """
def k(a, v, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.cas(a, i % 5, v[i], v[i] + 1)
    old[i] += cuda.atomic.compare_and_swap(a, v[i], v[i])
""", f"void({t}[::1], {t}[::1], {t}[::1])", r"atom\.(global\.)?cas|atom\.cas")
# numba's wrap rules: atom.inc/dec.u32 have them in hardware (numba calls the
# same NVVM intrinsics); 64 bits are a CAS loop (no atom.inc.u64).
ptx_case("atomic_inc_dec_uint32_hardware", """
def k(a, v, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.inc(a, i % 7, v[i]) + cuda.atomic.dec(a, i % 5, v[i])
""", "void(uint32[::1], uint32[::1], uint32[::1])", r"atom\.(global\.)?inc\.u32(.|\n)*atom\.(global\.)?dec\.u32")
ptx_case("atomic_inc_dec_uint64_cas_loop", """
def k(a, v, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.inc(a, i % 7, v[i]) + cuda.atomic.dec(a, i % 5, v[i])
""", "void(uint64[::1], uint64[::1], uint64[::1])", r"atom\.(global\.)?cas\.b64")
ptx_case("atomic_3d", """
def k(a, v, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.max(a, (i % 2, 1, i % 3), v[i])
""", "void(float64[:, :, ::1], float64[::1], float64[::1])", r"atom\.")

for fn in MATH_UNARY:
    if not hasattr(math, fn):
        continue   # math.exp2 is new in Python 3.11: a kernel cannot name it on 3.10
    for t in F:
        ptx_case(f"math_{fn}_{t}", f"""
def k(a, out):
    i = cuda.grid(1)
    out[i] = math.{fn}(a[i])
""", f"void({t}[::1], {t}[::1])", r"\.entry")
for fn in MATH_BINARY + MATH_BINARY_INT:
    for t in F:
        ptx_case(f"math_{fn}_{t}", f"""
def k(a, b, out):
    i = cuda.grid(1)
    out[i] = math.{fn}(a[i], b[i])
""", f"void({t}[::1], {t}[::1], {t}[::1])", r"\.entry")
for t in F:
    ptx_case(f"math_tests_{t}", """
def k(a, out):
    i = cuda.grid(1)
    out[i] = math.isnan(a[i]) + 2 * math.isinf(a[i]) + 4 * math.isfinite(a[i])
""", f"void({t}[::1], int64[::1])", r"\.entry")
    ptx_case(f"math_parts_{t}", """
def k(a, e, m, f, w, l):
    i = cuda.grid(1)
    mm, ee = math.frexp(a[i])
    m[i] = mm
    e[i] = ee
    ff, ww = math.modf(a[i])
    f[i] = ff
    w[i] = ww
    l[i] = math.ldexp(a[i], e[i])
""", f"void({t}[::1], int32[::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1])", r"\.entry")

for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "boolean", "complex64", "complex128"):
    dt = "np.bool_" if t == "boolean" else f"np.{t}"
    ptx_case(f"shared_local_{t}", f"""
def k(a, out):
    i = cuda.threadIdx.x
    s = cuda.shared.array((2, 64), {dt})
    l = cuda.local.array((2, 2, 2), {dt})
    s[i % 2, i] = a[i]
    l[1, 1, i % 2] = a[i]
    cuda.syncthreads()
    out[i] = s[(i + 1) % 2, 63 - i] if i % 3 == 0 else l[1, 1, i % 2]
""", f"void({t}[::1], {t}[::1])", r"\.shared")
ptx_case("dynamic_shared", """
def k(a, out):
    i = cuda.threadIdx.x
    s = cuda.shared.array(0, np.float32)
    t = cuda.shared.array(0, np.int32)
    s[i] = a[i]
    cuda.syncthreads()
    out[i] = s[s.size - 1 - i] + t[0] * 0
""", "void(float32[::1], float32[::1])", r"\.extern \.shared|dynamic_smem_size")


@pytest.mark.parametrize("src,sig,pattern", PTX_CASES)
def test_ptx(src, sig, pattern, tmp_path):
    ptx, _ = cudajit.compile_ptx(make(src), sig, arch=ARCH)
    assert re.search(pattern, ptx), f"{pattern!r} not in the PTX:\n{ptx}"
    ptxas_ok(ptx, tmp_path)


def test_errors_follow_numba():
    bad = [
        ("def k(a):\n    cuda.atomic.and_(a, 0, 1.0)\n", "void(float32[::1])", "does not support"),
        ("def k(a):\n    cuda.atomic.inc(a, 0, 1)\n", "void(int32[::1])", "does not support"),
        ("def k(a):\n    a[0] = cuda.shfl_sync(-1, a[0] > 0, 1)\n", "void(int16[::1])", "32- and 64-bit"),
        ("def k(a):\n    a[0] = cuda.atomic.cas(a, 0, 1.0, 2.0)\n", "void(float64[::1])", "does not support"),
        ("def k(a):\n    a[0] = cuda.atomic.max(a, (0, 1), 2)\n", "void(int32[::1])", "index must be"),
        ("def k(a):\n    a[0] = cuda.match_any_sync(-1, a[0])\n", "void(int16[::1])", "int32, int64"),
    ]
    for src, sig, msg in bad:
        with pytest.raises(cudajit.CompileError, match=msg):
            cudajit.compile_ptx(make(src), sig, arch=ARCH)


def test_stubs_exported():
    for name in ("syncthreads_count", "shfl_sync", "ballot_sync", "popc", "fma", "selp",
                 "activemask", "threadfence_system", "match_all_sync", "nanosleep"):
        assert getattr(cudajit, name)._cudajit_symbol_ == f"cudajit.{name}"
        assert name in cudajit.__all__
    for op in ("sub", "max", "min", "nanmax", "nanmin", "and_", "or_", "xor", "exch", "inc",
               "dec", "cas", "compare_and_swap"):
        assert getattr(cudajit.atomic, op)._cudajit_symbol_ == f"cudajit.atomic.{op}"
    with pytest.raises(cudajit.DeviceOnlyError):
        cudajit.popc(3)


# ---------------------------------------------------------------------------
# GPU: launches vs numpy on fresh random data (numpy arrays are copied back)
# ---------------------------------------------------------------------------

def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    return np.random.default_rng(seed), seed


def launch(src, griddim, blockdim, *args, shared=0):
    k = cudajit.jit(make(src))
    if shared:
        k[griddim, blockdim, 0, shared](*args)
    else:
        k[griddim, blockdim](*args)
    cudajit.synchronize()


@pytest.mark.gpu
def test_gpu_syncthreads_predicates():
    r, seed = rng()
    nb, tpb = 13, 128
    a = r.integers(-5, 5, nb * tpb).astype(np.int64)
    cnt, allp, anyp = (np.full(nb * tpb, -7, np.int32) for _ in range(3))
    launch("""
def k(a, cnt, allp, anyp):
    i = cuda.grid(1)
    cnt[i] = cuda.syncthreads_count(a[i] > 0)
    allp[i] = cuda.syncthreads_and(a[i] > -5)
    anyp[i] = cuda.syncthreads_or(a[i] == 4)
""", nb, tpb, a, cnt, allp, anyp)
    blocks = a.reshape(nb, tpb)
    np.testing.assert_array_equal(cnt, np.repeat((blocks > 0).sum(1), tpb), err_msg=f"seed {seed}")
    np.testing.assert_array_equal(allp != 0, np.repeat((blocks > -5).all(1), tpb))
    np.testing.assert_array_equal(anyp != 0, np.repeat((blocks == 4).any(1), tpb))


def _rand(r, t, n, lo=-50, hi=50):
    if np.dtype(t).kind == "f":
        return r.uniform(lo, hi, n).astype(t)
    if np.dtype(t).kind == "u":
        return r.integers(1, hi, n).astype(t)
    return r.integers(lo, hi, n).astype(t)


NSLOT = 7
GPU_ATOMICS = [(op, t) for op, ts in ATOMIC_TYPES.items() for t in ts]


@pytest.mark.gpu
@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("op,t", GPU_ATOMICS)
def test_gpu_atomics(op, t, space):
    r, seed = rng()
    n = 512
    a = _rand(r, t, NSLOT)
    if op in ("inc", "dec"):
        v = np.full(n, r.integers(3, 40), dtype=t)     # one bound: the result is order-free
        a = r.integers(0, 60, NSLOT).astype(t)
    elif op in ("add", "sub") and np.dtype(t).kind == "u":
        a = r.integers(10**6, 10**7, NSLOT).astype(t)
        v = r.integers(1, 20, n).astype(t)
    else:
        v = _rand(r, t, n)
    if op in ("max", "min", "nanmax", "nanmin") and np.dtype(t).kind == "f":
        v[r.integers(0, n, 5)] = np.nan                  # NaN values: numba's rules per op
    old = np.zeros(n, dtype=t)
    init = a.copy()
    if space == "global":
        src = f"""
def k(a, v, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.{op}(a, (i % {NSLOT}), v[i])
"""
    else:   # a 2-d shared array indexed with a tuple, copied in and out by thread 0
        src = f"""
def k(a, v, old):
    i = cuda.threadIdx.x
    s = cuda.shared.array((2, {NSLOT}), np.{t})
    if i < {NSLOT}:
        s[1, i] = a[i]
    cuda.syncthreads()
    old[i] = cuda.atomic.{op}(s, (1, i % {NSLOT}), v[i])
    cuda.syncthreads()
    if i < {NSLOT}:
        a[i] = s[1, i]
"""
    launch(src, 1, n, a, v, old)
    slots = np.arange(n) % NSLOT
    want = init.copy()
    with np.errstate(all="ignore"):
        for s in range(NSLOT):
            vs = v[slots == s]
            x = init[s]
            for y in vs:    # order-free ops: a sequential fold is the answer
                if op == "add": x = x + y
                elif op == "sub": x = x - y
                elif op == "max": x = x if (np.isnan(x) or np.isnan(y) or not x < y) else y
                elif op == "min": x = x if (np.isnan(x) or np.isnan(y) or not x > y) else y
                elif op == "nanmax": x = x if np.isnan(y) else (y if (np.isnan(x) or x < y) else x)
                elif op == "nanmin": x = x if np.isnan(y) else (y if (np.isnan(x) or x > y) else x)
                elif op == "and_": x = x & y
                elif op == "or_": x = x | y
                elif op == "xor": x = x ^ y
                elif op == "inc": x = t_(t, 0 if x >= y else x + 1)
                elif op == "dec": x = y if (x == 0 or x > y) else t_(t, x - 1)
                elif op == "exch": x = None; break
            want[s] = x if x is not None else a[s]
    where = f"atomic.{op} {t} {space}, seed {seed}"
    if op == "exch":
        for s in range(NSLOT):   # every value is seen exactly once: olds + final == init + values
            got = sorted(list(old[slots == s]) + [a[s]])
            exp = sorted(list(v[slots == s]) + [init[s]])
            assert got == exp, where
        return
    if np.dtype(t).kind == "f":
        np.testing.assert_allclose(a, want, rtol=1e-4 if t == "float32" else 1e-10, atol=1e-3,
                                   equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(a, want, err_msg=where)
    if op in ("add", "sub", "and_", "or_", "xor", "inc", "dec") and np.dtype(t).kind != "f":
        # each old value is a state of the slot, so applying the op to it is another state:
        # count check: old values are distinct states for add/sub with nonzero values
        for s in range(NSLOT):
            assert init[s] in old[slots == s] or len(old[slots == s]) == 0, where


def t_(t, x):
    return np.array(x).astype(t)[()]


@pytest.mark.gpu
@pytest.mark.parametrize("t", I)
def test_gpu_cas(t):
    r, seed = rng()
    n = 300
    a = _rand(r, t, n)
    expect = a.copy()
    hit = r.random(n) < 0.5
    cmp = np.where(hit, a, a + 1).astype(t)
    v = _rand(r, t, n)
    old = np.zeros(n, dtype=t)
    launch("""
def k(a, cmp, v, old):
    i = cuda.grid(1)
    if i < a.size:
        old[i] = cuda.atomic.cas(a, i, cmp[i], v[i])
""", 3, 128, a, cmp, v, old)
    np.testing.assert_array_equal(old, expect, err_msg=f"seed {seed}")
    np.testing.assert_array_equal(a, np.where(hit, v, expect), err_msg=f"seed {seed}")


@pytest.mark.gpu
@pytest.mark.parametrize("t", ("int32", "int64", "float32", "float64"))
def test_gpu_shuffles(t):
    r, seed = rng()
    n = 256
    a = _rand(r, t, n, -10**6, 10**6)
    if t == "int64":
        a = r.integers(-2**62, 2**62, n).astype(t)   # both halves matter
    lane = r.integers(0, 32, n).astype(np.int32)
    outs = [np.zeros(n, dtype=t) for _ in range(4)]
    launch("""
def k(a, lane, o1, o2, o3, o4):
    i = cuda.grid(1)
    o1[i] = cuda.shfl_sync(0xffffffff, a[i], lane[i])
    o2[i] = cuda.shfl_up_sync(0xffffffff, a[i], 3)
    o3[i] = cuda.shfl_down_sync(0xffffffff, a[i], 5)
    o4[i] = cuda.shfl_xor_sync(0xffffffff, a[i], 6)
""", 2, 128, a, lane, *outs)
    idx = np.arange(n)
    base, l = idx - idx % 32, idx % 32
    np.testing.assert_array_equal(outs[0], a[base + lane], err_msg=f"seed {seed}")
    np.testing.assert_array_equal(outs[1], a[np.where(l >= 3, idx - 3, idx)])
    np.testing.assert_array_equal(outs[2], a[np.where(l + 5 < 32, idx + 5, idx)])
    np.testing.assert_array_equal(outs[3], a[base + (l ^ 6)])


@pytest.mark.gpu
def test_gpu_votes_and_bits():
    r, seed = rng()
    n = 256
    a = r.integers(-3, 4, n).astype(np.int64)
    ballot = np.zeros(n, np.uint32)   # ballot_sync is int32 (numba); stored as uint32
    votes = np.zeros((3, n), np.int32)
    lanes = np.zeros((3, n), np.uint32)
    launch("""
def k(a, ballot, votes, lanes):
    i = cuda.grid(1)
    ballot[i] = cuda.ballot_sync(0xffffffff, a[i] > 0)
    votes[0, i] = cuda.all_sync(0xffffffff, a[i] > -3)
    votes[1, i] = cuda.any_sync(0xffffffff, a[i] == 3)
    votes[2, i] = cuda.eq_sync(0xffffffff, a[i] > -10)
    lanes[0, i] = cuda.laneid
    lanes[1, i] = cuda.lanemask_lt()
    lanes[2, i] = cuda.activemask() + cuda.warpsize * 0
""", 2, 128, a, ballot, votes, lanes)
    w = a.reshape(-1, 32)
    bits = ((w > 0) * (1 << np.arange(32, dtype=np.uint64))).sum(1).astype(np.uint32)
    np.testing.assert_array_equal(ballot, np.repeat(bits, 32), err_msg=f"seed {seed}")
    np.testing.assert_array_equal(votes[0] != 0, np.repeat((w > -3).all(1), 32))
    np.testing.assert_array_equal(votes[1] != 0, np.repeat((w == 3).any(1), 32))
    assert (votes[2] != 0).all()
    np.testing.assert_array_equal(lanes[0], np.arange(n) % 32)
    np.testing.assert_array_equal(lanes[1], (1 << (np.arange(n) % 32)).astype(np.uint64) - 1)
    assert (lanes[2] == 0xffffffff).all()


@pytest.mark.gpu
@pytest.mark.parametrize("t", ("int32", "int64", "uint32", "uint64"))
def test_gpu_bits(t):
    r, seed = rng()
    n = 300
    info = np.iinfo(t)
    a = r.integers(info.min, info.max, n, dtype=t, endpoint=True)
    a[:3] = [0, 1, info.max]
    popc, clz, ffs = np.zeros(n, t), np.zeros(n, t), np.zeros(n, np.uint32)
    launch("""
def k(a, popc, clz, ffs):
    i = cuda.grid(1)
    if i < a.size:
        popc[i] = cuda.popc(a[i])
        clz[i] = cuda.clz(a[i])
        ffs[i] = cuda.ffs(a[i])
""", 3, 128, a, popc, clz, ffs)
    bits = np.dtype(t).itemsize * 8
    u = [int(x) & ((1 << bits) - 1) for x in a]
    np.testing.assert_array_equal(popc.astype(np.int64), [bin(x).count("1") for x in u], err_msg=f"seed {seed}")
    np.testing.assert_array_equal(clz.astype(np.int64), [bits - x.bit_length() for x in u])
    np.testing.assert_array_equal(ffs, [(x & -x).bit_length() for x in u])
    if t.startswith("uint"):
        brev = np.zeros(n, t)
        launch("""
def k(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = cuda.brev(a[i])
""", 3, 128, a, brev)
        np.testing.assert_array_equal(brev, np.array([int(format(x, f"0{bits}b")[::-1], 2) for x in u], dtype=t))


@pytest.mark.gpu
def test_gpu_match():
    r, seed = rng()
    n = 128
    a = r.integers(0, 4, n).astype(np.int64)
    a[64:96] = 7
    anym, allm = np.zeros(n, np.int32), np.zeros(n, np.int32)
    allp = np.zeros(n, np.bool_)
    launch("""
def k(a, anym, allm, allp):
    i = cuda.grid(1)
    anym[i] = cuda.match_any_sync(0xffffffff, a[i])
    m, p = cuda.match_all_sync(0xffffffff, a[i])
    allm[i] = m
    allp[i] = p
""", 1, n, a, anym, allm, allp)
    for i in range(n):
        w = a[i - i % 32: i - i % 32 + 32]
        want = sum(1 << j for j in range(32) if w[j] == a[i])
        assert np.uint32(anym[i]) == np.uint32(want), f"seed {seed}"
        uniform = (w == w[0]).all()
        assert allp[i] == uniform
        assert np.uint32(allm[i]) == (np.uint32(0xffffffff) if uniform else 0)


NP_MATH = {"gamma": np.vectorize(math.gamma), "lgamma": np.vectorize(math.lgamma),
           "erf": np.vectorize(math.erf), "erfc": np.vectorize(math.erfc)}
DOMAIN = {"acos": (-1, 1), "asin": (-1, 1), "atanh": (-0.99, 0.99), "acosh": (1, 10), "log": (0.01, 10),
          "log2": (0.01, 10), "log10": (0.01, 10), "log1p": (-0.9, 10), "sqrt": (0, 10),
          "gamma": (0.1, 8), "lgamma": (0.1, 20)}


@pytest.mark.gpu
@pytest.mark.parametrize("t", F)
@pytest.mark.parametrize("fn", MATH_UNARY)
def test_gpu_math_unary(fn, t):
    r, seed = rng()
    lo, hi = DOMAIN.get(fn, (-3, 3))
    a = r.uniform(lo, hi, 500).astype(t)
    out = np.full(500, np.nan, t)
    launch(f"""
def k(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = math.{fn}(a[i])
""", 4, 128, a, out)
    ref = NP_MATH.get(fn) or np.vectorize(getattr(math, fn))
    want = ref(a.astype(np.float64)).astype(t)
    np.testing.assert_allclose(out, want, rtol=2e-5 if t == "float32" else 1e-12, atol=1e-6,
                               err_msg=f"math.{fn} {t}, seed {seed}")


@pytest.mark.gpu
@pytest.mark.parametrize("t", F)
def test_gpu_math_binary_and_parts(t):
    r, seed = rng()
    n = 500
    a = r.uniform(-5, 5, n).astype(t)
    b = r.uniform(0.5, 5, n).astype(t) * r.choice([-1, 1], n).astype(t)
    a[:4] = [np.inf, -np.inf, np.nan, 0.0]
    outs = np.full((6, n), np.nan, t)
    tests = np.zeros(n, np.int64)
    e = np.zeros(n, np.int32)
    parts = np.full((4, n), np.nan, t)
    launch("""
def k(a, b, outs, tests, e, parts):
    i = cuda.grid(1)
    if i < a.size:
        outs[0, i] = math.atan2(a[i], b[i])
        outs[1, i] = math.hypot(a[i], b[i])
        outs[2, i] = math.copysign(a[i], b[i])
        outs[3, i] = math.fmod(a[i], b[i])
        outs[4, i] = cuda.fma(a[i], b[i], a[i])
        outs[5, i] = cuda.cbrt(b[i])
        tests[i] = math.isnan(a[i]) + 2 * math.isinf(a[i]) + 4 * math.isfinite(a[i])
        m, ex = math.frexp(a[i])
        parts[0, i] = m
        e[i] = ex
        f, w = math.modf(a[i])
        parts[1, i] = f
        parts[2, i] = w
        parts[3, i] = math.ldexp(b[i], e[i])
""", 4, 128, a, b, outs, tests, e, parts)
    where = f"{t}, seed {seed}"
    tol = dict(rtol=2e-6 if t == "float32" else 1e-14, atol=1e-6, equal_nan=True, err_msg=where)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(outs[0], np.arctan2(a, b), **tol)
        np.testing.assert_allclose(outs[1], np.hypot(a, b), **tol)
        np.testing.assert_allclose(outs[2], np.copysign(a, b), **tol)
        np.testing.assert_allclose(outs[3], np.fmod(a, b), **tol)
        np.testing.assert_allclose(outs[4], (a.astype(np.float64) * b + a).astype(t), **tol)
        np.testing.assert_allclose(outs[5], np.cbrt(b), **tol)
        np.testing.assert_array_equal(tests, np.isnan(a) + 2 * np.isinf(a) + 4 * np.isfinite(a))
        fin = np.isfinite(a)
        m, ex = np.frexp(a)
        np.testing.assert_array_equal(parts[0][fin], m[fin], err_msg=where)
        np.testing.assert_array_equal(e[fin], ex[fin], err_msg=where)
        f, w = np.modf(a)
        np.testing.assert_array_equal(parts[1], f, err_msg=where)
        np.testing.assert_array_equal(parts[2], w, err_msg=where)
        np.testing.assert_array_equal(parts[3], np.ldexp(b, e), err_msg=where)


@pytest.mark.gpu
def test_gpu_dynamic_shared_aliases():
    r, seed = rng()
    n = 256
    a = r.uniform(-1, 1, n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    bits = np.zeros(n, np.int32)
    sizes = np.zeros(2, np.int64)
    launch("""
def k(a, out, bits, sizes):
    i = cuda.threadIdx.x
    s = cuda.shared.array(0, np.float32)
    t = cuda.shared.array(0, np.int32)
    s[i] = a[i]
    cuda.syncthreads()
    out[i] = s[a.size - 1 - i]    # s.size is 16 more: the launch gives n * 4 + 64 bytes
    bits[i] = t[i]
    if i == 0:
        sizes[0] = s.size
        sizes[1] = t.size
""", 1, n, a, out, bits, sizes, shared=n * 4 + 64)
    np.testing.assert_array_equal(out, a[::-1], err_msg=f"seed {seed}")
    np.testing.assert_array_equal(bits, a.view(np.int32))   # the two arrays alias
    np.testing.assert_array_equal(sizes, [(n * 4 + 64) // 4] * 2)


@pytest.mark.gpu
@pytest.mark.parametrize("t", ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                               "uint64", "float16", "float32", "float64", "bool_", "complex64",
                               "complex128"))
def test_gpu_shared_local_every_dtype(t):
    r, seed = rng()
    n = 64
    dt = np.dtype(t)
    if dt.kind == "b":
        a = r.random(n) < 0.5
    elif dt.kind == "c":
        a = (r.uniform(-9, 9, n) + 1j * r.uniform(-9, 9, n)).astype(dt)
    elif dt.kind == "f":
        a = r.uniform(-9, 9, n).astype(dt)
    else:
        a = r.integers(0 if dt.kind == "u" else -100, 100, n).astype(dt)
    out = np.zeros(n, dt)
    launch(f"""
def k(a, out):
    i = cuda.threadIdx.x
    s = cuda.shared.array((2, 64), np.{t})
    l = cuda.local.array((2, 2, 3), np.{t})
    s[i % 2, i] = a[i]
    s[(i + 1) % 2, i] = a[i]
    l[1, 0, 2] = a[63 - i]
    cuda.syncthreads()
    if i % 3 == 0:
        out[i] = s[(i + 1) % 2, 63 - i]
    else:
        out[i] = l[1, 0, 2]
""", 1, n, a, out)
    np.testing.assert_array_equal(out, a[::-1], err_msg=f"{t}, seed {seed}")


@pytest.mark.parametrize("fn", ["log2", "log10", "sin", "exp"])
def test_fastmath_uses_fast_variants(fn):
    src = f"def k(a):\n    a[0] = math.{fn}(a[1])\n"
    fast, _ = cudajit.compile_ptx(make(src), "void(float32[::1])", fastmath=True, arch=ARCH)
    slow, _ = cudajit.compile_ptx(make(src), "void(float32[::1])", fastmath=False, arch=ARCH)
    assert fast != slow
    assert re.search(r"(lg2|ex2|sin)\.approx", fast), fast
