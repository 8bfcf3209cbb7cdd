"""nvmath.device.random's API (nvmath-python's port of curand_kernel.h) for
cudajit kernels: `from cudajit.mathdx import random` where a numba-cuda
program has `from nvmath.device import random`.

    compiled = random.Compile()
    @cudajit.jit(link=compiled.files, extensions=compiled.extension)
    def setup(states):
        i = cudajit.grid(1)
        random.init(1234, i, 0, states[i])
    ...
    states = random.StatesXORWOW(n)        # or StatesPhilox4_32_10, StatesMRG32k3a
    x = random.uniform(states[i])         # in a kernel

The functions are curand_kernel.h's own, compiled by NVRTC from
mathdx_curand.cu (the toolkit's curand headers) and inlined into the kernel
at link time; each is a foreign device function (docs/language.md, "Foreign
device functions") taking the state record. A state array is an array of
records: a generator tag, then curand's state, so that one name serves every
generator. The quasi-random Sobol generators and MTGP32 need host-side
tables from the curand library and are not here (their names raise
NotImplementedError). cuRANDDx's generators are cudajit.mathdx.Random.
"""
import os

import numpy as np

from . import foreign as _foreign
from .decorators import jit as _jit
from .stubs import Stub as _Stub
from .stubs import vector_types as _vector_types

_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mathdx_curand.cu")
_local_array = _Stub("cudajit.local.array")   # cudajit.local.array, without importing the package here
_V = _vector_types()
_float32x2, _float32x4, _float64x2, _uint32x4 = _V["float32x2"], _V["float32x4"], _V["float64x2"], _V["uint32x4"]


class Compile:
    """nvmath's random.Compile(cc=None): what a kernel using these functions
    is given, `link=compiled.files, extensions=compiled.extension`. The
    functions bring their own link file, so `files` only names it again
    (each file is linked once a kernel) and `extension` (a list of one
    extension) passes arguments through unchanged."""

    def __init__(self, cc=None):
        self.cc = cc
        self.files = [_SHIM]
        self.extension = [_PassThrough()]   # a list, as jit(extensions=...) takes


class _PassThrough:
    """numba's argument-extension protocol, changing nothing (state arrays are
    ordinary device arrays of records)."""

    def prepare_args(self, ty, val, *args, **kwargs):
        return ty, val


# ---- states ------------------------------------------------------------------------

_KINDS = {"XORWOW": (1, 48), "Philox4_32_10": (2, 64), "MRG32k3a": (3, 48)}


def _state_dtype(kind):
    tag, size = _KINDS[kind]
    return np.dtype({"names": ["generator", "state"], "formats": [np.int32, (np.uint8, size)],
                     "offsets": [0, 16], "itemsize": 16 + size, "aligned": True})


def _states(kind, size, stream=0):
    from .devicearray import to_device
    n = int(size)
    if n < 0:
        raise ValueError(f"States{kind}: size must be non-negative, got {size}")
    host = np.zeros(n, _state_dtype(kind))
    host["generator"] = _KINDS[kind][0]
    return to_device(host, stream=stream)


def StatesXORWOW(size, stream=0):
    """A device array of `size` XORWOW states (curandStateXORWOW_t), for random.init."""
    return _states("XORWOW", size, stream)


def StatesPhilox4_32_10(size, stream=0):
    """A device array of `size` Philox4_32_10 states, for random.init."""
    return _states("Philox4_32_10", size, stream)


def StatesMRG32k3a(size, stream=0):
    """A device array of `size` MRG32k3a states, for random.init."""
    return _states("MRG32k3a", size, stream)


def _not_here(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"random.{name}: the Sobol and MTGP32 generators need curand's host-side tables (direction "
            "vectors, scramble constants), which cudajit does not provide; use StatesXORWOW, "
            "StatesPhilox4_32_10 or StatesMRG32k3a, or cuRANDDx's generators (cudajit.mathdx.Random)")
    refuse.__name__ = name
    return refuse


StatesSobol32 = _not_here("StatesSobol32")
StatesScrambledSobol32 = _not_here("StatesScrambledSobol32")
StatesSobol64 = _not_here("StatesSobol64")
StatesScrambledSobol64 = _not_here("StatesScrambledSobol64")
StatesMtgp32 = _not_here("StatesMtgp32")


# ---- the device functions ----------------------------------------------------------

def _declare(name, signature):
    """curand's `name` from the shim (its C symbol cj_curand_<name>)."""
    return _foreign.declare_device("cj_curand_" + name, signature, link=[_SHIM])


# The scalar functions are the declarations themselves, so that a wrong
# argument is a CompileError at the caller's line naming the function.
init = _declare("init", "void(uint64, uint64, uint64, voidptr)")
rand = _declare("rand", "uint32(voidptr)")
uniform = _declare("uniform", "float32(voidptr)")
uniform_double = _declare("uniform_double", "float64(voidptr)")
normal = _declare("normal", "float32(voidptr)")
normal_double = _declare("normal_double", "float64(voidptr)")
log_normal = _declare("log_normal", "float32(voidptr, float32, float32)")
log_normal_double = _declare("log_normal_double", "float64(voidptr, float64, float64)")
poisson = _declare("poisson", "uint32(voidptr, float64)")
skipahead = _declare("skipahead", "void(uint64, voidptr)")
skipahead_sequence = _declare("skipahead_sequence", "void(uint64, voidptr)")
_normal2 = _declare("normal2", "int32(voidptr, CPointer(float32))")
_normal2_double = _declare("normal2_double", "int32(voidptr, CPointer(float64))")
_rand4 = _declare("rand4", "int32(voidptr, CPointer(uint32))")
_uniform4 = _declare("uniform4", "int32(voidptr, CPointer(float32))")
_normal4 = _declare("normal4", "int32(voidptr, CPointer(float32))")
_uniform2_double = _declare("uniform2_double", "int32(voidptr, CPointer(float64))")

_device = _jit(device=True)


@_device
def normal2(state):
    """Two standard normal float32 values (float32x2): curand_normal2."""
    out = _local_array(2, np.float32)
    _normal2(state, out)
    return _float32x2(out[0], out[1])


@_device
def normal2_double(state):
    """Two standard normal float64 values (float64x2): curand_normal2_double."""
    out = _local_array(2, np.float64)
    _normal2_double(state, out)
    return _float64x2(out[0], out[1])


@_device
def rand4(state):
    """Four 32-bit values (uint32x4; Philox4_32_10): curand4."""
    out = _local_array(4, np.uint32)
    _rand4(state, out)
    return _uint32x4(out[0], out[1], out[2], out[3])


@_device
def uniform4(state):
    """Four float32 in (0, 1] (float32x4; Philox4_32_10): curand_uniform4."""
    out = _local_array(4, np.float32)
    _uniform4(state, out)
    return _float32x4(out[0], out[1], out[2], out[3])


@_device
def normal4(state):
    """Four standard normal float32 (float32x4; Philox4_32_10): curand_normal4."""
    out = _local_array(4, np.float32)
    _normal4(state, out)
    return _float32x4(out[0], out[1], out[2], out[3])


@_device
def uniform2_double(state):
    """Two float64 in (0, 1] (float64x2; Philox4_32_10): curand_uniform2_double."""
    out = _local_array(2, np.float64)
    _uniform2_double(state, out)
    return _float64x2(out[0], out[1])
