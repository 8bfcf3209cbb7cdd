"""Type names of the tile model: ``Constant[...]``, ``Tile``, ``Array``, ``TiledView``.

``Constant[int]`` marks a kernel parameter whose value is part of the kernel's
specialisation: it is a compile-time constant in the kernel body (tile shapes
come from such parameters), and a launch with another value compiles another
kernel. It is ``typing.Annotated[T, ConstantAnnotation()]``, as in cuTile, so
type checkers see the underlying type.

``Tile``, ``Array`` and ``TiledView`` exist for annotations and documentation:
their objects exist only inside tile code.
"""

import typing

T = typing.TypeVar("T")


class ConstantAnnotation:
    """The ``Annotated`` metadata that marks a parameter as a compile-time constant."""

    def __repr__(self):
        return "ConstantAnnotation()"

    def __eq__(self, other):
        return isinstance(other, ConstantAnnotation)

    def __hash__(self):
        return hash(ConstantAnnotation)


Constant = typing.Annotated[T, ConstantAnnotation()]


def is_constant_annotation(annotation):
    """True for ``Constant``, ``Constant[X]`` (and the string forms of both, as
    ``from __future__ import annotations`` leaves them)."""
    if isinstance(annotation, str):   # "Constant[int]", "ct.Constant", "tile.Constant[int]"
        head = annotation.replace(" ", "").split("[", 1)[0]
        return head.rsplit(".", 1)[-1] == "Constant"
    return any(isinstance(m, ConstantAnnotation) for m in getattr(annotation, "__metadata__", ()))


class _DeviceOnlyType:
    """Base of the classes whose objects exist only in tile code."""

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"cudajit.tile.{cls.__name__} objects exist only inside tile code")


class Tile(_DeviceOnlyType):
    """An immutable block-local array of a dtype and a constant shape (every
    dimension a power of two; a 0-d tile is a scalar). Its elements live in the
    registers (and, where the compiler needs it, shared memory) of the block's
    threads. Attributes: ``dtype``, ``shape``, ``ndim``; methods ``reshape``,
    ``permute``, ``transpose``, ``astype``, ``item``, ``extract``; the Python
    operators act elementwise with broadcasting; ``@`` is ``matmul``."""

    def reshape(self, shape): """See cudajit.tile.reshape."""
    def permute(self, axes): """See cudajit.tile.permute."""
    def transpose(self, axis0=None, axis1=None): """See cudajit.tile.transpose."""
    def astype(self, dtype, *, rounding_mode=None): """See cudajit.tile.astype."""
    def item(self): """The one element of a single-element tile, as a 0-d tile."""
    def extract(self, index, shape): """See cudajit.tile.extract."""


class Array(_DeviceOnlyType):
    """A kernel's array argument (any object with ``__cuda_array_interface__``
    or DLPack, as for @cudajit.jit kernels) seen from tile code: ``dtype``,
    ``shape``, ``strides``, ``ndim``, ``slice(axis, start, stop)`` and
    ``tiled_view(tile_shape, padding_mode=...)``."""

    def slice(self, axis, start, stop): """A view restricted to [start, stop) along axis."""
    def tiled_view(self, tile_shape, *, padding_mode=None, traversal_steps=None):
        """A TiledView of this array with a fixed tile shape."""


class TiledView(_DeviceOnlyType):
    """An array seen as a grid of equal tiles (``Array.tiled_view``): ``load(index)``
    and ``store(index, tile)`` by tile index; ``num_tiles(axis)``; the padding
    mode is fixed when the view is made."""

    def load(self, index, *, check_bounds=True, latency=None, allow_tma=None):
        """The tile at ``index`` of the view's tile space."""
    def store(self, index, tile, *, check_bounds=True, latency=None, allow_tma=None):
        """Stores ``tile`` at ``index`` of the view's tile space (masked at ragged edges)."""
    def num_tiles(self, axis): """The number of tiles along ``axis``."""


class Slice:
    """A dense dimension's range ``[start, start + length)`` for
    ``load_advanced_indexing`` / ``store_advanced_indexing`` (cuTile's
    ``ct.Slice``): ``length`` is a compile-time power of two, ``start`` may be
    known only at run time. Inside tile code the call becomes the range
    itself; on the host the object just holds the two values."""

    # The kernel decoder freezes the class to this symbol (typeinfer: rules_tile.cpp).
    _cudajit_symbol_ = "cudajit.tile.Slice"

    def __init__(self, start, length):
        self.start = start
        self.length = length

    def __repr__(self):
        return f"Slice({self.start!r}, {self.length!r})"
