"""cudajit: numba.cuda-style Python kernels, compiled by a JIT written in C++.

    import cudajit as cuda

    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    axpy[blocks, threads](2.0, x, y)   # x, y: cudajit / CuPy / PyTorch / numpy arrays
"""

import sys as _sys

# The decoder reads CPython bytecode through per-version opcode tables
# (compiler/bytecode/opcodes_3XX.def); on any other version, say so here,
# before the extension loads.
_SUPPORTED_PYTHONS = ((3, 10), (3, 11), (3, 12), (3, 13))
if tuple(_sys.version_info[:2]) not in _SUPPORTED_PYTHONS:
    raise ImportError(
        "cudajit supports CPython 3.10, 3.11, 3.12 and 3.13; this is Python "
        + ".".join(str(part) for part in _sys.version_info[:3])
        + ", whose bytecode it cannot read yet")

from . import _core
from .args import In, InOut, Out
from .decorators import (compile, compile_cubin, compile_for_current_device, compile_ptx,
                         compile_ptx_for_current_device, jit)
from .device import (Context, Device, Event, MemoryInfo, close, current_context, default_stream,
                     require_context,
                     defer_cleanup, detect, event, event_elapsed_time, external_stream,
                     get_current_device, gpus, is_available, is_bfloat16_supported,
                     is_float16_supported, is_fp8_supported, legacy_default_stream,
                     list_devices, per_thread_default_stream, profile_start, profile_stop,
                     profiling, runtime, select_device, stream, synchronize,
                     is_supported_version)
from .devicearray import (DeviceNDArray, as_cuda_array, device_array, device_array_like,
                          from_cuda_array_interface, is_cuda_array, to_device)
from .dispatcher import DeviceFunction, Dispatcher, ForAll
from .ipc import IpcArrayHandle, IpcHandle, open_ipc_array
from .foreign import declare_device
from .memory import (managed_array, mapped, mapped_array, mapped_array_like, pinned,
                     pinned_array, pinned_array_like)
from .errors import (CacheWarning, CompileError, CudaAPIError, CudaSupportError,
                     DeviceOnlyError, ToolchainError)
from .stubs import STUBS as _STUBS

Stream = _core.Stream

__version__ = "0.1.0"
_core._set_package_version(__version__)   # part of the disk cache's keys

# The decoder freezes a global that is this module to the symbol "cudajit",
# so `cuda.threadIdx.x` folds to "cudajit.threadIdx.x".
_cudajit_symbol_ = "cudajit"

grid = _STUBS["grid"]
libdevice = _STUBS["libdevice"]   # numba.cuda.libdevice: every libdevice function by name
gridsize = _STUBS["gridsize"]
threadIdx = _STUBS["threadIdx"]
blockIdx = _STUBS["blockIdx"]
blockDim = _STUBS["blockDim"]
gridDim = _STUBS["gridDim"]
laneid = _STUBS["laneid"]
warpsize = _STUBS["warpsize"]
syncthreads = _STUBS["syncthreads"]
threadfence = _STUBS["threadfence"]
threadfence_block = _STUBS["threadfence_block"]
shared = _STUBS["shared"]
local = _STUBS["local"]
const = _STUBS["const"]
atomic = _STUBS["atomic"]
block = _STUBS["block"]   # cooperative block algorithms (CUB): docs/block_algorithms.md
warp = _STUBS["warp"]     # cooperative warp algorithms (CUB)
fp16 = _STUBS["fp16"]     # half-precision functions (numba.cuda's cuda.fp16)
bf16 = _STUBS["bf16"]     # the same on bfloat16 (numba.cuda's cuda.bf16)
cg = _STUBS["cg"]         # cooperative groups: cg.this_grid().sync() (numba.cuda's cuda.cg)
# Issue 5: warp, vote, bit and barrier functions (stubs.py's _FUNCTIONS).
from .stubs import _FUNCTIONS as _INTRINSIC_FUNCTIONS
globals().update({_name: _STUBS[_name] for _name, _doc in _INTRINSIC_FUNCTIONS})
# numba.cuda's vector types (cudajit.float32x4, cudajit.float4, ...): typeinfer/vector_types.def
from .stubs import vector_types as _vector_types
globals().update(_vector_types())

# Scalar types, as numba.cuda exports them (numpy's types: the decoder
# freezes them to numpy.float32, ...), usable as dtypes and casts in kernels.
# Looked up on first use, so that `import cudajit` does not import numpy.
_SCALAR_TYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128")


_UFUNC_NAMES = ("vectorize", "guvectorize", "reduce", "Reduce", "CUDAUFunc", "CUDAGUFunc")


def __getattr__(name):
    # numba.cuda.random's generators (imports numpy), MathDx (libmathdx is
    # optional: found only when used): loaded on first use.
    if name in ("random", "mathdx", "launchconfig"):
        import importlib
        return importlib.import_module("." + name, __name__)
    # GPU ufuncs and reductions (python/cudajit/ufunc.py imports numpy).
    if name in _UFUNC_NAMES:
        from . import ufunc
        value = getattr(ufunc, name)
        globals()[name] = value
        return value
    if name in _SCALAR_TYPES:
        import numpy
        value = getattr(numpy, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cudajit' has no attribute {name!r}")

__all__ = [
    "jit", "compile", "compile_ptx", "compile_cubin", "compile_for_current_device",
    "compile_ptx_for_current_device", "Dispatcher", "DeviceFunction", "declare_device",
    "grid", "gridsize", "threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize",
    "syncthreads", "threadfence", "threadfence_block", "shared", "local", "const", "atomic",
    "block", "warp", "fp16", "libdevice", "cg", "vectorize", "guvectorize", "reduce", "Reduce",
    "to_device", "device_array", "device_array_like", "DeviceNDArray", "is_cuda_array",
    "as_cuda_array", "from_cuda_array_interface",
    "pinned_array", "pinned_array_like", "mapped_array", "mapped_array_like", "managed_array",
    "pinned", "mapped",
    "synchronize", "is_available", "detect", "select_device", "get_current_device",
    "list_devices", "gpus", "Device", "Context", "MemoryInfo", "current_context", "close",
    "stream", "default_stream", "legacy_default_stream",
    "per_thread_default_stream", "external_stream", "Stream", "event", "event_elapsed_time",
    "Event", "profile_start", "profile_stop", "profiling", "defer_cleanup",
    "is_float16_supported", "is_bfloat16_supported", "is_fp8_supported", "ForAll",
    "In", "Out", "InOut", "runtime", "is_supported_version",
    "open_ipc_array", "IpcArrayHandle", "IpcHandle", "require_context",
    "CompileError", "ToolchainError", "CudaSupportError", "CudaAPIError", "DeviceOnlyError",
    "CacheWarning",
    *_SCALAR_TYPES,
    "__version__",
    *[_name for _name, _doc in _INTRINSIC_FUNCTIONS],
]
