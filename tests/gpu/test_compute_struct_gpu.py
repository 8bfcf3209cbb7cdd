"""cudajit.compute's struct items on the GPU against numpy, on fresh random
data with poisoned outputs: gpu_struct values, ZipIterator tuples and
arrays of structured dtypes in reduce_into, segmented_reduce, the scans
(an associative, non-commutative operator, so that the order shows) and
the transforms; sizes 0, 1, around the struct scan's tile (1024) and the
reduction's one-block limit (4096), and past a million; CuPy arrays of
struct dtypes; the object form's temporary storage; select, unique_by_key
and a stable merge_sort of struct keys and items."""
import os

import numpy as np
import pytest

import cudajit as cuda
import cudajit.compute as cc
from cudajit.compute import gpu_struct

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cub_cache")]

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
SIZES = [0, 1, 2, 255, 256, 257, 1023, 1024, 1025, 3000, 4096, 4097, 65536 + 3, 1_000_003]


@gpu_struct
class MinMax:
    min_val: np.float64
    max_val: np.float64


@gpu_struct
class Pair:
    first: np.int64
    second: np.float64


# count of items and the last non-zero tag: associative, not commutative
Tagged = gpu_struct({"count": np.int64, "last": np.int32}, "Tagged")

IndexValue = np.dtype([("index", np.int32), ("value", np.int32)], align=True)


def minmax(a, b):
    return MinMax(min(a.min_val, b.min_val), max(a.max_val, b.max_val))


def add_pairs(p, q):
    return (p[0] + q[0], p[1] + q[1])


def tag(p, q):
    return Tagged(p.count + q.count, q.last if q.last != 0 else p.last)


def tag_by_position(p, q):   # a ZipIterator's items without an init value: tuples, fields by position
    return (p[0] + q[0], q[1] if q[1] != 0 else p[1])


def larger_value(p, q):   # ties: the smaller index (commutative, so any order gives one answer)
    if p[1] > q[1] or (p[1] == q[1] and p[0] < q[0]):
        return p
    return q


def poison(n, dtype):
    """A device array of `n` records whose fields are NaN or the lowest integer."""
    h = np.zeros(max(n, 1), dtype)
    _poison_fields(h, dtype)
    return cuda.to_device(h)


def _poison_fields(h, dtype):
    for name in dtype.names:
        kind = dtype.fields[name][0]
        if kind.names is not None:        # a nested struct
            _poison_fields(h[name], kind)
        else:
            h[name] = np.nan if kind.kind == "f" else np.iinfo(kind).min


def fields(d, names):
    h = d.copy_to_host()
    return [h[name] for name in names]


@pytest.mark.parametrize("n", SIZES)
def test_reduce_min_max_of_a_transform_iterator(n):
    # cuda.compute's gpu_struct example: items made structs by a TransformIterator
    rng = np.random.default_rng(SEED + n)
    x = (rng.random(n) * 2000 - 1000).astype(np.float32)
    out = poison(1, MinMax.dtype)
    cc.reduce_into(d_in=cc.TransformIterator(cuda.to_device(x), lambda v: MinMax(v, v)), d_out=out, op=minmax,
                   num_items=n, h_init=MinMax(np.inf, -np.inf))
    lo, hi = fields(out, ["min_val", "max_val"])
    assert lo[0] == (x.min() if n else np.inf) and hi[0] == (x.max() if n else -np.inf)


