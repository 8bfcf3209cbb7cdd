"""Device-only objects: ``cudajit.grid``, ``cudajit.threadIdx.x``, ``cudajit.shared.array``...

They mean something only inside ``@cudajit.jit`` functions: the bytecode
decoder freezes each one to the symbol in its ``_cudajit_symbol_`` attribute,
and type inference resolves that symbol. Called or used on the host, they
raise ``DeviceOnlyError``.
"""

from .errors import DeviceOnlyError


class Stub:
    """A device-only function or namespace, named by its cudajit symbol."""

    def __init__(self, symbol, doc="", members=()):
        self._cudajit_symbol_ = symbol
        self.__doc__ = doc
        self.__name__ = symbol.rsplit(".", 1)[-1]
        self.__qualname__ = self.__name__
        for name, member_doc in members:
            setattr(self, name, Stub(f"{symbol}.{name}", member_doc))

    def __call__(self, *args, **kwargs):
        raise DeviceOnlyError(
            f"{self._cudajit_symbol_} can only be used inside a @cudajit.jit kernel or "
            "device function, not called from the host")

    def __repr__(self):
        return f"<cudajit device-only object {self._cudajit_symbol_}>"

    def __reduce__(self):
        # Stubs are singletons of the package: pickle by name.
        return (_lookup, (self._cudajit_symbol_,))


def _lookup(symbol):
    import importlib
    parts = symbol.split(".")
    obj = importlib.import_module(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


_XYZ = (("x", "along x"), ("y", "along y"), ("z", "along z"))

# One row per public device-only object: (name, doc, members).
_TABLE = (
    ("grid", "grid(ndim): the absolute thread index (an int, or a tuple for ndim 2, 3).", ()),
    ("gridsize", "gridsize(ndim): the number of threads in the grid along each dimension.", ()),
    ("threadIdx", "The thread's index in its block (.x, .y, .z).", _XYZ),
    ("blockIdx", "The block's index in the grid (.x, .y, .z).", _XYZ),
    ("blockDim", "The block's shape in threads (.x, .y, .z).", _XYZ),
    ("gridDim", "The grid's shape in blocks (.x, .y, .z).", _XYZ),
    ("laneid", "The thread's lane in its warp (0..31).", ()),
    ("warpsize", "The warp size (32).", ()),
    ("syncthreads", "syncthreads(): a barrier for the threads of the block.", ()),
    ("threadfence", "threadfence(): a memory fence at device scope.", ()),
    ("threadfence_block", "threadfence_block(): a memory fence at block scope.", ()),
    ("shared", "Shared memory: shared.array(shape, dtype).",
     (("array", "shared.array(shape, dtype): a block-wide array in shared memory."),)),
    ("local", "Thread-local memory: local.array(shape, dtype).",
     (("array", "local.array(shape, dtype): a per-thread array."),)),
    ("atomic", "Atomic operations: atomic.add(array, index, value).",
     (("add", "atomic.add(array, index, value): adds atomically, returns the old value."),)),
)

STUBS = {name: Stub(f"cudajit.{name}", doc, members) for name, doc, members in _TABLE}
