"""Every tile operation through the whole compiler without a GPU: type
inference, the tile pipeline, libNVVM, and ptxas for sm_80 and sm_90
(docs/tiles.md). The GPU checks of the same operations against numpy are
tests/gpu/test_tiles_gpu.py."""
import os
import re
import sys

import pytest

import cudajit
import cudajit.tile as ct

sys.path.insert(0, os.path.dirname(__file__))
from ptxas_check import assemble, assemble_with_messages  # noqa: E402

ZERO = ct.PaddingMode.ZERO
F32_3D = "float32[:, :, ::1]"
F32_2D = "float32[:, ::1]"
F32_1D = "float32[::1]"


@ct.kernel
def k_elementwise(x, y, out, T: ct.Constant[int]):
    a = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=ZERO)
    b = ct.load(y, index=(ct.bid(0),), shape=(T,), padding_mode=ZERO)
    r = ct.where(a > b, a * 2.0 - b, ct.exp(a) / (b + 1.0)) + ct.maximum(a, b) ** 2
    r = r + ct.sqrt(ct.abs(a)) + ct.floor(b) + (a // 3.0) + ct.arange(T, dtype=ct.float32)
    ct.store(out, index=(ct.bid(0),), tile=r.astype(ct.float16).astype(ct.float32))


@ct.kernel
def k_reduce(x, out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(TM, TN), padding_mode=ct.PaddingMode.NEG_INF)
    m = ct.max(t, axis=1, keepdims=True)
    s = ct.sum(ct.exp(t - m), axis=0) + ct.argmax(t, axis=0).astype(ct.float32)
    ct.store(out, index=(ct.bid(0),), tile=s + ct.min(t) + ct.sum(ct.prod(t, axis=1)))


@ct.kernel
def k_shapes(x, out, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(T, 2 * T))
    u = ct.transpose(t)                              # (2T, T)
    v = ct.permute(ct.expand_dims(ct.reshape(u, (T, 2 * T)), 0), (1, 0, 2))
    row = ct.sum(t, axis=0, keepdims=True)           # (1, 2T), broadcast back
    ct.store(out, index=(ct.bid(0), 0), tile=ct.reshape(v, (T, 2 * T)) + ct.broadcast_to(row, (T, 2 * T)))


@ct.kernel
def k_scan(x, out, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(out, index=(ct.bid(0),), tile=ct.cumsum(t, axis=0) + ct.cumsum(t, axis=0, reverse=True))


@ct.kernel
def k_matmul(a, b, c, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(BM, BK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN), padding_mode=ZERO)
        acc = ct.mma(x, y, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(c.dtype))


@ct.kernel
def k_matmul_any(a, b, c, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    # cuTile's own matmul example: float32 inputs go to the tensor cores as tfloat32.
    acc = ct.full((BM, BN), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(BM, BK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN), padding_mode=ZERO)
        if a.dtype == ct.float32:
            x = x.astype(ct.tfloat32)
            y = y.astype(ct.tfloat32)
        acc = ct.mma(x, y, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(c.dtype))


@ct.kernel
def k_gather_scatter(x, y, out, T: ct.Constant[int]):
    r = ct.expand_dims(ct.bid(0) * T + ct.arange(T, dtype=ct.int32), 1)     # (T, 1)
    c = ct.expand_dims(x.shape[1] - 1 - ct.arange(T, dtype=ct.int32), 0)    # (1, T), reversed
    t = ct.gather(x, (r, c), mask=(r + c) % 3 != 0, padding_value=0.5)       # (T, T)
    ct.scatter(y, (r, c), t * 2.0, mask=t > 0)
    ct.store(out, index=(ct.bid(0), 0), tile=t)


@ct.kernel
def k_atomics(hist, y, out, T: ct.Constant[int]):
    pos = ct.arange(T, dtype=ct.int32)
    ct.atomic_add(hist, pos % 7, 1)                 # colliding indices
    old = ct.atomic_cas(y, pos, 0, 5) + ct.atomic_max(y, pos, 3) + ct.atomic_xor(y, 0, 1)
    old += ct.atomic_xchg(y, pos, 2, memory_order=ct.MemoryOrder.RELEASE, memory_scope=ct.MemoryScope.BLOCK)
    old += ct.atomic_add(y, pos, 1, memory_order=ct.MemoryOrder.RELAXED)
    ct.store(out, index=(0,), tile=old)


@ct.kernel
def k_matmul_f16_acc(a, b, c, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((BM, BN), dtype=ct.float16)
    for k in range(ct.num_tiles(a, axis=1, shape=(BM, BK))):
        acc = ct.mma(ct.load(a, index=(bm, k), shape=(BM, BK)), ct.load(b, index=(k, bn), shape=(BK, BN)), acc)
    ct.store(c, index=(bm, bn), tile=acc)


@ct.kernel
def k_cat_newaxis(x, y, out0, out1, col, out2, T: ct.Constant[int]):
    tx = ct.load(x, index=(0, 0), shape=(T, T))
    ty = ct.load(y, index=(0, 0), shape=(T, T))
    ct.store(out0, index=(0, 0), tile=ct.cat((tx, ty), 0))
    ct.store(out1, index=(0, 0), tile=ct.cat((tx, ty), axis=-1))
    tc = ct.load(col, index=(0,), shape=(T,))
    ct.store(out2, index=(0, 0), tile=tc[:, None] - tc[None, :])


@ct.kernel
def k_matmul_batched(a, b, c, NB: ct.Constant[int], TM: ct.Constant[int], TN: ct.Constant[int],
                     TK: ct.Constant[int]):
    ta = ct.load(a, index=(0, 0, 0), shape=(NB, TM, TK))
    tb = ct.load(b, index=(0, 0), shape=(TK, TN))
    acc = ct.full((NB, TM, TN), 1.0, dtype=ct.float32)
    ct.store(c, index=(0, 0, 0), tile=ct.mma(ta, tb, acc))


def _combine_add(a, b):
    return a + b


def _combine_max(a, b):
    return ct.maximum(a, b)


def _combine_other(a, b):
    return a * 2 + b


@ct.kernel
def k_scan_reduce_func(x, scan_out, red_out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(TM, TN))
    ct.store(scan_out, index=(0, 0), tile=ct.scan(t, 1, _combine_add, 0, reverse=True))
    ct.store(red_out, index=(0,), tile=ct.reduce(t, 1, _combine_max, -1000000))


@ct.kernel
def k_reduce_other_func(x, red_out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(TM, TN))
    ct.store(red_out, index=(0,), tile=ct.reduce(t, 1, _combine_other, 0))


@ct.kernel
def k_matmul_f64(a, b, c, T: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0), 0), shape=(T, T), padding_mode=ZERO)
    y = ct.load(b, index=(0, ct.bid(1)), shape=(T, T), padding_mode=ZERO)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=x @ y)


@ct.kernel
def k_batched_y(a, b, c, T: ct.Constant[int]):
    # a batch of y tiles, x broadcast from a batch of 1 (cuTile's FFT sample)
    ta = ct.load(a, index=(0, 0, 0), shape=(1, T, T))
    tb = ct.load(b, index=(0, 0, 0), shape=(4, T, T))
    ct.store(c, index=(0, 0, 0), tile=ct.matmul(ta, tb))


@ct.kernel
def k_extract(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(0, 0, 0), shape=(T, T, 2))
    re = ct.reshape(ct.extract(t, index=(0, 0, 0), shape=(T, T, 1)), (T, T))
    im = ct.reshape(t.extract((0, 0, 1), (T, T, 1)), (T, T))
    ct.store(y, index=(0, 0), tile=re * 10 + im)


@ct.kernel
def k_tiled_view(x, y, T: ct.Constant[int]):
    xv = x.tiled_view((T, T), padding_mode=ZERO)
    yv = y.tiled_view((T, T))
    for j in range(xv.num_tiles(1)):
        yv.store((ct.bid(0), j), xv.load((ct.bid(0), j)) * 2)


@ct.kernel
def k_array_slice(x, offsets, y, T: ct.Constant[int]):
    # segment bid of x: rows offsets[bid] .. offsets[bid + 1] - 1 (cuTile's Array.slice)
    seg = x.slice(0, ct.load(offsets, index=(ct.bid(0),), shape=()), offsets[ct.bid(0) + 1])
    cols = seg.slice(axis=-1, start=0, stop=T)
    ct.store(y, index=(ct.bid(0), 0), tile=ct.sum(ct.load(cols, index=(0, 0), shape=(T, T), padding_mode=ZERO), axis=0,
                                                   keepdims=True))


@ct.kernel
def k_assert(x, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.assert_(t > 0, "x must be positive")
    ct.assert_(ct.sum(t) < 1e9)
    ct.store(x, index=(ct.bid(0),), tile=t * 2)


@ct.kernel
def k_print(x, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(T, T))
    ct.printf("tile %d: %.3f, sum %e\n", ct.bid(0), t, ct.sum(t))
    ct.print("max", ct.max(t), t > 0, sep="=", end="|\n")
    print(t.astype(ct.int32), 2.5)


def _tile_of(x, i, T):
    # a helper: its T is the caller's Constant (the call specialises on it)
    return ct.load(x, index=(i, 0), shape=(T, T), padding_mode=ZERO)


def _twice(t):
    return t + t


def _pair(t):
    return t, t * 2   # a tuple of tiles: one value per element after inlining


@ct.kernel
def k_helpers(x, y, T: ct.Constant[int]):
    a, b = _pair(_tile_of(x, ct.bid(0), T))
    ct.store(y, index=(ct.bid(0), 0), tile=_twice(a) + b)


@ct.kernel
def k_bitcast(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=ct.bitcast(t, ct.int32) & 0x7FFFFFFF)


CASES = [
    ("elementwise", k_elementwise, [F32_1D] * 3 + ["int64"], {"T": 256}, ["ld.global.v4", "st.global"]),
    ("reduce", k_reduce, [F32_2D, F32_1D, "int64", "int64"], {"TM": 16, "TN": 64}, ["shfl.sync.bfly", "bar.sync"]),
    ("shapes", k_shapes, [F32_2D, F32_2D, "int64"], {"T": 16}, ["st.shared", "ld.shared"]),
    ("scan", k_scan, [F32_1D, F32_1D, "int64"], {"T": 128}, ["bar.sync"]),
    # Tensor cores: mma.sync where a tile is smaller than a warpgroup's m64
    # (and on sm_80), wgmma on sm_90 (sm_90a code) from 64 rows up.
    ("matmul f16 small", k_matmul, ["float16[:, ::1]"] * 3 + ["int64"] * 3, {"BM": 32, "BN": 32, "BK": 16},
     ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ldmatrix.sync.aligned.m8n8.x4.shared.b16"]),
    # A 16-bit result is stored through shared memory (16-byte stores of whole rows).
    ("matmul f16", k_matmul, ["float16[:, ::1]"] * 3 + ["int64"] * 3, {"BM": 64, "BN": 64, "BK": 32},
     {"sm_80": ["mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8.x4.trans", "ld.shared.v4.b32",
                "st.global.v4.b32"],
      "sm_90": ["wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "wgmma.wait_group", "fence.proxy.async",
                "ld.shared.v4.b32", "st.global.v4.b32"]}),
    ("matmul bf16", k_matmul_any, ["bfloat16[:, ::1]"] * 3 + ["int64"] * 3, {"BM": 64, "BN": 128, "BK": 32},
     {"sm_80": ["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "st.global.v4.b32"],
      "sm_90": ["wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "st.global.v4.b32"]}),
    ("matmul tf32", k_matmul_any, [F32_2D] * 3 + ["int64"] * 3, {"BM": 64, "BN": 64, "BK": 16},
     # float32 rounded to tfloat32, to nearest even (cuBLAS's and cuTile's
     # TF32): bits + 0xfff + lsb, the low 13 cleared
     {"sm_80": ["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "4095", "-8192"],
      # sm_90: float32 loads copied asynchronously, y transposed element by
      # element (wgmma reads tf32 K-major only), rounded in shared memory
      # (sm_90's cvt.rn.tf32.f32).
      "sm_90": ["wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32", "cp.async.ca.shared.global",
                "cp.async.cg.shared.global", "cvt.rn.tf32.f32"]}),
    # tf32 in whole 128-byte lines: both operands by TMA (32-float boxes), y
    # N-major as it lies, transposed (and rounded) in shared memory by 16-byte
    # pieces into the K-major layout wgmma reads; x rounded in place.
    ("matmul tf32 tma", k_matmul_any, [F32_2D] * 3 + ["int64"] * 3, {"BM": 128, "BN": 128, "BK": 32},
     {"sm_80": ["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"],
      # x goes to wgmma as A fragments: ldmatrix from its stage, rounded in registers
      "sm_90": ["wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "cp.async.bulk.tensor.2d",
                "ld.shared.v4.b32", "st.shared.v4.b32", "cp.async.cg.shared.global", "cvt.rn.tf32.f32",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16"]}),
    # 128-byte lines of both operands: TMA into swizzled stages (the cp.async
    # route beside it for arrays a tensor map cannot describe).
    ("matmul f16 tma", k_matmul, ["float16[:, ::1]"] * 3 + ["int64"] * 3, {"BM": 64, "BN": 128, "BK": 64},
     {"sm_80": ["mma.sync.aligned.m16n8k16"],
      "sm_90": ["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                "mbarrier.try_wait.parity.shared::cta.b64", "fence.mbarrier_init", ".param .align 64 .b8",
                "cvta.param", "cp.async.cg.shared.global"]}),
    ("matmul f32 fma", k_matmul, [F32_2D] * 3 + ["int64"] * 3, {"BM": 32, "BN": 32, "BK": 16}, ["fma.rn.f32"]),
    # A float16 accumulator: sums in float32 on the FMA units, rounded per mma.
    ("matmul f16 accumulator", k_matmul_f16_acc, ["float16[:, ::1]"] * 3 + ["int64"] * 3,
     {"BM": 64, "BN": 64, "BK": 32}, ["fma.rn.f32", "cvt.rn.f16.f32"]),
    # cat: both tiles stacked along a new axis by a select, then one reshape;
    # t[:, None]: a reshape; a batch of x tiles times one y: one 2-d mma.
    ("cat and newaxis", k_cat_newaxis, ["int32[:, ::1]"] * 4 + ["int32[::1]", "int32[:, ::1]", "int64"], {"T": 16},
     ["bar.sync", "st.shared", "ld.shared"]),
    ("matmul batched", k_matmul_batched, ["float16[:, :, ::1]", "float16[:, ::1]", "float32[:, :, ::1]"] + ["int64"] * 4,
     {"NB": 4, "TM": 32, "TN": 16, "TK": 32}, {"sm_80": ["mma.sync.aligned.m16n8k16"], "sm_90": ["wgmma.mma_async"]}),
    # scan / reduce with a combine function that is one of the built-in kinds
    ("scan reduce func", k_scan_reduce_func, ["int32[:, ::1]"] * 2 + ["int32[::1]", "int64", "int64"],
     {"TM": 8, "TN": 16}, ["shfl.sync.bfly", "bar.sync", "max.s32"]),
    ("matmul f64", k_matmul_f64, ["float64[:, ::1]"] * 3 + ["int64"], {"T": 16}, ["fma.rn.f64"]),
    ("tiled view", k_tiled_view, [F32_2D] * 2 + ["int64"], {"T": 32}, ["ld.global.v4", "st.global.v4"]),
    ("print", k_print, [F32_2D, "int64"], {"T": 8}, ["vprintf", "bar.sync"]),
    # the block ANDs its elements (bar.red.and), thread 0 reports, all trap
    ("assert", k_assert, [F32_1D, "int64"], {"T": 256}, ["bar.red.and.pred", "trap;", "vprintf"]),
    ("array slice", k_array_slice, [F32_2D, "int32[::1]", F32_2D, "int64"], {"T": 16}, ["ld.global"]),
    ("helpers inlined", k_helpers, [F32_2D] * 2 + ["int64"], {"T": 16}, ["ld.global.v4", "st.global.v4"]),
    ("matmul batched y", k_batched_y, ["float16[:, :, ::1]"] * 2 + ["float32[:, :, ::1]", "int64"], {"T": 32},
     {"sm_80": ["mma.sync.aligned.m16n8k16"], "sm_90": ["mma.sync.aligned.m16n8k16"]}),
    ("extract", k_extract, [F32_3D, F32_2D, "int64"], {"T": 16}, ["ld.global"]),
    ("bitcast", k_bitcast, [F32_1D, "int32[::1]", "int64"], {"T": 256}, ["and.b32"]),
    ("gather scatter", k_gather_scatter, [F32_2D] * 3 + ["int64"], {"T": 32}, ["@p ld.global.b32", "@p st.global.b32"]),
    ("atomics", k_atomics, ["int32[::1]"] * 3 + ["int64"], {"T": 64},
     # cuTile's default order and scope (ACQ_REL, DEVICE), or the ones given
     ["atom.acq_rel.gpu.global.add.s32", "atom.acq_rel.gpu.global.cas.b32", "atom.acq_rel.gpu.global.max.s32",
      "atom.acq_rel.gpu.global.xor.b32", "atom.release.cta.global.exch.b32", "atom.relaxed.gpu.global.add.s32"]),
]

@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name,kernel,sig,constants,expect", CASES, ids=[c[0] for c in CASES])
def test_tile_kernel_compiles(name, kernel, sig, constants, expect, arch, tmp_path):
    ptx, _ = cudajit.compile_ptx(kernel, sig, constants=constants, arch=arch)
    # wgmma exists on sm_90a only: such kernels are built for the arch-specific target.
    target = arch + "a" if "wgmma" in ptx else arch
    assert f".target {target}\n" in ptx and ".reqntid" in ptx
    for text in (expect[arch] if isinstance(expect, dict) else expect):
        assert text in ptx, f"{name}: no {text} in the PTX"
    assemble(ptx, tmp_path, arch=target, what=name)


def test_too_much_shared_memory_is_a_compile_error():
    # Beyond 48 KB a tile kernel takes dynamic shared memory, up to the GPU
    # generation's limit (sm_80: 163 KB, sm_90: 227 KB); beyond that, an error.
    sig = ["float16[:, ::1]"] * 3 + ["int64"] * 3
    ptx, _ = cudajit.compile_ptx(k_matmul, sig, constants={"BM": 128, "BN": 256, "BK": 64}, arch="sm_90")
    assert "__cj_dynamic_shared" in ptx and "cp.async.cg.shared.global" in ptx
    with pytest.raises(cudajit.CompileError, match="KB of shared memory.*tile.dot.*sm_80 has 163 KB"):
        cudajit.compile_ptx(k_matmul, sig, constants={"BM": 256, "BN": 256, "BK": 256}, arch="sm_80")


def test_tiled_view_errors():
    @ct.kernel
    def steps(x, T: ct.Constant[int]):
        x.tiled_view((T, T), traversal_steps=(T // 2, T))
    @ct.kernel
    def wrong_tile(x, T: ct.Constant[int]):
        x.tiled_view((T, T)).store((0, 0), ct.zeros((T, 2 * T), dtype=ct.float32))
    @ct.kernel
    def not_a_view(x, T: ct.Constant[int]):
        (x, x).load(0)
    @ct.kernel
    def rank(x, T: ct.Constant[int]):
        x.tiled_view(T)
    sig = [F32_2D, "int64"]
    for kernel, message in [(steps, r"Array.tiled_view: traversal_steps other than the tile shape"),
                            (wrong_tile, r"TiledView.store: a tile of shape \(16, 32\) does not fit .*\(16, 16\)"),
                            (not_a_view, r"has no attribute 'load'"),
                            (rank, r"tile_shape \(16,\) must have one extent per dimension of the 2-d array")]:
        with pytest.raises(cudajit.CompileError, match=message) as info:
            cudajit.compile_ptx(kernel, sig, constants={"T": 16})
        assert "test_tile_compile.py" in str(info.value)


def test_array_slice_types_and_errors():
    import cudajit._core as _core
    @ct.kernel
    def rows(x, y):
        ct.store(y, index=(0, 0), tile=ct.load(x.slice(0, 2, 18), index=(0, 0), shape=(16, 16)))
    @ct.kernel
    def cols(x, y):
        ct.store(y, index=(0, 0), tile=ct.load(x.slice(1, 2, 18), index=(0, 0), shape=(16, 16)))
    ir_rows = _core.golden_ir(rows.py_func, [F32_2D, F32_2D])
    ir_cols = _core.golden_ir(cols.py_func, [F32_2D, F32_2D])
    # rows of a C array stay contiguous; a column range is not
    view = lambda ir: next(line for line in ir.splitlines() if "= array_view" in line)
    assert ":array(f32, 2d, C) = array_view" in view(ir_rows)
    assert ":array(f32, 2d, A) = array_view" in view(ir_cols)
    @ct.kernel
    def axis_var(x, a, T: ct.Constant[int]):
        x.slice(a, 0, T)
    @ct.kernel
    def float_start(x, a, T: ct.Constant[int]):
        x.slice(0, 0.5, T)
    @ct.kernel
    def bad_axis(x, a, T: ct.Constant[int]):
        x.slice(2, 0, T)
    for kernel, message in [(axis_var, r"Array.slice: axis must be a compile-time constant"), (float_start, r"start must be an integer, got f64"),
                            (bad_axis, r"axis 2 is out of range")]:
        with pytest.raises(cudajit.CompileError, match=message) as info:
            cudajit.compile_ptx(kernel, [F32_2D, "int64", "int64"], constants={"T": 16})
        assert "test_tile_compile.py" in str(info.value)


@ct.kernel
def k_fstring_print(x, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    print(f"tile={t}")                                        # the whole tile, %f per element
    ct.print(f"x={t:.5f} bid {ct.bid(0)!s} sum={ct.sum(t):>8.2e}", end="|\n")
    print(f"{t:+d}" if False else f"{t.astype(ct.int32):+d}")


@cudajit.jit
def simt_fstring_print(x):
    i = cudajit.grid(1)
    print(f"i={i:4d} x={x[i]:<9.3f}!")


def _printed_strings(ptx):
    return ["".join(chr(int(c)) for c in line.split("{")[1].split("}")[0].split(",")).rstrip("\0")
            for line in ptx.splitlines() if ".b8 __cj_str" in line]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_fstrings_in_print(arch, tmp_path):
    ptx, _ = cudajit.compile_ptx(k_fstring_print, [F32_1D, "int64"], constants={"T": 4}, arch=arch)
    printed = _printed_strings(ptx)
    assert "tile=[%f, %f, %f, %f]\n" in printed
    assert "x=[%.5f, %.5f, %.5f, %.5f] bid %lld sum=%8.2e|\n" in printed
    assert "[%+lld, %+lld, %+lld, %+lld]\n" in printed
    assemble(ptx, tmp_path, arch=arch, what="f-string print")
    ptx, _ = cudajit.compile_ptx(simt_fstring_print, "void(float32[::1])", arch=arch)
    assert "i=%4lld x=%-9.3f!\n" in _printed_strings(ptx)   # every thread prints (numba's print)


def test_fstring_errors():
    @ct.kernel
    def centred(x, T: ct.Constant[int]):
        print(f"{ct.load(x, index=(0,), shape=(T,)):^8}")
    @ct.kernel
    def computed_spec(x, T: ct.Constant[int]):
        print(f"{ct.load(x, index=(0,), shape=(T,)):{T}}")
    @ct.kernel
    def repr_conversion(x, T: ct.Constant[int]):
        print(f"{ct.load(x, index=(0,), shape=(T,))!r}")
    @ct.kernel
    def stored(x, T: ct.Constant[int]):
        ct.printf(f"{ct.bid(0)}")
    for kernel, message in [(centred, r"alignment '\^' is not supported"),
                            (computed_spec, r"the format spec must be a constant"),
                            (repr_conversion, r"the conversion !r is not supported"),
                            (stored, r"f-strings are supported as arguments of print\(\) and ct.print\(\) only")]:
        with pytest.raises(cudajit.CompileError, match=message) as info:
            cudajit.compile_ptx(kernel, [F32_1D, "int64"], constants={"T": 16})
        assert "test_tile_compile.py" in str(info.value)


def test_assert_message_and_errors():
    ptx, _ = cudajit.compile_ptx(k_assert, [F32_1D, "int64"], constants={"T": 256})
    text = "".join(chr(int(c)) for line in ptx.splitlines() if ".b8 __cj_str" in line
                   for c in line.split("{")[1].split("}")[0].split(","))
    assert "AssertionError: x must be positive in 'k_assert' at " in text and "test_tile_compile.py" in text
    @ct.kernel
    def not_bool(x, T: ct.Constant[int]):
        ct.assert_(ct.load(x, index=(0,), shape=(T,)))
    @ct.kernel
    def runtime_message(x, T: ct.Constant[int]):
        ct.assert_(ct.load(x, index=(0,), shape=(T,)) > 0, x)
    for kernel, message in [(not_bool, r"ct.assert_: cond must be a tile of bools or a bool, got tile\(f32, 16\)"),
                            (runtime_message, r"ct.assert_: message must be a constant string")]:
        with pytest.raises(cudajit.CompileError, match=message) as info:
            cudajit.compile_ptx(kernel, [F32_1D, "int64"], constants={"T": 16})
        assert "test_tile_compile.py" in str(info.value)


@ct.kernel
def k_static(x, y, T: ct.Constant[int]):
    ct.static_assert(T % 16 == 0, "T must be a multiple of 16")
    ct.static_assert(x.dtype == ct.float32)
    t = ct.load(x, index=(0,), shape=(T,))
    ct.static_assert(t.shape[0] == T)
    ct.static_assert(t.ndim == 1, "a 1-d tile")
    # cuTile's example: the branch folds at compile time, the other one is
    # never compiled (its static_assert does not fire).
    if ct.ensure_constant(T > 16):
        t = t + 1.0
    else:
        ct.static_assert(T == 16, "unreachable unless T is 16")
    ct.store(y, index=(0,), tile=t)


def test_static_assert_and_ensure_constant():
    for T in (16, 64):
        ptx, _ = cudajit.compile_ptx(k_static, [F32_1D, F32_1D, "int64"], constants={"T": T})
        assert "ld.global" in ptx
    with pytest.raises(cudajit.CompileError, match=r"Static assertion failed: T must be a multiple of 16") as info:
        cudajit.compile_ptx(k_static, [F32_1D, F32_1D, "int64"], constants={"T": 8})
    assert "test_tile_compile.py:" in str(info.value)
    with pytest.raises(cudajit.CompileError, match=r"Static assertion failed$|Static assertion failed \["):
        cudajit.compile_ptx(k_static, ["int32[::1]", F32_1D, "int64"], constants={"T": 16})
    @ct.kernel
    def runtime_condition(x):
        ct.static_assert(ct.bid(0) == 0)
    @ct.kernel
    def runtime_value(x):
        ct.ensure_constant(ct.bid(0))
    @ct.kernel
    def runtime_message(x):
        ct.static_assert(True, x)
    for kernel, message in [(runtime_condition, r"ct.static_assert: the condition is not a compile-time constant bool"),
                            (runtime_value, r"ct.ensure_constant: the argument is not a compile-time constant"),
                            (runtime_message, r"ct.static_assert: message must be a constant string")]:
        with pytest.raises(cudajit.CompileError, match=message) as info:
            cudajit.compile_ptx(kernel, [F32_1D])
        assert "test_tile_compile.py" in str(info.value)


def test_helpers_are_inlined_and_specialised_on_constants():
    sig = [F32_2D, F32_2D, "int64"]
    ptx, _ = cudajit.compile_ptx(k_helpers, sig, constants={"T": 16})
    assert ".func" not in ptx   # no device function is left: both helpers were inlined


def test_print_errors():
    @ct.kernel
    def count(x):
        ct.printf("%d %d", ct.arange(4, dtype=ct.int32))
    @ct.kernel
    def string_conversion(x):
        ct.printf("%s", ct.arange(4, dtype=ct.int32))
    @ct.kernel
    def runtime_format(x):
        ct.printf(x, ct.arange(4, dtype=ct.int32))
    @ct.kernel
    def too_many(x):
        ct.printf("%d", ct.load(x, index=(0, 0), shape=(128, 64)))
    @ct.kernel
    def bad_sep(x):
        ct.print(ct.arange(4, dtype=ct.int32), sep=ct.bid(0))
    for kernel, message in [(count, r"ct.printf: the format has 2 conversion\(s\) for 1 value\(s\)"),
                            (string_conversion, r"ct.printf: conversion %s is not supported"),
                            (runtime_format, r"ct.printf: the format must be a constant string"),
                            (too_many, r"ct.printf: prints at most 4096 elements a call, this call 8192"),
                            (bad_sep, r"ct.print: sep= must be a constant string")]:
        with pytest.raises(cudajit.CompileError, match=message) as info:
            cudajit.compile_ptx(kernel, [F32_2D])
        assert "test_tile_compile.py" in str(info.value)


def test_shape_mismatch_names_both_shapes():
    @ct.kernel
    def bad(x, out):
        a = ct.load(x, index=(0,), shape=(16,))
        b = ct.load(x, index=(0,), shape=(32,))
        ct.store(out, index=(0,), tile=a + b)
    with pytest.raises(cudajit.CompileError, match=r"\+.*\(16,\).*\(32,\)|16.*32"):
        cudajit.compile_ptx(bad, [F32_1D, F32_1D])


def _block_of(bid, n):
    # A plain Python helper, as cuTile kernels call them: scalars in, scalars out.
    return (bid * 7) % n


@ct.kernel
def k_helper(x, out, T: ct.Constant[int]):
    b = _block_of(ct.bid(0), ct.num_blocks(0))
    ct.store(out, index=(b,), tile=ct.load(x, index=(b,), shape=(T,)) * 2)


def test_plain_python_helpers_are_device_functions():
    ptx, _ = cudajit.compile_ptx(k_helper, [F32_1D, F32_1D, "int64"], constants={"T": 64})
    assert ".reqntid" in ptx


def test_atomics_refuse_what_the_gpu_cannot_do():
    @ct.kernel
    def fmax(y, T: ct.Constant[int]):
        ct.atomic_max(y, ct.arange(T, dtype=ct.int32), 1.0)

    with pytest.raises(cudajit.CompileError, match="ct.atomic_max: not supported on float32 arrays"):
        cudajit.compile_ptx(fmax, [F32_1D, "int64"], constants={"T": 32})

    @ct.kernel
    def bad_mask(x, out, T: ct.Constant[int]):
        i = ct.arange(T, dtype=ct.int32)
        ct.store(out, index=(0,), tile=ct.gather(x, i, mask=ct.arange(2 * T, dtype=ct.int32) > 3))

    with pytest.raises(cudajit.CompileError, match="mask of shape \\(64,\\) does not broadcast to the indices' shape \\(32,\\)"):
        cudajit.compile_ptx(bad_mask, [F32_1D, F32_1D, "int64"], constants={"T": 32})


@ct.kernel
def k_bad_index(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(T,))
    ct.store(y, index=(0,), tile=t[1:] + 0)


@ct.kernel
def k_bad_cat(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(T,))
    u = ct.load(x, index=(0,), shape=(2 * T,))
    ct.store(y, index=(0,), tile=ct.cat((t, u), 0))


@ct.kernel
def k_bad_matmul_1d(a, b, c, T: ct.Constant[int]):
    ta = ct.load(a, index=(0, 0, 0), shape=(2, T, T))
    tb = ct.load(b, index=(0,), shape=(T,))
    ct.store(c, index=(0, 0), tile=ct.matmul(ta, tb))


@pytest.mark.parametrize("kernel,sig,match", [
    (k_bad_index, [F32_1D, F32_1D, "int64"], r"indexed with `:` and None only"),
    (k_bad_cat, [F32_1D, F32_1D, "int64"], r"ct.cat.*shapes differ"),
    (k_bad_matmul_1d, ["float16[:, :, ::1]", "float16[::1]", "float32[:, ::1]", "int64"],
     r"multiplies 2-d and 3-d \(batched\) tiles, not \(2, 16, 16\) @ \(16,\)"),
    (k_reduce_other_func, ["int32[:, ::1]", "int32[::1]", "int64", "int64"],
     r"combine function '_combine_other' is not supported"),
])
def test_tile_shape_refusals(kernel, sig, match):
    constants = {"TM": 8, "TN": 16} if kernel is k_reduce_other_func else {"T": 16}
    with pytest.raises(cudajit.CompileError, match=match) as info:
        cudajit.compile_ptx(kernel, sig, constants=constants)
    assert info.value.line > 0 and info.value.file.endswith("test_tile_compile.py")


@ct.kernel
def k_two_dots(a, b, c, d, T: ct.Constant[int]):
    ta = ct.load(a, index=(0, 0), shape=(T, T))
    tb = ct.load(b, index=(0, 0), shape=(T, T))
    ct.store(c, index=(0, 0), tile=ct.matmul(ta, tb))
    ct.store(d, index=(0, 0), tile=ta @ tb + 1.0)


def test_operations_share_their_scratch_buffers():
    """Two float32 64x64x64 products each stage 32 KB of operands in shared
    memory; one after the other they reuse the same buffers (each ends with
    a barrier), so the kernel stays within the 48 KB of static shared memory
    instead of taking 64 KB of dynamic shared memory."""
    ptx, _ = cudajit.compile_ptx(k_two_dots, [F32_2D] * 4 + ["int64"], constants={"T": 64}, arch="sm_80")
    assert "fma.rn.f32" in ptx and "__cj_dynamic_shared" not in ptx
    declared = sum(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \S+\[(\d+)\]", ptx))
    assert 32 * 1024 <= declared <= 48 * 1024, declared


@ct.kernel
def k_mma_and_int64_division(a, b, c, x, y, q, r, T: ct.Constant[int]):
    acc = ct.mma(ct.load(a, index=(0, 0), shape=(64, 16)), ct.load(b, index=(0, 0), shape=(16, 64)),
                 ct.zeros((64, 64), dtype=ct.float32))
    ct.store(c, index=(0, 0), tile=acc)
    tx = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ty = ct.load(y, index=(ct.bid(0),), shape=(T,))
    ct.store(q, index=(ct.bid(0),), tile=tx // ty)
    ct.store(r, index=(ct.bid(0),), tile=tx % ty)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_wgmma_kernels_divide_64_bit_integers_inline(dtype, tmp_path):
    """ptxas implements 64-bit division as a subroutine, which nvJitLink's
    and the driver's relocatable compilation leave as an extern call; an
    extern call serializes every wgmma of the function (ptxas advisory
    C7509). A kernel with wgmma divides 64-bit integers in its own code."""
    i64 = f"{dtype}[::1]"
    sig = ["float16[:, ::1]"] * 2 + ["float32[:, ::1]"] + [i64] * 4 + ["int64"]
    ptx, _ = cudajit.compile_ptx(k_mma_and_int64_division, sig, constants={"T": 128}, arch="sm_90")
    assert "wgmma.mma_async" in ptx
    assert not re.search(r"\b(div|rem)\.[su]64\b", ptx)
    assert re.search(r"\bdiv\.u32\b", ptx)          # the fast path: both operands fit 32 bits
    # -c: relocatable, as nvJitLink and the driver's linker assemble it
    _, messages = assemble_with_messages(ptx, tmp_path, arch="sm_90a", options=("-c", "-v"))
    assert "serialized" not in messages, messages


@ct.kernel
def k_matmul_store_transposed(a, b, c, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(BM, BK))):
        acc = ct.mma(ct.load(a, index=(bm, k), shape=(BM, BK)), ct.load(b, index=(k, bn), shape=(BK, BN)), acc)
    ct.store(c, index=(bn, bm), tile=ct.transpose(acc.astype(c.dtype)))


def test_pipeline_depth_leaves_room_for_the_kernels_other_buffers():
    """sm_90 kernels of 8 warps get a fourth operand stage (48 KB for
    128x256x64 fp16) where the rest of the kernel leaves room: a plain
    product has four mbarriers; one whose result goes out transposed through
    a 64 KB shared buffer keeps three stages and still fits in 227 KB."""
    sig = ["float16[:, ::1]"] * 3 + ["int64"] * 3
    consts = {"BM": 128, "BN": 256, "BK": 64}
    plain, _ = cudajit.compile_ptx(k_matmul, sig, constants=consts, arch="sm_90")
    assert plain.count("mbarrier.init.shared::cta.b64") == 4
    transposed, _ = cudajit.compile_ptx(k_matmul_store_transposed, sig, constants=consts, arch="sm_90")
    assert transposed.count("mbarrier.init.shared::cta.b64") == 3
    assert "wgmma.mma_async.sync.aligned.m64n256k16" in transposed


@ct.kernel
def k_row_norm(x, y, TN: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, TN))
    ct.store(y, index=(ct.bid(0), 0), tile=t / ct.sum(t * t, axis=1, keepdims=True))


def test_occupancy_hint_and_default():
    """cuTile's occupancy=N becomes .minnctapersm N (ptxas fits the registers
    to N blocks per SM); without it, a kernel with no dot asks for 2048
    threads per SM with at most 8 elements a thread, 1024 with at most 16
    (a 4096-element row: 8 warps by default, four blocks)."""
    sig = [F32_2D, F32_2D, "int64"]
    ptx, _ = cudajit.compile_ptx(k_row_norm, sig, constants={"TN": 4096})
    assert ".reqntid 256" in ptx and ".minnctapersm 4" in ptx        # 16 elements a thread: 1024 threads
    ptx, _ = cudajit.compile_ptx(k_row_norm.replace_hints(num_warps=16), sig, constants={"TN": 4096})
    assert ".reqntid 512" in ptx and ".minnctapersm 4" in ptx        # 8 elements a thread: 2048 threads
    ptx, _ = cudajit.compile_ptx(k_row_norm.replace_hints(num_warps=4), sig, constants={"TN": 1024})
    assert ".reqntid 128" in ptx and ".minnctapersm 16" in ptx       # 8 elements a thread: 2048 threads
    ptx, _ = cudajit.compile_ptx(k_row_norm.replace_hints(occupancy=2), sig, constants={"TN": 4096})
    assert ".minnctapersm 2" in ptx
    ptx, _ = cudajit.compile_ptx(k_matmul, ["float16[:, ::1]"] * 3 + ["int64"] * 3,
                                 constants={"BM": 128, "BN": 256, "BK": 64}, arch="sm_90")
    assert ".minnctapersm" not in ptx                       # a dot: ptxas's choice


def test_occupancy_in_the_ir_text():
    text = ("func k(v0:array(f32, 1d, C) x) -> none kernel num_warps=8 occupancy=3 sm=90  @k.py:1\n"
            "bb0:\n  ret  @2\n")
    assert "num_warps=8 occupancy=3 sm=90" in cudajit._core.parse_print_ir(text)
    with pytest.raises(cudajit.CompileError, match="blocks per SM from 1 to 32"):
        cudajit._core.parse_print_ir(text.replace("occupancy=3", "occupancy=40"))


def expect_compile_errors(prelude, cases, sig):
    """Each (expression, message): a tile kernel whose body is `prelude` then
    `r = expression` fails to compile with the message, at its line here."""
    for expr, message in cases:
        g = {"ct": ct}
        exec(f"def kb(x):\n{prelude}    r = {expr}\n", g)
        with pytest.raises(cudajit.CompileError, match=message):
            cudajit.compile_ptx(ct.kernel(g["kb"]), sig)


@ct.kernel
def k_insert_compile(x, v, y, T: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(4 * T, 2 * T))
    ct.store(y, index=(0, 0), tile=ct.insert(t, (3, 1), ct.load(v, index=(0, 0), shape=(T, T))))


def test_insert_compiles_and_checks():
    # Values: tests/gpu/test_tiles_gpu.py::test_insert.
    for arch in ("sm_80", "sm_90"):
        ptx, _ = cudajit.compile_ptx(k_insert_compile, [F32_2D] * 3 + ["int64"], constants={"T": 16}, arch=arch)
        assert "ld.global" in ptx and "st.global" in ptx
    cases = [("ct.insert(t, (2,), sub)", r"index \(2,\) is outside the \(8,\) tile's grid of \(4,\) sub-tiles"),
             ("ct.insert(t, (0,), sub.astype(ct.float32))", r"value's dtype float32 is not x's int32"),
             ("ct.insert(t, (ct.bid(0),), sub)", r"index must be compile-time constant integers"),
             ("ct.insert(t, (0, 0), sub)", r"index and value need one entry")]
    expect_compile_errors("    t = ct.arange(8, dtype=ct.int32)\n    sub = ct.full((4,), 99, dtype=ct.int32)\n",
                          cases, ["int32[::1]"])


@ct.kernel
def k_bytes_compile(x, y, z):
    b = ct.pack_to_bytes(ct.load(x, index=(0,), shape=(64,)))
    ct.store(y, index=(0,), tile=b)
    ct.store(z, index=(0,), tile=ct.unpack_from_bytes(b, ct.int16))


def test_pack_and_unpack_bytes_compile_and_check():
    # Values: tests/gpu/test_tiles_gpu.py::test_pack_and_unpack_bytes.
    for arch in ("sm_80", "sm_90"):
        ptx, _ = cudajit.compile_ptx(k_bytes_compile, ["float32[::1]", "uint8[::1]", "int16[::1]"], arch=arch)
        assert "shr.u32" in ptx or "shr.b32" in ptx or "prmt" in ptx or "bfe" in ptx
    cases = [("ct.pack_to_bytes(t > 0)", r"x must be a tile of integers or floats of 8 to 64 bits, got tile\(b1, 8\)"),
             ("ct.unpack_from_bytes(t, ct.int32)", r"x must be a 1-d tile of uint8, got tile\(f32, 8\)"),
             ("ct.unpack_from_bytes(ct.arange(4, dtype=ct.uint8), ct.int64)",
              r"4 bytes are not a whole number of int64 values")]
    expect_compile_errors("    t = ct.load(x, index=(0,), shape=(8,))\n", cases, ["float32[::1]"])


@ct.kernel
def k_advanced_compile(x, y, start):
    rows = ct.arange(4, dtype=ct.int32) * 2 + 1
    t = ct.load_advanced_indexing(x, (rows, ct.Slice(start, 8)), padding_mode=ct.PaddingMode.ZERO)
    ct.store_advanced_indexing(y, (rows, ct.Slice(0, 8)), t * 2.0)


def test_advanced_indexing_compiles_and_checks():
    # Values: tests/gpu/test_tiles_gpu.py::test_advanced_indexing.
    for arch in ("sm_80", "sm_90"):
        ptx, _ = cudajit.compile_ptx(k_advanced_compile, [F32_2D, F32_2D, "int64"], arch=arch)
        assert "ld.global" in ptx and "st.global" in ptx
    assert repr(ct.Slice(3, 8)) == "Slice(3, 8)"
    cases = [("ct.load_advanced_indexing(x, (ct.Slice(0, 4), ct.Slice(0, 8)))",
              r"exactly one index must be a 1-d integer tile \(the sparse dimension\), got 0"),
             ("ct.load_advanced_indexing(x, (rows, rows))", r"exactly one index .* got 2"),
             ("ct.load_advanced_indexing(x, (rows,))", r"indices need one entry per dimension of the 2-d array"),
             ("ct.load_advanced_indexing(x, (rows, ct.Slice(0, 6)))", r"length must be a power of two"),
             ("ct.store_advanced_indexing(x, (rows, ct.Slice(0, 8)), ct.full((4, 4), 1.0, dtype=ct.float32))",
              r"the tile's shape \(4, 4\) is not the indices' \(4, 8\)")]
    expect_compile_errors("    rows = ct.arange(4, dtype=ct.int32)\n", cases, [F32_2D])


@ct.kernel
def k_grid_dependency(x, y):
    ct.grid_dependency_control_wait()
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(128,)) + 1.0)
    ct.grid_dependency_control_launch_dependents()


def test_grid_dependency_control(tmp_path):
    # griddepcontrol on sm_90 (ptxas assembles it); nothing before sm_90,
    # which has no programmatic dependent launches.
    ptx, _ = cudajit.compile_ptx(k_grid_dependency, [F32_1D, F32_1D], arch="sm_90")
    assert "griddepcontrol.wait" in ptx and "griddepcontrol.launch_dependents" in ptx
    assemble(ptx, tmp_path, "sm_90")
    ptx, _ = cudajit.compile_ptx(k_grid_dependency, [F32_1D, F32_1D], arch="sm_80")
    assert "griddepcontrol" not in ptx
