"""The public API of cudajit, as numba.cuda spells it. CI: no GPU needed."""

import inspect
import math

import numpy as np
import pytest

import cudajit
import cudajit as cuda
from cudajit import errors

# ---------------------------------------------------------------- surface

PUBLIC = ["jit", "compile_ptx", "compile_cubin", "CacheWarning", "grid", "gridsize", "threadIdx", "blockIdx", "blockDim",
          "gridDim", "laneid", "warpsize", "syncthreads", "threadfence", "threadfence_block",
          "shared", "local", "atomic", "to_device", "device_array", "device_array_like",
          "DeviceNDArray", "synchronize", "is_available", "detect", "CompileError",
          "ToolchainError", "CudaSupportError", "CudaAPIError", "__version__", "stream",
          "default_stream", "legacy_default_stream", "per_thread_default_stream",
          "external_stream", "select_device", "Dispatcher", "DeviceFunction"]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_exists(name):
    assert hasattr(cudajit, name), name


def test_version_is_a_string():
    assert isinstance(cudajit.__version__, str) and cudajit.__version__.count(".") >= 1


def test_exceptions_are_the_errors_module_classes():
    assert cudajit.CompileError is errors.CompileError
    assert cudajit.CudaSupportError is errors.CudaSupportError
    assert cudajit.CudaAPIError is errors.CudaAPIError
    assert issubclass(cudajit.CudaSupportError, RuntimeError)


# The symbols the decoder freezes (docs/internals.md, "Contract: untyped IR"), exactly.
SYMBOLS = {
    "grid": "cudajit.grid", "gridsize": "cudajit.gridsize", "laneid": "cudajit.laneid",
    "warpsize": "cudajit.warpsize", "syncthreads": "cudajit.syncthreads",
    "threadfence": "cudajit.threadfence", "threadfence_block": "cudajit.threadfence_block",
    "threadIdx": "cudajit.threadIdx", "blockIdx": "cudajit.blockIdx",
    "blockDim": "cudajit.blockDim", "gridDim": "cudajit.gridDim", "shared": "cudajit.shared",
    "local": "cudajit.local", "atomic": "cudajit.atomic",
}


def test_module_symbol():
    assert cudajit._cudajit_symbol_ == "cudajit"


@pytest.mark.parametrize("name,symbol", sorted(SYMBOLS.items()))
def test_stub_symbols(name, symbol):
    assert getattr(cudajit, name)._cudajit_symbol_ == symbol


@pytest.mark.parametrize("ns", ["threadIdx", "blockIdx", "blockDim", "gridDim"])
def test_xyz_members(ns):
    for axis in "xyz":
        assert getattr(getattr(cuda, ns), axis)._cudajit_symbol_ == f"cudajit.{ns}.{axis}"


def test_namespace_members():
    assert cuda.shared.array._cudajit_symbol_ == "cudajit.shared.array"
    assert cuda.local.array._cudajit_symbol_ == "cudajit.local.array"
    assert cuda.atomic.add._cudajit_symbol_ == "cudajit.atomic.add"


@pytest.mark.parametrize("call", [lambda: cuda.grid(1), lambda: cuda.syncthreads(),
                                  lambda: cuda.shared.array(4, np.float32),
                                  lambda: cuda.atomic.add(np.zeros(1), 0, 1),
                                  lambda: cuda.threadIdx.x()])
def test_stubs_refuse_host_calls(call):
    with pytest.raises(errors.DeviceOnlyError, match="inside a @cudajit.jit"):
        call()


# ---------------------------------------------------------------- jit forms

def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def test_jit_bare_and_called_forms():
    k1 = cuda.jit(axpy)
    k2 = cuda.jit()(axpy)
    k3 = cuda.jit(fastmath=True, lineinfo=True, debug=False, opt=True, cache=True)(axpy)
    for k in (k1, k2, k3):
        assert isinstance(k, cuda.Dispatcher)
        assert k.py_func is axpy
        assert k.__name__ == "axpy"
        assert k.signatures == []   # lazy: nothing compiled before a launch


def test_jit_rejects_unknown_options():
    with pytest.raises(TypeError, match="fastmaths"):
        cuda.jit(fastmaths=True)


