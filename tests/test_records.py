"""Records: numpy structured dtypes in kernels (numba's Record).

CI (no GPU) checks the record type a dtype becomes (text form, its round trip
through the IR parser, numba's spelling), the typed IR of field reads and
writes, PTX for every field kind through ptxas, shared and local arrays of
records, records passed to device functions, errors with the kernel's file
and line, and the launch path on the mock driver (a structured numpy array
and a record scalar copied to the device and back). The GPU comparison with
numpy is tests/gpu/test_records_gpu.py.
"""
import inspect
import pickle
import re
import struct
import textwrap

import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit.errors import CompileError

from ptxas_check import assemble
from test_runtime import mock_run

# ---------------------------------------------------------------------------
# dtypes used below (module globals: kernels read them as constants)
# ---------------------------------------------------------------------------

PACKED = np.dtype([("x", np.float32), ("y", np.int32), ("b", np.bool_), ("z", np.float64)])
ALIGNED = np.dtype([("x", np.float32), ("y", np.int32), ("b", np.bool_), ("z", np.float64)], align=True)
INNER = np.dtype([("p", np.int16), ("q", np.complex64)], align=True)
NESTED = np.dtype([("id", np.int32), ("inner", INNER), ("v", np.float32, (3,)), ("m", np.float64, (2, 2)),
                   ("pts", INNER, (2,))], align=True)
SCALARS = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
           np.float16, np.float32, np.float64, np.complex64, np.complex128]
# The subarray first and a byte of padding: packed, its int16 elements stay
# 2-byte aligned (an item is 94 bytes), which cudajit requires of a subarray
# (test_misaligned_subarrays_of_packed_records_are_refused).
EVERY_KIND = np.dtype([("arr", np.int16, (2, 3))] + [(f"f{k}", t) for k, t in enumerate(SCALARS)] +
                      [("inner", INNER), ("pad", np.uint8)])


def rec(dtype):
    return _core.record_type(dtype)


def arr(dtype, nd=1, layout="C"):
    return f"array({rec(dtype)}, {nd}d, {layout})"


def ptx_of(fn, sig, **kw):
    return cuda.compile_ptx(fn, sig, cc=(9, 0), **kw)[0]


def line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


# ---------------------------------------------------------------------------
# 1. The record type
# ---------------------------------------------------------------------------


def test_packed_and_aligned_records_have_numpys_offsets_size_and_alignment():
    assert rec(PACKED) == "record{x: f32 @0, y: i32 @4, b: b1 @8, z: f64 @9; size 17, align 1}"
    assert rec(ALIGNED) == "record{x: f32 @0, y: i32 @4, b: b1 @8, z: f64 @16; size 24, align 8, aligned}"
    for dt in (PACKED, ALIGNED, NESTED, EVERY_KIND):
        text = rec(dt)
        # offsets and the size are numpy's
        for name in dt.names:
            assert f"{name}: " in text and f"@{dt.fields[name][1]}" in text
        assert f"size {dt.itemsize}, align {dt.alignment}" in text


def test_nested_records_and_arrays():
    text = rec(NESTED)
    assert "inner: record{p: i16 @0, q: c64 @4; size 12, align 4, aligned} @4" in text
    assert "v: f32[3] @16" in text and "m: f64[2x2] @32" in text
    assert "pts: record{p: i16 @0, q: c64 @4; size 12, align 4, aligned}[2] @64" in text


def test_record_text_round_trips_and_interns():
    for dt in (PACKED, ALIGNED, NESTED, EVERY_KIND):
        text = rec(dt)
        assert _core.type_text(text) == text
        assert _core.type_identity(text) == _core.type_identity(rec(pickle.loads(pickle.dumps(dt))))   # an equal dtype object
        a = f"array({text}, 2d, F, shared)"
        assert _core.type_text(a) == a
    assert _core.type_identity(rec(PACKED)) != _core.type_identity(rec(ALIGNED))


def test_numba_spelling():
    assert _core.type_numba_string(rec(PACKED)) == (
        "Record(x[type=float32;offset=0],y[type=int32;offset=4],b[type=bool;offset=8],z[type=float64;offset=9];17;False)")
    assert _core.type_numba_string(arr(ALIGNED)).endswith(";24;True)[::1]")
    assert "v[type=nestedarray(float32, (3,));offset=16]" in _core.type_numba_string(rec(NESTED))


