"""kernel.inspect_sass() (numba's): each overload's cubin disassembled by
nvdisasm (.ci/run installs the nvidia-cuda-nvdisasm wheel; no GPU needed)."""
import pytest

import cudajit as cuda
from cudajit import _nvdisasm

if _nvdisasm.find_nvdisasm() is None:
    pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm)", allow_module_level=True)


def test_sass_of_each_overload():
    @cuda.jit(["void(float32[::1])", "void(float64[::1])"])
    def k(x):
        x[0] += 1.0

    sass = k.inspect_sass(("float32[::1]",))
    assert "FADD" in sass and "STG" in sass
    every = k.inspect_sass()
    assert list(every) == [("float32[::1]",), ("float64[::1]",)]
    assert "DADD" in every[("float64[::1]",)]
    with pytest.raises(KeyError, match="no overload compiled for"):
        k.inspect_sass(("int32[::1]",))


def test_missing_tool_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(_nvdisasm, "find_nvdisasm", lambda: None)

    @cuda.jit("void(float32[::1])")
    def k(x):
        x[0] = 1.0

    with pytest.raises(RuntimeError, match="pip install nvidia-cuda-nvdisasm"):
        k.inspect_sass(("float32[::1]",))


def test_float16_fields_of_packed_records_are_stored_as_bits():
    # ptxas (CUDA 13.0) compiled a byte store of a register cvt.rn.f16 wrote
    # into F2I.U8.F16 (a float-to-int conversion), so a float16 field of a
    # packed record, stored byte by byte, got its integer value in the low
    # byte (seen on an H200: 49.59 stored for 51.0). The conversion's bits
    # now leave it through an integer register.
    import numpy as np
    from cudajit import _core

    dt = np.dtype([("b", np.bool_), ("h", np.float16), ("u", np.uint8)])   # h at offset 1: byte stores

    def k(a, x):
        i = cuda.grid(1)
        a[i].h = a[i].u
        a[i + 1].h = x[i]
    rec = _core.record_type(dt)
    for src in ("float32", "float64"):
        cubin = cuda.compile_cubin(k, f"void(array({rec}, 1d, C), {src}[::1])", arch="sm_90")[0]
        sass = _nvdisasm.disassemble(bytes(cubin))
        assert "F2F.F16" in sass and "F2I" not in sass, sass
