"""The conformance registry: numba.cuda kernels as data.

Every case is a kernel written as a numba.cuda user writes it (`cuda.grid`,
`cuda.shared.array`, `math.*`, ...), where `cuda` is cudajit by default and
numba.cuda when CUDAJIT_CONFORMANCE_WITH_NUMBA=1 is set before the import
(the numba cross-check runs the same source). A case holds:

  kernel       the plain Python function (jit options in `options`)
  sig          the numba signature of the arguments make_inputs returns
  make_inputs  rng -> fresh random arguments (never zeros; outputs poisoned)
  launch       (griddim, blockdim) or args -> that
  reference    numpy: writes the expected outputs into its arguments in place
  outputs      indices of the arguments compared after the launch
  rtol, atol   tolerance of float outputs (ints and bools compare exactly)
  slack        inputs -> {output index: per-element absolute tolerance added to
               atol}: for a*b + c, where libNVVM contracts to fma (numba-cuda
               and cudajit both do, numpy does not) and the two differ by up
               to an ulp of the product, see fma_slack
  topic        the module (arith, math, control, ...), covers: language items

Checking helpers (numpy_args, expected_outputs, assert_output_matches,
new_rng, signature_of) are the ones of tests/kernel_cases.py.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

WITH_NUMBA = bool(os.environ.get("CUDAJIT_CONFORMANCE_WITH_NUMBA"))
if WITH_NUMBA:
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack          # numba-cuda 0.30 on numpy >= 2.5
    from numba import cuda  # noqa: F401
    os.environ.setdefault("CUDAJIT_CASES_WITH_NUMBA", "1")   # kernel_cases: no cudajit import
else:
    import cudajit as cuda  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/: kernel_cases
import kernel_cases as _kc  # noqa: E402

new_rng = _kc.new_rng
signature_of = _kc.signature_of
numpy_args = _kc.numpy_args
View = _kc.View


@dataclass(frozen=True)
class Case:
    name: str
    kernel: Callable
    sig: str
    make_inputs: Callable[[np.random.Generator], list]
    launch: Any
    reference: Callable[..., None]
    outputs: tuple
    rtol: float = 0.0
    atol: float = 0.0
    topic: str = ""
    covers: tuple = ()
    options: tuple = ()          # jit options as ((key, value), ...), e.g. (("debug", True),)
    numba_check: bool = False    # one of the dozen run under numba-cuda on the GPU too
    slack: Callable | None = None  # inputs -> {output index: per-element extra atol}

    def config(self, args):
        return self.launch(args) if callable(self.launch) else self.launch

    @property
    def jit_options(self) -> dict:
        return dict(self.options)


CASES: list[Case] = []


def case(name, sig, inputs, launch, reference, outputs, kernel=None, *, rtol=0.0, atol=0.0,
         topic="", covers=(), options=None, numba_check=False, slack=None):
    """Registers a case; a decorator on the kernel, or called with kernel=."""

    def register(fn):
        CASES.append(Case(name, fn, sig, inputs, launch, reference, tuple(outputs), rtol, atol,
                          topic, tuple(covers), tuple(sorted((options or {}).items())),
                          numba_check, slack))
        return fn

    return register(kernel) if kernel is not None else register


def device(fn=None, **kw):
    """@cuda.jit(device=True), as written in numba.cuda code."""
    if fn is None:
        return lambda f: cuda.jit(device=True, **kw)(f)
    return cuda.jit(device=True)(fn)


def build(src: str, name: str, glb: dict):
    """A kernel from source text (the generated families: one source per
    operator/dtype, as a user would write each by hand)."""
    ns: dict = {}
    exec(compile(src, f"<conformance:{name}>", "exec"), glb, ns)
    fn = ns[name]
    fn.__source__ = src
    return fn


# ---------------------------------------------------------------------------
# Input helpers
# ---------------------------------------------------------------------------

TPB = 128


def blocks(n, tpb):
    return (n + tpb - 1) // tpb


# CONFORMANCE_SMALL=1 shrinks the arrays (for numba's CPU simulator, which
# runs every thread as a Python thread).
SMALL = bool(os.environ.get("CONFORMANCE_SMALL"))


def n_of(rng, lo=1000, hi=3000):
    if SMALL:
        lo, hi = min(lo, 150), min(hi, 400)
    return int(rng.integers(lo, hi))


def poison(shape, dtype):
    """NaN for floats, an unlikely sentinel for ints, random-free but nonzero."""
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return np.full(shape, np.iinfo(dt).min + 7, dt)
    if dt.kind == "c":
        return np.full(shape, complex(np.nan, np.nan), dt)
    return _kc.poison(shape, dt)


def rand(rng, shape, dtype, lo=None, hi=None, nonzero=False):
    """Random values of `dtype` in [lo, hi) (defaults by kind)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = max(info.min, -100) if lo is None else lo
        hi = min(info.max, 100) if hi is None else hi
        v = rng.integers(lo, hi, shape, endpoint=False).astype(dt)
        if nonzero:
            v[v == 0] = 1
        return v
    if dt.kind == "c":
        lo = -4.0 if lo is None else lo
        hi = 4.0 if hi is None else hi
        v = rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)
        return v.astype(dt)
    lo = -4.0 if lo is None else lo
    hi = 4.0 if hi is None else hi
    v = rng.uniform(lo, hi, shape)
    if nonzero:
        v = np.where(np.abs(v) < 0.25, 0.25 + np.abs(v), v)
    return v.astype(dt)


