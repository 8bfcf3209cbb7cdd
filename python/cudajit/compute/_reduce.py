"""reduce_into and segmented_reduce (cub::DeviceReduce and
DeviceSegmentedReduce's model): generated kernels that fold with the user's
operator per thread and combine per block with cub::BlockReduce
(cuda.block.reduce)."""
import enum
import re

import numpy as np

from . import _build as B
from ._iterators import ProxyArray, as_input, as_output, init_value, input_args, input_key, length, output, scalar_init
from ._ops import device_op, typed_op
from ._struct import flat_value, init_struct, is_struct_init, struct_op, zero_flat

# A block whose threads do not all hold an item (the last, short, block)
# combines in shared memory, only the threads that do: cuda.compute's
# operators need no identity element.
_COMBINE = """
    if valid >= BLOCK:
        r = cuda.block.reduce(acc, op)
    else:
        s = cuda.shared.array(BLOCK, T)
        s[tid] = acc
        cuda.syncthreads()
        w = BLOCK // 2
        while w > 0:
            if tid < w and tid + w < valid:
                s[tid] = op(s[tid], s[tid + w])
            cuda.syncthreads()
            if valid > w:
                valid = w
            w //= 2
        r = s[0]
"""

# Struct items: CUB's block reduction takes numbers only, so every block
# combines in shared memory, field by field (put/get: records of the
# struct's dtype). Not tuned: struct reductions are for correctness first.
_COMBINE_STRUCT = """
    if valid > BLOCK:
        valid = BLOCK
    s = cuda.shared.array(BLOCK, REC)
    put(s, tid, acc)
    cuda.syncthreads()
    w = BLOCK // 2
    while w > 0:
        if tid < w and tid + w < valid:
            put(s, tid, op(get(s, tid), get(s, tid + w)))
        cuda.syncthreads()
        if valid > w:
            valid = w
        w //= 2
    r = get(s, 0)
"""


def _store(array, index, value, struct):
    """The statement array[index] = value (a struct: field by field)."""
    return f"put({array}, {index}, {value})" if struct else f"{array}[{index}] = {value}"


def _struct_source(source):
    """A kernel of struct items: its `init` parameter (the fields, flat)
    made a struct value first."""
    head, rest = source.split("\n", 1)
    return head + "\n    init = unflat(init)\n" + rest


def struct_env(S):
    """Globals of a struct kernel: T builds the struct from an item (record,
    tuple, struct), REC is its records' dtype."""
    from ._struct import helpers
    h = helpers(S)
    return {"T": h["conv"], "put": h["put"], "get": h["get"], "unflat": h["unflat"], "REC": S.dtype}


_UNROLL = 4   # items a thread loads before it combines them: loads in flight hide the memory latency


def _fold(item, unroll=None):
    """Each thread folds items i, i + stride, ... below `end` into `acc`
    (which keeps `init` where the thread has none): `unroll` loads at a
    time, combined pairwise; the first full batch starts the fold."""
    unroll = unroll or _UNROLL

    def at(k):
        return re.sub(r"\bi\b", f"(i + {k} * stride)" if k else "i", item)
    loads = "".join(f"            v{k} = T({at(k)})\n" for k in range(unroll))
    vals = [f"v{k}" for k in range(unroll)]
    combine = ""
    level = 0
    while len(vals) > 1:
        nxt = []
        for a in range(0, len(vals), 2):
            name = f"w{level}_{a // 2}"
            combine += f"            {name} = op({vals[a]}, {vals[a + 1]})\n"
            nxt.append(name)
        vals, level = nxt, level + 1
    return ("    acc = init\n"
            f"    if i + {unroll - 1} * stride < end:\n"
            + loads.replace("            ", "        ") + combine.replace("            ", "        ") +
            f"        acc = {vals[0]}\n"
            f"        i += {unroll} * stride\n"
            f"        while i + {unroll - 1} * stride < end:\n"
            + loads + combine +
            f"            acc = op(acc, {vals[0]})\n"
            f"            i += {unroll} * stride\n"
            "    elif i < end:\n"
            f"        acc = T({item})\n"
            "        i += stride\n"
            "    while i < end:\n"
            f"        acc = op(acc, T({item}))\n"
            "        i += stride\n")


