"""The range pass (compiler/passes/range.cpp) and the code it lets codegen emit.

Correctness first: where the pass proves a fact, the lowering that exploits
it (udiv instead of the floor fix-up, no index wraparound, nsw/nuw) must
give the same values as Python; where it proves nothing, Python's semantics
stay (a negative index wraps, -7 // 2 == -4). Values are checked on the CPU
under lli (test_codegen.run_cpu) against Python on random operands.
Then the PTX of the benchmark kernels (benchmarks/bench_kernels.py): the
wraparound and the floor fix-up are gone from their loops, and the
grid-stride loop is unrolled like the CUDA C++ version's. No GPU needed.
"""
import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest

core = pytest.importorskip("cudajit._core")
import cudajit  # noqa: E402
from test_codegen import ArrayArg, build, kernel_text, ranged, run_cpu  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_kernels  # noqa: E402


# ---- floor division and modulo ------------------------------------------------------

DIVMOD = """func k() -> none kernel
bb0:
  ret

func f(v0:i64 a, v1:i64 b) -> i64
bb0:
  v2:i64 = const 0
  v3:b1 = ge v0, v2
  cbr v3, bb1, bb3
bb1:
  v4:b1 = gt v1, v2
  cbr v4, bb2, bb3
bb2:
  v5:i64 = floordiv v0, v1
  v6:i64 = mod v0, v1
  v7:i64 = const 1000003
  v8:i64 = mul v5, v7
  v9:i64 = add v8, v6
  ret v9
bb3:
  v10:i64 = floordiv v0, v1
  v11:i64 = mod v0, v1
  v12:i64 = const 1000003
  v13:i64 = mul v10, v12
  v14:i64 = add v13, v11
  ret v14
"""


