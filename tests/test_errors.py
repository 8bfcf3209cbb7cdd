"""Errors are Python exceptions that say what and where, never crashes (no GPU).

* an unsupported construct -> cudajit.CompileError with this file, the line
  of the construct, and the construct named;
* a type conflict -> CompileError naming the variable and both types;
* a wrong number of arguments, an unsupported argument type, a bad
  signature -> a clear exception;
* no CUDA driver (or no visible device) -> CudaSupportError on launch, while
  compiling still works; the interpreter survives (checked in a subprocess).
"""
import inspect
import math  # noqa: F401  (used inside kernels)
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudajit
import cudajit as cuda
from cudajit.errors import CompileError, CudaSupportError

ARCH = "sm_90"
THIS_FILE = os.path.abspath(__file__)


def marked_lines(fn, marker="# <-"):
    """Absolute line numbers of the source lines of fn carrying `marker`."""
    lines, first = inspect.getsourcelines(fn)
    return {first + k for k, text in enumerate(lines) if marker in text}


def compile_error(fn, sig):
    with pytest.raises(CompileError) as info:
        cudajit.compile_ptx(fn, sig, arch=ARCH)
    return info.value


def test_compile_error_is_exported():
    assert cudajit.CompileError is CompileError
    assert issubclass(CompileError, Exception)


# ---------------------------------------------------------------------------
# Unsupported constructs
# ---------------------------------------------------------------------------


def k_dict(x):
    d = {"a": 1}  # <-
    x[0] = d["a"]


def k_list_comprehension(x):
    v = [k * 2 for k in range(3)]  # <-
    x[0] = v[0]


def k_try_except(x):
    try:  # <-
        x[0] = 1.0  # <-
    except Exception:  # <-
        x[0] = 2.0  # <-


def k_with(x):
    with open("somefile"):  # <-
        x[0] = 1.0


def k_lambda(x):
    f = lambda t: t + 1  # noqa: E731  # <-
    x[0] = f(1.0)


def k_import(x):
    import os as _os  # noqa: F401  # <-
    x[0] = 1.0


def k_generator(x):  # <-
    yield x[0]  # <-


def plain_python_helper(v):
    return v + 1


def k_call_plain_python_function(x):
    x[0] = plain_python_helper(x[0])  # <-


UNSUPPORTED = [
    (k_dict, ("dict", "map")),
    (k_list_comprehension, ("list", "comprehension", "function", "closure")),
    (k_try_except, ("try", "except", "exception", "handler")),
    (k_with, ("with", "open", "context")),
    (k_lambda, ("lambda", "function", "closure")),
    (k_import, ("import",)),
    (k_generator, ("yield", "generator")),
    (k_call_plain_python_function, ("plain_python_helper", "call", "function")),
]


@pytest.mark.parametrize("fn,words", UNSUPPORTED, ids=[f.__name__ for f, _ in UNSUPPORTED])
def test_unsupported_construct(fn, words):
    e = compile_error(fn, "void(float64[::1])")
    assert os.path.abspath(e.file) == THIS_FILE, e.file
    assert e.line in marked_lines(fn), f"line {e.line}, expected one of {sorted(marked_lines(fn))}: {e}"
    text = str(e)
    assert os.path.basename(THIS_FILE) in text and str(e.line) in text, text
    assert e.construct, f"CompileError.construct is empty: {text}"
    low = (text + " " + e.construct).lower()
    assert any(w in low for w in words), f"the message should name the construct ({words}): {text}"


def test_unsupported_construct_eager_jit_raises_at_decoration():
    with pytest.raises(CompileError) as info:
        cuda.jit("void(float64[::1])")(k_dict)
    assert info.value.line in marked_lines(k_dict)


@cuda.jit(device=True)
def bad_device(v):
    d = {"k": v}  # <-
    return d["k"]


def k_calls_bad_device(x):
    x[0] = bad_device(x[0])


def test_unsupported_construct_in_device_function_points_into_it():
    e = compile_error(k_calls_bad_device, "void(float64[::1])")
    py_func = getattr(bad_device, "_cudajit_device_py_func_", None) or bad_device.py_func
    assert e.line in marked_lines(py_func), str(e)
    assert os.path.abspath(e.file) == THIS_FILE


# ---------------------------------------------------------------------------
# Type conflicts
# ---------------------------------------------------------------------------


def k_conflict_array_float(x, out):
    value_or_array = x
    if x[0] > 0:
        value_or_array = 1.5
    out[0] = value_or_array


def k_conflict_tuple_int(x, out):
    pair_or_int = (1, 2)
    if x[0] > 0:
        pair_or_int = 3
    out[0] = pair_or_int


def words_in(text, *alternatives):
    return any(a in text for a in alternatives)


def test_type_conflict_names_variable_and_both_types():
    e = compile_error(k_conflict_array_float, "void(float64[::1], float64[::1])")
    text = str(e)
    assert re.search(r"\bvalue_or_array\b", text), text
    assert words_in(text, "array(", "float64[", "f64["), f"array type missing: {text}"
    assert words_in(text.replace("float64[", "").replace("array(f64", ""), "float64", "f64"), \
        f"float type missing: {text}"
    assert os.path.abspath(e.file) == THIS_FILE and e.line > 0


