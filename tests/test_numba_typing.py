"""Differential typing without a GPU: for every conformance kernel, the
types cudajit infers for its variables and stored expressions equal the
types numba-cuda infers (numba.cuda.compiler.compile_cuda(..., cc=(9, 0))
types and lowers without a GPU; its type_annotation.typemap holds every
variable's type).

Each kernel's source is rewritten so that every array store `a[...] = e`
first names its value (`_r3 = e; a[...] = _r3`): the expression's own type
is then compared, not only the array's dtype it is stored as. The same
rewritten source is compiled twice: with `cuda` = cudajit for
`cudajit._core.infer_ir` (the typed IR annotates values with `[name]`) and
with `cuda` = numba.cuda (device functions rebound too) for numba.
numba-cuda is a test dependency only, never the package's.
"""
import inspect
import re
import textwrap
from collections import defaultdict
from types import SimpleNamespace
from pathlib import Path

import numpy as np
import pytest

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack        # numba-cuda 0.30 on numpy >= 2.5

numba_cuda = pytest.importorskip("numba.cuda")
from numba.core import types as nbtypes  # noqa: E402
from numba.core.sigutils import normalize_signature  # noqa: E402
from numba.cuda.compiler import compile_cuda  # noqa: E402

import numba.cuda.dispatcher as _nb_dispatcher  # noqa: E402


class _Sm90:
    compute_capability = (9, 0)


# numba compiles a called device function for the current device's compute
# capability; without a GPU there is none: say sm_90 (this test process only).
_nb_dispatcher.get_current_device = lambda: _Sm90()

import cudajit  # noqa: E402
from cudajit import _core  # noqa: E402
import conformance  # noqa: E402
from conformance import _registry as reg  # noqa: E402

import json  # noqa: E402

KNOWN = json.loads((Path(conformance.__file__).parent / "known_failures.json").read_text()) \
    if (Path(conformance.__file__).parent / "known_failures.json").exists() else {}

STORE = re.compile(r"^(\s+)([A-Za-z_]\w*\[[^\n=]*\]) = (?!=)(.+)$")


def kernel_source(fn):
    src = getattr(fn, "__source__", None) or inspect.getsource(fn)
    return textwrap.dedent(src)


def name_stores(src):
    """`a[i] = e` -> `_rK = e` / `a[i] = _rK` (K counts the stores)."""
    out, k = [], 0
    copies = set()       # stores of a bare name or literal: no new value to annotate
    for line in src.splitlines():
        m = STORE.match(line)
        if m and not line.lstrip().startswith("#"):
            ind, target, expr = m.groups()
            if re.fullmatch(r"[A-Za-z_]\w*|-?[\d.]+", expr.strip()):
                copies.add(f"_r{k}")
            out.append(f"{ind}_r{k} = {expr}")
            out.append(f"{ind}{target} = _r{k}")
            k += 1
        else:
            out.append(line)
    return "\n".join(out) + "\n", copies


def rebuild(fn, src, glb):
    ns = {}
    exec(compile(src, f"<typing:{fn.__name__}>", "exec"), glb, ns)
    return ns[fn.__name__]


_nb_device = {}


def _names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= _names(c)
    return names


def numba_globals(glb, code=None):
    """fn's globals with `cuda` = numba.cuda and the cudajit device functions
    that `code` names replaced by numba device functions of the same code."""
    g = dict(glb)
    for key in (_names(code) if code is not None else glb):
        v = glb.get(key)
        if v is cudajit:
            g[key] = numba_cuda
        elif isinstance(v, cudajit.DeviceFunction):
            g[key] = numba_device(v)
    return g


def numba_device(dev):
    if dev not in _nb_device:
        py = dev.py_func
        f = type(py)(py.__code__, numba_globals(py.__globals__, py.__code__), py.__name__, py.__defaults__)
        _nb_device[dev] = numba_cuda.jit(device=True)(f)
    return _nb_device[dev]