@pytest.mark.parametrize("n", SIZES)
def test_reduce_zip_items_into_a_struct(n):
    rng = np.random.default_rng(SEED + 1 + n)
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    b = (rng.random(n) * 2 - 1).astype(np.float32)
    out = poison(1, Pair.dtype)
    cc.reduce_into(cc.ZipIterator(cuda.to_device(a), cuda.to_device(b)), out, add_pairs, n, Pair(5, 0.25))
    first, second = fields(out, ["first", "second"])
    assert first[0] == 5 + a.astype(np.int64).sum()
    np.testing.assert_allclose(second[0], 0.25 + b.astype(np.float64).sum(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [1, 257, 4097, 65536 + 3])
def test_reduce_records_argmax(n):
    # an array of a numpy structured dtype, a numpy record as the initial value
    rng = np.random.default_rng(SEED + 2 + n)
    h = np.zeros(n, IndexValue)
    h["index"] = np.arange(n)
    h["value"] = rng.integers(-50, 50, n)           # ties: the smallest index wins
    out = poison(1, IndexValue)
    cc.reduce_into(cuda.to_device(h), out, larger_value, n, np.asarray([(-1, -1000)], IndexValue))
    got = out.copy_to_host()[0]
    best = int(np.argmax(h["value"]))
    assert (got["index"], got["value"]) == (best, h["value"][best])


def test_segmented_reduce_of_records():
    rng = np.random.default_rng(SEED + 3)
    sizes = rng.integers(0, 3000, 200)
    sizes[::7] = 0                                   # empty segments give the initial value
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    ends = (starts + sizes).astype(np.int64)
    n = int(ends[-1])
    h = np.zeros(n, MinMax.dtype)
    h["min_val"] = rng.random(n) * 100 - 50
    h["max_val"] = h["min_val"] + rng.random(n)
    out = poison(len(sizes), MinMax.dtype)
    cc.segmented_reduce(cuda.to_device(h), out, cuda.to_device(starts), cuda.to_device(ends), minmax,
                        MinMax(1e9, -1e9), len(sizes))
    lo, hi = fields(out, ["min_val", "max_val"])
    for s, (b, e) in enumerate(zip(starts, ends)):
        want_lo = h["min_val"][b:e].min() if e > b else 1e9
        want_hi = h["max_val"][b:e].max() if e > b else -1e9
        assert (lo[s], hi[s]) == (want_lo, want_hi), s


def _tagged_reference(counts, tags, init):
    """Inclusive scan of tag() from `init` (None: none)."""
    total = np.cumsum(counts.astype(np.int64)) + (init[0] if init else 0)
    where = np.where(tags != 0, np.arange(len(tags)), -1)
    last_at = np.maximum.accumulate(where) if len(tags) else where
    base = init[1] if init else 0
    last = np.where(last_at >= 0, tags[np.maximum(last_at, 0)], base).astype(np.int32)
    return total, last


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["inclusive", "inclusive_init", "exclusive"])
def test_scans_keep_the_order(n, kind):
    rng = np.random.default_rng(SEED + 4 + n)
    counts = rng.integers(-100, 100, n).astype(np.int64)
    tags = np.where(rng.random(n) < 0.3, rng.integers(1, 1000, n), 0).astype(np.int32)
    z = cc.ZipIterator(cuda.to_device(counts), cuda.to_device(tags))
    out = poison(n, Tagged.dtype)
    init = (17, 5)
    if kind == "inclusive":
        cc.inclusive_scan(z, out, tag_by_position, None, n)
        want = _tagged_reference(counts, tags, None)
    elif kind == "inclusive_init":
        cc.inclusive_scan(z, out, tag, Tagged(*init), n)
        want = _tagged_reference(counts, tags, init)
    else:
        cc.exclusive_scan(z, out, tag, Tagged(*init), n)
        total, last = _tagged_reference(counts, tags, init)
        want = (np.concatenate([[init[0]], total[:-1]]), np.concatenate([[init[1]], last[:-1]]).astype(np.int32))
    got = out.copy_to_host()
    if n == 0:
        assert got["count"][0] == np.iinfo(np.int64).min   # nothing written
        return
    np.testing.assert_array_equal(got["count"][:n], want[0][:n])
    np.testing.assert_array_equal(got["last"][:n], want[1][:n])


def test_scan_of_records_without_init_and_the_object_form():
    rng = np.random.default_rng(SEED + 5)
    n = 300_001
    h = np.zeros(n, Tagged.dtype)
    h["count"] = rng.integers(-9, 9, n)
    h["last"] = np.where(rng.random(n) < 0.1, rng.integers(1, 99, n), 0)
    d = cuda.to_device(h)
    out = poison(n, Tagged.dtype)
    obj = cc.make_inclusive_scan(d, out, tag, None)
    need = obj(None, d, out, tag, None, n)
    assert need > 0
    obj(cuda.device_array(need, np.uint8), d, out, tag, None, n)
    total, last = _tagged_reference(h["count"], h["last"], None)
    got = out.copy_to_host()
    np.testing.assert_array_equal(got["count"], total)
    np.testing.assert_array_equal(got["last"], last)


