"""radix_sort through CUB's own kernels, without a GPU:

* NVRTC instantiates cub::DeviceRadixSort's onesweep kernels (histogram,
  exclusive sum, onesweep, single tile) into a cubin for every key type,
  keys only and pairs, ascending and descending, for sm_90 (and sm_80),
  with the tuning CUB's policy hub picks for that architecture (checked
  against the numbers of tuning_radix_sort.cuh);
* the disk cache serves those cubins to a second process, and `python -m
  cudajit warm` fills it from a make_radix_sort object;
* the host dispatch (runtime/device_radix_sort.cpp) on the mock driver:
  each kernel is played in numpy with CUB's meaning from the parameters it
  receives, so the launch order, grids, buffers, DoubleBuffer moves, bit
  ranges, spare buffers and clears are checked end to end against a
  numpy sort.

The GPU runs are tests/gpu/test_compute_gpu.py."""
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudajit
import cudajit.compute as cc
from cudajit import _core

from test_runtime import MOCK_PRELUDE

pytestmark = pytest.mark.usefixtures("cub_cache")

KEYS = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


def program(key, value_bytes=0, descending=False, offset64=False, arch=90):
    return _core.radix_sort_program(key, value_bytes, descending, offset64, arch)


def kernel_params(cubin, kernel):
    """[(ordinal, offset, size)] of a kernel's parameters, from its
    .nv.info.<name> section of the cubin (EIATTR_KPARAM_INFO entries)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    data = None
    for h in heads:
        if cubin[names + h[0]: cubin.index(b"\0", names + h[0])] == b".nv.info." + kernel.encode():
            data = cubin[h[4]: h[4] + h[5]]
    assert data is not None, f"no .nv.info section for {kernel}"
    at, params = 0, []
    while at < len(data):
        fmt, attr = data[at], data[at + 1]
        if fmt == 4:   # EIFMT_SVAL: u16 size, then the value
            size, = struct.unpack_from("<H", data, at + 2)
            if attr == 0x17:   # EIATTR_KPARAM_INFO: index, ordinal, offset, size << 18 | ...
                _, ordinal, offset, bits = struct.unpack_from("<IHHI", data, at + 4)
                params.append((ordinal, offset, bits >> 18))
            at += 4 + size
        else:          # EIFMT_NVAL (2 bytes), BVAL (2), HVAL (4)
            at += 4 if fmt == 3 else 2
    return sorted(params)


def param_sizes(offset64):
    """What runtime/device_radix_sort.cpp packs for each kernel: pointers,
    OffsetT, ints, CUB's empty identity_decomposer_t (1 byte)."""
    o = 8 if offset64 else 4
    return {"histogram": [8, 8, o, 4, 4, 1], "exclusive_sum": [8],
            "onesweep": [8] * 8 + [4, 4, 4, 1], "single_tile": [8, 8, 8, 8, o, 4, 4, 1]}


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("value_bytes", [0, 4])
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_cub_kernels_compile_to_a_cubin(key, value_bytes, descending):
    p = program(key, value_bytes, descending)
    cubin = p["cubin"]
    assert cubin[:4] == b"\x7fELF"
    hist, scan, onesweep, single = p["kernels"]
    for name, kernel in ((hist, "DeviceRadixSortHistogramKernel"), (scan, "DeviceRadixSortExclusiveSumKernel"),
                         (onesweep, "DeviceRadixSortOnesweepKernel"), (single, "DeviceRadixSortSingleTileKernel")):
        assert kernel in name and "SM_900" in name, name
        assert name.encode() + b"\0" in cubin, f"{kernel} is not in the cubin"
    # the parameters the dispatch packs are the ones the kernels declare
    for name, what in zip(p["kernels"], ("histogram", "exclusive_sum", "onesweep", "single_tile")):
        assert [size for _, _, size in kernel_params(cubin, name)] == param_sizes(False)[what], what
    # the order is a template argument: ...SortOrderE0 (ascending) or E1
    assert f"SortOrderE{int(descending)}E" in onesweep
    pol = p["policy"]
    assert pol["onesweep"] and pol["radix_bits"] == 8 and pol["onesweep_threads"] == 384
    assert p["spec"] == f"radix_sort {key} v{value_bytes} {'descending' if descending else 'ascending'} o32 sm_90"


