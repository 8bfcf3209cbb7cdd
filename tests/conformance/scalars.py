"""Scalar types as values: numpy scalar constructors (np.float32(x),
np.int8(x) wrapping, ...), float -> int truncation, bool(), int(), float(),
complex(), scalar kernel arguments of every kind, typed literals.
"""
import numpy as np

from ._registry import build, case, cuda, n_of, one_d, poison, rand, sn  # noqa: F401

TOPIC = "scalars"
G = globals()

CTOR_SRC = '''
def {name}(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = {expr}
'''

# (case name, expression, input dtype, domain, output dtype, numpy reference)
CONSTRUCTORS = (
    ("ctor_float32_of_float64", "np.float32(a[i]) * np.float32(3)", "float64", (-9, 9), "float64",
     lambda a: (a.astype(np.float32) * np.float32(3)).astype(np.float64)),
    ("ctor_float64_of_float32", "np.float64(a[i]) / 3", "float32", (-9, 9), "float64",
     lambda a: a.astype(np.float64) / 3),
    ("ctor_int8_wraps", "np.int8(a[i])", "int64", (-1000, 1000), "int64",
     lambda a: a.astype(np.int8).astype(np.int64)),
    ("ctor_uint8_wraps", "np.uint8(a[i])", "int64", (-1000, 1000), "int64",
     lambda a: a.astype(np.uint8).astype(np.int64)),
    ("ctor_int16_wraps", "np.int16(a[i])", "int64", (-100000, 100000), "int64",
     lambda a: a.astype(np.int16).astype(np.int64)),
    ("ctor_uint32_of_int", "np.uint32(a[i]) + np.uint32(1)", "int64", (0, 1 << 31), "uint32",
     lambda a: (a.astype(np.uint32) + np.uint32(1))),
    ("ctor_int32_of_float_truncates", "np.int32(a[i])", "float64", (-99, 99), "int32",
     lambda a: np.trunc(a).astype(np.int32)),
    # float32 * an int literal is float64 in numba (int64 -> float64; numba's PTX: cvt.f64.f32,
    # mul.f64, cvt.rzi.s64.f64), where numpy keeps float32: the product is exact in float64.
    ("ctor_int64_of_float32", "np.int64(a[i] * 1000)", "float32", (-99, 99), "int64",
     lambda a: np.trunc(a.astype(np.float64) * 1000).astype(np.int64)),
    ("ctor_int_builtin", "int(a[i])", "float64", (-99, 99), "int64", lambda a: np.trunc(a).astype(np.int64)),
    ("ctor_float_builtin", "float(a[i]) / 7", "int32", (-99, 99), "float64", lambda a: a / 7.0),
    ("ctor_bool_builtin", "bool(a[i])", "int32", (-2, 3), "bool", lambda a: a != 0),
    ("ctor_bool_of_float", "bool(a[i]) + 0", "float64", (-1.5, 1.5), "int64",
     lambda a: (a != 0).astype(np.int64)),
    ("ctor_float16", "np.float16(a[i])", "float32", (-60, 60), "float16", lambda a: a.astype(np.float16)),
    ("ctor_float16_to_float32", "np.float32(np.float16(a[i])) * 2", "float64", (-60, 60), "float32",
     lambda a: a.astype(np.float16).astype(np.float32) * 2),
    ("ctor_complex64", "np.complex64(a[i])", "float32", (-9, 9), "complex64", lambda a: a.astype(np.complex64)),
    ("ctor_complex_builtin", "complex(a[i], 2.0) * 1j", "float64", (-9, 9), "complex128",
     lambda a: (a + 2j) * 1j),
    ("ctor_uint64_large", "np.uint64(a[i]) * np.uint64(3)", "int64", (0, 1 << 62), "uint64",
     lambda a: a.astype(np.uint64) * np.uint64(3)),
    ("cast_negative_float_to_uint8_via_int", "np.uint8(np.int64(a[i]))", "float64", (-300, 300), "uint8",
     lambda a: np.trunc(a).astype(np.int64).astype(np.uint8)),
)

for name, expr, in_dt, (lo, hi), out_dt, fn in CONSTRUCTORS:
    k = build(CTOR_SRC.format(name=name, expr=expr), name, G)
    case(name, f"void({sn(in_dt)}[::1], {sn(out_dt)}[::1])",
         (lambda in_dt, lo, hi, out_dt: lambda r: [rand(r, n := n_of(r), in_dt, lo, hi),
                                                   poison(n, out_dt) if out_dt != "bool" else r.random(n) < .5])(
             in_dt, lo, hi, out_dt),
         one_d(256, arg=1), (lambda fn: lambda a, out: out.__setitem__(..., fn(a)))(fn), [1], kernel=k,
         rtol=1e-6 if "float" in out_dt or "complex" in out_dt else 0.0, topic=TOPIC,
         covers=(expr, "numpy scalar constructor"))