@pytest.mark.parametrize("n", [0, 1, 1025, 100_003])
def test_transforms_make_and_take_structs(n):
    rng = np.random.default_rng(SEED + 6 + n)
    x = (rng.random(n) * 2 - 1).astype(np.float32)
    out = poison(n, MinMax.dtype)
    cc.unary_transform(cuda.to_device(x), out, lambda v: MinMax(v, v * v), n)
    lo, hi = fields(out, ["min_val", "max_val"])
    np.testing.assert_array_equal(lo[:n], x.astype(np.float64))
    np.testing.assert_array_equal(hi[:n], (x * x).astype(np.float64))   # float32 product, then widened
    spread = cuda.to_device(np.full(max(n, 1), np.nan))
    cc.unary_transform(out, spread, lambda m: m.max_val - m.min_val, n)
    np.testing.assert_array_equal(spread.copy_to_host()[:n], hi[:n] - lo[:n])
    k = rng.integers(-100, 100, n).astype(np.int64)
    pairs = poison(n, Pair.dtype)
    cc.binary_transform(cc.ZipIterator(cuda.to_device(k), cuda.to_device(x)), out, pairs,
                        lambda t, m: Pair(t[0] * 2, t[1] + m.max_val), n)
    first, second = fields(pairs, ["first", "second"])
    np.testing.assert_array_equal(first[:n], 2 * k)
    np.testing.assert_allclose(second[:n], x.astype(np.float64) + hi[:n], rtol=1e-7)


def test_cupy_arrays_of_a_struct_dtype():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED + 7)
    n = 70_001
    h = np.zeros(n, MinMax.dtype)
    h["min_val"] = rng.random(n) - 0.5
    h["max_val"] = h["min_val"] + rng.random(n)
    d_in = cp.asarray(h)
    d_out = cp.empty(1, dtype=MinMax.dtype)
    cc.reduce_into(d_in=d_in, d_out=d_out, op=minmax, num_items=n, h_init=MinMax(np.inf, -np.inf))
    got = d_out.get()[0]
    assert (got["min_val"], got["max_val"]) == (h["min_val"].min(), h["max_val"].max())
    scanned = cp.empty(n, dtype=MinMax.dtype)
    cc.inclusive_scan(d_in, scanned, minmax, None, n)
    got = scanned.get()
    np.testing.assert_array_equal(got["min_val"], np.minimum.accumulate(h["min_val"]))
    np.testing.assert_array_equal(got["max_val"], np.maximum.accumulate(h["max_val"]))


def _pairs(rng, n):
    h = np.zeros(n, Pair.dtype)
    h["first"] = rng.integers(-50, 50, n)
    h["second"] = rng.random(n) * 2 - 1
    return h


@pytest.mark.parametrize("n", [0, 1, 1919, 1921, 100_003])
def test_select_struct_items(n):
    rng = np.random.default_rng(SEED + 8 + n)
    h = _pairs(rng, n)
    out = poison(n, Pair.dtype)
    count = cuda.to_device(np.full(1, -7, np.int64))
    cc.select(cuda.to_device(h), out, count, lambda p: p.first > 0 and p.second < 0.5, n)
    keep = h[(h["first"] > 0) & (h["second"] < 0.5)]
    assert count.copy_to_host()[0] == len(keep)
    got = out.copy_to_host()[:len(keep)]
    np.testing.assert_array_equal(got["first"], keep["first"])
    np.testing.assert_array_equal(got["second"], keep["second"])


