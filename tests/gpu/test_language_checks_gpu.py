"""Run-time checks of the kernel language on the GPU, each in a fresh
process (a trap leaves the CUDA context unusable): numba's TypeError for an
Optional that is None where a number is used."""
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