def scalar_args(out, a, b, c, d, e, f, g):
    i = cuda.grid(1)
    if i < out.shape[1]:
        out[0, i] = a * i
        out[1, i] = b + i
        out[2, i] = c - i
        out[3, i] = i if d else -i
        out[4, i] = e * i
        out[5, i] = f.real * i + f.imag
        out[6, i] = g + i


def _scalar_args_ref(out, a, b, c, d, e, f, g):
    i = np.arange(out.shape[1], dtype=np.int64)
    out[0] = a * i
    out[1] = b + i
    out[2] = np.float32(c) - i
    out[3] = i if d else -i
    out[4] = e * i
    out[5] = f.real * i + f.imag
    out[6] = g + i


case("scalar_args_every_kind", "void(float64[:, ::1], int32, int64, float32, boolean, uint8, complex128, int16)",
     lambda r: [poison((7, n_of(r)), np.float64), np.int32(r.integers(-99, 99)), int(r.integers(-10**9, 10**9)),
                np.float32(r.uniform(-5, 5)), bool(r.random() < .5), np.uint8(r.integers(1, 255)),
                complex(r.uniform(-3, 3), r.uniform(-3, 3)), np.int16(r.integers(-999, 999))],
     one_d(256, arg=0), _scalar_args_ref, [0], kernel=scalar_args, rtol=1e-6, topic=TOPIC,
     covers=("scalar kernel arguments: int32 int64 float32 bool uint8 complex128 int16",))


def literal_types(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = x * 2          # float32 * int literal -> float64 (numba)
        out[1, i] = x * 2.5        # float32 * float literal -> float64
        out[2, i] = x * np.float32(2.5)
        out[3, i] = 7 // 2 + 7 % 3 + 2 ** 10
        out[4, i] = True + x       # bool + float32 -> float32 (numba)


def _literal_ref(a, out):
    x = a.astype(np.float64)
    out[0] = x * 2
    out[1] = x * 2.5
    out[2] = (a * np.float32(2.5)).astype(np.float64)
    out[3] = 7 // 2 + 7 % 3 + 2 ** 10
    out[4] = (np.float32(1) + a).astype(np.float64)


case("literal_types", "void(float32[::1], float64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.float32), poison((5, n), np.float64)], one_d(256, arg=0),
     _literal_ref, [1], kernel=literal_types, rtol=1e-7, topic=TOPIC,
     covers=("literal typing", "constant folding"))


def bool_arrays(m, x, out):
    i = cuda.grid(1)
    if i < m.size:
        b = m[i]
        out[0, i] = b and x[i] > 0
        out[1, i] = b or x[i] > 0
        out[2, i] = not b
        out[3, i] = b != (x[i] > 0)
        out[4, i] = b & (x[i] < 1)
        out[5, i] = b ^ True


def _bool_ref(m, x, out):
    out[0] = m & (x > 0)
    out[1] = m | (x > 0)
    out[2] = ~m
    out[3] = m != (x > 0)
    out[4] = m & (x < 1)
    out[5] = m ^ True


case("bool_array_logic", "void(boolean[::1], float64[::1], boolean[:, ::1])",
     lambda r: [r.random(n := n_of(r)) < .5, rand(r, n, np.float64), r.random((6, n)) < .5],
     one_d(256, arg=0), _bool_ref, [2], kernel=bool_arrays, topic=TOPIC,
     covers=("bool arrays", "and/or/not on bools", "bool & ^"))


def int_array_dtypes_roundtrip(a8, a16, u16, u64, out):
    i = cuda.grid(1)
    if i < a8.size:
        s = a8[i] + a16[i] + u16[i]
        out[i] = s * 2 + (u64[i] & 0xFF)
        a8[i] += 1
        u16[i] -= 1


def _roundtrip_ref(a8, a16, u16, u64, out):
    s = a8.astype(np.int64) + a16 + u16
    out[...] = s * 2 + (u64 & np.uint64(0xFF)).astype(np.int64)
    a8 += np.int8(1)
    u16 -= np.uint16(1)


case("small_int_arrays_inplace", "void(int8[::1], int16[::1], uint16[::1], uint64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.int8, -127, 127), rand(r, n, np.int16, -999, 999),
                rand(r, n, np.uint16, 1, 60000), rand(r, n, np.uint64, 0, 1 << 62), poison(n, np.int64)],
     one_d(256, arg=0), _roundtrip_ref, [0, 2, 4], kernel=int_array_dtypes_roundtrip, topic=TOPIC,
     covers=("int8/int16/uint16/uint64 arrays", "augmented assignment on array elements (wrapping)"))


