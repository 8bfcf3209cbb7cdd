"""cudajit.compute's struct items without a GPU: gpu_struct (cuda.compute's
API), struct and ZipIterator items in reduce_into, segmented_reduce, the
scans and the transforms compiled through cudajit's pipeline to cubins
for sm_90, the operator's result checked, and the algorithms that do not
take structs yet refusing them. GPU runs: tests/gpu/test_compute_struct_gpu.py."""
import numpy as np
import pytest

import cudajit.compute as cc
from cudajit.compute import gpu_struct
from cudajit.compute._struct import flat_value, parse_result

pytestmark = pytest.mark.usefixtures("cub_cache")
P = cc.ProxyArray


@gpu_struct
class MinMax:
    min_val: np.float64
    max_val: np.float64


Pair = gpu_struct({"first": np.int32, "second": np.int64}, "Pair")
Inner = gpu_struct({"a": np.int32, "b": np.float32}, "Inner")
Outer = gpu_struct({"inner": Inner, "c": np.int64}, "Outer")


def minmax(a, b):
    return MinMax(min(a.min_val, b.min_val), max(a.max_val, b.max_val))


def add_pairs(p, q):   # a tuple result: converted to the struct by position, as in cuda.compute
    return (p[0] + q[0], p[1] + q[1])


def kernels(obj):
    out = cc.compile_for(obj.launches(), cc=(9, 0))
    assert out and all(bytes(c[:4]) == b"\x7fELF" for _, c in out)
    return [name for name, _ in out]


def test_gpu_struct_forms_and_values():
    assert MinMax.dtype == np.dtype([("min_val", np.float64), ("max_val", np.float64)], align=True)
    assert Pair.dtype.isalignedstruct and Pair.dtype.fields["second"][1] == 8 and Pair.dtype.itemsize == 16
    from_dtype = gpu_struct(np.dtype([("x", np.int16), ("y", np.float32)]))
    assert from_dtype.dtype.names == ("x", "y") and from_dtype.dtype.fields["y"][1] == 4
    assert Outer.dtype.fields["inner"][0] == Inner.dtype
    v = MinMax(1, -2.5)                        # fields take their declared types
    assert type(v.min_val) is np.float64 and v.max_val == -2.5 and v[0] == 1.0
    assert MinMax(max_val=3, min_val=1) == (1.0, 3.0) and MinMax({"min_val": 0, "max_val": 1}) == (0.0, 1.0)
    o = Outer((1, 2.5), 7)                     # a nested struct from a tuple
    assert isinstance(o.inner, Inner) and o.inner.b == np.float32(2.5) and type(o.c) is np.int64
    rec = np.asarray(o)
    assert rec.dtype == Outer.dtype and rec["inner"]["a"] == 1 and rec["c"] == 7
    with pytest.raises(TypeError):
        MinMax(1.0)
    with pytest.raises(TypeError, match="gpu_struct AnonymousStruct field 'name': <U3 is not a number type"):
        gpu_struct({"name": "U3"})


def test_initial_values_flatten():
    assert flat_value(Outer((1, 2.5), 7), Outer) == (1, np.float32(2.5), 7)
    assert [type(x) for x in flat_value(Outer((1, 2.5), 7), Outer)] == [np.int32, np.float32, np.int64]
    rec = np.asarray([(-1, -2)], dtype=Pair.dtype)           # cuda.compute's numpy form
    assert flat_value(rec, Pair) == (-1, -2) and flat_value(rec[0], Pair) == (-1, -2)


def test_result_types_parse():
    assert parse_result("NamedTuple(MinMax(min_val,max_val), float64, float64)") == \
        ("struct", "MinMax", ["float64", "float64"])
    assert parse_result("Tuple(int64, UniTuple(float32, 2))") == ("tuple", "", ["int64", "UniTuple(float32, 2)"])
    assert parse_result("UniTuple(int64, 3)") == ("tuple", "", ["int64"] * 3)
    assert parse_result("float32") == ("scalar", "float32", [])


