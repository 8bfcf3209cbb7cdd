"""numba-cuda host-API items added for parity (docs/numba_parity.md): the
jit options shared_memory_carveout= and extensions=, launch-configuration
access (pre_launch_callbacks, cudajit.launchconfig), CUDA IPC, contexts.

Checked against the mock libcuda (runtime/testing/mock_libcuda.cpp) in a
fresh interpreter per test, as tests/test_host_api.py does; the GPU tier is
tests/gpu/test_host_api_parity_gpu.py.
"""

import pytest

import cudajit as cuda
from test_host_api import host_run


# ------------------------------------------------------------ shared_memory_carveout


@pytest.mark.parametrize("bad, exc, text", [
    ("MaxL2", ValueError, "Invalid carveout value: MaxL2"),
    (101, ValueError, "Carveout must be between -1 and 100"),
    (-2, ValueError, "Carveout must be between -1 and 100"),
    (50.0, TypeError, "shared_memory_carveout must be str or int, got float"),
])
def test_carveout_bad_values_fail_at_the_decorator(bad, exc, text):
    with pytest.raises(exc, match=text):
        cuda.jit(shared_memory_carveout=bad)


def test_carveout_is_an_option_of_the_kernel():
    def k(x):
        x[0] = 1

    for value, want in (("MaxShared", 100), ("maxl1", 0), ("DEFAULT", -1), (37, 37), (-1, -1)):
        kernel = cuda.jit(shared_memory_carveout=value)(k)
        assert kernel._options["shared_memory_carveout"] == want
    assert "shared_memory_carveout" not in cuda.jit(k)._options
    # specialize() keeps it: the specialised kernel is made with the same options
    kernel = cuda.jit("void(float32[::1])", shared_memory_carveout=25)(k)
    assert kernel._options["shared_memory_carveout"] == 25


def test_mock_carveout_set_on_each_loaded_kernel(run_python, mock_driver):
    out = host_run(run_python, mock_driver, """
        _lib.cjmock_func_attribute.restype = ctypes.c_int
        CARVEOUT = 9   # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT

        def body(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = 2 * x[i]

        install(lambda params: None)
        d = cuda.to_device(np.arange(8.0))
        plain = cuda.jit(body)
        plain[1, 8](d)
        assert _lib.cjmock_func_attribute(CARVEOUT) == -999     # not set without the option
        for value, want in (("MaxShared", 100), ("MaxL1", 0), (40, 40), ("default", -1)):
            k = cuda.jit(shared_memory_carveout=value)(body)
            before = _lib.cjmock_func_attribute_sets()
            k[1, 8](d)                                   # loaded: the attribute is set once
            assert _lib.cjmock_func_attribute(CARVEOUT) == want, (value, _lib.cjmock_func_attribute(CARVEOUT))
            assert _lib.cjmock_func_attribute_sets() == before + 1
            k[1, 8](d)                                   # already loaded: not again
            assert _lib.cjmock_func_attribute_sets() == before + 1
        # a second signature is another loaded function: set on it too
        k = cuda.jit(shared_memory_carveout=10)(body)
        k[1, 8](d)
        k[1, 8](cuda.to_device(np.arange(8, dtype=np.int32)))
        assert _lib.cjmock_func_attribute(CARVEOUT) == 10
        print("OK")
    """)
    assert out.strip().endswith("OK")
