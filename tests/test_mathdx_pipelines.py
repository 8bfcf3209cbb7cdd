"""cuBLASDx's pipelines without a GPU (issue 13): a DevicePipeline made on the
mock driver, the kernels of tests/mathdx_pipeline_kernels.py compiled and
linked at their launch, and the errors of misuse."""
import os

import numpy as np
import pytest

import cudajit
from cudajit import _core

try:
    _core.mathdx_library()
except ImportError as exc:
    pytest.skip(f"libmathdx cannot be loaded ({exc}); pip install nvidia-libmathdx-cu13", allow_module_level=True)

from cudajit import mathdx  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))


def test_shared_storage_calc():
    calc = mathdx.SharedStorageCalc()
    calc.add(16, 2, 100)     # 200 bytes
    calc.add(128, 64)        # at 256
    calc.add(4, 10)          # at 320
    assert calc.get() == 330
    mm = mathdx.Matmul(size=(32, 32, 32), precision=np.float16, data_type="real", block_size=128, sm=90)
    layout = mm.suggest_layout_smem_a()
    calc = mathdx.SharedStorageCalc()
    calc.add(mm.alignment.a, 2, layout)
    assert calc.get() == 2 * layout.cosize
    with pytest.raises(ValueError):
        calc.add(0, 8)


def test_a_pipeline_needs_a_pipelined_matmul():
    mm = mathdx.Matmul(size=(32, 32, 32), precision=np.float16, data_type="real", block_size=128, sm=90)
    assert not mm.with_pipeline
    with pytest.raises(ValueError, match="with_pipeline=True"):
        mm.suggest_device_pipeline(2, None, None)


def test_pipelines_compile_link_and_launch_on_the_mock_driver(run_python, mock_driver):
    out = run_python(f"""
        import sys
        sys.path.insert(0, {TESTS!r})
        import numpy as np
        import cudajit
        from cudajit import mathdx
        import mathdx_pipeline_kernels as pk

        rng = np.random.default_rng(0)
        m = n = k = 256
        MM = pk.matmul(sm=90)
        assert MM.with_pipeline and MM.enable_input_streaming
        a, b, c = pk.operands(rng, m, n, k, MM)
        a_d, b_d, c_d = pk.to_device(a), pk.to_device(b), pk.to_device(c)
        try:   # the operands' types must be the Matmul's
            MM.suggest_device_pipeline(2, c_d, b_d)
        except TypeError as e:
            print("dtype refused:", "float32" in str(e))
        dp = MM.suggest_device_pipeline(pk.DEPTH, a_d, b_d)
        print("pipeline", tuple(dp.block_dim), dp.buffer_size > 0, dp.buffer_alignment >= 16, dp.storage_bytes > 0)
        grid = (m // pk.TILE_M, n // pk.TILE_N, 1)
        pk.gemm_kernel(MM, n)[grid, dp.block_dim, 0, dp.buffer_size](2.0, 3.0, c_d, dp)
        print("launched")

        # misuse: errors naming the kernel's line
        @cudajit.jit
        def no_pipeline_argument(c):
            acc = MM.suggest_accumulator()
            c[0] = 1.0

        @cudajit.jit
        def predicated(c, p):
            tile = p.get_tile(cudajit.shared.array(shape=(0,), dtype=np.byte), 0, 0)
            acc = MM.suggest_accumulator()
            tile.execute(acc)
            c[0] = acc.is_predicated()

        @cudajit.jit
        def no_such_method(c, p):
            p.get_tiles()

        cases = ((no_pipeline_argument, (c_d,), dp.block_dim), (predicated, (c_d, dp), dp.block_dim),
                 (no_such_method, (c_d, dp), dp.block_dim),
                 (pk.gemm_kernel(MM, n), (2.0, 3.0, c_d, dp), (64, 1, 1)))   # not the pipeline's block
        for kernel, args, block in cases:
            try:
                kernel[grid, block, 0, dp.buffer_size](*args)
            except cudajit.CompileError as e:
                print("error", e.line, str(e).splitlines()[0][:300])
        del dp
        import gc
        gc.collect()
        print("released")
    """, driver=mock_driver)
    assert "dtype refused: True" in out
    assert "pipeline (128, 1, 1) True True True" in out
    assert "launched" in out and "released" in out
    errors = [line for line in out.splitlines() if line.startswith("error")]
    assert len(errors) == 4, out
    assert "with_pipeline=True" in errors[0] and "DevicePipeline" in errors[0]
    assert "is_predicated is not available" in errors[1]
    assert "has no attribute 'get_tiles'" in errors[2]
    assert "runs in the pipeline's block_dim (128, 1, 1)" in errors[3] and "(64, 1, 1)" in errors[3]
