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
    ("cg", "Cooperative groups: cg.this_grid() is the grid group; its sync() is a barrier for "
     "every thread of the grid, and a kernel that calls it is launched cooperatively (all its "
     "blocks resident at once: kernel.overloads[sig].max_cooperative_grid_blocks(blockdim)).",
     (("this_grid", "cg.this_grid(): the grid group of a cooperative launch; .sync() waits for "
                    "every thread of the grid."),)),
    ("shared", "Shared memory: shared.array(shape, dtype).",
     (("array", "shared.array(shape, dtype): a block-wide array in shared memory."),)),
    ("const", "Constant memory: const.array_like(array).",
     (("array_like", "const.array_like(ary): a global numpy array as a read-only array in constant "
                     "memory, copied when the kernel is compiled."),)),
    ("local", "Thread-local memory: local.array(shape, dtype).",
     (("array", "local.array(shape, dtype): a per-thread array."),)),
    ("atomic", "Atomic operations: atomic.add(array, index, value) & co; each returns the old value.",
     (("add", "atomic.add(array, index, value): adds atomically, returns the old value."),
      ("sub", "atomic.sub(array, index, value): subtracts atomically."),
      ("max", "atomic.max(array, index, value): a NaN on either side leaves the array alone."),
      ("min", "atomic.min(array, index, value): a NaN on either side leaves the array alone."),
      ("nanmax", "atomic.nanmax(array, index, value): a NaN in the array is replaced."),
      ("nanmin", "atomic.nanmin(array, index, value): a NaN in the array is replaced."),
      ("and_", "atomic.and_(array, index, value): bitwise and (integers)."),
      ("or_", "atomic.or_(array, index, value): bitwise or (integers)."),
      ("xor", "atomic.xor(array, index, value): bitwise xor (integers)."),
      ("exch", "atomic.exch(array, index, value): stores value (integers)."),
      ("inc", "atomic.inc(array, index, value): old >= value ? 0 : old + 1 (uint32/uint64)."),
      ("dec", "atomic.dec(array, index, value): old == 0 or old > value ? value : old - 1."),
      ("cas", "atomic.cas(array, index, old, value): compare and swap (integers)."),
      ("compare_and_swap", "atomic.compare_and_swap(array, old, value): cas on array[0]."))),
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

# Issue 5: the rest of numba.cuda's device functions, one row each: (name, doc).
_FUNCTIONS = (
    ("threadfence_system", "threadfence_system(): a memory fence at system scope."),
    ("syncthreads_count", "syncthreads_count(pred): barrier; how many threads had pred != 0."),
    ("syncthreads_and", "syncthreads_and(pred): barrier; 1 if pred != 0 in every thread."),
    ("syncthreads_or", "syncthreads_or(pred): barrier; 1 if pred != 0 in any thread."),
    ("syncwarp", "syncwarp([mask]): a barrier for the threads of the warp in mask."),
    ("nanosleep", "nanosleep(ns): suspends the thread for about ns nanoseconds."),
    ("activemask", "activemask(): the mask of the warp's active threads (uint32)."),
    ("lanemask_lt", "lanemask_lt(): the mask of the lanes below this one (uint32)."),
    ("shfl_sync", "shfl_sync(mask, value, src_lane): value of lane src_lane."),
    ("shfl_up_sync", "shfl_up_sync(mask, value, delta): value of lane laneid - delta."),
    ("shfl_down_sync", "shfl_down_sync(mask, value, delta): value of lane laneid + delta."),
    ("shfl_xor_sync", "shfl_xor_sync(mask, value, lane_mask): value of lane laneid ^ lane_mask."),
    ("all_sync", "all_sync(mask, pred): True if pred holds in every lane of mask."),
    ("any_sync", "any_sync(mask, pred): True if pred holds in some lane of mask."),
    ("eq_sync", "eq_sync(mask, pred): True if pred is the same in every lane of mask."),
    ("ballot_sync", "ballot_sync(mask, pred): the lanes of mask where pred holds (int32, as numba)."),
    ("match_any_sync", "match_any_sync(mask, value): the lanes holding the same value."),
    ("match_all_sync", "match_all_sync(mask, value): (mask, all lanes hold the same value)."),
    ("popc", "popc(x): the number of set bits."),
    ("brev", "brev(x): x with its bits reversed (uint32/uint64)."),
    ("clz", "clz(x): the number of leading zero bits."),
    ("ffs", "ffs(x): 1 + the position of the least significant set bit, 0 for 0."),
    ("fma", "fma(a, b, c): a * b + c with one rounding."),
    ("cbrt", "cbrt(x): the cube root."),
    ("selp", "selp(test, a, b): a if test else b."),
    ("ldca", "ldca(array, i): array[i] loaded with PTX's cache-all operator (ld.global.ca)."),
    ("ldcg", "ldcg(array, i): array[i] cached in L2, not L1 (ld.global.cg)."),
    ("ldcs", "ldcs(array, i): array[i] as streaming, likely read once (ld.global.cs)."),
    ("ldlu", "ldlu(array, i): array[i] as last use (ld.global.lu)."),
    ("ldcv", "ldcv(array, i): array[i] fetched again, not cached (ld.global.cv)."),
    ("stcg", "stcg(array, i, value): array[i] = value cached in L2, not L1 (st.global.cg)."),
    ("stcs", "stcs(array, i, value): array[i] = value as streaming (st.global.cs)."),
    ("stwb", "stwb(array, i, value): array[i] = value written back (st.global.wb)."),
    ("stwt", "stwt(array, i, value): array[i] = value written through to memory (st.global.wt)."),
    ("literal_unroll", "literal_unroll(t): numba's loop over a tuple (`for v in literal_unroll(t)`); "
                       "the elements are visited with their common type."),
)