def test_device_function_object():
    def helper(x):
        return x + 1

    dev = cuda.jit(device=True)(helper)
    assert dev._cudajit_device_py_func_ is helper
    assert cuda.jit(helper, device=True)._cudajit_device_py_func_ is helper
    with pytest.raises(errors.DeviceOnlyError, match="device function"):
        dev(1)


def test_kernel_call_without_configuration():
    k = cuda.jit(axpy)
    with pytest.raises(ValueError, match="launch configuration"):
        k(1.0, np.zeros(3), np.zeros(3))


@pytest.mark.parametrize("config,exc,match", [
    ((0, 32), ValueError, "at least 1"),
    ((1, -4), ValueError, "at least 1"),
    (("a", 1), TypeError, "must be ints"),
    ((1.5, 32), TypeError, "must be ints"),
    (((1, 1, 1, 1), 32), ValueError, "1 to 3"),
    ((1, 32, 0, -1), ValueError, "out of range"),
    ((1, 32, "stream"), TypeError, "stream"),
    ((1, 2, 3, 4, 5), ValueError, "2 to 4"),
])
def test_bad_launch_configurations(config, exc, match):
    k = cuda.jit(axpy)
    with pytest.raises(exc, match=match):
        k[config]


def test_single_item_configuration():
    k = cuda.jit(axpy)
    with pytest.raises(TypeError, match="kernel\\[blocks, threads\\]"):
        k[4]


def test_launcher_records_configuration():
    k = cuda.jit(axpy)
    l = k[(4, 2), (32, 4, 2), 0, 1024]
    assert l.griddim == (4, 2, 1) and l.blockdim == (32, 4, 2) and l.sharedmem == 1024
    assert k[np.int64(3), np.int32(64)].griddim == (3, 1, 1)