@pytest.mark.parametrize("n", [1, 1921, 100_003])
def test_unique_by_key_struct_keys_and_items(n):
    rng = np.random.default_rng(SEED + 9 + n)
    # struct keys in runs equal under the operator (same .first), struct items
    keys = _pairs(rng, n)
    keys["first"] = np.sort(rng.integers(0, max(1, n // 3), n))
    items = np.zeros(n, MinMax.dtype)
    items["min_val"] = rng.random(n)
    items["max_val"] = rng.random(n) + 1
    out_k, out_i = poison(n, Pair.dtype), poison(n, MinMax.dtype)
    count = cuda.to_device(np.full(1, -7, np.int64))
    cc.unique_by_key(cuda.to_device(keys), cuda.to_device(items), out_k, out_i, count,
                     lambda a, b: a.first == b.first, n)
    first = np.concatenate([[True], keys["first"][1:] != keys["first"][:-1]])
    m = int(first.sum())
    assert count.copy_to_host()[0] == m
    gk, gi = out_k.copy_to_host()[:m], out_i.copy_to_host()[:m]
    np.testing.assert_array_equal(gk["first"], keys["first"][first])
    np.testing.assert_array_equal(gk["second"], keys["second"][first])
    np.testing.assert_array_equal(gi["min_val"], items["min_val"][first])
    np.testing.assert_array_equal(gi["max_val"], items["max_val"][first])


@pytest.mark.parametrize("n", [0, 1, 511, 512, 513, 5000, 100_003])
def test_merge_sort_struct_keys_is_stable(n):
    rng = np.random.default_rng(SEED + 10 + n)
    keys = _pairs(rng, n)                              # many equal .first: stability shows
    items = np.zeros(n, MinMax.dtype)
    items["min_val"] = np.arange(n)
    items["max_val"] = rng.random(n)
    dk, di = cuda.to_device(keys), cuda.to_device(items)
    out_k, out_i = poison(n, Pair.dtype), poison(n, MinMax.dtype)
    cc.merge_sort(dk, di, out_k, out_i, lambda a, b: a.first < b.first, n)
    order = np.argsort(keys["first"], kind="stable")
    gk, gi = out_k.copy_to_host()[:n], out_i.copy_to_host()[:n]
    np.testing.assert_array_equal(gk["first"], keys["first"][order])
    np.testing.assert_array_equal(gk["second"], keys["second"][order])
    np.testing.assert_array_equal(gi["min_val"], items["min_val"][order])
    np.testing.assert_array_equal(gi["max_val"], items["max_val"][order])


Inner = gpu_struct({"a": np.int32, "b": np.float32}, "Inner")
Outer = gpu_struct({"inner": Inner, "c": np.int64}, "Outer")


def add_nested(u, v):
    return Outer(Inner(u.inner.a + v.inner.a, u.inner.b + v.inner.b), u.c + v.c)


@pytest.mark.parametrize("n", [0, 1, 5000, 300_001])
def test_nested_zips_into_a_nested_struct(n):
    rng = np.random.default_rng(SEED + 11 + n)
    a = rng.integers(-100, 100, n).astype(np.int32)
    b = rng.integers(-100, 100, n).astype(np.float32)      # integral floats: exact sums
    c = rng.integers(-10**6, 10**6, n).astype(np.int64)
    z = cc.ZipIterator(cc.ZipIterator(cuda.to_device(a), cuda.to_device(b)), cuda.to_device(c))
    out = poison(1, Outer.dtype)
    cc.reduce_into(z, out, add_nested, n, Outer(Inner(1, 2.0), 3))
    got = out.copy_to_host()[0]
    assert got["inner"]["a"] == 1 + a.sum(dtype=np.int64).astype(np.int32)
    assert got["inner"]["b"] == 2 + b.sum(dtype=np.float64)
    assert got["c"] == 3 + c.sum()


Pair8 = gpu_struct({"a": np.int32, "b": np.float32}, "Pair8")          # 8 bytes: CUB moves it as one word
Triple12 = gpu_struct({"a": np.int32, "b": np.float32, "c": np.int32}, "Triple12")   # 12: the fallback sorter


@pytest.mark.parametrize("S", [Pair8, Triple12], ids=["8-byte", "12-byte"])
@pytest.mark.parametrize("n", [1, 1000, 300_001])
def test_radix_sort_carries_struct_values(S, n):
    rng = np.random.default_rng(SEED + 13 + n)
    keys = rng.integers(0, 1000, n).astype(np.uint32)       # many equal keys: stability shows
    vals = np.zeros(n, S.dtype)
    for name in S.dtype.names:
        vals[name] = rng.integers(-10**6, 10**6, n).astype(S.dtype.fields[name][0])
    out_keys = cuda.to_device(np.full(n, 0xFFFFFFFF, np.uint32))
    out_vals = poison(n, S.dtype)
    cc.radix_sort(cuda.to_device(keys), out_keys, cuda.to_device(vals), out_vals, cc.SortOrder.ASCENDING, n)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(out_keys.copy_to_host(), keys[order])
    got = out_vals.copy_to_host()[:n]
    for name in S.dtype.names:
        np.testing.assert_array_equal(got[name], vals[name][order], err_msg=f"{name}, seed {SEED}")
