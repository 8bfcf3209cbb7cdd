"""The kernel language of issue 5 (numba.cuda semantics): types, operators,
control flow, tuples, slicing, device functions, print and debug aids.

CI checks the typed IR, the PTX (through ptxas where it matters) and the
error messages; tests marked gpu launch and compare with numpy. The kernel
cases in kernel_cases.py ("# --- language (issue 5)") cover the same
features end to end through test_kernels_compile.py and the GPU suite.
"""
import re

import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit.errors import CompileError

ARCH = "sm_90"


def ptx_of(fn, sig, **kw):
    ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0), **kw)
    return ptx


def ret_of(fn, sig):
    sig = sig.replace(",)", ")")   # numba's one-element tuple spelling
    return str(cuda.compile_ptx(fn, sig, cc=(9, 0), device=True)[1])


def typed_ir(fn, types):
    return _core.infer_ir(fn, types)


from ptxas_check import assemble  # noqa: E402


@pytest.fixture(scope="module")
def numba_cuda():
    nb = pytest.importorskip("numba.cuda")
    return nb


def numba_ret(numba_cuda, fn, sig):
    return str(numba_cuda.compile_ptx(fn, sig, cc=(9, 0), device=True)[1])


# ---------------------------------------------------------------------------
# 1. Types
# ---------------------------------------------------------------------------


def c_abs(z):
    return abs(z)


def c_parts(z):
    return z.real + z.imag


def c_arith(a, b):
    return a * b - a / b + 1j


def mk_complex(x, y):
    return complex(x, y)


def np_ctor(x):
    return np.float32(x) + np.int16(3)


def big_const(x):
    return x & 0xFFFFFFFFFFFFFFFF


def small_int_ops(a, b):
    return (a << 2) ^ (b >> 1) | ~a


@pytest.mark.parametrize("fn,sig", [
    (c_abs, "(complex128,)"), (c_abs, "(complex64,)"), (c_parts, "(complex64,)"),
    (c_parts, "(float32,)"), (c_arith, "(complex64, complex128)"), (c_arith, "(complex64, float32)"),
    (mk_complex, "(float32, int32)"), (np_ctor, "(int64,)"), (big_const, "(uint64,)"),
    (small_int_ops, "(int8, uint8)"), (small_int_ops, "(uint16, int16)"),
    (small_int_ops, "(uint8, uint8)"),
])
def test_return_types_match_numba(numba_cuda, fn, sig):
    ours = ret_of(fn, sig)
    theirs = numba_ret(numba_cuda, fn, sig)
    assert ours == theirs, (fn.__name__, sig, ours, theirs)


def test_complex_abs_is_hypot():
    def k(a, out):
        i = cuda.grid(1)
        out[i] = abs(a[i])
    ptx = ptx_of(k, "void(complex128[::1], float64[::1])")
    assert ".entry" in ptx
    ir = typed_ir(k, ["complex128[::1]", "float64[::1]"])
    assert "complex.abs" in ir


def test_complex_and_small_arrays_assemble(tmp_path):
    def k(a, b, c, d):
        i = cuda.grid(1)
        a[i] = a[i] * b[i] + abs(a[i])
        c[i] = c[i] + d[i]
    assemble(ptx_of(k, "void(complex64[::1], complex64[::1], int8[::1], uint16[::1])"), tmp_path)


# ---------------------------------------------------------------------------
# 2. Operators and None arguments
# ---------------------------------------------------------------------------


def optional_out(a, out):
    i = cuda.grid(1)
    if out is None:
        a[i] = a[i] * 2
    else:
        out[i] = a[i] * 2


def test_none_argument_prunes_the_other_branch():
    ir = typed_ir(optional_out, ["float32[::1]", "none"])
    assert "store" in ir
    ptx_of(optional_out, "void(float32[::1], none)")
    ptx_of(optional_out, "void(float32[::1], float32[::1])")


def test_is_not_none_with_and(tmp_path):
    def k(a, out):
        i = cuda.grid(1)
        if out is not None and i < a.size:
            out[i] = a[i]
    assemble(ptx_of(k, "void(float32[::1], none)"), tmp_path)
    assemble(ptx_of(k, "void(float32[::1], float32[::1])"), tmp_path)


