"""Control flow: chained comparisons, conditional expressions, `is None` on
optional arguments, nested loops with break/continue, range with negative
steps, while with compound conditions, early returns, for over a tuple of
constants, enumerate/zip over ranges, augmented assignment on locals.
Each kernel has a plain-Python twin run by numpy's reference (the same
function body, element by element, on int64/float64 Python scalars).
"""
import math

import numpy as np

from ._registry import case, cuda, fma_slack, n_of, one_d, poison, rand  # noqa: F401

TOPIC = "control"


def _per_element(fn, out_dt=None):
    """A reference that runs the scalar body `fn(*row) -> value` per element."""

    def ref(*args):
        *ins, out = args
        for i in range(out.size):
            out[i] = fn(*[x[i].item() for x in ins])
    return ref


def _register(name, kernel, body, in_specs, out_dt, covers, rtol=0.0, slack=None):
    """in_specs: [(dtype, lo, hi)] for each input array; one output array."""
    sig_in = ", ".join(f"{np.dtype(d).name}[::1]" for d, _, _ in in_specs)
    case(name, f"void({sig_in}, {np.dtype(out_dt).name}[::1])",
         lambda r: [rand(r, n := n_of(r), d, lo, hi) for d, lo, hi in in_specs][:1] and
         (lambda n: [rand(r, n, d, lo, hi) for d, lo, hi in in_specs] + [poison(n, out_dt)])(n_of(r)),
         one_d(128, arg=len(in_specs)), _per_element(body), [len(in_specs)], kernel=kernel, rtol=rtol,
         topic=TOPIC, covers=covers, slack=slack)


# ---- chained comparisons, conditional expressions ----------------------------------------

def chained_cmp_body(x, y):
    c = 0
    if -1 < x <= y < 3:
        c += 1
    if x < y > 0 != x:
        c += 10
    if 0 <= x == x < 5:
        c += 100
    return c


