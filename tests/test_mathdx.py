"""cudajit.mathdx (stage 1): cuBLASDx descriptors through libmathdx ->
traits and LTO-IR, linked into a cubin by nvJitLink. No GPU needed.

Each instantiation costs libmathdx an NVRTC compile (~20 s on a small
machine); results are cached on disk (<cache root>/mathdx), so the cases
below are few and each is built once per session."""

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import cudajit
from cudajit import _core

try:
    LIBRARY = _core.mathdx_library()
except ImportError as exc:
    pytest.skip(f"libmathdx cannot be loaded ({exc}); pip install nvidia-libmathdx-cu13",
                allow_module_level=True)

from cudajit import mathdx  # noqa: E402

ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16,
            "complex32": 4}
REAL_TO_COMPLEX = {"float16": "complex32", "float32": "complex64", "float64": "complex128"}

# name: (keyword arguments of mathdx.matmul). fp16/fp32/fp64 real and fp32
# complex; row/col arrangements mixed; sm_80 and sm_90; given and suggested
# block dims.
CASES = {
    "f32_col_sm80": dict(size=(32, 32, 32), precision=np.float32, data_type="real",
                         arrangement=("col_major", "col_major", "col_major"), block_dim=(128, 1, 1),
                         sm=80),
    "f16_mixed_sm90": dict(size=(64, 32, 16), precision=np.float16, data_type="real",
                           arrangement=("row_major", "col_major", "row_major"),
                           block_dim=(64, 2, 1), sm=90),
    "f64_row_sm80_suggested": dict(size=(16, 32, 8), precision=np.float64, data_type="real",
                                   arrangement=("row_major", "row_major", "col_major"), sm=(8, 0)),
    "c64_sm90": dict(size=(32, 16, 8), precision=np.float32, data_type="complex",
                     arrangement=("col_major", "row_major", "col_major"), block_size=64,
                     code_type=("lto", (9, 0))),
    "f32_padded_ld_sm90": dict(size=(32, 32, 32), precision=np.float32, data_type="real",
                               arrangement=("col_major", "row_major", "col_major"),
                               leading_dimension=(40, 36, 33), block_dim=(128, 1, 1), sm=90),
}

_built = {}


def build(name):
    if name not in _built:
        _built[name] = mathdx.matmul(**CASES[name])
    return _built[name]


def tight_leading_dimensions(m, n, k, arrangement):
    """A is m x k, B k x n, C m x n: a column-major matrix's leading
    dimension is its row count, a row-major one's its column count."""
    shapes = [(m, k), (k, n), (m, n)]
    return tuple(rows if arr == "col_major" else cols
                 for (rows, cols), arr in zip(shapes, arrangement))


def value_type(case):
    name = np.dtype(case["precision"]).name
    return REAL_TO_COMPLEX[name] if case["data_type"] == "complex" else name


def shared_layout(mm):
    """Byte offsets of A, B, C and the total, each matrix at its alignment."""
    m, n, k = mm.size
    shapes = [(m, k), (k, n), (m, n)]
    types = [mm.a_value_type, mm.b_value_type, mm.c_value_type]
    offsets, at = [], 0
    for i, ((rows, cols), t) in enumerate(zip(shapes, types)):
        align = mm.alignment[i]
        at = (at + align - 1) // align * align
        offsets.append(at)
        stored = mm.leading_dimension[i] * (rows if mm.arrangement[i] == "row_major" else cols)
        at += stored * ITEMSIZE[t]
    return offsets, at