def _reduce_source(name, params, item, final, struct=False):
    """final: one block over all n items (grid-stride), the result with the
    initial value into out[0]. Else block b folds its own contiguous chunk
    [b * chunk, (b + 1) * chunk) (the chunk a multiple of BLOCK * _UNROLL):
    each block streams one region of memory, as CUB's even-share does, and
    writes its partial to out[b]."""
    if final:
        head = f"def {name}({', '.join(params)}, n, out, init):\n"
        where = ("    i = np.int64(cuda.blockIdx.x) * BLOCK + tid\n"
                 "    stride = np.int64(cuda.gridDim.x) * BLOCK\n"
                 "    start = np.int64(cuda.blockIdx.x) * BLOCK\n"
                 "    end = n\n")
    else:
        head = f"def {name}({', '.join(params)}, n, out, init, chunk):\n"
        where = ("    start = np.int64(cuda.blockIdx.x) * chunk\n"
                 "    end = min(start + chunk, n)\n"
                 "    i = start + tid\n"
                 "    stride = np.int64(BLOCK)\n")
    body = ("    tid = cuda.threadIdx.x\n" + where + _fold(item) +
            "    valid = end - start\n" + (_COMBINE_STRUCT if struct else _COMBINE))
    if final:
        tail = ("    if tid == 0:\n"
                "        if n > 0:\n"
                f"            {_store('out', 0, 'op(init, r)', struct)}\n"
                "        else:\n"
                f"            {_store('out', 0, 'init', struct)}\n")
    else:
        tail = ("    if tid == 0:\n"
                f"        {_store('out', 'cuda.blockIdx.x', 'r', struct)}\n")
    source = head + body + tail
    return _struct_source(source) if struct else source


_SMALL = B.BLOCK * 16   # up to this many items: one block, one launch
_MAX_PARTIALS = 8192    # first-pass blocks at most (132 SMs x 8 blocks on an H100)
_BLOCKS_PER_SM = 16     # first-pass blocks: two waves of 256-thread blocks (tuned on an H100)


