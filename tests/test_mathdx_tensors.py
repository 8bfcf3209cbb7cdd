"""cuBLASDx's tensor API without a GPU (issue 13): layouts' traits, kernels on
tensors compiled and linked for sm_90, and the errors of misuse."""
import os
import sys

import numpy as np
import pytest

import cudajit
from cudajit import _core

try:
    _core.mathdx_library()
except ImportError as exc:
    pytest.skip(f"libmathdx cannot be loaded ({exc}); pip install nvidia-libmathdx-cu13", allow_module_level=True)

from cudajit import mathdx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mathdx_tensor_kernels as tk  # noqa: E402


@pytest.fixture(scope="module")
def kernels():
    return tk.build(sm=90)


def test_layout_traits(kernels):
    mm = kernels["mm"]
    a, rc, ga = mm.suggest_layout_smem_a(), mm.suggest_layout_rmem_c(), mm.get_layout_gmem_a()
    assert (a.size, a.cosize, a.dtype) == (tk.M * tk.K, tk.M * tk.K, np.float16)
    # a thread's fragment of C: the block's M x N elements over its threads
    assert rc.size == tk.M * tk.N // tk.THREADS and rc.cosize >= rc.size and rc.dtype == np.float32
    assert ga.size == tk.M * tk.K and ga.cosize == mm.a_size
    assert kernels["tensor_smem"] == mm.get_shared_storage_size_ab(mm.lda, mm.ldb) == 2 * tk.M * tk.K * 2
    assert a.uid != rc.uid


def test_tensor_kernels_link_with_tensor_cores(kernels):
    ptx, _ = cudajit.compile_ptx(kernels["tensor_gemm"], tk.TENSOR_SIG, block=(tk.THREADS,), cc=(9, 0))
    assert "mma.sync.aligned" in ptx and "cp.async" in ptx
    assert f".reqntid {tk.THREADS}, 1, 1" in ptx
    ptx, _ = cudajit.compile_ptx(kernels["tiled_gemm"], tk.TILED_SIG, block=(tk.TILE_THREADS,), cc=(9, 0))
    assert "mma.sync.aligned" in ptx and ".f64.f64.f64.f64" in ptx   # double-precision tensor cores


def _compile_error(kernel, sig, block):
    with pytest.raises(cudajit.CompileError) as info:
        cudajit.compile_ptx(kernel, sig, block=block, cc=(9, 0))
    return str(info.value)


def test_misuse_is_a_compile_error_naming_the_line(kernels):
    mm = kernels["mm"]
    rc = mm.suggest_layout_rmem_c()

    @cudajit.jit
    def copy_registers(c):
        frag = mathdx.make_tensor(cudajit.local.array(shape=(rc.cosize,), dtype=np.float32), rc)
        mathdx.copy(mathdx.make_tensor(c, mm.get_layout_gmem_c()), frag)

    msg = _compile_error(copy_registers, "void(float32[:,::1])", (tk.THREADS,))
    assert "copy does not take register tensors" in msg and "copy_fragment" in msg
    assert "test_mathdx_tensors.py" in msg

    @cudajit.jit
    def wrong_space(c):
        mathdx.make_tensor(c, mm.suggest_layout_smem_a())

    msg = _compile_error(wrong_space, "void(float16[::1])", (tk.THREADS,))
    assert "shared-memory array" in msg

    @cudajit.jit
    def not_a_tensor(c):
        mathdx.clear(c)

    msg = _compile_error(not_a_tensor, "void(float32[::1])", (tk.THREADS,))
    assert "must be a tensor" in msg


def test_wrong_block_shape_is_refused(kernels):
    msg = _compile_error(kernels["tensor_gemm"], tk.TENSOR_SIG, (64,))
    assert "block_dim" in msg


