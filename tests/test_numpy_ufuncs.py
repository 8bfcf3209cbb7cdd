"""numpy ufuncs on scalars in kernels (np.sqrt(x), np.maximum(a, b), ...).

- Typing, without a GPU, against numba-cuda's own typing context: for every
  ufunc numba registers and every combination of scalar argument types, the
  result type cudajit infers equals numba's (np.sqrt(int32) -> float64,
  np.sqrt(float32) -> float32, np.add(int8, int8) -> int8), and cudajit
  rejects exactly what numba rejects. cudajit also lowers the ufuncs numba-cuda
  0.30 types but cannot lower on scalars (np.sqrt, np.exp, np.abs, ...); the
  few loops cudajit leaves out (complex maximum/minimum/fmax/fmin, gcd/lcm)
  are errors that say so.
- Every loop of every ufunc compiles through libNVVM and ptxas (CI).
- On a GPU (marked gpu): results equal numpy's on random data.
"""
import itertools
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import cudajit
from cudajit import _core
from cudajit.errors import CompileError

SCALARS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]

# The ufuncs and their loops, as cudajit's table has them (read back from the
# generated .def so that this test follows the table).
DEF = Path(__file__).resolve().parents[1] / "compiler" / "typeinfer" / "ufunc_loops.def"
CHARS = {"?": "bool", "b": "int8", "B": "uint8", "h": "int16", "H": "uint16", "i": "int32", "I": "uint32",
         "l": "int64", "q": "int64", "L": "uint64", "Q": "uint64", "f": "float32", "d": "float64",
         "F": "complex64", "D": "complex128"}


def _table():
    rows = {}
    for line in DEF.read_text().splitlines():
        if line.startswith("UFUNC("):
            inner = line[len("UFUNC("):line.rindex(")")]
            name, nin, nout, loops = [p.strip() for p in inner.split(",", 3)]
            loops = [l.lstrip("!") for l in loops.strip('"').split()]
            rows[name] = (int(nin), int(nout), loops)
    return rows


UFUNCS = _table()

# What cudajit does not lower (numba types these): the message says so.
NOT_LOWERED_REAL = {"gcd", "lcm"}
COMPLEX_NOT_LOWERED = {"maximum", "minimum", "fmax", "fmin"}


def _src(name, nin):
    args = ", ".join("xy"[:nin])
    ns = {"np": np}
    exec(f"def f({args}):\n    return np.{name}({args})\n", ns)
    return ns["f"]


def test_the_table_covers_numbas_scalar_ufuncs():
    nb = pytest.importorskip("numba.cuda.typing.npydecl")
    names = {f.__name__ for f in nb.supported_ufuncs} - {"isnat"}   # isnat: datetimes only
    assert names == set(UFUNCS)
    assert len(UFUNCS) >= 80


def test_aliases_resolve_to_the_ufunc():
    # np.abs is np.absolute, np.mod np.remainder, np.conj np.conjugate, ...: one symbol each
    for alias, name in [("abs", "absolute"), ("mod", "remainder"), ("conj", "conjugate"),
                        ("true_divide", "divide"), ("bitwise_not", "invert")]:
        assert getattr(np, alias).__name__ == name
    ns = {"np": np}
    exec("def f(x, y):\n    return np.abs(x) + np.mod(x, y) + np.true_divide(x, y) + np.conj(x)\n", ns)
    assert _core.infer_ir(ns["f"], ["int32", "int32"]).splitlines()[0].split(" @")[0].rstrip().endswith("-> f64")


def _numba_typing():
    pytest.importorskip("numba.cuda")
    from numba.cuda import types
    from numba.cuda.descriptor import cuda_target
    ctx = cuda_target.typing_context
    ctx.refresh()
    return ctx, types


def _numba_result(ctx, types, fn, argnames):
    fnty = ctx.resolve_value_type(fn)
    try:
        sig = ctx.resolve_function_type(fnty, tuple(getattr(types, a) for a in argnames), {})
    except Exception:
        return None
    if sig is None:
        return None
    rt = sig.return_type
    if isinstance(rt, types.BaseTuple):
        return _core.parse_numba_type("Tuple(" + ", ".join(str(t) for t in rt) + ")")
    return _core.parse_numba_type(str(rt))


def _cudajit_result(f, argnames):
    try:
        head = _core.infer_ir(f, list(argnames)).splitlines()[0]
    except CompileError as e:
        return ("error", str(e))
    return head[head.index(") -> ") + 5:head.rindex("  @")]


