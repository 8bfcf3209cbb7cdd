"""Records (numpy structured dtypes) on the GPU, against numpy on fresh
random data with poisoned outputs: field reads and writes of aligned and
packed dtypes, nested records and arrays, whole-record copies, local and
shared arrays of records, records passed to device functions, record scalars
as arguments (copied in and back), and the same kernel under numba-cuda
where it is installed."""
import os

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))

FIELDS = [("x", np.float32), ("y", np.int32), ("b", np.bool_), ("z", np.float64), ("c", np.complex64),
          ("h", np.float16), ("u", np.uint8), ("q", np.int64)]
PACKED = np.dtype(FIELDS)
ALIGNED = np.dtype(FIELDS, align=True)
INNER = np.dtype([("p", np.int16), ("w", np.float64)], align=True)
NESTED = np.dtype([("id", np.int32), ("inner", INNER), ("v", np.float32, (3,)), ("m", np.float64, (2, 2)),
                   ("pts", INNER, (2,))])
SHARED_REC = np.dtype([("x", np.float32), ("y", np.int32)], align=True)
TPB = 128


def fill(rng, dtype, n):
    """Fresh random values in every field (sub-fields and elements included)."""
    a = np.zeros(n, dtype)
    for name in dtype.names:
        a[name] = _random(rng, dtype.fields[name][0], (n,))
    return a


def _random(rng, dt, shape):
    if dt.subdtype is not None:
        base, sub = dt.subdtype
        return _random(rng, base, shape + sub)
    if dt.names is not None:
        out = np.zeros(shape, dt)
        for name in dt.names:
            out[name] = _random(rng, dt.fields[name][0], shape)
        return out
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(1, 100, shape).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(-4, 4, shape) + 1j * rng.uniform(-4, 4, shape)).astype(dt)
    return rng.uniform(-4, 4, shape).astype(dt)


def fields_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        r = a[i]
        out[i] = r.x * r.y + r["z"] + r.c.imag + r.h + r.u + r[7]   # r[7]: field q by position
        r.x = r.z * 2
        a[i]["y"] = r.y + 1
        r.b = not r.b
        r.c = r.c * 2j
        a[i].h = r.u
        r.q = -r.q


@pytest.mark.parametrize("dtype", [PACKED, ALIGNED], ids=["packed", "aligned"])
def test_field_reads_and_writes_match_numpy(dtype):
    rng = np.random.default_rng(SEED)
    n = int(rng.integers(1000, 3000))
    a = fill(rng, dtype, n)
    ref = a.copy()
    out = np.full(n, np.nan)
    cuda.jit(fields_kernel)[(n + TPB - 1) // TPB, TPB](a, out)
    want = (ref["x"].astype(np.float64) * ref["y"] + ref["z"] + ref["c"].imag.astype(np.float64)
            + ref["h"].astype(np.float64) + ref["u"] + ref["q"])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6, err_msg=f"seed {SEED}")   # a*b + c: an fma
    np.testing.assert_array_equal(a["x"], (ref["z"] * 2).astype(np.float32))
    np.testing.assert_array_equal(a["y"], ref["y"] + 1)
    np.testing.assert_array_equal(a["b"], ~ref["b"])
    np.testing.assert_allclose(a["c"], ref["c"] * 2j, rtol=1e-6)
    np.testing.assert_array_equal(a["h"], ref["u"].astype(np.float16))
    np.testing.assert_array_equal(a["u"], ref["u"])
    np.testing.assert_array_equal(a["q"], -ref["q"])