def one_d(tpb=256, arg=None):
    """One thread per element of args[arg] (default: the first array)."""

    def cfg(args):
        a = args[arg] if arg is not None else next(x for x in args if isinstance(x, np.ndarray))
        return (blocks(a.shape[-1] if a.ndim > 1 else a.size, tpb), tpb)

    return cfg


def by_name():
    d = {c.name: c for c in CASES}
    assert len(d) == len(CASES), "duplicate case names"
    return d


def expected_outputs(case: Case, args) -> dict:
    ref_args, bases = numpy_args(args)
    with np.errstate(all="ignore"):
        case.reference(*ref_args)
    return {i: bases[i] for i in case.outputs}


def fma_slack(compute_dtype, products):
    """A Case.slack for outputs computed as a*b + c in `compute_dtype`.

    libNVVM contracts a*b + c into one fma (numba-cuda and cudajit alike: it
    is libNVVM's default, -fma=1), which rounds once; numpy rounds the
    product first. The two differ by at most half an ulp of the product
    (plus the last-place rounding rtol covers), which is large next to the
    result when c nearly cancels a*b. `products(*inputs)` -> {output index:
    |a*b| per element}; the slack is 2 eps(compute_dtype) |a*b|.
    """
    eps = float(np.finfo(compute_dtype).eps)

    def slack(*inputs):
        with np.errstate(all="ignore"):
            return {i: 2 * eps * np.abs(np.asarray(p, np.float64)) for i, p in products(*inputs).items()}
    return slack


def output_slack(case: Case, args) -> dict:
    """{output index: per-element extra atol} from the case's inputs (before the launch)."""
    if case.slack is None:
        return {}
    ref_args, _ = numpy_args(args)
    return case.slack(*ref_args)


def assert_output_matches(case: Case, index: int, actual, expected, context="", slack=None):
    actual = np.asarray(actual)
    if slack is None or expected.dtype.kind not in "fc":
        _kc.assert_output_matches(case, index, actual, expected, context)
        return
    where = f"{case.name}: argument {index} {context}".rstrip()
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
    tol = case.atol + case.rtol * np.abs(expected) + np.broadcast_to(slack, expected.shape)
    with np.errstate(all="ignore"):
        ok = (actual == expected) | (np.isnan(actual) & np.isnan(expected)) | (np.abs(actual - expected) <= tol)
    if not ok.all():
        bad = np.flatnonzero(~ok.ravel())
        k = bad[:5]
        raise AssertionError(
            f"{where}: {bad.size} of {ok.size} elements differ beyond rtol={case.rtol:g}, atol={case.atol:g} "
            f"+ fma slack; at flat indices {k.tolist()}: actual {actual.ravel()[k].tolist()}, "
            f"expected {expected.ravel()[k].tolist()}, allowed {tol.ravel()[k].tolist()}")


def sn(dt) -> str:
    """numba's spelling of a dtype in a signature string."""
    name = np.dtype(dt).name
    return "boolean" if name == "bool" else name