def chained_cmp(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = chained_cmp_body_d(a[i], b[i])


def cond_expr_body(x, y):
    m = x if x > y else y
    s = -1 if x < 0 else (1 if x > 0 else 0)
    return m * 10 + s + (2 if x == y else 3)


def cond_expr(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cond_expr_body_d(a[i], b[i])


def aug_locals_body(x, y):
    t = x
    t += y
    t *= 3
    t -= x
    t //= 2
    t %= 97
    t **= 2
    t <<= 1
    t >>= 1
    t |= 4
    t &= 0xFFF
    t ^= 5
    return t


def aug_locals(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = aug_locals_body_d(a[i], b[i])


def early_return_body(x, y):
    if x < -50:
        return -1
    if x == y:
        return 0
    for k in range(10):
        if x + k == y:
            return k + 100
    if x > 50:
        return 1
    return 2


def early_return(a, b, out):
    i = cuda.grid(1)
    if i >= out.size:
        return
    out[i] = early_return_body_d(a[i], b[i])


def nested_break_continue_body(x, y):
    total = 0
    for i in range(12):
        if i == x % 7:
            continue
        for j in range(i, 12):
            if j > y % 11:
                break
            if (i + j) % 3 == 0:
                continue
            total += i * j
        if total > 400:
            break
    return total


def nested_break_continue(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = nested_break_continue_body_d(a[i], b[i])


def negative_step_range_body(x, y):
    s = 0
    for k in range(x, -y, -3):
        s += k
    for k in range(10, 0, -1):
        s = s * 2 % 1000003 + k
    for k in range(y, x):      # empty when y >= x
        s -= k
    for k in range(5, 5 - y, -2):
        s += 7 * k
    return s


def negative_step_range(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = negative_step_range_body_d(a[i], b[i])


def while_complex_body(x, y):
    n = 0
    a = x
    while a > 1 and n < 200 and not (a == 7 or a == 11):
        if a % 2 == 0:
            a //= 2
        else:
            a = 3 * a + 1
        n += 1
    b = y
    while True:
        b -= 3
        if b < 0 or b == 4:
            break
    return n * 100 + a + b


def while_complex(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = while_complex_body_d(a[i], b[i])


def tuple_loop_body(x, y):
    s = 0.0
    for c in (1.5, -2.0, 0.25, 4.0):
        s = s * x + c
    for k in (3, 1, 2):
        s += k * y
    return s


def _horner_products(x, y, out):
    """{2: the products tuple_loop_body adds (|s * x|, |k * y|), summed}: each step may be one fma."""
    s, total = np.zeros_like(x), np.zeros_like(x)
    for c in (1.5, -2.0, 0.25, 4.0):
        total += np.abs(s * x)
        s = s * x + c
    return {2: total + 6 * np.abs(y)}


def tuple_loop(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = tuple_loop_body_d(a[i], b[i])


def enumerate_zip_body(x, y):
    s = 0
    for k, v in enumerate(range(x % 9, 20, 3)):
        s += k * v
    for p, q in zip(range(5), range(y % 7, 100)):
        s += p * q
    for k, v in enumerate(range(4), 1):
        s += k - v
    return s


def enumerate_zip(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = enumerate_zip_body_d(a[i], b[i])


def for_else_body(x, y):
    r = -1
    for k in range(2, 30):
        if (x + k) % 17 == 0:
            r = k
            break
    else:
        r = 1000
    while y > 0:
        y -= 5
    else:
        r += 1
    return r


def for_else(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = for_else_body_d(a[i], b[i])


def float_loop_body(x, y):
    # Newton iterations for sqrt with a tolerance-controlled while loop
    g = x if x > 1.0 else 1.0
    it = 0
    while abs(g * g - x) > 1e-12 * x and it < 100:
        g = 0.5 * (g + x / g)
        it += 1
    return g + y * 0.0


def float_loop(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = float_loop_body_d(a[i], b[i])


def int_float_mix_body(x, y):
    acc = 0
    for k in range(1, 8):
        acc += k * x
        if acc > 100:
            acc = acc / 2       # acc becomes float: numba unifies to float64
    return acc + y


def int_float_mix(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = int_float_mix_body_d(a[i], b[i])


# numba.cuda calls only device functions: the kernels call these, the references
# run the plain functions.
chained_cmp_body_d = cuda.jit(device=True)(chained_cmp_body)
cond_expr_body_d = cuda.jit(device=True)(cond_expr_body)
aug_locals_body_d = cuda.jit(device=True)(aug_locals_body)
early_return_body_d = cuda.jit(device=True)(early_return_body)
nested_break_continue_body_d = cuda.jit(device=True)(nested_break_continue_body)
negative_step_range_body_d = cuda.jit(device=True)(negative_step_range_body)
while_complex_body_d = cuda.jit(device=True)(while_complex_body)
tuple_loop_body_d = cuda.jit(device=True)(tuple_loop_body)
enumerate_zip_body_d = cuda.jit(device=True)(enumerate_zip_body)
for_else_body_d = cuda.jit(device=True)(for_else_body)
float_loop_body_d = cuda.jit(device=True)(float_loop_body)
int_float_mix_body_d = cuda.jit(device=True)(int_float_mix_body)

I64 = (np.int64, -100, 100)
F64 = (np.float64, -4, 4)
for name, kernel, body, specs, odt, covers in (
        ("chained_comparisons", chained_cmp, chained_cmp_body, [(np.int64, -3, 5), (np.int64, -3, 5)], np.int64,
         ("a < b <= c < d chained comparisons",)),
        ("conditional_expressions", cond_expr, cond_expr_body, [(np.int32, -5, 5), (np.int32, -5, 5)], np.int64,
         ("x if c else y, nested",)),
        ("augmented_assignment_locals", aug_locals, aug_locals_body, [(np.int64, 0, 1000), (np.int64, 0, 1000)],
         np.int64, ("+= *= -= //= %= **= <<= >>= |= &= ^= on locals",)),
        ("early_returns", early_return, early_return_body, [I64, (np.int64, -100, 100)], np.int64,
         ("return inside loops and ifs", "bare return in a kernel")),
        ("nested_loops_break_continue", nested_break_continue, nested_break_continue_body,
         [(np.int64, 0, 1000), (np.int64, 0, 1000)], np.int64, ("nested for", "break", "continue")),
        ("range_negative_steps", negative_step_range, negative_step_range_body,
         [(np.int64, -30, 30), (np.int64, 0, 20)], np.int64, ("range(a, b, -3)", "range(10, 0, -1)", "empty range")),
        ("while_compound_conditions", while_complex, while_complex_body,
         [(np.int64, 1, 1000), (np.int64, 0, 50)], np.int64, ("while a and b and not (c or d)", "while True: break")),
        ("for_over_constant_tuple", tuple_loop, tuple_loop_body, [F64, F64], np.float64,
         ("for c in (1.5, -2.0, ...)", "heterogeneous-free tuple iteration")),
        ("enumerate_zip_ranges", enumerate_zip, enumerate_zip_body, [(np.int64, 0, 1000), (np.int64, 0, 1000)],
         np.int64, ("enumerate(range)", "zip(range, range)", "enumerate start")),
        ("for_while_else", for_else, for_else_body, [(np.int64, 0, 1000), (np.int64, -5, 40)], np.int64,
         ("for ... else", "while ... else")),
        ("while_float_newton", float_loop, float_loop_body, [(np.float64, 0.1, 1000), F64], np.float64,
         ("while with float condition",)),
        ("int_to_float_local_unification", int_float_mix, int_float_mix_body, [I64, F64], np.float64,
         ("a local assigned int then float (numba unifies to float64)",)),
):
    _register(name, kernel, body, specs, odt, covers, rtol=1e-12 if odt == np.float64 else 0.0,
              slack=fma_slack(np.float64, _horner_products) if kernel is tuple_loop else None)


# ---- optional arguments: `is None` ------------------------------------------------------

def optional_arg(x, out, scale):
    i = cuda.grid(1)
    if i < x.size:
        if scale is None:
            out[i] = x[i]
        else:
            out[i] = x[i] * scale


case("is_none_with_none", "void(float64[::1], float64[::1], none)",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.float64), None], one_d(128, arg=0),
     lambda x, out, s: out.__setitem__(..., x), [1], kernel=optional_arg, topic=TOPIC,
     covers=("`is None` on an argument passed None (pruned branch)",))

case("is_none_with_value", "void(float64[::1], float64[::1], float64)",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.float64), float(r.uniform(1, 3))],
     one_d(128, arg=0), lambda x, out, s: out.__setitem__(..., x * s), [1], kernel=optional_arg, topic=TOPIC,
     covers=("`is None` on an argument passed a value",))


def is_not_none_local(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = None
        if x[i] > 0:
            v = x[i]
        out[i] = 1 if v is not None else 0


case("is_not_none_optional_local", "void(float64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.int64)], one_d(128, arg=0),
     lambda x, out: out.__setitem__(..., (x > 0).astype(np.int64)), [1], kernel=is_not_none_local, topic=TOPIC,
     covers=("Optional local", "is not None"))


# ---- 2-D/3-D indexing and grid-stride loops ----------------------------------------------

def grid_stride_2d(a, out):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            out[i, j] = a[i, j] * 2 - a[a.shape[0] - 1 - i, j]


def _gs2_ref(a, out):
    out[...] = a * 2 - a[::-1, :]


case("grid_stride_2d_gridsize", "void(float32[:, ::1], float32[:, ::1])",
     lambda r: [rand(r, (s := (int(r.integers(100, 300)), int(r.integers(100, 300)))), np.float32),
                poison(s, np.float32)],
     ((4, 3), (16, 8)), _gs2_ref, [1], kernel=grid_stride_2d, rtol=1e-6, topic=TOPIC,
     covers=("cuda.grid(2)", "cuda.gridsize(2)", "grid-stride nested loops"))


def negative_index(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[-1] + a[-(i + 1)] - a[i - a.size]


case("negative_indices_wrap", "void(int64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.int64, -999, 999), poison(n, np.int64)], one_d(128, arg=0),
     lambda a, out: out.__setitem__(..., a[-1] + a[::-1] - a), [1], kernel=negative_index, topic=TOPIC,
     covers=("a[-1]", "negative index wraps"))


def array_3d(a, out):
    i, j, k = cuda.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k] + i * 100 + j * 10 + k + a.ndim


def _a3_ref(a, out):
    i, j, k = np.indices(a.shape)
    out[...] = a + i * 100 + j * 10 + k + 3


case("array_3d_grid3", "void(int32[:, :, ::1], int32[:, :, ::1])",
     lambda r: [rand(r, (s := (int(r.integers(9, 30)), int(r.integers(9, 30)), int(r.integers(9, 30)))), np.int32),
                poison(s, np.int32)],
     lambda args: (tuple((d + 7) // 8 for d in args[0].shape[:2]) + ((args[0].shape[2] + 3) // 4,), (8, 8, 4)),
     _a3_ref, [1], kernel=array_3d, topic=TOPIC, covers=("cuda.grid(3)", "3-D arrays", ".ndim"))


def fortran_order(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * a.strides[1] + a.shape[0]


case("fortran_order_array", "void(float64[::1, :], float64[:, ::1])",
     lambda r: [np.asfortranarray(rand(r, (s := (int(r.integers(40, 90)), int(r.integers(40, 90)))), np.float64)),
                poison(s, np.float64)],
     lambda args: (((args[0].shape[0] + 15) // 16, (args[0].shape[1] + 15) // 16), (16, 16)),
     lambda a, out: out.__setitem__(..., a * a.strides[1] + a.shape[0]), [1], kernel=fortran_order,
     rtol=1e-15, topic=TOPIC, covers=("F-contiguous array", ".strides"),
     slack=fma_slack(np.float64, lambda a, out: {1: a * a.strides[1]}))


def debug_bounds(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + a[a.size - 1 - i]


case("debug_true_in_bounds", "void(float64[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.float64)], one_d(128, arg=0),
     lambda a, out: out.__setitem__(..., a + a[::-1]), [1], kernel=debug_bounds, rtol=1e-15, topic=TOPIC,
     options={"debug": True, "opt": False}, covers=("debug=True (bounds-checked indexing, in bounds)",))


def print_kernel(a, out):
    i = cuda.grid(1)
    if i < a.size:
        if i == 0:
            print("conformance print", i, a[0], 1.5)
        out[i] = a[i] * 2


case("print_in_kernel", "void(int32[::1], int32[::1])",
     lambda r: [rand(r, n := n_of(r), np.int32), poison(n, np.int32)], one_d(128, arg=0),
     lambda a, out: out.__setitem__(..., a * 2), [1], kernel=print_kernel, topic=TOPIC,
     covers=("print() in a kernel",))
