"""numpy ufuncs over arrays inside kernels, with explicit outputs:
`np.sin(x, out)`, `np.add(a, b, out=out)` (numba-cuda's form: each thread
runs the whole operation; docs/language.md "numpy functions on scalars").

Values are checked on the CPU: device functions of scalars that fill local
arrays, apply the ufunc and fold the output into one number run through
tests/host_exec.py (the NVVM IR on the host through llvmlite) and are
compared with numpy on fresh random data. The GPU test is
tests/gpu/test_ufunc_arrays_gpu.py.
"""
import math
import os

import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit.errors import CompileError

from host_exec import host_function
SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
RNG = np.random.default_rng(SEED + 414)


def weights(shape):
    return np.arange(1, math.prod(shape) + 1, dtype=np.float64).reshape(shape)


# Each function fills x (3,) and y (2, 3) from its scalar arguments, applies
# one ufunc form, and returns sum(out * weights): every element counts.
def unary_sin(a, b):
    x = cuda.local.array(3, np.float32)
    out = cuda.local.array(3, np.float64)
    for j in range(3):
        x[j] = a * (j + 1) - b
    np.sin(x, out)
    s = 0.0
    for j in range(3):
        s += out[j] * (j + 1)
    return s


def binary_broadcast(a, b):
    x = cuda.local.array(3, np.float64)
    y = cuda.local.array((2, 3), np.float32)
    out = cuda.local.array((2, 3), np.float64)
    for j in range(3):
        x[j] = a * (j + 1) - b
        y[0, j] = b * j
        y[1, j] = a - j
    np.add(x, y, out)
    s = 0.0
    for i in range(2):
        for j in range(3):
            s += out[i, j] * (i * 3 + j + 1)
    return s


def scalar_and_column(a, b):
    col = cuda.local.array((2, 1), np.float64)
    out = cuda.local.array((2, 3), np.float64)
    col[0, 0] = a
    col[1, 0] = b
    np.maximum(col, 0.25, out=out)     # a (2, 1) column repeated along axis 1
    r = np.multiply(out, b, out)       # in place; returns out
    s = 0.0
    for i in range(2):
        for j in range(3):
            s += r[i, j] * (i * 3 + j + 1)
    return s


def compare_to_bool(a, b):
    x = cuda.local.array(4, np.float64)
    out = cuda.local.array(4, np.bool_)
    for j in range(4):
        x[j] = a * j - b
    np.greater(x, 0.0, out)
    s = 0
    for j in range(4):
        s += out[j] * (1 << j)
    return s


def two_outputs(a, b):
    x = cuda.local.array(3, np.int64)
    q = cuda.local.array(3, np.int64)
    r = cuda.local.array(3, np.int64)
    for j in range(3):
        x[j] = a * (j + 2) - 7
    res = np.divmod(x, b, out=(q, r))
    s = 0
    for j in range(3):
        s += res[0][j] * (j + 1) + res[1][j] * 100 * (j + 1)
    return s


def narrowing_out(a, b):
    x = cuda.local.array(3, np.float64)
    out = cuda.local.array(3, np.float32)     # float64 loop, float32 output: 'same_kind'
    for j in range(3):
        x[j] = a / (j + 1)
    np.sqrt(x, out)
    s = 0.0
    for j in range(3):
        s += out[j] * (j + 1)
    return s


def _ref_unary_sin(a, b):
    x = (a * np.arange(1, 4) - b).astype(np.float32)
    return float((np.sin(x).astype(np.float64) * weights((3,))).sum())


def _ref_binary_broadcast(a, b):
    x = a * np.arange(1, 4) - b
    y = np.array([[b * j for j in range(3)], [a - j for j in range(3)]], np.float32)
    return float((np.add(x, y) * weights((2, 3))).sum())


def _ref_scalar_and_column(a, b):
    out = np.maximum(np.array([[a], [b]]), 0.25) * np.ones((2, 3))
    return float((out * b * weights((2, 3))).sum())


def _ref_compare_to_bool(a, b):
    x = a * np.arange(4) - b
    return int(sum(int(v) << j for j, v in enumerate(x > 0)))


def _ref_two_outputs(a, b):
    x = a * np.arange(2, 5) - 7
    q, r = np.divmod(x, b)
    return int((q * np.arange(1, 4)).sum() + (r * 100 * np.arange(1, 4)).sum())


def _ref_narrowing_out(a, b):
    out = np.sqrt(a / np.arange(1, 4)).astype(np.float32)
    return float((out.astype(np.float64) * weights((3,))).sum())