def test_every_numeric_scalar_is_a_field_type():
    text = rec(EVERY_KIND)
    for k, t in enumerate(SCALARS):
        short = {"bool": "b1"}.get(np.dtype(t).name, None) or _core.type_text(np.dtype(t).name)
        assert f"f{k}: {short} @{EVERY_KIND.fields[f'f{k}'][1]}" in text


@pytest.mark.parametrize("dtype,field,what", [
    (np.dtype([("x", np.float32), ("obj", object)]), "obj", "object"),
    (np.dtype([("x", np.float32), ("when", "M8[s]")]), "when", "datetime64"),
    (np.dtype([("x", np.float32), ("span", "m8[s]")]), "span", "timedelta64"),
    (np.dtype([("i", [("ok", np.int32), ("bad", object)])]), "i.bad", "object"),
])
def test_unsupported_field_kinds_name_the_field(dtype, field, what):
    with pytest.raises(TypeError) as info:
        rec(dtype)
    assert f"field '{field}'" in str(info.value) and what in str(info.value)


STRINGS = np.dtype([("x", np.float32), ("label", "U4"), ("tag", "S3"), ("y", np.int32)])


def copy_with_strings(a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        b[i] = a[i]
        b[i].x = a[i].y


def test_string_fields_are_carried_but_not_readable(tmp_path):
    # numba's CharSeq / UnicodeCharSeq fields: the bytes travel with the record
    text = rec(STRINGS)
    assert 'label: bytes("<U4", 16) @4, tag: bytes("|S3", 3) @20, y: i32 @23; size 27' in text
    assert _core.type_text(text) == text
    assert "label[type=[unichr x 4];offset=4],tag[type=[char x 3];offset=20]" in _core.type_numba_string(text)
    assemble(ptx_of(copy_with_strings, (arr(STRINGS), arr(STRINGS))), tmp_path)


def err_string_read(a):
    q = a[0].label  # L:string


def err_string_write(a):
    a[0]["tag"] = 1  # L:string


@pytest.mark.parametrize("fn,construct", [(err_string_read, "getattr .label"), (err_string_write, "setitem")])
def test_string_fields_cannot_be_read_or_written(fn, construct):
    with pytest.raises(CompileError) as info:
        _core.infer_ir(fn, [arr(STRINGS)], kernel=True)
    e = info.value
    assert e.file == __file__ and e.line == line_of(fn, "L:string")
    assert "strings, which kernels cannot read or write" in str(e) and f"[{construct}]" in str(e)


def test_byte_swapped_and_non_identifier_fields_are_refused():
    with pytest.raises(TypeError, match="field 'y' is byte-swapped"):
        rec(np.dtype([("x", "<f4"), ("y", ">f4")]))
    with pytest.raises(TypeError, match="field 'a b' is not a Python identifier"):
        rec(np.dtype([("a b", np.float32)]))


# ---------------------------------------------------------------------------
# 2. Typed IR and its text round trip
# ---------------------------------------------------------------------------


def fields_kernel(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        r = a[i]
        out[i] = r.x + r["y"] + a[i].z
        r.x = 2.5
        a[i]["y"] = 7
        b[i] = a[i]


def positions_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i][0] + a[i][-1]    # numba's constant positions: fields x and z
        a[i][1] = 3


def test_constant_positions_name_fields():
    text = _core.infer_ir(positions_kernel, [arr(ALIGNED), "float64[::1]"], kernel=True)
    assert re.search(r"f32 = record_get v\d+ \.x", text) and re.search(r"f64 = record_get v\d+ \.z", text)
    assert re.search(r"record_set v\d+, v\d+ \.y", text)


def test_typed_ir_reads_writes_and_copies_records():
    text = _core.infer_ir(fields_kernel, [arr(ALIGNED), arr(ALIGNED), "float64[::1]"], kernel=True)
    r = re.escape(rec(ALIGNED))
    assert re.search(rf"v\d+:{r} = load v0, ", text), text        # a[i]: the item, a reference
    assert re.search(r"v\d+:f32 = record_get v\d+ \.x", text)
    assert re.search(r"v\d+:i32 = record_get v\d+ \.y", text)
    assert re.search(r"record_set v\d+, v\d+ \.x", text)
    assert re.search(r"record_copy v\d+, v\d+", text)
    assert _core.parse_print_ir(text) == text
    assert _core.verify_ir(text, True) == ""


def nested_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i].inner.p + a[i].v[1] + a[i].m[1, 0] + a[i].pts[1].q.real
        a[i].v[2] = a[i]["v"][0]
        a[i].inner.q = 1j
        a[i].pts[0] = a[i].inner


