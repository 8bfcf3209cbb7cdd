"""cudajit.mathdx.FFT (issue 13): cuFFTDx descriptors through libmathdx ->
traits and LTO-IR, called inside kernels (tests/mathdx_fft_kernels.py) and
linked into a cubin by nvJitLink. No GPU needed (the launches against
numpy.fft are tests/gpu/test_mathdx_fft_gpu.py)."""
import inspect
import os
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

from cudajit import mathdx  # noqa: E402


def _kernels():
    sys.path.insert(0, os.path.dirname(__file__))
    import mathdx_fft_kernels
    return mathdx_fft_kernels


def test_block_traits():
    f = _kernels().BLOCK
    # cuFFTDx's answers for a 128-point fp32 c2c block FFT, 8 elements a
    # thread, 2 FFTs a block: 128 / 8 = 16 threads an FFT.
    assert f.block_dim == (16, 2, 1) and f.ffts_per_block == 2
    assert (f.elements_per_thread, f.storage_size, f.stride) == (8, 8, 16)
    assert f.value_type == f.input_type == f.output_type == "complex64"
    assert f.shared_memory_size > 0 and f.shared_memory_size % 8 == 0
    assert (f.size, f.fft_type, f.direction, f.execution) == (128, "c2c", "forward", "Block")
    assert f.precision is np.float32 and f.files == [] and not f.requires_workspace
    assert f.symbol.startswith("cufftdx_") and bytes(f.ltoir[:4]) != b"\x7fELF" and len(f.ltoir) > 1000
    # as nvmath.device's: a ComputeCapability (equal to the int spelling too)
    assert f.sm == mathdx.ComputeCapability(9, 0) and f.sm == 90 and f.sm.integer == 900
    assert f.code_type == ("lto", mathdx.ComputeCapability(9, 0)) and f.code_type.kind == "lto"


def test_thread_traits():
    f = _kernels().THREAD
    assert f.execution == "Thread" and f.block_dim is None and f.shared_memory_size is None
    assert f.ffts_per_block is None and f.value_type == "complex128"
    assert f.elements_per_thread == 8 and f.storage_size >= 8


def test_real_fft_traits_and_default_direction():
    f = mathdx.FFT(size=64, precision=np.float32, fft_type="r2c", execution="Block",
                   elements_per_thread=4, sm=80)
    assert f.direction == "forward"
    assert f.input_type == "float32" and f.output_type == "complex64"
    assert f.input_length == 64 and f.output_length == 33
    g = mathdx.FFT(size=64, precision=np.float32, fft_type="c2r", execution="Thread", sm=80)
    assert g.direction == "inverse" and g.output_type == "float32"


def test_suggested_ffts_per_block():
    f = mathdx.FFT(size=64, precision=np.float32, fft_type="c2c", direction="forward",
                   execution="Block", elements_per_thread=8, ffts_per_block="suggested", sm=90)
    assert f.ffts_per_block == f.suggested_ffts_per_block >= 1
    assert f.block_dim[1] == f.ffts_per_block


def test_the_suggestion_is_asked_without_code(tmp_path):
    # ffts_per_block='suggested' asks libmathdx for its suggestion from the
    # traits alone: only the FFT itself finalizes LTO-IR
    code = ("import numpy as np; from cudajit import mathdx, _core\n"
            "f = mathdx.FFT(size=128, precision=np.float32, fft_type='c2c', direction='inverse', "
            "execution='Block', ffts_per_block='suggested', sm=90)\n"
            "print(f.ffts_per_block == f.suggested_ffts_per_block, _core.mathdx_cache_stats()['compiles'])\n")
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "2"]
    entries = {}
    for name in os.listdir(tmp_path / "mathdx"):
        body = (tmp_path / "mathdx" / name).read_bytes()
        entries["code=none" in body[:1000].decode("latin-1")] = len(body)
    assert set(entries) == {True, False}
    assert entries[True] < 4096 < entries[False], entries   # traits only / the LTO-IR


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(size=64, precision=np.float32, fft_type="c2c", execution="Block"), ValueError, "needs direction"),
    (dict(size=64, precision=np.float32, fft_type="c3c", direction="forward", execution="Block"),
     ValueError, "fft_type"),
    (dict(size=64, precision=np.float32, fft_type="c2c", direction="forward", execution="Warp"),
     ValueError, "execution"),
    (dict(size=64, precision=np.int32, fft_type="c2c", direction="forward", execution="Block"),
     ValueError, "precision"),
    (dict(size=64, precision=np.float32, fft_type="c2c", direction="forward", execution="Thread",
          execute_api="shared_memory"), ValueError, "is for execution='Block'"),
    (dict(size=64, precision=np.float32, fft_type="c2c", direction="forward", execution="Block",
          execute_api="registers"), ValueError, "execute_api"),
    (dict(size=64, precision=np.float32, fft_type="r2c", execution="Block",
          real_fft_options={"layout": "packed"}), ValueError, "real_fft_options"),
    (dict(size=64, fft_type="c2c", direction="forward", execution="Block"), TypeError, "precision"),
])
def test_argument_errors(kwargs, error, text):
    with pytest.raises(error, match=text):
        mathdx.FFT(sm=90, **kwargs)


