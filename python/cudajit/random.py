"""numba.cuda.random for cudajit: xoroshiro128+ generators, one per thread.

    from cudajit.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def k(rng_states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(rng_states, i)

    states = create_xoroshiro128p_states(n, seed=1)
    k[blocks, threads](states, out)

The same seed gives numba's numbers bit for bit: the states are built with
numba's algorithm (splitmix64 seeding of the first state, each next state
2**64 steps further by the xoroshiro128+ jump polynomial) and the device
functions are numba's formulas (xoroshiro128+ output, 53-bit uniform
doubles, float32 by rounding them, Box-Muller normals from float32
uniforms). The algorithms are David Blackman's and Sebastiano Vigna's
(xoroshiro128plus.c, splitmix64.c).

One difference: numba's states are a 1-d array of a record dtype
(s0, s1: uint64); cudajit's are a uint64 array of shape (n, 2), row i holding
generator i's (s0, s1). Kernels only pass the array and an index to these
functions, and ``states.shape[0]`` / ``len(states)`` is n in both.

The host side (building states) runs with numpy: the jump is linear over
GF(2), so generator i's state is J**i applied to the first one, computed for
all i at once by doubling (J, J**2, J**4, ... applied to the states made so
far) instead of numba's n * 128 sequential steps.
"""
import math

import numpy as np

from .decorators import jit

__all__ = [
    "xoroshiro128p_dtype", "create_xoroshiro128p_states", "init_xoroshiro128p_states",
    "init_xoroshiro128p_state", "xoroshiro128p_next", "xoroshiro128p_jump",
    "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64",
    "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float64",
    "uint64_to_unit_float32", "uint64_to_unit_float64", "rotl",
]

# numba's record dtype, for reference and for converting numba's state arrays
# (states.view(np.uint64).reshape(-1, 2)); cudajit's states are (n, 2) uint64.
xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_MASK64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)
TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)


# ---------------------------------------------------------------------------
# Device functions (numba's formulas; uint64 throughout, as numba types them)
# ---------------------------------------------------------------------------

@jit(device=True)
def rotl(x, k):
    """Left rotate the uint64 x by k bits (0 < k < 64)."""
    x = np.uint64(x)
    k = np.uint32(k)
    return (x << k) | (x >> np.uint32(64 - k))


@jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    """SplitMix64 of ``seed`` into both words of ``states[index]``."""
    index = np.int64(index)
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint32(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint32(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint32(31))
    states[index, 0] = z
    states[index, 1] = z


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next uint64 of generator ``index``, advancing it."""
    index = np.int64(index)
    s0 = states[index, 0]
    s1 = states[index, 1]
    result = s0 + s1
    s1 ^= s0
    states[index, 0] = rotl(s0, np.uint32(55)) ^ s1 ^ (s1 << np.uint32(14))
    states[index, 1] = rotl(s1, np.uint32(36))
    return result


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advance generator ``index`` by 2**64 steps."""
    index = np.int64(index)
    s0 = np.uint64(0)
    s1 = np.uint64(0)
    for b in range(64):
        if np.uint64(0xBEAC0467EBA5FACB) & (np.uint64(1) << np.uint32(b)):
            s0 ^= states[index, 0]
            s1 ^= states[index, 1]
        xoroshiro128p_next(states, index)
    for b in range(64):
        if np.uint64(0xD86B048B86AA9922) & (np.uint64(1) << np.uint32(b)):
            s0 ^= states[index, 0]
            s1 ^= states[index, 1]
        xoroshiro128p_next(states, index)
    states[index, 0] = s0
    states[index, 1] = s1


@jit(device=True)
def uint64_to_unit_float64(x):
    """The top 53 bits of the uint64 x as a float64 in [0, 1)."""
    x = np.uint64(x)
    return (x >> np.uint32(11)) * (np.float64(1) / (np.uint64(1) << np.uint32(53)))


@jit(device=True)
def uint64_to_unit_float32(x):
    """uint64_to_unit_float64(x) rounded to float32 (numba's; it may round up to 1.0)."""
    x = np.uint64(x)
    return np.float32(uint64_to_unit_float64(x))


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 in [0, 1) from generator ``index``."""
    index = np.int64(index)
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 in [0, 1) from generator ``index``."""
    index = np.int64(index)
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A standard normal float32 (Box-Muller; two steps of generator ``index``)."""
    index = np.int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    z0 = math.sqrt(-np.float32(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT32 * u2)
    return z0


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A standard normal float64: numba's formula, from two float32 uniforms."""
    index = np.int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    z0 = math.sqrt(-np.float64(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT64 * u2)
    return z0


# ---------------------------------------------------------------------------
# Host: the states, as numba builds them
# ---------------------------------------------------------------------------

def _splitmix64(seed):
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _rotl_int(x, k):
    return ((x << k) | (x >> (64 - k))) & _MASK64


def _next_int(s0, s1):
    """One xoroshiro128+ step on Python ints: (output, s0', s1')."""
    result = (s0 + s1) & _MASK64
    s1 ^= s0
    return result, _rotl_int(s0, 55) ^ s1 ^ ((s1 << 14) & _MASK64), _rotl_int(s1, 36)


def _jump_int(s0, s1):
    """numba's xoroshiro128p_jump on Python ints."""
    j0 = j1 = 0
    for word in _JUMP:
        for b in range(64):
            if word >> b & 1:
                j0 ^= s0
                j1 ^= s1
            _, s0, s1 = _next_int(s0, s1)
    return j0, j1


# GF(2) matrices of the 128-bit state (bit r < 64: bit r of s0; else bit
# r - 64 of s1) as uint8 arrays M[row, column]: column j is the image of bit j.

def _to_bits(s0, s1):
    return np.array([(s0 >> r) & 1 for r in range(64)] + [(s1 >> r) & 1 for r in range(64)], np.uint8)


def _matmul(a, b):
    return (a.astype(np.int32) @ b.astype(np.int32) & 1).astype(np.uint8)


_jump_matrix_cache = []


def _jump_matrix():
    if not _jump_matrix_cache:
        cols = [_to_bits(*_jump_int(1 << j if j < 64 else 0, 1 << (j - 64) if j >= 64 else 0))
                for j in range(128)]
        _jump_matrix_cache.append(np.stack(cols, axis=1))
    return _jump_matrix_cache[0]


def _matpow(m, e):
    result = np.eye(128, dtype=np.uint8)
    while e:
        if e & 1:
            result = _matmul(m, result)
        e >>= 1
        if e:
            m = _matmul(m, m)
    return result


def _byte_tables(m):
    """For byte position p of the state and byte value v, the image of v
    placed at p: M @ state is the xor of 16 lookups."""
    weights = (np.uint64(1) << np.arange(64, dtype=np.uint64))
    lo = (m[:64].astype(np.uint64) * weights[:, None]).sum(axis=0, dtype=np.uint64)  # column images, s0 word
    hi = (m[64:].astype(np.uint64) * weights[:, None]).sum(axis=0, dtype=np.uint64)  # s1 word
    values = np.arange(256)
    t0 = np.zeros((16, 256), np.uint64)
    t1 = np.zeros((16, 256), np.uint64)
    for p in range(16):
        for k in range(8):
            has = ((values >> k) & 1).astype(bool)
            t0[p, has] ^= lo[8 * p + k]
            t1[p, has] ^= hi[8 * p + k]
    return t0, t1


def _apply(m, s0, s1):
    t0, t1 = _byte_tables(m)
    out0 = np.zeros_like(s0)
    out1 = np.zeros_like(s1)
    for p in range(16):
        word = s0 if p < 8 else s1
        byte = ((word >> np.uint64(8 * (p % 8))) & np.uint64(0xFF)).astype(np.intp)
        out0 ^= t0[p, byte]
        out1 ^= t1[p, byte]
    return out0, out1


def _host_states(n, seed, subsequence_start=0):
    """numba's init_xoroshiro128p_states_cpu as a (n, 2) uint64 array."""
    n = int(n)
    if n < 0:
        raise ValueError("the number of states must be non-negative")
    states = np.empty((n, 2), np.uint64)
    if n == 0:
        return states
    z = _splitmix64(int(seed) & _MASK64)
    s0, s1 = z, z
    sub = int(subsequence_start) & _MASK64
    jump = _jump_matrix()
    if sub:
        if sub <= 8:
            for _ in range(sub):
                s0, s1 = _jump_int(s0, s1)
        else:
            a, b = _apply(_matpow(jump, sub), np.array([s0], np.uint64), np.array([s1], np.uint64))
            s0, s1 = int(a[0]), int(b[0])
    states[0] = (s0, s1)
    filled, step = 1, jump          # step = J**filled
    while filled < n:
        m = min(filled, n - filled)
        a, b = _apply(step, states[:m, 0].copy(), states[:m, 1].copy())
        states[filled:filled + m, 0] = a
        states[filled:filled + m, 1] = b
        filled += m
        if filled < n:
            step = _matmul(step, step)
    return states


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fills the device array ``states`` (shape (n, 2), uint64) with n
    generators, each 2**64 steps after the previous one; the first one is
    ``subsequence_start`` * 2**64 steps into the sequence of ``seed``."""
    if tuple(states.shape[1:]) != (2,) or np.dtype(states.dtype) != np.uint64:
        raise TypeError("states must be a cudajit.random state array: shape (n, 2), dtype uint64 "
                        "(create_xoroshiro128p_states makes one)")
    states.copy_to_device(_host_states(states.shape[0], seed, subsequence_start), stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of ``n`` generator states for the xoroshiro128p_*
    device functions, initialised as numba.cuda.random does it."""
    from .devicearray import device_array
    states = device_array((int(n), 2), dtype=np.uint64, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
