"""MathDx device routines (cuBLASDx GEMM, cuFFTDx FFT) through NVIDIA's
libmathdx, under the names of nvmath.device.

    from cudajit import mathdx
    mm = mathdx.matmul(size=(32, 32, 32), precision=numpy.float32, data_type="real",
                       arrangement=("row_major", "col_major", "col_major"),
                       block_dim=(128, 1, 1), execution="Block", sm=90)
    mm.shared_memory_size, mm.block_dim, mm.leading_dimension, mm.a_value_type
    mm.symbol, mm.ltoir          # the extern "C" entry point and its LTO-IR
    f = mathdx.FFT(size=128, precision=numpy.float32, fft_type="c2c", direction="forward",
                   execution="Block", elements_per_thread=8, ffts_per_block=2, sm=90)
    f.block_dim, f.storage_size, f.stride, f.shared_memory_size, f.value_type

Both are called inside @cudajit.jit kernels (MM.execute(...), f.execute(...),
docs/mathdx.md). libmathdx is optional: `import cudajit` works without it,
and building a routine raises ImportError naming the pip package
(nvidia-libmathdx-cu13, or the extra cudajit[mathdx]).
"""

import collections
import functools
import os
import pickle
import subprocess
import sys
import weakref

import numpy as np

from . import _core
from .errors import CompileError, DeviceOnlyError
from .stubs import Stub

__all__ = ["Matmul", "matmul", "FFT", "fft", "Random", "Dim3", "LeadingDimension", "Arrangement", "TransposeMode",
           "Alignment", "Precision", "library", "ComputeCapability", "CodeType", "current_device_sm",
           "current_device_lto", "get_current_device_cc", "complex32", "complex64", "complex128",
           "float16x2", "float16x4", "float32x2", "float32x4", "float64x2", "float64x4",
           "float16x2_type", "float16x4_type", "float32x2_type", "float64x2_type",
           "Layout", "MAX_ALIGNMENT", "make_tensor", "copy", "copy_fragment", "clear", "copy_wait", "axpby",
           "make_fragment_like", "DevicePipeline", "TilePipeline", "pipeline_extensions", "SharedStorageCalc"]

# A cache miss is instantiated by libmathdx in a fresh Python process
# (compiler/mathdx/mathdx.h says why: in a process that has built a C++
# locale before, libmathdx 0.4.1 fails with "An internal error occurred").
# The child gets the spec on stdin and answers with the serialized result or
# the exception it met, pickled.
_CHILD = r"""
import pickle, sys
from cudajit import _core
from cudajit.errors import CompileError
spec = pickle.load(sys.stdin.buffer)
try:
    if isinstance(spec, tuple):   # ("fft_knobs", spec, knobs): FFT.valid's query
        answer = ("ok", _core.mathdx_fft_knobs(spec[1], list(spec[2])))
    else:
        answer = ("ok", _core.mathdx_compile_serialized(spec))
except CompileError as e:
    answer = ("CompileError", str(e), e.file, e.line, e.col, e.construct, e.message, e.hint)
except ImportError as e:
    answer = ("ImportError", str(e))
except Exception as e:
    answer = ("RuntimeError", f"{type(e).__name__}: {e}")
sys.stdout.buffer.write(pickle.dumps(answer))
"""


def _instantiate_elsewhere(spec):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)   # the same cudajit and wheels
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps(spec), env=env,
                          capture_output=True)
    try:
        kind, *rest = pickle.loads(proc.stdout)
    except Exception:
        raise RuntimeError("cudajit.mathdx: the libmathdx process ended without an answer "
                           f"(exit status {proc.returncode}):\n"
                           + proc.stderr.decode(errors="replace")[-2000:]) from None
    if kind == "ok":
        return rest[0]
    if kind == "CompileError":
        raise CompileError(*rest)
    if kind == "ImportError":
        raise ImportError(rest[0])
    raise RuntimeError(rest[0])


@functools.lru_cache(maxsize=None)
def _fft_knobs(spec_items, knobs):
    """FFT.valid's answer for a spec (its items, hashable) and knobs."""
    _core.mathdx_library()   # ImportError here, without libmathdx
    return tuple(tuple(int(v) for v in combo) for combo in
                 _instantiate_elsewhere(("fft_knobs", dict(spec_items), knobs)))


def _instantiate(spec):
    """The descriptor's result from the memory or disk cache, else from libmathdx."""
    if spec.get("routine") == "fft":
        return _core.mathdx_fft(spec, _instantiate_elsewhere)
    if spec.get("routine") == "random":
        return _core.mathdx_random(spec, _instantiate_elsewhere)
    return _core.mathdx_matmul(spec, _instantiate_elsewhere)


Dim3 = collections.namedtuple("Dim3", "x y z", defaults=(1, 1))
LeadingDimension = collections.namedtuple("LeadingDimension", "a b c")
Arrangement = collections.namedtuple("Arrangement", "a b c")
TransposeMode = collections.namedtuple("TransposeMode", "a b")
Alignment = collections.namedtuple("Alignment", "a b c")
Precision = collections.namedtuple("Precision", "a b c")


# --- nvmath.device's helpers (common_cuda, types, vector types), so that a kernel
# written for nvmath.device imports them from cudajit.mathdx unchanged -----------------

class ComputeCapability(collections.namedtuple("ComputeCapability", "major minor arch", defaults=("",))):
    """A GPU's compute capability as nvmath.device names it: ``major``,
    ``minor``, ``arch`` ('' or 'a' / 'f'), ``integer`` (900 for 9.0)."""
    __slots__ = ()

    @property
    def integer(self):
        return self.major * 100 + self.minor * 10

    def __str__(self):
        return f"{self.major}.{self.minor}{self.arch}"

    # nvmath.device takes sm=90 for 9.0: such an int compares equal too
    def __eq__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return self.major * 10 + self.minor == other
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__


CodeType = collections.namedtuple("CodeType", "kind cc")


