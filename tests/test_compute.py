"""cudajit.compute without a GPU: every algorithm's kernels for int32, int64,
float32 and float64 with an OpKind and a user operator, through cudajit's
pipeline (CUB block algorithms by NVRTC to LTO-IR, nvJitLink) to a cubin for
sm_90 (and sm_80 for one set); the iterators; operator typing and the
errors that need no GPU. The GPU runs are tests/gpu/test_compute_gpu.py."""
import numpy as np
import pytest

import cudajit.compute as cc

# CUB instantiations and the generated kernels' disk entries go to a fresh
# directory (conftest.py), not the user's cache
pytestmark = pytest.mark.usefixtures("cub_cache")

DTYPES = [np.int32, np.int64, np.float32, np.float64]


def is_cubin(blob):
    return bytes(blob[:4]) == b"\x7fELF"


def user_max(a, b):
    return a if a > b else b


def compiled(obj, cc_=(9, 0)):
    out = cc.compile_for(obj.launches(), cc=cc_)
    assert out and all(is_cubin(c) for _, c in out)
    return [name for name, _ in out]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [cc.OpKind.PLUS, user_max], ids=["PLUS", "user"])
def test_every_algorithm_compiles(dtype, op):
    P = cc.ProxyArray
    init = np.zeros(1, dtype)
    assert compiled(cc.make_reduce_into(P(dtype), P(dtype), op, init)) == \
        ["reduce_tiles", "reduce_single", "reduce_single"]
    assert compiled(cc.make_segmented_reduce(P(dtype), P(dtype), P(np.int64), P(np.int64), op, init)) == \
        ["segmented_reduce"]
    assert compiled(cc.make_inclusive_scan(P(dtype), P(dtype), op, None))[0] == "scan_tiles"
    assert compiled(cc.make_inclusive_scan(P(dtype), P(dtype), op, init))[0] == "scan_tiles"
    assert compiled(cc.make_exclusive_scan(P(dtype), P(dtype), op, init))[0] == "scan_tiles"
    assert compiled(cc.make_binary_transform(P(dtype), P(dtype), P(dtype), op)) == ["transform"]


def test_sm80_and_unary_transform():
    P = cc.ProxyArray
    assert compiled(cc.make_reduce_into(P(np.float32), P(np.float32), cc.OpKind.MAXIMUM, np.zeros(1, np.float32)),
                    (8, 0))
    assert compiled(cc.make_unary_transform(P(np.float64), P(np.float32), lambda v: v * 0.5)) == ["transform"]


def test_iterators_compile():
    P = cc.ProxyArray
    init = np.zeros(1, np.int64)
    for it in (cc.CountingIterator(np.int64(3)), cc.ConstantIterator(np.int64(2)),
               cc.TransformIterator(cc.CountingIterator(np.int32(0)), lambda v: v * v),
               cc.TransformIterator(P(np.float32), lambda v: v > 0.5),
               cc.ReverseIterator(P(np.int64)), cc.CacheModifiedInputIterator(P(np.int32), "stream"),
               cc.PermutationIterator(P(np.int64), P(np.int32)),
               cc.PermutationIterator(cc.TransformIterator(cc.CountingIterator(np.int64(0)), lambda v: v * 3),
                                      cc.ReverseIterator(P(np.int64)))):
        compiled(cc.make_reduce_into(it, P(np.int64), cc.OpKind.PLUS, init))


def test_permutation_iterator():
    it = cc.PermutationIterator(cc.ProxyArray(np.float32), cc.ReverseIterator(cc.ProxyArray(np.int64)))
    params, expr, _ = it._items("p_")
    assert [name for name, _ in params] == ["p_v_a", "p_x_a"]
    assert expr == "p_v_a[(p_x_a[p_x_a.size - 1 - i])]" and it.value_dtype == np.float32
    with pytest.raises(TypeError, match="PermutationIterator indices must be integers, got float32"):
        cc.PermutationIterator(cc.ProxyArray(np.float32), cc.ProxyArray(np.float32))


def test_transform_iterator_value_type():
    it = cc.TransformIterator(cc.CountingIterator(np.int32(0)), lambda v: v * 0.5)
    assert it.value_dtype == np.float64
    it = cc.TransformIterator(cc.ProxyArray(np.float32), lambda v: v > 0)
    assert it.value_dtype == np.bool_


