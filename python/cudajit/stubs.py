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
    ("block", "Cooperative algorithms of a thread block (CUB), called by every thread of the "
     "block; the kernel is specialised on its launch block shape (docs/block_algorithms.md).",
     (("sum", "block.sum(x): the block's sum of x (a number, or a 1-d local array of several "
              "items per thread); valid in thread 0."),
      ("min", "block.min(x): the block's minimum; valid in thread 0."),
      ("max", "block.max(x): the block's maximum; valid in thread 0."),
      ("reduce", "block.reduce(x, op): the block's reduction with op (min, max, operator.add, "
                 "operator.mul, ..., or a @cuda.jit(device=True) function); valid in thread 0."),
      ("inclusive_sum", "block.inclusive_sum(x): the inclusive prefix sum over the block, in "
                        "thread order (a local array: in place, item order within each thread)."),
      ("exclusive_sum", "block.exclusive_sum(x): the exclusive prefix sum (thread 0 gets 0)."),
      ("inclusive_scan", "block.inclusive_scan(x, op, initial=None): the inclusive scan with op, "
                         "seeded with initial if given."),
      ("exclusive_scan", "block.exclusive_scan(x, op, initial): the exclusive scan with op; "
                         "thread 0 gets initial."),
      ("load", "block.load(array, start, items_per_thread, arrangement='blocked'): a local array "
               "of the tile array[start:start + block size * items_per_thread] (items past the "
               "end are 0); arrangement 'blocked', 'striped', 'vectorize', 'transpose' or "
               "'warp_transpose'."),
      ("store", "block.store(array, start, items, arrangement='blocked'): writes the threads' "
                "items to array[start:...] (stopping at the array's end)."),
      ("radix_sort", "block.radix_sort(keys, values=None, descending=False, "
                     "arrangement='blocked'): sorts the block's keys (and values with them); "
                     "numbers are returned sorted, local arrays sorted in place."),
      ("histogram", "block.histogram(samples, histogram, bins=None, algorithm='atomic'): zeroes "
                    "the histogram (usually a shared array of int32/uint32/uint64 counters), "
                    "then counts the block's samples (bin indices) into it."))),
    ("warp", "Cooperative algorithms of a warp (CUB), called by every thread of the warp; the "
     "kernel is specialised on its launch block shape.",
     (("sum", "warp.sum(x): the warp's sum; valid in lane 0."),
      ("min", "warp.min(x): the warp's minimum; valid in lane 0."),
      ("max", "warp.max(x): the warp's maximum; valid in lane 0."),
      ("reduce", "warp.reduce(x, op): the warp's reduction with op; valid in lane 0."),
      ("inclusive_sum", "warp.inclusive_sum(x): the inclusive prefix sum over the warp."),
      ("exclusive_sum", "warp.exclusive_sum(x): the exclusive prefix sum (lane 0 gets 0)."),
      ("inclusive_scan", "warp.inclusive_scan(x, op, initial=None): the inclusive scan with op."),
      ("exclusive_scan", "warp.exclusive_scan(x, op, initial): the exclusive scan with op."))),
)

STUBS = {name: Stub(f"cudajit.{name}", doc, members) for name, doc, members in _TABLE}