# (function, numpy reference, absolute tolerance). unary_sin runs sin in
# float32, where numpy's sinf and the compiled one may differ by an ulp or two
# (1.2e-7 at 1.0); the weighted sum of three such terms can cancel to a small
# value, so a relative tolerance alone fails on correct results.
FLOAT_CASES = [(unary_sin, _ref_unary_sin, 2e-6), (binary_broadcast, _ref_binary_broadcast, 0),
               (scalar_and_column, _ref_scalar_and_column, 0), (narrowing_out, _ref_narrowing_out, 0)]


@pytest.mark.parametrize("fn, ref, tol", FLOAT_CASES, ids=[f.__name__ for f, _, _ in FLOAT_CASES])
def test_float_forms_match_numpy(fn, ref, tol):
    h = host_function(fn, ["float64", "float64"])
    for _ in range(8):
        a, b = RNG.uniform(0.1, 4.0), RNG.uniform(-3.0, 3.0)
        assert h(a, b) == pytest.approx(ref(a, b), rel=1e-6, abs=tol), (fn.__name__, a, b, SEED)


def test_comparison_into_bool_output():
    h = host_function(compare_to_bool, ["float64", "float64"])
    for _ in range(8):
        a, b = RNG.uniform(-2.0, 2.0), RNG.uniform(-3.0, 3.0)
        assert h(a, b) == _ref_compare_to_bool(a, b), (a, b, SEED)


def test_two_outputs_as_a_tuple():
    h = host_function(two_outputs, ["int64", "int64"])
    for _ in range(8):
        a, b = int(RNG.integers(-50, 50)), int(RNG.choice([-7, -3, 2, 5, 9]))
        assert h(a, b) == _ref_two_outputs(a, b), (a, b, SEED)


def test_ir_calls_one_loop_function_per_ufunc_and_types():
    def k(x, y, out):
        np.sin(x, out)
        np.sin(y, out)      # another input type: another loop
        np.sin(x, out)      # the first again
    text = _core.infer_ir(k, ["float32[::1]", "float64[::1]", "float64[::1]"])
    calls = [line for line in text.splitlines() if "call_func" in line]
    assert len(calls) == 3
    names = {line.split("call_func")[1].split("(")[0].strip() for line in calls}
    assert len(names) == 2 and all(n.startswith("cj_ufunc_sin_") for n in names)


def test_the_result_is_the_output_array():
    def k(x, out):
        r = np.negative(x, out)
        r[0] = 5
    text = _core.infer_ir(k, ["int32[::1]", "int64[::1]"])
    assert "cj_ufunc_negative_" in text


def _src(body, args="x, out"):
    ns = {"np": np, "cuda": cuda}
    exec(f"def k({args}):\n    {body}\n", ns)
    return ns["k"]


@pytest.mark.parametrize("body, sig, message", [
    ("np.sin(x)", ["float32[::1]", "float32[::1]"], r"np\.sin\(\) on an array without an output array"),
    ("np.sin(x, out, out)", ["float32[::1]", "float32[::1]"], r"np\.sin\(\) takes 1 input and 1 output, got 3"),
    ("np.sin(x, out, where=x)", ["float32[::1]", "float32[::1]"], r"keyword argument 'where' is not supported"),
    ("np.sin(x, out, out=out)", ["float32[::1]", "float32[::1]"], r"both by position and as out="),
    ("np.sin(x, out)", ["float64[::1]", "int32[::1]"],
     r"cannot cast np\.sin\(\)'s output from float64 to int32 with casting rule 'same_kind'"),
    ("np.add(x, x, out)", ["float64[:, ::1]", "float64[::1]"], r"has more dimensions than the output"),
    ("np.divmod(x, x, out)", ["int64[::1]", "int64[::1]"], r"np\.divmod\(\) has 2 outputs, got 1"),
    ("np.sin(x, 1.0)", ["float32[::1]", "float32[::1]"], r"output must be an array of numbers, got f64"),
])
def test_errors_name_the_kernel_line(body, sig, message):
    k = _src(body)
    with pytest.raises(CompileError, match=message) as info:
        _core.infer_ir(k, sig)
    assert ":2:" in str(info.value)      # the kernel's line


def test_readonly_output_is_refused():
    C = np.arange(4.0)

    def k(x):
        np.sin(x, cuda.const.array_like(C))
    with pytest.raises(CompileError, match="readonly"):
        _core.infer_ir(k, ["float64[::1]"])


@pytest.mark.parametrize("sig", [("float32[::1]", "float32[::1]"), ("int16[:, :]", "float64[:, ::1]"),
                                 ("complex64[::1]", "complex128[::1]")])
def test_compiles_to_ptx(sig):
    def k(x, out):
        np.exp(x, out)
        np.add(x, out, out=out)
    ptx, _ = cuda.compile_ptx(k, "void(%s, %s)" % sig, cc=(9, 0))
    assert ".entry" in ptx