def _libdevice_members():
    from . import _core
    for name, result, inputs, outputs in _core.libdevice_functions():
        shown = result if not outputs else "(" + ", ".join(([] if result == "void" else [result]) + outputs) + ")"
        yield name, f"libdevice.{name}({', '.join(inputs)}) -> {shown}: libdevice's __nv_{name}."


def _half_members(namespace, dtype):
    from . import _core
    return tuple((name, f"{namespace}.{name}: numba.cuda's cuda.{namespace}.{name} on {dtype} scalars.")
                 for name in _core.half_functions())


STUBS = {name: Stub(f"cudajit.{name}", doc, members) for name, doc, members in _TABLE}
STUBS["fp16"] = Stub("cudajit.fp16", "Half-precision functions on float16 scalars (numba.cuda's cuda.fp16).",
                     _half_members("fp16", "float16"))
STUBS["bf16"] = Stub("cudajit.bf16", "The same functions on bfloat16 scalars (numba.cuda's cuda.bf16), "
                     "computed in float32 and rounded once.", _half_members("bf16", "bfloat16") + (
                         ("bfloat16_to_float32", "bf16.bfloat16_to_float32(x): x as float32 (exact)."),
                         ("bfloat16_as_int16", "bf16.bfloat16_as_int16(x): x's bits as an int16."),
                         ("bfloat16_as_uint16", "bf16.bfloat16_as_uint16(x): x's bits as a uint16.")))
STUBS["libdevice"] = Stub("cudajit.libdevice", "libdevice's functions by name (numba.cuda.libdevice): "
                          "libdevice.sinf(x), libdevice.sincosf(x) -> (s, c), ...", tuple(_libdevice_members()))
STUBS.update({name: Stub(f"cudajit.{name}", doc) for name, doc in _FUNCTIONS})


def vector_types():
    """numba.cuda's vector types (cudajit.float32x4(x, y, z, w), the alias
    cudajit.float4, ...): constructed from numbers and smaller vectors inside
    kernels, read as .x .y .z .w."""
    from . import _core
    return {name: Stub(f"cudajit.{name}", f"{name}(...): a vector of {canonical.replace('x', ' x ', 1)} "
                       "components (.x .y .z .w), built in kernels from numbers and smaller vectors.")
            for name, canonical in _core.vector_types()}
