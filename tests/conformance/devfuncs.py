"""Device functions: calling device functions, default and keyword
arguments, explicit (several, eager) signatures on device functions and on
kernels, recursion-free call chains, device functions taking arrays.
"""
import math

import numpy as np

from ._registry import case, cuda, fma_slack, n_of, one_d, poison, rand  # noqa: F401

TOPIC = "devfuncs"


@cuda.jit(device=True)
def sq(x):
    return x * x


@cuda.jit(device=True)
def norm2(x, y):
    return math.sqrt(sq(x) + sq(y))


@cuda.jit(device=True)
def lerp(a, b, t=0.5):
    return a + (b - a) * t


@cuda.jit(device=True)
def scaled(x, scale=2.0, offset=0.0):
    return x * scale + offset


@cuda.jit("float64(float64, float64)", device=True)
def eager_mul_add(x, y):
    return x * y + 1.0


@cuda.jit(["int64(int64, int64)", "float64(float64, float64)"], device=True)
def two_sigs(x, y):
    return x - 2 * y


@cuda.jit(device=True)
def sum_row(a, i):
    s = 0.0
    for j in range(a.shape[1]):
        s += a[i, j]
    return s


@cuda.jit(device=True)
def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


def call_chain(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = norm2(x[i], y[i]) + sq(x[i])


case("device_calls_device", "void(float64[::1], float64[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), rand(r, n, np.float64), poison(n, np.float64)], one_d(128, arg=0),
     lambda x, y, out: out.__setitem__(..., np.hypot(x, y) + x * x), [2], kernel=call_chain, rtol=1e-14,
     topic=TOPIC, covers=("device function calling device functions",))


def default_kw(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = lerp(x[i], y[i])
        out[1, i] = lerp(x[i], y[i], 0.25)
        out[2, i] = lerp(x[i], y[i], t=0.75)
        out[3, i] = scaled(x[i], offset=1.0)
        out[4, i] = scaled(x[i], 3.0)
        out[5, i] = scaled(offset=-1.0, x=y[i], scale=0.5)


def _default_kw_ref(x, y, out):
    out[0] = x + (y - x) * 0.5
    out[1] = x + (y - x) * 0.25
    out[2] = x + (y - x) * 0.75
    out[3] = x * 2.0 + 1.0
    out[4] = x * 3.0
    out[5] = y * 0.5 - 1.0


case("device_default_and_keyword_args", "void(float64[::1], float64[::1], float64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), rand(r, n, np.float64), poison((6, n), np.float64)],
     one_d(128, arg=0), _default_kw_ref, [2], kernel=default_kw, rtol=1e-15, atol=1e-15, topic=TOPIC,
     covers=("default arguments", "keyword arguments", "all-keyword call out of order"))


def eager_device(x, y, out, iout, ix):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = eager_mul_add(x[i], y[i])
        out[1, i] = two_sigs(x[i], y[i])
        iout[i] = two_sigs(ix[i], 3)


case("device_explicit_signatures", "void(float64[::1], float64[::1], float64[:, ::1], int64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), rand(r, n, np.float64), poison((2, n), np.float64),
                poison(n, np.int64), rand(r, n, np.int64, -999, 999)],
     one_d(128, arg=0),
     lambda x, y, out, io, ix: (out.__setitem__(0, x * y + 1.0), out.__setitem__(1, x - 2 * y),
                                io.__setitem__(..., ix - 6)),
     [2, 3], kernel=eager_device, rtol=1e-15, topic=TOPIC,
     slack=fma_slack(np.float64, lambda x, y, out, io, ix: {2: np.stack([x * y, 0 * x])}),   # x*y + 1.0 is an fma
     covers=("@cuda.jit('sig', device=True)", "several signatures on a device function"))


def array_device(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = sum_row(a, i) * sign(a[i, 0])


case("device_function_takes_array", "void(float64[:, ::1], float64[::1])",
     lambda r: [rand(r, (m := n_of(r, 200, 800), 13), np.float64), poison(m, np.float64)],
     lambda args: ((args[0].shape[0] + 127) // 128, 128),
     lambda a, out: out.__setitem__(..., a.sum(axis=1) * np.sign(a[:, 0])), [1], kernel=array_device,
     # a row's sum can cancel to near zero: numpy sums pairwise, the kernel in order
     rtol=1e-13, atol=1e-13, topic=TOPIC, covers=("array argument to a device function", "if/elif/return in a device function"))


def eager_kernel_body(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 2 + b


eager_kernel_body.__cudajit_eager__ = ["void(float32[::1], float32, float32[::1])",
                                       "void(float64[::1], float64, float64[::1])"]

case("kernel_eager_signatures_float32", "void(float32[::1], float32, float32[::1])",
     lambda r: [rand(r, n := n_of(r), np.float32), np.float32(r.uniform(-2, 2)), poison(n, np.float32)],
     one_d(128, arg=0), lambda a, b, out: out.__setitem__(..., a * np.float32(2) + b), [2],
     kernel=eager_kernel_body, rtol=1e-6, topic=TOPIC, options={"eager": True},
     covers=("@cuda.jit([sig, sig]) on a kernel (eager, several)",))

case("kernel_eager_signatures_float64", "void(float64[::1], float64, float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), float(r.uniform(-2, 2)), poison(n, np.float64)],
     one_d(128, arg=0), lambda a, b, out: out.__setitem__(..., a * 2 + b), [2],
     kernel=eager_kernel_body, rtol=1e-15, topic=TOPIC, options={"eager": True},
     covers=("@cuda.jit([sig, sig]) on a kernel (eager, several)",))


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)


@cuda.jit(device=True)
def smooth(e0, e1, v):
    t = clamp((v - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def smoothstep_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = smooth(-1.0, 2.0, x[i])


def _smooth_ref(x, out):
    t = np.clip((x - -1.0) / 3.0, 0.0, 1.0)
    out[...] = t * t * (3.0 - 2.0 * t)


case("device_nested_conditional_returns", "void(float32[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float32), poison(n, np.float64)], one_d(128, arg=0),
     lambda x, out: _smooth_ref(x.astype(np.float64), out), [1], kernel=smoothstep_kernel, rtol=1e-12, atol=1e-15,
     topic=TOPIC, covers=("device function result type from float32 arg and float literals",))


@cuda.jit(device=True)
def store_pair(out, i, first, second):
    out[0, i] = first
    out[1, i] = second


def void_device(a, out):
    i = cuda.grid(1)
    if i < a.size:
        store_pair(out, i, a[i], -a[i])


case("device_function_without_return_writes_array", "void(int32[::1], int32[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.int32, -999, 999), poison((2, n), np.int32)], one_d(128, arg=0),
     lambda a, out: (out.__setitem__(0, a), out.__setitem__(1, -a)), [1], kernel=void_device, topic=TOPIC,
     covers=("device function returning None that stores to an array",))
