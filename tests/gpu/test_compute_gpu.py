"""cudajit.compute on the GPU against numpy, on fresh random data: every
algorithm for int32/int64/float32/float64, sizes from 0 and 1 past tile and
block edges to 2^28, OpKind and user operators (a non-commutative one for
the scans), ragged segments with empty ones, each iterator kind, the
make_* objects' temporary-storage protocol, CuPy and PyTorch inputs,
streams."""
import os

import numpy as np
import pytest

import cudajit as cuda
import cudajit.compute as cc

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cub_cache")]

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
DTYPES = [np.int32, np.int64, np.float32, np.float64]
SIZES = [0, 1, 2, 255, 256, 257, 1919, 1920, 1921, 3841, 4096, 4097, 65536 + 3, 1_000_003]   # scan tiles: 1920


def rand(rng, n, dtype):
    if np.dtype(dtype).kind == "f":
        return (rng.random(n) * 2 - 1).astype(dtype)
    return rng.integers(-1000, 1000, n).astype(dtype)


def poison(n, dtype):
    value = np.nan if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min
    return cuda.to_device(np.full(n, value, dtype))


def close(got, want, dtype, n=1):
    if np.dtype(dtype).kind == "f":
        tol = (1e-5 if dtype == np.float32 else 1e-12) * max(1.0, np.sqrt(n))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def maximum(a, b):
    return a if a > b else b


def last_nonzero(a, b):     # associative, not commutative: the scans' order shows
    return b if b != 0 else a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce_sum_and_max(dtype, n):
    rng = np.random.default_rng(SEED + n)
    h = rand(rng, n, dtype)
    d = cuda.to_device(h)
    out = poison(1, dtype)
    init = np.array([7], dtype)
    cc.reduce_into(d, out, cc.OpKind.PLUS, n, init)
    want = dtype(7) + h.astype(np.float64 if np.dtype(dtype).kind == "f" else dtype).sum()
    close(out.copy_to_host()[0], want, dtype, n)
    cc.reduce_into(d, out, maximum, n, np.array([-5000], dtype))
    assert out.copy_to_host()[0] == (max(h.max(), dtype(-5000)) if n else dtype(-5000))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_min_user_op_and_object(dtype):
    rng = np.random.default_rng(SEED)
    n = 300_001
    h = rand(rng, n, dtype)
    d, out = cuda.to_device(h), poison(1, dtype)
    init = np.array([10_000], dtype)
    obj = cc.make_reduce_into(d, out, cc.OpKind.MINIMUM, init)
    need = obj(None, d, out, n, cc.OpKind.MINIMUM, init)
    assert need > 0
    with pytest.raises(ValueError, match="temp_storage holds 16 bytes; this call needs"):
        obj(cuda.device_array(16, np.uint8), d, out, n, cc.OpKind.MINIMUM, init)
    temp = cuda.device_array(need, np.uint8)
    assert obj(temp, d, out, n, cc.OpKind.MINIMUM, init) == need
    assert out.copy_to_host()[0] == h.min()
    h2 = rand(rng, n, dtype)   # the object again, other data
    d2 = cuda.to_device(h2)
    obj(temp, d2, out, n, cc.OpKind.MINIMUM, init)
    assert out.copy_to_host()[0] == h2.min()


def test_reduce_large_int32_with_int64_accumulator():
    rng = np.random.default_rng(SEED)
    n = 2**28
    h = rng.integers(-(2**20), 2**20, n, dtype=np.int32)
    out = poison(1, np.int64)
    cc.reduce_into(cuda.to_device(h), out, cc.OpKind.PLUS, n, np.array([0], np.int64))
    assert out.copy_to_host()[0] == h.astype(np.int64).sum()