def test_zip_iterator():
    # cuda.compute's ZipIterator: an operator receives the items side by
    # side as a tuple (x[0], x[1]); transforms and the iterators that wrap
    # others take it, the algorithms that need struct items refuse it.
    P = cc.ProxyArray
    z = cc.ZipIterator(P(np.float32), cc.CountingIterator(np.int32(5)))
    params, expr, _ = z._items("p_")
    assert [n for n, _ in params] == ["p_z0_a", "p_z1_start"]
    assert expr == "(p_z0_a[i], p_z1_T(p_z1_start + i),)"
    assert z.value_dtype == np.dtype([("f0", np.float32), ("f1", np.int32)])
    assert compiled(cc.make_unary_transform(z, P(np.float64), lambda t: t[0] * t[1])) == ["transform"]
    assert compiled(cc.make_binary_transform(cc.ZipIterator([P(np.int64), P(np.int64)]), P(np.float32),
                                             P(np.float32), lambda t, y: (t[0] - t[1]) * y)) == ["transform"]
    squared = cc.TransformIterator(z, lambda t: t[0] * t[0] + t[1])
    assert squared.value_dtype == np.float64
    compiled(cc.make_reduce_into(squared, P(np.float64), cc.OpKind.PLUS, np.zeros(1, np.float64)))
    picked = cc.PermutationIterator(z, cc.ReverseIterator(P(np.int64)))
    assert picked.tuple_items
    assert compiled(cc.make_unary_transform(picked, P(np.float32), lambda t: t[0])) == ["transform"]
    # struct algorithms (tests/test_compute_struct.py) need struct initial values and outputs
    with pytest.raises(TypeError, match="h_init: the items are structs or tuples .* the initial value must be a "
                                        "struct too"):
        cc.make_reduce_into(z, P(np.float32), cc.OpKind.PLUS, np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="d_out holds float32, the values are Struct_f0_f1 structs"):
        cc.make_inclusive_scan(picked, P(np.float32), cc.OpKind.PLUS, None)
    with pytest.raises(TypeError, match="d_samples: a ZipIterator's items are tuples, which this algorithm"):
        cc.make_histogram_even(z, P(np.int32), 5, 0.0, 1.0, 10)
    with pytest.raises(ValueError, match="at least one"):
        cc.ZipIterator()


def test_operator_result_type_is_checked():
    P = cc.ProxyArray
    with pytest.raises(TypeError, match="returns float64 for int32 operands: the result must be int32"):
        cc.make_reduce_into(P(np.int32), P(np.int32), lambda a, b: a / b, np.zeros(1, np.int32))
    # int32 + int32 widens to int64 under Python's rules: same kind, converted back
    cc.make_reduce_into(P(np.int32), P(np.int32), lambda a, b: a + b, np.zeros(1, np.int32))


def test_argument_errors():
    P = cc.ProxyArray
    with pytest.raises(TypeError, match="d_in must be a device array"):
        cc.make_reduce_into(np.arange(3), P(np.int32), cc.OpKind.PLUS, np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="d_in must be 1-d|OpKind.NEGATE takes 1 operand"):
        cc.make_reduce_into(P(np.int32), P(np.int32), cc.OpKind.NEGATE, np.zeros(1, np.int32))
    with pytest.raises(TypeError, match="op must be a cudajit.compute.OpKind or a Python function"):
        cc.make_reduce_into(P(np.int32), P(np.int32), "plus", np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="exclusive_scan needs an init_value"):
        cc.make_exclusive_scan(P(np.int32), P(np.int32), cc.OpKind.PLUS, None)
    with pytest.raises(ValueError, match="h_init must be one value"):
        cc.make_reduce_into(P(np.int32), P(np.int32), cc.OpKind.PLUS, np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="start_offsets_in must hold integers"):
        cc.make_segmented_reduce(P(np.float32), P(np.float32), P(np.float32), P(np.int64), cc.OpKind.PLUS,
                                 np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="output iterators are not supported"):
        cc.make_reduce_into(P(np.int32), cc.CountingIterator(np.int32(0)), cc.OpKind.PLUS, np.zeros(1, np.int32))