def assert_records_equal(got, want, what=""):
    """Field by field, nested fields and subarrays included: the padding bytes
    of structured arrays are not values (numpy's copies leave them undefined)."""
    dt = want.dtype
    for name in dt.names:
        g, w = got[name], want[name]
        if dt.fields[name][0].names is not None:
            assert_records_equal(g, w, f"{what}.{name}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"field {what}.{name}, seed {SEED}")


def nested_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        r = a[i]
        out[i] = r.inner.p + r.inner.w + r.v[1] + r.m[1, 0] + r.pts[1].w
        r.v[2] = r["v"][0] + r.m[0, 1]
        r.m[1, 1] = r.inner.w
        r.inner.p = r.id
        r.pts[0] = r.inner
        r.pts[1].p = 7


def test_nested_records_and_arrays_match_numpy():
    rng = np.random.default_rng(SEED + 1)
    n = int(rng.integers(1000, 3000))
    a = fill(rng, NESTED, n)
    ref = a.copy()
    out = np.full(n, np.nan)
    cuda.jit(nested_kernel)[(n + TPB - 1) // TPB, TPB](a, out)
    want = (ref["inner"]["p"] + ref["inner"]["w"] + ref["v"][:, 1].astype(np.float64) + ref["m"][:, 1, 0]
            + ref["pts"]["w"][:, 1])
    np.testing.assert_allclose(out, want, rtol=1e-12, err_msg=f"seed {SEED}")
    exp = ref.copy()
    exp["v"][:, 2] = (ref["v"][:, 0] + ref["m"][:, 0, 1]).astype(np.float32)
    exp["m"][:, 1, 1] = ref["inner"]["w"]
    exp["inner"]["p"] = ref["id"].astype(np.int16)
    exp["pts"][:, 0] = exp["inner"]
    exp["pts"]["p"][:, 1] = 7
    assert_records_equal(a, exp)


def copy_kernel(src, dst):
    i = cuda.grid(1)
    n = src.shape[0]
    if i < n:
        dst[i] = src[n - 1 - i]


@pytest.mark.parametrize("dtype", [PACKED, ALIGNED, NESTED], ids=["packed", "aligned", "nested"])
def test_whole_record_copies(dtype):
    rng = np.random.default_rng(SEED + 2)
    n = int(rng.integers(1000, 3000))
    src = fill(rng, dtype, n)
    dst = fill(rng, dtype, n)   # poison: other random records
    cuda.jit(copy_kernel)[(n + TPB - 1) // TPB, TPB](src, dst)
    assert_records_equal(dst, src[::-1])


def shared_local_kernel(a, out):
    sh = cuda.shared.array(TPB, SHARED_REC)
    loc = cuda.local.array(2, SHARED_REC)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.shape[0]:
        sh[t] = a[i]
    cuda.syncthreads()
    j = cuda.blockIdx.x * TPB + (TPB - 1 - t)
    if i < a.shape[0] and j < a.shape[0]:
        loc[0] = sh[TPB - 1 - t]
        loc[1].x = loc[0].x * 3
        loc[1].y = loc[0]["y"] - 1
        out[i] = loc[1].x + loc[1].y
        a[i] = loc[1]


def test_shared_and_local_arrays_of_records():
    rng = np.random.default_rng(SEED + 3)
    n = TPB * int(rng.integers(8, 24))
    a = fill(rng, SHARED_REC, n)
    ref = a.copy()
    out = np.full(n, np.nan, np.float32)
    cuda.jit(shared_local_kernel)[n // TPB, TPB](a, out)
    partner = (np.arange(n) // TPB) * TPB + (TPB - 1 - np.arange(n) % TPB)
    px = (ref["x"][partner] * 3).astype(np.float32)
    py = ref["y"][partner] - 1
    np.testing.assert_array_equal(out, (px + py).astype(np.float32))
    np.testing.assert_array_equal(a["x"], px)
    np.testing.assert_array_equal(a["y"], py)


@cuda.jit(device=True)
def scaled_sum(r, s):
    return (r.x + r.y) * s


@cuda.jit(device=True)
def bump(r):
    r.y += 1
    r["z"] = r.z * 0.5


def devfunc_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        bump(a[i])
        out[i] = scaled_sum(a[i], 2.0)


def test_records_pass_to_device_functions():
    rng = np.random.default_rng(SEED + 4)
    n = int(rng.integers(1000, 3000))
    a = fill(rng, ALIGNED, n)
    ref = a.copy()
    out = np.full(n, np.nan)
    cuda.jit(devfunc_kernel)[(n + TPB - 1) // TPB, TPB](a, out)
    np.testing.assert_array_equal(a["y"], ref["y"] + 1)
    np.testing.assert_array_equal(a["z"], ref["z"] * 0.5)
    np.testing.assert_allclose(out, (ref["x"].astype(np.float64) + ref["y"] + 1) * 2.0, rtol=1e-7)


def scalar_kernel(r, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = r.x * i + r.inner.w
    if i == 0:
        r.y = 41
        r.inner.p = 3


def test_record_scalar_argument_is_copied_in_and_back():
    rng = np.random.default_rng(SEED + 5)
    dt = np.dtype([("x", np.float32), ("y", np.int32), ("inner", INNER)])
    host = fill(rng, dt, 4)
    ref = host.copy()
    n = 1000
    out = np.full(n, np.nan)
    cuda.jit(scalar_kernel)[(n + TPB - 1) // TPB, TPB](host[2], out)
    np.testing.assert_allclose(out, ref["x"][2].astype(np.float64) * np.arange(n) + ref["inner"]["w"][2], rtol=1e-7)
    assert host["y"][2] == 41 and host["inner"]["p"][2] == 3
    assert_records_equal(host[[0, 1, 3]], ref[[0, 1, 3]])


def test_device_arrays_of_records():
    """cuda.to_device of a structured array, and numba's DeviceRecord (to_device
    of one record): the same kernels, the results read back with copy_to_host."""
    rng = np.random.default_rng(SEED + 7)
    n = int(rng.integers(1000, 3000))
    a = fill(rng, ALIGNED, n)
    d = cuda.to_device(a)
    out = cuda.to_device(np.full(n, np.nan))
    cuda.jit(fields_kernel)[(n + TPB - 1) // TPB, TPB](d, out)
    got = d.copy_to_host()
    np.testing.assert_array_equal(got["x"], (a["z"] * 2).astype(np.float32))
    np.testing.assert_array_equal(got["q"], -a["q"])
    np.testing.assert_array_equal(got["b"], ~a["b"])
    assert np.isfinite(out.copy_to_host()).all()

    dt = np.dtype([("x", np.float32), ("y", np.int32), ("inner", INNER)])
    host = fill(rng, dt, 3)
    ref = host.copy()
    rec = cuda.to_device(host[1])
    res = np.full(64, np.nan)
    cuda.jit(scalar_kernel)[1, 64](rec, res)
    np.testing.assert_allclose(res, ref["x"][1].astype(np.float64) * np.arange(64) + ref["inner"]["w"][1], rtol=1e-7)
    back = rec.copy_to_host()
    assert back["y"] == 41 and back["inner"]["p"] == 3 and back["x"] == ref["x"][1]
    assert_records_equal(host, ref)   # a DeviceRecord is a copy: the host is untouched


TABLE = np.zeros(16, NESTED)


def table_kernel(idx, out):
    i = cuda.grid(1)
    if i < idx.size:
        t = cuda.const.array_like(TABLE)
        out[i] = TABLE[idx[i]].inner.w + t[idx[i]].v[2] + TABLE[idx[i]].pts[1].p


def test_global_arrays_of_records_are_constants():
    rng = np.random.default_rng(SEED + 9)
    TABLE[:] = fill(rng, NESTED, TABLE.size)   # frozen when the kernel compiles, as numba
    n = int(rng.integers(1000, 3000))
    idx = rng.integers(0, TABLE.size, n)
    out = np.full(n, np.nan)
    cuda.jit(table_kernel)[(n + TPB - 1) // TPB, TPB](idx, out)
    want = TABLE["inner"]["w"][idx] + TABLE["v"][idx, 2].astype(np.float64) + TABLE["pts"]["p"][idx, 1]
    np.testing.assert_array_equal(out, want)


COUNTS = np.dtype([("x", np.float32), ("hits", np.int32, (4,)), ("sum", np.float64)], align=True)


def atomics_kernel(a, vals):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.add(a[0].hits, i % 4, 1)           # atomics on a nested array field
        cuda.atomic.add(a[1:2][0].hits, 0, 2)


def test_atomics_on_nested_array_fields():
    rng = np.random.default_rng(SEED + 10)
    n = int(rng.integers(1000, 3000))
    a = fill(rng, COUNTS, 2)
    ref = a.copy()
    cuda.jit(atomics_kernel)[(n + TPB - 1) // TPB, TPB](a, np.zeros(n))
    want = ref["hits"][0] + np.bincount(np.arange(n) % 4, minlength=4)
    np.testing.assert_array_equal(a["hits"][0], want)
    np.testing.assert_array_equal(a["hits"][1], ref["hits"][1] + np.array([2 * n, 0, 0, 0]))
    np.testing.assert_array_equal(a["x"], ref["x"])


def strided_kernel(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i].x = a[i].z + i


def test_strided_numpy_views_of_records_are_written_back():
    rng = np.random.default_rng(SEED + 11)
    n = int(rng.integers(1000, 3000))
    base = fill(rng, PACKED, 2 * n)
    ref = base.copy()
    view = base[::2]                                   # not contiguous: staged as a dense copy
    cuda.jit(strided_kernel)[(n + TPB - 1) // TPB, TPB](view)
    np.testing.assert_array_equal(base["x"][::2], (ref["z"][::2] + np.arange(n)).astype(np.float32))
    np.testing.assert_array_equal(base["x"][1::2], ref["x"][1::2])


STRINGS = np.dtype([("x", np.float32), ("label", "U4"), ("tag", "S3"), ("y", np.int32)])


def strings_kernel(a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        b[i] = a[i]                # string fields travel with the record
        b[i].x = a[i].y


def test_records_with_string_fields_copy_whole():
    rng = np.random.default_rng(SEED + 12)
    n = int(rng.integers(1000, 3000))
    a = np.zeros(n, STRINGS)
    a["x"], a["y"] = rng.random(n), rng.integers(-99, 99, n)
    a["label"] = [f"L{k % 997}" for k in range(n)]
    a["tag"] = [f"t{k % 89}".encode() for k in range(n)]
    b = np.zeros(n, STRINGS)
    b["label"], b["y"] = "poison", 12345
    cuda.jit(strings_kernel)[(n + TPB - 1) // TPB, TPB](a, b)
    np.testing.assert_array_equal(b["label"], a["label"])
    np.testing.assert_array_equal(b["tag"], a["tag"])
    np.testing.assert_array_equal(b["y"], a["y"])
    np.testing.assert_array_equal(b["x"], a["y"].astype(np.float32))


def test_cupy_arrays_of_records():
    """CuPy 14 makes arrays of structured dtypes from numpy's (and reads single
    fields); older CuPy refuses them, and the test skips saying so."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED + 8)
    n = int(rng.integers(1000, 3000))
    a = fill(rng, ALIGNED, n)
    try:
        c = cp.asarray(a)
    except (TypeError, ValueError) as e:
        pytest.skip(f"CuPy {cp.__version__} has no structured dtypes: {e}")
    out = cp.full(n, cp.nan)
    cuda.jit(fields_kernel)[(n + TPB - 1) // TPB, TPB](c, out)
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(c["x"]), (a["z"] * 2).astype(np.float32))
    np.testing.assert_array_equal(cp.asnumpy(c["y"]), a["y"] + 1)
    np.testing.assert_array_equal(cp.asnumpy(c["q"]), -a["q"])
    assert np.isfinite(cp.asnumpy(out)).all()


# The padding keeps the packed layout's float64 subarray 8-byte aligned
# (cudajit refuses a misaligned subarray: tests/test_records.py).
NB_FIELDS = [("x", np.float32), ("y", np.int32), ("b", np.bool_), ("z", np.float64), ("c", np.complex128),
             ("pad", np.uint8, (7,)), ("v", np.float64, (3,))]


def nb_kernel_source(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        r = a[i]
        out[i] = r.x * r.y + r[3] + r.c.imag + r.v[2]   # r[3]: field z by position
        r.x = r.z * 2
        a[i]["y"] = r.y + 1
        r.b = not r.b
        r.c = r.c * 2j
        r.v[0] = r.v[1] * r.y


def test_same_kernels_under_numba_cuda():
    """Differential: numba-cuda runs the same sources on the same inputs."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack          # numba-cuda 0.30 on numpy >= 2.5
    nb = pytest.importorskip("numba.cuda")
    rng = np.random.default_rng(SEED + 6)
    n = 2048

    def both(kernel):
        glb = dict(kernel.__globals__, cuda=nb)
        nb_kernel = type(kernel)(kernel.__code__, glb, kernel.__name__)
        return (lambda *a: nb.jit(nb_kernel)[n // TPB, TPB](*a)), (lambda *a: cuda.jit(kernel)[n // TPB, TPB](*a))

    aligned, packed = np.dtype(NB_FIELDS, align=True), np.dtype(NB_FIELDS)
    base = fill(rng, aligned, n)
    theirs, ours = base.copy(), base.copy()
    out_theirs, out_ours = np.full(n, np.nan), np.full(n, np.nan)
    run_nb, run_ours = both(nb_kernel_source)
    run_nb(theirs, out_theirs)
    run_ours(ours, out_ours)
    np.testing.assert_allclose(out_ours, out_theirs, rtol=1e-12, err_msg=f"seed {SEED}")
    assert_records_equal(ours, theirs, "aligned")

    # The packed layout puts z (float64) at offset 9: numba-cuda refuses it
    # (strict alignment); cudajit reads and writes such fields in narrower
    # pieces, with the same results as the aligned layout's.
    packed_in = np.zeros(n, packed)
    for name in aligned.names:
        packed_in[name] = base[name]
    with pytest.raises(Exception, match="not aligned"):
        run_nb(packed_in.copy(), np.full(n, np.nan))
    ours_packed, out_packed = packed_in.copy(), np.full(n, np.nan)
    run_ours(ours_packed, out_packed)
    np.testing.assert_allclose(out_packed, out_theirs, rtol=1e-12, err_msg=f"packed, seed {SEED}")
    assert_records_equal(ours_packed, theirs, "packed")

    src = fill(rng, NESTED, n)
    run_nb, run_ours = both(copy_kernel)
    dst_theirs, dst_ours = fill(rng, NESTED, n), fill(rng, NESTED, n)
    run_nb(src.copy(), dst_theirs)
    run_ours(src.copy(), dst_ours)
    assert_records_equal(dst_theirs, src[::-1], "numba, nested")
    assert_records_equal(dst_ours, src[::-1], "nested")