def split_args(sig):
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


SCALARS = (nbtypes.Integer, nbtypes.Float, nbtypes.Boolean, nbtypes.Complex)


def numba_var_types(fn, sig):
    args, _ = normalize_signature(sig)
    cr = compile_cuda(fn, nbtypes.void, args, cc=(9, 0))
    found = defaultdict(set)
    for name, t in cr.type_annotation.typemap.items():
        if name.startswith("$") or name.startswith("arg.") or "$" in name:
            continue
        t = nbtypes.unliteral(t)
        if isinstance(t, nbtypes.Optional) and isinstance(t.type, SCALARS):   # cudajit: optional(T)
            found[name.split(".")[0]].add(f"optional({_core.parse_numba_type(sig_spelling(t.type))})")
        elif isinstance(t, SCALARS) or (isinstance(t, nbtypes.BaseTuple) and all(isinstance(x, SCALARS) for x in t)):
            found[name.split(".")[0]].add(_core.parse_numba_type(sig_spelling(t)))
    return found


def sig_spelling(t):
    """numba's type as a signature string (str() spells UniTuple(f8 x 2))."""
    if isinstance(t, nbtypes.BaseTuple):
        items = [sig_spelling(nbtypes.unliteral(x)) for x in t]
        return f"Tuple({', '.join(items)})" if items else "Tuple()"
    return str(t)


ANNOT = re.compile(r"^\s+v\d+:(\S+) = .*\[(\w+)\]\s*$")
def typed_params(text):
    """[(type, name)] of `v0:array(f64, 2d, C) a, v1:i64 i` (types may hold spaces)."""
    out = []
    for part in split_args(f"({text})"):
        m = re.fullmatch(r"v\d+:(.+) (\w+)", part.strip())
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def _vars_of(lines):
    found = defaultdict(set)
    for line in lines:
        m = ANNOT.match(line)
        if m:
            found[m.group(2)].add(m.group(1))
        elif re.match(r"^bb\d+\(", line):              # block parameters: bb3(v19:f64 _r0, ...)
            for ty, name in typed_params(line[line.index("(") + 1:line.rindex(") (preds") if ") (preds" in line else line.rindex(")")]):
                found[name].add(ty)
    return found


FUNC_TAIL = re.compile(r"^ -> (.+?)(?: py=(\w+))?\s+@")


def parse_func_header(line):
    """`func name(params) -> ret py=pyname  @file:line` -> (params text, ret, pyname)."""
    start = line.index("(")
    depth = 0
    for k in range(start, len(line)):
        depth += line[k] == "("
        depth -= line[k] == ")"
        if depth == 0:
            break
    m = FUNC_TAIL.match(line[k + 1:])
    return line[start + 1:k], m.group(1), m.group(2)


def cudajit_functions(fn, sig):
    """[(python name, (arg types), return type, {var: types})], the kernel first."""
    text = _core.infer_ir(fn, split_args(sig))
    funcs = []
    for chunk in ("\n" + text).split("\nfunc ")[1:]:
        lines = ("func " + chunk).splitlines()
        params, ret, py = parse_func_header(lines[0])
        args = tuple(ty for ty, _ in typed_params(params))
        funcs.append((py or fn.__name__, args, ret, _vars_of(lines[1:])))
    return funcs


def numba_device_overloads():
    """{(python name, (arg types as IR text)): (return type, {var: types})} of
    the numba device functions compiled so far."""
    out = {}
    for dev, d in _nb_device.items():
        for argtys, cres in d.overloads.items():
            if any(isinstance(a, nbtypes.Omitted) for a in argtys):
                out[(dev.py_func.__name__, "omitted")] = None    # defaults: not matched one to one
                continue
            key = (dev.py_func.__name__,
                   tuple(_core.parse_numba_type(sig_spelling(nbtypes.unliteral(a))) for a in argtys))
            found = defaultdict(set)
            for name, t in cres.type_annotation.typemap.items():
                if "$" in name or name.startswith("arg."):
                    continue
                t = nbtypes.unliteral(t)
                if isinstance(t, SCALARS) or (isinstance(t, nbtypes.BaseTuple) and all(isinstance(x, SCALARS) for x in t)):
                    found[name.split(".")[0]].add(_core.parse_numba_type(sig_spelling(t)))
            rt = nbtypes.unliteral(cres.signature.return_type)
            out[key] = (_core.parse_numba_type(sig_spelling(rt)) if rt != nbtypes.none else "none", found)
    return out