def test_a_function_called_twice_links_once(kernels):
    mm = kernels["mm"]
    la = mm.suggest_layout_smem_a()

    @cudajit.jit
    def twice(a):
        smem = cudajit.shared.array(shape=(0,), dtype=np.float16, alignment=16)
        s = mathdx.make_tensor(smem[: la.cosize], la)
        mathdx.copy(mathdx.make_tensor(a, mm.get_layout_gmem_a()), s)
        mathdx.copy_wait()
        mathdx.copy(mathdx.make_tensor(a, mm.get_layout_gmem_a()), s)
        mathdx.copy_wait()

    ptx, _ = cudajit.compile_ptx(twice, "void(float16[::1,:])", block=(tk.THREADS,), cc=(9, 0))
    assert ptx.count("cp.async.wait_all") == 2


@pytest.mark.parametrize("name", ["accumulator_gemm", "partition_gemm", "fragment_like_gemm"])
def test_accumulator_kernels_link(kernels, name):
    # nvmath's accumulator_fp32, simple_partition and make_tensor_like examples' kernels
    sig = tk.LIKE_SIG if name == "fragment_like_gemm" else tk.TENSOR_SIG
    ptx, _ = cudajit.compile_ptx(kernels[name], sig, block=(tk.THREADS,), cc=(9, 0))
    assert "mma.sync.aligned" in ptx and f".reqntid {tk.THREADS}, 1, 1" in ptx


def test_accumulator_misuse(kernels):
    mm = kernels["mm"]
    la = mm.suggest_layout_smem_a()

    @cudajit.jit
    def unknown_method(c):
        acc = mm.suggest_accumulator()
        acc.partition_like_C(c)

    msg = _compile_error(unknown_method, "void(float32[:,::1])", (tk.THREADS,))
    assert "has no attribute 'partition_like_C'" in msg and "is_thread_active" in msg

    @cudajit.jit
    def index_shared(a):
        smem = cudajit.shared.array(shape=(0,), dtype=np.float16, alignment=16)
        t = mathdx.make_tensor(smem[: la.cosize], la)
        a[0] = t[0]

    msg = _compile_error(index_shared, "void(float16[::1])", (tk.THREADS,))
    assert "only a register fragment is indexed" in msg

    @cudajit.jit
    def larger_block(c):
        acc = mm.suggest_accumulator()
        acc.make_partition_and_copy(mathdx.make_tensor(c, mm.get_layout_gmem_c()))

    msg = _compile_error(larger_block, "void(float32[:,::1])", (2 * tk.THREADS,))
    assert "needs the launch block to be the Matmul's block_dim" in msg


def test_layout_attributes_inside_kernels(kernels):
    mm = kernels["mm"]
    rc = mm.suggest_layout_rmem_c()

    @cudajit.jit
    def sizes(out):
        acc = mm.suggest_accumulator()
        r = acc.get_results()
        out[0] = r.layout.cosize
        out[1] = mm.suggest_layout_smem_a().size

    ptx, _ = cudajit.compile_ptx(sizes, "void(int64[::1])", block=(tk.THREADS,), cc=(9, 0))
    assert f"{rc.cosize};" in ptx and f"{tk.M * tk.K};" in ptx


def test_a_launch_makes_its_functions_side_by_side_holding_the_gil(run_python, mock_driver, tmp_path):
    # The dispatcher compiles at a launch holding the GIL; the functions a
    # kernel plans are made on several threads, each taking the GIL for the
    # instantiator. Before the compile's thread let the GIL go while it
    # waited, this deadlocked whenever that thread finished its share first
    # (an nvmath example hung so): the test runs the path, and catches the
    # deadlock when the timing falls that way. A fresh cache directory makes
    # every function a miss.
    out = run_python(f"""
        import os
        os.environ["CUDAJIT_CACHE_DIR"] = {str(tmp_path)!r}
        import numpy as np
        import cudajit
        from cudajit import mathdx
        mm = mathdx.Matmul(size=(16, 16, 16), precision=np.float32, data_type="real", execution="Block",
                           block_size=64, sm=90)

        @cudajit.jit
        def k(out):
            acc = mm.suggest_accumulator()
            mathdx.copy_wait()
            out[0] = acc.is_thread_active()

        k[1, 64](cudajit.to_device(np.zeros(1, np.int32)))
        print("launched")
    """, driver=mock_driver)
    assert "launched" in out
