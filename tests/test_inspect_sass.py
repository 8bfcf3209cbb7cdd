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