def get_current_device_cc():
    """The current GPU's ComputeCapability (nvmath.device.common_cuda's): 'a'
    from 9.0 on, as nvmath gives it; every routine here accepts it as sm=."""
    from . import device
    major, minor = device.get_current_device().compute_capability
    return ComputeCapability(major, minor, "a" if (major, minor) >= (9, 0) else "")


current_device_sm = get_current_device_cc


def current_device_lto():
    """nvmath.device's CodeType('lto', <the current GPU's capability>)."""
    return CodeType("lto", get_current_device_cc())


# Value types as the traits spell them (FFT.value_type == complex64 holds).
complex32, complex64, complex128 = "complex32", "complex64", "complex128"

# cudajit's vector types (docs/numba_parity.md), under nvmath.device's names.
def _vector(name):
    from .stubs import vector_types
    return vector_types()[name]


float16x2, float16x4, float32x2, float32x4, float64x2, float64x4 = (
    _vector(n) for n in ("float16x2", "float16x4", "float32x2", "float32x4", "float64x2", "float64x4"))

# nvmath.device's numba types of its vectors (`thread_data.view(float16x2_type)`,
# a dtype= of local / shared arrays): in cudajit the vector types themselves,
# which dtype= and .view() take. A half-precision routine's value type is
# one of them inside kernels: Matmul's 'complex32' is float16x2 (re, im),
# FFT's 'complex32x2' is float16x4 (re0, re1, im0, im1: two FFTs' values).
float16x2_type, float16x4_type, float32x2_type, float64x2_type = float16x2, float16x4, float32x2, float64x2

# Precisions numpy has no dtype for, spelled as libmathdx's tables do.
_EXTRA_PRECISIONS = ("bfloat16", "tfloat32")


def library():
    """'libmathdx X.Y.Z at <path>'; ImportError when it cannot be loaded."""
    return _core.mathdx_library()


def _reject_foreign(value, what):
    module = type(value).__module__ or ""
    if module.split(".")[0] == "nvmath":
        raise TypeError(
            f"{what}: nvmath-python objects ({type(value).__name__}) are not accepted by cudajit "
            "yet; build the routine with cudajit.mathdx.Matmul / matmul, which take nvmath.device's "
            "parameters (size, precision, data_type, arrangement, block_dim, ...)")


def _precision_name(p):
    if isinstance(p, str) and p in _EXTRA_PRECISIONS:
        return p
    import numpy
    try:
        return numpy.dtype(p).name
    except TypeError:
        raise ValueError(f"precision: {p!r} is not a numpy dtype") from None


def _precisions(precision):
    if isinstance(precision, (list, tuple)):
        if len(precision) != 3:
            raise ValueError("precision is one dtype or three (A, B, C)")
        return tuple(_precision_name(p) for p in precision)
    return (_precision_name(precision),) * 3


def _triple(value, what, fields="abc"):
    """A (a, b, c)-like value: a sequence or an object with .a .b .c."""
    if value is None:
        return None
    if all(hasattr(value, f) for f in fields) and not isinstance(value, (list, tuple)):
        value = tuple(getattr(value, f) for f in fields)
    value = tuple(value)
    if len(value) != len(fields):
        raise ValueError(f"{what} has {len(fields)} entries ({', '.join(fields)})")
    return value


def _sm(sm, code_type):
    """The target as 80 / 90 from nvmath.device's sm or code_type."""
    if sm is None and code_type is not None:
        if isinstance(code_type, (tuple, list)):
            kind, sm = code_type
        else:
            kind, sm = getattr(code_type, "kind", "lto"), getattr(code_type, "cc")
        if str(kind).lower() != "lto":
            raise ValueError(f"code_type: only 'lto' code is produced, not {kind!r}")
    if sm is None:
        try:
            from . import device
            sm = device.get_current_device().compute_capability
        except Exception as exc:
            raise ValueError("a MathDx routine needs sm= (e.g. 90 or (9, 0)) or code_type= when no GPU "
                             f"is usable ({exc})") from None
    if isinstance(sm, str):
        sm = int(sm.lower().removeprefix("sm_").rstrip("a"))
    elif hasattr(sm, "major"):
        sm = sm.major * 10 + sm.minor
    elif isinstance(sm, (tuple, list)):
        sm = sm[0] * 10 + sm[1]
    return int(sm)


def _block_dim(block_size, block_dim):
    if block_size not in (None, "suggested") and block_dim not in (None, "suggested"):
        raise ValueError("block_size and block_dim cannot both be given")
    if block_size not in (None, "suggested"):
        return (int(block_size), 1, 1)
    if block_dim in (None, "suggested"):
        return None   # libmathdx's suggested block dim
    if isinstance(block_dim, int):
        return (block_dim, 1, 1)
    dims = tuple(int(d) for d in (block_dim if isinstance(block_dim, (list, tuple))
                                  else (block_dim.x, block_dim.y, block_dim.z)))
    return dims + (1,) * (3 - len(dims))


class _Routine:
    """What every descriptor shares: its spec (the dict the core takes), the
    result the core served for it, its target, and pickling as the spec
    (the receiving process instantiates it again: its memory or disk cache,
    else libmathdx; a kernel shipped to a Dask worker by value carries the
    routines it calls)."""

    # What the object is built from: the whole instantiation, or (a Matmul)
    # its traits alone, the code coming when a kernel links it or `ltoir` is read.
    _served = staticmethod(lambda spec: spec)

    def _set(self, spec):
        self._spec = spec
        self._r = _instantiate(self._served(spec))
        # as nvmath.device's: a ComputeCapability, and CodeType('lto', it)
        self.sm = ComputeCapability(*divmod(spec["sm"], 10))
        self.code_type = CodeType("lto", self.sm)

    def __reduce__(self):
        return (_rebuild_routine, (type(self), self._spec))

    # numba-cuda kernels say @cuda.jit(link=R.files): cudajit links the
    # routine itself, so there is nothing to add.
    files = property(lambda self: [])

    def _code(self):
        """The result with the LTO-IR (kept apart: the kernel-side key stays the traits')."""
        if self._r["ltoir"]:
            return self._r
        if "_with_code" not in self.__dict__:
            self._with_code = _instantiate(dict(self._spec, code=True))
        return self._with_code

    @property
    def ltoir(self):
        """The routine's LTO-IR (bytes); `ltoirs` when there are several modules."""
        modules = self._code()["ltoir"]
        if isinstance(modules, bytes):
            return modules
        if len(modules) != 1:
            raise ValueError(f"this routine has {len(modules)} LTO-IR modules: use .ltoirs")
        return modules[0]

    @property
    def _cudajit_symbol_(self):
        """The symbol the kernel decoder freezes this object to: the descriptor's
        key, which type inference resolves (compiler/typeinfer/rules_mathdx.cpp)."""
        return f"cudajit.mathdx.{self._kind}." + self._r["key"]