def test_chained_comparison_and_ifexp_types(numba_cuda):
    def f(a, b):
        return 1 if 0 < a < b else 2.5
    assert ret_of(f, "(int32, int64)") == numba_ret(numba_cuda, f, "(int32, int64)")


# ---------------------------------------------------------------------------
# 3. Control flow
# ---------------------------------------------------------------------------


def loop_tuple(a):
    s = 0.0
    for x in (1.5, 2.0, 3.0):
        s += x * a
    return s


def loop_uni_tuple(t):
    s = 0
    for x in t:
        s += x
    return s


def loop_enumerate(n):
    s = 0
    for i, v in enumerate(range(n), 3):
        s += i * v
    return s


def loop_zip(n):
    s = 0
    for i, j in zip(range(n), range(n, 0, -1)):
        s += i * j
    return s


@pytest.mark.parametrize("fn,sig", [
    (loop_tuple, "(float32,)"), (loop_uni_tuple, "(UniTuple(int32, 4),)"),
    (loop_enumerate, "(int64,)"), (loop_zip, "(int32,)"),
])
def test_loops_compile_with_numba_types(numba_cuda, fn, sig):
    assert ret_of(fn, sig) == numba_ret(numba_cuda, fn, sig)


SHAPE = (3, 5, 7)


def tuple_slices(x):
    a = SHAPE[::-1]        # a constant tuple: a shape shared arrays take
    b = x[1:]              # a runtime tuple: its elements
    c = x[::-2]
    d = SHAPE[-2:10]
    return a[0] * 100 + b[0] * 10 + c[1] + d[0] * 1000


def test_tuple_slices_follow_python():
    assert ret_of(tuple_slices, "(UniTuple(int64, 4),)") == "int64"
    ir = typed_ir(tuple_slices, ["UniTuple(int64, 4)"])
    # SHAPE[::-1][0] is 7 and SHAPE[-2:10][0] is 5, folded; x[1:][0] and
    # x[::-2][1] are both x[1].
    assert "const 7" in ir and "const 5" in ir and ir.count("tuple_get v0 [1]") == 2, ir
    assert tuple_slices((10, 20, 30, 40)) == 7 * 100 + 20 * 10 + 20 + 5 * 1000   # CPython agrees


def shared_of_flipped_shape(out):
    s = cuda.shared.array(SHAPE[::-1], np.float32)
    t = cuda.local.array(SHAPE[1:], np.int32)
    out[0] = s.shape[0] * 10 + t.shape[0]


def test_a_sliced_constant_shape_makes_arrays():
    ptx = ptx_of(shared_of_flipped_shape, "void(int64[::1])")
    assert "st.global.u64" in ptx and "75;" in ptx.replace(" ", "")


def test_iterating_a_heterogeneous_tuple_is_a_clear_error():
    def f(a):
        s = 0
        for x in (a, (1, 2)):
            s += 1
        return s
    with pytest.raises(CompileError, match=r"test_language.py:\d+.*different types"):
        cuda.compile_ptx(f, "(int32)", device=True)


def test_iterating_an_array_is_a_clear_error():
    def f(a):
        s = 0
        for x in a:
            s += x
        return s
    with pytest.raises(CompileError, match=r"test_language.py:\d+.*iterating over array"):
        cuda.compile_ptx(f, "(int32[::1])", device=True)


# ---------------------------------------------------------------------------
# 4. Tuples and slicing
# ---------------------------------------------------------------------------


def tuple_ret(a, b):
    return (a + b, a * 2.0, a > b)


def tuple_unpack(t):
    x, y = t
    return x * y + t[-1]


@pytest.mark.parametrize("fn,sig", [
    (tuple_ret, "(int32, float32)"), (tuple_unpack, "(UniTuple(int64, 2),)"),
])
def test_tuples_match_numba(numba_cuda, fn, sig):
    assert ret_of(fn, sig) == numba_ret(numba_cuda, fn, sig)


def view_first(a):
    return a[1:][0]


def view_row(a):
    return a[1, :][2]


@pytest.mark.parametrize("fn,sig", [(view_first, "(float32[::1],)"), (view_row, "(float64[:, ::1],)")])
def test_slices_typed_like_numba(numba_cuda, fn, sig):
    assert ret_of(fn, sig) == numba_ret(numba_cuda, fn, sig)


