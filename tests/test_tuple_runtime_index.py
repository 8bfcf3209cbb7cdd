"""t[i] with i known only at run time, on a tuple whose elements share one
type (numba's UniTuple getitem; nvmath's curand examples index `(v.x, v.y,
v.z, v.w)` in a loop). Values checked on the CPU through tests/host_exec.py
against CPython; a tuple of mixed types still needs a constant index."""
import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit.errors import CompileError

from host_exec import host_function


def pick(a, b, i):
    t = (a, b, a * b, a - b)
    return t[i]


def loop_sum(a, b):
    t = (a, b, a + b)
    s = 0.0
    for j in range(3):
        s += t[j] * (j + 1)
    return s


def test_runtime_index_matches_python():
    h = host_function(pick, ["float64", "float64", "int64"])
    a, b = 1.25, -3.5
    for i in range(-4, 4):
        assert h(a, b, i) == pick(a, b, i), i


def test_in_a_loop():
    h = host_function(loop_sum, ["float64", "float64"])
    assert h(2.0, 5.0) == loop_sum(2.0, 5.0)


def test_ir_is_selects_not_a_constant_index():
    text = _core.infer_ir(pick, ["float32", "float32", "int32"])
    assert text.count(" select ") >= 4


def test_mixed_types_still_need_a_constant():
    def mixed(a, i):
        t = (a, 1.5)
        return t[i]
    with pytest.raises(CompileError, match="tuple index must be a constant"):
        _core.infer_ir(mixed, ["int32", "int64"])