def test_typed_ir_of_nested_records_and_arrays_round_trips():
    text = _core.infer_ir(nested_kernel, [arr(NESTED), "float64[::1]"], kernel=True)
    assert re.search(r"v\d+:array\(f32, 1d, C\) = record_get v\d+ \.v", text)
    assert re.search(r"v\d+:array\(f64, 2d, C\) = record_get v\d+ \.m", text)
    assert re.search(r"v\d+:array\(record\{p: i16 @0, q: c64 @4; size 12, align 4, aligned\}, 1d, C\) = record_get", text)
    assert _core.parse_print_ir(text) == text
    assert _core.verify_ir(text, True) == ""


def test_verifier_rejects_a_missing_field_and_a_wrong_value():
    r = rec(ALIGNED)
    base = f"func f(v0:{r} r) -> none\nbb0:\n  BODY\n  v9:none = const none\n  ret v9\n"
    assert _core.verify_ir(base.replace("BODY", "v1:f32 = record_get v0 .x"), True) == ""
    assert "no field 'w'" in _core.verify_ir(base.replace("BODY", "v1:f32 = record_get v0 .w"), True)
    assert "result" in _core.verify_ir(base.replace("BODY", "v1:f64 = record_get v0 .x"), True)
    bad = f"func f(v0:{r} r) -> none\nbb0:\n  v1:f64 = const 1.0\n  record_set v0, v1 .x\n  v9:none = const none\n  ret v9\n"
    assert "record_set of f64 into field 'x'" in _core.verify_ir(bad, True)


# ---------------------------------------------------------------------------
# 3. PTX for every field kind, aligned and packed, local / shared, device functions
# ---------------------------------------------------------------------------


def every_kind_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        r = a[i]
        s = r.f0 + r.f1 + r.f2 + r.f3 + r.f4 + r.f5 + r.f6 + r.f7 + r.f8
        s += r.f9 + r.f10 + r.f11 + r.f12.real + r.f13.imag + r.inner.p + r.arr[1, 2]
        out[i] = s
        r.f0 = False
        r.f1 = 1
        r.f2 = 2
        r.f3 = 3
        r.f4 = 4
        r.f5 = 5
        r.f6 = 6
        r.f7 = 7
        r.f8 = 8
        r.f9 = 9.0
        r.f10 = 10.0
        r.f11 = 11.0
        r.f12 = 12j
        r.f13 = 13j
        r.inner.q = 2j
        r.arr[0, 1] = 14


@pytest.mark.parametrize("align", [False, True], ids=["packed", "aligned"])
def test_every_field_kind_compiles_and_assembles(align, tmp_path):
    dt = np.dtype([(n, EVERY_KIND.fields[n][0]) for n in EVERY_KIND.names], align=align)
    ptx = ptx_of(every_kind_kernel, (arr(dt), "float64[::1]"))
    assemble(ptx, tmp_path)


def sum_xy(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i].x + a[i].z


def test_aligned_fields_load_whole_words_and_packed_fields_bytewise():
    # numba's rule: a field of a dtype numpy did not align is read with align 1
    aligned = ptx_of(sum_xy, (arr(ALIGNED), "float64[::1]"))
    packed = ptx_of(sum_xy, (arr(PACKED), "float64[::1]"))
    assert "ld.global.f32" in aligned and "ld.global.f64" in aligned
    assert "ld.global.f32" not in packed and "ld.global.u8" in packed


