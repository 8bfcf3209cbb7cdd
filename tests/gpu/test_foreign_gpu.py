"""Foreign device functions on the GPU (cudajit.declare_device, jit(link=...)):
numba's documented example (CUDA C++ compiled by NVRTC), pointers to array
data, a void function, a PTX file; on fresh random data against numpy, with
poisoned outputs (NaN)."""
import os
import sys

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_foreign import CU, PTX, SIG3, multiply_vectors  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


@pytest.fixture
def cu_file(tmp_path):
    path = tmp_path / "functions.cu"
    path.write_text(CU)
    return str(path)


@pytest.mark.parametrize("kind", ["cu", "ptx"])
def test_multiply_vectors(kind, cu_file, tmp_path, rng):
    if kind == "ptx":
        link = tmp_path / "mul.ptx"
        link.write_text(PTX)
        link = str(link)
    else:
        link = cu_file
    kernel = cuda.jit(link=[link])(multiply_vectors)
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    r = cuda.to_device(np.full(n, np.nan, np.float32))
    kernel[(n + 127) // 128, 128](r, cuda.to_device(x), cuda.to_device(y))
    np.testing.assert_array_equal(r.copy_to_host(), x * y, err_msg=f"seed {SEED}")


def test_pointers_and_void(cu_file, rng):
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[cu_file])
    fill = cuda.declare_device("fill", "void(voidptr, CPointer(float64), float64)", link=[cu_file])

    @cuda.jit
    def rows(result, array, out64, v):
        i = cuda.grid(1)
        if i < result.size:
            result[i] = sum_reduce(array[i * 4:], 4)
            fill(array, out64[i:], v + i)

    m = 257
    a = rng.standard_normal(4 * m).astype(np.float32)
    result = cuda.to_device(np.full(m, np.nan, np.float32))
    out64 = cuda.to_device(np.full(m, np.nan, np.float64))
    rows[(m + 63) // 64, 64](result, cuda.to_device(a), out64, 0.5)
    want = a.reshape(m, 4).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(result.copy_to_host(), want, rtol=1e-6, atol=1e-6, err_msg=f"seed {SEED}")
    np.testing.assert_array_equal(out64.copy_to_host(), 0.5 + np.arange(m))