@pytest.mark.parametrize("key", KEYS)
def test_cub_kernels_compile_for_sm_80(key):
    p = program(key, 8, True, arch=80)
    assert p["cubin"][:4] == b"\x7fELF" and all("SM_800" in k for k in p["kernels"])
    for name, what in zip(p["kernels"], ("histogram", "exclusive_sum", "onesweep", "single_tile")):
        assert [size for _, _, size in kernel_params(p["cubin"], name)] == param_sizes(False)[what], what


# CUB's sm_90 tuning (tuning_radix_sort.cuh, OnesweepSmallKeyTunedPolicy):
# 4-byte keys: keys only 20 - OFFSET_64BIT - FLOAT_KEYS items, pairs with
# values under 8 bytes 23 (17 with 64-bit offsets); 8-byte keys 30 (24
# with 8-byte values), scaled by 4 / sizeof(dominant type). sm_80
# (Policy800): 384 x 21 (17 for 64-bit offsets, 4-byte keys, pairs).
@pytest.mark.parametrize("key,value_bytes,offset64,arch,items", [
    ("uint32", 0, False, 90, 20), ("float32", 0, False, 90, 19), ("uint32", 0, True, 90, 19),
    ("uint32", 4, False, 90, 23), ("uint32", 4, True, 90, 17), ("uint64", 0, False, 90, 15),
    ("float64", 8, False, 90, 12), ("uint32", 0, False, 80, 21), ("int32", 4, True, 80, 17),
    ("float64", 8, False, 80, 10),
])
def test_policy_is_cubs_for_the_arch(key, value_bytes, offset64, arch, items):
    p = program(key, value_bytes, False, offset64, arch)
    pol = p["policy"]
    assert (pol["onesweep_threads"], pol["onesweep_items"]) == (384, items)
    assert pol["histogram_threads"] == 128 and pol["exclusive_sum_threads"] == 256
    assert (pol["single_tile_threads"], pol["single_tile_items"]) == (256, 19 * 4 // max(4, int(key[-2:]) // 8,
                                                                                          value_bytes))
    assert f"SM_{arch}0" in p["kernels"][2]
    assert p["cubin"][:4] == b"\x7fELF"


def test_sixteen_byte_values_and_bad_specs():
    p = program("uint64", 16, True)
    assert p["cubin"][:4] == b"\x7fELF" and "cj_bytes16" in p["kernels"][2]
    wide = program("float64", 16, True, offset64=True)
    for name, what in zip(wide["kernels"], ("histogram", "exclusive_sum", "onesweep", "single_tile")):
        assert [size for _, _, size in kernel_params(wide["cubin"], name)] == param_sizes(True)[what], what
    with pytest.raises(cudajit.ToolchainError, match="keys int32, uint32"):
        program("float16")
    with pytest.raises(cudajit.ToolchainError, match="values of 1, 2, 4, 8 or 16 bytes"):
        program("uint32", 3)