@pytest.mark.parametrize("name", CASES)
def test_traits(name):
    case, mm = CASES[name], build(name)
    m, n, k = case["size"]
    assert mm.size == (m, n, k)
    vt = value_type(case)
    assert (mm.a_value_type, mm.b_value_type, mm.c_value_type) == (vt, vt, vt)
    assert mm.arrangement == case["arrangement"]
    ld = case.get("leading_dimension") or tight_leading_dimensions(m, n, k, case["arrangement"])
    assert mm.leading_dimension == ld
    assert (mm.lda, mm.ldb, mm.ldc) == ld
    # Shared memory: at least the three tiles, at most alignment padding more.
    tiles = (m * k + k * n + m * n) * ITEMSIZE[vt]
    assert mm.shared_memory_size >= tiles
    offsets, total = shared_layout(mm)
    assert mm.shared_memory_size == total == mm.get_shared_storage_size()
    stored = (mm.a_size + mm.b_size + mm.c_size) * ITEMSIZE[vt]   # with padded rows/columns
    assert stored >= tiles
    assert mm.shared_memory_size <= stored + 2 * max(mm.alignment)
    # Block shape: the one asked for, or a suggested one of whole warps.
    threads = mm.block_dim.x * mm.block_dim.y * mm.block_dim.z
    assert mm.max_threads_per_block == mm.block_size == threads
    if "block_dim" in case:
        assert tuple(mm.block_dim) == case["block_dim"]
    elif "block_size" in case:
        assert tuple(mm.block_dim) == (case["block_size"], 1, 1)
    else:
        assert mm.block_dim == mm.suggested_block_dim
    assert 32 <= threads <= 1024 and threads % 32 == 0
    sx, sy, sz = mm.suggested_block_dim
    assert sx * sy * sz % 32 == 0 and sx * sy * sz <= 1024
    # Suggested leading dimensions are valid ones: at least the tight ones.
    tight = tight_leading_dimensions(m, n, k, case["arrangement"])
    assert all(s >= t for s, t in zip(mm.suggested_leading_dimension, tight))
    assert mm.sm == (case["sm"][0] * 10 + case["sm"][1] if isinstance(case.get("sm"), tuple)
                     else case.get("sm", 90))


@pytest.mark.parametrize("name", CASES)
def test_ltoir_links_to_a_cubin(name):
    """A kernel that calls the routine on shared memory, linked with its
    LTO-IR by nvJitLink: an undefined symbol or a bad module fails here."""
    mm = build(name)
    assert mm.symbol.isidentifier()
    assert len(mm.ltoirs) == 1 and len(mm.ltoir) > 1000
    offsets, total = shared_layout(mm)
    size = (total + 15) // 16 * 16
    arr = f"[{size} x i8]"
    ptrs = "\n".join(
        f"  %{x} = getelementptr {arr}, {arr}* %s, i64 0, i64 {off}"
        for x, off in zip("abc", offsets))
    nvvm = f"""target datalayout = "e-p:64:64:64-p3:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@smem = internal addrspace(3) global {arr} undef, align 16
declare void @{mm.symbol}(i8*, i8*, i8*, i8*, i8*)

define void @mathdx_probe(i8* %alpha, i8* %beta) {{
entry:
  %s = addrspacecast {arr} addrspace(3)* @smem to {arr}*
{ptrs}
  call void @{mm.symbol}(i8* %alpha, i8* %a, i8* %b, i8* %beta, i8* %c)
  ret void
}}

; kept through link-time optimisation, as cudajit's code generator keeps its kernels
@llvm.used = appending global [1 x i8*] [i8* bitcast (void (i8*, i8*)* @mathdx_probe to i8*)], section "llvm.metadata"

!nvvm.annotations = !{{!0}}
!nvvmir.version = !{{!1}}
!0 = !{{void (i8*, i8*)* @mathdx_probe, !"kernel", i32 1}}
!1 = !{{i32 2, i32 0, i32 3, i32 2}}
"""
    kernel = _core.nvvm_to_ltoir(nvvm, arch=mm.sm.major * 10 + mm.sm.minor)
    cubin = _core.link_cubin([("ltoir", kernel, "probe"), ("ltoir", mm.ltoir, "mathdx")],
                             arch=mm.sm.major * 10 + mm.sm.minor)
    assert cubin[:4] == b"\x7fELF"
    assert b"mathdx_probe" in cubin


