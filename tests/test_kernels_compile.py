"""Every kernel of the GPU suite, compiled without a GPU (CI):

    cudajit.compile_ptx(kernel, sig, arch="sm_90")   Python -> ... -> libNVVM -> PTX
    ptxas -arch=sm_90                                  the PTX is valid for sm_90
    cudajit.compile_cubin(kernel, sig, arch="sm_90")   ... -> nvJitLink -> cubin (ELF)

plus checks on the case registry itself (signatures match the inputs, inputs
are not zeros, launch configurations are sane) and the eager explicit-
signature form of cudajit.jit.
"""
import math

import numpy as np
import pytest

import cudajit
import kernel_cases as kc

ARCH = "sm_90"
CASE_PARAMS = [pytest.param(c, id=c.name) for c in kc.CASES]


from ptxas_check import assemble  # noqa: E402

# compile_ptx results, shared by the tests of one case (compile once).
_ptx_cache = {}


def compiled_ptx(case):
    if case.name not in _ptx_cache:
        try:
            _ptx_cache[case.name] = cudajit.compile_ptx(case.kernel, case.sig, arch=ARCH)
        except Exception as e:  # remembered so that dependent tests fail the same way
            _ptx_cache[case.name] = e
    r = _ptx_cache[case.name]
    if isinstance(r, Exception):
        raise r
    return r


# ---------------------------------------------------------------------------
# The registry itself (no cudajit needed)
# ---------------------------------------------------------------------------


def test_enough_cases():
    assert len(kc.CASES) >= 45


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_case_inputs_match_signature(case):
    rng, seed = kc.new_rng()
    args = case.make_inputs(rng)
    assert kc.signature_of(args).replace(" ", "") == case.sig.replace(" ", ""), f"seed {seed}"
    # Random inputs, not zeros: every array argument has a nonzero element.
    for i, a in enumerate(args):
        if isinstance(a, (np.ndarray, kc.View)):
            arr = kc._arr(a)
            assert arr.size > 0, f"argument {i} is empty"
            if arr.dtype.kind != "b":
                assert np.any(np.nan_to_num(arr, nan=1.0) != 0), f"argument {i} is all zeros (seed {seed})"
    for i in case.outputs:
        assert isinstance(args[i], (np.ndarray, kc.View)), f"output {i} is not an array"
    grid, block = case.config(args)
    for dims in (grid, block):
        dims = dims if isinstance(dims, tuple) else (dims,)
        assert 1 <= len(dims) <= 3 and all(isinstance(d, int) and d >= 1 for d in dims), (grid, block)
    assert math.prod(block if isinstance(block, tuple) else (block,)) <= 1024


def test_reference_sees_fresh_data_each_run():
    case = kc.CASES_BY_NAME["axpy_f32"]
    a = case.make_inputs(kc.new_rng()[0])
    b = case.make_inputs(kc.new_rng()[0])
    assert a[1].shape != b[1].shape or not np.array_equal(a[1], b[1])


# ---------------------------------------------------------------------------
# compile_ptx -> ptxas -> cubin
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_compile_ptx(case):
    ptx, return_type = compiled_ptx(case)
    assert isinstance(ptx, str)
    assert ".entry" in ptx, "a kernel must be a PTX .entry"
    assert f".target {ARCH}" in ptx
    assert ".version" in ptx
    assert str(return_type).lower() in ("void", "none"), return_type


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_ptxas_accepts(case, tmp_path):
    ptx, _ = compiled_ptx(case)
    out = assemble(ptx, tmp_path, ARCH, name=case.name, what=f"the PTX of {case.name}")
    assert out.stat().st_size > 0


EM_CUDA = 190  # ELF e_machine of NVIDIA CUDA objects


def check_cubin(cubin):
    data = bytes(cubin)
    assert data[:4] == b"\x7fELF", "a cubin is an ELF file"
    assert int.from_bytes(data[18:20], "little") == EM_CUDA


def cubin_for(case):
    """The nvJitLink cubin of a case: cudajit.compile_cubin when the package
    has it, else the overload that @jit(sig) compiles eagerly (no GPU)."""
    if hasattr(cudajit, "compile_cubin"):
        cubin = cudajit.compile_cubin(case.kernel, case.sig, arch=ARCH)
        return cubin[0] if isinstance(cubin, tuple) else cubin, 90
    kernel = cudajit.jit(case.sig)(case.kernel)
    (overload,) = kernel.overloads.values()
    return overload.cubin, overload.arch


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_nvjitlink_cubin(case):
    cubin, arch = cubin_for(case)
    check_cubin(cubin)
    if not cudajit.is_available():
        assert arch == 90, "without a GPU, kernels are compiled for sm_90"


# ---------------------------------------------------------------------------
# The README / issue examples, compiled without a GPU
# ---------------------------------------------------------------------------


def test_issue_example_eager_signature_compiles_without_gpu():
    @cudajit.jit("void(float32, float32[:], float32[:])")
    def axpy_eager(a, x, y):
        i = cudajit.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    ptx = axpy_eager.inspect_ptx()
    text = "\n".join(map(str, ptx.values())) if isinstance(ptx, dict) else str(ptx)
    assert ".entry" in text and f".target" in text


def test_compile_ptx_issue_signature():
    ptx, rt = cudajit.compile_ptx(kc.axpy, "void(float32, float32[:], float32[:])", arch=ARCH)
    assert ".entry" in ptx and f".target {ARCH}" in ptx
    assert str(rt).lower() in ("void", "none")


def test_compile_ptx_other_arch():
    ptx, _ = cudajit.compile_ptx(kc.axpy, "void(float32, float32[::1], float32[::1])", arch="sm_80")
    assert ".target sm_80" in ptx


def test_compile_ptx_device_function_return_type():
    def hypot2(a, b):
        return math.sqrt(a * a + b * b)

    ptx, rt = cudajit.compile_ptx(hypot2, "float64(float64, float64)", arch=ARCH, device=True)
    assert ".func" in ptx
    assert str(rt) in ("float64", "f64"), rt


@pytest.mark.parametrize("name", ["axpy_f32", "grid2d_strided_views", "shared_tree_reduction_f32",
                                  "device_functions_nested_multiple_returns", "atomic_histogram_shared"])
def test_eager_signature_cases(name):
    case = kc.CASES_BY_NAME[name]
    kernel = cudajit.jit(case.sig)(case.kernel)
    ptx = kernel.inspect_ptx()
    text = "\n".join(map(str, ptx.values())) if isinstance(ptx, dict) else str(ptx)
    assert ".entry" in text


def test_same_kernel_distinct_specialisations():
    c = kc.axpy
    p32, _ = cudajit.compile_ptx(c, "void(float32, float32[::1], float32[::1])", arch=ARCH)
    p64, _ = cudajit.compile_ptx(c, "void(float64, float64[::1], float64[::1])", arch=ARCH)
    assert p32 != p64
    assert ".f64" in p64


def test_compiles_concurrently_from_threads():
    """compile_ptx releases the GIL past decoding: type inference, the passes,
    codegen and libNVVM run for different kernels in eight threads at once
    (the interned types and names are shared), each PTX equal to the one a
    single thread makes. scripts/sanitize.sh runs this under ThreadSanitizer."""
    import concurrent.futures
    cases = kc.CASES[:16]
    want = [cudajit.compile_ptx(c.kernel, c.sig, arch=ARCH)[0] for c in cases]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda c: cudajit.compile_ptx(c.kernel, c.sig, arch=ARCH)[0], cases * 3))
    assert got == want * 3
