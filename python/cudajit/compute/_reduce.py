"""reduce_into and segmented_reduce (cub::DeviceReduce and
DeviceSegmentedReduce's model): generated kernels that fold with the user's
operator per thread and combine per block with cub::BlockReduce
(cuda.block.reduce)."""
import enum
import re

import numpy as np

from . import _build as B
from ._iterators import ProxyArray, as_input, as_output, init_value, input_args, input_key, length, output, scalar_init
from ._ops import typed_op

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


def _reduce_source(name, params, item, final):
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
            "    valid = end - start\n" + _COMBINE)
    if final:
        tail = ("    if tid == 0:\n"
                "        if n > 0:\n"
                "            out[0] = op(init, r)\n"
                "        else:\n"
                "            out[0] = init\n")
    else:
        tail = ("    if tid == 0:\n"
                "        out[cuda.blockIdx.x] = r\n")
    return head + body + tail


_SMALL = B.BLOCK * 16   # up to this many items: one block, one launch
_MAX_PARTIALS = 8192    # first-pass blocks at most (132 SMs x 8 blocks on an H100)
_BLOCKS_PER_SM = 16     # first-pass blocks: two waves of 256-thread blocks (tuned on an H100)


class _Reduce:
    """make_reduce_into's object: the two kernels for one input structure,
    item type and operator."""

    def __init__(self, d_in, d_out, op, h_init):
        self.src = src = as_input(d_in, "d_in")
        as_output(d_out, "d_out")
        init = scalar_init(h_init, "h_init")
        self.dtype = init.dtype
        self.op = typed_op(op, 2, self.dtype, "op")
        self.key = ("reduce", src._key(), self.op, self.dtype.str)
        params, (item,), env = B.params_and_items([src])
        env.update(op=self.op, T=self.dtype.type)
        names = [p for p, _ in params]
        self.tiles = B.kernel(self.key + ("tiles",), "reduce_tiles",
                              _reduce_source("reduce_tiles", names, item, False), env)
        self.single = B.kernel(self.key + ("single",), "reduce_single",
                               _reduce_source("reduce_single", names, item, True), env)
        self.partials = B.kernel(("reduce", ("array", self.dtype.str), self.op, self.dtype.str, "single"),
                                 "reduce_single",
                                 _reduce_source("reduce_single", ["in0_a"], "in0_a[i]", True),
                                 {"op": self.op, "T": self.dtype.type})

    def launches(self):
        """(kernel, example arguments) of every kernel it launches (compile_for)."""
        args = [v for _, v in B.params_and_items([self.src])[0]]
        proxy, n, init = ProxyArray(self.dtype), np.int64(0), self.dtype.type(0)
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
        init = init_value(h_init, self.dtype.type)
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
        return value.dtype.str
    return scalar_init(value, what).dtype.str


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


def _segmented_source(params, item, start_item, end_item):
    return ("def segmented_reduce(" + ", ".join(params) + ", out, init):\n"
            "    tid = cuda.threadIdx.x\n"
            "    i = np.int64(cuda.blockIdx.x)\n"
            f"    start = np.int64({start_item})\n"
            f"    end = np.int64({end_item})\n"
            "    i = start + tid\n"
            "    stride = np.int64(BLOCK)\n"
            + _fold(item, 4) +
            "    valid = end - start\n" + _COMBINE +
            "    if tid == 0:\n"
            "        if valid > 0:\n"
            "            out[cuda.blockIdx.x] = op(init, r)\n"
            "        else:\n"
            "            out[cuda.blockIdx.x] = init\n")


class _SegmentedReduce:
    def __init__(self, d_in, d_out, start_offsets_in, end_offsets_in, op, h_init):
        srcs = [as_input(d_in, "d_in"), as_input(start_offsets_in, "start_offsets_in"),
                as_input(end_offsets_in, "end_offsets_in")]
        for s, what in zip(srcs[1:], ("start_offsets_in", "end_offsets_in")):
            if s.value_dtype.kind not in "iu":
                raise TypeError(f"{what} must hold integers, got {s.value_dtype}")
        as_output(d_out, "d_out")
        init = scalar_init(h_init, "h_init")
        self.dtype = init.dtype
        self.op = typed_op(op, 2, self.dtype, "op")
        self.srcs = srcs
        params, (item, start, end), env = B.params_and_items(srcs)
        env.update(op=self.op, T=self.dtype.type)
        key = ("segmented_reduce", tuple(s._key() for s in srcs), self.op, self.dtype.str)
        self.kernel = B.kernel(key, "segmented_reduce",
                               _segmented_source([p for p, _ in params], item, start, end), env)

    def launches(self):
        args = [v for _, v in B.params_and_items(self.srcs)[0]]
        return [(self.kernel, args + [ProxyArray(self.dtype), self.dtype.type(0)])]

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
        args = input_args(d_in) + input_args(start_offsets_in) + input_args(end_offsets_in)
        if n:
            B.launch(self.kernel, n, stream, args + [out, init_value(h_init, self.dtype.type)])


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