@pytest.mark.parametrize("expr,layout", [
    ("a[1:]", "C"), ("a[::2]", "A"), ("a[i, :]", "C"), ("a[:, i]", "A"), ("a[i]", "C"),
    ("a[1:3, :]", "A"),
])
def test_slice_view_layouts_follow_numba(expr, layout):
    ns = {}
    exec(f"def f(a, i):\n    v = {expr}\n    return v.size\n", ns)
    ir = typed_ir(ns["f"], ["float32[:, ::1]" if "," in expr or expr == "a[i]" else "float32[::1]", "int64"])
    views = [l for l in ir.splitlines() if "array_view" in l]
    assert views, ir
    assert re.search(rf"array\(f32, \d+d, {layout}\)", views[0]), views[0]


def test_slice_assignment_is_a_clear_error():
    def k(a):
        a[1:3] = 0
    with pytest.raises(CompileError, match=r"test_language.py:\d+"):
        cuda.compile_ptx(k, "void(float32[::1])")


def test_slices_assemble(tmp_path):
    def k(a, out):
        i = cuda.grid(1)
        r = a[i, :]
        out[i] = r[1:].size + r[::-1][0] + r[2:5][1]
    assemble(ptx_of(k, "void(float32[:, ::1], float32[::1])"), tmp_path)


# ---------------------------------------------------------------------------
# 5. Functions and print
# ---------------------------------------------------------------------------


@cuda.jit(device=True)
def _with_defaults(x, scale=2, shift=0.5):
    return x * scale + shift


@cuda.jit(device=True)
def _recursive(n):
    return _recursive(n - 1) if n > 0 else 0


def test_device_defaults_and_keywords():
    def f(x):
        return _with_defaults(x) + _with_defaults(x, shift=1) + _with_defaults(x, 3, 4)
    assert ret_of(f, "(int32,)") == "float64"


def test_recursion_is_a_clear_error():
    def f(x):
        return _recursive(x)
    with pytest.raises(CompileError, match="recursive call"):
        cuda.compile_ptx(f, "(int64)", device=True)


def test_explicit_device_signature_and_eager_kernel_signatures():
    @cuda.jit("float32(float32)", device=True)
    def sq(x):
        return x * x

    @cuda.jit(["void(float32[::1])", "void(float64[::1])"])
    def k(a):
        a[0] = sq(a[0])
    assert len(k.overloads) == 2


def test_print_uses_vprintf_with_numba_format(tmp_path):
    def k(a, n):
        print("value", a[0], n, True, (1, 2.5))
    ptx = ptx_of(k, "void(float32[::1], uint32)")
    assert "vprintf" in ptx
    # The format string: items separated by spaces, newline at the end.
    ir = typed_ir(k, ["float32[::1]", "uint32"])
    assert "intrinsic print" in ir or "print" in ir
    assemble(ptx, tmp_path)


def test_print_keyword_is_rejected():
    def k(a):
        print(a[0], sep=",")
    with pytest.raises(CompileError, match="print"):
        cuda.compile_ptx(k, "void(float32[::1])")


# ---------------------------------------------------------------------------
# 6. Debug aids
# ---------------------------------------------------------------------------


def bounds_kernel(a, i):
    a[i] = 1.0


def test_debug_bounds_check_reports_and_traps(tmp_path):
    ptx = ptx_of(bounds_kernel, "void(float32[::1], int64)", debug=True)
    assert "vprintf" in ptx and "trap" in ptx
    assert "IndexError" in ptx_bytes_text(ptx)
    assemble(ptx, tmp_path)
    plain = ptx_of(bounds_kernel, "void(float32[::1], int64)")
    assert "vprintf" not in plain


def ptx_bytes_text(ptx):
    """The text of the byte-array constants in PTX (.b8 name[n] = {73, 110, ...})."""
    out = []
    for m in re.finditer(r"\.b8 \S+\[\d+\] = \{([0-9, ]+)\}", ptx):
        out.append(bytes(int(x) for x in m.group(1).split(",")).decode("latin-1"))
    return "\n".join(out)


def test_lineinfo_emits_line_directives():
    ptx = ptx_of(bounds_kernel, "void(float32[::1], int64)", lineinfo=True)
    assert ".loc" in ptx and ".file" in ptx


