"""Run-time checks of the kernel language on the GPU, each in a fresh
process (a trap leaves the CUDA context unusable): numba's TypeError for an
Optional that is None where a number is used; cudajit.tile's assert_."""
import textwrap

import pytest

pytestmark = pytest.mark.gpu


def test_optional_none_used_as_a_number_traps_with_numbas_message(run_python):
    out = run_python(textwrap.dedent("""
        import numpy as np
        import cudajit as cuda

        @cuda.jit
        def k(x, out):
            i = cuda.grid(1)
            if i < x.size:
                v = None
                if x[i] > 0:
                    v = x[i]
                out[i] = v * 2.0

        x = cuda.to_device(np.array([1.0, 2.0, 3.0, 4.0]))
        out = cuda.device_array(4)
        k[1, 4](x, out)
        cuda.synchronize()
        print("ok", out.copy_to_host().tolist())
        bad = cuda.to_device(np.array([1.0, -2.0, 3.0, 4.0]))
        try:
            k[1, 4](bad, out)
            cuda.synchronize()
            print("no error")
        except cuda.CudaAPIError as e:
            print("error", e)
    """))
    lines = out.splitlines()
    assert lines[0] == "ok [2.0, 4.0, 6.0, 8.0]"
    assert any("TypeError: expected float64, got None in 'k' at" in l for l in lines)
    assert any(l.startswith("error") for l in lines)


def test_tile_assert_reports_once_a_block_and_fails_the_launch(run_python):
    out = run_python(textwrap.dedent("""
        import numpy as np
        import cudajit as cuda
        import cudajit.tile as ct

        @ct.kernel
        def k(x, y, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,))
            ct.assert_(t > 0, "x must be positive")
            ct.store(y, index=(ct.bid(0),), tile=t * 2)

        rng = np.random.default_rng(7)
        xh = rng.uniform(0.5, 4.0, 1024).astype(np.float32)
        x = cuda.to_device(xh)
        y = cuda.device_array(1024, np.float32)
        k[4](x, y, 256)
        cuda.synchronize()
        print("ok", bool(np.array_equal(y.copy_to_host(), xh * 2)))
        xh[700] = -1.0
        bad = cuda.to_device(xh)
        try:
            k[4](bad, y, 256)
            cuda.synchronize()
            print("no error")
        except cuda.CudaAPIError as e:
            print("error", e)
    """))
    lines = out.splitlines()
    assert lines[0] == "ok True"
    reports = [l for l in lines if "AssertionError: x must be positive in 'k' at" in l]
    assert len(reports) == 1          # block 2 alone fails; its thread 0 reports
    assert any(l.startswith("error") for l in lines)
