"""Tile kernels (issue 11) on the GPU: every tile operation against numpy, on
fresh random data, written purely against cuTile Python's public API.

The module under test is imported as ``ct`` from ``CUDAJIT_TILE_IMPL``
(default ``cudajit.tile``), so the very same tests run against NVIDIA's cuTile
to show that the tests themselves are right::

    CUDAJIT_TILE_IMPL=cuda.tile python -m pytest -m gpu tests/gpu/test_tiles_gpu.py

Conventions:
- arrays are CuPy arrays (bfloat16 through PyTorch); every test compares the
  whole output with a numpy reference (float64 where precision matters);
- outputs are poisoned first (NaN for floats, a sentinel for integers) and most
  of them have a guard region past the array's end (or around a strided view)
  that must stay poisoned: an element not written, or one written outside the
  array, fails the test;
- array sizes are mostly *not* multiples of the tile (ragged edges: loads padded
  with ``padding_mode``, stores masked);
- a seeded ``np.random.default_rng``; the seed is in every failure message and
  ``CUDAJIT_TEST_SEED=<seed>`` replays it;
- kernels are launched with ``ct.launch(stream, grid, kernel, args)`` and, with
  cudajit only, also as ``kernel[grid](*args)`` (the ``how`` parameter);
- cudajit only: bad kernels raise ``cudajit.CompileError`` naming the operation.

Every test here passed under cuda.tile 1.7.0 on an H100 (the spec the cudajit
compiler must meet); the cudajit-only ones are the ``index`` launches and the
CompileError checks.
"""
import importlib
import os
import zlib

import numpy as np
import pytest

IMPL = os.environ.get("CUDAJIT_TILE_IMPL", "cudajit.tile")
try:
    ct = importlib.import_module(IMPL)
except ImportError as _e:  # e.g. cudajit not built, or cuda.tile not installed
    pytest.skip(f"{IMPL} cannot be imported ({_e})", allow_module_level=True)
cp = pytest.importorskip("cupy")

IS_CUDAJIT = IMPL.split(".")[0] == "cudajit"
pytestmark = pytest.mark.gpu

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO

_ENV_SEED = os.environ.get("CUDAJIT_TEST_SEED")
BASE_SEED = int(_ENV_SEED) if _ENV_SEED else int(np.random.SeedSequence().entropy % (2**31))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


class SeededRng:
    """np.random.default_rng([BASE_SEED, test id]) with ``seed_text`` for failure messages."""

    def __init__(self, request):
        sub = zlib.crc32(request.node.nodeid.encode())
        self.gen = np.random.default_rng([BASE_SEED, sub])
        self.seed_text = f"[{IMPL}, CUDAJIT_TEST_SEED={BASE_SEED}, test {request.node.name}]"

    def __getattr__(self, name):
        return getattr(self.gen, name)


@pytest.fixture
def rng(request):
    return SeededRng(request)


HOWS = ["launch", "index"]


@pytest.fixture(params=HOWS)
def how(request):
    if request.param == "index" and not IS_CUDAJIT:
        pytest.skip("kernel[grid](*args) is cudajit's spelling; cuTile has only ct.launch")
    return request.param


def run(kernel, grid, args, how="launch"):
    """Launches and waits. ``grid`` is an int or a tuple of 1 to 3 ints."""
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (int(grid),)
    grid = tuple(int(g) for g in grid)
    if how == "launch":
        ct.launch(cp.cuda.get_current_stream(), grid, kernel, tuple(args))
    elif len(grid) == 1:
        kernel[grid[0]](*args)
    else:
        kernel[grid, ](*args)
    cp.cuda.get_current_stream().synchronize()
    cp.cuda.Device().synchronize()


