"""numba.cuda.compile and its *_for_current_device forms (issue 14): Python
functions compiled to PTX or LTO-IR for other code to call, C ABI for
device functions, named by abi_info. No GPU: the LTO-IR is linked here by
nvJitLink into a kernel written in NVVM IR that calls it."""
import pytest

import cudajit as cuda
from cudajit import _core


def add_scaled(a, b):
    return a + 2.5 * b


# A kernel in NVVM IR that calls the exported C-ABI function `fused_add`.
CALLER = """
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"

declare float @fused_add(float, float)

define void @caller(float* %out) {
entry:
  %r = call float @fused_add(float 1.0, float 3.0)
  store float %r, float* %out
  ret void
}

@llvm.used = appending global [1 x i8*] [i8* bitcast (void (float*)* @caller to i8*)], section "llvm.metadata"
!nvvm.annotations = !{!0}
!nvvmir.version = !{!1}
!0 = !{void (float*)* @caller, !"kernel", i32 1}
!1 = !{i32 2, i32 0, i32 3, i32 2}
"""


def test_ptx_with_the_c_abi():
    ptx, resty = cuda.compile(add_scaled, "float32(float32, float32)")
    assert resty == "float32"
    assert ".visible .func  (.param .b32 func_retval0) add_scaled(" in ptx
    ptx, _ = cuda.compile(add_scaled, "float32(float32, float32)", abi_info={"abi_name": "fused_add"})
    assert ") fused_add(" in ptx and "add_scaled" not in ptx


def test_ltoir_links_into_a_caller():
    lto, resty = cuda.compile(add_scaled, "float32(float32, float32)", output="ltoir",
                              abi_info={"abi_name": "fused_add"}, cc=(9, 0))
    assert isinstance(lto, bytes) and resty == "float32"
    caller = _core.nvvm_to_ltoir(CALLER, arch=90)
    inputs = [("ltoir", caller, "caller"), ("ltoir", lto, "fused_add")]
    assert _core.link_cubin(inputs, arch=90)[:4] == b"\x7fELF"
    linked = _core.link_ptx(inputs, arch=90)
    # Inlined and folded by link-time optimisation: 1 + 2.5 * 3 = 8.5 (0x41080000).
    assert ".entry caller" in linked and str(0x41080000) in linked


def test_kernels_take_the_numba_abi():
    def k(x):
        x[0] = 1.0
    ptx, resty = cuda.compile(k, "void(float32[::1])", device=False, abi="numba")
    assert ".entry" in ptx and resty == "none"
    lto, _ = cuda.compile(k, "void(float32[::1])", device=False, abi="numba", output="ltoir")
    assert isinstance(lto, bytes) and len(lto) > 0


@pytest.mark.parametrize("options,error,message", [
    (dict(device=False), NotImplementedError, "The C ABI is not supported for kernels"),
    (dict(abi="numba"), NotImplementedError, r"abi='numba' for device functions .* use abi='c'"),
    (dict(abi="fortran"), NotImplementedError, "Unsupported ABI: fortran"),
    (dict(output="cubin"), NotImplementedError, "Unsupported output type: cubin"),
    (dict(abi_info={"abi_nmae": "x"}), ValueError, r"abi_info has unknown key\(s\) \['abi_nmae'\]"),
])
def test_errors(options, error, message):
    with pytest.raises(error, match=message):
        cuda.compile(add_scaled, "float32(float32, float32)", **options)


def test_current_device_forms_need_a_gpu():
    if cuda.is_available():
        pytest.skip("a GPU is usable here: tests/gpu covers the forms with one")
    for fn in (cuda.compile_for_current_device, cuda.compile_ptx_for_current_device):
        with pytest.raises(cuda.CudaSupportError):
            fn(add_scaled, "float32(float32, float32)")