def aug_assign_array_elements(f, k, out):
    i = cuda.grid(1)
    if i < f.size:
        f[i] += 1.5
        f[i] *= 2
        f[i] -= k[i]
        f[i] /= 4
        f[i] **= 2
        k[i] //= 3
        k[i] %= 7
        k[i] <<= 2
        k[i] |= 1
        k[i] ^= 8
        out[i, 0] = f[i]
        out[i, 1] += k[i]


def _aug_array_ref(f, k, out):
    f += 1.5
    f *= 2
    f -= k
    f /= 4
    f **= 2
    k //= 3
    k %= 7
    k <<= 2
    k |= 1
    k ^= 8
    out[:, 0] = f
    out[:, 1] += k


case("augmented_assignment_array_elements", "void(float64[::1], int64[::1], float64[:, ::1])",
     lambda r: [rand(r, n := n_of(r), np.float64), rand(r, n, np.int64, -999, 999), rand(r, (n, 2), np.float64)],
     lambda args: ((args[0].size + 127) // 128, 128), _aug_array_ref, [0, 1, 2], kernel=aug_assign_array_elements,
     rtol=1e-14, atol=1e-14, topic=TOPIC,
     covers=("+= *= -= /= **= //= %= <<= |= ^= on array elements", "a[i, j] += on 2-D"))


def complex_scalar_args(z, w, c, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = z[i] * c + w[i] / c


case("complex64_array_complex128_scalar", "void(complex64[::1], complex128[::1], complex128, complex128[::1])",
     lambda r: [rand(r, n := n_of(r), np.complex64), rand(r, n, np.complex128),
                complex(r.uniform(1, 2), r.uniform(1, 2)), poison(n, np.complex128)],
     lambda args: ((args[0].size + 127) // 128, 128),
     lambda z, w, c, out: out.__setitem__(..., z.astype(np.complex128) * c + w / c), [3], kernel=complex_scalar_args,
     rtol=1e-14, atol=1e-14, topic=TOPIC, covers=("complex64 * complex128 -> complex128", "complex kernel argument"))


def float16_inplace(h, s):
    i = cuda.grid(1)
    if i < h.size:
        h[i] = h[i] * h[i] + np.float16(1)
        s[i] = np.float32(h[i]) * 2


case("float16_arrays_and_conversion", "void(float16[::1], float32[::1])",
     lambda r: [rand(r, n := n_of(r), np.float16, -4, 4), poison(n, np.float32)],
     lambda args: ((args[0].size + 127) // 128, 128),
     lambda h, s: (h.__setitem__(..., h * h + np.float16(1)), s.__setitem__(..., h.astype(np.float32) * 2)),
     [0, 1], kernel=float16_inplace, rtol=1e-3, topic=TOPIC,
     covers=("float16 arrays", "np.float16() literal", "float16 -> float32"))


def scalar_views(f, d, bits32, back, bits64):
    i = cuda.grid(1)
    if i < f.size:
        bits32[i] = f[i].view(np.int32)
        back[i] = np.int32(bits32[i] ^ np.int32(-2147483648)).view(np.float32)   # the sign bit flipped: -f
        bits64[i] = d[i].view(np.uint64) >> np.uint64(52)                  # sign and exponent


case("scalar_view_bits", "void(float32[::1], float64[::1], int32[::1], float32[::1], uint64[::1])",
     lambda r: [rand(r, n := n_of(r), np.float32, -1e6, 1e6), rand(r, n, np.float64, -1e300, 1e300),
                poison(n, np.int32), poison(n, np.float32), poison(n, np.uint64)],
     one_d(128, arg=0),
     lambda f, d, b32, back, b64: (b32.__setitem__(..., f.view(np.int32)), back.__setitem__(..., -f),
                                   b64.__setitem__(..., d.view(np.uint64) >> np.uint64(52))),
     [2, 3, 4], kernel=scalar_views, rtol=0, topic=TOPIC,
     covers=("scalar.view(dtype): float32 <-> int32, float64 -> uint64 bits",))