@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_result_types_match_numba(name):
    ctx, types = _numba_typing()
    nin, _, _ = UFUNCS[name]
    fn = getattr(np, name)
    f = _src(name, nin)
    mismatches, compared = [], 0
    for args in itertools.product(SCALARS, repeat=nin):
        want = _numba_result(ctx, types, fn, args)
        got = _cudajit_result(f, args)
        if isinstance(got, tuple):
            if want is None:
                continue                      # both reject
            complex_arg = any(a.startswith("complex") for a in args)
            allowed = name in NOT_LOWERED_REAL or (complex_arg and name in COMPLEX_NOT_LOWERED)
            if not (allowed and "not supported by cudajit" in got[1]):
                mismatches.append(f"{args}: numba {want}, cudajit error {got[1].splitlines()[0]}")
            continue
        compared += 1
        if want != got:
            mismatches.append(f"{args}: numba {want}, cudajit {got}")
    assert not mismatches, f"np.{name}: " + "; ".join(mismatches[:12])
    if name not in NOT_LOWERED_REAL:
        assert compared > 0


def test_spot_result_types():
    def t(name, *args):
        return _cudajit_result(_src(name, len(args)), args)
    assert t("sqrt", "int32") == "f64"
    assert t("sqrt", "float32") == "f32"
    assert t("sqrt", "int8") == "f32"          # int8 casts safely to float32 (numpy)
    assert t("absolute", "int64") == "i64"
    assert t("absolute", "complex64") == "f32"
    assert t("add", "int32", "int32") == "i32"  # numpy loops keep the width
    assert t("add", "int32", "float32") == "f32"   # mixed int/float: any int casts to the float loop
    assert t("add", "int32", "float64") == "f64"
    assert t("add", "int8", "uint8") == "i16"
    assert t("power", "float32", "int32") == "f32"
    assert t("subtract", "bool", "bool") == "i8"     # numpy has no boolean subtract: int8
    assert t("divide", "int32", "int32") == "f64"
    assert t("maximum", "int32", "uint32") == "i64"
    assert t("less", "int64", "uint64") == "b1"
    assert t("isnan", "int32") == "b1"
    assert t("floor", "int16") == "i16"
    assert t("divmod", "int32", "int32") == "tuple(i32, i32)"
    assert t("ldexp", "float32", "int64") == "f32"


def test_errors_name_the_problem():
    bad = _cudajit_result(_src("left_shift", 2), ("float32", "int32"))
    assert bad[0] == "error" and "can't resolve ufunc left_shift" in bad[1]
    bad = _cudajit_result(_src("maximum", 2), ("complex64", "complex64"))
    assert bad[0] == "error" and "not supported by cudajit" in bad[1] and "np.maximum" in bad[1]
    bad = _cudajit_result(_src("gcd", 2), ("int32", "int32"))
    assert bad[0] == "error" and "np.gcd" in bad[1]
    ns = {"np": np}
    exec("def f(a, out):\n    out[0] = np.sqrt(a)\n", ns)
    with pytest.raises(CompileError, match="on an array"):
        _core.infer_ir(ns["f"], ["float32[:]", "float32[:]"])
    exec("def g(a, out):\n    np.sqrt(a, where=a)\n", ns)
    with pytest.raises(CompileError, match="where=, dtype="):
        _core.infer_ir(ns["g"], ["float32", "float32[:]"])


def test_constants():
    ns = {"np": np, "math": math}
    exec("def f(x):\n    return x * np.pi + np.e - math.pi + math.e + (x < np.inf) + (x < math.inf)"
         " + np.isnan(np.nan) + math.isnan(math.nan) + np.euler_gamma\n", ns)
    text = _core.infer_ir(ns["f"], ["float32"])
    assert text.splitlines()[0].split(" -> ")[1].startswith("f64")
    assert "3.1415926535897931" in text and "2.7182818284590451" in text and "inf" in text


# ---------------------------------------------------------------------------
# every loop through libNVVM and ptxas
# ---------------------------------------------------------------------------

def _find_ptxas():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "bin" / "ptxas").is_file():
            return str(Path(root) / "bin" / "ptxas")
    if Path("/usr/local/cuda/bin/ptxas").is_file():
        return "/usr/local/cuda/bin/ptxas"
    return shutil.which("ptxas")


