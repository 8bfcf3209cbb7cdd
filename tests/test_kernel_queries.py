"""numba's kernel queries without a GPU: kernel.specialize(*args) and the
resource queries get_regs_per_thread / get_shared_mem_per_block /
get_local_mem_per_thread / get_const_mem_size / get_max_threads_per_block
(cuFuncGetAttribute, through the mock driver). Real values:
tests/gpu/test_kernel_queries_gpu.py."""
import textwrap

import numpy as np

import cudajit as cuda


def test_specialize_compiles_the_launch_signature():
    @cuda.jit
    def k(a, s):
        a[0] = s

    sk = k.specialize(np.zeros(3, np.float32), 2.0)
    assert sk.signatures == [("float32[::1]", "float64")]
    assert sk is not k and k.signatures == []
    @cuda.jit(fastmath=True)
    def k2(a, s):
        a[0, 0] = s

    # a strided host array is staged as a contiguous copy at launch: C layout
    sk2 = k2.specialize(np.zeros((2, 3))[:, ::2], np.int32(1))
    assert sk2.signatures == [("float64[:, ::1]", "int32")]
    assert sk2._options["fastmath"]   # the kernel's options carry over


MOCK = """
@cuda.jit
def k(a):
    a[cuda.grid(1)] = 1.0

install(lambda params: None)
a = cuda.device_array(64, np.float32)
k[1, 64](a)
sig = k.signatures[0]
print(k.get_regs_per_thread(sig), k.get_shared_mem_per_block(sig), k.get_local_mem_per_thread(sig),
      k.get_const_mem_size(sig), k.get_max_threads_per_block(sig))
print(dict(k.get_regs_per_thread()))
"""


def test_resource_queries_mock(run_python, mock_driver, tmp_path, monkeypatch):
    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    out = run_python(MOCK_PRELUDE + textwrap.dedent(MOCK), driver=mock_driver).splitlines()
    # the mock's recognisable answers (runtime/testing/mock_libcuda.cpp)
    assert out[0] == "40 512 16 64 1024"
    assert out[1] == "{('float32[::1]',): 40}"


def test_compile_answers_numbas_get_cufunc_mock(run_python, mock_driver):
    """kernel.compile(sig) is still the signature key, and as numba's _Kernel
    answers .library.get_cufunc().handle (the CUfunction, a ctypes.c_void_p)
    and current_context().get_active_blocks_per_multiprocessor(cufunc, ...),
    what nvmath-python's examples/device timing helpers call."""
    out = run_python("""
        import ctypes
        import cudajit as cuda

        @cuda.jit
        def k(x):
            x[cuda.grid(1)] = 1.0

        key = k.compile("void(float32[::1])")
        assert key == ("float32[::1]",) and isinstance(key, tuple)
        f = key.library.get_cufunc()
        assert isinstance(f.handle, ctypes.c_void_p) and f.handle.value
        # the same function again: loaded once per context
        assert k.compile("void(float32[::1])").library.get_cufunc().handle.value == f.handle.value
        n = cuda.current_context().get_active_blocks_per_multiprocessor(f, 128, 0)
        assert isinstance(n, int) and n > 0, n
        try:
            cuda.current_context().get_active_blocks_per_multiprocessor(object(), 128, 0)
        except TypeError as e:
            assert "get_cufunc" in str(e)
        else:
            raise SystemExit("no TypeError")
        print("ok", n)
    """, driver=mock_driver)
    assert out.startswith("ok ")