def compare(where, want, got):
    mismatches = []
    for name in sorted(set(want) & set(got)):
        if not got[name] <= want[name]:
            mismatches.append(f"{where}{name}: numba {sorted(want[name])}, cudajit {sorted(got[name])}")
    return len(set(want) & set(got)), mismatches


CASES = [c for c in conformance.CASES if not c.jit_options.get("eager")]


def _param(c):
    marks = [pytest.mark.xfail(reason=f"missing: {KNOWN[c.name]}", strict=False)] if c.name in KNOWN else []
    return pytest.param(c, id=c.name, marks=marks)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_numba_compiles_the_case(case):
    """The suite is numba.cuda code: numba-cuda types and lowers every kernel
    (never xfail: a case numba rejects is a defect of the suite)."""
    src, _ = name_stores(kernel_source(case.kernel))
    nb_fn = rebuild(case.kernel, src, numba_globals(case.kernel.__globals__, case.kernel.__code__))
    numba_var_types(nb_fn, case.sig)


def test_enough_kernels_compared():
    assert len(CASES) >= 200


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_types_match_numba(case):
    """Kernel variables and stored expressions, and every device function it
    calls (per specialisation: variables and return type), typed as numba does."""
    compare_kernel(case.name, case.kernel, case.sig)


def compare_kernel(name, kernel, sig):
    src, _copies = name_stores(kernel_source(kernel))
    glb = kernel.__globals__
    nb_fn = rebuild(kernel, src, numba_globals(glb, kernel.__code__))
    cj_fn = rebuild(kernel, src, glb)
    want = numba_var_types(nb_fn, sig)
    funcs = cudajit_functions(cj_fn, sig)
    # A store whose value is an existing SSA value (a copy, t[-1] of a built
    # tuple) has no annotation of its own in cudajit's IR: not compared.
    compared, mismatches = compare("", want, funcs[0][3])
    devices = numba_device_overloads()
    for py_name, args, ret, got in funcs[1:]:
        if (py_name, args) not in devices:
            if (py_name, "omitted") in devices:
                continue
            mismatches.append(f"{py_name}{args}: numba has no such specialisation (numba's: "
                              f"{[k[1] for k in devices if k[0] == py_name]})")
            continue
        nb_ret, nb_vars = devices[(py_name, args)]
        if nb_ret != ret:
            mismatches.append(f"{py_name}{args} returns: numba {nb_ret}, cudajit {ret}")
        n, m = compare(f"{py_name}.", nb_vars, got)
        compared += n + 1
        mismatches += m
    assert not mismatches, f"{name}: " + "; ".join(mismatches)
    assert compared > 0 or not want, f"{name}: no variable compared"
    return compared


# ---- mixed int/float arithmetic: numba's result types, not numpy's ----------------------------
# numba keeps int8/int16/uint8 (and bool) with float32 in float32 and takes
# uint16 and the wider ints to float64; numpy differs (uint16 * float32 is
# float32 there, float32 * an int literal stays float32 under NEP 50).

