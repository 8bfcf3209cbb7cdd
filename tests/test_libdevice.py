"""cudajit.libdevice (numba.cuda.libdevice): every libdevice function by name,
typed from ir/libdevice.def (generated from libdevice.10.bc). Each one
compiles; values of the libm-backed ones on the CPU (tests/host_exec.py
binds __nv_<f> to libm's <f>); the integer ones by their PTX."""
import math

import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core, libdevice
from cudajit.errors import CompileError, DeviceOnlyError

FUNCTIONS = _core.libdevice_functions()
NUMPY = {"float32": "np.float32", "float64": "np.float64", "int32": "np.int32", "int64": "np.int64",
         "uint32": "np.uint32", "uint64": "np.uint64"}


def test_the_table():
    by_name = {f[0]: f for f in FUNCTIONS}
    assert len(FUNCTIONS) > 330
    assert by_name["sinf"] == ("sinf", "float32", ["float32"], [])
    assert by_name["sincos"] == ("sincos", "void", ["float64"], ["float64", "float64"])
    assert by_name["frexpf"] == ("frexpf", "float32", ["float32"], ["int32"])
    assert by_name["umulhi"] == ("umulhi", "uint32", ["uint32", "uint32"], [])
    assert by_name["float2ull_rz"][1] == "uint64" and by_name["ull2double_rn"][2] == ["uint64"]
    assert "nanf" not in by_name and "half2float" not in by_name   # pointer inputs; cuda.fp16's
    assert "cudajit.libdevice.sinf" in libdevice.sinf.__repr__()


def test_every_function_compiles():
    # One kernel calling each function once with arguments of its types.
    lines = ["def k(out):"]
    for i, (name, result, inputs, outputs) in enumerate(FUNCTIONS):
        args = ", ".join(f"{NUMPY[t]}({1 + k % 3})" for k, t in enumerate(inputs))
        value = f"libdevice.{name}({args})"
        if outputs:
            value += "[0]"
        lines.append(f"    out[{i}] = {value}")
    scope = {"libdevice": libdevice, "np": np}
    exec(compile("\n".join(lines), "<libdevice kernel>", "exec"), scope)
    ptx, _ = cuda.compile_ptx(scope["k"], "void(float64[::1])")
    assert ".entry" in ptx


def sin_fma(x):
    return libdevice.sinf(x) + libdevice.fmaf(x, 2.0, 1.0)


def exp_cbrt(x):
    return libdevice.exp(x) * libdevice.cbrt(x)


def hypot_erf(x):
    return libdevice.hypot(x, 2.0) + libdevice.erf(x)


CPU_CASES = [
    (sin_fma, "float32", lambda x: math.sin(x) + 2 * x + 1, 1e-6),
    (exp_cbrt, "float64", lambda x: math.exp(x) * x ** (1 / 3), 1e-14),
    (hypot_erf, "float64", lambda x: math.hypot(x, 2) + math.erf(x), 1e-14),
]


@pytest.mark.parametrize("fn,t,ref,rtol", CPU_CASES, ids=[c[0].__name__ for c in CPU_CASES])
def test_values_on_the_cpu(fn, t, ref, rtol):
    host_exec = pytest.importorskip("host_exec")
    rng = np.random.default_rng()
    h = host_exec.host_function(fn, [t])
    for x in rng.uniform(0.1, 4.0, 8):
        x = float(np.float32(x)) if t == "float32" else float(x)
        assert h(x) == pytest.approx(ref(x), rel=rtol)


def test_outputs_come_back_as_a_tuple():
    host_exec = pytest.importorskip("host_exec")

    def split(x):
        m, e = libdevice.frexp(x)
        frac, whole = libdevice.modf(x)
        s, c = libdevice.sincos(x)
        return m * 1000.0 + e + frac * 10.0 + whole * 100.0 + s + 7 * c

    def ref(x):
        m, e = math.frexp(x)
        frac, whole = math.modf(x)
        return m * 1000 + e + frac * 10 + whole * 100 + math.sin(x) + 7 * math.cos(x)

    h = host_exec.host_function(split, ["float64"])
    for x in np.random.default_rng().uniform(0.1, 40.0, 8):
        assert h(float(x)) == pytest.approx(ref(float(x)), rel=1e-14)


def test_integer_functions_and_their_types():
    def k(out, u):
        i = cuda.grid(1)
        u[i] = libdevice.umulhi(u[i], 7) + libdevice.brev(i) + libdevice.popc(i)
        out[i] = libdevice.llmax(i, 3)
    ptx, _ = cuda.compile_ptx(k, "void(int64[::1], uint32[::1])")
    for instruction in ("mul.hi.u32", "brev.b32", "popc.b32"):
        assert instruction in ptx


def test_errors():
    with pytest.raises(DeviceOnlyError):
        libdevice.sinf(1.0)

    def too_many(x):
        x[0] = libdevice.sinf(x[0], 1.0)

    def not_a_number(x):
        x[0] = libdevice.sinf(x)

    def missing(x):
        x[0] = libdevice.no_such_function(x[0])

    for fn, message in [(too_many, r"libdevice.sinf\(\) takes 1 argument\(s\), got 2"),
                        (not_a_number, r"argument 1 of libdevice.sinf\(\) must be a number \(float32\)"),
                        (missing, r"unsupported attribute cudajit.libdevice.no_such_function")]:
        with pytest.raises(CompileError, match=message) as info:
            cuda.compile_ptx(fn, "void(float32[::1])")
        assert "test_libdevice.py" in str(info.value)