def test_descriptors_libmathdx_rejects_are_compile_errors():
    # cuFFTDx has no 3-point-a-thread 128-point FFT; size 0 is refused outright.
    with pytest.raises(cudajit.CompileError) as info:
        mathdx.FFT(size=128, precision=np.float32, fft_type="c2c", direction="forward",
                   execution="Block", elements_per_thread=3, sm=90)
    assert "libmathdx" in str(info.value) and "FFT(size=128" in str(info.value)
    with pytest.raises(cudajit.CompileError, match="size must be positive"):
        mathdx.FFT(size=0, precision=np.float32, fft_type="c2c", direction="forward",
                   execution="Block", sm=90)


@pytest.mark.parametrize("name, sig, block", [("block_fft", "BLOCK_SIG", None),
                                              ("batched_inverse", "INVERSE_SIG", None),
                                              ("thread_fft", "THREAD_SIG", (64,)),
                                              ("block_r2c", "R2C_SIG", None)])
def test_kernel_links_the_fft_into_a_cubin(name, sig, block):
    fk = _kernels()
    kernel, signature = getattr(fk, name), getattr(fk, sig)
    ptx, _ = cudajit.compile_ptx(kernel, signature, block=block)
    routine = {"block_fft": fk.BLOCK, "batched_inverse": fk.INVERSE, "thread_fft": fk.THREAD,
               "block_r2c": fk.R2C}[name]
    # libmathdx's LTO-IR is linked and inlined: no call of its entry point
    # remains; a block FFT fixes the block shape and uses shared memory.
    assert routine.symbol not in ptx and "call" not in ptx.split(".entry", 1)[1].replace("call.uni", "")
    if routine.execution == "Block":
        dims = ", ".join(str(d) for d in routine.block_dim)
        assert f".reqntid {dims}" in ptx and "st.shared" in ptx
    else:
        assert ".reqntid" not in ptx
    # the butterflies: well over one floating-point add per element a thread holds
    assert ptx.count("add.f") + ptx.count("sub.f") + ptx.count("fma.rn.f") >= 4 * routine.elements_per_thread
    cubin = cudajit.compile_cubin(kernel, signature, block=block)[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_thread_fft_links_for_sm80():
    f = mathdx.fft(fft_type="c2c", size=16, precision=np.float32, direction="inverse",
                   execution="Thread", sm=80)

    @cudajit.jit
    def k(x):
        t = cudajit.local.array(f.storage_size, f.value_type)
        for i in range(f.elements_per_thread):
            t[i] = x[cudajit.grid(1), i]
        f.execute(t)
        for i in range(f.elements_per_thread):
            x[cudajit.grid(1), i] = t[i]

    cubin = cudajit.compile_cubin(k, "void(complex64[:, ::1])", arch="sm_80")[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_launch_with_another_block_shape_is_refused():
    fk = _kernels()
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(fk.block_fft, fk.BLOCK_SIG, block=(32, 2))
    assert "FFT was built for block_dim (16, 2, 1); this kernel is launched with (32, 2, 1)" in str(info.value)
    assert info.value.file == fk.__file__


def test_kernel_errors_name_the_line():
    fk = _kernels()
    for kernel, marker, text in [
            (fk.wrong_value_type, "L:dtype", "thread_data must be an array of complex64"),
            (fk.missing_shared_memory, "L:arity", "shared_mem must be a shared-memory array of complex64"),
            (fk.other_method, "L:method", "FFT.valid is not callable inside kernels")]:
        with pytest.raises(cudajit.CompileError) as info:
            cudajit.compile_ptx(kernel, "void(complex64[::1])")
        lines, first = inspect.getsourcelines(kernel.py_func)
        line = first + next(i for i, s in enumerate(lines) if marker in s)
        assert text in str(info.value) and info.value.line == line, str(info.value)
        assert info.value.construct.startswith("FFT"), str(info.value)


@pytest.mark.parametrize("name", ["shared_fft", "shared_block_fft"])
def test_shared_memory_api_links_into_a_cubin(name):
    """cuFFTDx's shared-memory API: fft.execute(shared_mem) on an FFT built
    with execute_api='shared_memory', or on a register-API Block FFT (its
    sibling is instantiated during the compile, as nvmath picks the API by
    the call)."""
    fk = _kernels()
    f = fk.SHARED if name == "shared_fft" else fk.BLOCK
    sig = fk.SHARED_SIG if name == "shared_fft" else "void(complex64[:, ::1], complex64[:, ::1])"
    kernel = getattr(fk, name)
    ptx, _ = cudajit.compile_ptx(kernel, sig, block=tuple(f.block_dim))
    body = ptx.split(".entry", 1)[1]
    assert f.symbol not in ptx and "call" not in body.replace("call.uni", ""), body[-2000:]
    assert ".reqntid " + ", ".join(str(d) for d in f.block_dim) in ptx
    # the data goes through shared memory both ways, the butterflies in between
    assert "ld.shared" in body and "st.shared" in body
    assert body.count("add.f") + body.count("sub.f") + body.count("fma.rn.f") >= 4 * f.elements_per_thread
    cubin = cudajit.compile_cubin(kernel, sig, block=tuple(f.block_dim))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_shared_memory_api_descriptor():
    fk = _kernels()
    assert fk.SHARED.execute_api == "shared_memory" and fk.BLOCK.execute_api == "register_memory"
    assert "api=shared_memory" in repr(fk.SHARED) and "api=" not in repr(fk.BLOCK)
    assert fk.SHARED.block_dim.y == fk.SHARED.ffts_per_block == 2
    assert fk.SHARED.value_type == "complex128" and fk.SHARED.shared_memory_size > 0
    # pickled, it stays a shared-memory FFT
    assert pickle.loads(pickle.dumps(fk.SHARED)).execute_api == "shared_memory"


def test_shared_memory_api_errors_name_the_line():
    fk = _kernels()
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(fk.shared_api_with_two_arguments, "void(complex128[::1])")
    lines, first = inspect.getsourcelines(fk.shared_api_with_two_arguments.py_func)
    line = first + next(i for i, s in enumerate(lines) if "L:shared2" in s)
    assert "execute_api='shared_memory' takes 1 argument (shared_mem), got 2" in str(info.value)
    assert info.value.line == line and info.value.file == fk.__file__


def test_sibling_instantiation_errors_name_the_call(tmp_path):
    """A sibling the instantiator fails to make (here a stand-in that raises)
    is a CompileError at the kernel's line, not a crash; a fresh cache
    directory makes sure the sibling is not served from disk."""
    code = """
import sys
import numpy as np
import cudajit
from cudajit import _core, mathdx
f = mathdx.FFT(fft_type="c2c", size=32, precision=np.float32, direction="inverse",
               elements_per_thread=4, ffts_per_block=1, execution="Block", sm=90)

def refuse(spec):
    raise cudajit.CompileError("libmathdx refused " + spec["api"])

def broken(spec):
    raise RuntimeError("the child process died")

@cudajit.jit
def k(x):
    smem = cudajit.shared.array(shape=(0,), dtype=f.value_type)
    f.execute(smem)   # L:sibling
    x[0] = smem[0]

line = next(i + 1 for i, t in enumerate(open(__file__).read().splitlines()) if "L:sibling" in t and "for" not in t)
for stand_in, text in ((refuse, "libmathdx refused shared_memory"), (broken, "the child process died")):
    _core.mathdx_set_instantiators(stand_in)
    try:
        cudajit.compile_ptx(k, "void(complex64[::1])", block=tuple(f.block_dim))
    except cudajit.CompileError as e:
        assert "the FFT's shared-memory API" in str(e) and text in str(e), str(e)
        assert e.line == line, (e.line, line)
    else:
        sys.exit("no error")
print("ok")
"""
    from test_mathdx import run_script_prints_ok
    run_script_prints_ok(tmp_path, "sibling_errors.py", code)


def test_half_precision_thread_data_must_be_float16x4():
    # A half FFT's value is two FFTs' complex<__half2> (complex32x2), float16x4
    # in kernels (tests/test_mathdx_half.py has the kernels that run).
    f = mathdx.FFT(size=64, precision=np.float16, fft_type="c2c", direction="forward",
                   execution="Thread", sm=90)
    assert f.value_type == "complex32x2" and f.implicit_type_batching == 2

    def k(x):
        t = cudajit.local.array(8, np.complex64)
        f.execute(t)   # L:half

    with pytest.raises(cudajit.CompileError,
                       match=r"thread_data must be an array of complex32x2 \(float16x4\)") as info:
        cudajit.compile_ptx(cudajit.jit(k), "void(complex64[::1])")
    lines, first = inspect.getsourcelines(k)
    assert info.value.line == first + next(i for i, s in enumerate(lines) if "L:half" in s)


def test_execute_on_the_host_is_refused():
    with pytest.raises(cudajit.DeviceOnlyError):
        _kernels().BLOCK.execute(None, None)


def test_fft_pickles_into_a_new_process():
    f = _kernels().INVERSE
    code = ("import pickle, sys; from cudajit import _core\n"
            "f = pickle.loads(sys.stdin.buffer.read())\n"
            "print(f.symbol, f.block_dim.x, f._cudajit_symbol_, _core.mathdx_cache_stats()['compiles'])\n")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(f), capture_output=True)
    assert out.returncode == 0, out.stderr.decode()
    words = out.stdout.decode().split()
    assert words[0] == f.symbol and int(words[1]) == f.block_dim.x and words[2] == f._cudajit_symbol_
    assert words[3] == "0"    # served by the disk cache this process wrote


@pytest.mark.parametrize("fft_type", ["r2c", "c2r"])
@pytest.mark.parametrize("precision", [np.float32, np.float64])
def test_real_fft_kernels_link(fft_type, precision):
    fk = _kernels()
    f = mathdx.FFT(size=64, precision=precision, fft_type=fft_type, execution="Block",
                   elements_per_thread=8, ffts_per_block=2, sm=80)
    real, cplx = ("float32", "complex64") if precision == np.float32 else ("float64", "complex128")
    x, y = (real, cplx) if fft_type == "r2c" else (cplx, real)
    cubin = cudajit.compile_cubin(fk.real_block_kernel(f, precision), f"void({x}[:, ::1], {y}[:, ::1])",
                                  arch="sm_80")[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_fft_convolution_example_compiles_without_a_gpu():
    if cudajit.is_available():
        pytest.skip("the example launches on a GPU here (tests/gpu runs it)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "fft_convolution.py"), "--size", "256"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "256-point convolution: block" in out.stdout and "cubin" in out.stdout


def test_valid_knobs_build_the_descriptors_they_name():
    # nvmath's FFT.valid (cufftdx_autotuning): libmathdx's knob query
    base = dict(fft_type="c2c", size=256, precision=np.float32, direction="forward", execution="Block", sm=90)
    f = mathdx.FFT(**base)
    combos = f.valid("elements_per_thread", "ffts_per_block")
    assert combos and all(len(c) == 2 and all(isinstance(v, int) and v > 0 for v in c) for c in combos)
    assert len(set(combos)) == len(combos)
    epts = f.valid("elements_per_thread")
    assert sorted(e for (e,) in epts) == sorted({e for e, _ in combos})
    assert f.elements_per_thread in {e for (e,) in epts}
    for ept, fpb in combos[:2]:
        g = mathdx.FFT(**base, elements_per_thread=ept, ffts_per_block=fpb)
        assert (g.elements_per_thread, g.ffts_per_block) == (ept, fpb)
    # the knobs asked for are free: a descriptor built with one answers the same
    assert mathdx.FFT(**base, elements_per_thread=combos[0][0]).valid("elements_per_thread") == epts


def test_valid_errors():
    f = mathdx.FFT(fft_type="c2c", size=16, precision=np.float64, direction="inverse", execution="Thread", sm=80)
    assert all(len(c) == 1 for c in f.valid("elements_per_thread"))
    with pytest.raises(ValueError, match="unknown knob 'block_dim'"):
        f.valid("block_dim")
    with pytest.raises(ValueError, match="ffts_per_block is a knob of Block execution"):
        f.valid("ffts_per_block")
    with pytest.raises(ValueError, match="name at least one knob"):
        f.valid()
