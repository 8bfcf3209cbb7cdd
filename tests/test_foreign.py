"""Foreign device functions (cudajit.declare_device, jit(link=[...])): CUDA
C++ compiled by NVRTC, PTX and LTO-IR linked by nvJitLink into the kernel,
numba's ABI. Compile and link only (no GPU): tests/gpu/test_foreign_gpu.py
runs them."""
import pickle

import numpy as np  # noqa: F401
import pytest

import cudajit as cuda
from cudajit.errors import CompileError, DeviceOnlyError, ToolchainError

CU = r'''
extern "C" __device__ int mul_f32_f32(float* return_value, float x, float y) {
  *return_value = x * y;
  return 0;
}
extern "C" __device__ int sum_reduce(float* return_value, float* array, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += array[i];
  *return_value = sum;
  return 0;
}
extern "C" __device__ int fill(void* unused, void* ignored, double* out, double v) {
  out[0] = v;
  return 0;
}
'''

# mul_f32_f32 by hand in PTX: the ABI's int status, the result through the pointer.
PTX = r'''
.version 8.0
.target sm_80
.address_size 64
.visible .func (.param .b32 status) mul_f32_f32(.param .b64 ret, .param .b32 x, .param .b32 y)
{
  .reg .b64 %rd<2>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [ret];
  ld.param.f32 %f1, [x];
  ld.param.f32 %f2, [y];
  mul.rn.f32 %f3, %f1, %f2;
  st.f32 [%rd1], %f3;
  st.param.b32 [status], 0;
  ret;
}
'''

SIG3 = "void(float32[::1], float32[::1], float32[::1])"


@pytest.fixture
def cu_file(tmp_path):
    path = tmp_path / "functions.cu"
    path.write_text(CU)
    return str(path)


mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")


def multiply_vectors(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = mul(x[i], y[i])


def test_cuda_cpp_is_compiled_and_inlined(cu_file):
    # numba's documented example: declared without link=, the kernel links the file.
    k = cuda.jit(SIG3, link=[cu_file])(multiply_vectors)
    assert k._options["link"] == [cu_file]
    ptx, _ = cuda.compile_ptx(multiply_vectors, SIG3, link=[cu_file])
    assert "mul.rn.f32" in ptx or "mul.f32" in ptx
    assert "call" not in ptx        # LTO inlined the foreign function
    cubin, symbol = cuda.compile_cubin(k, SIG3)
    assert cubin[:4] == b"\x7fELF" and symbol.startswith("cj_multiply_vectors")


def test_declared_link_files_and_pointers(cu_file):
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[cu_file])
    fill = cuda.declare_device("fill", "void(voidptr, CPointer(float64), float64)", link=[cu_file])

    def rows(result, array, out64):
        i = cuda.grid(1)
        if i < result.size:
            result[i] = sum_reduce(array[i * 4:], 4)
        fill(array, out64[i:], 2.5)

    ptx, _ = cuda.compile_ptx(rows, "void(float32[::1], float32[::1], float64[::1])")
    assert "add.f32" in ptx or "add.rn.f32" in ptx
    assert sum_reduce.link == [cu_file]
    cubin, _ = cuda.compile_cubin(rows, "void(float32[::1], float32[::1], float64[::1])", arch="sm_80")
    assert cubin[:4] == b"\x7fELF"


def test_ptx_and_ltoir_files(tmp_path):
    ptx_file = tmp_path / "mul.ptx"
    ptx_file.write_text(PTX)
    cubin, _ = cuda.compile_cubin(multiply_vectors, SIG3, link=[str(ptx_file)])
    assert cubin[:4] == b"\x7fELF"
    # With a PTX file the PTX is the kernel's own: the call stays extern.
    ptx, _ = cuda.compile_ptx(multiply_vectors, SIG3, link=[str(ptx_file)])
    assert "mul_f32_f32" in ptx


