"""cudajit.fp16 (numba.cuda's cuda.fp16) and cudajit.bf16 (the same functions
on bfloat16): typing, errors and PTX without a GPU. tests/gpu/test_fp16_gpu.py
checks the values."""
import os
import re
import sys

import numpy as np
import pytest

import cudajit as cuda
from cudajit.errors import CompileError, DeviceOnlyError

sys.path.insert(0, os.path.dirname(__file__))
from ptxas_check import assemble  # noqa: E402

UNARY = ("hneg", "habs", "hsin", "hcos", "hlog", "hlog10", "hlog2", "hexp", "hexp2", "hexp10",
         "hsqrt", "hrsqrt", "hrcp", "hceil", "hfloor", "hrint", "htrunc")
BINARY = ("hadd", "hsub", "hmul", "hdiv", "hmax", "hmin")
COMPARE = ("heq", "hne", "hge", "hgt", "hle", "hlt")


def device_fn(name, arity, module=cuda):
    """A device function `f(a, b, ...)` returning <module>.fp16.<name>(...)."""
    args = ", ".join("abc"[:arity])
    env = {"cuda": module}
    exec(f"def f({args}):\n    return cuda.fp16.{name}({args})\n", env)
    return env["f"]


CASES = [(n, 1) for n in UNARY] + [(n, 2) for n in BINARY + COMPARE] + [("hfma", 3)]


@pytest.mark.parametrize("name,arity", CASES)
def test_types_follow_numba(name, arity):
    sig = "(" + ", ".join(["float16"] * arity) + ")"
    _, ret = cuda.compile_ptx(device_fn(name, arity), sig, device=True)
    assert str(ret) == ("bool" if name in COMPARE else "float16")


@pytest.mark.parametrize("name,arity", [("hadd", 2), ("hsin", 1), ("hfma", 3), ("hlt", 2)])
def test_numba_agrees_on_the_types(name, arity):
    nb = pytest.importorskip("numba.cuda")
    from numba import types
    _, theirs = nb.compile_ptx(device_fn(name, arity, nb), (types.float16,) * arity, cc=(9, 0),
                               device=True)
    sig = "(" + ", ".join(["float16"] * arity) + ")"
    _, ours = cuda.compile_ptx(device_fn(name, arity), sig, device=True)
    assert str(ours) == str(theirs)


def test_other_types_are_refused_with_the_line():
    def f(a, b):
        return cuda.fp16.hadd(a, b)   # L:here
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(f, "(float32, float16)", device=True)
    e = info.value
    assert "cuda.fp16.hadd() takes float16 arguments (as numba's does), got f32" in str(e)
    assert e.construct == "cudajit.fp16.hadd" and e.line == f.__code__.co_firstlineno + 1
    with pytest.raises(CompileError, match=r"cuda.fp16.hsin\(\) takes 1 float16 argument, got 2"):
        cuda.compile_ptx(device_fn("hsin", 2), "(float16, float16)", device=True)


def all_functions(a, b, c, out, flags):
    i = cuda.grid(1)
    x, y, z = a[i], b[i], c[i]
    out[0, i] = cuda.fp16.hadd(x, y)
    out[1, i] = cuda.fp16.hsub(x, y)
    out[2, i] = cuda.fp16.hmul(x, y)
    out[3, i] = cuda.fp16.hdiv(x, y)
    out[4, i] = cuda.fp16.hneg(x)
    out[5, i] = cuda.fp16.habs(x)
    out[6, i] = cuda.fp16.hfma(x, y, z)
    out[7, i] = cuda.fp16.hmax(x, y)
    out[8, i] = cuda.fp16.hmin(x, y)
    out[9, i] = cuda.fp16.hsin(x)
    out[10, i] = cuda.fp16.hcos(x)
    out[11, i] = cuda.fp16.hexp(x)
    out[12, i] = cuda.fp16.hexp2(x)
    out[13, i] = cuda.fp16.hexp10(x)
    out[14, i] = cuda.fp16.hlog(y)
    out[15, i] = cuda.fp16.hlog2(y)
    out[16, i] = cuda.fp16.hlog10(y)
    out[17, i] = cuda.fp16.hsqrt(y)
    out[18, i] = cuda.fp16.hrsqrt(y)
    out[19, i] = cuda.fp16.hrcp(y)
    out[20, i] = cuda.fp16.hceil(x)
    out[21, i] = cuda.fp16.hfloor(x)
    out[22, i] = cuda.fp16.hrint(x)
    out[23, i] = cuda.fp16.htrunc(x)
    flags[0, i] = cuda.fp16.heq(x, y)
    flags[1, i] = cuda.fp16.hne(x, y)
    flags[2, i] = cuda.fp16.hge(x, y)
    flags[3, i] = cuda.fp16.hgt(x, y)
    flags[4, i] = cuda.fp16.hle(x, y)
    flags[5, i] = cuda.fp16.hlt(x, y)


ALL_SIG = "void(float16[::1], float16[::1], float16[::1], float16[:, ::1], boolean[:, ::1])"


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_every_function_compiles_and_assembles(cc, tmp_path):
    ptx, _ = cuda.compile_ptx(all_functions, ALL_SIG, cc=cc)
    # half arithmetic and compares in f16, hfma fused once (not widened)
    for op in ("add.f16", "sub.f16", "mul.f16", "fma.rn.f16", "setp.lt.f16"):
        assert op in ptx, op
    assert not re.search(r"fma\.rn\.f32[^\n]*\n[^\n]*cvt\.rn\.f16", ptx)
    assemble(ptx, tmp_path, arch=f"sm_{cc[0]}{cc[1]}")


def _bf16_version(fn):
    """`fn` with cuda.fp16 replaced by cuda.bf16 (the same source otherwise)."""
    import inspect
    import textwrap
    env = {"cuda": cuda}
    exec(textwrap.dedent(inspect.getsource(fn)).replace("cuda.fp16.", "cuda.bf16."), env)
    return env[fn.__name__]


all_functions_bf16 = _bf16_version(all_functions)
ALL_SIG_BF16 = ALL_SIG.replace("float16", "bfloat16")


@pytest.mark.parametrize("name,arity", CASES)
def test_bf16_types_follow_numba(name, arity):
    args = ", ".join("abc"[:arity])
    env = {"cuda": cuda}
    exec(f"def f({args}):\n    return cuda.bf16.{name}({args})\n", env)
    _, ret = cuda.compile_ptx(env["f"], "(" + ", ".join(["bfloat16"] * arity) + ")", device=True)
    assert str(ret) == ("bool" if name in COMPARE else "bfloat16")


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_every_bf16_function_compiles_and_assembles(cc, tmp_path):
    ptx, _ = cuda.compile_ptx(all_functions_bf16, ALL_SIG_BF16, cc=cc)
    assemble(ptx, tmp_path, arch=f"sm_{cc[0]}{cc[1]}")
    with pytest.raises(CompileError, match=r"cuda\.bf16\.hadd\(\) takes bfloat16 arguments \(as numba's does\), got f16"):
        cuda.compile_ptx(all_functions_bf16, ALL_SIG, cc=cc)
    env = {"cuda": cuda}
    exec("def f(a, b):\n    return cuda.bf16.hsin(a, b)\n", env)
    with pytest.raises(CompileError, match=r"cuda\.bf16\.hsin\(\) takes 1 bfloat16 argument, got 2"):
        cuda.compile_ptx(env["f"], "(bfloat16, bfloat16)", device=True)


def test_host_calls_are_refused():
    with pytest.raises(DeviceOnlyError):
        cuda.fp16.hadd(np.float16(1), np.float16(2))