def local_shared_kernel(a, out):
    i = cuda.grid(1)
    loc = cuda.local.array(3, ALIGNED)
    sh = cuda.shared.array(64, ALIGNED)
    t = cuda.threadIdx.x
    if i < a.shape[0]:
        sh[t] = a[i]
        loc[0] = a[i]
        loc[1].x = loc[0].x * 2
        loc[1].z = loc[0]["z"]
    cuda.syncthreads()
    if i < a.shape[0]:
        out[i] = sh[t].y + loc[1].x + loc[1].z + sh.shape[0] + loc.size


def dtype_attr_kernel(a, out):
    tmp = cuda.local.array(2, a.dtype)    # the array's structured dtype
    tmp[0] = a[0]
    out[0] = tmp[0].z


def test_the_dtype_attribute_of_an_array_of_records_makes_local_arrays():
    text = _core.infer_ir(dtype_attr_kernel, [arr(ALIGNED), "float64[::1]"], kernel=True)
    assert f"array({rec(ALIGNED)}, 1d, C, local) = intrinsic local_array[2]()" in text


TABLE = np.zeros(4, ALIGNED)
TABLE["x"], TABLE["y"], TABLE["z"] = [1, 2, 3, 4], [10, 20, 30, 40], [0.5, 1.5, 2.5, 3.5]


def const_table_kernel(idx, out):
    i = cuda.grid(1)
    if i < idx.size:
        c = cuda.const.array_like(TABLE)
        out[i] = TABLE[idx[i]].x + c[idx[i]].z
    if i == 0:
        out[0] = TABLE[1].x + TABLE[3].y      # constant indices: folded at compile time


def test_global_arrays_of_records_are_constant_memory(tmp_path):
    text = _core.infer_ir(const_table_kernel, ["int64[::1]", "float64[::1]"], kernel=True)
    assert f"array({rec(ALIGNED)}, 1d, C, const, readonly) = const array({rec(ALIGNED)}, (4,), " in text
    assert _core.parse_print_ir(text) == text
    ptx = ptx_of(const_table_kernel, ("int64[::1]", "float64[::1]"))
    assert re.search(r"\.const \.align 16 \.b8 \S+\[96\]", ptx), ptx    # 4 records of 24 bytes
    assert str(struct.unpack("<q", struct.pack("<d", 42.0))[0]) in ptx   # TABLE[1].x + TABLE[3].y
    assemble(ptx, tmp_path)


def test_local_and_shared_arrays_of_records(tmp_path):
    text = _core.infer_ir(local_shared_kernel, [arr(ALIGNED), "float64[::1]"], kernel=True)
    r = rec(ALIGNED)
    assert f"array({r}, 1d, C, local) = intrinsic local_array[3]()" in text
    assert f"array({r}, 1d, C, shared) = intrinsic shared_array[64]()" in text
    assert f":{r[:-1]}, shared}} = load" in text    # an item of a shared array is a record in shared memory
    assert _core.parse_print_ir(text) == text
    ptx = ptx_of(local_shared_kernel, (arr(ALIGNED), "float64[::1]"))
    assert re.search(r"\.shared \.align 16 \.b8 \S+\[1536\]", ptx)    # 64 records of 24 bytes
    assemble(ptx, tmp_path)


def test_numba_from_dtype_names_the_same_record():
    numba = pytest.importorskip("numba")
    nb_rec = numba.from_dtype(ALIGNED)
    glb = {"cuda": cuda, "REC": nb_rec}
    src = "def k(a):\n    loc = cuda.local.array(2, REC)\n    loc[0] = a[0]\n    a[1] = loc[0]\n"
    exec(compile(src, "<from_dtype>", "exec"), glb)
    assert "local_array" in _core.infer_ir(glb["k"], [arr(ALIGNED)], kernel=True)
    ptx_of(glb["k"], (nb_rec[::1],))


@cuda.jit(device=True)
def dev_total(r):
    return r.x + r.y


@cuda.jit(device=True)
def dev_set(r, v):
    r.x = v
    r["z"] = v * 2


def devfunc_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        dev_set(a[i], out[i])
        out[i] = dev_total(a[i])