def cdiv(a, b):
    return -(-a // b)


def sentinel(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return True
    info = np.iinfo(dtype)
    return info.min + 3 if info.min < 0 else info.max - 3


def poisoned(shape, dtype):
    return cp.full(shape, sentinel(dtype), dtype=dtype)


def is_poison(a, dtype):
    a = np.asarray(a)
    if np.dtype(dtype).kind == "f":
        return np.isnan(a)
    return a == sentinel(dtype)


class Guarded:
    """An output array inside a larger poisoned buffer.

    kind "tail": a contiguous array, the buffer goes on past its end;
    kind "view": a strided view ``big[1:1+m, 2:2+n]`` (2-d) / ``big[3:3+n]`` (1-d)
    with poison all around it."""

    def __init__(self, shape, dtype, kind="tail"):
        self.shape, self.dtype, self.kind = tuple(shape), np.dtype(dtype), kind
        size = int(np.prod(shape))
        if kind == "tail":
            self.big = poisoned(size + 67, dtype)
            self.array = self.big[:size].reshape(shape)
            self.mask = np.zeros(size + 67, dtype=bool)
            self.mask[:size] = True
        else:
            if len(shape) == 1:
                self.big = poisoned(shape[0] + 7, dtype)
                self.array = self.big[3:3 + shape[0]]
                self.mask = np.zeros(shape[0] + 7, dtype=bool)
                self.mask[3:3 + shape[0]] = True
            else:
                m, n = shape
                self.big = poisoned((m + 3, n + 5), dtype)
                self.array = self.big[1:1 + m, 2:2 + n]
                self.mask = np.zeros((m + 3, n + 5), dtype=bool)
                self.mask[1:1 + m, 2:2 + n] = True

    def get(self, rng=None):
        big = cp.asnumpy(self.big)
        outside = big[~self.mask]
        bad = ~is_poison(outside, self.dtype)
        if bad.any():
            where = "" if rng is None else " " + rng.seed_text
            raise AssertionError(f"{int(bad.sum())} element(s) written outside the array "
                                 f"(shape {self.shape}, {self.kind}){where}: {outside[bad][:8]}")
        return cp.asnumpy(self.array)


def check(got, want, rng, what="", rtol=0.0, atol=0.0):
    """Every element of ``got`` equals ``want`` within tolerance (exactly by default);
    NaN where the reference is not NaN (an unwritten element) always fails."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape} {rng.seed_text}"
    if got.dtype.kind in "fc" or want.dtype.kind in "fc":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        ok = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        ok &= np.isnan(g) == np.isnan(w)
        ok |= (g == w)   # equal infinities
    else:
        ok = got == want
    if not ok.all():
        idx = np.argwhere(~ok)
        first = [tuple(int(v) for v in i) for i in idx[:6]]
        samples = ", ".join(f"{i}: got {got[i]!r} want {want[i]!r}" for i in first)
        raise AssertionError(f"{what}: {len(idx)} of {got.size} elements wrong "
                             f"(rtol={rtol}, atol={atol}) {rng.seed_text}; {samples}")


def rand(rng, shape, dtype, low=-4.0, high=4.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = rng.uniform(low, high, size=shape).astype(dtype)
        return v
    if dtype.kind == "u":
        return rng.integers(0, min(int(high) if high > 0 else 100, np.iinfo(dtype).max) + 1,
                            size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)


def randn(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# ===========================================================================
# bid / num_blocks / cdiv / num_tiles
# ===========================================================================


@ct.kernel
def k_block_ids(out):
    b0 = ct.bid(0)
    b1 = ct.bid(1)
    b2 = ct.bid(2)
    n0 = ct.num_blocks(0)
    n1 = ct.num_blocks(1)
    n2 = ct.num_blocks(2)
    lin = (b2 * n1 + b1) * n0 + b0
    i = ct.arange(8, dtype=ct.int32)
    v = ct.where(i == 0, b0, ct.where(i == 1, b1, ct.where(i == 2, b2, ct.where(
        i == 3, n0, ct.where(i == 4, n1, ct.where(i == 5, n2, ct.where(i == 6, lin, 12345)))))))
    ct.store(out, index=(lin,), tile=v)


@pytest.mark.parametrize("grid", [(7,), (300,), (3, 5), (2, 3, 4), (1, 1, 6)],
                         ids=lambda g: "x".join(map(str, g)))
def test_bid_num_blocks(grid, how, rng):
    g = tuple(grid) + (1,) * (3 - len(grid))
    total = g[0] * g[1] * g[2]
    out = Guarded((total * 8,), np.int32)
    run(k_block_ids, grid, (out.array,), how)
    got = out.get(rng).reshape(total, 8)
    want = np.zeros((total, 8), np.int32)
    for b2 in range(g[2]):
        for b1 in range(g[1]):
            for b0 in range(g[0]):
                lin = (b2 * g[1] + b1) * g[0] + b0
                want[lin] = (b0, b1, b2, g[0], g[1], g[2], lin, 12345)
    check(got, want, rng, f"bid/num_blocks over grid {grid}")


@ct.kernel
def k_cdiv(x, y, out, nt, n, d, T: ConstInt):
    i = ct.bid(0)
    tx = ct.load(x, index=(i,), shape=(T,), padding_mode=ZERO)
    ty = ct.load(y, index=(i,), shape=(T,), padding_mode=ZERO)
    ct.store(out, index=(i,), tile=ct.cdiv(tx, ty + (ty == 0)))     # tile / tile, y > 0
    # scalars: a runtime cdiv and the tile count, one element per block
    ct.store(nt, index=(i,), tile=ct.cdiv(n, d) * 1000 + ct.num_tiles(x, axis=0, shape=(T,)))


@pytest.mark.parametrize("n,T", [(1000, 128), (64, 64), (5, 32)])
def test_cdiv_num_tiles(n, T, how, rng):
    assert ct.cdiv(1000, 128) == 8 and ct.cdiv(1024, 128) == 8 and ct.cdiv(1, 7) == 1
    xh = rng.integers(-50, 50, size=n).astype(np.int32)
    yh = rng.integers(1, 9, size=n).astype(np.int32)
    grid = cdiv(n, T)
    out = Guarded((n,), np.int32)
    nt = Guarded((grid,), np.int32)
    d = int(rng.integers(1, 40))
    run(k_cdiv, grid, (cp.asarray(xh), cp.asarray(yh), out.array, nt.array, n, d, T), how)
    check(out.get(rng), -(-xh // yh), rng, "ct.cdiv(tile, tile)")
    check(nt.get(rng), np.full(grid, cdiv(n, d) * 1000 + cdiv(n, T), np.int32), rng,
          "ct.cdiv(scalar, scalar) and ct.num_tiles")


# ===========================================================================
# load / store
# ===========================================================================


@ct.kernel
def k_copy1d(x, y, T: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,))
    ct.store(y, index=(i,), tile=t)


LOAD1D_CASES = [  # dtype, T, n
    (np.float32, 1024, 5000), (np.float32, 128, 128 * 7), (np.float32, 32, 5),
    (np.float16, 256, 1000), (np.float64, 64, 333), (np.int32, 512, 4097),
    (np.int64, 16, 100), (np.uint8, 128, 300), (np.int8, 1024, 1025), (np.float32, 1, 9),
]


@pytest.mark.parametrize("dtype,T,n", LOAD1D_CASES,
                         ids=[f"{np.dtype(d).name}-T{t}-n{n}" for d, t, n in LOAD1D_CASES])
def test_load_store_1d(dtype, T, n, how, rng):
    xh = rand(rng, n, dtype, -100, 100)
    out = Guarded((n,), dtype)
    run(k_copy1d, cdiv(n, T), (cp.asarray(xh), out.array, T), how)
    check(out.get(rng), xh, rng, f"load/store 1-d {np.dtype(dtype).name} tile {T} n={n}")


@ct.kernel
def k_copy2d(x, y, TM: ConstInt, TN: ConstInt):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(TM, TN))
    ct.store(y, index=(ct.bid(0), ct.bid(1)), tile=t)


LOAD2D_CASES = [  # dtype, (TM, TN), (M, N), kind of output
    (np.float32, (16, 32), (50, 70), "tail"),
    (np.float32, (32, 64), (64, 128), "tail"),
    (np.float32, (64, 16), (100, 40), "view"),
    (np.float32, (1, 128), (7, 300), "tail"),
    (np.float16, (8, 256), (33, 257), "tail"),
    (np.float64, (4, 8), (9, 17), "view"),
    (np.int32, (128, 8), (200, 3), "tail"),
    (np.uint8, (16, 64), (40, 100), "tail"),
]


@pytest.mark.parametrize("dtype,tile,shape,kind", LOAD2D_CASES,
                         ids=[f"{np.dtype(d).name}-{t[0]}x{t[1]}-{s[0]}x{s[1]}-{k}"
                              for d, t, s, k in LOAD2D_CASES])
def test_load_store_2d(dtype, tile, shape, kind, how, rng):
    xh = rand(rng, shape, dtype, -100, 100)
    out = Guarded(shape, dtype, kind)
    grid = (cdiv(shape[0], tile[0]), cdiv(shape[1], tile[1]))
    run(k_copy2d, grid, (cp.asarray(xh), out.array, *tile), how)
    check(out.get(rng), xh, rng, f"load/store 2-d {np.dtype(dtype).name} tile {tile} {shape} {kind}")


def test_load_strided_input_2d(how, rng):
    """A non-contiguous input: every other row, columns from 3 on, of a larger array."""
    big = rand(rng, (90, 77), np.float32)
    xh = big[::2, 3:]                                   # (45, 74), row stride 154
    out = Guarded(xh.shape, np.float32)
    run(k_copy2d, (cdiv(45, 16), cdiv(74, 32)), (cp.asarray(big)[::2, 3:], out.array, 16, 32), how)
    check(out.get(rng), xh, rng, "load from a strided view")


@ct.kernel
def k_load_transposed(x, y, TM: ConstInt, TN: ConstInt):
    # y (N, M) = x (M, N).T through load's order: tile (TN, TM) of the axis-swapped x
    t = ct.load(x, index=(ct.bid(1), ct.bid(0)), shape=(TN, TM), order=(1, 0), padding_mode=ZERO)
    ct.store(y, index=(ct.bid(1), ct.bid(0)), tile=t)


def test_load_order(rng):
    M, N, TM, TN = 50, 70, 16, 32
    xh = rand(rng, (M, N), np.float32)
    out = Guarded((N, M), np.float32)
    run(k_load_transposed, (cdiv(M, TM), cdiv(N, TN)), (cp.asarray(xh), out.array, TM, TN))
    check(out.get(rng), xh.T, rng, "load(order=(1, 0))")


# Padding: the whole padded tile is stored into an output that is a multiple of the tile.
@ct.kernel
def k_pad_zero(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,),
                                                padding_mode=ct.PaddingMode.ZERO))


@ct.kernel
def k_pad_neg_inf(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,),
                                                padding_mode=ct.PaddingMode.NEG_INF))


@ct.kernel
def k_pad_pos_inf(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,),
                                                padding_mode=ct.PaddingMode.POS_INF))


@ct.kernel
def k_pad_nan(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,),
                                                padding_mode=ct.PaddingMode.NAN))


@ct.kernel
def k_pad_neg_zero(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,),
                                                padding_mode=ct.PaddingMode.NEG_ZERO))


@ct.kernel
def k_pad2d_neg_inf(x, y, TM: ConstInt, TN: ConstInt):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(TM, TN), padding_mode=ct.PaddingMode.NEG_INF)
    ct.store(y, index=(ct.bid(0), ct.bid(1)), tile=t)


@ct.kernel
def k_pad2d_zero(x, y, TM: ConstInt, TN: ConstInt):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(TM, TN), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(ct.bid(0), ct.bid(1)), tile=t)


PAD_KERNELS = {"ZERO": (k_pad_zero, 0.0), "NEG_INF": (k_pad_neg_inf, -np.inf),
               "POS_INF": (k_pad_pos_inf, np.inf), "NAN": (k_pad_nan, np.nan),
               "NEG_ZERO": (k_pad_neg_zero, -0.0)}


@pytest.mark.parametrize("mode", list(PAD_KERNELS))
@pytest.mark.parametrize("dtype,T,n", [(np.float32, 256, 1000), (np.float16, 64, 65),
                                       (np.float64, 32, 31)])
def test_padding_mode_1d(mode, dtype, T, n, rng):
    kernel, value = PAD_KERNELS[mode]
    xh = rand(rng, n, dtype, 1.0, 5.0)                 # positive, so -0.0 shows in the sign bit
    padded = cdiv(n, T) * T
    y = poisoned(padded, dtype)
    if mode == "NAN":
        y.fill(7)                                      # the NaN must come from the padding
    run(kernel, cdiv(n, T), (cp.asarray(xh), y, T))
    got = cp.asnumpy(y)
    want = np.concatenate([xh, np.full(padded - n, value, dtype)])
    check(got, want, rng, f"padding_mode={mode}")
    if mode in ("ZERO", "NEG_ZERO") and padded > n:
        assert (np.signbit(got[n:]) == (mode == "NEG_ZERO")).all(), f"sign of {mode} padding {rng.seed_text}"


def test_padding_mode_int_zero(rng):
    n, T = 77, 32
    xh = rand(rng, n, np.int32, 1, 100)
    y = poisoned(cdiv(n, T) * T, np.int32)
    run(k_pad_zero, cdiv(n, T), (cp.asarray(xh), y, T))
    check(cp.asnumpy(y), np.concatenate([xh, np.zeros(cdiv(n, T) * T - n, np.int32)]), rng,
          "int32 ZERO padding")


@pytest.mark.parametrize("mode", ["NEG_INF", "ZERO"])
def test_padding_mode_2d(mode, rng):
    M, N, TM, TN = 37, 45, 16, 32
    kernel, value = (k_pad2d_neg_inf, -np.inf) if mode == "NEG_INF" else (k_pad2d_zero, 0.0)
    xh = rand(rng, (M, N), np.float32)
    PM, PN = cdiv(M, TM) * TM, cdiv(N, TN) * TN
    y = poisoned((PM, PN), np.float32)
    run(kernel, (PM // TM, PN // TN), (cp.asarray(xh), y, TM, TN))
    want = np.full((PM, PN), value, np.float32)
    want[:M, :N] = xh
    check(cp.asnumpy(y), want, rng, f"2-d padding_mode={mode}")


# ===========================================================================
# Tiled views: Array.tiled_view(tile_shape, padding_mode), TiledView.load /
# store / num_tiles / tile_shape / dtype
# ===========================================================================


@ct.kernel
def k_tiled_view(x, y, rowsum, TM: ConstInt, TN: ConstInt):
    xv = x.tiled_view((TM, TN), padding_mode=ZERO)
    yv = y.tiled_view((TM, TN))
    sv = rowsum.tiled_view(TM)
    i = ct.bid(0)
    acc = ct.zeros((TM,), dtype=ct.float32)
    for j in range(xv.num_tiles(1)):
        t = xv.load((i, j))
        yv.store((i, j), t * 2.0 + xv.tile_shape[1])
        acc = acc + ct.sum(t, axis=1)   # the padded zeros add nothing
    sv.store(i, acc)


@ct.kernel
def k_tiled_view_1d(x, y, T: ConstInt):
    tv = x.tiled_view(T)
    ov = y.tiled_view(T)
    ov.store(ct.bid(0), tv.load(ct.bid(0)) + 1)


@pytest.mark.parametrize("shape,tiles", [((100, 70), (16, 32)), ((64, 128), (16, 64))])
def test_tiled_view(shape, tiles, how, rng):
    M, N = shape
    TM, TN = tiles
    xh = rand(rng, (M, N), np.float32)
    y = Guarded((M, N), np.float32, kind="view")
    s = Guarded((M,), np.float32)
    run(k_tiled_view, cdiv(M, TM), (cp.asarray(xh), y.array, s.array, TM, TN), how)
    check(y.get(rng), xh * 2.0 + TN, rng, f"TiledView load/store {shape} tiles {tiles}")
    check(s.get(rng), xh.astype(np.float64).sum(axis=1), rng, "TiledView num_tiles + zero padding", 1e-5, 1e-4)


def test_tiled_view_1d(rng):
    n = 1000
    xh = rand(rng, n, np.int32, -1000, 1000)
    y = Guarded((n,), np.int32)
    run(k_tiled_view_1d, cdiv(n, 128), (cp.asarray(xh), y.array, 128))
    check(y.get(rng), xh + 1, rng, "1-d TiledView")


# ===========================================================================
# Array.slice(axis, start, stop): a view with run-time bounds
# ===========================================================================


@ct.kernel
def k_segment_col_sums(x, offsets, out, TR: ConstInt, TC: ConstInt):
    # segment b: rows offsets[b] .. offsets[b + 1] - 1, summed per column
    b = ct.bid(0)
    seg = x.slice(0, ct.load(offsets, index=(b,), shape=()), ct.load(offsets, index=(b + 1,), shape=()))
    acc = ct.zeros((1, TC), dtype=ct.float32)
    for j in range(ct.cdiv(seg.shape[0], TR)):
        acc = acc + ct.sum(ct.load(seg, index=(j, 0), shape=(TR, TC), padding_mode=ZERO), axis=0, keepdims=True)
    ct.store(out, index=(b, 0), tile=acc)


@ct.kernel
def k_column_window(x, y, start, T: ConstInt):
    # columns start .. start + T - 1 of every row (an A-layout view), doubled in place
    w = x.slice(axis=-1, start=start, stop=start + T)
    t = ct.load(w, index=(ct.bid(0), 0), shape=(T, T), padding_mode=ZERO)
    ct.store(y, index=(ct.bid(0), 0), tile=t * 2)


def test_array_slice_segments(rng):
    lengths = np.array([0, 1, 37, 64, 100, 5, 0, 250], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    xh = rand(rng, (int(offsets[-1]), 32), np.float32)
    out = Guarded((len(lengths), 32), np.float32)
    run(k_segment_col_sums, len(lengths), (cp.asarray(xh), cp.asarray(offsets), out.array, 16, 32))
    want = np.stack([xh[offsets[i]:offsets[i + 1]].astype(np.float64).sum(axis=0) for i in range(len(lengths))])
    check(out.get(rng), want, rng, "Array.slice along axis 0 with run-time bounds", 1e-5, 1e-4)


def test_array_slice_columns(rng):
    xh = rand(rng, (70, 100), np.float32)
    y = Guarded((70, 16), np.float32)
    run(k_column_window, cdiv(70, 16), (cp.asarray(xh), y.array, 37, 16))
    check(y.get(rng), xh[:, 37:53] * 2, rng, "Array.slice along the last axis")


# ===========================================================================
# Helper functions: plain Python functions with tiles, called from kernels
# with Constant values as arguments (inlined; specialised on the constants)
# ===========================================================================


def _masked_row_tile(X, bid, j, TILE_N, N):
    tx = ct.load(X, index=(bid, j), shape=(1, TILE_N), padding_mode=ZERO)
    mask = j * TILE_N + ct.arange(TILE_N, dtype=ct.int32) < N
    if j % 2 == 1:
        return ct.where(mask, tx * 2.0, 0.0)
    return ct.where(mask, tx, 0.0)


def _row_sum(t):
    return ct.sum(t, axis=1), ct.max(t, axis=1)   # a tuple of tiles


@ct.kernel
def k_helpers(X, Y, TILE_N: ConstInt):
    bid = ct.bid(0)
    N = X.shape[1]
    acc = ct.zeros((1, TILE_N), dtype=ct.float32)
    for j in range(ct.num_tiles(X, axis=1, shape=(1, TILE_N))):
        acc = acc + _masked_row_tile(X, bid, j, TILE_N, N)
    total, _ = _row_sum(acc)
    ct.store(Y, index=(bid,), tile=total)


def test_helper_functions(how, rng):
    M, N = 37, 300
    xh = rand(rng, (M, N), np.float32)
    for TILE_N in (64, 128):
        y = Guarded((M,), np.float32)
        run(k_helpers, M, (cp.asarray(xh), y.array, TILE_N), how)
        odd = (np.arange(N) // TILE_N) % 2 == 1
        want = np.where(odd, 2.0 * xh, xh).astype(np.float64).sum(axis=1)
        check(y.get(rng), want, rng, f"helpers TILE_N={TILE_N}", 1e-5, 1e-4)


# ===========================================================================
# extract, and matmul of a batch of y tiles (cuTile's FFT sample does both)
# ===========================================================================


@ct.kernel
def k_extract_parts(x, re, im, T: ConstInt):
    t = ct.load(x, index=(ct.bid(0), 0, 0), shape=(T, T, 2))
    ct.store(re, index=(ct.bid(0), 0), tile=ct.reshape(ct.extract(t, index=(0, 0, 0), shape=(T, T, 1)), (T, T)))
    ct.store(im, index=(ct.bid(0), 0), tile=ct.reshape(t.extract((0, 0, 1), (T, T, 1)), (T, T)))


@ct.kernel
def k_extract_block(x, y, T: ConstInt):
    t = ct.load(x, index=(0, 0), shape=(4 * T, 2 * T))
    ct.store(y, index=(0, 0), tile=ct.extract(t, index=(3, 1), shape=(T, T)))


def test_extract(rng):
    T = 16
    xh = rand(rng, (3 * T, T, 2), np.float32)
    re, im = Guarded((3 * T, T), np.float32), Guarded((3 * T, T), np.float32)
    run(k_extract_parts, 3, (cp.asarray(xh), re.array, im.array, T))
    check(re.get(rng), xh[..., 0], rng, "extract real parts")
    check(im.get(rng), xh[..., 1], rng, "extract imaginary parts")
    bh = rand(rng, (4 * T, 2 * T), np.float32)
    y = Guarded((T, T), np.float32)
    run(k_extract_block, 1, (cp.asarray(bh), y.array, T))
    check(y.get(rng), bh[3 * T:4 * T, T:2 * T], rng, "extract a block")


@ct.kernel
def k_insert(x, v, y, s, T: ConstInt):
    t = ct.load(x, index=(0, 0), shape=(4 * T, 2 * T))
    ct.store(y, index=(0, 0), tile=ct.insert(t, (3, 1), ct.load(v, index=(0, 0), shape=(T, T))))
    r = ct.reshape(ct.extract(t, (0, 0), (1, 2 * T)), (2 * T,))
    ct.store(s, index=(0,), tile=ct.insert(r, (5,), 7.5))


def test_insert(rng):
    """ct.insert, extract's inverse: a block of a 2-d tile and one element of a 1-d tile."""
    T = 16
    xh = rand(rng, (4 * T, 2 * T), np.float32)
    vh = rand(rng, (T, T), np.float32)
    y, s = Guarded((4 * T, 2 * T), np.float32), Guarded((2 * T,), np.float32)
    run(k_insert, 1, (cp.asarray(xh), cp.asarray(vh), y.array, s.array, T))
    want = xh.copy()
    want[3 * T:4 * T, T:2 * T] = vh
    check(y.get(rng), want, rng, "insert a block")
    row = xh[0].copy()
    row[5] = 7.5
    check(s.get(rng), row, rng, "insert one element")


@ct.kernel
def k_bytes(x, h, y, z, w):
    t = ct.load(x, index=(0,), shape=(64,))
    b = ct.pack_to_bytes(t)
    ct.store(y, index=(0,), tile=b)
    ct.store(z, index=(0,), tile=ct.unpack_from_bytes(b, ct.float32))
    ct.store(w, index=(0,), tile=ct.unpack_from_bytes(ct.pack_to_bytes(ct.load(h, index=(0,), shape=(32,))),
                                                          ct.int64))


def test_pack_and_unpack_bytes(rng):
    """pack_to_bytes / unpack_from_bytes: numpy's little-endian view of the same bits."""
    xh = rand(rng, (64,), np.float32)
    hh = rng.integers(-2**15, 2**15, 32).astype(np.int16)
    y, z, w = Guarded((256,), np.uint8), Guarded((64,), np.float32), Guarded((8,), np.int64)
    run(k_bytes, 1, (cp.asarray(xh), cp.asarray(hh), y.array, z.array, w.array))
    check(y.get(rng), xh.view(np.uint8), rng, "pack_to_bytes of float32")
    check(z.get(rng), xh, rng, "unpack_from_bytes back to float32")
    check(w.get(rng), hh.view(np.int64), rng, "int16 bytes read as int64")


@ct.kernel
def k_advanced(x, y, rows, start):
    r = ct.load(rows, index=(0,), shape=(8,))
    t = ct.load_advanced_indexing(x, (r, ct.Slice(start, 16)), padding_mode=ct.PaddingMode.ZERO)
    ct.store_advanced_indexing(y, (r, ct.Slice(0, 16)), t * 2.0)


def test_advanced_indexing(rng):
    """load/store_advanced_indexing: rows picked by an index tile, a column range
    by ct.Slice (running past the array's edge: padded with zeros)."""
    xh = rand(rng, (40, 24), np.float32)
    rows = rng.choice(40, 8, replace=False).astype(np.int32)
    start = 12                                     # columns 12..27: 24..27 outside
    y = Guarded((40, 16), np.float32)
    run(k_advanced, 1, (cp.asarray(xh), y.array, cp.asarray(rows), start))
    got = y.get(rng)
    window = np.zeros((40, 16), np.float32)
    window[:, :12] = xh[:, 12:24]
    check(got[rows], 2.0 * window[rows], rng, "advanced indexing: the picked rows")
    others = np.setdiff1d(np.arange(40), rows)
    assert is_poison(got[others], np.float32).all(), "rows outside the index tile were written " + rng.seed_text


@ct.kernel
def k_matmul_batch_y(w, x, y, B: ConstInt, F: ConstInt, G: ConstInt):
    W = ct.reshape(ct.load(w, index=(0, 0), shape=(F, F)), (1, F, F))
    X = ct.load(x, index=(0, 0, 0), shape=(B, F, G))
    ct.store(y, index=(0, 0, 0), tile=ct.matmul(W, X).astype(ct.float32))


@ct.kernel
def k_matmul_4d_operands(Q, K, out, M: ConstInt, N: ConstInt, D: ConstInt):
    # 4-d loads reshaped into the product's operands (cuTile's attention
    # sample): with M = N = D the operands share the result's tensor-core layout
    q = ct.load(Q, index=(0, 0, 0, 0), shape=(1, 1, M, D)).reshape((M, D))
    k = ct.load(K, index=(0, 0, 0, 0), shape=(1, 1, D, N), order=(0, 1, 3, 2)).reshape((D, N))
    ct.store(out, index=(0, 0), tile=ct.mma(q, k, ct.full((M, N), 0., dtype=ct.float32)))


@pytest.mark.parametrize("MND", [(64, 64, 64), (64, 32, 64), (128, 128, 64)])
def test_matmul_of_reshaped_4d_operands(MND, rng):
    M, N, D = MND
    q = randn(rng, (1, 1, M, D), np.float16)
    k = randn(rng, (1, 1, N, D), np.float16)
    out = Guarded((M, N), np.float32)
    run(k_matmul_4d_operands, 1, (cp.asarray(q), cp.asarray(k), out.array, M, N, D))
    q64, k64 = q[0, 0].astype(np.float64), k[0, 0].astype(np.float64)
    check(out.get(rng), q64 @ k64.T, rng, f"q @ k^T from 4-d loads {MND}", 0,
          _matmul_tol("float16", D, np.abs(q64) @ np.abs(k64).T))


@pytest.mark.parametrize("dtype_name,F", [("float32", 16), ("float16", 32)])
def test_matmul_batch_of_y(dtype_name, F, rng):
    B, G = 4, 32
    wh = randn(rng, (F, F), np.dtype(dtype_name))
    xh = randn(rng, (B, F, G), np.dtype(dtype_name))
    y = Guarded((B, F, G), np.float32)
    run(k_matmul_batch_y, 1, (cp.asarray(wh), cp.asarray(xh), y.array, B, F, G))
    w64, x64 = wh.astype(np.float64), xh.astype(np.float64)
    ref = np.matmul(w64[None], x64)
    check(y.get(rng), ref, rng, f"matmul (1, F, F) @ (B, F, G) {dtype_name}", 0,
          _matmul_tol(dtype_name, F, np.matmul(np.abs(w64)[None], np.abs(x64))))


@ct.kernel
def k_locked_accumulate(x, acc, lock, T: ConstInt):
    # a spin lock (cuTile's layer-norm backward): acquire by compare-and-swap,
    # read-modify-write the shared row, release by exchange
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T))
    while ct.atomic_cas(lock, 0, 0, 1, memory_order=ct.MemoryOrder.ACQUIRE) == 1:
        pass
    total = ct.load(acc, index=(0, 0), shape=(1, T)) + t
    ct.store(acc, index=(0, 0), tile=total)
    ct.atomic_xchg(lock, 0, 0, memory_order=ct.MemoryOrder.RELEASE)