def python_divmod_code(a, b):
    # numba: x // 0 == 0 and x % 0 == 0
    q, r = (a // b, a % b) if b else (0, 0)
    v = (q * 1000003 + r) & ((1 << 64) - 1)
    return v - (1 << 64) if v >= 1 << 63 else v


def test_floordiv_mod_proven_non_negative_become_udiv_urem():
    ir = ranged(DIVMOD)
    assert "floordiv nonneg v0, v1" in ir and "mod nonneg v0, v1" in ir   # the guarded pair
    assert "floordiv v0, v1" in ir and "mod v0, v1" in ir                 # the unguarded pair
    nvvm = core.emit_nvvm_from_ir(ir)
    assert "udiv i64 %arg0, %arg1" in nvvm and "urem i64 %arg0, %arg1" in nvvm
    assert "call {i64, i64} @__cj_divmod_i64(i64 %arg0, i64 %arg1)" in nvvm   # unguarded: floor fix-up


def test_floordiv_mod_values_with_and_without_facts():
    rng = random.Random(5)
    rows = [(-7, 2), (7, 2), (-7, -2), (7, -2), (0, 3), (5, 0), (-5, 0), (-(1 << 63), -1), (-1, 1 << 40)]
    rows += [(rng.randint(0, 1 << 62), rng.randint(1, 1 << 31)) for _ in range(25)]
    rows += [(rng.randint(-(1 << 62), 1 << 62), rng.randint(-(1 << 20), 1 << 20)) for _ in range(25)]
    got = run_cpu(ranged(DIVMOD), "f", ["i64", "i64"], "i64", rows)
    assert got[0] == python_divmod_code(-7, 2) == -4 * 1000003 + 1   # -7 // 2 == -4, -7 % 2 == 1
    for (a, b), g in zip(rows, got):
        want = 0 if (a, b) == (-(1 << 63), -1) else python_divmod_code(a, b)   # numba: MIN // -1 == 0
        assert g == want, (a, b)


HALVING = """func k() -> none kernel
bb0:
  ret

func f(v0:i64 n) -> i64
bb0:
  v1:i64 = const 0
  v2:i64 = const 2
  br bb1(v0, v1)
bb1(v3:i64 w, v4:i64 acc):
  v5:b1 = gt v3, v1
  cbr v5, bb2, bb3
bb2:
  v6:i64 = mod v3, v2
  v7:i64 = add v4, v6
  v8:i64 = floordiv v3, v2
  br bb1(v8, v7)
bb3:
  v9:i64 = mul v4, v2
  v10:i64 = add v9, v3
  ret v10
"""


def test_halving_loop_of_an_argument():
    # w starts as an unknown argument: inside `while w > 0` it is >= 1, so
    # `w % 2` and `w // 2` need no fix-up; a negative n skips the loop.
    ir = ranged(HALVING)
    assert "mod nonneg v3, v2" in ir and "floordiv nonneg v3, v2" in ir
    rows = [(n,) for n in (-9, -1, 0, 1, 2, 7, 128, 1000, (1 << 62) + 12345)]
    got = run_cpu(ir, "f", ["i64"], "i64", rows)
    for (n,), g in zip(rows, got):
        w, acc = n, 0
        while w > 0:
            acc += w % 2
            w //= 2
        assert g == acc * 2 + w


# ---- indices ------------------------------------------------------------------------

INDEXING = """func k() -> none kernel
bb0:
  ret

func f(v0:array(i64, 1d, C) x, v1:i64 i) -> i64
bb0:
  v2:i64 = load v0, v1
  v3:i64 = const 0
  v4:b1 = gt v1, v3
  cbr v4, bb1, bb2
bb1:
  v5:i64 = const 1
  v6:i64 = sub v1, v5
  v7:i64 = load v0, v6
  v8:i64 = const 100
  v9:i64 = mul v7, v8
  v10:i64 = add v9, v2
  ret v10
bb2:
  v11:i64 = const 1
  v12:i64 = sub v1, v11
  v13:i64 = load v0, v12
  v14:i64 = const 10000
  v15:i64 = mul v13, v14
  v16:i64 = add v15, v2
  ret v16
"""


def test_negative_indices_still_wrap_and_proven_ones_do_not():
    ir = ranged(INDEXING)
    assert "load v0, v1" in ir            # i unknown: wraps
    assert "load nonneg[0] v0, v6" in ir   # i > 0: i - 1 >= 0
    assert "load v0, v12" in ir            # i <= 0: i - 1 < 0 wraps
    x = np.random.default_rng(3).integers(1, 99, 9)
    rows = [(ArrayArg(x), i) for i in range(-x.size + 1, x.size)]
    got = run_cpu(ir, "f", ["arr", "i64"], "i64", rows)
    for (_, i), g in zip(rows, got):
        want = x[i - 1] * 100 + x[i] if i > 0 else x[i - 1] * 10000 + x[i]
        assert g == want, i


CONST_SHAPE = """func k(v0:array(i32, 1d, C) data, v1:array(i32, 1d, C) out) -> none kernel
bb0:
  v2:array(i32, 1d, C, shared) = intrinsic shared_array[256]()
  v3:array(i32, 1d, C, shared) = intrinsic shared_array[100]()
  v4:i32 = intrinsic sreg.tid.x()
  v5:i64 = cast v4
  v6:i32 = load v0, v5
  v7:i64 = cast v6
  v8:i32 = const 1
  v9:i32 = intrinsic atomic_add(v2, v7, v8)
  v10:i32 = intrinsic atomic_add(v3, v7, v8)
  v11:i32 = load v2, v5
  store v1, v5, v11
  ret
"""


def test_constant_power_of_two_shapes_wrap_with_a_mask():
    # sh[x[i]] with a loaded (unknown) index: a 256-long shared array wraps
    # it with `and 255` (every valid index, -256 .. 255, maps right); a
    # 100-long one keeps the compare-and-select.
    ir = ranged(CONST_SHAPE)
    assert "intrinsic atomic_add(v2, v7, v8)" in ir and "load nonneg[0] v2, v5" in ir
    nvvm, ptx = build(ir)
    k = kernel_text(nvvm)
    assert "and i64 %t" in k and ", 255" in k
    assert k.count("select i1") == 1   # the 100-long array only
    assert "atom.shared.add.u32" in ptx


def test_debug_keeps_the_full_wraparound_for_bounds_checks():
    nvvm = core.emit_nvvm_from_ir(ranged(CONST_SHAPE), debug=True)
    assert ", 255" not in kernel_text(nvvm)


# ---- the text form -------------------------------------------------------------------

def test_facts_print_parse_and_verify():
    ir = ranged(INDEXING)
    assert core.parse_print_ir(ir) == ir
    bad = ir.replace("load nonneg[0] v0, v6", "load nonneg[1] v0, v6")
    assert "names an index" in core.verify_ir(bad, True)
    bad = INDEXING.replace("v6:i64 = sub v1, v5", "v6:i64 = sub nonneg v1, v5")
    assert "nonneg on an op" in core.verify_ir(bad, True)
    bad = INDEXING.replace("v7:i64 = load v0, v6", "v7:i64 = load nsw v0, v6")
    assert "nsw/nuw on an op" in core.verify_ir(bad, True)


def test_the_pass_recomputes_its_facts():
    # A stale fact (here: a made-up one) is dropped, not trusted.
    stale = INDEXING.replace("v2:i64 = load v0, v1", "v2:i64 = load nonneg[0] v0, v1")
    assert "load v0, v1" in ranged(stale)


# ---- the benchmark kernels -------------------------------------------------------------

F32_1D, F32_2D, I32_1D = "float32[::1]", "float32[:, ::1]", "int32[::1]"
BENCH = {
    "axpy": ["float32", F32_1D, F32_1D],
    "hist_shared": [I32_1D, I32_1D],
    "matmul_tiled": [F32_2D, F32_2D, F32_2D],
    "stencil5": [F32_2D, F32_2D],
    "reduce_tree": [F32_1D, F32_1D],
}


def bench_ptx(name):
    fn = getattr(bench_kernels, name)
    f = type(fn)(fn.__code__, dict(fn.__globals__, cuda=cudajit), fn.__name__)
    return cudajit.compile_ptx(f, "void(" + ", ".join(BENCH[name]) + ")", cc=(9, 0))[0]


def bench_ir(name):
    fn = getattr(bench_kernels, name)
    f = type(fn)(fn.__code__, dict(fn.__globals__, cuda=cudajit), fn.__name__)
    return core.run_passes(core.infer_ir(f, BENCH[name], kernel=True), ["default"], True)


@pytest.mark.parametrize("name", sorted(BENCH))
def test_bench_kernel_indices_are_all_proven(name):
    ir = bench_ir(name)
    unproven = [ln for ln in ir.splitlines() if re.search(r"= load v|^\s+store v", ln)]
    assert not unproven, unproven
    assert "floordiv v" not in ir and "mod v" not in ir


def test_reduction_grid_stride_loop_is_unrolled_like_cpp():
    ptx = bench_ptx("reduce_tree")
    # nsw on `i += stride` gives LLVM the trip count: the loop is unrolled by 4.
    assert len(re.findall(r"ld\.global(\.nc)?\.f32", ptx)) >= 5
    assert "shr.s64" not in ptx and "selp" not in ptx   # no index wraparound, no floor fix-up
    assert "div.s64" not in ptx and "rem.s64" not in ptx


def test_stencil_has_no_wraparound():
    ptx = bench_ptx("stencil5")
    assert "shr.s64" not in ptx and "selp" not in ptx
    # a[i-1, j] and a[i+1, j] are a[i, j]'s offset -/+ n: one multiply for a, one for out
    assert len(re.findall(r"mul\.lo\.s64", ptx)) == 2


def test_histogram_inner_loop():
    ptx = bench_ptx("hist_shared")
    loop = re.search(r"\$L__BB0_2:(.*?)@%p\d+ bra\s+\$L__BB0_2;", ptx, re.S).group(1)
    body = [ln for ln in loop.splitlines() if ln.strip() and not ln.strip().startswith("//")]
    assert "selp" not in loop and "shr.s64" not in loop
    assert len(body) <= 12, body


# ---- differential: the same functions with and without the facts ------------------------

def d_loops(x, n, s):
    acc = 0
    w = n
    while w > 0:
        acc += x[w % x.size] + (w // 3) - (w % 7)
        w //= 2
    for j in range(s, x.size):          # s may be negative: x[j] wraps
        acc = acc * 3 + x[j]
    for j in range(x.size - 1, -1, -2):
        acc += x[j] * j
    i = n
    if 0 < i < x.size - 1:
        acc += x[i - 1] - x[i + 1] + i // 2
    elif i < 0 and i >= -x.size:
        acc += x[i] * 5 + i // 2 + i % 3
    return acc


def d_grid(x, y, n):
    acc = 0
    i = n
    while i < x.shape[0]:                # n may be negative: x[i] wraps
        j = 0
        while j < x.shape[1]:
            acc += x[i, j] * (j + 1)
            j += 1
        i += 2
    for k in range(y.size):
        t = (k * 7 + n) // 4
        if t >= 0:
            acc += y[t % y.size]
        else:
            acc -= y[t]                  # t in [-y.size, -1] here for small n
    return acc


def d_stencil(x, i, j):
    acc = 0
    if 0 < i < x.shape[0] - 1 and 0 <= j < x.shape[1]:
        acc = x[i - 1, j] * 3 + x[i + 1, j] * 5 + x[i, j]     # split offsets: i*n -/+ n
    if 1 < i < x.shape[0] and 0 < j < x.shape[1] - 2:
        acc += x[i - 2, j + 2] * 7 + x[i, j - 1]
    if i < 0:
        acc += x[i, j] * 11                                   # wraps
    return acc


def d_ranges(x, n, s):
    acc = 0
    st = n % 3 + 1                       # a runtime step known > 0
    for j in range(s, x.size, st):       # s may be negative
        acc = acc * 2 + x[j]
    for j in range(x.size - 1, s, -st):  # a runtime step known < 0
        acc = acc * 3 + x[j] * (j + 1)
    for j in range(n, x.size, 1):
        acc += x[j] + j // 2
    return acc


def python_reference(fn, *args):
    # int64 values far from overflow: numpy's integer semantics are Python's.
    return int(fn(*args))


DIFF = [
    (d_loops, ["int64[::1]", "int64", "int64"], ["arr", "i64", "i64"]),
    (d_grid, ["int64[:, ::1]", "int64[::1]", "int64"], ["arr", "arr", "i64"]),
    (d_ranges, ["int64[::1]", "int64", "int64"], ["arr", "i64", "i64"]),
    (d_stencil, ["int64[:, ::1]", "int64", "int64"], ["arr", "i64", "i64"]),
    (d_stencil, ["int64[::1, :]", "int64", "int64"], ["arr", "i64", "i64"]),
    (d_stencil, ["int64[:, :]", "int64", "int64"], ["arr", "i64", "i64"]),
]


@pytest.mark.parametrize("fn,types,argkinds", DIFF, ids=[f"{d[0].__name__}-{d[1][0]}" for d in DIFF])
def test_facts_change_no_value(fn, types, argkinds):
    kernel = "func k() -> none kernel\nbb0:\n  ret\n\n"
    typed = core.infer_ir(fn, types, kernel=False)
    plain = core.run_passes(kernel + typed, ["simplify-params", "fold", "dce"], True)
    proven = core.run_passes(kernel + typed, ["default"], True)
    assert "nonneg" in proven and "nonneg" not in plain
    rng = np.random.default_rng(11)
    rows = []
    for _ in range(24):
        if fn is d_loops or fn is d_ranges:
            x = rng.integers(-50, 50, int(rng.integers(3, 12)))
            low = -15 if fn is d_loops else -x.size   # d_ranges indexes x[n] (in bounds only)
            rows.append((ArrayArg(x), int(rng.integers(low, 40)), int(rng.integers(-x.size, x.size))))
        elif fn is d_grid:
            x = rng.integers(-9, 9, (int(rng.integers(1, 5)), int(rng.integers(1, 6))))
            y = rng.integers(-9, 9, int(rng.integers(4, 9)))
            rows.append((ArrayArg(x), ArrayArg(y), int(rng.integers(-x.shape[0], 3))))
        else:
            x = rng.integers(-99, 99, (int(rng.integers(3, 7)), int(rng.integers(4, 9))))
            if "::1, :" in types[0]:
                x = np.asfortranarray(x)
            elif "::1" not in types[0]:
                x = rng.integers(-99, 99, (x.shape[0] + 2, 2 * x.shape[1]))[1:-1, ::2]   # strided
            rows.append((ArrayArg(x), int(rng.integers(-x.shape[0], x.shape[0])), int(rng.integers(0, x.shape[1]))))
    want = run_cpu(plain, fn.__name__, argkinds, "i64", rows)
    got = run_cpu(proven, fn.__name__, argkinds, "i64", rows)
    assert got == want
    for row, g in zip(rows, got):
        args = [a.arr if isinstance(a, ArrayArg) else a for a in row]
        assert g == python_reference(fn, *args), row


def gs_sum(x, out):
    acc = np.float32(0)
    for i in range(cudajit.grid(1), x.size, cudajit.gridsize(1)):
        acc += x[i]
    out[cudajit.grid(1)] = acc


def test_grid_stride_range_loop_is_unrolled():
    # numba's idiom range(cuda.grid(1), n, cuda.gridsize(1)): the step is a
    # runtime value known > 0, so iter_valid is cur < stop and cur + step
    # cannot wrap: LLVM unrolls it, and x[i] needs no wraparound.
    ir = core.run_passes(core.infer_ir(gs_sum, ["float32[::1]", "float32[::1]"], kernel=True), ["default"], True)
    assert re.search(r"iter_valid nonneg v", ir) and re.search(r"iter_next nsw nuw v", ir)
    ptx = cudajit.compile_ptx(gs_sum, "void(float32[::1], float32[::1])", cc=(9, 0))[0]
    assert len(re.findall(r"ld\.global\.f32", ptx)) >= 5
    assert "shr.s64" not in ptx and "selp" not in ptx


def block_sum(x, out):
    buf = cudajit.shared.array(1024, np.float32)
    t = cudajit.threadIdx.x
    i = cudajit.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cudajit.syncthreads()
    w = cudajit.blockDim.x // 2
    while w > 0:
        if t < w:
            buf[t] += buf[t + w]
        cudajit.syncthreads()
        w //= 2
    if t == 0:
        cudajit.atomic.add(out, 0, buf[0])


def test_tree_reduction_over_block_dim_has_no_floor_fix_up():
    # w starts at blockDim.x // 2 (unknown at compile time) and halves while
    # > 0: every `//` is a shift, no index wraps.
    ptx = cudajit.compile_ptx(block_sum, "void(float32[::1], float32[::1])", cc=(9, 0))[0]
    assert re.search(r"shr\.u(32|64)", ptx)
    assert not re.search(r"\b(div|rem)\.s", ptx) and "selp" not in ptx and "shr.s64" not in ptx