MIXED_SRC = '''
def mixed(a, b, out):
    x = a[0]
    y = b[0]
    r_add = x + y
    r_sub = y - x
    r_mul = x * y
    r_div = x / y
    r_fdiv = y // x
    r_mod = x % y
    r_pow = y ** x
    r_lit_int = y * 1000
    r_lit_float = x * 1.5
    r_fma = x * y + x
    out[0] = r_add + r_sub + r_mul + r_div + r_fdiv + r_mod + r_pow + r_lit_int + r_lit_float + r_fma
'''
MIXED_INTS = ("boolean", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


@pytest.mark.parametrize("ft", ("float32", "float64"))
@pytest.mark.parametrize("it", MIXED_INTS)
def test_int_float_promotion_matches_numba(it, ft):
    sig = f"void({it}[::1], {ft}[::1], float64[::1])"
    named = SimpleNamespace(__name__="mixed")
    nb_fn = rebuild(named, MIXED_SRC, {"cuda": numba_cuda})
    cj_fn = rebuild(named, MIXED_SRC, {"cuda": cudajit})
    want = numba_var_types(nb_fn, sig)
    got = cudajit_functions(cj_fn, sig)[0][3]
    names = {n for n in want if n.startswith("r_")}
    assert len(names) == 10 and names <= set(got), (sorted(want), sorted(got))
    n, mismatches = compare(f"{it} with {ft}: ", {k: want[k] for k in names}, got)
    assert n == 10 and not mismatches, mismatches


# ---- kernels outside the conformance suite -------------------------------------------
# cudajit.random's device functions, compiled by numba from the same source
# (rotl, the uint64 shifts, the float conversions and the Box-Muller formulas
# typed as numba types them: numba's bit-exact numbers depend on it).
from cudajit.random import (xoroshiro128p_next, xoroshiro128p_normal_float32,  # noqa: E402
                            xoroshiro128p_normal_float64, xoroshiro128p_uniform_float32,
                            xoroshiro128p_uniform_float64, xoroshiro128p_jump, init_xoroshiro128p_state)


def random_draws(states, seed, u32, u64, n32, n64, raw):
    i = cudajit.grid(1)
    if i < states.shape[0]:
        u32[i] = xoroshiro128p_uniform_float32(states, i)
        u64[i] = xoroshiro128p_uniform_float64(states, i)
        n32[i] = xoroshiro128p_normal_float32(states, i)
        n64[i] = xoroshiro128p_normal_float64(states, i)
        raw[i] = xoroshiro128p_next(states, i)
        if seed != 0:
            init_xoroshiro128p_state(states, i, seed)
            xoroshiro128p_jump(states, i)


# numpy ufuncs numba-cuda lowers on scalars, on mixed argument types (the
# result types of the others are checked against numba's typing context in
# tests/test_numpy_ufuncs.py: numba cannot lower them).
def np_mixed_types(a, b, c, out, flags, ints):
    i = cudajit.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        k = c[i]
        out[0, i] = np.sin(k)
        out[1, i] = np.arctan2(x, k)
        out[2, i] = np.hypot(x, y)
        out[3, i] = np.maximum(x, k)
        out[4, i] = np.log(np.float32(y) + 2)
        out[5, i] = np.divide(k, x)
        flags[0, i] = np.less(x, k)
        flags[1, i] = np.logical_and(k, x)
        flags[2, i] = np.isnan(k)
        ints[0, i] = np.minimum(k, np.int16(3))
        ints[1, i] = np.bitwise_and(k, np.uint8(7))
        ints[2, i] = np.left_shift(k, 2)


EXTRA = [
    ("random_draws", random_draws,
     "void(uint64[:, ::1], uint64, float32[::1], float64[::1], float32[::1], float64[::1], uint64[::1])"),
    ("np_mixed_types", np_mixed_types,
     "void(float32[::1], float64[::1], int32[::1], float64[:, ::1], boolean[:, ::1], int64[:, ::1])"),
]


@pytest.mark.parametrize("name,kernel,sig", EXTRA, ids=[e[0] for e in EXTRA])
def test_extra_kernels_types_match_numba(name, kernel, sig):
    assert compare_kernel(name, kernel, sig) >= 5