def test_spin_lock_with_acquire_release(rng):
    blocks, T = 96, 128
    xh = rng.integers(-1000, 1000, size=(blocks, T)).astype(np.float32)   # exact sums in float32
    acc = cp.zeros((1, T), np.float32)
    lock = cp.zeros(1, np.int32)
    run(k_locked_accumulate, blocks, (cp.asarray(xh), acc, lock, T))
    check(cp.asnumpy(acc)[0], xh.sum(axis=0), rng, "sum under a lock")
    assert int(lock.get()[0]) == 0


@ct.kernel
def k_bitcast_abs(x, y, T: ConstInt):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=ZERO)
    bits = ct.bitcast(t, ct.int32) & 0x7FFFFFFF
    ct.store(y, index=(ct.bid(0),), tile=ct.bitcast(bits, ct.float32))


def test_bitcast(rng):
    n, T = 1000, 256
    xh = rand(rng, n, np.float32)
    y = Guarded((n,), np.float32)
    run(k_bitcast_abs, cdiv(n, T), (cp.asarray(xh), y.array, T))
    check(y.get(rng), (xh.view(np.int32) & 0x7FFFFFFF).view(np.float32), rng, "bitcast to int32 and back")


@ct.kernel
def k_row_by_id(ids, x, y, T: ConstInt):
    # shape=(): one element, a 0-d tile, used as a tile index (cuTile's MoE sample)
    row = ct.load(ids, index=ct.bid(0), shape=())
    t = ct.load(x, index=(row, 0), shape=(1, T), padding_mode=ZERO)
    ct.store(y, index=(ct.bid(0), 0), tile=t + row)


def test_element_load_as_index(rng):
    rows, n, T = 50, 100, 128
    ids = rng.integers(0, rows, size=37).astype(np.int32)
    xh = rand(rng, (rows, n), np.float32)
    y = Guarded((37, n), np.float32)
    run(k_row_by_id, 37, (cp.asarray(ids), cp.asarray(xh), y.array, T))
    check(y.get(rng), xh[ids] + ids[:, None].astype(np.float32), rng, "rows picked by a loaded element")


# ===========================================================================
# Constant[int] parameters
# ===========================================================================


@ct.kernel
def k_affine_const(x, y, T: ConstInt, K: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,), padding_mode=ZERO)
    ct.store(y, index=(i,), tile=t * K + (K - 1))


def test_constant_parameters(how, rng):
    n = 1000
    xh = rand(rng, n, np.int32, -1000, 1000)
    x = cp.asarray(xh)
    for T, K in [(128, 3), (128, 5), (256, 3), (128, 3), (64, -7)]:
        y = Guarded((n,), np.int32)
        run(k_affine_const, cdiv(n, T), (x, y.array, T, K), how)
        check(y.get(rng), xh * K + (K - 1), rng, f"Constant T={T} K={K}")


# ===========================================================================
# Factories: full, zeros, ones, arange
# ===========================================================================


@ct.kernel
def k_factories(full_out, zeros_out, ones_out, ar_out, ar2_out, fill, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    ct.store(full_out, index=(i, 0), tile=ct.full((TM, TN), fill, dtype=full_out.dtype))
    ct.store(zeros_out, index=(i, 0), tile=ct.zeros((TM, TN), dtype=zeros_out.dtype))
    ct.store(ones_out, index=(i, 0), tile=ct.ones((TM, TN), dtype=ones_out.dtype))
    ct.store(ar_out, index=(i,), tile=ct.arange(TN, dtype=ct.int32) + i * TN)
    ct.store(ar2_out, index=(i,), tile=ct.arange(TN, dtype=ct.int32, start=5, step=3))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32])
@pytest.mark.parametrize("TM,TN", [(4, 32), (1, 1024), (16, 8)])
def test_factories(dtype, TM, TN, rng):
    blocks = 3
    fill = float(rng.integers(-9, 9)) + (0.5 if np.dtype(dtype).kind == "f" else 0.0)
    fill = fill if np.dtype(dtype).kind == "f" else int(fill)
    outs = [Guarded((blocks * TM, TN), dtype) for _ in range(3)]
    ar = Guarded((blocks * TN,), np.int32)
    ar2 = Guarded((blocks * TN,), np.int32)
    run(k_factories, blocks, (*[o.array for o in outs], ar.array, ar2.array, fill, TM, TN))
    check(outs[0].get(rng), np.full((blocks * TM, TN), fill, dtype), rng, "ct.full")
    check(outs[1].get(rng), np.zeros((blocks * TM, TN), dtype), rng, "ct.zeros")
    check(outs[2].get(rng), np.ones((blocks * TM, TN), dtype), rng, "ct.ones")
    check(ar.get(rng), np.arange(blocks * TN, dtype=np.int32), rng, "ct.arange + bid*T")
    check(ar2.get(rng), np.tile(5 + 3 * np.arange(TN, dtype=np.int32), blocks), rng,
          "ct.arange(start=5, step=3)")


@ct.kernel
def k_arange_float(out, T: ConstInt):
    ct.store(out, index=(ct.bid(0),), tile=ct.arange(T, dtype=ct.float32) * 0.5)


def test_arange_float(rng):
    out = Guarded((64,), np.float32)
    run(k_arange_float, 2, (out.array, 32))
    check(out.get(rng), np.tile(np.arange(32, dtype=np.float32) * 0.5, 2), rng, "arange float32")


# ===========================================================================
# astype
# ===========================================================================


@ct.kernel
def k_astype(x, y, T: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,))
    ct.store(y, index=(i,), tile=ct.astype(t, y.dtype))


@ct.kernel
def k_astype_method(x, y, T: ConstInt):
    i = ct.bid(0)
    ct.store(y, index=(i,), tile=ct.load(x, index=(i,), shape=(T,)).astype(y.dtype))


ASTYPE_CASES = [(np.float32, np.float16), (np.float16, np.float32), (np.int32, np.float32),
                (np.float32, np.int32), (np.float64, np.float32), (np.float32, np.float64),
                (np.int32, np.int64), (np.int64, np.int32), (np.uint8, np.float32),
                (np.int32, np.float16), (np.float16, np.int32), (np.int8, np.int32)]


@pytest.mark.parametrize("method", [False, True], ids=["ct.astype", "tile.astype"])
@pytest.mark.parametrize("src,dst", ASTYPE_CASES,
                         ids=[f"{np.dtype(s).name}-{np.dtype(d).name}" for s, d in ASTYPE_CASES])
def test_astype(src, dst, method, rng):
    n, T = 1000, 256
    if np.dtype(src).kind == "f":
        xh = rand(rng, n, src, -1000, 1000)            # fractions, both signs: truncation toward 0
    else:
        xh = rand(rng, n, src, -1000 if np.dtype(src).kind == "i" else 0, 1000)
        if np.dtype(src) == np.int8:
            xh = rng.integers(-128, 128, size=n).astype(np.int8)
    y = Guarded((n,), dst)
    run(k_astype_method if method else k_astype, cdiv(n, T), (cp.asarray(xh), y.array, T))
    check(y.get(rng), xh.astype(dst), rng, f"astype {np.dtype(src).name} -> {np.dtype(dst).name}")


# ===========================================================================
# Elementwise binary arithmetic (+ - * / // % **), 2-d tiles, ragged edges
# ===========================================================================


@ct.kernel
def k_add(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta + tb)


@ct.kernel
def k_sub(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta - tb)


@ct.kernel
def k_mul(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta * tb)


@ct.kernel
def k_truediv(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta / tb)