def devfunc_two_records(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = dev_total(a[i]) + dev_total(b[i])


def test_records_pass_to_device_functions(tmp_path):
    text = _core.infer_ir(devfunc_kernel, [arr(PACKED), "float32[::1]"], kernel=True)
    assert re.search(r"func dev_set__rec[0-9a-f]{12}_f32\(v0:" + re.escape(rec(PACKED)) + r" r, v1:f32 v\)", text), text
    assemble(ptx_of(devfunc_kernel, (arr(PACKED), "float32[::1]")), tmp_path)
    # one specialisation per record type, under different names
    text = _core.infer_ir(devfunc_two_records, [arr(PACKED), arr(ALIGNED), "float64[::1]"], kernel=True)
    names = set(re.findall(r"call_func (dev_total__\w+)\(", text))
    assert len(names) == 2, text


def scalar_kernel(r, out):
    out[0] = r.x + r.inner.p
    r.y = 5


def test_record_scalar_argument_is_a_pointer_parameter(tmp_path):
    dt = np.dtype([("x", np.float32), ("y", np.int32), ("inner", INNER)])
    ptx = ptx_of(scalar_kernel, (rec(dt), "float32[::1]"))
    params = re.findall(r"\.param \.(\w+) ", ptx)
    assert params[0] == "u64"    # the record: the device address of its bytes
    assemble(ptx, tmp_path)


@pytest.mark.parametrize("name,types", [
    ("fields_kernel", [arr(ALIGNED), arr(ALIGNED), "float64[::1]"]),
    ("nested_kernel", [arr(NESTED), "float64[::1]"]),
    ("local_shared_kernel", [arr(ALIGNED), "float64[::1]"]),
    ("const_table_kernel", ["int64[::1]", "float64[::1]"]),
    ("devfunc_kernel", [arr(PACKED), "float32[::1]"]),
    ("dtype_attr_kernel", [arr(ALIGNED), "float64[::1]"]),
    ("positions_kernel", [arr(ALIGNED), "float64[::1]"]),
])
def test_typed_ir_verifies_before_and_after_the_pipeline(name, types):
    text = _core.infer_ir(globals()[name], types, kernel=True)
    assert _core.verify_ir(text, True) == ""
    after = _core.run_passes(text, ["default"], True)
    assert _core.verify_ir(after, True) == ""
    assert _core.parse_print_ir(after) == after


# ---------------------------------------------------------------------------
# 4. Errors: the kernel's file and line, the field, the fields there are
# ---------------------------------------------------------------------------


def err_get(a):
    q = a[0].w  # L:get


def err_set(a):
    a[0].w = 1  # L:set


def err_item(a):
    q = a[0]["w"]  # L:item


def err_value(a):
    a[0].x = 1j  # L:value


def err_record_value(a, b):
    a[0] = b[0]  # L:recval


def err_nested_whole(a):
    a[0].v = 1.0  # L:whole


def err_field_index(a, k):
    q = a[0][k]  # L:index


def err_position(a):
    q = a[0][4]  # L:position


def err_intrinsic(a):
    cuda.atomic.add(a, 0, 1)  # L:atomic


def err_view_attr(a):
    q = a.view  # L:view


def err_scalar_setattr(x):
    x.real = 1.0  # L:scalar


@pytest.mark.parametrize("fn,types,marker,words", [
    (err_get, [arr(ALIGNED)], "L:get", ["has no field 'w'", "[getattr .w]", "its fields are: x, y, b, z"]),
    (err_set, [arr(ALIGNED)], "L:set", ["has no field 'w'", "[setattr .w]", "its fields are: x, y, b, z"]),
    (err_item, [arr(ALIGNED)], "L:item", ["has no field 'w'", "[getitem]"]),
    (err_value, [arr(ALIGNED)], "L:value", ["cannot store complex128 into field 'x' of type float32"]),
    (err_record_value, [arr(ALIGNED), arr(PACKED)], "L:recval", ["cannot store Record(", "into an array of Record("]),
    (err_nested_whole, [arr(NESTED)], "L:whole", ["cannot assign to the nested array field 'v'", "r.v[j] = v"]),
    (err_field_index, [arr(ALIGNED), "int64"], "L:index", ["a record is indexed by a constant field name"]),
    (err_position, [arr(ALIGNED)], "L:position", ["record index 4 out of range for a record of 4 fields",
                                                  "its fields are: x, y, b, z"]),
    (err_intrinsic, [arr(ALIGNED)], "L:atomic", ["does not take arrays of records"]),
    (err_view_attr, [arr(ALIGNED)], "L:view", ["arrays of records have no attribute 'view'"]),
    (err_scalar_setattr, ["float32"], "L:scalar", ["attribute assignment is supported on records only"]),
])
def test_errors_name_the_file_line_and_field(fn, types, marker, words):
    with pytest.raises(CompileError) as info:
        _core.infer_ir(fn, types, kernel=True)
    e = info.value
    assert e.file == __file__ and e.line == line_of(fn, marker), str(e)
    for w in words:
        assert w in str(e), str(e)


BAD_DTYPE = np.dtype([("x", np.float32), ("ref", object)])


def err_local_bad_dtype(out):
    loc = cuda.local.array(4, BAD_DTYPE)  # L:bad
    out[0] = loc[0].x


def test_an_unsupported_dtype_in_a_kernel_names_the_field():
    with pytest.raises(CompileError) as info:
        _core.infer_ir(err_local_bad_dtype, ["float32[::1]"], kernel=True)
    e = info.value
    assert e.file == __file__ and e.line == line_of(err_local_bad_dtype, "L:bad")
    assert "field 'ref'" in str(e) and "object" in str(e)


# ---------------------------------------------------------------------------
# 5. The launch path (mock driver): arrays of records and record scalars
# ---------------------------------------------------------------------------


def test_structured_numpy_arrays_and_record_scalars_travel_and_come_back(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, """
        dt = np.dtype([("x", np.float32), ("y", np.int32), ("v", np.float64, (2,))], align=True)

        @cuda.jit
        def k(a, r):
            i = cuda.grid(1)
            if i < a.shape[0]:
                a[i].x = a[i].y + r.x
                r.y = 9

        def play(params):
            ptr = param(params, 0, "Q")
            shape, stride = param(params, 1, "q"), param(params, 2, "q")
            a = view(ptr, (shape,), (stride,), dt)
            rp = param(params, 3, "Q")
            r = view(rp, (), (), dt)
            a["x"] = a["y"] + r["x"]          # what the kernel does
            r["y"] = 9
            print("strides", stride, "itemsize", dt.itemsize)
        install(play)

        rng = np.random.default_rng(5)
        a = np.zeros(6, dt)
        a["x"] = np.nan
        a["y"] = rng.integers(-50, 50, 6)
        a["v"] = rng.random((6, 2))
        host = np.zeros(3, dt)
        host["x"] = 1.5
        r = host[1]                           # a numpy.void viewing host
        before_v = a["v"].copy()
        k[1, 32](a, r)
        assert np.array_equal(a["x"], (a["y"] + 1.5).astype(np.float32)), a
        assert np.array_equal(a["v"], before_v)
        assert host["y"][1] == 9 and host["y"][0] == 0
        print(list(k.signatures)[0][0][:7], list(k.signatures)[0][1][:7])

        bad = np.zeros(3, np.dtype([("x", np.float32), ("s", object)]))
        try:
            k[1, 32](bad, r)
        except TypeError as e:
            print("error:", e)
    """)
    assert "strides 24 itemsize 24" in out
    assert "Record( Record(" in out
    assert "error: argument 1 of type 'numpy.ndarray' cannot be passed to a kernel" in out
    assert "field 's'" in out


def test_device_arrays_and_device_records_of_structured_dtypes(run_python, mock_driver):
    out = mock_run(run_python, mock_driver, """
        dt = np.dtype([("x", np.float32), ("y", np.int32), ("v", np.float64, (2,))], align=True)
        rng = np.random.default_rng(11)
        a = np.zeros(5, dt)
        a["x"], a["y"], a["v"] = rng.random(5), rng.integers(0, 9, 5), rng.random((5, 2))
        d = cuda.to_device(a)
        assert d.dtype == dt and d.shape == (5,) and d.strides == (24,) and d.nbytes == 120
        assert d.copy_to_host().tobytes() == a.tobytes()
        assert d[1:4].copy_to_host().tobytes() == a[1:4].tobytes()
        assert cuda.device_array(4, dt).dtype == dt and cuda.device_array_like(a).dtype == dt
        cai = d.__cuda_array_interface__
        assert cai["typestr"] == "|V24" and cai["descr"] == dt.descr
        assert cuda.from_cuda_array_interface(cai, owner=d).copy_to_host().tobytes() == a.tobytes()

        @cuda.jit
        def k(src, dst):
            i = cuda.grid(1)
            if i < src.shape[0]:
                dst[i] = src[i]

        class Foreign:   # another library's array of records: its interface (with descr)
            def __init__(self, d): self.d = d
            @property
            def __cuda_array_interface__(self): return self.d.__cuda_array_interface__

        install(lambda params: None)
        e = cuda.device_array(5, dt)
        k[1, 32](d, e)
        k[1, 32](Foreign(d), e)   # descr loses numpy's aligned flag: the same bytes still copy
        sigs = [s for s in k.signatures]
        print("sigs", len(sigs), all(t.startswith("Record(") and t.endswith("[::1]") for s in sigs for t in s))

        rec = cuda.to_device(a[2])          # numba's DeviceRecord: kernels get the record
        print(repr(rec))

        @cuda.jit
        def r(rec, out):
            out[0] = rec.x

        def play(params):
            p = param(params, 0, "Q")
            view(p, (), (), dt)["x"] = 42.0    # the kernel's record write, by hand
        install(play)
        r[1, 1](rec, np.zeros(1, np.float32))
        print("record sig", list(r.signatures)[0][0].startswith("Record(x[type=float32"))
        v = a[4]
        rec.copy_to_host(v)                  # into a numpy.void: a's item changes
        print("copied", a["x"][4], a["y"][4] == a["y"][2])
        try:
            cuda.to_device(np.zeros(2, [("s", "M8[s]")]))
        except TypeError as ex:
            print("error:", ex)
    """)
    assert "sigs 2 True" in out
    assert "<cudajit.DeviceRecord dtype=" in out
    assert "record sig True" in out
    assert "copied 42.0 True" in out
    assert "error: cudajit has no device type for dtype" in out and "field 's'" in out


# ---------------------------------------------------------------------------
# 6. Against numba-cuda on the CPU (its compile_ptx needs no GPU)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def numba_cuda():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack          # numba-cuda 0.30 on numpy >= 2.5
    return pytest.importorskip("numba.cuda")


EVERY_KIND_ALIGNED = np.dtype([(n, EVERY_KIND.fields[n][0]) for n in EVERY_KIND.names], align=True)


def r_sum(r):
    return r.x + r.y


def r_mixed(r):
    return r.z * r.y + r.b


def r_item(r):
    return r["x"] * 2


def r_pos(r):
    return r[1] * r[-1]


def n_nested(r):
    return r.inner.p + r.v[1]


def n_complex(r):
    return r.inner.q * r.id


def n_matrix(r):
    return r.m[1, 0] - r.pts[1].p


def e_small(r):
    return r.f1 + r.f5 + r.f9


def e_wide(r):
    return r.f4 * r.f8 + r.f13


@pytest.mark.parametrize("fn,dtype", [(r_sum, PACKED), (r_sum, ALIGNED), (r_mixed, ALIGNED), (r_item, PACKED), (r_pos, ALIGNED),
                                      (r_sum, np.dtype(STRINGS.descr, align=True)),
                                      (n_nested, NESTED), (n_complex, NESTED), (n_matrix, NESTED),
                                      (e_small, EVERY_KIND_ALIGNED), (e_wide, EVERY_KIND_ALIGNED)])
def test_record_types_and_results_match_numba(numba_cuda, fn, dtype):
    import numba
    nb_rec = numba.from_dtype(dtype)
    assert _core.type_numba_string(rec(dtype)) == str(nb_rec)
    ours = cuda.compile_ptx(fn, (nb_rec,), device=True, cc=(9, 0))[1]
    theirs = numba_cuda.compile_ptx(fn, (nb_rec,), device=True, cc=(9, 0))[1]
    assert str(ours) == str(theirs)


def test_misaligned_fields_of_packed_records_compile_where_numba_refuses(numba_cuda, tmp_path):
    # numba-cuda refuses a field whose offset is not a multiple of its
    # alignment ("... is not aligned"); cudajit reads it byte by byte.
    import numba
    nb_rec = numba.from_dtype(EVERY_KIND)
    with pytest.raises(Exception, match="is not aligned"):
        numba_cuda.compile_ptx(e_wide, (nb_rec,), device=True, cc=(9, 0))
    ptx, ret = cuda.compile_ptx(e_wide, (nb_rec,), device=True, cc=(9, 0))
    assert str(ret) == "complex128"
    assemble(ptx, tmp_path)


def test_records_are_part_of_the_disk_cache_key(run_python, mock_driver, tmp_path, monkeypatch):
    (tmp_path / "recmod.py").write_text(textwrap.dedent("""
        import cudajit as cuda

        @cuda.jit(cache=True)
        def k(a, out):
            i = cuda.grid(1)
            if i < a.shape[0]:
                out[i] = a[i].x + a[i].v[1]
    """))
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path / "cache"))

    def launch(align):   # a fresh process: only the disk cache remembers
        return run_python(f"""
            import sys
            sys.path.insert(0, {str(tmp_path)!r})
            import numpy as np
            from recmod import k
            dt = np.dtype([("v", np.float32, (2,)), ("y", np.int8), ("x", np.float64), ("w", np.int8),
                           ("u", np.int16)], align={align})
            k[1, 4](np.zeros(4, dt), np.zeros(4))
            print(list(k.stats.values())[0]["cache_result"])
        """, driver=mock_driver).strip()

    # aligned and packed records are two signatures: each misses once, then hits
    assert [launch(True), launch(False), launch(True), launch(False)] == ["miss", "miss", "hit", "hit"]