def test_reduce_compiles():
    # cuda.compute's min-max example: a TransformIterator making structs
    to_mm = cc.TransformIterator(P(np.float32), lambda v: MinMax(v, v))
    assert to_mm.value_dtype == MinMax.dtype
    assert kernels(cc.make_reduce_into(to_mm, P(MinMax.dtype), minmax, MinMax(np.inf, -np.inf))) == \
        ["reduce_tiles", "reduce_single", "reduce_single"]
    # arrays of records in and out
    kernels(cc.make_reduce_into(P(MinMax.dtype), P(MinMax.dtype), minmax, MinMax(0, 0)))
    # ZipIterator items (tuples), a tuple-returning operator, a gpu_struct initial value
    z = cc.ZipIterator(P(np.int32), cc.CountingIterator(np.int64(0)))
    kernels(cc.make_reduce_into(z, P(Pair.dtype), add_pairs, Pair(0, 0)))
    # a numpy record as the initial value (its dtype makes the struct), an operator returning an argument
    rec = np.dtype([("index", np.int32), ("value", np.int32)], align=True)
    kernels(cc.make_reduce_into(cc.ZipIterator(cc.CountingIterator(np.int32(0)), P(np.int32)), P(rec),
                                lambda p, q: p if p[1] > q[1] else q, np.asarray([(-1, -1)], rec)))
    # nested zips into a nested struct
    nested = cc.ZipIterator(cc.ZipIterator(P(np.int32), P(np.float32)), P(np.int64))
    kernels(cc.make_reduce_into(nested, P(Outer.dtype),
                                lambda u, v: Outer(Inner(u.inner.a + v.inner.a, u.inner.b + v.inner.b), u.c + v.c),
                                Outer(Inner(0, 0), 0)))


def test_segmented_reduce_and_scans_compile():
    assert kernels(cc.make_segmented_reduce(P(MinMax.dtype), P(MinMax.dtype), P(np.int64), P(np.int64), minmax,
                                            MinMax(np.inf, -np.inf))) == ["segmented_reduce"]
    z = cc.ZipIterator(P(np.int64), P(np.float32))
    names = ["scan_aggregates", "scan_prefixes", "scan_struct_tiles"]
    assert kernels(cc.make_inclusive_scan(z, P(z.value_dtype), add_pairs, None)) == names
    assert kernels(cc.make_inclusive_scan(P(Pair.dtype), P(Pair.dtype), add_pairs, Pair(1, 2))) == names
    assert kernels(cc.make_exclusive_scan(P(MinMax.dtype), P(MinMax.dtype), minmax, MinMax(0, 0))) == names
    obj = cc.make_inclusive_scan(z, P(z.value_dtype), add_pairs, None)
    assert obj(None, z, P(z.value_dtype), add_pairs, None, 0) == 0
    assert obj(None, z, P(z.value_dtype), add_pairs, None, 10_000) == 2 * 256   # totals and prefixes, 10 tiles


def test_transforms_with_struct_items():
    # struct results of numbers, a number from struct items, zipped items into structs
    assert kernels(cc.make_unary_transform(P(np.float32), P(MinMax.dtype), lambda v: MinMax(v, -v))) == \
        ["transform"]
    kernels(cc.make_unary_transform(P(MinMax.dtype), P(np.float64), lambda m: m.max_val - m.min_val))
    kernels(cc.make_binary_transform(cc.ZipIterator(P(np.int32), P(np.int64)), P(Pair.dtype), P(Pair.dtype),
                                     lambda t, p: Pair(t[0] + p.first, t[1] * p.second)))