@ct.kernel
def k_floordiv(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta // tb)


@ct.kernel
def k_mod(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta % tb)


@ct.kernel
def k_pow(a, b, c, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ta ** tb)


@ct.kernel
def k_named_ops(a, b, c, d, e, f, TM: ConstInt, TN: ConstInt):
    # the function spellings: ct.add / sub / mul / truediv
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(c, index=(i, j), tile=ct.add(ta, tb))
    ct.store(d, index=(i, j), tile=ct.sub(ta, tb))
    ct.store(e, index=(i, j), tile=ct.mul(ta, tb))
    ct.store(f, index=(i, j), tile=ct.truediv(ta, tb))


def _py_mod(a, b):
    """Python's % (sign of the divisor) in a's dtype, as cuTile: fmod, then + b where signs differ."""
    r = np.fmod(a, b)
    fix = (r != 0) & ((r < 0) != (b < 0))
    return np.where(fix, r + b, r).astype(a.dtype)


def _ref_binary(op, a, b):
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "truediv":
            return a / b
        if op == "floordiv":
            return np.floor_divide(a, b) if a.dtype.kind in "iu" else np.floor(a / b).astype(a.dtype)
        if op == "mod":
            return np.mod(a, b) if a.dtype.kind in "iu" else _py_mod(a, b)
        if op == "pow":
            return (a.astype(np.float64) ** b.astype(np.float64)).astype(a.dtype)
    raise ValueError(op)


BINARY_KERNELS = {"add": k_add, "sub": k_sub, "mul": k_mul, "truediv": k_truediv,
                  "floordiv": k_floordiv, "mod": k_mod, "pow": k_pow}
BINARY_CASES = [(op, dt) for op in ("add", "sub", "mul") for dt in (np.float32, np.float16, np.float64, np.int32)]
BINARY_CASES += [("truediv", dt) for dt in (np.float32, np.float16, np.float64)]
BINARY_CASES += [(op, dt) for op in ("floordiv", "mod") for dt in (np.int32, np.float32, np.int64)]
BINARY_CASES += [("pow", dt) for dt in (np.float32, np.float64)]
FLOAT_TOL = {np.dtype(np.float16): (2e-3, 1e-3), np.dtype(np.float32): (2e-6, 1e-6),
             np.dtype(np.float64): (1e-13, 1e-13)}


@pytest.mark.parametrize("op,dtype", BINARY_CASES, ids=[f"{o}-{np.dtype(d).name}" for o, d in BINARY_CASES])
@pytest.mark.parametrize("tile,shape", [((16, 32), (50, 70)), ((1, 256), (3, 1000))],
                         ids=["16x32", "1x256"])
def test_binary_arithmetic(op, dtype, tile, shape, rng):
    dtype = np.dtype(dtype)
    if op == "pow":
        a = rand(rng, shape, dtype, 0.1, 3.0)
        b = rand(rng, shape, dtype, -2.0, 2.0)
    elif dtype.kind in "iu":
        a = rand(rng, shape, dtype, -1000, 1000)
        b = rand(rng, shape, dtype, -50, 50)
        b[b == 0] = 7
    else:
        a = rand(rng, shape, dtype, -100, 100)
        b = rand(rng, shape, dtype, -10, 10)
        b[np.abs(b) < 0.25] = 0.5
    c = Guarded(shape, dtype)
    grid = (cdiv(shape[0], tile[0]), cdiv(shape[1], tile[1]))
    run(BINARY_KERNELS[op], grid, (cp.asarray(a), cp.asarray(b), c.array, *tile))
    want = _ref_binary(op, a, b)
    rtol, atol = (0, 0) if dtype.kind in "iu" else FLOAT_TOL[dtype]
    if op == "pow":
        rtol, atol = rtol * 8, atol * 8
    if op in ("floordiv", "mod") and dtype.kind == "f":
        # floor(a / b) on the correctly rounded quotient; a % b = fmod, then + b
        rtol, atol = 1e-6, 1e-5
    check(c.get(rng), want, rng, f"{op} {dtype.name} tile {tile} array {shape}", rtol, atol)


def test_named_binary_functions(rng):
    shape, tile = (40, 90), (8, 64)
    a = rand(rng, shape, np.float32, -10, 10)
    b = rand(rng, shape, np.float32, 1, 10)
    outs = [Guarded(shape, np.float32) for _ in range(4)]
    run(k_named_ops, (cdiv(40, 8), cdiv(90, 64)), (cp.asarray(a), cp.asarray(b),
                                                    *[o.array for o in outs], *tile))
    for o, name, want in zip(outs, ("ct.add", "ct.sub", "ct.mul", "ct.truediv"),
                             (a + b, a - b, a * b, a / b)):
        check(o.get(rng), want, rng, name, 2e-6, 1e-6)


@ct.kernel
def k_scalar_ops(a, out, s, T: ConstInt):
    # tile with runtime and literal scalars, on both sides; unary minus
    i = ct.bid(0)
    t = ct.load(a, index=(i,), shape=(T,))
    ct.store(out, index=(i,), tile=(2.0 - t) * s + t / 4.0 - (-t) * 3)


def test_scalar_operands(rng):
    n, T = 1000, 128
    a = rand(rng, n, np.float32)
    s = float(np.float32(rng.uniform(-3, 3)))
    out = Guarded((n,), np.float32)
    run(k_scalar_ops, cdiv(n, T), (cp.asarray(a), out.array, s, T))
    s32 = np.float32(s)
    want = (np.float32(2.0) - a) * s32 + a / np.float32(4.0) - (-a) * np.float32(3)
    check(out.get(rng), want, rng, "tile op scalar", 1e-5, 1e-5)


# ===========================================================================
# Comparisons, where, minimum / maximum
# ===========================================================================


@ct.kernel
def k_compare(a, b, out, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    bits = ((ta < tb).astype(ct.int32) + (ta <= tb).astype(ct.int32) * 2
            + (ta > tb).astype(ct.int32) * 4 + (ta >= tb).astype(ct.int32) * 8
            + (ta == tb).astype(ct.int32) * 16 + (ta != tb).astype(ct.int32) * 32
            + ct.greater(ta, tb).astype(ct.int32) * 64 + ct.less_equal(ta, tb).astype(ct.int32) * 128
            + ct.equal(ta, tb).astype(ct.int32) * 256)
    ct.store(out, index=(i, j), tile=bits)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.int64])
def test_comparisons(dtype, rng):
    shape, tile = (45, 70), (16, 32)
    a = rand(rng, shape, dtype, -3, 3).round().astype(dtype)   # many ties
    b = rand(rng, shape, dtype, -3, 3).round().astype(dtype)
    out = Guarded(shape, np.int32)
    run(k_compare, (cdiv(45, 16), cdiv(70, 32)), (cp.asarray(a), cp.asarray(b), out.array, *tile))
    want = ((a < b) * 1 + (a <= b) * 2 + (a > b) * 4 + (a >= b) * 8 + (a == b) * 16
            + (a != b) * 32 + (a > b) * 64 + (a <= b) * 128 + (a == b) * 256).astype(np.int32)
    check(out.get(rng), want, rng, f"comparisons {np.dtype(dtype).name}")