def test_reduce_iterators():
    rng = np.random.default_rng(SEED)
    n = 1_000_000
    out = poison(1, np.int64)
    cc.reduce_into(cc.CountingIterator(np.int64(5)), out, cc.OpKind.PLUS, n, np.array([0], np.int64))
    assert out.copy_to_host()[0] == np.arange(5, 5 + n, dtype=np.int64).sum()
    cc.reduce_into(cc.ConstantIterator(np.int64(3)), out, cc.OpKind.PLUS, n, np.array([1], np.int64))
    assert out.copy_to_host()[0] == 3 * n + 1
    # transform-reduce without a temporary array: sum of squares
    h = rand(rng, n, np.float64)
    outf = poison(1, np.float64)
    it = cc.TransformIterator(cuda.to_device(h), lambda v: v * v)
    cc.reduce_into(it, outf, cc.OpKind.PLUS, n, np.array([0.0]))
    close(outf.copy_to_host()[0], (h * h).sum(), np.float64, n)
    # reverse: a scan shows the order (reductions need commutative operators, as CUB's)
    hr = rand(rng, 1000, np.int32)
    outi = poison(1, np.int32)
    outs = poison(1000, np.int32)
    cc.inclusive_scan(cc.ReverseIterator(cuda.to_device(hr)), outs, cc.OpKind.PLUS, None, 1000)
    np.testing.assert_array_equal(outs.copy_to_host(), np.cumsum(hr[::-1]).astype(np.int32))
    cc.reduce_into(cc.CacheModifiedInputIterator(cuda.to_device(hr), "stream"), outi, cc.OpKind.MAXIMUM, 1000,
                   np.array([-5000], np.int32))
    assert outi.copy_to_host()[0] == hr.max()
    # permutation: a scan of values in a shuffled order shows the order
    perm = rng.permutation(1000).astype(np.int32)
    cc.inclusive_scan(cc.PermutationIterator(cuda.to_device(hr), cuda.to_device(perm)), outs, cc.OpKind.PLUS,
                      None, 1000)
    np.testing.assert_array_equal(outs.copy_to_host(), np.cumsum(hr[perm]).astype(np.int32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_segmented_reduce_ragged_with_empty_segments(dtype):
    rng = np.random.default_rng(SEED)
    lengths = rng.integers(0, 3000, 500)
    lengths[::7] = 0
    lengths[3] = 100_000
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    h = rand(rng, int(offsets[-1]), dtype)
    out = poison(len(lengths), dtype)
    init = np.array([3], dtype)
    d_off = cuda.to_device(offsets)
    cc.segmented_reduce(cuda.to_device(h), out, d_off[:-1], d_off[1:], cc.OpKind.PLUS, init, len(lengths))
    want = np.array([dtype(3) + h[a:b].sum(dtype=np.float64 if np.dtype(dtype).kind == "f" else dtype)
                     for a, b in zip(offsets[:-1], offsets[1:])])
    close(out.copy_to_host(), want.astype(dtype), dtype, 3000)
    cc.segmented_reduce(cuda.to_device(h), out, d_off[:-1], d_off[1:], maximum, np.array([-5000], dtype),
                        len(lengths))
    want = np.array([max(h[a:b].max(), dtype(-5000)) if b > a else dtype(-5000)
                     for a, b in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_segmented_reduce_int32_offsets_and_iterator_offsets():
    rng = np.random.default_rng(SEED)
    segs, width = 2000, 37
    h = rand(rng, segs * width, np.float32)
    out = poison(segs, np.float32)
    starts = cc.TransformIterator(cc.CountingIterator(np.int64(0)), lambda s: s * 37)
    ends = cc.TransformIterator(cc.CountingIterator(np.int64(1)), lambda s: s * 37)
    cc.segmented_reduce(cuda.to_device(h), out, starts, ends, cc.OpKind.PLUS, np.zeros(1, np.float32), segs)
    close(out.copy_to_host(), h.reshape(segs, width).sum(axis=1), np.float32, width)
    off = cuda.to_device(np.arange(0, (segs + 1) * width, width, dtype=np.int32))
    cc.segmented_reduce(cuda.to_device(h), out, off[:-1], off[1:], cc.OpKind.PLUS, np.zeros(1, np.float32), segs)
    close(out.copy_to_host(), h.reshape(segs, width).sum(axis=1), np.float32, width)


def _scan_reference(h, dtype, init, exclusive, op=np.add):
    acc = h.astype(np.float64) if np.dtype(dtype).kind == "f" else h.astype(dtype)
    if op is np.add:
        inc = np.cumsum(acc) + (0 if init is None else init)
    else:
        inc = op.accumulate(acc)
        if init is not None:
            inc = op(init, inc)
    if exclusive:
        return np.concatenate([[init], inc[:-1]]).astype(dtype)
    return inc.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_scans(dtype, n):
    rng = np.random.default_rng(SEED + n)
    h = rand(rng, n, dtype)
    d = cuda.to_device(h)
    for exclusive, init in ((False, None), (False, dtype(5)), (True, dtype(5))):
        out = poison(n, dtype)
        fn = cc.exclusive_scan if exclusive else cc.inclusive_scan
        fn(d, out, cc.OpKind.PLUS, None if init is None else np.array([init], dtype), n)
        if n:
            want = _scan_reference(h, dtype, init, exclusive)
            got = out.copy_to_host()
            if np.dtype(dtype).kind == "f":
                tol = (1e-4 if dtype == np.float32 else 1e-10) * np.sqrt(n)
                np.testing.assert_allclose(got, want, atol=tol * 2, rtol=tol)
            else:
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 1920 * 3 + 1, 1_000_000])
def test_scan_non_commutative_operator(n):
    rng = np.random.default_rng(SEED)
    h = rng.integers(0, 4, n).astype(np.int32)   # many zeros
    out = poison(n, np.int32)
    cc.inclusive_scan(cuda.to_device(h), out, last_nonzero, np.array([-1], np.int32), n)
    want = np.empty(n, np.int32)
    cur = -1
    for k, v in enumerate(h):
        cur = v if v != 0 else cur
        want[k] = cur
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_scan_2_28_and_counting_iterator():
    n = 2**28
    out = poison(n, np.int64)
    cc.inclusive_scan(cc.CountingIterator(np.int64(0)), out, cc.OpKind.PLUS, None, n)
    got = out.copy_to_host()
    idx = np.array([0, 1, 2, 1919, 1920, 1921, n // 2, n - 2, n - 1], dtype=np.int64)
    np.testing.assert_array_equal(got[idx], idx * (idx + 1) // 2)
    np.testing.assert_array_equal(np.diff(got[:: 4097].astype(np.int64))[:5] > 0, True)
    assert (np.diff(got) == np.arange(1, n, dtype=np.int64)).all()


def test_scan_object_and_temp_storage():
    rng = np.random.default_rng(SEED)
    n = 500_000
    h = rand(rng, n, np.int64)
    d, out = cuda.to_device(h), poison(n, np.int64)
    obj = cc.make_exclusive_scan(d, out, cc.OpKind.PLUS, np.array([0], np.int64))
    need = obj(None, d, out, cc.OpKind.PLUS, np.array([0], np.int64), n)
    temp = cuda.device_array(need, np.uint8)
    for _ in range(2):   # a temp buffer reused: the tile states are cleared each call
        obj(temp, d, out, cc.OpKind.PLUS, np.array([0], np.int64), n)
        np.testing.assert_array_equal(out.copy_to_host(), np.concatenate([[0], np.cumsum(h)[:-1]]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_transforms(dtype):
    rng = np.random.default_rng(SEED)
    n = 100_003
    a, b = rand(rng, n, dtype), rand(rng, n, dtype)
    out = poison(n, dtype)
    cc.unary_transform(cuda.to_device(a), out, lambda v: -v + 1, n)
    close(out.copy_to_host(), (-a + 1).astype(dtype), dtype)
    cc.binary_transform(cuda.to_device(a), cuda.to_device(b), out, cc.OpKind.MINIMUM, n)
    np.testing.assert_array_equal(out.copy_to_host(), np.minimum(a, b))
    cc.binary_transform(cc.CountingIterator(dtype(1)), cuda.to_device(b), out, cc.OpKind.PLUS, n)
    close(out.copy_to_host(), (np.arange(1, n + 1) + b).astype(dtype), dtype)


def test_zip_iterator():
    # an operator gets the zipped items as a tuple (t[0], t[1], ...)
    rng = np.random.default_rng(SEED + 17)
    n = 100_003
    a, b = rand(rng, n, np.float32), rand(rng, n, np.int64)
    da, db = cuda.to_device(a), cuda.to_device(b)
    out = poison(n, np.float64)
    cc.unary_transform(cc.ZipIterator(da, db), out, lambda t: t[0] * t[1], n)
    close(out.copy_to_host(), a.astype(np.float64) * b, np.float64)
    cc.binary_transform(cc.ZipIterator(da, cc.CountingIterator(np.int64(3))), db, out,
                        lambda t, y: t[0] + t[1] - y, n)
    close(out.copy_to_host(), a.astype(np.float64) + np.arange(3, n + 3) - b, np.float64)
    # a reduction of TransformIterator(zip, op): the dot product, no temporary array
    res = poison(1, np.float64)
    cc.reduce_into(cc.TransformIterator(cc.ZipIterator(da, db), lambda t: t[0] * t[1]), res, cc.OpKind.PLUS,
                   n, np.zeros(1, np.float64))
    close(res.copy_to_host(), [np.dot(a.astype(np.float64), b)], np.float64, n)
    # a permutation of zipped items
    idx = rng.permutation(n).astype(np.int64)
    cc.unary_transform(cc.PermutationIterator(cc.ZipIterator(da, db), cuda.to_device(idx)), out,
                       lambda t: t[1] - t[0], n)
    close(out.copy_to_host(), b[idx] - a[idx].astype(np.float64), np.float64)


def test_cupy_and_torch_inputs_and_streams():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED)
    n = 1_000_001
    h = rand(rng, n, np.float32)
    x = cp.asarray(h)
    out = cp.full(1, np.nan, np.float32)
    s = cp.cuda.Stream(non_blocking=True)
    cc.reduce_into(x, out, cc.OpKind.PLUS, n, np.zeros(1, np.float32), stream=s)
    s.synchronize()
    close(out.get()[0], h.astype(np.float64).sum(), np.float32, n)
    outs = cp.full(n, np.nan, np.float32)
    cc.inclusive_scan(x, outs, cc.OpKind.PLUS, None, n, stream=s)
    s.synchronize()
    np.testing.assert_allclose(outs.get(), np.cumsum(h, dtype=np.float64), rtol=1e-3, atol=1e-2)
    torch = pytest.importorskip("torch")
    t = torch.as_tensor(h, device="cuda")
    tout = torch.full((1,), float("nan"), device="cuda")
    cc.reduce_into(t, tout, cc.OpKind.MAXIMUM, n, np.array([-2.0], np.float32))
    torch.cuda.synchronize()
    assert tout.item() == h.max()


def test_errors():
    d = cuda.to_device(np.arange(10, dtype=np.int32))
    out = poison(1, np.int32)
    with pytest.raises(TypeError, match="returns float64 for int32 operands"):
        cc.reduce_into(d, out, lambda a, b: a / b, 10, np.array([0], np.int32))
    with pytest.raises(TypeError, match="d_in must be a device array"):
        cc.reduce_into(np.arange(10), out, cc.OpKind.PLUS, 10, np.array([0], np.int32))
    with pytest.raises(ValueError, match="exclusive_scan needs an init_value"):
        cc.exclusive_scan(d, poison(10, np.int32), cc.OpKind.PLUS, None, 10)
    with pytest.raises(ValueError, match="d_out holds 1 items, num_items is 10"):
        cc.inclusive_scan(d, out, cc.OpKind.PLUS, None, 10)
    with pytest.raises(ValueError, match="OpKind.NEGATE takes 1 operand"):
        cc.reduce_into(d, out, cc.OpKind.NEGATE, 10, np.array([0], np.int32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 3841, 1_000_003])
def test_select(dtype, n):
    rng = np.random.default_rng(SEED + n)
    h = rand(rng, n, dtype)
    out = poison(max(n, 1), dtype)
    count = cuda.to_device(np.array([-1], np.int64))
    cc.select(cuda.to_device(h), out, count, lambda v: v > 0, n)
    want = h[h > 0]
    assert count.copy_to_host()[0] == len(want)
    np.testing.assert_array_equal(out.copy_to_host()[: len(want)], want)


@pytest.mark.parametrize("n", [1, 1920 + 5, 500_000])
def test_unique_by_key(n):
    rng = np.random.default_rng(SEED)
    keys = np.sort(rng.integers(0, n // 3 + 2, n)).astype(np.int32)
    vals = rng.random(n).astype(np.float32)
    ok, ov = poison(n, np.int32), poison(n, np.float32)
    count = cuda.to_device(np.array([-1], np.int32))
    cc.unique_by_key(cuda.to_device(keys), cuda.to_device(vals), ok, ov, count, cc.OpKind.EQUAL_TO, n)
    first = np.concatenate([[True], keys[1:] != keys[:-1]])
    m = int(first.sum())
    assert count.copy_to_host()[0] == m
    np.testing.assert_array_equal(ok.copy_to_host()[:m], keys[first])
    np.testing.assert_array_equal(ov.copy_to_host()[:m], vals[first])


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
@pytest.mark.parametrize("levels", [2, 65, 5000])
def test_histogram_even(dtype, levels):
    rng = np.random.default_rng(SEED)
    n = 1_000_003
    bins = levels - 1
    lo, hi = dtype(-100), dtype(300)
    if np.dtype(dtype).kind == "f":   # bin centres with jitter: no sample sits on an edge
        width = (hi - lo) / bins
        h = (lo + (rng.integers(-3, bins + 3, n) + 0.5 + (rng.random(n) - 0.5) * 0.5) * width).astype(dtype)
    else:
        h = rng.integers(-150, 350, n).astype(dtype)
    hist = cuda.to_device(np.full(bins, -7, np.int32))
    cc.histogram_even(cuda.to_device(h), hist, levels, lo, hi, n)
    if np.dtype(dtype).kind == "f":
        want, _ = np.histogram(h[(h >= lo) & (h < hi)], bins=bins, range=(float(lo), float(hi)))
    else:
        inside = h[(h >= lo) & (h < hi)].astype(np.int64)
        want = np.bincount((inside - lo) * bins // (hi - lo), minlength=bins)
    np.testing.assert_array_equal(hist.copy_to_host(), want)


def _keys(rng, n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        k = (rng.random(n) * 2 - 1) * 1000
        k[k == 0] = 1.5   # zeros: test_radix_sort_float_zeros_nans_and_value_sizes
        return k.astype(dtype)
    info = np.iinfo(dtype)
    k = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    k[: n // 3] = k[n // 2: n // 2 + n // 3] if n >= 3 else k[: n // 3]   # many equal keys: stability shows
    return k


def _stable_order(keys, descending):
    idx = np.arange(len(keys))
    _, rank = np.unique(keys, return_inverse=True)
    return np.lexsort((idx, -rank if descending else rank))


# Sizes around CUB's single-tile limit (256 threads x 19 items for 4-byte
# keys and values, x 9 with an 8-byte key or value), its onesweep tiles
# (384 x 23, 20, 19, 15, 12 items on an H100) and past 2^24.
RADIX_SIZES = [0, 1, 2303, 2304, 2305, 4095, 4864, 4865, 7681, 8833, 1_000_003, 2**24 + 5]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("n", RADIX_SIZES)
@pytest.mark.parametrize("order", [cc.SortOrder.ASCENDING, cc.SortOrder.DESCENDING])
def test_radix_sort_pairs_stable(dtype, n, order):
    rng = np.random.default_rng(SEED + n)
    keys = _keys(rng, n, dtype)
    vals = np.arange(n, dtype=np.int32)
    ko, vo = poison(max(n, 1), dtype), poison(max(n, 1), np.int32)
    d_keys = cuda.to_device(keys)
    cc.radix_sort(d_keys, ko, cuda.to_device(vals), vo, order, n)
    want = _stable_order(keys, order is cc.SortOrder.DESCENDING)
    np.testing.assert_array_equal(ko.copy_to_host()[:n], keys[want])
    np.testing.assert_array_equal(vo.copy_to_host()[:n], vals[want])
    np.testing.assert_array_equal(d_keys.copy_to_host(), keys)   # the input is left as it was


def test_radix_sort_keys_bit_range_and_double_buffer():
    rng = np.random.default_rng(SEED)
    n = 300_001
    keys = rng.integers(0, 2**32, n, dtype=np.uint32)
    out = poison(n, np.uint32)
    cc.radix_sort(cuda.to_device(keys), out, None, None, cc.SortOrder.ASCENDING, n, begin_bit=4, end_bit=20)
    np.testing.assert_array_equal(out.copy_to_host(), keys[np.argsort((keys >> 4) & 0xFFFF, kind="stable")])
    kb = cc.DoubleBuffer(cuda.to_device(keys), cuda.device_array(n, np.uint32))
    vb = cc.DoubleBuffer(cuda.to_device(np.arange(n, dtype=np.uint32)), cuda.device_array(n, np.uint32))
    cc.radix_sort(kb, None, vb, None, cc.SortOrder.ASCENDING, n)
    want = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(kb.current().copy_to_host(), keys[want])
    np.testing.assert_array_equal(vb.current().copy_to_host(), want.astype(np.uint32))
    obj = cc.make_radix_sort(cuda.to_device(keys), out, None, None, cc.SortOrder.DESCENDING)
    need = obj(None, cuda.to_device(keys), out, None, None, n)
    obj(cuda.device_array(need, np.uint8), cuda.to_device(keys), out, None, None, n)
    np.testing.assert_array_equal(out.copy_to_host(), np.sort(keys)[::-1])


def _cub_order(keys, descending, begin=0, end=None):
    """CUB's order of keys: by their bits mapped to unsigned order (floats:
    -0.0 as +0.0, NaNs by their bits), stable."""
    dtype = keys.dtype
    uns = np.dtype(f"u{dtype.itemsize}")
    bits = dtype.itemsize * 8
    u = keys.view(uns).copy()
    sign = uns.type(1) << uns.type(bits - 1)
    if dtype.kind == "f":
        u[u == sign] = 0
        u = np.where((u & sign) != 0, ~u, u | sign)
    elif dtype.kind == "i":
        u = u ^ sign
    if descending:
        u = ~u
    end = bits if end is None else end
    if end - begin < bits:
        u = (u >> uns.type(begin)) & uns.type((1 << (end - begin)) - 1)
    return np.argsort(u, kind="stable")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", [cc.SortOrder.ASCENDING, cc.SortOrder.DESCENDING])
def test_radix_sort_float_zeros_nans_and_value_sizes(dtype, order):
    # -0.0 and +0.0 are equal (kept in order), NaNs sort by their bits, as
    # CUB does; values of 1, 2, 8 and 16 bytes move with their keys
    rng = np.random.default_rng(SEED + 11)
    for n in (3000, 200_001):
        keys = ((rng.random(n) - 0.5) * 100).astype(dtype)
        keys[rng.random(n) < 0.2] = 0.0
        keys[rng.random(n) < 0.2] = -0.0
        keys[rng.random(n) < 0.01] = np.nan
        keys[rng.random(n) < 0.01] = -np.inf
        want = _cub_order(keys, order is cc.SortOrder.DESCENDING)
        for vdtype in (np.int8, np.float16, np.complex64, np.complex128):
            vals = (rng.integers(-100, 100, n) + 1j * rng.integers(-5, 5, n) if np.dtype(vdtype).kind == "c"
                    else rng.integers(-100, 100, n)).astype(vdtype)
            ko, vo = poison(n, dtype), cuda.to_device(np.zeros(n, vdtype))
            cc.radix_sort(cuda.to_device(keys), ko, cuda.to_device(vals), vo, order, n)
            np.testing.assert_array_equal(ko.copy_to_host().view(f"u{keys.itemsize}"),
                                          keys[want].view(f"u{keys.itemsize}"))
            np.testing.assert_array_equal(vo.copy_to_host(), vals[want])


def test_radix_sort_double_buffer_single_tile_odd_passes_and_objects():
    rng = np.random.default_rng(SEED + 5)
    for n, begin, end in ((3000, 0, 32), (3000, 3, 11), (700_001, 0, 24), (700_001, 8, 16), (700_001, 0, 32),
                          (700_001, 5, 5)):
        keys = rng.integers(0, 2**32, n, dtype=np.uint32)
        vals = rng.random(n)
        kb = cc.DoubleBuffer(cuda.to_device(keys), poison(n, np.uint32))
        vb = cc.DoubleBuffer(cuda.to_device(vals), poison(n, np.float64))
        cc.radix_sort(kb, None, vb, None, cc.SortOrder.DESCENDING, n, begin_bit=begin, end_bit=end)
        want = _cub_order(keys, True, begin, end)
        assert vb.selector == kb.selector
        np.testing.assert_array_equal(kb.current().copy_to_host(), keys[want])
        np.testing.assert_array_equal(vb.current().copy_to_host(), vals[want])
        # the object form with its own storage, arrays in and out
        obj = cc.make_radix_sort(kb.current(), kb.alternate(), vb.current(), vb.alternate(), cc.SortOrder.ASCENDING)
        ko, vo = poison(n, np.uint32), poison(n, np.float64)
        need = obj(None, cuda.to_device(keys), ko, cuda.to_device(vals), vo, n, begin, end)
        assert obj(cuda.device_array(max(need, 1), np.uint8), cuda.to_device(keys), ko, cuda.to_device(vals), vo,
                   n, begin, end) == need
        want = _cub_order(keys, False, begin, end)
        np.testing.assert_array_equal(ko.copy_to_host(), keys[want])
        np.testing.assert_array_equal(vo.copy_to_host(), vals[want])


def test_radix_sort_strided_arrays_take_the_fallback():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED + 9)
    n = 300_001
    keys = rng.integers(-2**31, 2**31, 2 * n, dtype=np.int64).astype(np.int32)
    vals = rng.integers(0, 1000, 2 * n).astype(np.int64)
    ko, vo = cp.full(2 * n, -1, cp.int32), cp.full(2 * n, -1, cp.int64)
    cc.radix_sort(cp.asarray(keys)[::2], ko[1::2], cp.asarray(vals)[::2], vo[::2], cc.SortOrder.ASCENDING, n)
    want = _cub_order(keys[::2], False)
    np.testing.assert_array_equal(ko.get()[1::2], keys[::2][want])
    np.testing.assert_array_equal(vo.get()[::2], vals[::2][want])
    assert (ko.get()[::2] == -1).all()


def test_radix_sort_torch_and_streams():
    torch = pytest.importorskip("torch")
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED + 13)
    n = 2**20 + 7
    keys = rng.integers(-2**62, 2**62, n, dtype=np.int64)
    tk = torch.as_tensor(keys, device="cuda")
    tv = torch.arange(n, device="cuda", dtype=torch.int32)
    ko = torch.full((n,), -1, dtype=torch.int64, device="cuda")
    vo = torch.full((n,), -1, dtype=torch.int32, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):   # no stream given: PyTorch's current one
        cc.radix_sort(tk, ko, tv, vo, cc.SortOrder.DESCENDING, n)
    s.synchronize()
    want = _cub_order(keys, True)
    np.testing.assert_array_equal(ko.cpu().numpy(), keys[want])
    np.testing.assert_array_equal(vo.cpu().numpy(), want.astype(np.int32))
    # CuPy arrays on a CuPy stream given explicitly
    cs = cp.cuda.Stream(non_blocking=True)
    ck = cp.asarray(keys)
    cko = cp.full(n, -1, cp.int64)
    cc.radix_sort(ck, cko, None, None, cc.SortOrder.ASCENDING, n, stream=cs)
    cs.synchronize()
    np.testing.assert_array_equal(cko.get(), np.sort(keys))


def test_radix_sort_runs_cubs_kernels_here():
    # the fallback serves only where CUB's kernels cannot: here they must
    from cudajit import _core
    from cudajit.compute._sort import _sorter
    for key in (np.uint32, np.float64):
        assert _sorter(key, np.int32, cc.SortOrder.ASCENDING).cub_compiles()
    major, minor = cuda.get_current_device().compute_capability
    p = _core.radix_sort_program("uint32", 4, False, False, major * 10 + minor)
    assert p["from"] == "memory" and p["policy"]["onesweep"]


def test_radix_sort_large_cupy():
    cp = pytest.importorskip("cupy")
    n = 2**24 + 11
    keys = cp.random.randint(0, 2**31, n, dtype=cp.int64).astype(cp.uint32)
    out = cp.empty_like(keys)
    cc.radix_sort(keys, out, None, None, cc.SortOrder.ASCENDING, n)
    assert bool((out == cp.sort(keys)).all())


def test_a_warmed_cache_serves_a_fresh_process(tmp_path):
    import subprocess
    import sys
    module = tmp_path / "algos.py"
    module.write_text("import numpy as np\nimport cudajit.compute as compute\n"
                      "P = compute.ProxyArray\n"
                      "total = compute.make_reduce_into(P(np.float64), P(np.float64), compute.OpKind.PLUS,\n"
                      "                                 np.zeros(1, np.float64))\n")
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("CUDAJIT_CACHE", None)
    warm = subprocess.run([sys.executable, "-m", "cudajit", "warm", str(module)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert warm.returncode == 0 and "1 cudajit.compute object(s)" in warm.stdout and " 0 failed" in warm.stdout, \
        warm.stdout + warm.stderr
    code = ("import numpy as np, cudajit as cuda, cudajit.compute as c\n"
            "from cudajit.compute import _build\n"
            "x = cuda.to_device(np.arange(1_000_000, dtype=np.float64)); out = cuda.device_array(1, np.float64)\n"
            "c.reduce_into(x, out, c.OpKind.PLUS, 1_000_000, np.zeros(1))\n"
            "print(out.copy_to_host()[0])\n"
            "print(sorted({s['cache_result'] for k in _build._kernels.values() for s in k.stats.values()}))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    total, results = run.stdout.strip().splitlines()
    assert float(total) == 999_999 * 1_000_000 / 2
    assert results == "['hit']"


def test_scans_of_strided_and_converted_inputs():
    # a strided view and an input of another type than the scan's take the
    # general tile path; a dense one of the scan's own type the CUB block loads
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED)
    n = 700_001
    h = rng.integers(-100, 100, 2 * n).astype(np.int32)
    x = cp.asarray(h)
    out = cp.full(n, -1, np.int64)
    cc.inclusive_scan(x[::2], out, cc.OpKind.PLUS, np.array([3], np.int64), n)
    np.testing.assert_array_equal(out.get(), 3 + np.cumsum(h[::2].astype(np.int64)))
    out32 = cp.full(n, -1, np.int32)
    cc.exclusive_scan(x[1::2], out32, cc.OpKind.PLUS, np.array([0], np.int32), n)
    np.testing.assert_array_equal(out32.get(), np.concatenate([[0], np.cumsum(h[1::2])[:-1]]).astype(np.int32))
    cc.inclusive_scan(x[:n], out32, cc.OpKind.PLUS, None, n - 5)   # num_items below the arrays' length
    np.testing.assert_array_equal(out32.get()[: n - 5], np.cumsum(h[: n - 5]).astype(np.int32))


def test_2_28_items_radix_sort_select_segmented():
    # the largest sizes the issue names, checked on the device against CuPy
    cp = pytest.importorskip("cupy")
    n = 2**28
    keys = cp.random.randint(0, 2**31, n, dtype=cp.int64).astype(cp.uint32)
    out = cp.empty_like(keys)
    cc.radix_sort(keys, out, None, None, cc.SortOrder.ASCENDING, n)
    assert bool((out == cp.sort(keys)).all())
    del out
    count = cp.full(1, -1, cp.int64)
    picked = cp.empty_like(keys)
    cc.select(keys, picked, count, lambda v: v % 3 == 0, n)
    want = keys[keys % 3 == 0]
    assert int(count[0]) == want.size and bool((picked[: want.size] == want).all())
    del picked, want
    x = cp.random.random(n, dtype=cp.float32)
    segs = 2**18
    sums = cp.full(segs, cp.nan, cp.float32)
    offsets = cp.arange(0, n + 1, n // segs, dtype=cp.int64)
    cc.segmented_reduce(x, sums, offsets[:-1], offsets[1:], cc.OpKind.PLUS, np.zeros(1, np.float32), segs)
    assert bool(cp.allclose(sums, x.reshape(segs, -1).sum(axis=1), rtol=1e-4))


def _desc(a, b):
    return a > b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 1023, 1024, 1025, 4097, 65536 + 3, 1_000_003])
def test_merge_sort_pairs_stable(dtype, n):
    """Keys with many equal ones (the block sort's tiles and the passes'
    runs both show stability), items carried, ascending by OpKind.LESS and
    descending by a Python function, against numpy's stable argsort."""
    rng = np.random.default_rng(SEED + n)
    keys = rand(rng, n, dtype)
    keys[: n // 3] = keys[n // 2: n // 2 + n // 3] if n >= 3 else keys[: n // 3]
    items = np.arange(n, dtype=np.int64)
    for op, order in ((cc.OpKind.LESS, np.argsort(keys, kind="stable")),
                      (_desc, np.lexsort((np.arange(n), -np.unique(keys, return_inverse=True)[1])))):
        ko, io = poison(max(n, 1), dtype), poison(max(n, 1), np.int64)
        d_keys, d_items = cuda.to_device(keys), cuda.to_device(items)
        cc.merge_sort(d_keys, d_items, ko, io, op, n)
        np.testing.assert_array_equal(ko.copy_to_host()[:n], keys[order])
        np.testing.assert_array_equal(io.copy_to_host()[:n], items[order])
        np.testing.assert_array_equal(d_keys.copy_to_host(), keys)   # inputs left as they were


def test_merge_sort_in_place_keys_only_iterator_and_object():
    rng = np.random.default_rng(SEED)
    for n in (3000, 1 << 20):                  # an odd and an even number of merge passes
        keys = rng.integers(-50, 50, n).astype(np.int32)
        d = cuda.to_device(keys)
        cc.merge_sort(d, None, d, None, lambda a, b: a < b, n)   # in place, as cuda.compute's example
        np.testing.assert_array_equal(d.copy_to_host(), np.sort(keys, kind="stable"))
    # keys from an iterator (descending counting sequence through a transform), the object's protocol
    n = 70_001
    src = cc.TransformIterator(cc.CountingIterator(np.int64(0)), lambda i: (i * 7919) % 1000)
    ko, io = poison(n, np.int64), poison(n, np.float32)
    vals = rng.random(n).astype(np.float32)
    obj = cc.make_merge_sort(src, cuda.to_device(vals), ko, io, cc.OpKind.LESS)
    need = obj(None, src, cuda.to_device(vals), ko, io, cc.OpKind.LESS, n)
    assert need >= n * 8
    obj(cuda.device_array(need, np.uint8), src, cuda.to_device(vals), ko, io, cc.OpKind.LESS, n)
    k = (np.arange(n, dtype=np.int64) * 7919) % 1000
    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(ko.copy_to_host(), k[order])
    np.testing.assert_array_equal(io.copy_to_host(), vals[order])


def test_merge_sort_large_cupy_and_torch():
    cp = pytest.importorskip("cupy")
    n = 2**24 + 5
    keys = cp.random.random(n).astype(cp.float32)
    out = cp.empty_like(keys)
    cc.merge_sort(keys, None, out, None, cc.OpKind.LESS, n)
    assert bool((out == cp.sort(keys)).all())
    torch = pytest.importorskip("torch")
    t = torch.randint(-10**6, 10**6, (300_001,), device="cuda", dtype=torch.int64)
    v = torch.arange(300_001, device="cuda", dtype=torch.int32)
    to, vo = torch.empty_like(t), torch.empty_like(v)
    cc.merge_sort(t, v, to, vo, cc.OpKind.LESS, t.numel())
    want_k, want_i = torch.sort(t, stable=True)
    assert torch.equal(to, want_k) and torch.equal(vo, want_i.to(torch.int32))