def test_cupy_arrays_of_records(run_python, mock_driver):
    # CuPy 14 makes arrays of structured dtypes (from numpy's); the stand-in has
    # cupy.ndarray's attribute shapes (tests/test_launch.py)
    from test_launch import FAKES
    out = mock_run(run_python, mock_driver, FAKES + textwrap.dedent("""
        dt = np.dtype([("x", np.float32), ("y", np.int32)], align=True)

        @cuda.jit
        def k(a, out):
            i = cuda.grid(1)
            if i < a.shape[0]:
                out[i] = a[i].x + a[i].y

        install(lambda params: None)
        c = ndarray(cuda.to_device(np.zeros(7, dt)))
        k[1, 32](c, np.zeros(7))
        print(list(k.signatures)[0][0])
    """))
    assert "Record(x[type=float32;offset=0],y[type=int32;offset=4];8;True)[::1]" in out


def test_misaligned_subarrays_of_packed_records_are_refused():
    # A packed record's subarray whose elements would not sit at their
    # alignment (its offset, or the items' spacing, is not a multiple of
    # it) is refused with the field named: array views load elements whole.
    # numba-cuda refuses fields at misaligned offsets too.
    for dt, field in ((np.dtype([("x", np.float32), ("y", np.int8), ("v", np.float64, (2,))]), "v"),
                      (np.dtype([("v", np.float32, (2,)), ("y", np.int8)]), "v"),          # items 9 bytes apart
                      (np.dtype([("i", [("b", np.int8), ("w", np.int16, (2,))])]), "i.w")):
        with pytest.raises(TypeError, match=f"field '{field}' is an array of .* align=True"):
            rec(dt)
        rec(np.dtype(dt.descr, align=True))          # aligned: fine


def test_aligned_records_inside_packed_ones_are_read_bytewise():
    # numpy keeps an align=True dtype's flag when it is a field of a packed
    # record, where its fields need not be aligned at all (the H100 run of
    # tests/gpu/test_records_gpu.py met a misaligned address there): such a
    # nested record is read with align 1, one left at its alignment keeps
    # whole loads.
    outer = np.dtype([("id", np.int16), ("inner", INNER), ("pad", np.int16, (1,)), ("pts", INNER, (2,))])
    text = rec(outer)
    assert "inner: record{p: i16 @0, q: c64 @4; size 12, align 4} @2" in text      # no longer "aligned"
    assert "pts: record{p: i16 @0, q: c64 @4; size 12, align 4, aligned}[2] @16" in text

    def f(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[i] = a[i].inner.q.real + a[i].pts[1].q.real

    ptx = ptx_of(f, (arr(outer), "float64[::1]"))
    assert "ld.global.u8" in ptx and "ld.global.f32" in ptx