class _Reduce:
    """make_reduce_into's object: the two kernels for one input structure,
    item type and operator."""

    def __init__(self, d_in, d_out, op, h_init):
        self.src = src = as_input(d_in, "d_in", tuples=True)
        self.struct = S = item_struct(h_init, src, "h_init")
        check_output(d_out, "d_out", S)
        self.dtype, self.op, tkey = _reduction_op(op, h_init, S)
        self.key = ("reduce", src._key(), self.op, tkey)
        params, (item,), env = B.params_and_items([src])
        env.update(op=self.op, T=self.dtype.type)
        senv = {} if S is None else struct_env(S)
        env.update(senv)
        names = [p for p, _ in params]
        st = S is not None
        self.tiles = B.kernel(self.key + ("tiles",), "reduce_tiles",
                              _reduce_source("reduce_tiles", names, item, False, st), env)
        self.single = B.kernel(self.key + ("single",), "reduce_single",
                               _reduce_source("reduce_single", names, item, True, st), env)
        self.partials = B.kernel(("reduce", ("array", self.dtype.str), self.op, tkey, "single"),
                                 "reduce_single",
                                 _reduce_source("reduce_single", ["in0_a"], "in0_a[i]", True, st),
                                 {"op": self.op, "T": self.dtype.type, **senv})

    def launches(self):
        """(kernel, example arguments) of every kernel it launches (compile_for)."""
        args = [v for _, v in B.params_and_items([self.src])[0]]
        proxy, n = ProxyArray(self.dtype), np.int64(0)
        init = self.dtype.type(0) if self.struct is None else zero_flat(self.struct)
        return [(self.tiles, args + [n, proxy, init, n]), (self.single, args + [n, proxy, init]),
                (self.partials, [proxy, n, proxy, init])]

    def _chunks(self, n):
        """(blocks, items per block) of the first pass: about _BLOCKS_PER_SM
        blocks per SM, each chunk a whole number of BLOCK * _UNROLL items."""
        step = B.BLOCK * _UNROLL
        blocks = min(-(-n // step), B.sm_count() * _BLOCKS_PER_SM, _MAX_PARTIALS)
        chunk = -(-n // blocks)
        chunk = -(-chunk // step) * step
        return -(-n // chunk), chunk

    def temp_bytes(self, num_items):
        """The partials of the first pass: bounded by _MAX_PARTIALS, not by
        this GPU's size, so that the answer needs no GPU and holds on any."""
        if num_items <= _SMALL:
            return 0
        return B.align(min(-(-num_items // B.BLOCK), _MAX_PARTIALS) * self.dtype.itemsize)

    def __call__(self, temp_storage=None, d_in=None, d_out=None, num_items=None, op=None, h_init=None,
                 stream=None):
        n = _count(num_items)
        return B.two_phase(temp_storage, self.temp_bytes(n),
                           lambda temp: self.run(temp, d_in, d_out, n, h_init, stream))

    def run(self, temp, d_in, d_out, num_items, h_init, stream):
        """One reduction; `temp` None: the per-stream scratch buffer. This is
        the path of every call: kept lean (host overhead, issue 17)."""
        n = _count(num_items)
        out = output(d_out, "d_out")
        if out.shape[0] < 1:
            raise ValueError("d_out must hold at least one item")
        if self.struct is None:   # the number path stays as lean as it was (host overhead)
            init = init_value(h_init, self.dtype.type)
        else:
            check_output(out, "d_out", self.struct)
            init = flat_value(h_init, self.struct)
        args = input_args(d_in)
        if n <= _SMALL:
            B.launch(self.single, 1, stream, args + [n, out, init])
            return
        grid, chunk = self._chunks(n)
        if temp is None:
            temp = B.scratch(self.temp_bytes(n), stream)
        partials = B.typed_view(temp, self.dtype, grid)
        B.launch(self.tiles, grid, stream, args + [n, partials, init, chunk])
        B.launch(self.partials, 1, stream, [partials, grid, out, init])


def _reduction_op(op, h_init, S):
    """(the values' dtype, the compiled operator, the type part of the cache
    key) of a reduction: numbers of h_init's type, or struct S's values."""
    if S is None:
        dtype = scalar_init(h_init, "h_init").dtype
        return dtype, typed_op(op, 2, dtype, "op"), dtype.str
    return S.dtype, struct_op(op_name(op), device_op(op, 2, "op"), [S.dtype] * 2, S, "op"), S


def _count(num_items):
    if type(num_items) is int and num_items >= 0:
        return num_items
    if num_items is None:
        raise TypeError("num_items is required")
    n = int(num_items)
    if n < 0:
        raise ValueError(f"num_items must be >= 0, got {n}")
    return n


_made = {}


def _cached(cls, key, *args):
    found = _made.get(key)
    if found is None:
        found = _made[key] = cls(*args)
    return found


def init_key(value, what="h_init"):
    """The dtype an initial value gives the algorithm (its part of a cache key)."""
    if type(value) is np.ndarray:
        return value.dtype if value.dtype.names else value.dtype.str
    if is_struct_init(value):
        return init_struct(value)
    return scalar_init(value, what).dtype.str


def op_name(op):
    return op.name if hasattr(op, "name") and not callable(op) else getattr(op, "__qualname__", repr(op))


def item_struct(init, src, what):
    """The struct type of an algorithm's values (None: numbers): the initial
    value's, else (no initial value) the input's items'. Struct items with a
    number initial value are refused."""
    from ._struct import struct_of
    items = np.dtype(src.value_dtype)
    if init is not None and is_struct_init(init):
        S = init_struct(init)
        if items.names and len(items.names) != len(S._field_types):
            raise TypeError(f"{what}: a {S.__name__} has {len(S._field_types)} fields, the items {len(items.names)} "
                            f"({items})")
        return S
    if init is None:
        return struct_of(items) if items.names else None
    if items.names:
        raise TypeError(f"{what}: the items are structs or tuples ({items}), so the initial value must be a "
                        "struct too: a gpu_struct instance or a numpy record (np.void) of its dtype")
    return None


def _same_shape(dtype, S):
    """Whether records of `dtype` take S's values field by field, by position
    (nested structs in nested records)."""
    if not dtype.names or len(dtype.names) != len(S._field_types):
        return False
    for name, t in zip(dtype.names, S._field_types):
        field = dtype.fields[name][0]
        if isinstance(t, type) != bool(field.names) or field.shape:
            return False
        if isinstance(t, type) and not _same_shape(field, t):
            return False
    return True


def check_output(d_out, what, S):
    """An output array, its dtype the struct's (a struct algorithm) or not a
    structured one (a number algorithm)."""
    out = as_output(d_out, what)
    dtype = np.dtype(out.dtype)
    if S is not None and dtype != S.dtype and not _same_shape(dtype, S):
        raise TypeError(f"{what} holds {dtype}, the values are {S.__name__} structs: make it with "
                        f"{S.__name__}.dtype ({S.dtype})")
    if S is None and dtype.names:
        raise TypeError(f"{what} holds structs ({dtype}), the values are numbers (struct results need struct "
                        "items or a struct initial value: a gpu_struct instance)")
    return out


def make_reduce_into(d_in=None, d_out=None, op=None, h_init=None, **kwargs):
    """A reusable reduction for these array/iterator types, operator and
    initial value type: ``obj(temp_storage=None, ...)`` returns the bytes of
    temporary storage it needs; with storage it reduces."""
    _check_determinism(kwargs)
    return _Reduce(d_in, d_out, op, h_init)


class Determinism(enum.Enum):
    """cuda.compute's determinism levels of reduce_into (determinism=)."""
    NOT_GUARANTEED = 0
    RUN_TO_RUN = 1
    GPU_TO_GPU = 2


def _check_determinism(kwargs):
    """The reduction's order of operations is fixed for a GPU (its SM count
    sets the first pass's chunks): run to run, not GPU to GPU."""
    level = kwargs.get("determinism", Determinism.RUN_TO_RUN)
    if level is Determinism.GPU_TO_GPU:
        raise ValueError("reduce_into: determinism=Determinism.GPU_TO_GPU is not supported (cudajit's reduction "
                         "is deterministic run to run on one GPU; its order depends on the GPU's SM count)")
    if not isinstance(level, Determinism):
        raise TypeError(f"determinism must be a cudajit.compute.Determinism, got {level!r}")


def reduce_into(d_in=None, d_out=None, op=None, num_items=None, h_init=None, stream=None, **kwargs):
    """d_out[0] = h_init op d_in[0] op ... op d_in[num_items-1] (cub::DeviceReduce::Reduce)."""
    if kwargs:
        _check_determinism(kwargs)
    key = (input_key(d_in), op, h_init.dtype if type(h_init) is np.ndarray else init_key(h_init))
    obj = _made.get(key)
    if obj is None:
        obj = _made[key] = _Reduce(d_in, d_out, op, h_init)
    obj.run(None, d_in, d_out, num_items, h_init, stream)


def _segmented_source(params, item, start_item, end_item, struct=False):
    source = ("def segmented_reduce(" + ", ".join(params) + ", out, init):\n"
              "    tid = cuda.threadIdx.x\n"
              "    i = np.int64(cuda.blockIdx.x)\n"
              f"    start = np.int64({start_item})\n"
              f"    end = np.int64({end_item})\n"
              "    i = start + tid\n"
              "    stride = np.int64(BLOCK)\n"
              + _fold(item, 4) +
              "    valid = end - start\n" + (_COMBINE_STRUCT if struct else _COMBINE) +
              "    if tid == 0:\n" +
              ("        if end > start:\n" if struct else "        if valid > 0:\n"))
    source += (f"            {_store('out', 'cuda.blockIdx.x', 'op(init, r)', struct)}\n"
               "        else:\n"
               f"            {_store('out', 'cuda.blockIdx.x', 'init', struct)}\n")
    return _struct_source(source) if struct else source


class _SegmentedReduce:
    def __init__(self, d_in, d_out, start_offsets_in, end_offsets_in, op, h_init):
        srcs = [as_input(d_in, "d_in", tuples=True), as_input(start_offsets_in, "start_offsets_in"),
                as_input(end_offsets_in, "end_offsets_in")]
        for s, what in zip(srcs[1:], ("start_offsets_in", "end_offsets_in")):
            if s.value_dtype.kind not in "iu":
                raise TypeError(f"{what} must hold integers, got {s.value_dtype}")
        self.struct = S = item_struct(h_init, srcs[0], "h_init")
        check_output(d_out, "d_out", S)
        self.dtype, self.op, tkey = _reduction_op(op, h_init, S)
        self.srcs = srcs
        params, (item, start, end), env = B.params_and_items(srcs)
        env.update(op=self.op, T=self.dtype.type)
        if S is not None:
            env.update(struct_env(S))
        key = ("segmented_reduce", tuple(s._key() for s in srcs), self.op, tkey)
        self.kernel = B.kernel(key, "segmented_reduce",
                               _segmented_source([p for p, _ in params], item, start, end, S is not None), env)

    def _init(self, h_init):
        return init_value(h_init, self.dtype.type) if self.struct is None else flat_value(h_init, self.struct)

    def launches(self):
        args = [v for _, v in B.params_and_items(self.srcs)[0]]
        init = self.dtype.type(0) if self.struct is None else zero_flat(self.struct)
        return [(self.kernel, args + [ProxyArray(self.dtype), init])]

    def __call__(self, temp_storage=None, d_in=None, d_out=None, num_segments=None, start_offsets_in=None,
                 end_offsets_in=None, op=None, h_init=None, max_segment_size=None, stream=None):
        return B.two_phase(temp_storage, 0, lambda _: self.run(d_in, d_out, num_segments, start_offsets_in,
                                                               end_offsets_in, h_init, stream))

    def run(self, d_in, d_out, num_segments, start_offsets_in, end_offsets_in, h_init, stream):
        n = _count(num_segments)
        if n > 2**31 - 1:
            raise ValueError(f"num_segments must be < 2**31, got {n}")
        out = output(d_out, "d_out")
        if length(out) < n:
            raise ValueError(f"d_out holds {length(out)} items, num_segments is {n}")
        if self.struct is not None:
            check_output(out, "d_out", self.struct)
        args = input_args(d_in) + input_args(start_offsets_in) + input_args(end_offsets_in)
        if n:
            B.launch(self.kernel, n, stream, args + [out, self._init(h_init)])


def make_segmented_reduce(d_in=None, d_out=None, start_offsets_in=None, end_offsets_in=None, op=None,
                          h_init=None, **kwargs):
    """A reusable segmented reduction (no temporary storage: 0 bytes)."""
    return _SegmentedReduce(d_in, d_out, start_offsets_in, end_offsets_in, op, h_init)


def segmented_reduce(d_in=None, d_out=None, start_offsets_in=None, end_offsets_in=None, op=None, h_init=None,
                     num_segments=None, max_segment_size=None, stream=None, **kwargs):
    """d_out[s] = h_init op d_in[start[s]] op ... op d_in[end[s]-1]; an empty
    segment gives h_init (cub::DeviceSegmentedReduce::Reduce)."""
    key = ("segmented_reduce", input_key(d_in), input_key(start_offsets_in), input_key(end_offsets_in), op,
           init_key(h_init))
    obj = _cached(_SegmentedReduce, key, d_in, d_out, start_offsets_in, end_offsets_in, op, h_init)
    obj.run(d_in, d_out, num_segments, start_offsets_in, end_offsets_in, h_init, stream)