def _rebuild_routine(cls, spec):
    obj = cls.__new__(cls)
    obj._set(spec)
    return obj


class Matmul(_Routine):
    """A block-wide GEMM C = alpha * A @ B + beta * C on shared-memory tiles
    (cuBLASDx), instantiated through libmathdx. Parameters as
    nvmath.device.Matmul; traits as its attributes, plus `symbol` (the
    extern "C" function: void(alpha*, a*, b*, beta*, c*), all shared-memory
    pointers but alpha/beta) and `ltoir` (its LTO-IR; `ltoirs` when there
    are several modules)."""

    _kind = "matmul"   # the symbols kernels see: cudajit.mathdx.matmul.<key>
    _served = staticmethod(lambda spec: dict(spec, code=False))

    def __init__(self, size, precision=None, data_type="real", *, sm=None, block_size=None,
                 block_dim=None, leading_dimension=None, transpose_mode=None, arrangement=None,
                 alignment=None, function="MM", static_block_dim=False, execution="Block",
                 with_pipeline=False, enable_input_streaming=False, code_type=None, compiler=None,
                 execute_api=None, tensor_types=None, global_memory_alignment=None):
        _reject_foreign(size, "Matmul")
        if execute_api not in (None, "static_leading_dimensions", "dynamic_leading_dimensions"):
            raise NotImplementedError(f"Matmul: execute_api={execute_api!r} (only the shared-memory "
                                      "pointer API, with static or dynamic leading dimensions, so far)")
        if tensor_types is not None or global_memory_alignment is not None:
            raise NotImplementedError("Matmul: tensor_types and global_memory_alignment are not supported "
                                      "by cudajit.mathdx yet; the layouts (MM.suggest_layout_smem_a(), ...) "
                                      "with make_tensor, copy and MM.execute(a, b, c) are")
        if compiler not in (None, "numba", "cudajit"):
            raise ValueError(f"compiler: {compiler!r}")
        if precision is None:
            raise TypeError("Matmul needs precision")
        if arrangement is not None and transpose_mode is not None:
            raise ValueError("arrangement and transpose_mode cannot both be given")
        size = tuple(int(s) for s in size)
        if len(size) != 3:
            raise ValueError("size is (m, n, k)")
        spec = {
            "size": size,
            "precision": _precisions(precision),
            "data_type": data_type,
            "function": function,
            "execution": execution,
            "sm": _sm(sm, code_type),
            "block_dim": _block_dim(block_size, block_dim),
            "arrangement": _triple(arrangement, "arrangement"),
            "transpose_mode": _triple(transpose_mode, "transpose_mode", "ab"),
            "alignment": _triple(alignment, "alignment"),
            # None: static leading dimensions, and in kernels the runtime ones too
            # (MM.execute(alpha, a, lda, b, ldb, beta, c, ldc) instantiates that
            # sibling at compile time)
            "api": "dynamic_ld" if execute_api == "dynamic_leading_dimensions" else None,
        }
        if with_pipeline or enable_input_streaming:   # (absent otherwise: the keys of older caches stay)
            spec["with_pipeline"] = bool(with_pipeline)
            spec["input_streaming"] = bool(enable_input_streaming)
        if static_block_dim:   # (likewise)
            spec["static_block_dim"] = True
        if leading_dimension == "suggested":
            leading_dimension = _instantiate(self._served(spec))["suggested_leading_dimension"]
        spec["leading_dimension"] = _triple(leading_dimension, "leading_dimension")
        self._set(spec)

    def _set(self, spec):
        super()._set(spec)
        self.function = spec["function"]
        self.execution = spec["execution"]
        self.data_type = spec["data_type"]

    # --- the descriptor, as libmathdx completed it ------------------------------
    size = property(lambda self: self._r["size"])
    precision = property(lambda self: Precision(*self._spec["precision"]))
    block_dim = property(lambda self: Dim3(*self._r["block_dim"]))
    block_size = property(lambda self: self._r["max_threads_per_block"])
    max_threads_per_block = property(lambda self: self._r["max_threads_per_block"])
    leading_dimension = property(lambda self: LeadingDimension(*self._r["leading_dimension"]))
    # None for a descriptor made with the older transpose_mode, as nvmath's
    # (its layout is then the transpose modes'; the arrangement libmathdx
    # derives for it stays internal)
    arrangement = property(lambda self: None if self._spec["transpose_mode"]
                           else Arrangement(*self._r["arrangement"]))
    transpose_mode = property(lambda self: (TransposeMode(*self._spec["transpose_mode"])
                                            if self._spec["transpose_mode"] else None))
    alignment = property(lambda self: Alignment(*self._r["alignment"]))
    suggested_block_dim = property(lambda self: Dim3(*self._r["suggested_block_dim"]))
    suggested_leading_dimension = property(
        lambda self: LeadingDimension(*self._r["suggested_leading_dimension"]))

    # --- per matrix: value types (numpy names), logical shapes, storage ---------
    a_value_type = property(lambda self: self._r["value_type"][0])
    b_value_type = property(lambda self: self._r["value_type"][1])
    c_value_type = property(lambda self: self._r["value_type"][2])
    # Shapes as nvmath.device gives them: logical (m, k), (k, n), (m, n); with
    # the older transpose_mode, A's and B's as stored, reversed where transposed.
    a_dim = property(lambda self: self._transposed(0, (self.size[0], self.size[2])))
    b_dim = property(lambda self: self._transposed(1, (self.size[2], self.size[1])))
    c_dim = property(lambda self: (self.size[0], self.size[1]))

    def _transposed(self, i, dims):
        mode = self._spec["transpose_mode"]
        return dims[::-1] if mode and mode[i] in ("transposed", "conj_transposed") else dims
    lda = property(lambda self: self.leading_dimension.a)
    ldb = property(lambda self: self.leading_dimension.b)
    ldc = property(lambda self: self.leading_dimension.c)

    def _stored(self, i, dims, ld=None):
        rows, cols = dims
        ld = self.leading_dimension[i] if ld is None else ld
        if self._spec["transpose_mode"]:   # dims as stored, column-major
            return ld * cols
        return ld * (rows if self._r["arrangement"][i] == "row_major" else cols)

    a_size = property(lambda self: self._stored(0, self.a_dim))
    b_size = property(lambda self: self._stored(1, self.b_dim))
    c_size = property(lambda self: self._stored(2, self.c_dim))

    # --- what a kernel needs ------------------------------------------------------
    shared_memory_size = property(lambda self: self._r["shared_memory_size"])
    symbol = property(lambda self: self._r["symbol"])
    ltoirs = property(lambda self: list(self._code()["ltoir"]))

    # --- inside kernels ------------------------------------------------------------

    def execute(self, *args):
        """C = alpha * A @ B + beta * C by the whole block, inside a kernel
        launched with block_dim threads: execute(alpha, a, b, beta, c), a, b, c
        in shared (or any) memory, laid out as the arrangement and leading
        dimensions say; or execute(alpha, a, lda, b, ldb, beta, c, ldc) with
        leading dimensions given at run time (cuBLASDx's dynamic-LD API)."""
        raise DeviceOnlyError("Matmul.execute can only be called inside a @cudajit.jit kernel")

    __call__ = execute   # nvmath.device's older spelling, MM(alpha, a, b, beta, c)

    def get_shared_storage_size(self, *args):
        """Bytes of shared memory for A, B and C, one after the other, each at
        its alignment: at the descriptor's leading dimensions, at the runtime
        ones given, get_shared_storage_size(lda, ldb, ldc), or for three layouts."""
        return self.shared_memory_size if not args else self._storage(args, 3)

    # --- cuBLASDx's tensor API: layouts for make_tensor ----------------------------

    def get_layout_gmem_a(self, leading_dimension=None):
        return Layout(self, "gmem_a", leading_dimension=leading_dimension)

    def get_layout_gmem_b(self, leading_dimension=None):
        return Layout(self, "gmem_b", leading_dimension=leading_dimension)

    def get_layout_gmem_c(self, leading_dimension=None):
        return Layout(self, "gmem_c", leading_dimension=leading_dimension)

    get_layout_smem_a = lambda self: Layout(self, "smem_a")   # noqa: E731
    get_layout_smem_b = lambda self: Layout(self, "smem_b")   # noqa: E731
    get_layout_smem_c = lambda self: Layout(self, "smem_c")   # noqa: E731
    suggest_layout_smem_a = lambda self: Layout(self, "suggested_smem_a")   # noqa: E731
    suggest_layout_smem_b = lambda self: Layout(self, "suggested_smem_b")   # noqa: E731
    suggest_layout_smem_c = lambda self: Layout(self, "suggested_smem_c")   # noqa: E731
    suggest_layout_rmem_c = lambda self: Layout(self, "suggested_rmem_c")   # noqa: E731
    get_layout_rmem_c = lambda self: Layout(self, "rmem_c")   # noqa: E731

    def suggest_accumulator(self):
        """Inside kernels: a new accumulator of C (cuBLASDx's suggest_accumulator())."""
        raise DeviceOnlyError("Matmul.suggest_accumulator can only be called inside a @cudajit.jit kernel")

    def get_accumulator(self):
        """Inside kernels: a new accumulator of C in get_layout_rmem_c's partition."""
        raise DeviceOnlyError("Matmul.get_accumulator can only be called inside a @cudajit.jit kernel")

    with_pipeline = property(lambda self: bool(self._spec.get("with_pipeline")))
    enable_input_streaming = property(lambda self: bool(self._spec.get("input_streaming")))
    # cuBLASDx's StaticBlockDim: kernels calling it launch exactly block_dim threads
    static_block_dim = property(lambda self: bool(self._spec.get("static_block_dim")))

    def suggest_device_pipeline(self, pipeline_depth, a, b):
        """A DevicePipeline over the global matrices a and b (device arrays),
        as nvmath.device's: the kernel argument whose get_tile() gives each
        block its tile pipeline."""
        return DevicePipeline(self, pipeline_depth, a, b)

    def _tensor_traits(self, tensor, like=""):
        """libmathdx's traits of one of this GEMM's tensors (one query for all of them)."""
        cache = self.__dict__.setdefault("_tensor_cache", {})
        if like not in cache:
            spec = {k: v for k, v in self._spec.items() if k != "routine"}
            r = _core.mathdx_tensor_function({"routine": "tensor_function", "matmul": spec, "function": "traits",
                                              "tensors": [(t, like) for t in _TENSOR_TYPES], "alignment": 0},
                                             _instantiate_elsewhere)
            cache[like] = dict(zip(_TENSOR_TYPES, r["tensors"]))
        return cache[like][tensor]

    def get_shared_storage_size_ab(self, *args):
        """Bytes of shared memory for A and B, each at its alignment: at the
        descriptor's leading dimensions, at (lda, ldb), or for two layouts."""
        return self._storage(args, 2)

    def _storage(self, args, count):
        """The first `count` of A, B, C one after the other, each at its
        alignment: at the leading dimensions in args (the descriptor's when
        none), or for the layouts in args."""
        if len(args) not in (0, count):
            raise ValueError(f"takes 0 or {count} arguments (leading dimensions or layouts), got {len(args)}")
        if args and all(isinstance(a, Layout) for a in args):
            sizes = [a.cosize * a._itemsize for a in args]
        elif all(isinstance(a, (int, np.integer)) for a in args):
            lds = list(args) or list(self.leading_dimension[:count])
            sizes = [self._stored(i, dims, int(ld)) * int(self._r["value_size"][i])
                     for i, (dims, ld) in enumerate(zip((self.a_dim, self.b_dim, self.c_dim), lds))]
        else:
            raise ValueError("the arguments are all leading dimensions or all layouts")
        offset = 0
        for size, align in zip(sizes, self.alignment):
            align = max(int(align), 1)
            offset = (offset + align - 1) // align * align + size
        return offset

    def __repr__(self):
        return f"cudajit.mathdx.Matmul({self._r['spec']})"


