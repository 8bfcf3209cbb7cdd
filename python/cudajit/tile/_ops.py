"""The tile operations: ``ct.bid``, ``ct.load``, ``ct.sum``... with cuTile's signatures.

Like ``cudajit.stubs``, each is a stub that exists to be recognised by the
compiler: the bytecode decoder freezes it to the symbol in its
``_cudajit_symbol_`` attribute (``cudajit.tile.load``), and the tile rules of
type inference resolve that symbol (docs/tiles.md). Called on the host, a stub
raises ``DeviceOnlyError``; ``cdiv`` alone also works on the host, as in cuTile.

One row per operation: (name, parameter list as Python writes it, doc). The
parameter list gives each stub a real signature (``inspect.signature`` shows
cuTile's), checked against cuTile in tests/test_tile_api.py.
"""

import functools

from ._enums import MemoryOrder, MemoryScope, PaddingMode, RoundingMode  # noqa: F401 (defaults)
from ._errors import device_only

_ATOMIC = ("array, indices, update, /, *, check_bounds=True, "
           "memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE")
_REDUCE = "x, /, axis=None, *, keepdims=False"
_ROUNDED = "x, y, /, *, rounding_mode=None, flush_to_zero=False"
_LOAD = ("array, /, index, shape, *, order='C', padding_mode=PaddingMode.UNDETERMINED, "
         "check_bounds=True, latency=None, allow_tma=None, memory_order=MemoryOrder.WEAK, "
         "memory_scope=MemoryScope.NONE")
_STORE = ("array, /, index, tile, *, order='C', check_bounds=True, latency=None, "
          "allow_tma=None, memory_order=MemoryOrder.WEAK, memory_scope=MemoryScope.NONE")

