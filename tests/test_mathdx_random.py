"""cudajit.mathdx.Random (issue 13): cuRANDDx generators and distributions
through libmathdx -> symbols, state size and LTO-IR, called inside kernels
and linked into a cubin by nvJitLink. No GPU needed (the draws are checked
by their moments in tests/gpu/test_mathdx_random_gpu.py)."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import cudajit
from cudajit import _core

try:
    _core.mathdx_library()
except ImportError as exc:
    pytest.skip(f"libmathdx cannot be loaded ({exc}); pip install nvidia-libmathdx-cu13",
                allow_module_level=True)

from cudajit.mathdx import Random  # noqa: E402


@pytest.mark.parametrize("generator, count", [("philox4_32", 4), ("xorwow", 1), ("mrg32k3a", 1), ("pcg", 1)])
def test_traits(generator, count):
    r = Random(generator, "uniform", np.float32, sm=90)
    assert r.count == count and r.dtype == r.param_type == "float32"
    assert r.state_size > 0 and r.state_alignment > 0 and r.state_size % r.state_alignment == 0
    assert set(r.symbols) == {"init", "generate", "skip_offset", "skip_subsequence"}
    assert len(set(r.symbols.values())) == 4 and len(r.ltoir) > 1000 and r.files == []


def test_poisson_and_bits_default_to_uint32():
    p = Random("xorwow", "poisson", sm=90)
    assert p.dtype == "uint32" and p.param_type == "float64" and p.count == 1
    b = Random("pcg", "uniform_bits", sm=80)
    assert b.dtype == "uint32" and b.count == 1


@pytest.mark.parametrize("args, error, text", [
    (("sobol32",), ValueError, "quasi-random"),
    (("philox4_32", "gamma"), ValueError, "distribution"),
    (("philox4_32", "uniform", np.float32, "triple"), ValueError, "method"),
])
def test_argument_errors(args, error, text):
    with pytest.raises(error, match=text):
        Random(*args, sm=90)


def test_combinations_curanddx_lacks_are_compile_errors():
    # xorwow makes one value a call: four at a time is cuRANDDx's refusal, with its message.
    with pytest.raises(cudajit.CompileError) as info:
        Random("xorwow", "uniform", np.float32, "quad", sm=90)
    assert "generate4" in str(info.value) and info.value.construct == "mathdx.random"
    with pytest.raises(cudajit.CompileError, match="philox_rounds is for the philox4_32"):
        Random("pcg", philox_rounds=7, sm=90)
    with pytest.raises(cudajit.CompileError, match="normal_method is for the normal"):
        Random("pcg", "uniform", normal_method="icdf", sm=90)


R = Random("philox4_32", "normal", np.float32, sm=90)
X = Random("xorwow", "uniform", np.float64, sm=90)


def setup(states, seed):
    i = cudajit.grid(1)
    if i < states.shape[0]:
        R.init(seed, i, 0, states[i])


def draw(states, out):
    i = cudajit.grid(1)
    if i < states.shape[0]:
        v = cudajit.local.array(4, np.float32)
        R.generate(states[i], v, 1.0, 2.0)
        for k in range(4):
            out[i, k] = v[k]
        R.skip_subsequence(states[i], 3)
        R.skip_offset(states[i], 7)


def init_and_draw(states, out):
    i = cudajit.grid(1)
    X.init(1234, i, 0, states[i])
    v = cudajit.local.array(1, np.float64)
    X.generate(states[i], v)
    out[i] = v[0]


@pytest.mark.parametrize("fn, sig", [(setup, "void(uint8[:, ::1], int64)"),
                                     (draw, "void(uint8[:, ::1], float32[:, ::1])"),
                                     (init_and_draw, "void(uint8[:, ::1], float64[::1])")])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_kernels_link_into_a_cubin(fn, sig, arch):
    kernel = cudajit.jit(fn)
    ptx, _ = cudajit.compile_ptx(kernel, sig, arch=arch)
    body = ptx.split(".entry", 1)[1]
    # inlined: no call of libmathdx's functions is left, and (init and
    # generate in one kernel) their one module was linked once
    assert "call" not in body.replace("call.uni", "") and not any(s in ptx for s in R.symbols.values())
    cubin = cudajit.compile_cubin(kernel, sig, arch=arch)[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def bad_out(states, out):
    v = cudajit.local.array(4, np.float64)
    R.generate(states[0], v)   # L:out


def bad_state(states, out):
    R.init(1, 2, 3, 4.0)   # L:state


def bad_arity(states, out):
    R.skip_offset(states[0])   # L:arity


def bad_method(states, out):
    R.destroy(states[0])   # L:method


def missing_lambda(states, out):
    v = cudajit.local.array(1, np.uint32)
    Random_P.generate(states[0], v)   # L:lambda


Random_P = Random("xorwow", "poisson", sm=90)


@pytest.mark.parametrize("fn, text", [
    (bad_out, "out must be a writable array of float32"),
    (bad_state, "the state must be a writable array"),
    (bad_arity, "Random.skip_offset takes skip_offset(state, n), got 1"),
    (bad_method, "Random.destroy is not callable inside kernels"),
    (missing_lambda, "needs lambda"),
])
def test_kernel_errors_name_the_line(fn, text):
    import inspect
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(cudajit.jit(fn), "void(uint8[:, ::1], float32[::1])")
    lines, first = inspect.getsourcelines(fn)
    marker = next(s for s in lines if "# L:" in s).split("# L:")[1].strip()
    line = first + next(i for i, s in enumerate(lines) if f"L:{marker}" in s)
    assert text in str(info.value) and info.value.line == line, str(info.value)
    assert info.value.construct.startswith("Random"), str(info.value)


def test_methods_on_the_host_are_refused():
    with pytest.raises(cudajit.DeviceOnlyError):
        R.generate(None, None)


def test_random_pickles_into_a_new_process():
    # built here, under this test's cache directory, which the child inherits
    r = Random("mrg32k3a", "normal", np.float64, sm=80)
    code = ("import pickle, sys; from cudajit import _core\n"
            "r = pickle.loads(sys.stdin.buffer.read())\n"
            "print(r.symbols['generate'], r.state_size, _core.mathdx_cache_stats()['compiles'])\n")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(r), capture_output=True)
    assert out.returncode == 0, out.stderr.decode()
    words = out.stdout.decode().split()
    assert words[0] == r.symbols["generate"] and int(words[1]) == r.state_size
    assert words[2] == "0"    # served by the disk cache this process wrote


def test_a_descriptor_for_a_newer_target_is_refused():
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(cudajit.jit(setup), "void(uint8[:, ::1], int64)", arch="sm_80")
    assert "this Random was built for sm_90 (its LTO-IR); the kernel is compiled for sm_80" in str(info.value)
    assert info.value.line > 0