@ct.kernel
def k_where(c, a, b, out, out_scalar, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    tc = ct.load(c, index=(i, j), shape=(TM, TN))
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(out, index=(i, j), tile=ct.where(tc > 0, ta, tb))
    ct.store(out_scalar, index=(i, j), tile=ct.where(tc > 0, ta, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_where(dtype, rng):
    shape, tile = (33, 100), (8, 64)
    cnd = rand(rng, shape, np.float32, -1, 1)
    a = rand(rng, shape, dtype, -100, 100)
    b = rand(rng, shape, dtype, -100, 100)
    out, out2 = Guarded(shape, dtype), Guarded(shape, dtype)
    run(k_where, (cdiv(33, 8), cdiv(100, 64)),
        (cp.asarray(cnd), cp.asarray(a), cp.asarray(b), out.array, out2.array, *tile))
    check(out.get(rng), np.where(cnd > 0, a, b), rng, "where(c, x, y)")
    check(out2.get(rng), np.where(cnd > 0, a, 0).astype(dtype), rng, "where(c, x, 0)")


@ct.kernel
def k_min_max(a, b, mn, mx, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(mn, index=(i, j), tile=ct.minimum(ta, tb))
    ct.store(mx, index=(i, j), tile=ct.maximum(ta, tb))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.float64, np.uint8])
def test_minimum_maximum(dtype, rng):
    shape, tile = (70, 45), (32, 16)
    a = rand(rng, shape, dtype, -100, 100)
    b = rand(rng, shape, dtype, -100, 100)
    mn, mx = Guarded(shape, dtype), Guarded(shape, dtype)
    run(k_min_max, (cdiv(70, 32), cdiv(45, 16)), (cp.asarray(a), cp.asarray(b), mn.array, mx.array, *tile))
    check(mn.get(rng), np.minimum(a, b), rng, "minimum")
    check(mx.get(rng), np.maximum(a, b), rng, "maximum")


# ===========================================================================
# Unary math
# ===========================================================================


@ct.kernel
def k_exp(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.exp(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_exp2(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.exp2(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_log(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.log(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_log2(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.log2(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_sqrt(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.sqrt(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_rsqrt(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.rsqrt(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_sin(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.sin(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_cos(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.cos(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_tanh(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.tanh(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_abs(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.abs(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_floor(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.floor(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_ceil(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=ct.ceil(ct.load(x, index=(ct.bid(0),), shape=(T,))))


@ct.kernel
def k_negative(x, y, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=-ct.load(x, index=(ct.bid(0),), shape=(T,)))


UNARY_KERNELS = {"exp": k_exp, "exp2": k_exp2, "log": k_log, "log2": k_log2, "sqrt": k_sqrt,
                 "rsqrt": k_rsqrt, "sin": k_sin, "cos": k_cos, "tanh": k_tanh, "abs": k_abs,
                 "floor": k_floor, "ceil": k_ceil, "negative": k_negative}
UNARY_REF = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
             "rsqrt": lambda v: 1.0 / np.sqrt(v), "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
             "abs": np.abs, "floor": np.floor, "ceil": np.ceil, "negative": np.negative}
UNARY_DOMAIN = {"log": (0.01, 100), "log2": (0.01, 100), "sqrt": (0, 100), "rsqrt": (0.01, 100),
                "exp": (-10, 10), "exp2": (-10, 10)}
EXACT_UNARY = {"abs", "floor", "ceil", "negative", "sqrt"}
UNARY_TOL = {np.dtype(np.float32): (2e-6, 2e-6), np.dtype(np.float16): (2e-3, 2e-3),
             np.dtype(np.float64): (1e-14, 1e-14)}
UNARY_CASES = [(f, np.float32) for f in UNARY_KERNELS]
UNARY_CASES += [(f, np.float64) for f in ("exp", "log", "sqrt", "sin", "tanh", "floor", "abs")]
UNARY_CASES += [(f, np.float16) for f in ("exp", "log", "sqrt", "tanh", "abs", "ceil")]
UNARY_CASES += [("abs", np.int32), ("negative", np.int32)]


@pytest.mark.parametrize("fn,dtype", UNARY_CASES, ids=[f"{f}-{np.dtype(d).name}" for f, d in UNARY_CASES])
def test_unary_math(fn, dtype, rng):
    dtype = np.dtype(dtype)
    n, T = 3000, 512
    lo, hi = UNARY_DOMAIN.get(fn, (-6, 6))
    x = rand(rng, n, dtype, lo, hi)
    y = Guarded((n,), dtype)
    run(UNARY_KERNELS[fn], cdiv(n, T), (cp.asarray(x), y.array, T))
    want = UNARY_REF[fn](x.astype(np.float64)).astype(dtype) if dtype.kind == "f" else UNARY_REF[fn](x)
    rtol, atol = (0, 0) if dtype.kind in "iu" else UNARY_TOL[dtype]
    if fn in EXACT_UNARY and dtype.kind == "f":
        rtol, atol = (1e-7, 0) if dtype != np.float16 else (1e-3, 0)
    if fn in ("sin", "cos") and dtype == np.float32:
        atol = 4e-6
    check(y.get(rng), want, rng, f"ct.{fn} {dtype.name}", rtol, atol)


# ===========================================================================
# Broadcasting and promotion
# ===========================================================================


@ct.kernel
def k_broadcast(col, row, vec, out, out2, s, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    tc = ct.load(col, index=(i, 0), shape=(TM, 1))        # (TM, 1)
    tr = ct.load(row, index=(0, j), shape=(1, TN))        # (1, TN)
    tv = ct.load(vec, index=(j,), shape=(TN,))            # (TN,): aligns at the right
    ct.store(out, index=(i, j), tile=tc * tr + s)
    ct.store(out2, index=(i, j), tile=(tc - tv) * 2.0 + ct.broadcast_to(tr, (TM, TN)))


def test_broadcasting(rng):
    M, N, TM, TN = 50, 70, 16, 32
    col = rand(rng, (M, 1), np.float32)
    row = rand(rng, (1, N), np.float32)
    vec = rand(rng, (N,), np.float32)
    s = float(np.float32(rng.uniform(-2, 2)))
    out, out2 = Guarded((M, N), np.float32), Guarded((M, N), np.float32)
    run(k_broadcast, (cdiv(M, TM), cdiv(N, TN)),
        (cp.asarray(col), cp.asarray(row), cp.asarray(vec), out.array, out2.array, s, TM, TN))
    check(out.get(rng), col * row + np.float32(s), rng, "(M,1) * (1,N) + scalar", 2e-6, 2e-6)
    check(out2.get(rng), (col - vec) * np.float32(2) + row, rng, "(M,1) - (N,), broadcast_to",
          2e-6, 2e-6)


@ct.kernel
def k_promotion(h, i32, f32, h_out, h_out_f32, f_out, f_out2, f_out3, T: ConstInt):
    k = ct.bid(0)
    th = ct.load(h, index=(k,), shape=(T,))        # float16
    ti = ct.load(i32, index=(k,), shape=(T,))      # int32
    tf = ct.load(f32, index=(k,), shape=(T,))      # float32
    r = th * 2.0 + 0.1                             # literals take the tile's dtype: stays float16
    ct.store(h_out, index=(k,), tile=r)            # (a float32 tile would not store into float16)
    ct.store(h_out_f32, index=(k,), tile=r.astype(ct.float32))
    ct.store(f_out, index=(k,), tile=ti + tf)      # int32 + float32 -> float32
    ct.store(f_out2, index=(k,), tile=ti * 0.5)    # int32 * float literal -> float32
    ct.store(f_out3, index=(k,), tile=th + tf)     # float16 + float32 -> float32


def test_promotion(rng):
    n, T = 1000, 256
    h = rand(rng, n, np.float16, -20, 20)
    i = rand(rng, n, np.int32, -1000, 1000)
    f = rand(rng, n, np.float32, -20, 20)
    outs = [Guarded((n,), np.float16)] + [Guarded((n,), np.float32) for _ in range(4)]
    run(k_promotion, cdiv(n, T), (cp.asarray(h), cp.asarray(i), cp.asarray(f), *[o.array for o in outs], T))
    r16 = h * np.float16(2.0) + np.float16(0.1)                  # float16 arithmetic
    check(outs[0].get(rng), r16, rng, "f16 tile * 2.0 + 0.1 (float16)")
    check(outs[1].get(rng), r16.astype(np.float32), rng,
          "f16 tile * 2.0 + 0.1 computed in float16 (not float32)")
    check(outs[2].get(rng), i.astype(np.float32) + f, rng, "int32 + float32 -> float32", 1e-7, 0)
    check(outs[3].get(rng), i.astype(np.float32) * np.float32(0.5), rng, "int32 * 0.5 -> float32")
    check(outs[4].get(rng), h.astype(np.float32) + f, rng, "float16 + float32 -> float32", 1e-7, 0)


# ===========================================================================
# Shape changes: reshape, expand_dims, transpose, permute, broadcast_to
# ===========================================================================


@ct.kernel
def k_transpose(x, y, TM: ConstInt, TN: ConstInt):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(TM, TN))
    ct.store(y, index=(ct.bid(1), ct.bid(0)), tile=ct.transpose(t))


@pytest.mark.parametrize("dtype,tile,shape", [(np.float32, (16, 32), (50, 70)),
                                              (np.float16, (64, 64), (128, 64)),
                                              (np.int32, (1, 128), (5, 300)),
                                              (np.float64, (8, 4), (8, 4))])
def test_transpose(dtype, tile, shape, rng):
    x = rand(rng, shape, dtype, -100, 100)
    y = Guarded(shape[::-1], dtype)
    run(k_transpose, (cdiv(shape[0], tile[0]), cdiv(shape[1], tile[1])), (cp.asarray(x), y.array, *tile))
    check(y.get(rng), x.T, rng, f"transpose tile {tile}")


@ct.kernel
def k_reshape(x, y, y2, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(TM * TN,))
    ct.store(y, index=(i, 0), tile=ct.reshape(t, (TM, TN)))
    ct.store(y2, index=(i, 0), tile=t.reshape((TM, -1)).reshape((-1, TN)))


@pytest.mark.parametrize("TM,TN", [(4, 32), (16, 16), (1, 64), (32, 1)])
def test_reshape(TM, TN, rng):
    blocks = 5
    x = rand(rng, blocks * TM * TN, np.float32)
    y, y2 = Guarded((blocks * TM, TN), np.float32), Guarded((blocks * TM, TN), np.float32)
    run(k_reshape, blocks, (cp.asarray(x), y.array, y2.array, TM, TN))
    check(y.get(rng), x.reshape(-1, TN), rng, "reshape (C order)")
    check(y2.get(rng), x.reshape(-1, TN), rng, "Tile.reshape with -1")


@ct.kernel
def k_expand_dims(x, row_out, col_out, T: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,))
    ct.store(row_out, index=(i, 0), tile=ct.expand_dims(t, 0))   # (1, T)
    ct.store(col_out, index=(i, 0), tile=ct.expand_dims(t, 1))   # (T, 1)


def test_expand_dims(rng):
    n, T = 1000, 128
    x = rand(rng, n, np.float32)
    b = cdiv(n, T)
    row_out = Guarded((b, T), np.float32)
    col_out = Guarded((n, 1), np.float32)
    run(k_expand_dims, b, (cp.asarray(x), row_out.array, col_out.array, T))
    want_rows = np.full((b, T), np.nan, np.float32)
    want_rows.reshape(-1)[:n] = x
    got_rows = row_out.get(rng)
    got_rows.reshape(-1)[n:] = np.nan          # the last tile's padding is unspecified
    check(got_rows, want_rows, rng, "expand_dims(t, 0)")
    check(col_out.get(rng), x.reshape(n, 1), rng, "expand_dims(t, 1)")


@ct.kernel
def k_permute(x, y, y2, A: ConstInt, B: ConstInt, C: ConstInt):
    t = ct.load(x, index=(0, 0, 0), shape=(A, B, C))
    ct.store(y, index=(0, 0, 0), tile=ct.permute(t, (2, 0, 1)))
    ct.store(y2, index=(0, 0, 0), tile=ct.transpose(t, 0, 2))


@pytest.mark.parametrize("shape", [(2, 4, 8), (8, 16, 4), (1, 32, 2)])
def test_permute(shape, rng):
    x = rand(rng, shape, np.float32)
    y = cp.asarray(np.full(np.transpose(x, (2, 0, 1)).shape, np.nan, np.float32))
    y2 = cp.asarray(np.full(np.transpose(x, (2, 1, 0)).shape, np.nan, np.float32))
    run(k_permute, 1, (cp.asarray(x), y, y2, *shape))
    check(cp.asnumpy(y), np.transpose(x, (2, 0, 1)), rng, "permute (2, 0, 1)")
    check(cp.asnumpy(y2), np.swapaxes(x, 0, 2), rng, "transpose(t, 0, 2)")


# ===========================================================================
# Reductions: sum / max / min / prod / argmax / argmin
# One block per TM rows; the tile covers the whole row (N == TN), exact shapes.
# Outputs: axis=1, axis=1 keepdims, axis=0 (flattened per block), axis=0 keepdims,
# all axes, all axes keepdims.
# ===========================================================================


@ct.kernel
def k_red_sum(x, o1, o1k, o0, o0k, oa, oak, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(o1, index=(i,), tile=ct.sum(t, axis=1))
    ct.store(o1k, index=(i, 0), tile=ct.sum(t, axis=1, keepdims=True))
    ct.store(o0, index=(i,), tile=ct.sum(t, axis=0))
    ct.store(o0k, index=(i, 0), tile=ct.sum(t, axis=0, keepdims=True))
    ct.store(oa, index=(i,), tile=ct.sum(t))
    ct.store(oak, index=(i, 0), tile=ct.sum(t, axis=None, keepdims=True))


@ct.kernel
def k_red_max(x, o1, o1k, o0, o0k, oa, oak, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(o1, index=(i,), tile=ct.max(t, axis=1))
    ct.store(o1k, index=(i, 0), tile=ct.max(t, axis=1, keepdims=True))
    ct.store(o0, index=(i,), tile=ct.max(t, axis=0))
    ct.store(o0k, index=(i, 0), tile=ct.max(t, axis=0, keepdims=True))
    ct.store(oa, index=(i,), tile=ct.max(t))
    ct.store(oak, index=(i, 0), tile=ct.max(t, axis=None, keepdims=True))


@ct.kernel
def k_red_min(x, o1, o1k, o0, o0k, oa, oak, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(o1, index=(i,), tile=ct.min(t, axis=1))
    ct.store(o1k, index=(i, 0), tile=ct.min(t, axis=1, keepdims=True))
    ct.store(o0, index=(i,), tile=ct.min(t, axis=0))
    ct.store(o0k, index=(i, 0), tile=ct.min(t, axis=0, keepdims=True))
    ct.store(oa, index=(i,), tile=ct.min(t))
    ct.store(oak, index=(i, 0), tile=ct.min(t, axis=None, keepdims=True))


@ct.kernel
def k_red_prod(x, o1, o1k, o0, o0k, oa, oak, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(o1, index=(i,), tile=ct.prod(t, axis=1))
    ct.store(o1k, index=(i, 0), tile=ct.prod(t, axis=1, keepdims=True))
    ct.store(o0, index=(i,), tile=ct.prod(t, axis=0))
    ct.store(o0k, index=(i, 0), tile=ct.prod(t, axis=0, keepdims=True))
    ct.store(oa, index=(i,), tile=ct.prod(t))
    ct.store(oak, index=(i, 0), tile=ct.prod(t, axis=None, keepdims=True))


@ct.kernel
def k_red_argmax(x, o1, o1k, o0, o0k, oa, oak, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(o1, index=(i,), tile=ct.argmax(t, axis=1))
    ct.store(o1k, index=(i, 0), tile=ct.argmax(t, axis=1, keepdims=True))
    ct.store(o0, index=(i,), tile=ct.argmax(t, axis=0))
    ct.store(o0k, index=(i, 0), tile=ct.argmax(t, axis=0, keepdims=True))
    ct.store(oa, index=(i,), tile=ct.argmax(t))
    ct.store(oak, index=(i, 0), tile=ct.argmax(t, axis=None, keepdims=True))


@ct.kernel
def k_red_argmin(x, o1, o1k, o0, o0k, oa, oak, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(o1, index=(i,), tile=ct.argmin(t, axis=1))
    ct.store(o1k, index=(i, 0), tile=ct.argmin(t, axis=1, keepdims=True))
    ct.store(o0, index=(i,), tile=ct.argmin(t, axis=0))
    ct.store(o0k, index=(i, 0), tile=ct.argmin(t, axis=0, keepdims=True))
    ct.store(oa, index=(i,), tile=ct.argmin(t))
    ct.store(oak, index=(i, 0), tile=ct.argmin(t, axis=None, keepdims=True))


REDUCTIONS = {"sum": (k_red_sum, np.sum), "max": (k_red_max, np.max), "min": (k_red_min, np.min),
              "prod": (k_red_prod, np.prod), "argmax": (k_red_argmax, np.argmax),
              "argmin": (k_red_argmin, np.argmin)}
RED_CASES = [(op, dt) for op in ("sum", "max", "min", "argmax", "argmin", "prod")
             for dt in (np.float32, np.int32)]
RED_CASES += [(op, np.float16) for op in ("max", "min", "argmax", "argmin")]
RED_CASES += [("sum", np.float64), ("max", np.int64)]


def _reduce_ref(op, blk, axis, keepdims):
    fn = REDUCTIONS[op][1]
    if op in ("argmax", "argmin"):
        if axis is None:
            r = np.asarray(fn(blk))                      # flat index, C order
            return r.reshape((1, 1)) if keepdims else r
        return np.asarray(fn(blk, axis=axis, keepdims=keepdims))
    if op in ("sum", "prod"):
        return np.asarray(fn(blk, axis=axis, keepdims=keepdims, dtype=blk.dtype))
    return np.asarray(fn(blk, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("op,dtype", RED_CASES, ids=[f"{o}-{np.dtype(d).name}" for o, d in RED_CASES])
@pytest.mark.parametrize("TM,TN", [(16, 64), (1, 1024), (64, 8)])
def test_reductions(op, dtype, TM, TN, rng):
    dtype = np.dtype(dtype)
    kernel = REDUCTIONS[op][0]
    blocks = 3
    M, N = blocks * TM, TN
    if op == "prod":
        x = (rand(rng, (M, N), dtype, 0.97, 1.03) if dtype.kind == "f"
             else rng.choice(np.array([-1, 1, 1, 1, 2, 3], dtype), size=(M, N)))
    elif op in ("argmax", "argmin") or dtype.kind in "iu":
        x = rng.integers(-4, 5, size=(M, N)).astype(dtype)          # ties: the first index wins
    else:
        x = randn(rng, (M, N), dtype, 3.0)
    ody = np.int32 if op in ("argmax", "argmin") else dtype
    outs = [Guarded((M,), ody), Guarded((M, 1), ody), Guarded((blocks * N,), ody),
            Guarded((blocks, N), ody), Guarded((blocks,), ody), Guarded((blocks, 1), ody)]
    run(kernel, blocks, (cp.asarray(x), *[o.array for o in outs], TM, TN))
    blks = [x[b * TM:(b + 1) * TM] for b in range(blocks)]
    wants = [np.concatenate([_reduce_ref(op, b, 1, False) for b in blks]),
             np.concatenate([_reduce_ref(op, b, 1, True) for b in blks]),
             np.concatenate([_reduce_ref(op, b, 0, False) for b in blks]),
             np.concatenate([_reduce_ref(op, b, 0, True) for b in blks]),
             np.stack([_reduce_ref(op, b, None, False) for b in blks]),
             np.concatenate([_reduce_ref(op, b, None, True).reshape(1, 1) for b in blks])]
    names = ["axis=1", "axis=1 keepdims", "axis=0", "axis=0 keepdims", "all axes", "all axes keepdims"]
    for o, want, name in zip(outs, wants, names):
        got = o.get(rng)
        rtol = atol = 0
        if op == "sum" and dtype.kind == "f":
            # reassociation: scale the tolerance by the sum of magnitudes
            mag = {"axis=1": np.abs(x).reshape(blocks, TM, N).sum(2).reshape(-1),
                   "axis=0": np.abs(x).reshape(blocks, TM, N).sum(1).reshape(-1)}
            if name.startswith("axis=1"):
                atol = 4 * np.finfo(dtype).eps * mag["axis=1"].max()
            elif name.startswith("axis=0"):
                atol = 4 * np.finfo(dtype).eps * mag["axis=0"].max()
            else:
                atol = 4 * np.finfo(dtype).eps * np.abs(x).reshape(blocks, -1).sum(1).max()
            want = want.astype(np.float64)
        if op == "prod" and dtype.kind == "f":
            rtol = 4 * np.finfo(dtype).eps * TM * TN
        check(got, want.astype(ody) if atol == 0 else want, rng,
              f"ct.{op} {name} {dtype.name} tile ({TM}, {TN})", rtol, atol)


@ct.kernel
def k_red_multi_axis(x, o, A: ConstInt, B: ConstInt, C: ConstInt):
    t = ct.load(x, index=(0, 0, 0), shape=(A, B, C))
    ct.store(o, index=(0,), tile=ct.sum(t, axis=(1, 2)))


def test_reduction_axis_tuple(rng):
    A, B, C = 4, 8, 16
    x = rng.integers(-100, 100, size=(A, B, C)).astype(np.int32)
    o = Guarded((A,), np.int32)
    run(k_red_multi_axis, 1, (cp.asarray(x), o.array, A, B, C))
    check(o.get(rng), x.sum(axis=(1, 2), dtype=np.int32), rng, "sum over axis=(1, 2)")


# ===========================================================================
# cumsum (inclusive; reverse)
# ===========================================================================


@ct.kernel
def k_cumsum(x, c1, c0, r1, r0, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, index=(i, j), shape=(TM, TN))
    ct.store(c1, index=(i, j), tile=ct.cumsum(t, axis=1))
    ct.store(c0, index=(i, j), tile=ct.cumsum(t, axis=0))
    ct.store(r1, index=(i, j), tile=ct.cumsum(t, axis=1, reverse=True))
    ct.store(r0, index=(i, j), tile=ct.cumsum(t, 0, reverse=True))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("TM,TN", [(16, 64), (1, 1024), (128, 4), (8, 8)])
def test_cumsum(dtype, TM, TN, rng):
    dtype = np.dtype(dtype)
    gm, gn = 2, 3
    M, N = gm * TM, gn * TN
    x = rng.integers(-50, 51, size=(M, N)).astype(dtype) if dtype.kind == "i" else randn(rng, (M, N), dtype)
    outs = [Guarded((M, N), dtype) for _ in range(4)]
    run(k_cumsum, (gm, gn), (cp.asarray(x), *[o.array for o in outs], TM, TN))
    blk = x.reshape(gm, TM, gn, TN).astype(np.float64 if dtype.kind == "f" else dtype)
    refs = [np.cumsum(blk, axis=3), np.cumsum(blk, axis=1),
            np.flip(np.cumsum(np.flip(blk, 3), axis=3), 3), np.flip(np.cumsum(np.flip(blk, 1), axis=1), 1)]
    absb = np.abs(blk)
    mags = [absb.sum(3, keepdims=True), absb.sum(1, keepdims=True)] * 2
    for o, ref, mag, name in zip(outs, refs, mags, ["axis=1", "axis=0", "axis=1 reverse", "axis=0 reverse"]):
        got = o.get(rng)
        if dtype.kind == "f":
            atol = (4 * np.finfo(dtype).eps * np.broadcast_to(mag, blk.shape)).reshape(M, N)
            ok = np.abs(got.astype(np.float64) - ref.reshape(M, N)) <= atol + 1e-30
            if not ok.all():
                check(got, ref.reshape(M, N), rng, f"cumsum {name} tile ({TM}, {TN})", 0, float(atol.max()))
        else:
            check(got, ref.reshape(M, N).astype(dtype), rng, f"cumsum {name} tile ({TM}, {TN})")


# ===========================================================================
# matmul, @, mma
# ===========================================================================


def _matmul_tol(dtype_name, K, mag):
    """atol for an f32-accumulated product with inputs exactly representable in their dtype."""
    # tfloat32: against inputs rounded as the tensor cores must see them
    # (tf32_rne), so only the accumulation differs; truncated inputs miss by 2e-4.
    return {"float16": 2e-3, "bfloat16": 4e-3, "float32": 2e-4, "tfloat32": 1e-5,
            "float64": 1e-12}[dtype_name] * mag + 1e-6


@ct.kernel
def k_matmul_tile(a, b, c, c2, TM: ConstInt, TN: ConstInt, TK: ConstInt):
    ta = ct.load(a, index=(0, 0), shape=(TM, TK))
    tb = ct.load(b, index=(0, 0), shape=(TK, TN))
    ct.store(c, index=(0, 0), tile=ct.matmul(ta, tb))
    ct.store(c2, index=(0, 0), tile=ta @ tb)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("TM,TN,TK", [(16, 16, 16), (64, 32, 16), (128, 128, 64), (32, 64, 128)])
def test_matmul_single_tile(dtype, TM, TN, TK, rng):
    """matmul / @ of two tiles: the result has the inputs' dtype."""
    dtype = np.dtype(dtype)
    a = randn(rng, (TM, TK), dtype)
    b = randn(rng, (TK, TN), dtype)
    c, c2 = Guarded((TM, TN), dtype), Guarded((TM, TN), dtype)
    run(k_matmul_tile, 1, (cp.asarray(a), cp.asarray(b), c.array, c2.array, TM, TN, TK))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    atol = _matmul_tol(dtype.name, TK, mag)
    rtol = 1e-3 if dtype == np.float16 else 0          # result rounded to float16
    check(c.get(rng), ref, rng, f"ct.matmul {dtype.name} ({TM},{TK})x({TK},{TN})", rtol, atol)
    check(c2.get(rng), ref, rng, f"@ {dtype.name} ({TM},{TK})x({TK},{TN})", rtol, atol)


@ct.kernel
def k_gemm(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """cuTile's MatMul sample without the swizzle: fp32 accumulate, ragged M/N/K."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bm, bn), tile=ct.astype(acc, C.dtype))


@ct.kernel
def k_gemm_tf32(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ZERO).astype(ct.tfloat32)
        b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ZERO).astype(ct.tfloat32)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bm, bn), tile=acc)


@ct.kernel
def k_gemm_matmul_op(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """The K loop with `acc = acc + a @ b` (float32 inputs)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=C.dtype)
    for k in range(ct.cdiv(A.shape[1], tk)):
        a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ZERO)
        acc = acc + a @ b
    ct.store(C, index=(bm, bn), tile=acc)


@ct.kernel
def k_gemm_f16_acc(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """mma with a float16 accumulator (float16 in, float16 out)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float16)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bm, bn), tile=acc)


def _torch():
    return pytest.importorskip("torch")


def _make_gemm_inputs(rng, M, N, K, dtype_name):
    """(A, B on the device, A and B as float64 numpy). bfloat16 comes from torch."""
    a64 = rng.standard_normal((M, K))
    b64 = rng.standard_normal((K, N))
    if dtype_name == "bfloat16":
        torch = _torch()
        A = torch.from_numpy(a64).to(device="cuda", dtype=torch.bfloat16)
        B = torch.from_numpy(b64).to(device="cuda", dtype=torch.bfloat16)
        return A, B, A.double().cpu().numpy(), B.double().cpu().numpy()
    np_dt = {"float16": np.float16, "float32": np.float32, "tfloat32": np.float32,
             "float64": np.float64}[dtype_name]
    a, b = a64.astype(np_dt), b64.astype(np_dt)
    if dtype_name == "tfloat32":
        return cp.asarray(a), cp.asarray(b), tf32_rne(a).astype(np.float64), tf32_rne(b).astype(np.float64)
    return cp.asarray(a), cp.asarray(b), a.astype(np.float64), b.astype(np.float64)


def tf32_rne(x):
    """float32 rounded to tfloat32's 10 mantissa bits, to nearest, ties to even
    (what cuBLAS and cuTile feed the tensor cores)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32)


def _sync_all():
    cp.cuda.Device().synchronize()
    try:
        import torch
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    except ImportError:
        pass


GEMM_CASES = [  # (tm, tn, tk), (M, N, K)
    ((64, 64, 32), (300, 200, 170)), ((64, 64, 32), (256, 256, 256)), ((64, 64, 32), (33, 65, 17)),
    ((128, 128, 64), (300, 200, 170)), ((16, 32, 16), (300, 200, 170)),
    ((128, 256, 64), (300, 600, 170)),
    # Row strides of a multiple of 16 bytes: 16-bit operands come by TMA
    # (the cases above take the cp.async route: their maps cannot be encoded).
    ((128, 128, 64), (296, 200, 168)), ((128, 256, 64), (300, 600, 176)), ((64, 128, 64), (256, 384, 512)),
    # float32 as tfloat32 by TMA, y transposed in shared memory (the second is
    # the bench's tile: 8 warps, three 48 KB stages)
    ((128, 128, 32), (384, 256, 520)), ((256, 128, 32), (520, 384, 296)),
    # cuTile's MatMul sample's float32 tile: mma.sync with 2x2 warps on sm_90
    # (the sample's tf32 check disagreed with torch; added, not yet run)
    ((32, 32, 32), (200, 136, 168)),
]


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "float32", "tfloat32"])
@pytest.mark.parametrize("tiles,MNK", GEMM_CASES,
                         ids=["x".join(map(str, t)) + "-" + "x".join(map(str, s)) for t, s in GEMM_CASES])
def test_gemm_mma(dtype_name, tiles, MNK, how, rng):
    """A full tiled GEMM: mma in a K loop, fp32 accumulate, ragged M/N/K, C in float32."""
    M, N, K = MNK
    tm, tn, tk = tiles
    if how == "index" and (tiles, MNK) != GEMM_CASES[0]:
        pytest.skip("kernel[grid] is checked on one shape")
    if tiles == (128, 256, 64) and dtype_name in ("float32", "tfloat32"):
        pytest.skip("128x256x64 is the 16-bit tensor-core tile")
    if tiles == (256, 128, 32) and dtype_name == "float32":
        pytest.skip("256x128x32 is the tfloat32 tile (float32 takes the FMA units)")
    A, B, a64, b64 = _make_gemm_inputs(rng, M, N, K, dtype_name)
    out = Guarded((M, N), np.float32)
    kernel = k_gemm_tf32 if dtype_name == "tfloat32" else k_gemm
    grid = (cdiv(M, tm), cdiv(N, tn))
    _sync_all()
    run(kernel, grid, (A, B, out.array, tm, tn, tk), how)
    _sync_all()
    ref = a64 @ b64
    mag = np.abs(a64) @ np.abs(b64)
    check(out.get(rng), ref, rng, f"gemm {dtype_name} {MNK} tiles {tiles}", 0,
          _matmul_tol(dtype_name, K, mag))


@pytest.mark.parametrize("tiles", [(128, 256, 64), (64, 128, 64)])
def test_gemm_misaligned_views(tiles, rng):
    """Views whose base is not 16-byte aligned (no TMA, no 16-byte cp.async):
    the same kernel moves their elements one by one, and agrees."""
    M, N, K = 200, 320, 136
    tm, tn, tk = tiles
    a64 = rng.standard_normal((M, K + 8))
    b64 = rng.standard_normal((K, N + 8))
    A = cp.asarray(a64.astype(np.float16))[:, 1:K + 1]
    B = cp.asarray(b64.astype(np.float16))[:, 3:N + 3]
    a, b = cp.asnumpy(A).astype(np.float64), cp.asnumpy(B).astype(np.float64)
    out = Guarded((M, N), np.float32)
    run(k_gemm, (cdiv(M, tm), cdiv(N, tn)), (A, B, out.array, tm, tn, tk))
    check(out.get(rng), a @ b, rng, f"gemm on misaligned views, tiles {tiles}", 0,
          _matmul_tol("float16", K, np.abs(a) @ np.abs(b)))


@pytest.mark.parametrize("tiles", [(256, 128, 32), (64, 64, 32)])
@pytest.mark.parametrize("layout", ["misaligned", "transposed"])
def test_gemm_tf32_views(tiles, layout, rng):
    """tfloat32 operands staged through registers from arrays that allow no
    16-byte loads (views whose base is 4 or 12 bytes into a row; Fortran-ordered
    arrays, contiguous down the columns): element by element, rounded alike."""
    M, N, K = 264, 200, 136
    tm, tn, tk = tiles
    a32 = rng.standard_normal((M, K + 8)).astype(np.float32)
    b32 = rng.standard_normal((K, N + 8)).astype(np.float32)
    if layout == "misaligned":
        A = cp.asarray(a32)[:, 1:K + 1]
        B = cp.asarray(b32)[:, 3:N + 3]
    else:
        A = cp.asfortranarray(cp.asarray(a32[:, :K]))
        B = cp.asfortranarray(cp.asarray(b32[:, :N]))
    a, b = cp.asnumpy(A), cp.asnumpy(B)
    out = Guarded((M, N), np.float32)
    run(k_gemm_tf32, (cdiv(M, tm), cdiv(N, tn)), (A, B, out.array, tm, tn, tk))
    a64, b64 = tf32_rne(a).astype(np.float64), tf32_rne(b).astype(np.float64)
    check(out.get(rng), a64 @ b64, rng, f"tf32 gemm on {layout} views, tiles {tiles}", 0,
          _matmul_tol("tfloat32", K, np.abs(a64) @ np.abs(b64)))


LOW_PRECISION_CASES = [  # (M, N, K), (tm, tn, tk), column offset of C in a wider array
    # Rows of 200 bytes: no 16-byte stores, each register pair stored as it is.
    ((200, 100, 300), (64, 64, 32), 0),
    # Rows of 16-byte multiples: whole tiles staged through shared memory and
    # stored 16 bytes a thread, ragged ones (M = 300) directly; the view case
    # is a strided C whose base is 16 bytes into its array.
    ((256, 384, 320), (64, 64, 32), 0), ((300, 512, 256), (128, 256, 64), 0),
    ((256, 384, 320), (64, 128, 64), 8), ((48, 64, 64), (16, 32, 16), 0),
]


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("MNK,tiles,offset", LOW_PRECISION_CASES,
                         ids=[f"{'x'.join(map(str, m))}-{'x'.join(map(str, t))}-off{o}" for m, t, o in LOW_PRECISION_CASES])
def test_gemm_mma_low_precision_output(dtype_name, MNK, tiles, offset, rng):
    """C in the inputs' dtype: the fp32 accumulator cast on the way out."""
    torch = _torch() if dtype_name == "bfloat16" else None
    M, N, K = MNK
    tm, tn, tk = tiles
    A, B, a64, b64 = _make_gemm_inputs(rng, M, N, K, dtype_name)
    if dtype_name == "bfloat16":
        whole = torch.full((M, N + offset), float("nan"), device="cuda", dtype=torch.bfloat16)
    else:
        whole = cp.full((M, N + offset), np.nan, np.float16)
    C = whole[:, offset:]
    _sync_all()
    run(k_gemm, (cdiv(M, tm), cdiv(N, tn)), (A, B, C, tm, tn, tk))
    _sync_all()
    host = whole.float().cpu().numpy() if dtype_name == "bfloat16" else cp.asnumpy(whole).astype(np.float32)
    assert np.isnan(host[:, :offset]).all(), "the store wrote outside its view"
    got = host[:, offset:]
    ref = a64 @ b64
    mag = np.abs(a64) @ np.abs(b64)
    rel = 8e-3 if dtype_name == "bfloat16" else 1e-3
    check(got, ref, rng, f"gemm {dtype_name} -> {dtype_name} {MNK} tiles {tiles}", rel, _matmul_tol(dtype_name, K, mag))


def test_gemm_matmul_operator_f32(rng):
    M, N, K = 150, 90, 100
    A, B, a64, b64 = _make_gemm_inputs(rng, M, N, K, "float32")
    out = Guarded((M, N), np.float32)
    run(k_gemm_matmul_op, (cdiv(M, 32), cdiv(N, 32)), (A, B, out.array, 32, 32, 32))
    check(out.get(rng), a64 @ b64, rng, "acc + a @ b (float32)", 0,
          _matmul_tol("float32", K, np.abs(a64) @ np.abs(b64)))


def test_gemm_f16_accumulator(rng):
    M, N, K = 128, 128, 64
    A, B, a64, b64 = _make_gemm_inputs(rng, M, N, K, "float16")
    C = cp.full((M, N), np.nan, np.float16)
    run(k_gemm_f16_acc, (2, 2), (A, B, C, 64, 64, 32))
    ref = a64 @ b64
    mag = np.abs(a64) @ np.abs(b64)
    check(cp.asnumpy(C), ref, rng, "mma with a float16 accumulator", 2e-3, 4e-3 * mag + 1e-3)


def test_gemm_float64(rng):
    M, N, K = 70, 50, 90
    A, B, a64, b64 = _make_gemm_inputs(rng, M, N, K, "float64")
    C = cp.full((M, N), np.nan, np.float64)
    run(k_gemm_matmul_op, (cdiv(M, 32), cdiv(N, 16)), (A, B, C, 32, 16, 16))
    check(cp.asnumpy(C), a64 @ b64, rng, "float64 acc + a @ b", 0,
          _matmul_tol("float64", K, np.abs(a64) @ np.abs(b64)))


@ct.kernel
def k_mma_and_int64_division(a, b, c, x, y, q, r, T: ConstInt):
    acc = ct.mma(ct.load(a, index=(0, 0), shape=(64, 16)), ct.load(b, index=(0, 0), shape=(16, 64)),
                 ct.zeros((64, 64), dtype=ct.float32))
    ct.store(c, index=(0, 0), tile=acc)
    tx = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ty = ct.load(y, index=(ct.bid(0),), shape=(T,))
    ct.store(q, index=(ct.bid(0),), tile=tx // ty)
    ct.store(r, index=(ct.bid(0),), tile=tx % ty)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_int64_division_beside_wgmma(dtype, rng):
    # A kernel with tensor-core work divides 64-bit integers in its own code
    # (not ptxas's subroutine): every magnitude, sign and the 32-bit fast path.
    T, n = 128, 1000
    info = np.iinfo(dtype)
    parts = [rng.integers(0, 1 << 31, n), rng.integers(0, info.max, n, dtype=dtype, endpoint=True),
             rng.integers(1, 1 << 12, n)]
    if dtype == "int64":
        parts.append(rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True))
    x = np.concatenate([p.astype(dtype) for p in parts])
    y = np.concatenate([p.astype(dtype) for p in parts[::-1]])
    rng.shuffle(y)
    y[y == 0] = 3
    x[:4] = [info.max, info.min, info.max, 1 << 40]
    y[:4] = [1, 7, info.max, (1 << 33) + 5]
    if dtype == "int64":
        y[4], x[4] = -1, info.min + 1
    a = cp.asarray(randn(rng, (64, 16), "float16"))
    b = cp.asarray(randn(rng, (16, 64), "float16"))
    c = cp.full((64, 64), np.nan, np.float32)
    qd, rd = cp.full(x.shape, 7, dtype), cp.full(x.shape, 7, dtype)
    run(k_mma_and_int64_division, (cdiv(x.size, T),), (a, b, c, cp.asarray(x), cp.asarray(y), qd, rd, T))
    q_ref, r_ref = np.floor_divide(x, y), np.mod(x, y)
    assert np.array_equal(cp.asnumpy(qd), q_ref), rng.seed_text
    assert np.array_equal(cp.asnumpy(rd), r_ref), rng.seed_text
    a64, b64 = cp.asnumpy(a).astype(np.float64), cp.asnumpy(b).astype(np.float64)
    check(cp.asnumpy(c), a64 @ b64, rng, "mma beside the division", 1e-3, 1e-3)


# ===========================================================================
# Row softmax, layer norm, segmented sum (the issue's kernels)
# ===========================================================================


@ct.kernel
def k_softmax(x, y, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN), padding_mode=ct.PaddingMode.NEG_INF)
    t = ct.astype(t, ct.float32)
    m = ct.max(t, axis=1, keepdims=True)
    e = ct.exp(t - m)
    s = ct.sum(e, axis=1, keepdims=True)
    ct.store(y, index=(i, 0), tile=ct.astype(e / s, y.dtype))


def _next_pow2(n):
    return 1 << (int(n) - 1).bit_length()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("M,N,TM", [(37, 1000, 1), (128, 64, 4), (5, 3, 1), (100, 200, 16), (64, 4096, 1)])
def test_softmax(dtype, M, N, TM, how, rng):
    x = randn(rng, (M, N), dtype, 3.0)
    y = Guarded((M, N), dtype)
    TN = _next_pow2(N)
    run(k_softmax, cdiv(M, TM), (cp.asarray(x), y.array, TM, TN), how)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    rtol, atol = (1e-5, 1e-7) if dtype == np.float32 else (2e-3, 1e-4)
    check(y.get(rng), want, rng, f"softmax {np.dtype(dtype).name} {M}x{N} rows/block {TM}", rtol, atol)


@ct.kernel
def k_layernorm(X, W, B, Y, Mean, Rstd, eps, TILE_N: ConstInt):
    """cuTile's LayerNorm sample (forward): loops over the row in TILE_N chunks."""
    bid_m = ct.bid(0)
    num_tiles = ct.num_tiles(X, axis=1, shape=(1, TILE_N))
    N = X.shape[1]
    mean = ct.full((1, TILE_N), 0, dtype=ct.float32)
    for j in range(num_tiles):
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=ZERO)
        mean += tx
    mean = ct.sum(mean, axis=1) / N
    ct.store(Mean, index=(bid_m,), tile=mean)
    var = ct.full((1, TILE_N), 0, dtype=ct.float32)
    for j in range(num_tiles):
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=ZERO)
        mask = (j * TILE_N + ct.arange(TILE_N, dtype=ct.int32)) < N
        centered_tx = ct.where(mask, tx - mean, 0)
        var += centered_tx ** 2
    var = ct.sum(var, axis=1) / N
    rstd = 1 / ct.sqrt(var + eps)
    ct.store(Rstd, index=(bid_m,), tile=rstd)
    for j in range(num_tiles):
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=ZERO)
        tw = ct.load(W, index=(j,), shape=(TILE_N,), padding_mode=ZERO)
        tb = ct.load(B, index=(j,), shape=(TILE_N,), padding_mode=ZERO)
        ty = (tx - mean) * rstd
        ty = ty * tw + tb
        ct.store(Y, index=(bid_m, j), tile=ty.astype(Y.dtype))


@pytest.mark.parametrize("M,N,TILE_N", [(64, 1000, 256), (33, 4096, 1024), (10, 77, 128), (16, 512, 512)])
def test_layernorm(M, N, TILE_N, how, rng):
    x = randn(rng, (M, N), np.float32, 2.0) + np.float32(rng.uniform(-3, 3))
    w = randn(rng, N, np.float32)
    b = randn(rng, N, np.float32)
    y = Guarded((M, N), np.float32)
    mean, rstd = Guarded((M,), np.float32), Guarded((M,), np.float32)
    eps = 1e-5
    run(k_layernorm, M, (cp.asarray(x), cp.asarray(w), cp.asarray(b), y.array, mean.array, rstd.array,
                         eps, TILE_N), how)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    var = x64.var(axis=1)
    rs = 1 / np.sqrt(var + eps)
    want = (x64 - mu[:, None]) * rs[:, None] * w + b
    check(mean.get(rng), mu, rng, f"layer norm mean {M}x{N}", 1e-5, 1e-5)
    check(rstd.get(rng), rs, rng, f"layer norm rstd {M}x{N}", 1e-4, 0)
    check(y.get(rng), want, rng, f"layer norm y {M}x{N} TILE_N={TILE_N}", 1e-4, 1e-4)


@ct.kernel
def segment_sums(x, out, TILE: ct.Constant[int]):
    seg = ct.bid(0)
    t = ct.load(x, index=(seg, 0), shape=(1, TILE))
    ct.store(out, index=(seg,), tile=ct.sum(t, axis=1))


@ct.kernel
def segment_sums_padded(x, out, TILE: ct.Constant[int]):
    seg = ct.bid(0)
    t = ct.load(x, index=(seg, 0), shape=(1, TILE), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(seg,), tile=ct.sum(t, axis=1))


@pytest.mark.parametrize("segments,length,tile", [(1000, 1024, 1024), (4096, 256, 256), (7, 32, 32),
                                                  (513, 1000, 1024), (100, 3, 4)])
def test_segment_sum(segments, length, tile, how, rng):
    """The issue's kernel: one block per segment, ct.sum over the row."""
    x = randn(rng, (segments, length), np.float32)
    out = Guarded((segments,), np.float32)
    kernel = segment_sums if length == tile else segment_sums_padded
    run(kernel, segments, (cp.asarray(x), out.array, tile), how)
    mag = np.abs(x.astype(np.float64)).sum(axis=1).max()
    check(out.get(rng), x.astype(np.float64).sum(axis=1), rng,
          f"segment sums {segments}x{length} tile {tile}", 0, 4 * np.finfo(np.float32).eps * mag)


# ===========================================================================
# Device output: ct.printf, ct.print, print() of tiles -- once a block, tiles
# printed whole. Run in a child process whose stdout (where vprintf writes) is
# read back.
# ===========================================================================

_PRINT_SCRIPT = r"""
import sys, importlib
import numpy as np, cupy as cp
ct = importlib.import_module(sys.argv[1])
x = cp.asarray(np.array(eval(sys.argv[2]), dtype=np.int32))
f = cp.asarray(np.array(eval(sys.argv[3]), dtype=np.float32))

@ct.kernel
def k(x, f):
    t = ct.arange(4, dtype=ct.int32)
    ct.printf("one tile: %d\n", t)
    ct.printf("two tiles: %d, %f\n", t, t * 2.0)
    m = ct.load(x, index=(0, 0), shape=(2, 4))
    ct.printf("2d: %d|\n", m)
    ct.printf("prec: %.2f %5d|\n", ct.load(f, index=(0,), shape=(4,)), t)
    ct.print("tile:", t, sep="=")
    ct.print("scalar", ct.bid(0), 3.5)
    ct.print(t, end="")
    ct.print("|after")
    print("builtin", m, 7)
    ct.printf("zero-d %d\n", ct.sum(m))
    ct.printf("bool %d\n", t > 1)
    ct.printf("f16 %f\n", t.astype(ct.float16))
    ct.printf("hex %x %%\n", m)

@ct.kernel
def per_block(x):
    ct.printf("block %d: %d\n", ct.bid(0), ct.load(x, index=(0, 0), shape=(1, 4)))
    print("plain", ct.bid(0))

s = cp.cuda.get_current_stream()
ct.launch(s, (1,), k, (x, f))
cp.cuda.Device().synchronize()
sys.stdout.flush()
print("----", flush=True)
ct.launch(s, (3,), per_block, (x,))
cp.cuda.Device().synchronize()
"""


def test_printf_and_print(rng, tmp_path):
    import subprocess
    import sys
    xh = rng.integers(-50, 50, size=(2, 4))
    fh = rng.integers(-400, 400, size=4) / 4   # two decimals, exact in binary
    script = tmp_path / "print_kernels.py"   # a file: cuTile reads the kernels' source
    script.write_text(_PRINT_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), IMPL, repr(xh.tolist()), repr(fh.tolist())],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, blocks = proc.stdout.split("----\n")

    def tile(values, spec="%d"):
        return "[" + ", ".join(spec % v for v in values) + "]"
    m = "[" + ", ".join(tile(r) for r in xh) + "]"
    want = [
        "one tile: [0, 1, 2, 3]",
        "two tiles: [0, 1, 2, 3], [0.000000, 2.000000, 4.000000, 6.000000]",
        f"2d: {m}|",
        f"prec: {tile(fh, '%.2f')} {tile(range(4), '%5d')}|",
        "tile:=[0, 1, 2, 3]",
        "scalar 0 3.5",
        "[0, 1, 2, 3]|after",
        f"builtin {m} 7",
        f"zero-d {int(xh.sum())}",
        "bool [0, 0, 1, 1]",
        "f16 [0.000000, 1.000000, 2.000000, 3.000000]",
        "hex [" + ", ".join(tile(r, "%x") for r in (xh.astype(np.int64) & 0xFFFFFFFF).tolist()) + "] %",
    ]
    assert first.splitlines() == want, rng.seed_text + "\n" + first
    # Once a block, not once a thread (cuTile may interleave the blocks' lines
    # mid-line: counted there; cudajit prints each line with one vprintf).
    row = tile(xh[0])
    assert blocks.count(f"[{row}]") == 3 and blocks.count("plain") == 3, rng.seed_text + "\n" + blocks
    if IS_CUDAJIT:
        expect = sorted([f"block {b}: [{row}]" for b in range(3)] + [f"plain {b}" for b in range(3)])
        assert sorted(blocks.splitlines()) == expect, rng.seed_text + "\n" + blocks


_FSTRING_SCRIPT = r"""
import sys
import numpy as np, cupy as cp
import cudajit
import cudajit.tile as ct
f = cp.asarray(np.array(eval(sys.argv[1]), dtype=np.float32))

@ct.kernel
def k(f):
    t = ct.arange(4, dtype=ct.int32)
    print(f"fs {t} {ct.bid(0)}:{3.5:.2f}")
    ct.print(f"spec {ct.load(f, index=(0,), shape=(4,)):.2f}|{ct.sum(t):>4d}|")

@cudajit.jit
def simt(f):
    i = cudajit.threadIdx.x
    print(f"thread {i}: {f[i]:.2f} {i * 3:x}")

ct.launch(cp.cuda.get_current_stream(), (1,), k, (f,))
cp.cuda.Device().synchronize()
sys.stdout.flush()
print("----", flush=True)
simt[1, 4](f)
cp.cuda.Device().synchronize()
"""


@pytest.mark.skipif(not IS_CUDAJIT, reason="cudajit's f-strings (the cuda.tile run checks printf/print above)")
def test_fstring_print(rng, tmp_path):
    """f-strings as print's and ct.print's argument (tile kernels print once a
    block, a tile's elements each formatted by the spec) and in a SIMT
    kernel's print (every thread)."""
    import subprocess
    import sys
    fh = rng.integers(-400, 400, size=4) / 4   # two decimals, exact in binary
    script = tmp_path / "fstring_kernels.py"
    script.write_text(_FSTRING_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), repr(fh.tolist())], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tiles, threads = proc.stdout.split("----\n")
    spec = "[" + ", ".join("%.2f" % v for v in fh) + "]"
    assert tiles.splitlines() == ["fs [0, 1, 2, 3] 0:3.50", f"spec {spec}|   6|"], rng.seed_text + "\n" + tiles
    want = sorted(f"thread {i}: {fh[i]:.2f} {i * 3:x}" for i in range(4))
    assert sorted(threads.splitlines()) == want, rng.seed_text + "\n" + threads


# ===========================================================================
# More of cuTile's API: call spellings, batched matmul, cat, newaxis indexing,
# cumprod, scan / reduce with a function, gather / scatter, atomic_add
# ===========================================================================


@ct.kernel
def k_spellings(x, y, z, T: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, (i,), T)                         # positional index, an int shape
    ct.store(y, (i,), t)                            # positional tile
    u = ct.load(x, index=(i,), shape=(T,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(z, index=(i,), tile=u.astype(z.dtype) * 2)


def test_load_store_spellings(rng):
    n, T = 300, 64
    x = rand(rng, n, np.float32)
    y, z = Guarded((n,), np.float32), Guarded((n,), np.float64)
    run(k_spellings, cdiv(n, T), (cp.asarray(x), y.array, z.array, T))
    check(y.get(rng), x, rng, "ct.load(x, (i,), T) / ct.store(y, (i,), t)")
    check(z.get(rng), x.astype(np.float64) * 2, rng, "keyword spelling")


@ct.kernel
def k_matmul_batched(a, b, c, NB: ConstInt, TM: ConstInt, TN: ConstInt, TK: ConstInt):
    ta = ct.load(a, index=(0, 0, 0), shape=(NB, TM, TK))
    tb = ct.load(b, index=(0, 0), shape=(TK, TN))              # broadcast over the batch
    acc = ct.full((NB, TM, TN), 1.0, dtype=ct.float32)
    ct.store(c, index=(0, 0, 0), tile=ct.mma(ta, tb, acc))


def test_matmul_batched(rng):
    NB, TM, TN, TK = 4, 32, 16, 32
    a = randn(rng, (NB, TM, TK), np.float16)
    b = randn(rng, (TK, TN), np.float16)
    c = cp.full((NB, TM, TN), np.nan, np.float32)
    run(k_matmul_batched, 1, (cp.asarray(a), cp.asarray(b), c, NB, TM, TN, TK))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check(cp.asnumpy(c), a64 @ b64 + 1, rng, "batched mma (3-d x 2-d)", 0,
          _matmul_tol("float16", TK, np.abs(a64) @ np.abs(b64)))


@ct.kernel
def k_cat(x, y, out0, out1, T: ConstInt):
    tx = ct.load(x, index=(0, 0), shape=(T, T))
    ty = ct.load(y, index=(0, 0), shape=(T, T))
    ct.store(out0, index=(0, 0), tile=ct.cat((tx, ty), 0))
    ct.store(out1, index=(0, 0), tile=ct.cat((tx, ty), axis=1))


def test_cat(rng):
    T = 16
    x = rand(rng, (T, T), np.int32, -100, 100)
    y = rand(rng, (T, T), np.int32, -100, 100)
    o0, o1 = Guarded((2 * T, T), np.int32), Guarded((T, 2 * T), np.int32)
    run(k_cat, 1, (cp.asarray(x), cp.asarray(y), o0.array, o1.array, T))
    check(o0.get(rng), np.concatenate([x, y], 0), rng, "cat axis 0")
    check(o1.get(rng), np.concatenate([x, y], 1), rng, "cat axis 1")


@ct.kernel
def k_newaxis(col, row, out, TM: ConstInt, TN: ConstInt):
    tc = ct.load(col, index=(0,), shape=(TM,))
    tr = ct.load(row, index=(0,), shape=(TN,))
    ct.store(out, index=(0, 0), tile=tc[:, None] - tr[None, :])


def test_getitem_newaxis(rng):
    TM, TN = 32, 64
    c, r = rand(rng, TM, np.float32), rand(rng, TN, np.float32)
    out = Guarded((TM, TN), np.float32)
    run(k_newaxis, 1, (cp.asarray(c), cp.asarray(r), out.array, TM, TN))
    check(out.get(rng), c[:, None] - r[None, :], rng, "t[:, None] - u[None, :]")


def _combine_add(a, b):
    return a + b


def _combine_max(a, b):
    return ct.maximum(a, b)


@ct.kernel
def k_scan_reduce(x, cp_out, scan_out, red_out, TM: ConstInt, TN: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(cp_out, index=(i, 0), tile=ct.cumprod(t, axis=1))
    ct.store(scan_out, index=(i, 0), tile=ct.scan(t, 1, _combine_add, 0, reverse=True))
    ct.store(red_out, index=(i,), tile=ct.reduce(t, 1, _combine_max, -1000000))


def test_cumprod_scan_reduce(rng):
    TM, TN, blocks = 8, 16, 3
    x = rng.choice(np.array([-1, 1, 1, 2], np.int32), size=(blocks * TM, TN))
    o_cp, o_scan = Guarded(x.shape, np.int32), Guarded(x.shape, np.int32)
    o_red = Guarded((blocks * TM,), np.int32)
    run(k_scan_reduce, blocks, (cp.asarray(x), o_cp.array, o_scan.array, o_red.array, TM, TN))
    check(o_cp.get(rng), np.cumprod(x, axis=1, dtype=np.int32), rng, "cumprod axis 1")
    check(o_scan.get(rng), np.flip(np.cumsum(np.flip(x, 1), axis=1, dtype=np.int32), 1), rng,
          "scan(add, reverse=True)")
    check(o_red.get(rng), x.max(axis=1), rng, "reduce(maximum)")


@ct.kernel
def k_gather_scatter(x, g_out, s_out, n, T: ConstInt):
    i = ct.bid(0)
    pos = i * T + ct.arange(T, dtype=ct.int32)
    rev = n - 1 - pos                                          # negative past the end: out of bounds
    t = ct.gather(x, rev, padding_value=-7.0)                  # x reversed; -7 where out of bounds
    ct.store(g_out, index=(i,), tile=t)
    ct.scatter(s_out, pos, t, mask=t > 0)                      # positive values only; pos >= n skipped


@ct.kernel
def k_gather_2d(X, out, TM: ConstInt, TN: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    r = ct.expand_dims(i * TM + ct.arange(TM, dtype=ct.int32), 1)          # (TM, 1)
    c = ct.expand_dims(X.shape[1] - 1 - (j * TN + ct.arange(TN, dtype=ct.int32)), 0)   # (1, TN)
    t = ct.gather(X, (r, c), mask=(r + c) % 3 != 0, padding_value=0.5)
    ct.store(out, index=(i, j), tile=t)


def test_gather_scatter_1d(rng):
    n, T = 1000, 128
    x = rand(rng, n, np.float32)
    padded = cdiv(n, T) * T
    g_out = poisoned(padded, np.float32)
    s_out = Guarded((n,), np.float32)
    run(k_gather_scatter, cdiv(n, T), (cp.asarray(x), g_out, s_out.array, n, T))
    want_g = np.full(padded, -7.0, np.float32)
    want_g[:n] = x[::-1]
    check(cp.asnumpy(g_out), want_g, rng, "gather with out-of-bounds padding_value")
    got_s = s_out.get(rng)
    want_s = np.where(x[::-1] > 0, x[::-1], np.nan).astype(np.float32)
    check(got_s, want_s, rng, "scatter with mask (masked elements untouched)")


def test_gather_2d_mask(rng):
    M, N, TM, TN = 40, 70, 16, 32
    X = rand(rng, (M, N), np.float32)
    out = Guarded((M, N), np.float32)
    run(k_gather_2d, (cdiv(M, TM), cdiv(N, TN)), (cp.asarray(X), out.array, TM, TN))
    r = np.arange(M)[:, None]
    c = (N - 1 - np.arange(N))[None, :]
    want = np.where((r + c) % 3 != 0, X[r, c], np.float32(0.5)).astype(np.float32)
    check(out.get(rng), want, rng, "gather 2-d with mask")


@ct.kernel
def k_histogram(x, hist, n, T: ConstInt):
    i = ct.bid(0)
    pos = i * T + ct.arange(T, dtype=ct.int32)
    v = ct.gather(x, pos, padding_value=-1)                    # -1 past the end: out of bounds
    ct.atomic_add(hist, v, 1)


@ct.kernel
def k_atomic_old(y, old_out, upd, T: ConstInt):
    i = ct.bid(0)
    pos = i * T + ct.arange(T, dtype=ct.int32)
    u = ct.load(upd, index=(i,), shape=(T,))
    old = ct.atomic_add(y, pos, u)                             # unique indices: old = y before
    ct.store(old_out, index=(i,), tile=old)


@pytest.mark.parametrize("bins", [16, 1000])
def test_atomic_add_histogram(bins, rng):
    n, T = 5000, 256
    x = rng.integers(0, bins, size=n).astype(np.int32)
    hist = cp.zeros(bins, np.int32)
    run(k_histogram, cdiv(n, T), (cp.asarray(x), hist, n, T))
    check(cp.asnumpy(hist), np.bincount(x, minlength=bins).astype(np.int32), rng, "atomic_add histogram")


def test_atomic_add_returns_old(rng):
    n, T = 1024, 128
    y0 = rand(rng, n, np.int32, -1000, 1000)
    u = rand(rng, n, np.int32, -1000, 1000)
    y = cp.asarray(y0)
    old = Guarded((n,), np.int32)
    run(k_atomic_old, n // T, (y, old.array, cp.asarray(u), T))
    check(old.get(rng), y0, rng, "atomic_add returns the old values")
    check(cp.asnumpy(y), y0 + u, rng, "atomic_add result")


# ===========================================================================
# cudajit only: bad kernels give cudajit.CompileError naming the operation
# ===========================================================================


@ct.kernel
def k_bad_shape(x, y):
    t = ct.load(x, index=(ct.bid(0),), shape=(12,))
    ct.store(y, index=(ct.bid(0),), tile=t)


@ct.kernel
def k_bad_broadcast(x, y):
    a = ct.load(x, index=(0,), shape=(16,))
    b = ct.load(x, index=(0,), shape=(32,))
    ct.store(y, index=(0,), tile=a + b)


@ct.kernel
def k_nonconstant_shape(x, y, n):
    t = ct.load(x, index=(0,), shape=(n,))
    ct.store(y, index=(0,), tile=t)


@ct.kernel
def k_bad_mma(x, y):
    a = ct.load(x, index=(0, 0), shape=(16, 32))
    b = ct.load(x, index=(0, 0), shape=(16, 16))
    acc = ct.zeros((16, 16), dtype=ct.float32)
    ct.store(y, index=(0, 0), tile=ct.mma(a, b, acc))


def _compile_error(kernel, args, how):
    import cudajit
    with pytest.raises(cudajit.CompileError) as info:
        run(kernel, 1, args, how)
    return str(info.value)


@pytest.mark.skipif(not IS_CUDAJIT, reason="cudajit's CompileError")
def test_error_non_power_of_two_shape(how):
    x = cp.ones(64, np.float32)
    msg = _compile_error(k_bad_shape, (x, cp.empty_like(x)), how)
    assert "load" in msg and "12" in msg, msg
    assert "power of two" in msg or "power-of-two" in msg or "power of 2" in msg, msg


@pytest.mark.skipif(not IS_CUDAJIT, reason="cudajit's CompileError")
def test_error_shape_mismatch(how):
    x = cp.ones(64, np.float32)
    msg = _compile_error(k_bad_broadcast, (x, cp.empty_like(x)), how)
    assert "16" in msg and "32" in msg, msg
    assert "+" in msg or "add" in msg or "broadcast" in msg, msg


@pytest.mark.skipif(not IS_CUDAJIT, reason="cudajit's CompileError")
def test_error_nonconstant_shape(how):
    x = cp.ones(64, np.float32)
    msg = _compile_error(k_nonconstant_shape, (x, cp.empty_like(x), 16), how)
    assert "load" in msg and "constant" in msg.lower(), msg


@pytest.mark.skipif(not IS_CUDAJIT, reason="cudajit's CompileError")
def test_error_mma_shapes(how):
    x = cp.ones((64, 64), np.float32)
    msg = _compile_error(k_bad_mma, (x, cp.empty_like(x)), how)
    assert "mma" in msg and "32" in msg and "16" in msg, msg
