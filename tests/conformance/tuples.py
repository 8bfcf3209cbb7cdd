"""Tuples: build, unpack, constant index, heterogeneous, as kernel
arguments, returned from device functions, tuple indices into 2-D arrays,
.shape tuples, nested tuples.
"""
import numpy as np

from ._registry import case, cuda, fma_slack, n_of, one_d, poison, rand  # noqa: F401

TOPIC = "tuples"


@cuda.jit(device=True)
def divmod_pair(a, b):
    return a // b, a % b


@cuda.jit(device=True)
def stats3(x, y, z):
    lo = min(x, y, z)
    hi = max(x, y, z)
    return lo, hi, (x + y + z) / 3.0


def tuple_build_unpack(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        t = (a[i], b[i], a[i] * b[i])
        x, y, z = t
        y, x = x, y                      # swap through a tuple
        out[0, i] = x - y
        out[1, i] = t[2] + t[0]
        out[2, i] = len(t)
        out[3, i] = t[-1]


def _build_ref(a, b, out):
    out[0] = b - a
    out[1] = a * b + a
    out[2] = 3
    out[3] = a * b


case("tuple_build_unpack_swap", "void(int64[::1], int64[::1], int64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.int64, -99, 99), rand(r, n, np.int64, -99, 99), poison((4, n), np.int64)],
     one_d(128, arg=0), _build_ref, [2], kernel=tuple_build_unpack, topic=TOPIC,
     covers=("tuple build", "unpack", "swap", "t[const]", "t[-1]", "len(tuple)"))


def tuple_heterogeneous(a, out_f, out_i):
    i = cuda.grid(1)
    if i < a.size:
        t = (a[i], i, True, np.float32(0.5))
        f, k, flag, h = t
        out_f[i] = f * h + (1.0 if flag else 0.0)
        out_i[i] = k + t[1]


case("tuple_heterogeneous", "void(float64[::1], float64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.float64), poison(n, np.int64)], one_d(128, arg=0),
     lambda a, of, oi: (of.__setitem__(..., a * 0.5 + 1.0), oi.__setitem__(..., 2 * np.arange(a.size))),
     [1, 2], kernel=tuple_heterogeneous, rtol=1e-15, topic=TOPIC,
     covers=("heterogeneous tuple (f64, int, bool, f32)",))


def tuple_from_device(a, b, q, r_, s):
    i = cuda.grid(1)
    if i < a.size:
        d, m = divmod_pair(a[i], b[i])
        q[i] = d
        r_[i] = m
        lo, hi, mean = stats3(a[i], b[i], d)
        s[0, i] = lo
        s[1, i] = hi
        s[2, i] = mean


def _from_dev_ref(a, b, q, r_, s):
    q[...] = a // b
    r_[...] = a % b
    d = a // b
    s[0] = np.minimum(np.minimum(a, b), d)
    s[1] = np.maximum(np.maximum(a, b), d)
    s[2] = (a + b + d) / 3.0


case("tuple_returned_from_device_function", "void(int64[::1], int64[::1], int64[::1], int64[::1], float64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.int64, -999, 999), rand(r, n, np.int64, -20, 20, nonzero=True),
                poison(n, np.int64), poison(n, np.int64), poison((3, n), np.float64)],
     one_d(128, arg=0), _from_dev_ref, [2, 3, 4], kernel=tuple_from_device, rtol=1e-15, topic=TOPIC,
     covers=("device function returning a 2-tuple", "returning a heterogeneous 3-tuple"))


def tuple_arg(a, shift, out):
    i = cuda.grid(1)
    if i < a.size:
        s0, s1 = shift
        out[i] = a[i] * s0 + s1


case("tuple_as_kernel_argument", "void(float64[::1], UniTuple(float64, 2), float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), (float(r.uniform(1, 2)), float(r.uniform(-1, 1))),
                poison(n, np.float64)],
     one_d(128, arg=0), lambda a, s, out: out.__setitem__(..., a * s[0] + s[1]), [2], kernel=tuple_arg,
     rtol=1e-15, topic=TOPIC, covers=("UniTuple kernel argument",),
     slack=fma_slack(np.float64, lambda a, s, out: {2: a * s[0]}))


def hetero_tuple_arg(a, params, out):
    i = cuda.grid(1)
    if i < a.size:
        k, scale = params
        out[i] = a[(i + k) % a.size] * scale


case("heterogeneous_tuple_argument", "void(float64[::1], Tuple((int64, float64)), float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), (int(r.integers(1, 50)), float(r.uniform(1, 2))),
                poison(n, np.float64)],
     one_d(128, arg=0), lambda a, p, out: out.__setitem__(..., np.roll(a, -p[0]) * p[1]), [2],
     kernel=hetero_tuple_arg, rtol=1e-15, topic=TOPIC, covers=("Tuple((int64, float64)) kernel argument (numba's spelling)",))


def tuple_index_2d(a, out):
    i, j = cuda.grid(2)
    m, n = a.shape
    if i < m and j < n:
        idx = (i, j)
        out[idx] = a[idx] + a[m - 1 - i, j]


case("tuple_index_and_shape_unpack", "void(float32[:, ::1], float32[:, ::1])",
     lambda r: [rand(r, (s := (int(r.integers(50, 150)), int(r.integers(50, 150)))), np.float32),
                poison(s, np.float32)],
     lambda args: (((args[0].shape[0] + 15) // 16, (args[0].shape[1] + 15) // 16), (16, 16)),
     lambda a, out: out.__setitem__(..., a + a[::-1, :]), [1], kernel=tuple_index_2d, rtol=1e-6, topic=TOPIC,
     covers=("a[(i, j)] with a tuple variable", "m, n = a.shape"))


def nested_tuples(a, out):
    i = cuda.grid(1)
    if i < a.size:
        t = ((a[i], 2), (3.5, i))
        (x, k), (y, j) = t
        out[i] = x * k + y - j + t[1][0]


case("nested_tuples", "void(float64[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), poison(n, np.float64)], one_d(128, arg=0),
     lambda a, out: out.__setitem__(..., a * 2 + 3.5 - np.arange(a.size) + 3.5), [1], kernel=nested_tuples,
     rtol=1e-15, topic=TOPIC, covers=("nested tuples", "nested unpacking", "t[1][0]"))


def tuple_compare_and_loop(a, out):
    i = cuda.grid(1)
    if i < a.size:
        t = (a[i], a[i] + 1, a[i] * 2)
        s = 0
        for v in t:
            s += v
        out[i] = s + ((1, 2) < (1, 3)) + ((a[i], 0) == (a[i], 0))


case("tuple_iterate_and_compare", "void(int64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.int64, -99, 99), poison(n, np.int64)], one_d(128, arg=0),
     lambda a, out: out.__setitem__(..., 4 * a + 1 + 2), [1], kernel=tuple_compare_and_loop, topic=TOPIC,
     covers=("for v in homogeneous tuple variable", "tuple comparison"))