def test_transpose_mode_spelling():
    """nvmath.device's older spelling: transpose_mode for A and B. Its
    a_dim / b_dim are the matrices as stored (a transposed one reversed) and
    the sizes count leading dimension times columns, as nvmath's do
    (nvmath's cublasdx_simple_gemm_transpose_mode.py multiplies a @ b.T)."""
    m, n, k = 32, 16, 64
    mm = mathdx.Matmul((m, n, k), np.float32, "real", sm=80, block_dim=(128, 1, 1),
                       transpose_mode=("non_transposed", "transposed"))
    assert mm.transpose_mode == ("non_transposed", "transposed")
    assert mm.arrangement is None    # as nvmath's Matmul made with transpose_mode
    assert mm.a_dim == (m, k) and mm.b_dim == (n, k) and mm.c_dim == (m, n)
    lda, ldb, ldc = mm.leading_dimension
    assert (lda, ldb, ldc) == (m, n, m)   # tight
    assert (mm.a_size, mm.b_size, mm.c_size) == (lda * k, ldb * k, ldc * n)
    # the arrangement spelling keeps the logical shapes
    mm2 = mathdx.Matmul((m, n, k), np.float32, "real", sm=80, block_dim=(128, 1, 1),
                        arrangement=("col_major", "row_major", "col_major"))
    assert mm2.a_dim == (m, k) and mm2.b_dim == (k, n)
    assert (mm2.a_size, mm2.b_size, mm2.c_size) == (m * k, k * n, m * n)


def test_nvmath_helper_names():
    """nvmath.device's helpers the examples import (common_cuda, types,
    vector types) under cudajit.mathdx."""
    cc = mathdx.ComputeCapability(9, 0, "a")
    assert cc.integer == 900 and str(cc) == "9.0a" and (cc.major, cc.minor) == (9, 0)
    assert mathdx.ComputeCapability(8, 6).arch == ""
    assert mathdx.CodeType("lto", cc).cc == cc
    assert mathdx.complex64 == "complex64" and mathdx.complex128 == "complex128"
    assert repr(mathdx.float16x2) == repr(cudajit.float16x2)
    assert mathdx.Dim3(128) == (128, 1, 1)
    for name in ("ComputeCapability", "current_device_sm", "get_current_device_cc", "float32x2"):
        assert name in mathdx.__all__


def test_descriptor_accepts_a_compute_capability():
    mm = mathdx.Matmul((32, 32, 32), np.float32, "real", sm=mathdx.ComputeCapability(8, 0),
                       block_dim=(128, 1, 1), arrangement=("col_major",) * 3)
    assert mm.sm == 80


def test_memory_cache():
    mm = build("f32_col_sm80")
    before = _core.mathdx_cache_stats()
    again = mathdx.matmul(**CASES["f32_col_sm80"])
    after = _core.mathdx_cache_stats()
    assert after["memory_hits"] == before["memory_hits"] + 1
    assert after["compiles"] == before["compiles"]
    assert again.ltoir == mm.ltoir and again.symbol == mm.symbol
    assert os.path.isdir(after["directory"])


def test_disk_cache_serves_a_new_process():
    build("f32_col_sm80")   # written to the disk cache, if not there already
    code = ("import numpy as np; from cudajit import mathdx, _core; "
            "mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type='real', "
            "arrangement=('col_major',) * 3, block_dim=(128, 1, 1), sm=80); "
            "s = _core.mathdx_cache_stats(); print(s['disk_hits'], s['compiles'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "0"]


def test_instantiates_after_the_process_built_a_cxx_locale(tmp_path):
    # libmathdx 0.4.1 fails ("An internal error occurred") in a process whose
    # libstdc++ built its classic locale first -- any C++ stream: a kernel
    # compiled before, PyTorch imported before. A cache miss is therefore
    # instantiated in a fresh process; here on an empty cache, after both.
    mm = build("f32_col_sm80")
    code = ("import ctypes, numpy as np, cudajit; from cudajit import mathdx, _core\n"
            "ctypes.CDLL('libstdc++.so.6')._ZNSt6locale7classicEv()\n"
            "def k(x):\n    x[0] = 1.0\n"
            "cudajit.compile_ptx(k, 'void(float32[::1])')\n"
            "_core.toolchain_paths(); _core.cub_toolchain()\n"
            "m = mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type='real', "
            "arrangement=('col_major',) * 3, block_dim=(128, 1, 1), sm=80)\n"
            "s = _core.mathdx_cache_stats()\n"
            "print(m.symbol, m.shared_memory_size, s['compiles'], s['disk_hits'])\n")
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [mm.symbol, str(mm.shared_memory_size), "1", "0"]


def test_a_matmul_object_makes_its_code_only_when_asked(tmp_path):
    # Finalizing the LTO-IR is most of an instantiation: a Matmul is built
    # from its traits, and the code comes when a kernel links it or .ltoir
    # is read (a kernel on the tensor API never needs it).
    code = ("import numpy as np; from cudajit import mathdx, _core\n"
            "m = mathdx.matmul(size=(32, 16, 32), precision=np.float32, data_type='real', "
            "arrangement=('col_major',) * 3, block_dim=(64, 1, 1), sm=80)\n"
            "s0 = _core.mathdx_cache_stats()['compiles']\n"
            "key, n = m._cudajit_symbol_, len(m.ltoir)\n"
            "s1 = _core.mathdx_cache_stats()['compiles']\n"
            "assert len(m.ltoirs) == 1 and m._cudajit_symbol_ == key\n"
            "print(s0, s1, _core.mathdx_cache_stats()['compiles'], n > 1000)\n")
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "2", "2", "True"]