def _device_view(x):
    """(shape, strides in elements, dtype) of a device array (cudajit, CuPy,
    PyTorch, or anything with __cuda_array_interface__)."""
    from .devicearray import DeviceNDArray, as_cuda_array
    arr = x if isinstance(x, DeviceNDArray) else as_cuda_array(x)
    strides = tuple(int(st) // arr.dtype.itemsize for st in arr.strides)
    return tuple(int(n) for n in arr.shape), strides, arr.dtype


class DevicePipeline:
    """cuBLASDx's device pipeline (nvmath.device.DevicePipeline): made on the
    host for a Matmul built with_pipeline=True and the global A and B it
    streams (their shapes and strides are part of it; the kernel is compiled
    for them), passed to a kernel as an argument. Inside the kernel,
    get_tile(smem, idx, idy) gives a block its TilePipeline over tile (idx,
    idy) and reset_tile(tile, idx, idy) moves it; launch with block_dim
    threads and buffer_size bytes of dynamic shared memory aligned at
    buffer_alignment."""

    def __init__(self, mm, pipeline_depth, a, b):
        if not isinstance(mm, Matmul):
            raise TypeError(f"DevicePipeline needs a cudajit.mathdx.Matmul, got {type(mm).__name__}")
        if not mm.with_pipeline:
            raise ValueError("DevicePipeline needs a Matmul built with with_pipeline=True")
        pipeline_depth = int(pipeline_depth)
        if pipeline_depth < 1:
            raise ValueError(f"pipeline_depth must be at least 1, got {pipeline_depth}")
        self.mm = mm
        self.pipeline_depth = pipeline_depth
        (a_shape, a_strides, a_dtype), (b_shape, b_strides, b_dtype) = _device_view(a), _device_view(b)
        for name, dt, want in (("a", a_dtype, mm.a_value_type), ("b", b_dtype, mm.b_value_type)):
            if np.dtype(dt) != np.dtype(want):
                raise TypeError(f"DevicePipeline: {name} holds {np.dtype(dt).name}, the Matmul's {name.upper()} is "
                                f"{np.dtype(want).name}")
        self.a_strides, self.b_strides = a_strides, b_strides
        self._shapes = (a_shape, b_shape)
        spec = {k: v for k, v in mm._served(mm._spec).items() if k != "routine"}
        r = _core.mathdx_tensor_function(
            {"routine": "tensor_function", "matmul": spec, "function": "traits", "tensors": [], "alignment": 0,
             "pipeline": {"depth": pipeline_depth, "a_shape": list(a_shape), "a_stride": list(a_strides),
                          "b_shape": list(b_shape), "b_stride": list(b_strides)},
             "pipelines": ""},
            _instantiate_elsewhere)
        self._key = r["key"]
        self._traits = r["device_pipeline"]
        self._tile_traits = r["tile_pipeline"]
        from .devicearray import device_array
        # The pipeline's state (TMA descriptors of a and b, made by its
        # create function in a one-thread kernel; a and b must outlive it).
        self._storage = device_array(max(1, self._traits["storage_bytes"]), np.uint8)
        self._operands = (a, b)
        init, destroy = _pipeline_kernels()
        init[1, 1](self, a, b)
        from . import synchronize
        synchronize()
        self._finalizer = weakref.finalize(self, _destroy_pipeline, destroy, self._arg(), self._storage)
        self._finalizer.atexit = False   # at exit the context goes, and the state with it

    def _arg(self):
        return (f"cudajit.mathdx.pipeline.{self._key}", int(self._storage.__cuda_array_interface__["data"][0]))

    # A kernel argument: a compile-time symbol naming the pipeline and its state's address.
    _cudajit_arg_ = property(_arg)
    # numba's typeof(obj) (nvmath's examples type their arguments so): cudajit's signatures read it back.
    _numba_type_ = property(lambda self: self)

    buffer_size = property(lambda self: self._traits["buffer_size"])
    buffer_alignment = property(lambda self: self._traits["buffer_alignment"])
    storage_bytes = property(lambda self: self._traits["storage_bytes"])
    storage_alignment = property(lambda self: self._traits["storage_alignment"])
    block_dim = property(lambda self: Dim3(*self._traits["block_dim"]))

    def get_tile(self, smem, blockIdx_x, blockIdx_y):
        raise DeviceOnlyError("DevicePipeline.get_tile can only be called inside a @cudajit.jit kernel")

    def reset_tile(self, tile_pipeline, idx, idy):
        raise DeviceOnlyError("DevicePipeline.reset_tile can only be called inside a @cudajit.jit kernel")

    def __str__(self):
        return f"cudajit.mathdx.pipeline.{self._key}"

    def __repr__(self):
        return (f"DevicePipeline(depth={self.pipeline_depth}, a={self._shapes[0]}, b={self._shapes[1]}, "
                f"mm={self.mm!r})")


class _PipelineRecord:
    """What the destroy kernel is launched with once the pipeline is gone."""

    def __init__(self, arg):
        self._arg = arg

    _cudajit_arg_ = property(lambda self: self._arg)


def _destroy_pipeline(destroy, arg, storage):
    try:
        destroy[1, 1](_PipelineRecord(arg))
    except Exception:   # the context may be gone at interpreter exit; the storage goes with it
        pass


@functools.lru_cache(maxsize=None)
def _pipeline_kernels():
    """The one-thread kernels that make and unmake a DevicePipeline's state."""
    from .decorators import jit

    @jit
    def create(pipeline, a, b):
        pipeline._create(a, b)

    @jit
    def destroy(pipeline):
        pipeline._destroy()

    return create, destroy


class TilePipeline:
    """A block's share of a DevicePipeline, only inside kernels
    (device_pipeline.get_tile(smem, idx, idy)): execute(accumulator) runs the
    GEMM over the tile's K stages; _del() releases it."""

    def __init__(self, *args, **kwargs):
        raise DeviceOnlyError("a TilePipeline is made inside kernels by DevicePipeline.get_tile")


class SharedStorageCalc:
    """Shared-memory buffers laid out one after the other, each at its
    alignment (nvmath.device's SharedStorageCalc): add(alignment, nbytes),
    add(alignment, itemsize, count) or add(alignment, itemsize, layout) (its
    cosize); get() is the bytes they take."""

    def __init__(self):
        self._bytes = 0

    def add(self, alignment, *size):
        if len(size) == 1:
            nbytes = int(size[0])
        elif len(size) == 2:
            itemsize, count = size
            nbytes = int(itemsize) * int(count.cosize if isinstance(count, Layout) else count)
        else:
            raise TypeError("add(alignment, nbytes) or add(alignment, itemsize, count or layout)")
        alignment = int(alignment)
        if alignment <= 0 or nbytes <= 0:
            raise ValueError(f"alignment and size must be positive, got {alignment} and {nbytes} bytes")
        self._bytes = -(-self._bytes // alignment) * alignment + nbytes

    def get(self):
        return self._bytes


# nvmath.device.cublasdx_numba.pipeline_extensions: numba needs them to pass a
# DevicePipeline to a kernel; cudajit passes it as it is.
pipeline_extensions = []


# cublasdxTensorType's names, all queried at once (the query kernels make too: one cache entry).
_TENSOR_TYPES = tuple(_core.mathdx_tensor_types())


class Layout:
    """A layout of one of a Matmul's tensors (nvmath.device's Layout), made by
    MM.suggest_layout_smem_a(), MM.get_layout_gmem_c(ld), ...: size (elements),
    cosize (elements the buffer spans), alignment (bytes of the buffer), uid,
    dtype. Inside kernels, make_tensor(array, layout) makes the tensor that
    copy, copy_fragment, clear, axpby and MM.execute take."""

    def __init__(self, mm, tensor, like="", leading_dimension=None):
        self._mm, self.tensor_type, self._like = mm, tensor, like
        self.leading_dimension = None if leading_dimension is None else int(leading_dimension)
        self.memory_space = "g" if tensor.startswith("gmem") else "r" if "rmem" in tensor else "s"
        name = like or mm._r["value_type"]["abc".index(tensor[-1])]
        # a numpy scalar type; MathDx's complex half names (complex32: float16x2) stay names
        self.dtype = np.dtype(name).type if name in np.sctypeDict else name
        self._itemsize = int(mm._r["value_size"]["abc".index(tensor[-1])]) if not like else np.dtype(like).itemsize

    def _traits(self):
        return self._mm._tensor_traits(self.tensor_type, self._like)

    @property
    def size(self):
        if self.memory_space == "g":
            m = self._mm
            return int(np.prod((m.a_dim, m.b_dim, m.c_dim)["abc".index(self.tensor_type[-1])]))
        return int(self._traits()["logical_size"])

    @property
    def cosize(self):
        if self.memory_space == "g":
            m = self._mm
            return (m.a_size, m.b_size, m.c_size)["abc".index(self.tensor_type[-1])]
        return int(self._traits()["storage_bytes"]) // self._itemsize

    alignment = property(lambda self: int(self._traits()["alignment"]))
    uid = property(lambda self: int(self._traits()["uid"]))

    @property
    def _cudajit_symbol_(self):
        """What kernels see (compiler/typeinfer/mathdx_tensors.h)."""
        return (f"cudajit.mathdx.layout.{self._mm._r['key']}.{self.tensor_type}"
                + (f".{self._like}" if self._like else "")
                + (f".ld{self.leading_dimension}" if self.leading_dimension is not None else ""))

    def __repr__(self):
        return f"cudajit.mathdx.Layout({self.tensor_type}, {self._mm!r})"


MAX_ALIGNMENT = Alignment(16, 16, 16)   # nvmath.device.cublasdx(_backend).MAX_ALIGNMENT


# nvmath.device.common's tensor functions, device-only.
tensor_api = Stub("cudajit.mathdx.tensor_api", "nvmath.device.common's tensor functions (inside kernels)", members=(
    ("make_tensor", "make_tensor(array, layout): a tensor of a Matmul's layout over array"),
    ("copy", "copy(src, dst[, alignment]): block-wide copy between global and shared tensors"),
    ("copy_fragment", "copy_fragment(src, dst[, alignment]): a thread's register fragment to or from a tensor"),
    ("clear", "clear(fragment): zeroes a register fragment"),
    ("copy_wait", "copy_wait(): waits for the block's copies"),
    ("axpby", "axpby(alpha, x, beta, y): y = alpha * x + beta * y on register fragments"),
    ("make_fragment_like", "make_fragment_like(fragment, dtype): a new register fragment of its layout, of dtype")))
make_tensor, copy, copy_fragment = tensor_api.make_tensor, tensor_api.copy, tensor_api.copy_fragment
clear, copy_wait, axpby = tensor_api.clear, tensor_api.copy_wait, tensor_api.axpby
make_fragment_like = tensor_api.make_fragment_like


def _rebuild(spec):   # Matmuls pickled before _Routine
    return _rebuild_routine(Matmul, spec)


def matmul(*, compiler=None, code_type=None, execute_api=None, tensor_types=None,
           global_memory_alignment=None, **kwargs):
    """nvmath.device.matmul's face: keyword arguments only, returns a Matmul."""
    for value in kwargs.values():
        _reject_foreign(value, "matmul")
    return Matmul(compiler=compiler, code_type=code_type, execute_api=execute_api,
                  tensor_types=tensor_types, global_memory_alignment=global_memory_alignment,
                  **kwargs)


class FFT(_Routine):
    """A cuFFTDx FFT of thread-held data, by one thread (execution='Thread')
    or by the threads of a block together (execution='Block', with a shared
    memory workspace of shared_memory_size bytes), instantiated through
    libmathdx. Parameters and traits as nvmath.device.FFT's; inside a kernel
    `f.execute(thread_data, shared_mem)` (Block) or `f.execute(thread_data)`
    (Thread), also spelled `f(...)`."""

    _kind = "fft"   # the symbols kernels see: cudajit.mathdx.fft.<key>

    def __init__(self, size, precision=None, fft_type=None, execution=None, *, sm=None, direction=None,
                 ffts_per_block=None, elements_per_thread=None, real_fft_options=None, code_type=None,
                 compiler=None, execute_api=None):
        _reject_foreign(size, "FFT")
        if compiler not in (None, "numba", "cudajit"):
            raise ValueError(f"compiler: {compiler!r}")
        if execute_api not in (None, "register_memory", "shared_memory"):
            raise ValueError(f"execute_api: {execute_api!r} (expected 'register_memory' or 'shared_memory')")
        if execute_api == "shared_memory" and execution != "Block":
            raise ValueError("execute_api='shared_memory' is for execution='Block'")
        for name, value in (("precision", precision), ("fft_type", fft_type), ("execution", execution)):
            if value is None:
                raise TypeError(f"FFT needs {name}")
        if fft_type not in ("c2c", "r2c", "c2r"):
            raise ValueError(f"fft_type: {fft_type!r} (expected 'c2c', 'r2c' or 'c2r')")
        if execution not in ("Block", "Thread"):
            raise ValueError(f"execution: {execution!r} (expected 'Block' or 'Thread')")
        if direction not in (None, "forward", "inverse"):
            raise ValueError(f"direction: {direction!r} (expected 'forward' or 'inverse')")
        if direction is None:
            if fft_type == "c2c":
                raise ValueError("a c2c FFT needs direction ('forward' or 'inverse')")
            direction = "forward" if fft_type == "r2c" else "inverse"
        precision = _precision_name(precision)
        if precision not in ("float16", "float32", "float64"):
            raise ValueError(f"precision: {precision} (cuFFTDx computes in float16, float32 or float64)")
        options = dict(real_fft_options or {})
        unknown = set(options) - {"complex_layout", "real_mode"}
        if unknown:
            raise ValueError(f"real_fft_options: unknown keys {sorted(unknown)} "
                             "(expected 'complex_layout', 'real_mode')")
        spec = {
            "routine": "fft",
            "size": int(size),
            "precision": precision,
            "fft_type": fft_type,
            "direction": direction,
            "execution": execution,
            "elements_per_thread": None if elements_per_thread in (None, "suggested") else int(elements_per_thread),
            "ffts_per_block": None if ffts_per_block in (None, "suggested") else int(ffts_per_block),
            "complex_layout": options.get("complex_layout"),
            "real_mode": options.get("real_mode"),
            # None: the register API, and in kernels the shared-memory one too
            # (fft.execute(shared_mem) instantiates that sibling at compile time)
            "api": "shared_memory" if execute_api == "shared_memory" else None,
            "sm": _sm(sm, code_type),
        }
        if ffts_per_block == "suggested":   # (from the traits alone: no code for that question)
            spec["ffts_per_block"] = _instantiate(dict(spec, code=False))["suggested_ffts_per_block"]
        self._set(spec)


    # --- the descriptor ---------------------------------------------------------------
    size = property(lambda self: self._r["size"])
    fft_type = property(lambda self: self._spec["fft_type"])
    direction = property(lambda self: self._spec["direction"])
    execution = property(lambda self: self._spec["execution"])
    execute_api = property(lambda self: self._spec.get("api") or "register_memory")
    real_fft_options = property(lambda self: {k: self._spec[k] for k in ("complex_layout", "real_mode")
                                              if self._spec[k]} or None)

    @property
    def precision(self):
        import numpy
        return numpy.dtype(self._spec["precision"]).type

    # --- traits (libmathdx's; block_dim, shared_memory_size, ffts_per_block are None
    # for Thread execution) --------------------------------------------------------------
    value_type = property(lambda self: self._r["value_type"])
    input_type = property(lambda self: self._r["input_type"])
    output_type = property(lambda self: self._r["output_type"])
    elements_per_thread = property(lambda self: self._r["elements_per_thread"])
    storage_size = property(lambda self: self._r["storage_size"])
    stride = property(lambda self: self._r["stride"])
    implicit_type_batching = property(lambda self: self._r["implicit_type_batching"])
    input_length = property(lambda self: self._r["input_length"])
    output_length = property(lambda self: self._r["output_length"])
    input_elements_per_thread = property(lambda self: self._r["input_elements_per_thread"])
    output_elements_per_thread = property(lambda self: self._r["output_elements_per_thread"])
    shared_memory_size = property(lambda self: self._r["shared_memory_size"])
    ffts_per_block = property(lambda self: self._r["ffts_per_block"])
    suggested_ffts_per_block = property(lambda self: self._r["suggested_ffts_per_block"])
    requires_workspace = False
    workspace_size = 0

    @property
    def block_dim(self):
        dims = self._r["block_dim"]
        return None if dims is None else Dim3(*dims)

    # --- code -------------------------------------------------------------------------
    symbol = property(lambda self: self._r["symbol"])
    ltoirs = property(lambda self: list(self._code()["ltoir"]))

    def execute(self, *args):
        """The FFT in place on thread_data (storage_size values of value_type a
        thread): execute(thread_data, shared_mem) by all block_dim threads of a
        block, execute(thread_data) by one thread; or, for a Block FFT, on the
        block's ffts_per_block FFTs in shared memory (size values of value_type
        each, one after the other): execute(shared_mem), cuFFTDx's
        shared-memory API."""
        raise DeviceOnlyError("FFT.execute can only be called inside a @cudajit.jit kernel")

    __call__ = execute

    _KNOBS = ("elements_per_thread", "ffts_per_block")

    def valid(self, *knobs):
        """nvmath.device's FFT.valid(*knobs): the combinations of the named
        knobs ('elements_per_thread', 'ffts_per_block') cuFFTDx offers for
        this FFT's other parameters, as tuples in the knobs' order
        (libmathdx's knob query, run in a fresh process as instantiations
        are; cached per process). Build a descriptor with one of them
        (FFT(..., elements_per_thread=e, ffts_per_block=f)) to use it."""
        if not knobs:
            raise ValueError("FFT.valid: name at least one knob ('elements_per_thread', 'ffts_per_block')")
        for k in knobs:
            if k not in self._KNOBS:
                raise ValueError(f"FFT.valid: unknown knob {k!r} (the knobs are 'elements_per_thread' "
                                 "and 'ffts_per_block')")
        if "ffts_per_block" in knobs and self.execution != "Block":
            raise ValueError("FFT.valid: ffts_per_block is a knob of Block execution")
        # the knobs asked for are free, the rest of the descriptor as built
        spec = {k: (None if k in knobs else v) for k, v in self._spec.items()}
        return list(_fft_knobs(tuple(sorted(spec.items())), tuple(knobs)))

    def __repr__(self):
        return f"cudajit.mathdx.FFT({self._r['spec']})"



# A kernel calling fft.execute(shared_mem) on a register-API FFT needs its
# shared-memory sibling, instantiated during the compile (in a fresh process).
_core.mathdx_set_instantiators(_instantiate_elsewhere)


def fft(*, compiler=None, code_type=None, execute_api=None, **kwargs):
    """nvmath.device.fft's face: keyword arguments only, returns an FFT."""
    for value in kwargs.values():
        _reject_foreign(value, "fft")
    return FFT(compiler=compiler, code_type=code_type, execute_api=execute_api, **kwargs)


_GENERATORS = ("philox4_32", "xorwow", "mrg32k3a", "pcg")
_DISTRIBUTIONS = {"uniform_bits": 0, "uniform": 2, "normal": 2, "log_normal": 2, "poisson": 1}
_METHODS = {"single": 1, "pair": 2, "quad": 4}


class Random(_Routine):
    """A cuRANDDx pseudo-random generator and one distribution, run by each
    thread on its own state (cuRANDDx's Thread execution), instantiated
    through libmathdx. Inside a kernel:

        R.init(seed, subsequence, offset, states[i])   # once, e.g. in a setup kernel
        R.generate(states[i], out, a, b)               # out[:R.count] = draws
        R.skip_offset(states[i], n); R.skip_subsequence(states[i], n)

    `states` is an array of R.state_size bytes a state (R.states(n) makes one
    for n generators); a, b are the distribution's parameters: uniform (low,
    high; default 0, 1), normal and log_normal (mean, stddev; default 0, 1),
    poisson (lambda), none for uniform_bits. `method` says how many values a
    call gives: 'single' (1), 'pair' (2), 'quad' (4), as cuRANDDx's
    generate / generate2 / generate4 (default: 'quad' for philox4_32, which
    makes four at a time, 'single' for the others; libmathdx refuses the
    combinations cuRANDDx does not have, with its message)."""

    _kind = "random"   # the symbols kernels see: cudajit.mathdx.random.<key>

    def __init__(self, generator="philox4_32", distribution="uniform", dtype=None,
                 method=None, *, philox_rounds=None, normal_method=None, sm=None, code_type=None):
        if generator not in _GENERATORS:
            raise ValueError(f"generator: {generator!r} (expected one of {', '.join(_GENERATORS)}; the "
                             "quasi-random Sobol generators are not supported)")
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(f"distribution: {distribution!r} (expected one of {', '.join(_DISTRIBUTIONS)})")
        if method is None:   # what cuRANDDx's generators give: Philox four values a call
            method = "quad" if generator == "philox4_32" else "single"
        if method not in _METHODS:
            raise ValueError(f"method: {method!r} (expected 'single', 'pair' or 'quad')")
        if dtype is None:
            dtype = "uint32" if distribution in ("uniform_bits", "poisson") else "float32"
        spec = {
            "routine": "random",
            "generator": generator,
            "philox_rounds": None if philox_rounds is None else int(philox_rounds),
            "distribution": distribution,
            "output_type": _precision_name(dtype),
            "method": method,
            "normal_method": normal_method,
            "sm": _sm(sm, code_type),
        }
        self._set(spec)


    generator = property(lambda self: self._spec["generator"])
    distribution = property(lambda self: self._spec["distribution"])
    method = property(lambda self: self._spec["method"])
    dtype = property(lambda self: self._r["output_type"])
    param_type = property(lambda self: self._r["param_type"])
    count = property(lambda self: self._r["count"])
    state_size = property(lambda self: self._r["state_size"])
    state_alignment = property(lambda self: self._r["state_alignment"])
    symbols = property(lambda self: dict(self._r["symbols"]))

    def states(self, n, stream=0):
        """A device array of n states (uint8, shape (n, state_size)), not yet
        initialised: run R.init on each row in a kernel first."""
        from .devicearray import device_array
        return device_array((int(n), self.state_size), np.uint8, stream=stream)

    def _device_only(self, *args):
        raise DeviceOnlyError("Random's init / generate / skip_offset / skip_subsequence can only be called "
                              "inside a @cudajit.jit kernel")

    init = generate = skip_offset = skip_subsequence = _device_only

    def __repr__(self):
        return f"cudajit.mathdx.Random({self._r['spec']})"



# nvmath.device.random (curand_kernel.h's device API): `from cudajit.mathdx import random`.
from . import mathdx_random as random  # noqa: E402