def test_operator_results_are_checked():
    Other = gpu_struct({"lo": np.float64, "hi": np.float64}, "Other")

    def other_struct(a, b):
        return Other(a.min_val, b.max_val)

    def number(a, b):
        return a.min_val + b.max_val

    def float_into_int(p, q):
        return Pair(p.first * 0.5, p.second)

    # a second class of MinMax's very fields is the same struct to the kernels (arrays of its dtype
    # give the first class made for it)
    Twin = gpu_struct({"min_val": np.float64, "max_val": np.float64}, "Twin")
    kernels(cc.make_inclusive_scan(P(Twin.dtype), P(Twin.dtype), lambda a, b: Twin(a[0], b[1]), None))
    with pytest.raises(TypeError, match="op .*other_struct returns a Other struct: the result must be a MinMax"):
        cc.make_reduce_into(P(MinMax.dtype), P(MinMax.dtype), other_struct, MinMax(0, 0))
    with pytest.raises(TypeError, match="op .*number returns float64: the result must be a MinMax"):
        cc.make_inclusive_scan(P(MinMax.dtype), P(MinMax.dtype), number, None)
    with pytest.raises(TypeError, match="returns a tuple of 3 items: the result must be a Pair .*2 fields"):
        cc.make_segmented_reduce(P(Pair.dtype), P(Pair.dtype), P(np.int64), P(np.int64),
                                 lambda p, q: (1, 2, 3), Pair(0, 0))
    with pytest.raises(TypeError, match="float_into_int returns float64 for field 'first' of Pair, which holds "
                                        "int32"):
        cc.make_reduce_into(P(Pair.dtype), P(Pair.dtype), float_into_int, Pair(0, 0))


def test_argument_errors():
    with pytest.raises(TypeError, match="d_out holds float64, the values are MinMax structs: make it with "
                                        "MinMax.dtype"):
        cc.make_reduce_into(P(MinMax.dtype), P(np.float64), minmax, MinMax(0, 0))
    with pytest.raises(TypeError, match="d_out holds .*the values are Pair structs"):
        cc.make_exclusive_scan(P(Pair.dtype), P(np.dtype([("x", np.int32)])), add_pairs, Pair(0, 0))
    with pytest.raises(TypeError, match="h_init: a MinMax has 2 fields, the items 3"):
        cc.make_reduce_into(cc.ZipIterator(P(np.int32), P(np.int32), P(np.int32)), P(MinMax.dtype), minmax,
                            MinMax(0, 0))
    with pytest.raises(TypeError, match="h_init: the items are structs or tuples"):
        cc.make_reduce_into(P(Pair.dtype), P(np.int64), cc.OpKind.PLUS, np.zeros(1, np.int64))
    with pytest.raises(TypeError, match="d_out holds structs .* the values are numbers"):
        cc.make_reduce_into(P(np.int64), P(Pair.dtype), cc.OpKind.PLUS, np.zeros(1, np.int64))
    # not there yet: struct items of radix_sort and histogram_even
    with pytest.raises(TypeError, match="its items are structs .* which this algorithm does not take yet"):
        cc.make_histogram_even(P(Pair.dtype), P(np.int32), 5, 0.0, 1.0, 10)
    # merge_sort moves whole records: its outputs must hold the input's dtype
    with pytest.raises(TypeError, match="d_out_keys holds .*merge_sort moves whole records"):
        cc.make_merge_sort(P(Pair.dtype), None, P(gpu_struct({"a": np.int32, "b": np.int64}).dtype), None,
                           lambda a, b: a[0] < b[0])
    with pytest.raises(TypeError, match="d_out holds int64, the values are Pair structs"):
        cc.make_select(P(Pair.dtype), P(np.int64), P(np.int64), lambda p: p[0] > 0)