# --- descriptors libmathdx rejects: CompileError with its own message -------------

def test_block_dim_too_large():
    with pytest.raises(cudajit.CompileError) as info:
        mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type="real",
                      arrangement=("col_major",) * 3, block_dim=(2048, 1, 1), sm=80)
    text = str(info.value)
    assert "libmathdx" in text
    assert "can't have more than 1024 threads" in text    # cuBLASDx's static_assert


def test_leading_dimension_too_small():
    with pytest.raises(cudajit.CompileError) as info:
        mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type="real",
                      arrangement=("col_major",) * 3, leading_dimension=(4, 4, 4),
                      block_dim=(128, 1, 1), sm=80)
    assert "LDA must be greater than M" in str(info.value)


def test_zero_size():
    with pytest.raises(cudajit.CompileError) as info:
        mathdx.matmul(size=(0, 32, 32), precision=np.float32, data_type="real", sm=80)
    # libmathdx keeps no message for this: the call and its status text.
    assert "cublasdxSetOperatorInt64s(SIZE, [0, 32, 32])" in str(info.value)
    assert "invalid" in str(info.value)


def test_unknown_spellings():
    with pytest.raises(cudajit.CompileError, match="unknown data_type 'quaternion'"):
        mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type="quaternion", sm=80)
    with pytest.raises(cudajit.CompileError, match="unknown precision 'bool'"):
        mathdx.matmul(size=(32, 32, 32), precision=np.bool_, data_type="real", sm=80)
    with pytest.raises(cudajit.CompileError, match="unknown arrangement 'diagonal'"):
        mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type="real", sm=80,
                      arrangement=("diagonal", "col_major", "col_major"))


def test_argument_errors():
    with pytest.raises(ValueError, match="block_size and block_dim"):
        mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type="real", sm=80,
                      block_size=64, block_dim=(64, 1, 1))
    with pytest.raises(ValueError, match="only 'lto'"):
        mathdx.matmul(size=(32, 32, 32), precision=np.float32, data_type="real",
                      code_type=("sass", (9, 0)))


def test_nvmath_objects_are_refused():
    Foreign = type("Matmul", (), {"__module__": "nvmath.device.cublasdx"})
    with pytest.raises(TypeError, match="nvmath-python objects"):
        mathdx.Matmul(Foreign())


