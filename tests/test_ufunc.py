"""vectorize / guvectorize / reduce (numba.cuda's high-level API) without a
GPU: type resolution and its errors, shape errors, the kernels generated for
each path through the compiler and ptxas, and the host plumbing on the mock
driver (what is returned for numpy, device and out= arguments; launch
sizes). Values are checked on the GPU: tests/gpu/test_ufunc_gpu.py."""
import os
import sys
import textwrap

import numpy as np
import pytest

import cudajit as cuda

sys.path.insert(0, os.path.dirname(__file__))
import ufunc_kernels as U  # noqa: E402
from ptxas_check import assemble  # noqa: E402


def test_types_and_arity():
    assert U.discriminant.types == ["fff->f", "ddd->d"]
    assert (U.discriminant.nin, U.discriminant.nout) == (3, 1)
    assert U.lazy_axpy.nin == 3 and U.lazy_axpy.types == []
    assert (U.matmulcore.nin, U.matmulcore.nout) == (2, 1)
    assert (U.shifted_norm.nin, U.shifted_norm.nout) == (2, 1)


def test_signature_resolution_follows_safe_casting():
    a32, a64, i64 = np.ones(3, np.float32), np.ones(3), np.ones(3, np.int64)
    resolve = U.discriminant._resolve
    assert resolve((a32, a32, a32))[1] == np.float32
    assert resolve((a32, a64, a32))[1] == np.float64       # float32 -> float64 is safe
    assert resolve((a32, 2.0, a32))[1] == np.float32       # a Python float is weak
    assert resolve((i64, a64, 1))[1] == np.float64          # int64 -> float64 is safe
    assert U.floor_mod._resolve((i64, 3))[1] == np.int64
    assert U.floor_mod._resolve((i64, 3.0))[1] == np.float64
    with pytest.raises(TypeError, match=r"ufunc 'discriminant' not supported for the input types "
                                        r"\(complex128, float32, float32\): its types are fff->f, ddd->d"):
        resolve((np.ones(3, np.complex128), a32, a32))


def test_lazy_vectorize_types_the_result_by_compiling():
    args, ret = U.lazy_axpy._resolve((np.float32(2), np.ones(3, np.float32), np.ones(3, np.float32)))
    assert [str(a) for a in args] == ["float32", "float32", "float32"] and ret == np.float32
    _, ret = U.lazy_axpy._resolve((2, np.ones(3, np.int32), np.ones(3, np.int32)))
    assert ret == np.int64   # numba's int promotion inside the function


