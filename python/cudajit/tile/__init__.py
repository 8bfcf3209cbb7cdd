"""cudajit.tile: cuTile Python's tile programming model (``import cudajit.tile as ct``).

A tile kernel works on whole tiles of arrays; the compiler maps each tile onto
the threads, registers, shared memory and tensor cores of a block::

    import cudajit.tile as ct

    @ct.kernel
    def vector_add(a, b, c, TILE: ct.Constant[int]):
        i = ct.bid(0)
        ta = ct.load(a, index=(i,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
        tb = ct.load(b, index=(i,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
        ct.store(c, index=(i,), tile=ta + tb)

    ct.launch(stream, (ct.cdiv(n, 1024),), vector_add, (a, b, c, 1024))

The names and their meaning are cuTile's (docs.nvidia.com/cuda/cutile-python),
so a cuTile kernel ports by changing its import. docs/tiles.md lists every
name, what works and what does not, and the compiler's design.
"""

from ._annotations import Array, Constant, ConstantAnnotation, Slice, Tile, TiledView
from ._by_target import ByTarget
from ._compiler import compiler_timeout
from ._dtypes import DTYPES as _DTYPES
from ._dtypes import DType
from ._enums import MemoryOrder, MemoryScope, PaddingMode, RoundingMode
from ._errors import (ERROR_NAMES as _ERROR_NAMES, TileCompilerExecutionError, TileCompilerTimeoutError,
                      TileStaticAssertionError, TileSyntaxError, TileTypeError, TileUnsupportedFeatureError,
                      TileValueError)
from ._kernel import TileKernel, kernel, launch
from ._ops import STUBS as _STUBS

# The decoder freezes a global that is this module to this symbol, so that
# `ct.load` inside a kernel folds to "cudajit.tile.load".
_cudajit_symbol_ = "cudajit.tile"

globals().update(_DTYPES)
globals().update(_STUBS)

__all__ = [
    "kernel", "launch", "TileKernel", "ByTarget", "compiler_timeout", "tune",
    "Constant", "ConstantAnnotation", "Tile", "Array", "TiledView", "Slice",
    "DType", *_DTYPES,
    "PaddingMode", "RoundingMode", "MemoryOrder", "MemoryScope",
    *_ERROR_NAMES,
    *_STUBS,
]

from . import tune  # noqa: E402  (cuTile's ct.tune; needs the names above)