def test_launch_without_gpu_is_a_clear_error():
    if cuda.is_available():
        pytest.skip("this machine has a GPU")
    k = cuda.jit(axpy)
    with pytest.raises(errors.CudaSupportError):
        k[1, 32](2.0, np.ones(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(errors.CudaSupportError):
        cuda.to_device(np.ones(4))
    with pytest.raises(errors.CudaSupportError):
        cuda.synchronize()


def test_detect_and_is_available_never_raise(capsys):
    ok = cuda.detect()
    assert ok == cuda.is_available()
    out = capsys.readouterr().out
    assert ("Found" in out) if ok else ("not available" in out)


# ---------------------------------------------------------------- signatures

@pytest.mark.parametrize("text,ret,args", [
    ("void(float32, float32[:])", "none", ("float32", "float32[:]")),
    ("void(int64[:, ::1], float64[::1, :], f4[::1])", "none",
     ("int64[:, ::1]", "float64[::1, :]", "float32[::1]")),
    ("float32(float32, i8, u4, b1)", "float32", ("float32", "int64", "uint32", "bool")),
    ("(float64, int32)", None, ("float64", "int32")),
    ("void(UniTuple(int32, 3))", "none", ("UniTuple(int32, 3)",)),
    ("void(array(float32, 2d, C))", "none", ("float32[:, ::1]",)),
    ("void()", "none", ()),
])
def test_parse_signature(text, ret, args):
    assert cudajit._core.signature_types(text) == (ret, args)


def test_parse_signature_tuple_form():
    assert cudajit._core.signature_types(("float32", "int32[::1]")) == (
        None, ("float32", "int32[::1]"))


@pytest.mark.parametrize("bad", ["void(float33)", "void(float32[:, ::1, :])",
                                 "void(float32", "void(float32[::2])", "void(float32) extra"])
def test_parse_signature_errors(bad):
    with pytest.raises(errors.CompileError, match="cannot parse"):
        cudajit._core.signature_types(bad)


def test_parse_signature_rejects_other_objects():
    with pytest.raises(TypeError, match="signature must be"):
        cudajit._core.signature_types(42)


def test_parse_numba_type_objects():
    numba = pytest.importorskip("numba")
    sig = numba.void(numba.float32, numba.float32[::1], numba.int64[:, :])
    assert cudajit._core.signature_types(sig) == (
        "none", ("float32", "float32[::1]", "int64[:, :]"))


# ------------------------------------------- compile without a GPU (full pipeline)

def test_eager_signature_compiles_without_gpu():
    k = cuda.jit("void(float32, float32[:], float32[:])")(axpy)
    assert k.signatures == [("float32", "float32[:]", "float32[:]")]
    ir = k.inspect_ir(("float32", "float32[:]", "float32[:]"))
    assert "func" in ir and "f32" in ir
    nvvm = k.inspect_nvvm("void(float32, float32[:], float32[:])")
    assert "define" in nvvm and "nvvm.annotations" in nvvm
    ptx = k.inspect_ptx()
    assert isinstance(ptx, dict) and len(ptx) == 1
    (text,) = ptx.values()
    assert ".entry" in text and "sm_" in text
    ov = k.overloads[("float32", "float32[:]", "float32[:]")]
    assert len(ov.cubin) > 0 and ov.cubin[:4] == b"\x7fELF"
    assert ov.param_count == 7   # a, then (ptr, shape, stride) per 1-d array
    assert set(ov.stage_times) == {"decode", "infer", "passes", "emit", "nvvm", "link"}


def test_signature_list_compiles_each():
    k = cuda.jit(["void(float32, float32[:], float32[:])",
                  "void(float64, float64[::1], float64[::1])"])(axpy)
    assert k.signatures == [("float32", "float32[:]", "float32[:]"),
                            ("float64", "float64[::1]", "float64[::1]")]
    assert set(k.inspect_ir()) == set(k.signatures)


def test_inspect_unknown_signature():
    k = cuda.jit("void(float32, float32[:], float32[:])")(axpy)
    with pytest.raises(KeyError, match="no compiled signature"):
        k.inspect_ir("void(float64, float64[:], float64[:])")


def test_signature_with_wrong_arity():
    with pytest.raises(errors.CompileError, match="argument"):
        cuda.jit("void(float32, float32[:])")(axpy)


def test_kernel_signature_must_return_void():
    with pytest.raises(errors.CompileError, match="void"):
        cuda.jit("float32(float32, float32[:], float32[:])")(axpy)


def test_compile_ptx_kernel():
    ptx, resty = cuda.compile_ptx(axpy, "void(float32, float32[:], float32[:])")
    assert resty == "none"
    assert ".visible .entry" in ptx and ".target sm_90" in ptx


def test_compile_ptx_cc_argument():
    ptx, _ = cuda.compile_ptx(axpy, "void(float64, float64[:], float64[:])", cc=(8, 0))
    assert ".target sm_80" in ptx


def test_compile_ptx_device_function():
    def add_one(x):
        return x + 1.0

    ptx, resty = cuda.compile_ptx(add_one, "float32(float32)", device=True)
    assert resty in ("float32", "float64")
    assert ".func" in ptx and ".entry" not in ptx


def test_inspect_without_signature_prints_readably():
    k = cuda.jit(["void(float32, float32[:], float32[:])",
                  "void(float64, float64[::1], float64[::1])"])(axpy)
    for texts in (k.inspect_ir(), k.inspect_nvvm(), k.inspect_ptx()):
        assert isinstance(texts, dict) and len(texts) == 2
        shown = str(texts)
        assert shown.count("--- (") == 2
        assert "--- (float32, float32[:], float32[:]) ---" in shown
        assert "--- (float64, float64[::1], float64[::1]) ---" in shown
        for text in texts.values():
            assert text.strip() in shown
    # one signature: the text itself
    assert isinstance(k.inspect_ptx(("float32", "float32[:]", "float32[:]")), str)


def test_compile_cubin():
    cubin, symbol = cuda.compile_cubin(axpy, "void(float32, float32[::1], float32[::1])", cc=(8, 0))
    assert cubin[:4] == b"\x7fELF" and symbol.encode() in cubin
    ptx, _ = cuda.compile_ptx(axpy, "void(float32, float32[::1], float32[::1])", arch="sm_80")
    assert symbol in ptx
    with pytest.raises(errors.CompileError, match="void"):
        cuda.compile_cubin(axpy, "float32(float32, float32[::1], float32[::1])")


def series(x, y, n):
    i = cuda.grid(1)
    s = 0.0
    for j in range(n):
        s += math.sqrt(x[(i + j) % x.size]) / (j + 1.0)
    y[i] = s


def test_fast_compile_levels():
    sig = "void(float64[:], float64[:], int32)"
    full, _ = cuda.compile_ptx(series, sig)
    texts = {level: cuda.compile_ptx(series, sig, fast_compile=level)[0] for level in ("min", "mid", "max")}
    # libNVVM optimises less: at "max" it leaves the loop as written, where
    # -O3 unrolls it
    assert texts["max"] != full and texts["max"].count("\n") < full.count("\n")
    for text in texts.values():
        assert ".entry" in text and "sqrt" in text
    assert cuda.compile_ptx(series, sig, fast_compile=True)[0] == texts["max"]
    assert cuda.compile_ptx(series, sig, fast_compile=False)[0] == full
    # ptxas gets --Ofast-compile through nvJitLink
    cubin, symbol = cuda.compile_cubin(series, sig, fast_compile="max")
    assert cubin[:4] == b"\x7fELF" and symbol.encode() in cubin


def test_fast_compile_option_and_environment(monkeypatch):
    assert cuda.jit(series)._options["fast_compile"] == ""
    assert cuda.jit(fast_compile="mid")(series)._options["fast_compile"] == "mid"
    assert cuda.jit(fast_compile=True)(series)._options["fast_compile"] == "max"
    with pytest.raises(ValueError, match="fast_compile must be"):
        cuda.jit(fast_compile="fastest")(series)
    with pytest.raises(ValueError, match="fast_compile must be"):
        cuda.compile_ptx(series, "void(float64[:], float64[:], int32)", fast_compile=2)
    monkeypatch.setenv("CUDAJIT_FAST_COMPILE", "min")      # every kernel
    assert cuda.jit(series)._options["fast_compile"] == "min"
    monkeypatch.setenv("CUDAJIT_FAST_COMPILE", "0")        # none
    assert cuda.jit(fast_compile="max")(series)._options["fast_compile"] == ""
    monkeypatch.setenv("CUDAJIT_FAST_COMPILE", "quick")
    with pytest.raises(ValueError, match="fast_compile must be"):
        cuda.jit(series)


def test_compile_accepts_kernel_objects():
    k = cuda.jit(axpy)
    ptx, resty = cuda.compile_ptx(k, "void(float32, float32[::1], float32[::1])")
    assert resty == "none" and ".entry" in ptx


def test_kernel_compile_and_stats():
    k = cuda.jit(axpy)
    assert k.compile("void(float32, float32[::1], float32[::1])") == (
        "float32", "float32[::1]", "float32[::1]")
    assert k.signatures == [("float32", "float32[::1]", "float32[::1]")]
    (stats,) = k.stats.values()
    assert stats["cache_result"] == "off" and stats["nvvm"] > 0 and stats["load"] == 0
    ov = k.overloads[("float32", "float32[::1]", "float32[::1]")]
    assert ".entry" in ov.ptx   # the PTX comes with the compile


def test_compile_ptx_matches_numba_return_type():
    numba_cuda = pytest.importorskip("numba.cuda")

    def mix(a, b):
        return a * b + 1

    ours = cuda.compile_ptx(mix, "(int32, float32)", device=True)[1]
    theirs = numba_cuda.compile_ptx(mix, "(int32, float32)", device=True, cc=(9, 0))[1]
    assert ours == str(theirs)


def test_compile_error_is_a_compile_error():
    def bad(x):
        x[0] = "a string"

    with pytest.raises(errors.CompileError):
        cuda.compile_ptx(bad, "void(float32[:])")


def test_import_does_not_need_numpy(run_python):
    """`import cudajit` leaves numpy unloaded (fresh-process import time);
    the scalar types load it on first use."""
    out = run_python(
        "import sys\n"
        "import cudajit as cuda\n"
        "print('numpy' in sys.modules)\n"
        "print(cuda.float32.__name__, cuda.complex128.__name__)\n"
        "print('numpy' in sys.modules)\n")
    assert out.split() == ["False", "float32", "complex128", "True"]
