"""cudajit.mathdx.random: nvmath.device.random's curand_kernel.h API
(random.init, uniform, normal, uniform4, ... on StatesXORWOW /
StatesPhilox4_32_10 / StatesMRG32k3a) through a CUDA C++ shim compiled by
NVRTC and linked as LTO-IR (issue 13). Without a GPU: the states' layout,
kernels for every generator and function linked into cubins for sm_80 and
sm_90, the state arrays on the mock driver, and the errors. The draws are
checked by their moments in tests/gpu/test_mathdx_curand_gpu.py."""
import numpy as np
import pytest

import cudajit
from cudajit import _core
from cudajit.errors import CompileError
from cudajit.mathdx import random

GENERATORS = ["XORWOW", "Philox4_32_10", "MRG32k3a"]


def array_sig(kind, *rest):
    rec = _core.record_type(random._state_dtype(kind))
    return "void(" + ", ".join([f"array({rec}, 1d, C)", *rest]) + ")"


def setup(states, seed):
    i = cudajit.grid(1)
    if i < states.shape[0]:
        random.init(seed, i, 0, states[i])


def scalars(states, f32, f64, u32):
    i = cudajit.grid(1)
    s = states[i]
    f32[i, 0] = random.uniform(s)
    f32[i, 1] = random.normal(s)
    f32[i, 2] = random.log_normal(s, 0.5, 0.25)
    f64[i, 0] = random.uniform_double(s)
    f64[i, 1] = random.normal_double(s)
    f64[i, 2] = random.log_normal_double(s, 0.5, 0.25)
    u32[i, 0] = random.rand(s)
    u32[i, 1] = random.poisson(s, 4.5)
    n2 = random.normal2(s)
    d2 = random.normal2_double(s)
    f32[i, 3] = n2.x + n2.y
    f64[i, 3] = d2.x - d2.y
    random.skipahead(7, s)
    random.skipahead_sequence(1, s)


def wide(states, f32, f64, u32):
    i = cudajit.grid(1)
    u = random.uniform4(states[i])
    n = random.normal4(states[i])
    r = random.rand4(states[i])
    d = random.uniform2_double(states[i])
    f32[i, 0] = u.x + u.y + u.z + u.w
    f32[i, 1] = n.x * n.w
    u32[i, 0] = r.x ^ r.y ^ r.z ^ r.w
    f64[i, 0] = d.x + d.y


OUTS = ("float32[:, ::1]", "float64[:, ::1]", "uint32[:, ::1]")


def test_state_dtypes():
    for kind, (tag, size) in random._KINDS.items():
        dt = random._state_dtype(kind)
        assert dt.fields["generator"][1] == 0 and dt.fields["state"][1] == 16
        assert dt.itemsize == 16 + size and dt.itemsize % 16 == 0   # 16-byte aligned items (Philox's uint4)
    assert len({t for t, _ in random._KINDS.values()}) == len(random._KINDS)


@pytest.mark.parametrize("kind", GENERATORS)
@pytest.mark.parametrize("fn, rest", [(setup, ("uint64",)), (scalars, OUTS)], ids=["init", "scalars"])
def test_kernels_link_into_a_cubin(kind, fn, rest):
    sig = array_sig(kind, *rest)
    cubin = cudajit.compile_cubin(cudajit.jit(fn, link=random.Compile().files), sig, arch="sm_90")[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_philox_wide_functions_link(arch):
    cubin = cudajit.compile_cubin(cudajit.jit(wide), array_sig("Philox4_32_10", *OUTS), arch=arch)[0]
    assert bytes(cubin[:4]) == b"\x7fELF"
    ptx, _ = cudajit.compile_ptx(cudajit.jit(wide), array_sig("Philox4_32_10", *OUTS), arch=arch)
    assert ".entry" in ptx


def test_the_shim_is_linked_once_with_the_kernels_own_link_files():
    # nvmath's form: link=compiled.files and the functions' own declaration
    # name the same file; linking it twice would be duplicate symbols.
    compiled = random.Compile(cc=None)
    assert compiled.files == [random._SHIM] and [e.prepare_args("t", 1) for e in compiled.extension] == [("t", 1)]
    k = cudajit.jit(setup, link=compiled.files, extensions=compiled.extension)
    assert bytes(cudajit.compile_cubin(k, array_sig("XORWOW", "uint64"), arch="sm_90")[0][:4]) == b"\x7fELF"


def not_a_state(states, x):
    random.uniform(x)   # L:float


def state_array_itself(states, x):
    random.uniform(states)   # L:array


def wide_not_a_state(states, x):
    random.uniform4(x)   # L:wide


@pytest.mark.parametrize("fn, label, text", [
    (not_a_state, "float", r"argument 1 of cj_curand_uniform\(\) is a pointer to anything: pass an array or a record"),
    (state_array_itself, "array", r"does not take arrays of records"),
    (wide_not_a_state, "wide", r"argument 1 of cj_curand_uniform4\(\) is a pointer to anything")])
def test_wrong_arguments_name_the_line(fn, label, text):
    with pytest.raises(CompileError, match=text) as info:
        cudajit.compile_ptx(cudajit.jit(fn), array_sig("XORWOW", "float64"), arch="sm_90")
    # the kernel's line: the error's own, or (inside the 2- and 4-wide
    # wrappers) the call that led there
    line = next(n for n, t in enumerate(open(__file__), 1) if t.rstrip().endswith("# L:" + label))
    assert f"test_mathdx_curand.py:{line}" in str(info.value)


@pytest.mark.parametrize("name", ["StatesSobol32", "StatesScrambledSobol64", "StatesMtgp32"])
def test_generators_needing_host_tables_say_so(name):
    with pytest.raises(NotImplementedError, match="host-side tables"):
        getattr(random, name)(16)


def test_states_on_the_mock_driver(run_python, mock_driver):
    out = run_python("""
        import numpy as np
        from cudajit.mathdx import random
        for make, tag in ((random.StatesXORWOW, 1), (random.StatesPhilox4_32_10, 2), (random.StatesMRG32k3a, 3)):
            s = make(37)
            h = s.copy_to_host()
            assert s.shape == (37,) and h.dtype.names == ("generator", "state"), (s.shape, h.dtype)
            assert (h["generator"] == tag).all()
        try:
            random.StatesXORWOW(-1)
        except ValueError as e:
            print("refused", e)
        print("ok")
    """, driver=mock_driver)
    assert "refused" in out and out.strip().endswith("ok")