def test_argument_errors(cu_file):
    def too_many(r):
        r[0] = mul(r[0], r[1], r[2])

    def array_for_number(r):
        r[0] = mul(r, r[1])

    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[cu_file])

    def number_for_pointer(r):
        r[0] = sum_reduce(r[0], 4)

    def wrong_dtype(r):
        r[0] = sum_reduce(r, 4)

    cases = [(too_many, "float32[::1]", r"mul_f32_f32\(\) takes 2 argument\(s\), got 3"),
             (array_for_number, "float32[::1]", r"argument 1 of mul_f32_f32\(\) must be a number"),
             (number_for_pointer, "float32[::1]", r"argument 1 of sum_reduce\(\) is a pointer to float32: pass an array"),
             (wrong_dtype, "int32[::1]", r"pass an array of float32, got array\(i32")]
    for fn, arg, message in cases:
        with pytest.raises(CompileError, match=message) as info:
            cuda.compile_ptx(fn, f"void({arg})", link=[cu_file])
        assert "test_foreign.py" in str(info.value)


@pytest.mark.parametrize("sig,message", [
    ("float32 float32", r"expected 'return_type\(arg_type, ...\)'"),
    ("float32(float32, complex64)", r"'complex64' is not a scalar type"),
    ("array(float32)", r"the return type 'array' is not a scalar type or void"),
    ("float32(float32[:])", r"'float32\[:\]' is not a scalar type"),
])
def test_bad_signatures(sig, message):
    with pytest.raises(ValueError, match=message):
        cuda.declare_device("f", sig)


def test_bad_link_files(tmp_path, cu_file):
    with pytest.raises(FileNotFoundError, match="no such file"):
        cuda.declare_device("f", "int32()", link=[str(tmp_path / "missing.cu")])
    with pytest.raises(FileNotFoundError, match="no such file"):
        cuda.jit(SIG3, link=[str(tmp_path / "missing.cu")])(multiply_vectors)
    odd = tmp_path / "functions.txt"
    odd.write_text("")
    with pytest.raises(ValueError, match="has an unknown kind"):
        cuda.declare_device("f", "int32()", link=[str(odd)])
    with pytest.raises(NotImplementedError, match=r"jit\(device=True, link=...\)"):
        cuda.jit(device=True, link=[cu_file])(lambda x: x)


def test_nothing_to_link_and_nvrtc_errors(tmp_path):
    with pytest.raises(ToolchainError, match="'mul_f32_f32' has no definition to link"):
        cuda.compile_cubin(multiply_vectors, SIG3)
    broken = tmp_path / "broken.cu"
    broken.write_text('extern "C" __device__ int mul_f32_f32(float* r, float x, float y) { return undefined_name; }\n')
    with pytest.raises(ToolchainError, match=r"broken.cu' with NVRTC failed(.|\n)*undefined_name"):
        cuda.compile_cubin(multiply_vectors, SIG3, link=[str(broken)])


def test_host_call_and_pickle(cu_file):
    with pytest.raises(DeviceOnlyError, match="can only be called inside a kernel"):
        mul(1.0, 2.0)
    again = pickle.loads(pickle.dumps(cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                                         link=[cu_file])))
    assert again.name == "sum_reduce" and again.link == [cu_file]
    assert again._cudajit_symbol_.startswith("cudajit.foreign.")
    # The key follows the file's contents: an edited file is another function.
    before = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[cu_file])._cudajit_symbol_
    with open(cu_file, "a") as f:
        f.write("// edited\n")
    after = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[cu_file])._cudajit_symbol_
    assert before != after


def test_a_device_function_alone_keeps_the_call(cu_file):
    # compile_ptx(device=True): the function's own PTX, the foreign call extern
    # (linking would strip the function, no kernel calling it).
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[cu_file])

    def first_four(a):
        return sum_reduce(a, 4) * 2.0

    ptx, resty = cuda.compile_ptx(first_four, "float32(float32[::1])", device=True)
    assert resty == "float32"
    assert ") first_four(" in ptx and ".extern .func" in ptx and "sum_reduce" in ptx