def test_operator_compile_error_names_the_source_line():
    import cudajit

    def bad(a, b):
        return a.no_such_attribute + b

    with pytest.raises(cudajit.errors.CompileError, match=r"test_compute.py:\d+"):
        cc.make_reduce_into(cc.ProxyArray(np.float32), cc.ProxyArray(np.float32), bad, np.zeros(1, np.float32))


def test_opkind_members_are_cuda_compute_names():
    names = {k.name for k in cc.OpKind}
    for name in ("PLUS", "MINUS", "MULTIPLIES", "DIVIDES", "MODULUS", "EQUAL_TO", "NOT_EQUAL_TO", "GREATER",
                 "LESS", "GREATER_EQUAL", "LESS_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "BIT_AND",
                 "BIT_OR", "BIT_XOR", "BIT_NOT", "IDENTITY", "NEGATE", "MINIMUM", "MAXIMUM"):
        assert name in names


def test_temp_storage_sizes():
    P = cc.ProxyArray
    r = cc.make_reduce_into(P(np.float32), P(np.float32), cc.OpKind.PLUS, np.zeros(1, np.float32))
    assert r(None, None, None, 100, None, None) == 0          # one block, no partials
    assert r(None, None, None, 10**8, None, None) > 0
    s = cc.make_inclusive_scan(P(np.float32), P(np.float32), cc.OpKind.PLUS, None)
    assert s(None, None, None, None, None, 0) == 0
    assert s(None, None, None, None, None, 10**6) >= (10**6 // cc._scan.TILE) * 8   # a packed word per tile
    s = cc.make_inclusive_scan(P(np.float64), P(np.float64), cc.OpKind.PLUS, None)
    assert s(None, None, None, None, None, 10**6) >= 2 * (10**6 // cc._scan.TILE) * 128   # values on their own lines
    with pytest.raises(ValueError, match="num_items must be >= 0"):
        s(None, None, None, None, None, -1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_select_unique_histogram_compile(dtype):
    P = cc.ProxyArray
    assert compiled(cc.make_select(P(dtype), P(dtype), P(np.int64), lambda v: v > 0)) == ["select_tiles"]
    assert compiled(cc.make_unique_by_key(P(dtype), P(np.float32), P(dtype), P(np.float32), P(np.int64),
                                          cc.OpKind.EQUAL_TO)) == ["unique_tiles"]
    lv = np.array([0], dtype), np.array([10], dtype)
    assert compiled(cc.make_histogram_even(P(dtype), P(np.int32), np.array([11], np.int32), *lv, 0)) == \
        ["histogram", "histogram", "fill_zero"]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64])
def test_radix_sort_compiles(dtype):
    P = cc.ProxyArray
    for values, order in ((None, cc.SortOrder.ASCENDING), (P(np.float64), cc.SortOrder.DESCENDING)):
        obj = cc.make_radix_sort(P(dtype), P(dtype), values, values, order)
        # CUB's kernels (tests/test_compute_radix.py), and the fallback's for strided arrays
        assert [n for n, _ in cc.compile_for(obj.sorter.launches())] == ["cub_radix_sort"]
        assert [n for n, _ in cc.compile_for(obj.sorter.simt().launches())][:2] == ["radix_count", "radix_scatter"]
    with pytest.raises(TypeError, match="keys must be one of"):
        cc.make_radix_sort(P(np.float16), P(np.float16), None, None, cc.SortOrder.ASCENDING)
    with pytest.raises(TypeError, match="order must be a cudajit.compute.SortOrder"):
        cc.make_radix_sort(P(dtype), P(dtype), None, None, "ascending")


@pytest.mark.parametrize("dtype", DTYPES)
def test_merge_sort_compiles(dtype):
    P = cc.ProxyArray
    keys_only = cc.make_merge_sort(P(dtype), None, P(dtype), None, cc.OpKind.LESS)
    assert [n for n, _ in cc.compile_for(keys_only.launches())] == ["merge_block_sort", "merge_pass"]
    # items of another type, a user comparison, keys from an iterator
    pairs = cc.make_merge_sort(cc.CountingIterator(dtype(0)), P(np.float32), P(dtype), P(np.float32),
                               lambda a, b: a > b)
    assert [n for n, _ in cc.compile_for(pairs.launches())] == ["merge_block_sort", "merge_pass"]
    assert keys_only(None, P(dtype), None, P(dtype), None, cc.OpKind.LESS, 1024) == 0   # one tile: no spare
    assert keys_only(None, P(dtype), None, P(dtype), None, cc.OpKind.LESS, 1025) >= 1025 * np.dtype(dtype).itemsize
    with pytest.raises(ValueError, match="both d_in_items and d_out_items"):
        cc.make_merge_sort(P(dtype), P(dtype), P(dtype), None, cc.OpKind.LESS)
    with pytest.raises(TypeError, match="op must be"):
        cc.make_merge_sort(P(dtype), None, P(dtype), None, "less")


def test_cli_warms_compute_objects(tmp_path):
    import os
    import subprocess
    import sys
    module = tmp_path / "algos.py"
    module.write_text("import numpy as np\nimport cudajit.compute as compute\n"
                      "P = compute.ProxyArray\n"
                      "total = compute.make_reduce_into(P(np.float32), P(np.float32), compute.OpKind.MAXIMUM,\n"
                      "                                 np.zeros(1, np.float32))\n")
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("CUDAJIT_CACHE", None)
    cmd = [sys.executable, "-m", "cudajit", "warm", str(module), "--arch", "sm_90"]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "1 cudajit.compute object(s)" in first.stdout
    # three launches (the partials' pass and the one-block pass are the same kernel for an array
    # input: one of them may find the other's entry, as worker processes race)
    import re
    counts = re.search(r"warm: (\d+) compiled, (\d+) already cached, 0 failed", first.stdout)
    assert counts and int(counts[1]) + int(counts[2]) == 3 and int(counts[1]) >= 2, first.stdout
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert "warm: 0 compiled, 3 already cached, 0 failed" in again.stdout
    # the same through the API
    code = ("import numpy as np, cudajit.compute as c\n"
            "o = c.make_reduce_into(c.ProxyArray(np.float32), c.ProxyArray(np.float32), c.OpKind.MAXIMUM,"
            " np.zeros(1, np.float32))\nprint(c.warm(o, 'sm_90'))\n")
    api = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert api.returncode == 0, api.stderr
    assert api.stdout.strip() == "0"


def test_determinism_levels():
    P = cc.ProxyArray
    args = (P(np.float32), P(np.float32), cc.OpKind.PLUS, np.zeros(1, np.float32))
    cc.make_reduce_into(*args, determinism=cc.Determinism.RUN_TO_RUN)
    cc.make_reduce_into(*args, determinism=cc.Determinism.NOT_GUARANTEED)
    with pytest.raises(ValueError, match="GPU_TO_GPU is not supported"):
        cc.make_reduce_into(*args, determinism=cc.Determinism.GPU_TO_GPU)
    with pytest.raises(TypeError, match="determinism must be a cudajit.compute.Determinism"):
        cc.make_reduce_into(*args, determinism="gpu")


@pytest.mark.parametrize("modifier, load", [("stream", "ld.global.cs"), ("global", "ld.global.cg"),
                                            ("volatile", "ld.global.cv")])
def test_cache_modified_loads_carry_their_hint(modifier, load):
    from cudajit import compile_ptx
    from cudajit.compute._build import BLOCK, _blocks, numba_type
    it = cc.CacheModifiedInputIterator(cc.ProxyArray(np.float32), modifier)
    obj = cc.make_reduce_into(it, cc.ProxyArray(np.float32), cc.OpKind.PLUS, np.zeros(1, np.float32))
    k, args = obj.launches()[0]
    sig = "void(" + ", ".join(numba_type(a) for a in args) + ")"
    ptx, _ = compile_ptx(k.py_func, sig, block=(_blocks.get(k, BLOCK),))
    assert load in ptx, modifier
    # each modifier is its own kernel (and the plain array another)
    keys = {cc.CacheModifiedInputIterator(cc.ProxyArray(np.float32), m)._key() for m in ("stream", "global", "volatile")}
    assert len(keys) == 3