def test_select_unique_and_merge_sort_compile():
    z = cc.ZipIterator(P(np.int32), P(np.int64))
    assert kernels(cc.make_select(P(Pair.dtype), P(Pair.dtype), P(np.int64), lambda p: p.first > p.second)) == \
        ["select_tiles"]
    kernels(cc.make_select(z, P(z.value_dtype), P(np.int64), lambda t: t[0] > 0))
    # struct items with number keys, struct keys (an operator on them) with zipped items
    assert kernels(cc.make_unique_by_key(P(np.int32), P(Pair.dtype), P(np.int32), P(Pair.dtype), P(np.int64),
                                         cc.OpKind.EQUAL_TO)) == ["unique_tiles"]
    kernels(cc.make_unique_by_key(P(Pair.dtype), z, P(Pair.dtype), P(z.value_dtype), P(np.int64),
                                  lambda a, b: a.first == b.first))
    assert kernels(cc.make_merge_sort(P(Pair.dtype), P(MinMax.dtype), P(Pair.dtype), P(MinMax.dtype),
                                      lambda a, b: a.first < b.first)) == ["merge_block_sort", "merge_pass"]
    kernels(cc.make_merge_sort(z, None, P(z.value_dtype), None, lambda a, b: a[1] < b[1]))
    # 32 bytes of key and item: the block sort's tile shrinks to fit shared memory; numbers keep 1024
    from cudajit.compute._merge_sort import _tile
    assert _tile(Pair.dtype, MinMax.dtype) == 512 and _tile(np.dtype(np.int64), np.dtype(np.int64)) == 1024
    with pytest.raises(TypeError, match="too large for its block sort"):
        _tile(np.dtype((np.void, 100)), None)


# ---- the struct kernels' logic, run on the CPU ----
#
# The struct scan is an algorithm of its own (three launches, an ordered
# block scan in shared memory); without a GPU its generated kernels are run
# here by a small emulation of the CUDA model: each thread is a Python
# generator that yields at cuda.syncthreads(), the threads of a block run
# in turn between barriers, shared arrays are numpy arrays shared by the
# block's threads, records are numpy records (views, as in a kernel), and
# device functions run as their Python functions.

def _records(a):
    """Structured arrays as a kernel sees them: items with attribute access."""
    return a.view(np.recarray) if a.dtype.names else a


class _Emulated:
    def __init__(self, block):
        from types import SimpleNamespace
        self.block = block
        self.threadIdx, self.blockIdx = SimpleNamespace(x=0), SimpleNamespace(x=0)
        self.gridDim, self.blockDim = SimpleNamespace(x=1), SimpleNamespace(x=block)
        emu = self

        class Shared:
            def array(self, n, dtype):
                emu.calls[emu.threadIdx.x] += 1
                key = emu.calls[emu.threadIdx.x]
                if key not in emu.store:
                    emu.store[key] = _records(np.zeros(n, dtype))
                return emu.store[key]

        class Local:
            def array(self, n, dtype):
                return _records(np.zeros(n, dtype))

        self.shared, self.local = Shared(), Local()

    def grid(self, ndim):
        return self.blockIdx.x * self.block + self.threadIdx.x

    def gridsize(self, ndim):
        return self.gridDim.x * self.block

    def launch(self, fn, grid, args):
        self.gridDim.x = grid
        for b in range(grid):
            self.blockIdx.x, self.store, self.calls = b, {}, [0] * self.block
            threads = {}
            for t in range(self.block):
                self.threadIdx.x = t
                thread = fn(*args)          # a kernel without barriers has run already
                if thread is not None:
                    threads[t] = thread
            while threads:
                for t in list(threads):
                    self.threadIdx.x = t
                    try:
                        next(threads[t])
                    except StopIteration:
                        del threads[t]


def _emulate(monkeypatch, kernel, block):
    """kernel's generated Python function, run by an _Emulated block."""
    import inspect
    from cudajit.dispatcher import DeviceFunction
    monkeypatch.setattr(DeviceFunction, "__call__", lambda self, *a: self.py_func(*a), raising=False)
    fn = kernel.py_func
    source = inspect.getsource(fn) if not fn.__code__.co_filename.startswith("<") else None
    emu = _Emulated(block)
    namespace = dict(fn.__globals__, cuda=emu)
    text = source or _SOURCES[fn.__code__.co_filename, fn.__name__]
    exec(compile(text.replace("cuda.syncthreads()", "yield"), "<emulated>", "exec"), namespace)
    return lambda grid, args: emu.launch(namespace[fn.__name__], grid, args)


_SOURCES = {}