def test_shape_errors_before_any_launch():
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with shapes "
                                         r"\(3,\) \(4,\) \(3,\)"):
        U.discriminant(np.ones(3, np.float32), np.ones(4, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match="takes 3 input"):
        U.discriminant(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="dimension 'n' is 4 in one operand and 5 in input 2"):
        U.matmulcore(np.ones((2, 3, 4), np.float32), np.ones((2, 5, 6), np.float32))
    with pytest.raises(ValueError, match=r"loop dimensions \[\(2,\), \(3,\)\] do not broadcast"):
        U.matmulcore(np.ones((2, 3, 4), np.float32), np.ones((3, 4, 6), np.float32))


def test_bad_declarations():
    with pytest.raises(TypeError, match="scalar arguments and a scalar result"):
        cuda.vectorize(["float32(float32[:])"], target="cuda")(lambda a: a)
    with pytest.raises(ValueError, match="target='cuda' only"):
        cuda.vectorize(["float32(float32)"], target="cpu")
    with pytest.raises(TypeError, match="has 3 arguments; the layout '\\(n\\)->\\(\\)' has 2"):
        cuda.guvectorize(["void(float32[:], float32[:], float32[:])"], "(n)->()")(lambda a, b, c: None)
    with pytest.raises(TypeError, match="must return void"):
        cuda.guvectorize(["float32(float32[:], float32[:])"], "(n)->()")(lambda a, b: None)
    with pytest.raises(ValueError, match="has no '->'"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(n),(n)")(lambda a, b: None)


KERNELS = [
    ("flat", lambda: U.discriminant._kernel(0, (False, False, False)),
     "(float32[::1], float32[::1], float32[::1], float32[::1])"),
    ("broadcast 2-d with a scalar", lambda: U.discriminant._kernel(2, (False, True, False)),
     "(float64[:, :], float64[:, :], float64, float64[:, :])"),
    ("device function inside", lambda: U.calls_a_device_function._kernel(0, (False, False, False)),
     "(float32[::1], float32[::1], float32[::1], float32[::1])"),
    ("gufunc matmul", lambda: U.matmulcore._make_kernel(),
     "(float32[:, :, ::1], float32[:, :, ::1], float32[:, :, ::1])"),
    ("gufunc with a scalar core", lambda: U.shifted_norm._make_kernel(),
     "(float64[:, ::1], float64[::1], float64[:, ::1])"),
    ("reduce float32", lambda: U.sum_reduce._kernel(np.dtype(np.float32)),
     "(float32[::1], int64, float32, bool, float32[::1])"),
    ("reduce int64 max", lambda: U.max_reduce._kernel(np.dtype(np.int64)),
     "(int64[::1], int64, int64, bool, int64[::1])"),
]


@pytest.mark.parametrize("name,make,sig", KERNELS, ids=[k[0] for k in KERNELS])
def test_generated_kernels_compile(name, make, sig, tmp_path):
    ptx, ret = cuda.compile_ptx(make(), sig)
    assert str(ret) == "none"
    assemble(ptx, tmp_path, name=name.replace(" ", "_"))


MOCK = """
import sys
sys.path.insert(0, {tests!r})
import ufunc_kernels as U
install(lambda params: None)
a = np.arange(1000, dtype=np.float32)
r = U.discriminant(a, a, a)
print(type(r).__name__, r.dtype, r.shape, launches[-1]["grid"], launches[-1]["block"])
d = cuda.to_device(a)
r = U.discriminant(d, a, np.float32(2))
print(type(r).__name__, r.dtype, r.shape)
r = U.discriminant(np.ones((4, 1), np.float32), a[:5], 1.0)
print(type(r).__name__, r.shape)
out = cuda.device_array(1000, np.float32)
print(U.discriminant(a, a, a, out=out) is out)
host_out = np.empty(1000, np.float32)
print(U.discriminant(a, a, a, host_out) is host_out)
r = U.matmulcore(np.ones((7, 3, 4), np.float32), np.ones((7, 4, 5), np.float32))
print(type(r).__name__, r.shape, launches[-1]["grid"])
r = U.shifted_norm(np.ones((6, 10)), 0.5)
print(r.shape, r.dtype)
print(U.sum_reduce(np.arange(0, dtype=np.float32), init=5), len(launches))
U.sum_reduce(np.arange(100_000, dtype=np.float32))
print([l["grid"][0] for l in launches[-2:]])
s = cuda.stream()
U.discriminant(a, a, a, stream=s)
print(launches[-1]["stream"] != 0)
"""


def test_host_plumbing_mock(run_python, mock_driver, tmp_path, monkeypatch):
    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    out = run_python(MOCK_PRELUDE + textwrap.dedent(MOCK.format(tests=os.path.dirname(__file__))),
                     driver=mock_driver).splitlines()
    assert out[0] == "ndarray float32 (1000,) (4, 1, 1) (256, 1, 1)"
    assert out[1] == "DeviceNDArray float32 (1000,)"
    assert out[2] == "ndarray (4, 5)"
    assert out[3:5] == ["True", "True"]
    assert out[5] == "ndarray (7, 3, 5) (1, 1, 1)"
    assert out[6] == "(6,) float64"
    assert out[7] == "5.0 7"       # an empty reduction is its init, with no launch
    assert out[8] == "[391, 1]"    # block partials, then one block
    assert out[9] == "True"