def test_type_conflict_tuple_and_int():
    e = compile_error(k_conflict_tuple_int, "void(float64[::1], int64[::1])")
    text = str(e)
    assert re.search(r"\bpair_or_int\b", text), text
    assert words_in(text, "tuple", "Tuple"), text
    assert words_in(text, "int64", "i64"), text


def k_bad_attr(x):
    x[0] = x.no_such_attribute  # <-


def test_unknown_array_attribute():
    e = compile_error(k_bad_attr, "void(float64[::1])")
    assert "no_such_attribute" in str(e)
    assert e.line in marked_lines(k_bad_attr)


def k_store_array_into_array(x, y):
    x[0] = y  # <-


def test_store_array_into_scalar_slot():
    e = compile_error(k_store_array_into_array, "void(float64[::1], float64[::1])")
    assert e.line in marked_lines(k_store_array_into_array)


# ---------------------------------------------------------------------------
# Signatures, argument counts and types
# ---------------------------------------------------------------------------


def two_args(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = x[i]


def test_signature_with_wrong_argument_count():
    with pytest.raises((CompileError, TypeError)) as info:
        cudajit.compile_ptx(two_args, "void(float32[::1], float32[::1], float32)", arch=ARCH)
    assert "argument" in str(info.value).lower()


@pytest.mark.parametrize("sig", ["void(floaty32[::1], float32[::1])", "void(float32[::1], float32[::1]",
                                 "not a signature"])
def test_malformed_signature(sig):
    with pytest.raises((CompileError, TypeError, ValueError)):
        cudajit.compile_ptx(two_args, sig, arch=ARCH)


def test_bad_arch():
    with pytest.raises((CompileError, ValueError, cudajit.errors.ToolchainError)):
        cudajit.compile_ptx(two_args, "void(float32[::1], float32[::1])", arch="sm_nonsense")


LAUNCH_ERRORS = (TypeError, CompileError, CudaSupportError)


def gpu_usable():
    try:
        return bool(cudajit.is_available()) if hasattr(cudajit, "is_available") else False
    except Exception:
        return False


def test_launch_wrong_argument_count_is_an_exception():
    k = cuda.jit(two_args)
    x = np.arange(8, dtype=np.float32)
    expected = (TypeError, CompileError) if gpu_usable() else LAUNCH_ERRORS
    with pytest.raises(expected):
        k[1, 8](x)
    with pytest.raises(expected):
        k[1, 8](x, x.copy(), x.copy())


@pytest.mark.parametrize("bad", ["a string", [1.0, 2.0], {"k": 1}, None, object(), 1 + 2j],
                         ids=["str", "list", "dict", "None", "object", "complex"])
def test_launch_unsupported_argument_type_is_an_exception(bad):
    k = cuda.jit(two_args)
    y = np.zeros(8, np.float32) + 1
    if isinstance(bad, complex):   # complex scalars may be supported; then it is a type conflict
        expected = (TypeError, CompileError, CudaSupportError)
    else:
        expected = (TypeError, CompileError) if gpu_usable() else LAUNCH_ERRORS
    with pytest.raises(expected):
        k[1, 8](bad, y)


# ---------------------------------------------------------------------------
# No driver / no device: a clear exception, the interpreter survives
# ---------------------------------------------------------------------------

NO_DEVICE_SCRIPT = textwrap.dedent("""
    import numpy as np
    import cudajit as cuda
    from cudajit.errors import CudaSupportError

    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    ptx, _ = cuda.compile_ptx(axpy, "void(float32, float32[::1], float32[::1])", arch="sm_90")
    assert ".entry" in ptx
    x = np.arange(16, dtype=np.float32)
    for attempt in ("launch", "to_device", "launch again"):
        try:
            if attempt == "to_device":
                cuda.to_device(x)
            else:
                cuda.jit(axpy)[1, 16](np.float32(2), x, x.copy())
        except CudaSupportError as e:
            assert str(e), "empty message"
            print("CudaSupportError:", attempt, "->", e)
        else:
            raise SystemExit(f"{attempt}: no CudaSupportError without a device")
    if hasattr(cuda, "is_available"):
        assert cuda.is_available() is False
    print("OK")
""")


STUB_LIBCUDA = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib", "stubs", "libcuda.so")


@pytest.mark.parametrize("setting", ["no_driver_library", "no_visible_device", "stub_driver"])
def test_no_device_raises_cuda_support_error_and_does_not_crash(setting, tmp_path):
    env = dict(os.environ)
    if setting == "no_driver_library":
        env["CUDAJIT_CUDA_DRIVER"] = str(tmp_path / "no" / "libcuda.so.1")
    elif setting == "no_visible_device":
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        if not os.path.exists(STUB_LIBCUDA):
            pytest.skip(f"no stub driver at {STUB_LIBCUDA}")
        env["CUDAJIT_CUDA_DRIVER"] = STUB_LIBCUDA
    script = tmp_path / "no_device.py"
    script.write_text(NO_DEVICE_SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, f"exit {r.returncode} (negative: killed by a signal)\n{r.stdout}\n{r.stderr}"
    assert "OK" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("CudaSupportError:") == 3