_TABLE = (
    # ---- the grid
    ("bid", "axis", "The index of this block along axis 0, 1 or 2 (int32)."),
    ("num_blocks", "axis", "The number of blocks of the grid along axis 0, 1 or 2 (int32)."),
    ("num_tiles", "array, /, axis, shape, order='C'",
     "The number of tiles of the given shape along axis of array's tile space: "
     "cdiv(array.shape[axis], shape[axis])."),
    ("assume_divisible_by", "x, divisor",
     "x unchanged; promises the compiler that x is a multiple of the constant divisor."),
    # ---- memory: tile space
    ("load", _LOAD,
     "The tile of the given constant shape at index of array's tile space: index is in units of "
     "tiles, so element (i*shape[0] + a, j*shape[1] + b) lands at [a, b]. Elements past the "
     "array's edge get padding_mode's value. order permutes the array's axes first ('F' reverses "
     "them)."),
    ("store", _STORE,
     "Writes tile at index of array's tile space (the tile's shape gives the tile space); "
     "elements past the array's edge are not written."),
    ("gather", "array, indices, /, *, mask=None, padding_value=0, check_bounds=True, latency=None",
     "The tile array[indices] for integer index tiles (one per array axis, broadcast together); "
     "out-of-bounds or masked-off elements get padding_value."),
    ("scatter", "array, indices, value, /, *, mask=None, check_bounds=True, latency=None",
     "array[indices] = value for integer index tiles; out-of-bounds or masked-off elements are "
     "not written."),
    # ---- atomics: elementwise, each element atomic; return the old values
    ("atomic_cas", "array, indices, expected, desired, /, *, check_bounds=True, "
                   "memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE",
     "Compare-and-swap at array[indices], elementwise; returns the old values."),
    ("atomic_xchg", _ATOMIC, "Exchange at array[indices], elementwise; returns the old values."),
    ("atomic_add", _ATOMIC, "Adds update at array[indices], elementwise; returns the old values."),
    ("atomic_max", _ATOMIC, "Maximum at array[indices], elementwise; returns the old values."),
    ("atomic_min", _ATOMIC, "Minimum at array[indices], elementwise; returns the old values."),
    ("atomic_and", _ATOMIC, "Bitwise and at array[indices], elementwise; returns the old values."),
    ("atomic_or", _ATOMIC, "Bitwise or at array[indices], elementwise; returns the old values."),
    ("atomic_xor", _ATOMIC, "Bitwise xor at array[indices], elementwise; returns the old values."),
    # ---- factories
    ("arange", "size, /, *, dtype, start=0, step=1",
     "The 1-d tile start, start + step, ... of constant power-of-two size."),
    ("full", "shape, fill_value, dtype", "A tile of the constant shape, every element fill_value."),
    ("zeros", "shape, dtype", "A tile of zeros."),
    ("ones", "shape, dtype", "A tile of ones."),
    ("astile", "value, /, *, dtype", "A tile from a scalar or a nested tuple of constants."),
    # ---- dtype and shape
    ("astype", "x, dtype, /, *, rounding_mode=None", "x converted to dtype, elementwise."),
    ("bitcast", "x, /, dtype", "x's bits read as dtype (same bit width)."),
    ("reshape", "x, /, shape",
     "x with a new shape of the same number of elements (C order); one extent may be -1."),
    ("permute", "x, /, axes", "x with its axes reordered: result axis i is x's axis axes[i]."),
    ("transpose", "x, /, axis0=None, axis1=None",
     "x with two axes swapped (a 2-d tile's two by default; more dimensions name both axes)."),
    ("expand_dims", "x, /, axis", "x with a new axis of extent 1 at axis."),
    ("broadcast_to", "x, /, shape", "x broadcast to shape (NumPy's rules)."),
    ("cat", "tiles, /, axis",
     "A pair of tiles of the same shape joined along axis (the extent doubles)."),
    ("extract", "x, /, index, shape",
     "The sub-tile of the given shape at index (in units of that shape)."),
    ("pack_to_bytes", "x, /", "x's raw bytes as a 1-d uint8 tile (little-endian per element)."),
    ("grid_dependency_control_wait", "",
     "Waits for the preceding kernel of a programmatic dependent launch (griddepcontrol.wait, sm_90+)."),
    ("grid_dependency_control_launch_dependents", "",
     "Lets a programmatically dependent kernel begin (griddepcontrol.launch_dependents, sm_90+)."),
    ("load_advanced_indexing", "array, indices, /, *, padding_mode=PaddingMode.UNDETERMINED, latency=None, "
     "allow_tma=None",
     "A tile of non-contiguous slices: one index a 1-d integer tile (the sparse dimension), the others ct.Slice."),
    ("store_advanced_indexing", "array, indices, tile, /, *, latency=None, allow_tma=None",
     "Stores a tile into non-contiguous slices (load_advanced_indexing's indices)."),
    ("unpack_from_bytes", "x, /, dtype", "A 1-d uint8 tile's bytes read as a 1-d tile of dtype."),
    ("insert", "x, /, index, value",
     "x with its sub-tile at index (in units of value's shape) replaced by value: a new tile."),
    ("where", "cond, x, y, /", "x where cond is true, else y, elementwise with broadcasting."),
    # ---- reductions and scans
    ("sum", _REDUCE + ", rounding_mode=None, flush_to_zero=False",
     "The sum over axis (an int, a tuple, or None for all)."),
    ("prod", _REDUCE + ", rounding_mode=None, flush_to_zero=False", "The product over axis."),
    ("max", _REDUCE + ", flush_to_zero=False, propagate_nan=False", "The maximum over axis."),
    ("min", _REDUCE + ", flush_to_zero=False, propagate_nan=False", "The minimum over axis."),
    ("argmax", _REDUCE + ", propagate_nan=False",
     "The index of the maximum over axis (the first one on ties)."),
    ("argmin", _REDUCE + ", propagate_nan=False", "The index of the minimum over axis."),
    ("reduce", "x, /, axis, func, identity, *, keepdims=False",
     "The reduction of x over axis with a user function func and its identity."),
    ("cumsum", "x, /, axis=0, *, reverse=False, rounding_mode=None, flush_to_zero=False",
     "The inclusive prefix sum along axis."),
    ("cumprod", "x, /, axis=0, *, reverse=False, rounding_mode=None, flush_to_zero=False",
     "The inclusive prefix product along axis."),
    ("scan", "x, /, axis, func, identity, *, reverse=False",
     "The inclusive scan of x along axis with a user function func and its identity."),
    # ---- matrix products
    ("matmul", "x, y, /",
     "The matrix product x @ y (batched over leading axes); operands promoted to one dtype."),
    ("mma", "x, y, /, acc, *, use_fast_acc=False",
     "x @ y + acc in acc's dtype (f16/bf16/tf32 -> f32 on tensor cores, f32, f64)."),
    # ---- elementwise arithmetic (also the Python operators on tiles)
    ("add", _ROUNDED, "x + y."),
    ("sub", _ROUNDED, "x - y."),
    ("mul", _ROUNDED, "x * y."),
    ("truediv", _ROUNDED, "x / y."),
    ("floordiv", "x, y, /", "x // y (Python's rounding toward -inf)."),
    ("mod", "x, y, /", "x % y (the sign of y, as Python)."),
    ("divmod", "x, y, /", "(x // y, x % y)."),
    ("pow", "x, y, /", "x ** y."),
    ("atan2", "x1, x2, /", "atan2(x1, x2)."),
    ("minimum", "x, y, /, *, flush_to_zero=False, propagate_nan=False", "The smaller of x, y."),
    ("maximum", "x, y, /, *, flush_to_zero=False, propagate_nan=False", "The larger of x, y."),
    ("negative", "x, /", "-x."),
    ("bitwise_and", "x, y, /", "x & y."),
    ("bitwise_or", "x, y, /", "x | y."),
    ("bitwise_xor", "x, y, /", "x ^ y."),
    ("bitwise_lshift", "x, y, /", "x << y."),
    ("bitwise_rshift", "x, y, /", "x >> y."),
    ("bitwise_not", "x, /", "~x."),
    ("greater", "x, y, /", "x > y (a bool tile)."),
    ("greater_equal", "x, y, /", "x >= y."),
    ("less", "x, y, /", "x < y."),
    ("less_equal", "x, y, /", "x <= y."),
    ("equal", "x, y, /", "x == y."),
    ("not_equal", "x, y, /", "x != y."),
    # ---- math
    ("exp", "x, /, *, rounding_mode=None", "e ** x."),
    ("exp2", "x, /, *, flush_to_zero=False", "2 ** x."),
    ("log", "x, /", "The natural logarithm."),
    ("log2", "x, /", "The base-2 logarithm."),
    ("sqrt", "x, /, *, rounding_mode=None, flush_to_zero=False", "The square root."),
    ("rsqrt", "x, /, *, flush_to_zero=False", "1 / sqrt(x)."),
    ("sin", "x, /", "The sine."),
    ("cos", "x, /", "The cosine."),
    ("tan", "x, /", "The tangent."),
    ("sinh", "x, /", "The hyperbolic sine."),
    ("cosh", "x, /", "The hyperbolic cosine."),
    ("tanh", "x, /, *, rounding_mode=None", "The hyperbolic tangent."),
    ("floor", "x, /", "The largest integer not above x."),
    ("ceil", "x, /", "The smallest integer not below x."),
    ("abs", "x, /", "|x|."),
    ("isnan", "x, /", "True where x is NaN."),
    # ---- debugging
    ("printf", "format, *args", "C printf from every block (tiles print whole)."),
    ("print", "*args, sep=' ', end='\\n'", "Python's print from the device."),
    ("assert_", "cond, /, message=None", "Traps when any element of cond is false."),
    ("static_assert", "condition, message=None, /", "Fails the compile when the constant condition is false."),
    ("ensure_constant", "value, /", "The value, which must be a compile-time constant."),
)


def _make_stub(name, params, doc):
    """A function named `name` with signature `params` that raises DeviceOnlyError."""
    namespace = {}
    exec(f"def {name}({params}): pass", dict(globals()), namespace)   # constant text from _TABLE
    symbol = f"cudajit.tile.{name}"

    @functools.wraps(namespace[name])
    def stub(*args, **kwargs):
        raise device_only(symbol)

    stub.__doc__ = doc
    stub.__module__ = "cudajit.tile"
    stub._cudajit_symbol_ = symbol
    return stub


STUBS = {name: _make_stub(name, params, doc) for name, params, doc in _TABLE}


def cdiv(x, y, /):
    """ceil(x / y) for integers, as ``(x - 1) // y + 1``: the number of tiles of
    size y that cover x elements. Works on the host and in tile code."""
    return (x - 1) // y + 1


cdiv.__module__ = "cudajit.tile"
cdiv._cudajit_symbol_ = "cudajit.tile.cdiv"
STUBS["cdiv"] = cdiv