def test_memory_then_disk_then_a_second_process(tmp_path):
    _core.radix_sort_clear_memory_cache()   # earlier tests of this process may hold it
    first = program("int64", 8, True)
    assert first["from"] in ("compiled", "disk")
    assert program("int64", 8, True)["from"] == "memory"
    _core.radix_sort_clear_memory_cache()
    again = program("int64", 8, True)
    assert again["from"] == "disk" and again["cubin"] == first["cubin"] and again["kernels"] == first["kernels"]
    path = _core.radix_sort_cache_path("int64", 8, True, False, 90)
    assert os.path.exists(path) and path.endswith(".cjrsort")
    code = ("from cudajit import _core\n"
            "p = _core.radix_sort_program('int64', 8, True, False, 90)\n"
            "print(p['from'], p['key'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["disk", first["key"]]
    # a damaged entry is compiled again and rewritten, never used
    with open(path, "r+b") as f:
        f.seek(200)
        f.write(b"\xff\xff\xff\xff")
    _core.radix_sort_clear_memory_cache()
    assert program("int64", 8, True)["from"] == "compiled"
    _core.radix_sort_clear_memory_cache()
    assert program("int64", 8, True)["from"] == "disk"


def test_warm_fills_the_cache_for_a_fresh_process(tmp_path):
    module = tmp_path / "sorts.py"
    module.write_text("import numpy as np\nimport cudajit.compute as compute\nP = compute.ProxyArray\n"
                      "pairs = compute.make_radix_sort(P(np.float32), P(np.float32), P(np.int16), P(np.int16),\n"
                      "                                compute.SortOrder.DESCENDING)\n")
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path / "cache"))
    warm = subprocess.run([sys.executable, "-m", "cudajit", "warm", "--arch", "sm_80,sm_90", str(module)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert "pairs:cub_radix_sort() sm_80" in warm.stdout and "pairs:cub_radix_sort() sm_90" in warm.stdout
    assert " 0 failed" in warm.stdout, warm.stdout
    code = ("from cudajit import _core\n"
            "print(*[_core.radix_sort_program('float32', 2, True, False, a)['from'] for a in (80, 90)])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["disk", "disk"]


def test_compile_for_and_object_launches():
    P = cc.ProxyArray
    obj = cc.make_radix_sort(P(np.uint32), P(np.uint32), P(np.float64), P(np.float64), cc.SortOrder.ASCENDING)
    out = cc.compile_for(obj.sorter.launches(), cc=(8, 0))
    assert [n for n, _ in out] == ["cub_radix_sort"] and out[0][1][:4] == b"\x7fELF"


def test_temp_bytes_bound():
    tb = _core.radix_sort_temp_bytes
    assert tb(0, 4, 0, 0, 32, False) == 0 and tb(1000, 4, 0, 7, 7, False) == 0
    n = 10_000_000
    spare = tb(n, 4, 4, 0, 32, False)
    assert spare - tb(n, 4, 4, 0, 32, True) >= n * 8        # the spare keys and values
    assert tb(n, 4, 4, 0, 8, False) == tb(n, 4, 4, 0, 8, True)   # one pass writes the output directly
    # the object form answers the same without a GPU
    P = cc.ProxyArray
    obj = cc.make_radix_sort(P(np.uint32), P(np.uint32), None, None, cc.SortOrder.ASCENDING)
    assert obj(None, P(np.uint32), P(np.uint32), None, None, n) == tb(n, 4, 0, 0, 32, False)
    assert obj(None, P(np.uint32), P(np.uint32), None, None, n, begin_bit=3, end_bit=3) == 0
    with pytest.raises(ValueError, match="begin_bit <= end_bit <= 32"):
        obj(None, P(np.uint32), P(np.uint32), None, None, n, begin_bit=0, end_bit=33)


# ---- the host dispatch on the mock driver ----------------------------------

# Each CUB kernel played in numpy, from the parameters the runtime packed.
PLAYER = r"""
import cudajit.compute as cc
from cudajit import _core
KEY = np.dtype(KEY_NAME)
UNS = np.dtype("u%d" % KEY.itemsize)
BITS = KEY.itemsize * 8
VAL = None if VALUE_NAME is None else np.dtype(VALUE_NAME)

def ordered(keys):   # CUB's bit twiddle: unsigned order is the key order (-0.0 as +0.0)
    u = keys.view(UNS).copy()
    sign = UNS.type(1) << UNS.type(BITS - 1)
    if KEY.kind == "f":
        u[u == sign] = 0
        neg = (u & sign) != 0
        u = np.where(neg, ~u, u | sign)
    elif KEY.kind == "i":
        u = u ^ sign
    return ~u if DESC else u

def digits(keys, bit, nbits):
    return ((ordered(keys) >> UNS.type(bit)) & UNS.type((1 << nbits) - 1)).astype(np.int64)

def arr(ptr, n, dtype):
    return view(ptr, (n,), (np.dtype(dtype).itemsize,), dtype)

# the offsets' width (OffsetT: n's parameter) the dispatch picks for these keys and values
OFF = "Q" if _core.radix_sort_offset64(0, KEY.itemsize, 0 if VAL is None else np.dtype(VAL).itemsize, 90) else "I"
BIN = np.uint64 if OFF == "Q" else np.uint32   # the bins are OffsetT too
calls = []
def play(params):
    name = launches[-1]["name"]
    q = lambda k, f="Q": param(params, k, f)
    if "Histogram" in name:
        bins, keys, n, start, end = q(0), q(1), q(2, OFF), q(3, "i"), q(4, "i")
        calls.append(("histogram", n, start, end))
        passes = -(-(end - start) // 8)
        b = arr(bins, passes * 256, BIN)
        k = arr(keys, n, KEY)
        for p in range(passes):
            bit = start + 8 * p
            b[p * 256:(p + 1) * 256] += np.bincount(digits(k, bit, min(8, end - bit)), minlength=256).astype(BIN)
    elif "ExclusiveSum" in name:
        b = arr(q(0), launches[-1]["grid"][0] * 256, BIN).reshape(-1, 256)
        calls.append(("exclusive_sum", b.shape[0]))
        b[:] = np.cumsum(b, axis=1) - b
    elif "Onesweep" in name:
        bins_out, bins_in, keys_out, keys_in, vals_out, vals_in = (q(k) for k in range(2, 8))
        n, bit, nbits = q(8, "i"), q(9, "i"), q(10, "i")   # a portion's count: int
        calls.append(("onesweep", n, bit, nbits, keys_in, keys_out))
        k = arr(keys_in, n, KEY)
        d = digits(k, bit, nbits)
        bi = arr(bins_in, 256, BIN).astype(np.int64)
        order = np.argsort(d, kind="stable")
        counts = np.bincount(d, minlength=256)
        starts = np.cumsum(counts) - counts
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n) - starts[d[order]]
        pos = bi[d] + rank
        out_keys = arr(keys_out, int(pos.max()) + 1, KEY)
        out_keys[pos] = k
        if VAL is not None and vals_in:   # keys only: no values (the pointers are not read)
            arr(vals_out, int(pos.max()) + 1, VAL)[pos] = arr(vals_in, n, VAL)
        if bins_out:
            arr(bins_out, 256, BIN)[:] = (bi + counts).astype(BIN)
    elif "SingleTile" in name:
        keys_in, keys_out, vals_in, vals_out = q(0), q(1), q(2), q(3)
        n, begin, end = q(4, OFF), q(5, "i"), q(6, "i")
        calls.append(("single_tile", n, begin, end))
        k = arr(keys_in, n, KEY)
        o = np.argsort((ordered(k) >> UNS.type(begin)) & UNS.type((1 << (end - begin)) - 1), kind="stable")
        arr(keys_out, n, KEY)[:] = k[o]
        if VAL is not None and vals_in:
            arr(vals_out, n, VAL)[:] = arr(vals_in, n, VAL)[o]
    else:
        raise AssertionError(name)
install(play)

def want(keys, begin=0, end=BITS):
    mask = UNS.type((1 << (end - begin)) - 1) if end - begin < BITS else ~UNS.type(0)
    return np.argsort((ordered(keys) >> UNS.type(begin)) & mask, kind="stable")

def keys_of(rng, n):
    if KEY.kind == "f":
        k = ((rng.random(n) - 0.5) * 1000).astype(KEY)
        k[:: 7] = 0.0
        k[3:: 7] = -0.0            # CUB: equal to +0.0, kept in order
        return k
    info = np.iinfo(KEY)
    k = rng.integers(info.min, info.max, n, dtype=KEY, endpoint=True)
    k[: n // 3] = k[n // 2: n // 2 + n // 3]
    return k
"""


def mock_sort(run_python, mock_driver, key, value, descending, body):
    code = (MOCK_PRELUDE + f"\nKEY_NAME = {key!r}\nVALUE_NAME = {value!r}\nDESC = {descending}\n" + PLAYER +
            textwrap.dedent(body))
    return run_python(code, driver=mock_driver)


@pytest.mark.parametrize("key,value,descending", [("uint32", "int32", False), ("float32", None, True),
                                                  ("int64", "float64", True), ("float64", "int16", False)])
def test_dispatch_on_the_mock_driver(run_python, mock_driver, key, value, descending):
    out = mock_sort(run_python, mock_driver, key, value, descending, """
        rng = np.random.default_rng(7)
        order = cc.SortOrder.DESCENDING if DESC else cc.SortOrder.ASCENDING
        for n in (1, 1000, 4864, 30_011, 200_003):
            keys = keys_of(rng, n)
            vals = None if VAL is None else rng.integers(-100, 100, n).astype(VAL)
            kin = cuda.to_device(keys)
            kout = cuda.to_device(np.zeros(n, KEY))
            vin = None if VAL is None else cuda.to_device(vals)
            vout = None if VAL is None else cuda.to_device(np.zeros(n, VAL))
            del launches[:], calls[:]
            cc.radix_sort(kin, kout, vin, vout, order, n)
            w = want(keys)
            assert (kout.copy_to_host().view(UNS) == keys[w].view(UNS)).all(), n
            if VAL is not None:
                assert (vout.copy_to_host() == vals[w]).all(), n
            assert (kin.copy_to_host().view(UNS) == keys.view(UNS)).all()   # the input is only read
            kinds = [c[0] for c in calls]
            if kinds == ["single_tile"]:
                assert launches[0]["grid"] == (1, 1, 1) and launches[0]["block"] == (256, 1, 1)
            else:
                passes = BITS // 8
                assert kinds == ["histogram", "exclusive_sum"] + ["onesweep"] * passes, kinds
                assert launches[0]["grid"] == (16 * 132, 1, 1) and launches[0]["block"] == (128, 1, 1)
                assert launches[1]["grid"] == (passes, 1, 1) and launches[1]["block"] == (256, 1, 1)
                sweeps = [c for c in calls if c[0] == "onesweep"]
                assert [c[2] for c in sweeps] == list(range(0, BITS, 8))
                assert sweeps[0][4] == kin.device_ctypes_pointer.value   # the first pass reads the input
                assert sweeps[-1][5] == kout.device_ctypes_pointer.value  # the last writes the output
                tile = launches[2]["block"][0]
                assert tile == 384 and all(l["block"] == (384, 1, 1) for l in launches[2:])
            print("ok", n, kinds[0])
    """)
    assert out.count("ok") == 5 and "ok 200003 histogram" in out and "ok 1000 single_tile" in out


def test_double_buffer_bits_streams_and_copies_on_the_mock(run_python, mock_driver, monkeypatch):
    # one offset width for the pairs and the keys-only sorts below (the
    # player reads one): 32-bit, which 4-byte keys alone would not take
    monkeypatch.setenv("CUDAJIT_RADIX_OFFSET_BITS", "32")
    out = mock_sort(run_python, mock_driver, "uint32", "uint32", False, """
        rng = np.random.default_rng(3)
        n = 50_000
        keys = rng.integers(0, 2**32, n, dtype=np.uint32)
        vals = np.arange(n, dtype=np.uint32)
        for begin, end, passes in ((0, 32, 4), (4, 20, 2), (0, 24, 3), (5, 6, 1)):
            kb = cc.DoubleBuffer(cuda.to_device(keys), cuda.to_device(np.zeros(n, np.uint32)))
            vb = cc.DoubleBuffer(cuda.to_device(vals), cuda.to_device(np.zeros(n, np.uint32)))
            del launches[:], calls[:]
            cc.radix_sort(kb, None, vb, None, cc.SortOrder.ASCENDING, n, begin_bit=begin, end_bit=end)
            w = want(keys, begin, end)
            assert kb.selector == passes % 2 and vb.selector == kb.selector, (begin, end, kb.selector)
            assert (kb.current().copy_to_host() == keys[w]).all() and (vb.current().copy_to_host() == w).all()
            assert [c[2:4] for c in calls if c[0] == "onesweep"] == [(b, min(8, end - b)) for b in range(begin, end, 8)]
            # arrays: an even number of passes goes through the spare in the temporary storage
            out_k, out_v = cuda.to_device(np.zeros(n, np.uint32)), cuda.to_device(np.zeros(n, np.uint32))
            del calls[:]
            cc.radix_sort(cuda.to_device(keys), out_k, cuda.to_device(vals), out_v, cc.SortOrder.ASCENDING, n,
                          begin_bit=begin, end_bit=end)
            assert (out_k.copy_to_host() == keys[w]).all() and (out_v.copy_to_host() == w).all()
            outs = [c[5] for c in calls if c[0] == "onesweep"]
            assert outs[-1] == out_k.device_ctypes_pointer.value and len(set(outs)) == min(2, passes)
            print("ok", begin, end)
        # no bits: the arrays form copies (CUB's InvokeCopy), a DoubleBuffer stays as it is
        out_k, kin = cuda.to_device(np.zeros(n, np.uint32)), cuda.to_device(keys)
        copies = _lib.cjmock_async_copies()
        del launches[:]
        cc.radix_sort(kin, out_k, None, None, cc.SortOrder.ASCENDING, n, begin_bit=9, end_bit=9)
        assert _lib.cjmock_async_copies() == copies + 1 and not launches
        assert (out_k.copy_to_host() == keys).all()
        kb = cc.DoubleBuffer(cuda.to_device(keys), cuda.to_device(np.zeros(n, np.uint32)))
        cc.radix_sort(kb, None, None, None, cc.SortOrder.ASCENDING, n, begin_bit=9, end_bit=9)
        assert kb.selector == 0 and not launches
        # a stream given goes to every launch; the object form's storage protocol
        s = cuda.stream()
        obj = cc.make_radix_sort(cuda.to_device(keys), out_k, None, None, cc.SortOrder.ASCENDING)
        need = obj(None, cuda.to_device(keys), out_k, None, None, n)
        memsets = _lib.cjmock_async_memsets()
        try:
            obj(cuda.device_array(need - 512, np.uint8), cuda.to_device(keys), out_k, None, None, n)
            raise SystemExit("a small temp_storage was taken")
        except ValueError as e:
            assert "temp_storage holds" in str(e)
        del launches[:]
        got = obj(cuda.device_array(need, np.uint8), cuda.to_device(keys), out_k, None, None, n, stream=s)
        assert got == need, (got, need)
        assert {l["stream"] for l in launches} == {int(s)}, launches
        assert _lib.cjmock_async_memsets() - memsets == 2 + 4, _lib.cjmock_async_memsets() - memsets   # counters, bins, a look-back clear per pass
        assert (out_k.copy_to_host() == np.sort(keys)).all()
        # CUB's kernels move bits: an output of another type is an error, not garbage
        for bad in (cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.zeros(n, np.int64))):
            try:
                cc.radix_sort(cuda.to_device(keys), bad, None, None, cc.SortOrder.ASCENDING, n)
                raise SystemExit("a d_out_keys of another type was taken")
            except TypeError as e:
                assert "d_out_keys holds" in str(e), e
        print("done")
    """)
    assert out.count("ok") == 4 and "done" in out


def test_strided_arrays_take_the_fallback_on_the_mock(run_python, mock_driver):
    # which kernels run (the mock plays none): CUB's for dense arrays, the
    # fallback's (radix_count, the scan, radix_scatter) for a strided one
    out = run_python(MOCK_PRELUDE + textwrap.dedent("""
        import cudajit.compute as cc
        install(lambda params: None)
        keys = cuda.to_device(np.arange(20_000, dtype=np.int32))
        out = cuda.to_device(np.zeros(20_000, np.int32))
        cc.radix_sort(keys, out, None, None, cc.SortOrder.ASCENDING, 20_000)
        print(sorted({l["name"].split("radix_sort")[-1][2:40] for l in launches}))
        del launches[:]
        cc.radix_sort(keys[::2], out[::2], None, None, cc.SortOrder.ASCENDING, 10_000)
        print(sorted({l["name"] for l in launches if "radix" in l["name"]}))
        # CUB's kernels not compiling here (other CCCL headers): the fallback, with a warning
        import warnings
        from cudajit.compute import _sort
        def broken(self, arch, offset64=False):
            raise cuda.ToolchainError("NVRTC compilation failed (stand-in)")
        _sort._CubProgram.program = broken
        del launches[:]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cc.radix_sort(keys, out, None, None, cc.SortOrder.DESCENDING, 20_000)
            cc.radix_sort(keys, out, None, None, cc.SortOrder.DESCENDING, 20_000)
        print(len(caught), str(caught[0].message) if caught else "")
        print(sorted({l["name"] for l in launches if "radix" in l["name"]}))
    """), driver=mock_driver)
    cub, simt, warned, fallback = out.splitlines()[-4:]
    assert "OnesweepKernel" in cub and "HistogramKernel" in cub, cub
    assert "radix_count" in simt and "radix_scatter" in simt and "Onesweep" not in simt, simt
    assert warned.startswith("1 radix_sort: CUB's radix sort kernels do not compile here"), warned
    assert "radix_count" in fallback and "Onesweep" not in fallback, fallback


def test_offset_width_follows_the_measured_tuning():
    # 64-bit offsets past 2^32 - 1 items, and for 4-byte keys alone on sm_90
    # (CUB's 64-bit-offset tuning sorted 2^26 uint32 keys 12% faster on an
    # H100; pairs were 3% slower with it): runtime/device_radix_sort.h
    off64 = _core.radix_sort_offset64
    assert off64(1 << 33, 8, 8, 80) and off64(1 << 33, 4, 4, 90)
    assert off64(1000, 4, 0, 90) and not off64(1000, 4, 4, 90)
    assert not off64(1000, 4, 0, 80) and not off64(1000, 8, 0, 90)
    # warm compiles the program a sort of fewer than 2^32 items runs
    obj = cc.make_radix_sort(cc.ProxyArray(np.float32), cc.ProxyArray(np.float32), None, None,
                             cc.SortOrder.ASCENDING)
    [(cub, _)] = obj.sorter.launches()
    assert cub.program(90)["cubin"] == program("float32", 0, False, True, 90)["cubin"]
    assert cub.program(80)["cubin"] == program("float32", 0, False, False, 80)["cubin"]
