"""Half-precision MathDx routines inside kernels (issue 13): cuFFTDx's
complex<__half2> value ('complex32x2', float16x4 in kernels: two FFTs'
values) and cuBLASDx's complex<__half> ('complex32', float16x2), as
nvmath-python's fp16 examples write them (tests/mathdx_half_kernels.py).
Linked into cubins here, no GPU; launched against numpy in
tests/gpu/test_mathdx_half_gpu.py."""
import inspect
import os
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
    import mathdx_half_kernels
    return mathdx_half_kernels


def test_value_types_and_nvmath_names():
    hk = _kernels()
    assert hk.HALF2.value_type == "complex32x2" and hk.HALF2.implicit_type_batching == 2
    assert hk.CGEMM.a_value_type == hk.CGEMM.c_value_type == "complex32"
    # nvmath.device's numba type names are cudajit's vector types
    def symbol(x):
        return x._cudajit_symbol_
    assert mathdx.float16x2_type is mathdx.float16x2 and symbol(mathdx.float16x2) == symbol(cudajit.float16x2)
    assert symbol(mathdx.float16x4_type) == "cudajit.float16x4"
    assert symbol(mathdx.float32x2_type) == "cudajit.float32x2"
    assert symbol(mathdx.float64x2_type) == "cudajit.float64x2"
    assert {"float16x2_type", "float16x4_type", "float32x2_type", "float64x2_type"} <= set(mathdx.__all__)


@pytest.mark.parametrize("name, sig, block, routine", [
    ("block_half2", "HALF2_SIG", None, "HALF2"),
    ("thread_half", "THREAD_SIG", (64,), "THREAD"),
    ("block_r2c_half", "R2C_SIG", None, "R2C"),
    ("block_c2r_half", "C2R_SIG", None, "C2R"),
])
def test_half_ffts_link_into_cubins(name, sig, block, routine):
    hk = _kernels()
    kernel, signature, f = getattr(hk, name), getattr(hk, sig), getattr(hk, routine)
    ptx, _ = cudajit.compile_ptx(kernel, signature, block=block)
    text = ptx.split(".entry", 1)[1]
    # the routine is inlined (no call left) and computes on pairs of halves
    assert f.symbol not in ptx and "call" not in text.replace("call.uni", "")
    assert text.count("fma.rn.f16x2") + text.count("add.rn.f16x2") + text.count("sub.rn.f16x2") + \
        text.count("add.f16x2") + text.count("sub.f16x2") >= 2 * f.elements_per_thread
    if f.execution == "Block":
        assert ".reqntid " + ", ".join(str(d) for d in f.block_dim) in ptx
    assert bytes(cudajit.compile_cubin(kernel, signature, block=block)[0][:4]) == b"\x7fELF"


def test_complex_half_gemm_links_and_keeps_its_shared_stores():
    hk = _kernels()
    ptx, _ = cudajit.compile_ptx(hk.batched_cgemm, hk.CGEMM_SIG)
    text = ptx.split(".entry", 1)[1]
    assert hk.CGEMM.symbol not in ptx and "call" not in text.replace("call.uni", "")
    assert ".reqntid 128, 1, 1" in ptx
    # A, B and C read from global memory and stored to shared memory as halves
    # (a libNVVM bug used to delete these stores: lower_array.cpp)
    assert text.count("ld.global") >= 3 and text.count("st.shared") >= 3
    assert text.count("cvt.rn.f16.f32") >= 6           # re and im of A, B, C
    assert text.count("cvt.rn.f16.f64") == 4           # alpha and beta (complex128 arguments)
    assert bytes(cudajit.compile_cubin(hk.batched_cgemm, hk.CGEMM_SIG)[0][:4]) == b"\x7fELF"


def test_gemm_alpha_may_be_a_real_number():
    hk = _kernels()
    sig = hk.CGEMM_SIG.replace("complex128, complex128", "float64, float32")
    ptx, _ = cudajit.compile_ptx(hk.batched_cgemm, sig)
    assert "cvt.rn.f16.f64" in ptx and "cvt.rn.f16.f32" in ptx


def _line(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if marker in s)


def test_gemm_of_another_item_type_names_both():
    hk = _kernels()
    MM = hk.CGEMM

    def k(alpha):
        a = cudajit.shared.array(MM.a_size, np.complex64)
        b = cudajit.shared.array(MM.b_size, MM.b_value_type)
        c = cudajit.shared.array(MM.c_size, MM.c_value_type)
        MM.execute(alpha, a, b, alpha, c)   # L:exec

    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(cudajit.jit(k), "void(complex64)")
    assert "Matmul.execute's a must be an array of complex32 (float16x2), got array(c64" in str(info.value)
    assert info.value.line == _line(k, "L:exec")


def test_half_fft_shared_memory_of_another_type_is_refused():
    hk = _kernels()
    f = hk.HALF2

    def k(x):
        smem = cudajit.shared.array(0, np.float16)
        f.execute(smem)   # L:exec
        x[0] = smem[0]

    with pytest.raises(cudajit.CompileError, match=r"shared-memory array of complex32x2 \(float16x4\)") as info:
        cudajit.compile_ptx(cudajit.jit(k), "void(float16[::1])")
    assert info.value.line == _line(k, "L:exec")