def test_missing_library_is_an_import_error():
    """Without libmathdx, cudajit imports and the routine names the pip package."""
    code = ("import cudajit, numpy as np\n"
            "try:\n"
            "    cudajit.mathdx.matmul(size=(32, 32, 32), precision=np.float32, "
            "data_type='real', sm=80)\n"
            "except ImportError as e:\n"
            "    print('ImportError', e)\n")
    env = dict(os.environ, CUDAJIT_LIBMATHDX="/nonexistent/libmathdx.so.0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    assert out.stdout.startswith("ImportError")
    assert "pip install nvidia-libmathdx-cu13" in out.stdout
    assert "cudajit[mathdx]" in out.stdout


# --- a Matmul called inside kernels (nvmath.device's MM.execute) -------------------
# tests/mathdx_kernels.py has the kernels; tests/gpu/test_mathdx_gpu.py runs them.

def _kernels():
    sys.path.insert(0, os.path.dirname(__file__))
    import mathdx_kernels
    return mathdx_kernels


@pytest.mark.parametrize("name", ["simple_gemm", "simple_gemm_call_spelling", "dynamic_smem_gemm"])
def test_kernel_links_the_gemm_into_a_cubin(name):
    mk = _kernels()
    kernel = getattr(mk, name)
    ptx, _ = cudajit.compile_ptx(kernel, mk.SIG, block=(mk.THREADS,))
    # libmathdx's LTO-IR is linked and inlined: the GEMM's FMAs are in the
    # kernel, no call remains, and the block shape is fixed (.reqntid).
    assert ptx.count("fma.rn.f32") >= mk.M * mk.N * mk.K // mk.THREADS // 4, ptx
    assert mk.MM.symbol not in ptx
    assert ".reqntid 256, 1, 1" in ptx
    cubin = cudajit.compile_cubin(kernel, mk.SIG, block=(mk.THREADS,))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_mixed_precision_kernel_links():
    mk = _kernels()
    ptx, _ = cudajit.compile_ptx(mk.mixed_gemm, mk.MIXED_SIG, block=(128,))
    assert ".reqntid 128, 1, 1" in ptx and mk.MM_MIXED.symbol not in ptx
    assert "cvt.f32.f16" in ptx or "fma.rn.f32" in ptx or "mma" in ptx, ptx[-3000:]
    cubin = cudajit.compile_cubin(mk.mixed_gemm, mk.MIXED_SIG, block=(128,))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_kernel_launched_with_another_block_shape_is_refused():
    mk = _kernels()
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(mk.simple_gemm, mk.SIG, block=(128,))
    text = str(info.value)
    assert "Matmul was built for block_dim (256, 1, 1); this kernel is launched with (128, 1, 1)" in text
    assert info.value.file == mk.__file__


def test_static_block_dim():
    """static_block_dim=True is cuBLASDx's StaticBlockDim: another descriptor
    (its own code and symbol), and a launch of exactly block_dim threads."""
    mk = _kernels()
    assert mk.MM_STATIC.static_block_dim and not mk.MM.static_block_dim
    assert mk.MM_STATIC.symbol != mk.MM.symbol
    assert mk.MM_STATIC.block_dim == mk.MM.block_dim
    ptx, _ = cudajit.compile_ptx(mk.static_gemm, mk.SIG, block=(mk.THREADS,))
    assert ".reqntid 256, 1, 1" in ptx and mk.MM_STATIC.symbol not in ptx
    assert ptx.count("fma.rn.f32") >= mk.M * mk.N * mk.K // mk.THREADS // 4
    with pytest.raises(cudajit.CompileError) as info:   # a larger block, which MM takes
        cudajit.compile_ptx(mk.static_gemm, mk.SIG, block=(320,))
    text = str(info.value)
    assert ("Matmul (static_block_dim=True) was built for block_dim (256, 1, 1); "
            "this kernel is launched with (320, 1, 1)") in text
    lines, first = inspect.getsourcelines(mk.static_gemm.py_func)
    assert info.value.file == mk.__file__
    assert info.value.line == first + next(i for i, s in enumerate(lines) if "L:static" in s)


@pytest.mark.parametrize("name, block, reqntid", [("batched_gemm", (256, 2), "256, 2, 1"),
                                                   ("wide_gemm", (320,), "320, 1, 1")])
def test_kernel_launched_with_a_larger_block(name, block, reqntid):
    """cuBLASDx's BlockDim: a 1-d GEMM of 256 threads runs in a launch of
    (256, 2, 1) or (320, 1, 1); the kernel carries the launch's .reqntid."""
    mk = _kernels()
    sig = mk.BATCHED_SIG if name == "batched_gemm" else mk.SIG
    kernel = getattr(mk, name)
    ptx, _ = cudajit.compile_ptx(kernel, sig, block=block)
    assert f".reqntid {reqntid}" in ptx and mk.MM.symbol not in ptx
    assert ptx.count("fma.rn.f32") >= mk.M * mk.N * mk.K // mk.THREADS // 4
    cubin = cudajit.compile_cubin(kernel, sig, block=block)[0]
    assert bytes(cubin[:4]) == b"\x7fELF"


def test_larger_block_rule_refuses_a_smaller_leading_dimension():
    mk = _kernels()
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(mk.batched_gemm, mk.BATCHED_SIG, block=(128, 4))
    text = str(info.value)
    assert "Matmul was built for block_dim (256, 1, 1); this kernel is launched with (128, 4, 1)" in text
    assert "grow dimension 1 or later ones" in text and info.value.file == mk.__file__


def test_runtime_leading_dimensions():
    """MM.execute(alpha, a, lda, b, ldb, beta, c, ldc): cuBLASDx's dynamic-LD
    API, the descriptor's sibling made during the compile; the leading
    dimensions pass as unsigned 32-bit values by pointer; no call remains."""
    mk = _kernels()
    ptx, _ = cudajit.compile_ptx(mk.runtime_ld_gemm, mk.LD_SIG, block=(16, 16))
    body = ptx.split(".entry", 1)[1]
    assert ".reqntid 16, 16, 1" in ptx and "call" not in body.replace("call.uni", ""), body[-2000:]
    assert "fma.rn.f64" in body
    cubin = cudajit.compile_cubin(mk.runtime_ld_gemm, mk.LD_SIG, block=(16, 16))[0]
    assert bytes(cubin[:4]) == b"\x7fELF"
    # the storage at given leading dimensions equals a descriptor built with them
    m, n, k = mk.LD_SIZE
    static = mathdx.Matmul(mk.LD_SIZE, np.float64, "real", arrangement=("row_major", "col_major", "col_major"),
                           block_dim=(16, 16, 1), leading_dimension=mk.LDS, sm=90)
    lda, ldb, ldc = mk.LDS
    assert mk.MM_LD.get_shared_storage_size(*mk.LDS) == static.get_shared_storage_size() \
        == (m * lda + n * ldb + n * ldc) * 8
    with pytest.raises(ValueError, match="takes 0 or 3 arguments"):
        mk.MM_LD.get_shared_storage_size(34, 33)


def test_runtime_leading_dimension_errors():
    mk = _kernels()
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(mk.runtime_ld_float_ld, "void(float64, float64[::1], float64)", block=(16, 16))
    import inspect
    lines, first = inspect.getsourcelines(mk.runtime_ld_float_ld.py_func)
    assert "Matmul.execute's lda must be an integer, got f64" in str(info.value)
    assert info.value.line == first + next(i for i, s in enumerate(lines) if "L:ldtype" in s)
    with pytest.raises(cudajit.CompileError, match="takes 5 positional arguments .* or 8"):
        cudajit.compile_ptx(mk.wrong_arity, "void(float32[:, ::1])", block=(256,))


def test_larger_block_rule_for_a_2d_descriptor():
    """BlockDim (32, 4): x must stay 32, y may grow, z is free (nvmath's
    blockdim example, scenario (32, 4) in (32, 4, 2))."""
    mm = mathdx.Matmul((32, 32, 32), np.float32, "real", arrangement=("col_major",) * 3,
                       block_dim=(32, 4, 1), sm=90)

    @cudajit.jit
    def k(a):
        smem = cudajit.shared.array(shape=(3 * 32 * 32,), dtype=np.float32)
        if cudajit.threadIdx.z == 0:
            mm.execute(1.0, smem[0:], smem[1024:], 0.0, smem[2048:])   # L:2d
        a[0] = smem[0]

    for block in [(32, 4, 2), (32, 8, 1), (32, 4, 1)]:
        ptx, _ = cudajit.compile_ptx(k, "void(float32[::1])", block=block)
        assert ".reqntid " + ", ".join(map(str, block)) in ptx and mm.symbol not in ptx
    for block in [(64, 4, 1), (32, 2, 2), (16, 8, 1)]:
        with pytest.raises(cudajit.CompileError, match=r"built for block_dim \(32, 4, 1\); this kernel is launched "
                                                        r"with .*keep the first 1 dimension"):
            cudajit.compile_ptx(k, "void(float32[::1])", block=block)


def test_runtime_ld_sibling_errors_name_the_call(tmp_path):
    """A dynamic-LD sibling the instantiator fails to make is a CompileError
    at the kernel's line (a fresh cache directory, so it is not on disk)."""
    code = """
import sys
import numpy as np
import cudajit
from cudajit import _core, mathdx
mm = mathdx.Matmul((16, 16, 16), np.float32, "real", arrangement=("col_major",) * 3, block_dim=(64, 1, 1), sm=90)

def refuse(spec):
    raise cudajit.CompileError("libmathdx refused " + spec["api"])

@cudajit.jit
def k(x, ld):
    smem = cudajit.shared.array(shape=(768,), dtype=np.float32)
    mm.execute(1.0, smem[0:], ld, smem[256:], ld, 0.0, smem[512:], ld)   # L:ld
    x[0] = smem[0]

line = next(i + 1 for i, t in enumerate(open(__file__).read().splitlines()) if "L:ld" in t and "for" not in t)
_core.mathdx_set_instantiators(refuse)
try:
    cudajit.compile_ptx(k, "void(float32[::1], int32)", block=(64,))
except cudajit.CompileError as e:
    assert "runtime leading-dimension API" in str(e) and "libmathdx refused dynamic_ld" in str(e), str(e)
    assert e.line == line, (e.line, line)
else:
    sys.exit("no error")
print("ok")
"""
    run_script_prints_ok(tmp_path, "ld_errors.py", code)


def run_script_prints_ok(tmp_path, name, code):
    """Runs `code` as the file tmp_path/name (so that its own lines can be
    looked up) in a fresh process with a fresh cache; it must print "ok"."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(cudajit.__file__)))
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=package + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = tmp_path / name
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr[-3000:]


def test_kernel_without_a_block_shape_gets_the_descriptors():
    mk = _kernels()
    ptx, _ = cudajit.compile_ptx(mk.simple_gemm, mk.SIG)
    assert ".reqntid 256, 1, 1" in ptx


def test_kernel_errors_name_the_line():
    mk = _kernels()
    import inspect
    for kernel, sig, marker, text in [
            (mk.wrong_dtype, "void(float32[::1], float32)", "L:wrong",
             "Matmul.execute's a must be an array of float32, got array(f64"),
            (mk.other_method, "void(float32[::1])", "L:method",
             "Matmul.get_shared_storage_size is not callable inside kernels")]:
        with pytest.raises(cudajit.CompileError) as info:
            cudajit.compile_ptx(kernel, sig, block=(mk.THREADS,))
        lines, first = inspect.getsourcelines(kernel.py_func)
        line = first + next(i for i, s in enumerate(lines) if marker in s)
        assert text in str(info.value) and info.value.line == line, str(info.value)
        assert info.value.construct.startswith("Matmul."), str(info.value)   # not the symbol


def test_execute_on_the_host_is_refused():
    mk = _kernels()
    with pytest.raises(cudajit.DeviceOnlyError):
        mk.MM.execute(1.0, None, None, 0.0, None)


def test_matmul_pickles_into_a_new_process():
    mk = _kernels()
    import pickle
    payload = pickle.dumps(mk.MM)
    code = ("import pickle, sys; from cudajit import _core\n"
            "mm = pickle.loads(sys.stdin.buffer.read())\n"
            "s = _core.mathdx_cache_stats()\n"
            "print(mm.symbol, mm.block_dim, mm._cudajit_symbol_, s['compiles'])\n")
    out = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True)
    assert out.returncode == 0, out.stderr.decode()
    words = out.stdout.decode().split()
    assert words[0] == mk.MM.symbol and words[-2] == mk.MM._cudajit_symbol_
    assert words[-1] == "0"    # served by the disk cache this process wrote