@pytest.fixture
def captured_sources(monkeypatch):
    from cudajit.compute import _build
    real = _build.kernel

    def kernel(key, name, source, env, block=None):
        _SOURCES[f"<cudajit.compute {name}>", name] = source
        return real(key, name, source, env, block)
    monkeypatch.setattr(_build, "kernel", kernel)
    _build._kernels.clear()


def _tagged(counts, tags, init):
    total = np.cumsum(counts) + (init[0] if init else 0)
    last, out = (init[1] if init else 0), []
    for t in tags:
        last = t if t != 0 else last
        out.append(last)
    return total, np.array(out, np.int32)


Tagged = gpu_struct({"count": np.int64, "last": np.int32}, "Tagged")


def _tag(p, q):   # associative, not commutative
    return Tagged(p.count + q.count, q.last if q.last != 0 else p.last)


@pytest.mark.parametrize("n", [1, 5, 1023, 1024, 1025, 2600])
@pytest.mark.parametrize("kind", ["inclusive", "inclusive_init", "exclusive"])
def test_struct_scan_kernels_emulated(monkeypatch, captured_sources, n, kind):
    from cudajit.compute import _build as B
    from cudajit.compute._struct import flat_value, zero_flat
    rng = np.random.default_rng(n)
    h = np.zeros(n, Tagged.dtype)
    h["count"] = rng.integers(-100, 100, n)
    h["last"] = np.where(rng.random(n) < 0.3, rng.integers(1, 1000, n), 0)
    init = None if kind == "inclusive" else Tagged(17, 5)
    make = cc.make_exclusive_scan if kind == "exclusive" else cc.make_inclusive_scan
    obj = make(P(Tagged.dtype), P(Tagged.dtype), _tag, init)
    tiles = -(-n // 1024)
    aggs, prefixes = np.zeros(tiles, Tagged.dtype), np.zeros(tiles, Tagged.dtype)
    out = np.zeros(n, Tagged.dtype)
    out["count"] = np.iinfo(np.int64).min
    flat = flat_value(init, Tagged) if init else zero_flat(Tagged)
    _emulate(monkeypatch, obj.aggregates, B.BLOCK)(tiles, [h, aggs, np.int64(n), flat])
    _emulate(monkeypatch, obj.prefixes, B.BLOCK)(1, [aggs, prefixes, np.int64(tiles), flat])
    _emulate(monkeypatch, obj.tiles, B.BLOCK)(tiles, [h, out, prefixes, np.int64(n), flat])
    total, last = _tagged(h["count"], h["last"], (17, 5) if init else None)
    if kind == "exclusive":
        total, last = np.concatenate([[17], total[:-1]]), np.concatenate([[5], last[:-1]])
    np.testing.assert_array_equal(out["count"], total)
    np.testing.assert_array_equal(out["last"], last)


@pytest.mark.parametrize("n", [0, 1, 200, 256, 3000])
def test_struct_reduce_kernel_emulated(monkeypatch, captured_sources, n):
    from cudajit.compute import _build as B
    from cudajit.compute._struct import flat_value
    rng = np.random.default_rng(n)
    h = np.zeros(n, MinMax.dtype)
    h["min_val"] = rng.random(n)
    h["max_val"] = rng.random(n) + 1
    obj = cc.make_reduce_into(P(MinMax.dtype), P(MinMax.dtype), minmax, MinMax(0.5, 0.5))
    out = np.zeros(1, MinMax.dtype)
    _emulate(monkeypatch, obj.single, B.BLOCK)(1, [h, np.int64(n), out, flat_value(MinMax(0.5, 0.5), MinMax)])
    assert out[0]["min_val"] == min(0.5, h["min_val"].min(initial=9))
    assert out[0]["max_val"] == max(0.5, h["max_val"].max(initial=-9))


@pytest.mark.parametrize("n", [1, 300, 512, 1300])
def test_struct_merge_sort_kernels_emulated(monkeypatch, captured_sources, n):
    # struct keys (32 bytes with the items: 512-item tiles) and struct items,
    # the block sort and the merge passes, stability under equal keys
    from cudajit.compute import _build as B
    rng = np.random.default_rng(n)
    keys = np.zeros(n, Pair.dtype)
    keys["first"] = rng.integers(0, 20, n)
    keys["second"] = np.arange(n)
    items = np.zeros(n, MinMax.dtype)
    items["min_val"] = np.arange(n)
    items["max_val"] = rng.random(n)
    obj = cc.make_merge_sort(P(Pair.dtype), P(MinMax.dtype), P(Pair.dtype), P(MinMax.dtype),
                             lambda a, b: a.first < b.first)
    assert obj.tile == 512
    bufs = [(np.zeros(n, Pair.dtype), np.zeros(n, MinMax.dtype)) for _ in range(2)]
    passes = obj.passes(n)
    sort = _emulate(monkeypatch, obj.block_sort, B.BLOCK)
    merge = _emulate(monkeypatch, obj.merge_pass, B.BLOCK)
    keys, items = _records(keys), _records(items)
    bufs = [tuple(_records(b) for b in pair) for pair in bufs]
    sort(-(-n // obj.tile), [keys, items, *bufs[passes % 2], np.int64(n)])
    w = obj.tile
    for p in range(passes):
        src, dst = bufs[(passes - p) % 2], bufs[(passes - p - 1) % 2]
        merge(-(-n // B.BLOCK), [*src, *dst, np.int64(n), np.int64(w)])
        w *= 2
    order = np.argsort(keys["first"], kind="stable")
    out_k, out_i = bufs[0]
    np.testing.assert_array_equal(out_k, keys[order])
    np.testing.assert_array_equal(out_i, items[order])


def test_struct_reduce_two_passes_and_segments_emulated(monkeypatch, captured_sources):
    # the first pass over chunks into partials, the pass over the partials; segments with empty ones
    from cudajit.compute import _build as B
    from cudajit.compute._struct import flat_value
    rng = np.random.default_rng(7)
    n = 9000
    h = np.zeros(n, MinMax.dtype)
    h["min_val"] = rng.random(n)
    h["max_val"] = rng.random(n) + 1
    init = flat_value(MinMax(0.5, 0.5), MinMax)
    obj = cc.make_reduce_into(P(MinMax.dtype), P(MinMax.dtype), minmax, MinMax(0.5, 0.5))
    partials, out = np.zeros(3, MinMax.dtype), np.zeros(1, MinMax.dtype)
    _emulate(monkeypatch, obj.tiles, B.BLOCK)(3, [h, np.int64(n), partials, init, np.int64(4096)])
    _emulate(monkeypatch, obj.partials, B.BLOCK)(1, [partials, np.int64(3), out, init])
    assert (out[0]["min_val"], out[0]["max_val"]) == (min(0.5, h["min_val"].min()), h["max_val"].max())
    starts = np.array([0, 10, 10, 700, 8000], np.int64)
    ends = np.array([10, 10, 700, 8000, 9000], np.int64)
    seg = cc.make_segmented_reduce(P(MinMax.dtype), P(MinMax.dtype), P(np.int64), P(np.int64), minmax,
                                   MinMax(2.0, 0.0))
    got = np.zeros(5, MinMax.dtype)
    _emulate(monkeypatch, seg.kernel, B.BLOCK)(5, [h, starts, ends, got, flat_value(MinMax(2.0, 0.0), MinMax)])
    for s, (b, e) in enumerate(zip(starts, ends)):
        want = (min(2.0, h["min_val"][b:e].min(initial=9)), max(0.0, h["max_val"][b:e].max(initial=-9)))
        assert (got[s]["min_val"], got[s]["max_val"]) == want, s


def test_struct_calls_on_the_mock_driver(run_python, mock_driver):
    # the host side of every struct algorithm on the mock driver (it runs no
    # kernel): arguments typed and packed (records, the flat initial value),
    # temporary storage viewed as records, the launches each call makes
    from test_runtime import MOCK_PRELUDE
    out = run_python(MOCK_PRELUDE + '''
import cudajit.compute as cc
from cudajit.compute import gpu_struct
inits = []
def play(params):
    inits.append(params)
install(play)

@gpu_struct
class MinMax:
    min_val: np.float64
    max_val: np.float64

def minmax(a, b):
    return MinMax(min(a.min_val, b.min_val), max(a.max_val, b.max_val))

def names():
    got = [l["name"].split("__")[0].replace("cj_", "") for l in launches]
    del launches[:]
    return got

x = cuda.to_device(np.arange(10_000, dtype=np.float32))
d_out = cuda.device_array(1, MinMax.dtype)
cc.reduce_into(cc.TransformIterator(x, lambda v: MinMax(v, v)), d_out, minmax, 100, MinMax(np.inf, -np.inf))
# the flat initial value, a parameter per field (after two arrays of 3 parameters and n)
print(names(), (param(inits[-1], 7, "d"), param(inits[-1], 8, "d")))
cc.reduce_into(cc.TransformIterator(x, lambda v: MinMax(v, v)), d_out, minmax, 10_000, MinMax(0, 1))
print(names())
recs = cuda.device_array(10_000, MinMax.dtype)
cc.inclusive_scan(recs, recs, minmax, None, 10_000)
print(names())
cc.exclusive_scan(recs, recs, minmax, MinMax(1, 2), 5)
print(names())
z = cc.ZipIterator(x, cc.CountingIterator(np.int64(0)))
pairs = cuda.device_array(10_000, z.value_dtype)
count = cuda.device_array(1, np.int64)
cc.select(z, pairs, count, lambda t: t[1] % 2 == 0, 10_000)
cc.unique_by_key(recs, z, recs, pairs, count, lambda a, b: a.min_val == b.min_val, 10_000)
cc.merge_sort(recs, z, recs, pairs, lambda a, b: a.max_val < b.max_val, 10_000)
cc.segmented_reduce(recs, recs, cc.CountingIterator(np.int64(0)), cc.CountingIterator(np.int64(1)), minmax,
                    MinMax(0, 0), 10)
cc.unary_transform(x, recs, lambda v: MinMax(-v, v), 10_000)
print(names())
try:
    cc.reduce_into(recs, cuda.device_array(1, np.float64), minmax, 10, MinMax(0, 0))
except TypeError as e:
    print("TypeError", str(e)[:40])
''', driver=mock_driver)
    lines = out.strip().split("\n")
    assert lines[0] == "['reduce_single'] (inf, -inf)"
    assert lines[1] == "['reduce_tiles', 'reduce_single']"
    assert lines[2] == "['fill_zero', 'scan_aggregates', 'scan_prefixes', 'scan_struct_tiles']" or \
        lines[2] == "['scan_aggregates', 'scan_prefixes', 'scan_struct_tiles']"
    assert lines[3] == "['scan_aggregates', 'scan_prefixes', 'scan_struct_tiles']"
    assert lines[4].startswith("['fill_zero', 'select_tiles', 'fill_zero', 'unique_tiles', 'merge_block_sort', "
                               "'merge_pass'") and lines[4].endswith("'segmented_reduce', 'transform']")
    assert lines[5] == "TypeError d_out holds float64, the values are MinM"


@pytest.mark.parametrize("fields", [{"a": np.int32, "b": np.float32},                    # 8 bytes: CUB's kernels
                                    {"a": np.int32, "b": np.float32, "c": np.int32}])    # 12: the fallback
def test_radix_sort_takes_struct_values(fields):
    from cudajit.compute._build import compile_for
    S = cc.gpu_struct(fields, "RadixValue%d" % len(fields))
    k, v = cc.ProxyArray(np.uint32), cc.ProxyArray(S.dtype)
    obj = cc.make_radix_sort(k, k, v, v, cc.SortOrder.ASCENDING)
    assert obj(None, k, k, v, v, 1000) > 0
    sorter = obj.sorter
    launches = sorter.launches() if sorter.cub_values else sorter.simt().launches()
    cubins = compile_for(launches)
    assert cubins and all(bytes(c[:4]) == b"\x7fELF" for _, c in cubins)
