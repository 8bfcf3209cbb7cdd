"""cudajit.random: numba.cuda.random's xoroshiro128+ generators.

Without a GPU:
- the host-built states equal numba's (numba.cuda.random's CPU init, when
  numba is installed) and, independently of numba, the algorithm: splitmix64's
  published first output, each state the xoroshiro128+ jump of the previous;
- the device functions compile through libNVVM and ptxas, their uint64
  operations are the unsigned ones (lshr, uitofp, ...), and their NVVM IR,
  run on the CPU through llvmlite, gives numba's numbers bit for bit.
On a GPU (marked gpu): a kernel's numbers equal numba-cuda's for the same seed.
"""
import ctypes
import ctypes.util
import os
import re

import numpy as np
import pytest

import cudajit as cuda
from ptxas_check import assemble
from cudajit import random as cr
from cudajit.random import (create_xoroshiro128p_states, init_xoroshiro128p_state,
                            init_xoroshiro128p_states, xoroshiro128p_jump, xoroshiro128p_next,
                            xoroshiro128p_normal_float32, xoroshiro128p_normal_float64,
                            xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

MASK = (1 << 64) - 1


def _numba_random():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    return pytest.importorskip("numba.cuda.random")


# ---------------------------------------------------------------------------
# host: the states
# ---------------------------------------------------------------------------

def test_splitmix64_published_vector():
    # splitmix64.c from state 0: the first output is 0xe220a8397b1dcdaf
    assert cr._splitmix64(0) == 0xE220A8397B1DCDAF
    # and the second (state advanced by the golden gamma once more)
    assert cr._splitmix64(0x9E3779B97F4A7C15) == 0x6E789E6AA1B965F4


def test_xoroshiro128plus_step_is_the_published_one():
    # xoroshiro128plus.c (a=55, b=14, c=36): result = s0 + s1; s1 ^= s0;
    # s0 = rotl(s0, 55) ^ s1 ^ (s1 << 14); s1 = rotl(s1, 36)
    rng = np.random.default_rng()
    for _ in range(100):
        s0, s1 = (int(v) for v in rng.integers(0, 2**63, 2, dtype=np.int64) * 2 + 1)
        out, n0, n1 = cr._next_int(s0, s1)
        t = s1 ^ s0
        assert out == (s0 + s1) & MASK
        assert n0 == ((((s0 << 55) | (s0 >> 9)) & MASK) ^ t ^ ((t << 14) & MASK))
        assert n1 == ((t << 36) | (t >> 28)) & MASK


def test_states_follow_the_algorithm():
    n, seed = 50, 987654321
    st = cr._host_states(n, seed)
    assert st.shape == (n, 2) and st.dtype == np.uint64
    z = cr._splitmix64(seed)
    assert (int(st[0, 0]), int(st[0, 1])) == (z, z)          # numba seeds both words with it
    for i in range(1, n):
        assert (int(st[i, 0]), int(st[i, 1])) == cr._jump_int(int(st[i - 1, 0]), int(st[i - 1, 1]))


def test_subsequence_start():
    seed = 77
    s = (cr._splitmix64(seed),) * 2
    for k in range(1, 12):                                     # both the loop and the matrix path
        s = cr._jump_int(*s)
        assert tuple(int(v) for v in cr._host_states(1, seed, k)[0]) == s
    big = 2**40 + 3
    a = cr._host_states(3, seed, big)
    b = cr._host_states(2, seed, big + 1)
    assert np.array_equal(a[1:], b)
    assert len(cr._host_states(0, seed)) == 0


def test_seed_wraps_like_numba():
    assert np.array_equal(cr._host_states(4, -1), cr._host_states(4, 2**64 - 1))


@pytest.mark.parametrize("n,seed,sub", [(1, 0, 0), (7, 1, 0), (1000, 12345, 0), (37, -1, 3),
                                        (64, 2**63 + 5, 17), (300, 42, 40), (1025, 2**32 + 7, 0)])
def test_states_equal_numbas(n, seed, sub):
    nr = _numba_random()
    ref = np.empty(n, nr.xoroshiro128p_dtype)
    nr.init_xoroshiro128p_states_cpu(ref, np.uint64(seed & MASK), sub)
    got = cr._host_states(n, seed, sub)
    assert np.array_equal(got[:, 0], ref["s0"]) and np.array_equal(got[:, 1], ref["s1"])
    # numba's record array viewed as cudajit's layout
    assert np.array_equal(ref.view(np.uint64).reshape(-1, 2), got)


def test_many_states_are_quick():
    import time
    t = time.perf_counter()
    st = cr._host_states(1 << 18, 5)
    assert time.perf_counter() - t < 10
    assert (int(st[-1, 0]), int(st[-1, 1])) == cr._jump_int(int(st[-2, 0]), int(st[-2, 1]))


def test_init_rejects_other_arrays():
    class Fake:
        shape = (4,)
        dtype = np.float32
    with pytest.raises(TypeError, match="shape \\(n, 2\\)"):
        init_xoroshiro128p_states(Fake(), 1)


# ---------------------------------------------------------------------------
# device functions: compile, unsigned operations, run on the CPU
# ---------------------------------------------------------------------------

def all_functions(states, seed, u32, u64, n32, n64, raw):
    i = cuda.grid(1)
    if i < states.shape[0]:
        u32[i] = xoroshiro128p_uniform_float32(states, i)
        u64[i] = xoroshiro128p_uniform_float64(states, i)
        n32[i] = xoroshiro128p_normal_float32(states, i)
        n64[i] = xoroshiro128p_normal_float64(states, i)
        raw[i] = xoroshiro128p_next(states, i)
        if seed > 0:
            init_xoroshiro128p_state(states, i, seed)
            xoroshiro128p_jump(states, i)


ALL_SIG = "void(uint64[:, ::1], uint64, float32[::1], float64[::1], float32[::1], float64[::1], uint64[::1])"


def test_device_functions_compile_through_ptxas(tmp_path):
    ptx, rt = cuda.compile_ptx(all_functions, ALL_SIG, arch="sm_90")
    assert ".entry" in ptx and rt in ("none", "void")
    assemble(ptx, tmp_path)


def _functions(llvm_text):
    """{function name prefix: body} of an NVVM IR module."""
    out = {}
    for m in re.finditer(r"define [^@]*@(\w+)\(.*?\n}\n", llvm_text, re.S):
        out[m.group(1)] = m.group(0)
    return out


def test_uint64_operations_are_unsigned():
    k = cuda.jit(ALL_SIG)(all_functions)
    fns = _functions(list(k.inspect_llvm().values())[0])
    rotl = next(v for n, v in fns.items() if n.startswith("rotl"))
    assert "shl i64" in rotl and "lshr i64" in rotl and "ashr" not in rotl
    to_f64 = next(v for n, v in fns.items() if n.startswith("uint64_to_unit_float64"))
    assert "lshr i64" in to_f64 and "uitofp i64" in to_f64 and "sitofp" not in to_f64
    to_f32 = next(v for n, v in fns.items() if n.startswith("uint64_to_unit_float32"))
    assert "fptrunc double" in to_f32
    nxt = next(v for n, v in fns.items() if n.startswith("xoroshiro128p_next"))
    assert "xor i64" in nxt and "shl i64" in nxt
    # s0 + s1 wraps (uint64): the value adds carry no no-wrap flags (index
    # arithmetic, %t values, may: the range pass proves those in bounds)
    value_adds = re.findall(r"%v\d+ = add (.*)", nxt)
    assert value_adds and not [a for a in value_adds if a.startswith(("nsw", "nuw"))], value_adds


def test_import_paths_like_numbas():
    import cudajit
    assert cudajit.random is cr
    assert {"create_xoroshiro128p_states", "init_xoroshiro128p_states", "xoroshiro128p_uniform_float32",
            "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float64",
            "xoroshiro128p_next", "xoroshiro128p_jump", "init_xoroshiro128p_state",
            "xoroshiro128p_dtype"} <= set(cr.__all__)

    def via_namespace(states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.random.xoroshiro128p_uniform_float32(states, i) + cr.xoroshiro128p_normal_float32(states, i)

    ptx, _ = cuda.compile_ptx(via_namespace, "void(uint64[:, ::1], float32[::1])")
    assert ".entry" in ptx


# Running the kernel's NVVM IR on the CPU: the IR is target-neutral except
# for libdevice calls (the normals), which the CPU run gets from libm.
LIBM = {"__nv_logf": ("logf", ctypes.c_float), "__nv_cosf": ("cosf", ctypes.c_float),
        "__nv_sqrtf": ("sqrtf", ctypes.c_float), "__nv_log": ("log", ctypes.c_double),
        "__nv_cos": ("cos", ctypes.c_double), "__nv_sqrt": ("sqrt", ctypes.c_double)}


def _cpu_kernel(kernel):
    llvm = pytest.importorskip("llvmlite.binding")
    text = list(kernel.inspect_llvm().values())[0]
    name = re.search(r"define void @(\S+)\(", text).group(1)
    text = re.sub(r'target (datalayout|triple) = ".*"\n', "", text)
    if re.search(r"@llvm\.nvvm|sreg", text):
        pytest.skip("the kernel uses NVVM intrinsics")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for nv, (c, _) in LIBM.items():
        if f"@{nv}(" in text:
            llvm.add_symbol(nv, ctypes.cast(getattr(libm, c), ctypes.c_void_p).value)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(text)
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    _cpu_kernel.engines.append(engine)       # keep the code alive
    return engine.get_function_address(name)


_cpu_kernel.engines = []


def serial_all(states, seed, u32, u64, n32, n64, raw):
    for i in range(states.shape[0]):
        u32[i] = xoroshiro128p_uniform_float32(states, i)
        u64[i] = xoroshiro128p_uniform_float64(states, i)
        n32[i] = xoroshiro128p_normal_float32(states, i)
        n64[i] = xoroshiro128p_normal_float64(states, i)
        raw[i] = xoroshiro128p_next(states, i)
        if seed > 0:
            init_xoroshiro128p_state(states, i, seed + i)
            xoroshiro128p_jump(states, i)


def test_device_code_gives_numbas_numbers_on_the_cpu():
    nr = _numba_random()
    k = cuda.jit(ALL_SIG)(serial_all)
    addr = _cpu_kernel(k)
    n, seed = 300, 2024
    st = cr._host_states(n, seed)
    ref = np.empty(n, nr.xoroshiro128p_dtype)
    ref["s0"], ref["s1"] = st[:, 0], st[:, 1]
    u32, u64 = np.zeros(n, np.float32), np.zeros(n)
    n32, n64, raw = np.zeros(n, np.float32), np.zeros(n), np.zeros(n, np.uint64)
    P, I = ctypes.c_void_p, ctypes.c_int64
    fn = ctypes.CFUNCTYPE(None, P, I, I, I, I, ctypes.c_uint64, *([P, I, I] * 5))(addr)
    fn(st.ctypes.data, n, 2, 16, 8, 5, *(x for a in (u32, u64, n32, n64, raw) for x in (a.ctypes.data, n, a.itemsize)))
    e32 = np.array([nr.xoroshiro128p_uniform_float32(ref, i) for i in range(n)], np.float32)
    e64 = np.array([nr.xoroshiro128p_uniform_float64(ref, i) for i in range(n)])
    en32 = np.array([nr.xoroshiro128p_normal_float32(ref, i) for i in range(n)], np.float32)
    en64 = np.array([nr.xoroshiro128p_normal_float64(ref, i) for i in range(n)])
    er = np.array([nr.xoroshiro128p_next(ref, i) for i in range(n)], np.uint64)
    for i in range(n):
        nr.init_xoroshiro128p_state(ref, i, np.uint64(5 + i))
        nr.xoroshiro128p_jump(ref, i)
    assert np.array_equal(u32, e32)
    assert np.array_equal(u64, e64)
    assert np.array_equal(raw, er)
    assert np.array_equal(st, ref.view(np.uint64).reshape(-1, 2))     # init_state + jump on the device
    # the normals call libdevice on the GPU, libm here: the formula, to libm's last bits
    np.testing.assert_allclose(n32, en32, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(n64, en64, rtol=1e-14, atol=1e-14)
    assert 0 <= u32.min() and u64.max() < 1 and abs(float(n64.mean())) < 0.3


# ---------------------------------------------------------------------------
# GPU: numba's numbers for the same seed
# ---------------------------------------------------------------------------

def _draw(states, u32, u64, n32, n64, raw):
    i = cuda.grid(1)
    if i < states.shape[0]:
        for k in range(4):
            u32[k, i] = xoroshiro128p_uniform_float32(states, i)
            u64[k, i] = xoroshiro128p_uniform_float64(states, i)
            n32[k, i] = xoroshiro128p_normal_float32(states, i)
            n64[k, i] = xoroshiro128p_normal_float64(states, i)
            raw[k, i] = xoroshiro128p_next(states, i)


@pytest.mark.gpu
def test_states_on_the_gpu_equal_host():
    n, seed = 5000, 31337
    d = create_xoroshiro128p_states(n, seed=seed, subsequence_start=2)
    assert d.shape == (n, 2)
    assert np.array_equal(d.copy_to_host(), cr._host_states(n, seed, 2))
    init_xoroshiro128p_states(d, seed + 1)
    assert np.array_equal(d.copy_to_host(), cr._host_states(n, seed + 1))


@pytest.mark.gpu
def test_kernel_numbers_equal_numba_cuda():
    nr = _numba_random()
    from numba import cuda as ncuda
    rng = np.random.default_rng()
    n = int(rng.integers(1000, 5000))
    seed = int(rng.integers(0, 2**63))
    outs = lambda: [np.zeros((4, n), np.float32), np.zeros((4, n)), np.zeros((4, n), np.float32),
                    np.zeros((4, n)), np.zeros((4, n), np.uint64)]

    states = create_xoroshiro128p_states(n, seed=seed)
    got = outs()
    cuda.jit(_draw)[(n + 127) // 128, 128](states, *got)

    src = ("def draw(states, u32, u64, n32, n64, raw):\n"
           "    i = cuda.grid(1)\n"
           "    if i < states.shape[0]:\n"
           "        for k in range(4):\n"
           "            u32[k, i] = nr.xoroshiro128p_uniform_float32(states, i)\n"
           "            u64[k, i] = nr.xoroshiro128p_uniform_float64(states, i)\n"
           "            n32[k, i] = nr.xoroshiro128p_normal_float32(states, i)\n"
           "            n64[k, i] = nr.xoroshiro128p_normal_float64(states, i)\n"
           "            raw[k, i] = nr.xoroshiro128p_next(states, i)\n")
    ns = {"cuda": ncuda, "nr": nr}
    exec(src, ns)
    nstates = nr.create_xoroshiro128p_states(n, seed=seed)
    want = outs()
    ncuda.jit(ns["draw"])[(n + 127) // 128, 128](nstates, *want)
    assert np.array_equal(states.copy_to_host(), nstates.copy_to_host().view(np.uint64).reshape(-1, 2))
    # Through LLVM's NVPTX back end (CUDAJIT_BACKEND=llvm) another optimiser
    # picks which multiply-adds (libdevice's logf and cosf included) become
    # fused: the normal draws then match numba-cuda's libNVVM build to 2 ulp,
    # the integer-derived draws bit for bit.
    llvm = os.environ.get("CUDAJIT_BACKEND") == "llvm"
    for g, w, what in zip(got, want, ("uniform_float32", "uniform_float64", "normal_float32",
                                       "normal_float64", "next")):
        if llvm and what.startswith("normal"):
            np.testing.assert_array_max_ulp(g, w, maxulp=2)
        else:
            assert np.array_equal(g, w), f"xoroshiro128p_{what} differs from numba-cuda (seed {seed})"
