"""inclusive_scan and exclusive_scan (cub::DeviceScan's model): one pass
over the data with decoupled look-back. Each block takes the next tile (an
atomic counter, so that every tile's predecessors are already running),
publishes its aggregate, walks back over its predecessors' published
aggregates and inclusive prefixes until it meets an inclusive one, publishes
its own inclusive prefix, and scans its tile with cub::BlockScan
(cuda.block.*_scan) from that prefix."""
import numpy as np

from . import _build as B
from ._iterators import init_value as to_init
from ._iterators import input_args, input_key, length, output, ProxyArray, as_input, as_output, scalar_init
from ._ops import typed_op
from ._reduce import _cached, _check_temp, _count, init_key

IPT = 15   # items per thread: odd, so that the shared-memory transposes are free of bank conflicts
TILE = B.BLOCK * IPT


def _slot(dtype):
    """Elements between two tiles' published values: one 128-byte line each,
    so that no line a block may hold in L1 is written after it was read."""
    return max(1, 128 // np.dtype(dtype).itemsize)


# After `agg = cuda.block.reduce(...)` (valid in thread 0): the tile's
# exclusive prefix into prefix_of[0] (S: the state type). Thread 0 publishes
# the aggregate (flag 1); then the first warp looks back over the 32
# preceding tiles at once, each lane waiting for its tile's flag, and
# combines, in order, the values from the nearest tile with an inclusive
# prefix (flag 2) on: a masked inclusive scan with shuffles. Without such a
# tile in the window it moves 32 tiles back. Then lane 0 publishes the
# inclusive prefix. Values are read only after their flag was seen through
# an atomic (L2) and a fence; each is written once, into its own 128-byte
# line, so that no stale L1 line can serve it.
def lookback(prefix, first):
    return f"""
    prefix_of = cuda.shared.array(1, S)
    agg_of = cuda.shared.array(1, S)
    if tid == 0:
        agg_of[0] = agg
        if tile == 0:
            incls[0] = agg
            cuda.threadfence()
            cuda.atomic.exch(status, 0, 2)
            prefix_of[0] = {first}
        else:
            aggs[tile * SLOT] = agg
            cuda.threadfence()
            cuda.atomic.exch(status, tile, 1)
    cuda.syncthreads()
    if tile > 0 and tid < 32:
        mine = agg_of[0]
        window = tile
        have = False
        p = mine
        while True:
            j = window - 32 + tid
            flag = 1
            v = mine
            if j >= 0:
                flag = cuda.atomic.add(status, j, 0)
                while flag == 0:
                    flag = cuda.atomic.add(status, j, 0)
                cuda.threadfence()
                v = incls[j * SLOT] if flag == 2 else aggs[j * SLOT]
            found = cuda.ballot_sync(0xFFFFFFFF, flag == 2)
            lowest = 31 - cuda.clz(found) if found != 0 else 0
            step = 1
            while step < 32:
                other = cuda.shfl_up_sync(0xFFFFFFFF, v, step)
                if tid - step >= lowest:
                    v = op(other, v)
                step *= 2
            w = cuda.shfl_sync(0xFFFFFFFF, v, 31)
            p = op(w, p) if have else w
            have = True
            if found != 0:
                break
            window -= 32
        if tid == 0:
            incls[tile * SLOT] = op(p, mine)
            cuda.threadfence()
            cuda.atomic.exch(status, tile, 2)
            prefix_of[0] = {prefix}
    cuda.syncthreads()
"""


# The next tile in start order (an atomic counter kept after the flags) and
# its items, read coalesced into `buf` and then in the blocked arrangement.
# Past the end: any value (the tile's first); it follows every real item.
LOAD_TILE = """
    tid = cuda.threadIdx.x
    tile_of = cuda.shared.array(1, np.int32)
    buf = cuda.shared.array(TILE, T)
    num_tiles = (n + TILE - 1) // TILE
    if tid == 0:
        tile_of[0] = cuda.atomic.add(status, num_tiles, 1)
    cuda.syncthreads()
    tile = np.int64(tile_of[0])
    base = tile * TILE
    left = n - base
    for k in range(IPT):
        i = base + k * BLOCK + tid
        if k * BLOCK + tid < left:
            buf[k * BLOCK + tid] = T({item})
    cuda.syncthreads()
    items = cuda.local.array(IPT, T)
    for k in range(IPT):
        j = tid * IPT + k
        items[k] = buf[j] if j < left else buf[0]
    cuda.syncthreads()
"""

_SOURCE = """
def scan_tiles({params}, out, n, status, aggs, incls, init):
""" + LOAD_TILE + """
    agg = cuda.block.reduce(items, op)
{lookback}
    {scan}
    for k in range(IPT):
        buf[tid * IPT + k] = items[k]
    cuda.syncthreads()
    for k in range(IPT):
        i = base + k * BLOCK + tid
        if k * BLOCK + tid < left:
            out[i] = buf[k * BLOCK + tid]
"""

_ZERO = """
def scan_status_clear(status, count):
    i = cuda.grid(1)
    while i < count:
        status[i] = 0
        i += cuda.gridsize(1)
"""


def clear_kernel():
    return B.kernel(("scan_status_clear",), "scan_status_clear", _ZERO, {})


def _tile_layout(num_items, dtype):
    tiles = -(-num_items // TILE)
    status = B.align((tiles + 1) * 4)
    values = B.align(tiles * _slot(dtype) * np.dtype(dtype).itemsize)
    return tiles, status, values


def tile_state_bytes(num_items, dtype):
    """Temporary storage of a look-back pass over num_items: a flag per tile
    and the tile counter (int32), then the tiles' aggregates and inclusive
    prefixes of `dtype`, one 128-byte line each."""
    if num_items == 0:
        return 0
    _, status, values = _tile_layout(num_items, dtype)
    return status + 2 * values


def tile_states(temp, num_items, dtype, stream):
    """(status, aggregates, inclusive prefixes) views of `temp`, the status
    (flags and counter) cleared on `stream`."""
    tiles, status_bytes, values = _tile_layout(num_items, dtype)
    status = B.typed_view(temp, np.int32, tiles + 1)
    aggs = B.typed_view(temp, dtype, tiles * _slot(dtype), status_bytes)
    incls = B.typed_view(temp, dtype, tiles * _slot(dtype), status_bytes + values)
    B.launch(clear_kernel(), min(-(-(tiles + 1) // B.BLOCK), 1024), stream, [status, np.int64(tiles + 1)])
    return status, aggs, incls


def _scan_code(exclusive, has_init):
    if exclusive:
        return "cuda.block.exclusive_scan(items, op, prefix_of[0])"
    if has_init:
        return "cuda.block.inclusive_scan(items, op, initial=prefix_of[0])"
    return ("if tile == 0:\n        cuda.block.inclusive_scan(items, op)\n"
            "    else:\n        cuda.block.inclusive_scan(items, op, initial=prefix_of[0])")


class _Scan:
    def __init__(self, d_in, d_out, op, init_value, exclusive):
        self.src = src = as_input(d_in, "d_in")
        as_output(d_out, "d_out")
        if init_value is None and exclusive:
            raise ValueError("exclusive_scan needs an init_value")
        self.has_init = init_value is not None
        self.dtype = scalar_init(init_value, "init_value").dtype if self.has_init else src.value_dtype
        self.exclusive = exclusive
        self.op = typed_op(op, 2, self.dtype, "op")
        params, (item,), env = B.params_and_items([src])
        env.update(op=self.op, T=self.dtype.type, S=self.dtype.type, IPT=IPT, TILE=TILE, SLOT=_slot(self.dtype))
        prefix = "op(init, p)" if self.has_init else "p"
        source = _SOURCE.format(params=", ".join(p for p, _ in params), item=item,
                                lookback=lookback(prefix, "init"), scan=_scan_code(exclusive, self.has_init))
        key = ("scan", src._key(), self.op, self.dtype.str, exclusive, self.has_init)
        self.kernel = B.kernel(key, "scan_tiles", source, env)
        self.clear = clear_kernel()

    def temp_bytes(self, num_items):
        return tile_state_bytes(num_items, self.dtype)

    def launches(self):
        args = [v for _, v in B.params_and_items([self.src])[0]]
        proxy = ProxyArray(self.dtype)
        return [(self.kernel, args + [proxy, np.int64(0), ProxyArray(np.int32), proxy, proxy,
                                      self.dtype.type(0)]),
                (self.clear, [ProxyArray(np.int32), np.int64(0)])]

    def __call__(self, temp_storage=None, d_in=None, d_out=None, op=None, init_value=None, num_items=None,
                 stream=None):
        n = _count(num_items)
        need = self.temp_bytes(n)
        if temp_storage is None:
            return need
        _check_temp(temp_storage, need)
        self.run(temp_storage, d_in, d_out, init_value, n, stream)
        return need

    def run(self, temp, d_in, d_out, init_value, n, stream):
        if n == 0:
            return
        out = output(d_out, "d_out")
        if length(out) < n:
            raise ValueError(f"d_out holds {length(out)} items, num_items is {n}")
        init = to_init(init_value, self.dtype.type) if self.has_init else self.dtype.type(0)
        status, aggs, incls = tile_states(temp, n, self.dtype, stream)
        args = input_args(d_in)
        B.launch(self.kernel, status.size - 1, stream, args + [out, np.int64(n), status, aggs, incls, init])


def _init_key(value):
    return None if value is None else init_key(value, "init_value")


def make_inclusive_scan(d_in=None, d_out=None, op=None, init_value=None, **kwargs):
    return _Scan(d_in, d_out, op, init_value, False)


def make_exclusive_scan(d_in=None, d_out=None, op=None, init_value=None, **kwargs):
    return _Scan(d_in, d_out, op, init_value, True)


def _run(d_in, d_out, op, init_value, num_items, stream, exclusive):
    key = ("scan", input_key(d_in), op, _init_key(init_value), exclusive)
    obj = _cached(_Scan, key, d_in, d_out, op, init_value, exclusive)
    n = _count(num_items)
    need = obj.temp_bytes(n)
    obj.run(B.scratch(need, stream) if need else None, d_in, d_out, init_value, n, stream)


def inclusive_scan(d_in=None, d_out=None, op=None, init_value=None, num_items=None, stream=None, **kwargs):
    """d_out[i] = init op d_in[0] op ... op d_in[i] (without init_value: from d_in[0])."""
    _run(d_in, d_out, op, init_value, num_items, stream, False)


def exclusive_scan(d_in=None, d_out=None, op=None, init_value=None, num_items=None, stream=None, **kwargs):
    """d_out[0] = init; d_out[i] = init op d_in[0] op ... op d_in[i-1]."""
    _run(d_in, d_out, op, init_value, num_items, stream, True)