def _loop_kernel(name, nin, nout):
    ins = ", ".join(f"a{k}" for k in range(nin))
    outs = ", ".join(f"o{k}" for k in range(nout))
    call = f"np.{name}(" + ", ".join(f"a{k}[i]" for k in range(nin)) + ")"
    body = (f"        o0[i] = {call}\n" if nout == 1 else
            f"        r0, r1 = {call}\n        o0[i] = r0\n        o1[i] = r1\n")
    src = (f"def k({ins}, {outs}):\n    i = cuda.grid(1)\n    if i < o0.size:\n" + body)
    ns = {"np": np, "cuda": cudajit}
    exec(src, ns)
    return ns["k"]


def _lowered_loops():
    out = []
    for name, (nin, nout, loops) in sorted(UFUNCS.items()):
        if name in NOT_LOWERED_REAL:
            continue
        seen = set()
        for loop in loops:
            ins, outs = loop.split(":")
            key = tuple(CHARS[c] for c in ins)
            if key in seen or ("F" in ins or "D" in ins) and name in COMPLEX_NOT_LOWERED:
                continue
            seen.add(key)
            out.append(pytest.param(name, nin, nout, ins, outs, id=f"{name}-{ins}"))
    return out


@pytest.mark.parametrize("name,nin,nout,ins,outs", _lowered_loops())
def test_every_loop_compiles_through_ptxas(name, nin, nout, ins, outs, tmp_path):
    k = _loop_kernel(name, nin, nout)
    sig = "void(" + ", ".join([f"{CHARS[c]}[::1]" for c in ins] + [f"{CHARS[c]}[::1]" for c in outs]) + ")"
    sig = sig.replace("bool[", "boolean[")
    ptx, _ = cudajit.compile_ptx(k, sig, arch="sm_90")
    assert ".entry" in ptx
    ptxas = _find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not found")
    (tmp_path / "k.ptx").write_text(ptx)
    r = subprocess.run([ptxas, "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_codegen_shapes():
    """The lowering uses the intended machine operations."""
    ns = {"np": np}
    exec("def f(x):\n    return np.sqrt(x)\n", ns)
    ptx, rt = cudajit.compile_ptx(ns["f"], "float32(float32)", device=True)
    assert rt == "float32" and "sqrt.rn.f32" in ptx
    exec("def g(x):\n    return np.rint(x)\n", ns)
    ptx, _ = cudajit.compile_ptx(ns["g"], "float64(float64)", device=True)
    assert "cvt.rni.f64.f64" in ptx
    exec("def h(x, y):\n    return np.maximum(x, y)\n", ns)
    ptx, _ = cudajit.compile_ptx(ns["h"], "int32(int32, int32)", device=True)
    assert "max.s32" in ptx


# ---------------------------------------------------------------------------
# on the GPU: equal to numpy on random data
# ---------------------------------------------------------------------------

# Input ranges per ufunc (lo, hi) where the default (-4, 4) leaves the domain.
DOMAIN = {
    "arccos": (-1, 1), "arcsin": (-1, 1), "arctanh": (-0.99, 0.99), "arccosh": (1, 10),
    "log": (0.01, 10), "log2": (0.01, 10), "log10": (0.01, 10), "sqrt": (0, 10), "log1p": (-0.9, 10),
    "power": (0, 4), "reciprocal": (1, 9), "left_shift": (0, 7), "right_shift": (0, 7),
}
TOL = {"float32": 4e-6, "float64": 1e-13, "complex64": 4e-6, "complex128": 1e-13}


def _gpu_inputs(rng, name, dt, n, position):
    dt = np.dtype(dt)
    lo, hi = DOMAIN.get(name, (-4, 4))
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else lo
        v = rng.integers(int(math.floor(lo)), int(math.ceil(hi)) + 1, n).astype(dt)
        if position == 1 and name in ("floor_divide", "remainder", "fmod", "divmod", "divide"):
            v[v == 0] = 1
        return v
    if dt.kind == "c":
        return (rng.uniform(lo, hi, n) + 1j * rng.uniform(lo, hi, n)).astype(dt)
    v = rng.uniform(lo, hi, n).astype(dt)
    if name in ("isnan", "isinf", "isfinite", "maximum", "minimum", "fmax", "fmin", "sign", "spacing"):
        v[rng.choice(n, n // 8, replace=False)] = np.nan
        v[rng.choice(n, n // 16, replace=False)] = np.inf
    return v


def _gpu_params():
    out = []
    for name, (nin, nout, loops) in sorted(UFUNCS.items()):
        if name in NOT_LOWERED_REAL:
            continue
        for loop in loops:
            ins, outs = loop.split(":")
            if ins[0] not in "?ilfdD" or len(set(ins)) != 1 or ("D" in ins and name in COMPLEX_NOT_LOWERED):
                continue
            out.append(pytest.param(name, nin, nout, ins, outs, id=f"{name}-{ins}"))
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("name,nin,nout,ins,outs", _gpu_params())
def test_matches_numpy_on_gpu(name, nin, nout, ins, outs):
    rng = np.random.default_rng()
    n = int(rng.integers(500, 2000))
    args = [_gpu_inputs(rng, name, CHARS[c], n, p) for p, c in enumerate(ins)]
    res = [np.full(n, 7, dtype=np.dtype(CHARS[c])) for c in outs]
    k = cudajit.jit(_loop_kernel(name, nin, nout))
    k[(n + 127) // 128, 128](*args, *res)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(*args)
    want = want if isinstance(want, tuple) else (want,)
    for got, exp in zip(res, want):
        exp = np.asarray(exp).astype(got.dtype)
        if got.dtype.kind in "fc":
            tol = TOL[got.dtype.name]
            np.testing.assert_allclose(got, exp, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, exp)


# ---------------------------------------------------------------------------
# numpy functions numba implements in Python on scalars: np.real, np.imag,
# np.angle, np.sinc (result types from numba's compile, which lowers them)
# ---------------------------------------------------------------------------

OTHER = {"real": "np.real(x)", "imag": "np.imag(x)", "angle": "np.angle(x)", "angle_deg": "np.angle(x, True)",
         "angle_kw": "np.angle(x, deg=True)", "sinc": "np.sinc(x)"}


@pytest.mark.parametrize("key", sorted(OTHER))
def test_other_numpy_functions_match_numba(key):
    pytest.importorskip("numba.cuda")
    import numba.cuda.dispatcher as nb_dispatcher
    from numba import cuda as ncuda
    from numba.core import types as nbtypes

    class _Sm90:
        compute_capability = (9, 0)

    nb_dispatcher.get_current_device = lambda: _Sm90()
    ns = {"np": np}
    exec(f"def f(x):\n    return {OTHER[key]}\n", ns)
    for t in ("int32", "int64", "float32", "float64", "complex64", "complex128"):
        _, want = ncuda.compile_ptx(ns["f"], (getattr(nbtypes, t),), device=True, cc=(9, 0))
        got = _cudajit_result(ns["f"], (t,))
        if isinstance(got, tuple):
            assert key == "sinc" and t.startswith("complex") and "not supported by cudajit" in got[1]
            continue
        assert got == _core.parse_numba_type(str(want)), f"{OTHER[key]} on {t}"
        ptx, _ = cudajit.compile_ptx(ns["f"], f"{want}({t})", device=True)
        assert ".func" in ptx


def _other_kernel(a, out, parts):
    i = cudajit.grid(1)
    if i < a.size:
        z = a[i]
        parts[0, i] = np.real(z)
        parts[1, i] = np.imag(z)
        out[0, i] = np.angle(z)
        out[1, i] = np.angle(z, deg=True)
        out[2, i] = np.sinc(np.real(z))


@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["float32", "complex64", "complex128"])
def test_other_numpy_functions_on_gpu(dt):
    rng = np.random.default_rng()
    n = int(rng.integers(500, 2000))
    a = (rng.uniform(-3, 3, n) + (1j * rng.uniform(-3, 3, n) if dt.startswith("complex") else 0)).astype(dt)
    a[:5] = 0
    part = np.float32 if dt in ("float32", "complex64") else np.float64
    out, parts = np.zeros((3, n)), np.zeros((2, n), part)
    cudajit.jit(_other_kernel)[(n + 127) // 128, 128](a, out, parts)
    np.testing.assert_array_equal(parts[0], np.real(a))
    np.testing.assert_array_equal(parts[1], np.imag(a))
    tol = 1e-6 if part is np.float32 else 1e-13
    np.testing.assert_allclose(out[0], np.angle(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(out[1], np.angle(a, deg=True), rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(out[2], np.sinc(np.real(a).astype(np.float64)), rtol=1e-13, atol=1e-13)