# ---------------------------------------------------------------------------
# GPU: launches vs numpy
# ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_none_argument():
    k = cuda.jit(optional_out)
    rng = np.random.default_rng()
    a = rng.uniform(-3, 3, 256).astype(np.float32)
    expect = a * 2
    out = np.full(256, np.nan, np.float32)
    k[2, 128](a, out)
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    a2 = a.copy()
    k[2, 128](a2, None)
    np.testing.assert_allclose(a2, expect, rtol=1e-6)


@pytest.mark.gpu
def test_gpu_tuple_and_complex_scalar_arguments():
    @cuda.jit
    def k(shape, z, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = z * (i % shape[0]) + shape[1]

    rng = np.random.default_rng()
    z = complex(rng.uniform(-2, 2), rng.uniform(-2, 2))
    shape = (int(rng.integers(2, 9)), int(rng.integers(1, 100)))
    out = np.zeros(300, np.complex128)
    k[3, 128](shape, z, out)
    idx = np.arange(300)
    np.testing.assert_allclose(out, z * (idx % shape[0]) + shape[1], rtol=1e-12)


def test_conjugate_method(numba_cuda):
    def f(z, x):
        return z.conjugate() * z + x.conjugate()
    assert ret_of(f, "(complex64, float32)") == numba_ret(numba_cuda, f, "(complex64, float32)")
    ir = typed_ir(f, ["complex64", "float32"])
    assert "complex.make" in ir


def test_layout_merge_assembles(tmp_path):
    def k(a, b, out, flag):
        i = cuda.grid(1)
        x = a if flag else b
        out[i] = x[i]
    assemble(ptx_of(k, "void(float32[::1], float32[:], float32[::1], boolean)"), tmp_path)


def test_array_alignment():
    # numba's alignment= of shared and local arrays: the PTX's .align; 16 without it.
    def k(x):
        s = cuda.shared.array(64, np.float32, alignment=128)
        loc = cuda.local.array(8, np.float64, alignment=64)
        t = cuda.shared.array(32, dtype=np.int32, alignment=None)
        i = cuda.threadIdx.x
        s[i] = x[i]
        loc[i % 8] = x[i]
        t[i] = 1
        cuda.syncthreads()
        x[i] = s[63 - i] + loc[0] + t[0]

    ptx, _ = cuda.compile_ptx(k, "void(float32[::1])")
    aligns = sorted(line.split(".align")[1].split()[0] for line in ptx.splitlines() if ".align" in line)
    assert aligns == ["128", "16", "64"]

    for a, message in [(3, "alignment must be a constant power of two"), (2, "alignment 2 is smaller than the float32")]:
        g = {"cuda": cuda, "np": np}
        exec(f"def b(x):\n    s = cuda.shared.array(4, np.float32, alignment={a})\n    x[0] = s[0]\n", g)
        with pytest.raises(CompileError, match=message):
            cuda.compile_ptx(g["b"], "void(float32[::1])")


def test_array_view_of_another_item_size_needs_a_c_array():
    @cuda.jit
    def k(x, out):
        out[0] = x.view(np.float32)[0]

    with pytest.raises(cuda.CompileError, match="changes the item size, which needs the last axis contiguous"):
        cuda.compile_ptx(k, "void(complex64[:], float32[::1])")
    ptx, _ = cuda.compile_ptx(k, "void(complex64[::1], float32[::1])")
    assert "ld.global.f32" in ptx


def test_enum_members_fold_to_their_values():
    import enum
    from host_exec import host_function

    class Color(enum.IntEnum):
        RED = 1
        GREEN = 2

    class Shape(enum.Enum):
        CIRCLE = 10
        SQUARE = 20
        ALSO_SQUARE = 20   # an alias: the same member

    @cuda.jit(device=True)
    def f(k):
        s = Shape.SQUARE
        r = Color.GREEN * 100 + Shape.CIRCLE.value
        if s == Shape.ALSO_SQUARE and k == Shape.SQUARE.value and Shape.CIRCLE != Shape.SQUARE:
            r += 1
        return r

    h = host_function(f, ["int64"])
    assert h(20) == 211 and h(10) == 210

    class Obj(enum.Enum):
        THING = object()

    @cuda.jit
    def k(x):
        x[0] = Obj.THING   # L:obj

    with pytest.raises(CompileError, match="whose value is not a number, string or tuple"):
        cuda.compile_ptx(k, "void(int64[::1])")
