"""inclusive_scan and exclusive_scan (cub::DeviceScan's model): one pass
over the data with decoupled look-back. Each block takes the next tile (an
atomic counter, so that every tile's predecessors are already running),
scans it alone with cub::BlockScan (cuda.block.*_scan; an exclusive scan of
a dense input reduces it first instead), publishes its aggregate, walks
back over its predecessors' published aggregates and inclusive prefixes
until it meets an inclusive one, publishes its own inclusive prefix, and
applies that prefix as the tile goes out. The look-back and the tile
states also serve select and unique_by_key (_select.py)."""
import numpy as np

from . import _build as B
from ._iterators import ProxyArray, _ArrayInput, as_input, as_output, input_args, input_key, length, output
from ._iterators import init_value as to_init
from ._iterators import scalar_init
from ._ops import typed_op
from ._reduce import _cached, _count, init_key
from ._struct_scan import ScanCall

# Tiles of 128 threads x 15 items (tuned on an H100: 0.91 ms for a 2^28
# float32 scan against 0.98 with 256 threads). IPT odd, so that the
# shared-memory transposes are free of bank conflicts.
THREADS = 128
IPT = 15
TILE = THREADS * IPT


def _slot(dtype):
    """Elements between two tiles' published values: one 128-byte line each,
    so that no line a block may hold in L1 is written after it was read."""
    return max(1, 128 // np.dtype(dtype).itemsize)


def packs(dtype):
    """Whether a tile's state fits one 64-bit word: flag << 32 | the value's
    32 bits. Then one atomic publishes both, and readers need no fence (CUB
    packs the same way); 8-byte values keep flags and values apart."""
    return np.dtype(dtype).itemsize == 4


def _pack(flag, value):
    return f"(np.int64({flag}) << 32) | (np.int64({value}.view(np.int32)) & 0xFFFFFFFF)"


# The tile's exclusive prefix into prefix_of[0] (S: the state type; `agg`,
# the tile's aggregate, valid in thread 0 at least). Thread 0 publishes the
# aggregate (flag 1); then the first warp looks back over the 32 preceding
# tiles at once, each lane waiting for its tile's flag, and combines, in
# order, the values from the nearest tile with an inclusive prefix (flag 2)
# on: a masked inclusive scan with shuffles. Without such a tile in the
# window it moves 32 tiles back. Then lane 0 publishes the inclusive prefix.
# Unpacked states: values are read only after their flag was seen through
# an atomic (L2) and a fence, and each is written once, into its own
# 128-byte line, so that no stale L1 line can serve it.
def lookback(prefix, first, packed):
    if packed:
        publish_first = f"cuda.atomic.exch(status, 0, {_pack(2, 'agg')})"
        publish_agg = f"cuda.atomic.exch(status, tile, {_pack(1, 'agg')})"
        publish_incl = f"cuda.atomic.exch(status, tile, {_pack(2, 'op(p, mine)')})"
        read = """w = cuda.atomic.add(status, j, 0)
                while (w >> 32) == 0:
                    w = cuda.atomic.add(status, j, 0)
                flag = w >> 32
                v = np.int32(w & 0xFFFFFFFF).view(S)"""
    else:
        publish_first = """incls[0] = agg
            cuda.threadfence()
            cuda.atomic.exch(status, 0, 2)"""
        publish_agg = """aggs[tile * SLOT] = agg
            cuda.threadfence()
            cuda.atomic.exch(status, tile, 1)"""
        publish_incl = """incls[tile * SLOT] = op(p, mine)
            cuda.threadfence()
            cuda.atomic.exch(status, tile, 2)"""
        read = """flag = cuda.atomic.add(status, j, 0)
                while flag == 0:
                    flag = cuda.atomic.add(status, j, 0)
                cuda.threadfence()
                v = incls[j * SLOT] if flag == 2 else aggs[j * SLOT]"""
    return f"""
    prefix_of = cuda.shared.array(1, S)
    agg_of = cuda.shared.array(1, S)
    if tid == 0:
        agg_of[0] = agg
        if tile == 0:
            {publish_first}
            prefix_of[0] = {first}
        else:
            {publish_agg}
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
                {read}
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
            {publish_incl}
            prefix_of[0] = {prefix}
    cuda.syncthreads()
"""


# The next tile in start order: an atomic counter kept after the flags, so
# that every tile's predecessors are already running.
NEXT_TILE = """
    tid = cuda.threadIdx.x
    tile_of = cuda.shared.array(1, np.int32)
    num_tiles = (n + TILE - 1) // TILE
    if tid == 0:
        tile_of[0] = cuda.atomic.add(status, num_tiles, 1)
    cuda.syncthreads()
    tile = np.int64(tile_of[0])
    base = tile * TILE
"""

# The next tile's items, read coalesced into `buf` and then in the blocked
# arrangement. Past the end: any value (the tile's first); it follows every
# real item.
LOAD_TILE = NEXT_TILE + """
    buf = cuda.shared.array(TILE, T)
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

# The tile is scanned alone first (cub::BlockScan over the blocked items);
# its last value is the aggregate the look-back publishes; the prefix from
# the look-back is applied while the results go out (striped, coalesced).
_SOURCE = """
def scan_tiles({params}, out, n, status, aggs, incls, init):
""" + LOAD_TILE + """
    cuda.block.inclusive_scan(items, op)
    for k in range(IPT):
        buf[tid * IPT + k] = items[k]
    cuda.syncthreads()
    agg = buf[TILE - 1]
{lookback}
    prefix = prefix_of[0]
    for k in range(IPT):
        q = k * BLOCK + tid
        if q < left:
            {store}
"""




def _tile_layout(num_items, dtype):
    tiles = -(-num_items // TILE)
    if packs(dtype):
        return tiles, B.align((tiles + 1) * 8), 0
    status = B.align((tiles + 1) * 4)
    values = B.align(tiles * _slot(dtype) * np.dtype(dtype).itemsize)
    return tiles, status, values


def tile_state_bytes(num_items, dtype):
    """Temporary storage of a look-back pass over num_items: packed, a word
    per tile and the tile counter (int64); else a flag per tile and the
    counter (int32), then the tiles' aggregates and inclusive prefixes of
    `dtype`, one 128-byte line each."""
    if num_items == 0:
        return 0
    _, status, values = _tile_layout(num_items, dtype)
    return status + 2 * values


def tile_states(temp, num_items, dtype, stream):
    """(status, aggregates, inclusive prefixes) views of `temp` (packed: the
    status three times), the status (flags and counter) cleared on `stream`."""
    tiles, status_bytes, values = _tile_layout(num_items, dtype)
    if packs(dtype):
        status = aggs = incls = B.typed_view(temp, np.int64, tiles + 1)
    else:
        status = B.typed_view(temp, np.int32, tiles + 1)
        aggs = B.typed_view(temp, dtype, tiles * _slot(dtype), status_bytes)
        incls = B.typed_view(temp, dtype, tiles * _slot(dtype), status_bytes + values)
    B.zero(status, tiles + 1, stream)
    return status, aggs, incls


# A dense array of the scan's own type: the tile is read and written with
# cub::BlockLoad / BlockStore's warp transposes (coalesced, one warp's
# shared memory at a time, no block-wide barrier), over views that end at
# n (past it, loads give 0: only the last tile's aggregate, which no tile
# reads, sees them). An inclusive scan is scanned first; its aggregate is
# the last item. An exclusive one needs the prefix to scan from: the tile
# is reduced first.
_DENSE = """
def scan_tiles(in0_a, out, n, status, aggs, incls, init):
""" + NEXT_TILE + """
    items = cuda.block.load(in0_a[:n], base, IPT, arrangement="warp_transpose")
{scan}
    cuda.block.store(out[:n], base, items, arrangement="warp_transpose")
"""


def _dense_scan_code(exclusive, has_init, look):
    if exclusive:
        return ("    agg = cuda.block.reduce(items, op)\n" + look +
                "    cuda.block.exclusive_scan(items, op, prefix_of[0])\n")
    apply = "True" if has_init else "tile > 0"
    return ("    cuda.block.inclusive_scan(items, op)\n"
            "    last = cuda.shared.array(1, S)\n"
            "    if tid == BLOCK - 1:\n"
            "        last[0] = items[IPT - 1]\n"
            "    cuda.syncthreads()\n"
            "    agg = last[0]\n" + look +
            f"    if {apply}:\n"
            "        prefix = prefix_of[0]\n"
            "        for k in range(IPT):\n"
            "            items[k] = op(prefix, items[k])\n")


def _store_code(exclusive, has_init):
    """out[base + q] from the tile's own inclusive scan in buf and its prefix."""
    if exclusive:
        return "out[base + q] = prefix if q == 0 else op(prefix, buf[q - 1])"
    if has_init:
        return "out[base + q] = op(prefix, buf[q])"
    return "out[base + q] = buf[q] if tile == 0 else op(prefix, buf[q])"


class _Scan(ScanCall):
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
        dense = isinstance(src, _ArrayInput) and src.contiguous and src.dtype == self.dtype
        if dense:   # CUB's warp-transposed block loads and stores
            source = _DENSE.format(scan=_dense_scan_code(exclusive, self.has_init,
                                                         lookback(prefix, "init", packs(self.dtype))))
        else:
            source = _SOURCE.format(params=", ".join(p for p, _ in params), item=item,
                                    lookback=lookback(prefix, "init", packs(self.dtype)),
                                    store=_store_code(exclusive, self.has_init))
        key = ("scan", src._key(), self.op, self.dtype.str, exclusive, self.has_init, dense)
        self.kernel = B.kernel(key, "scan_tiles", source, env, THREADS)

    def temp_bytes(self, num_items):
        return tile_state_bytes(num_items, self.dtype)

    def launches(self):
        args = [v for _, v in B.params_and_items([self.src])[0]]
        proxy = ProxyArray(self.dtype)
        if packs(self.dtype):
            status = aggs = ProxyArray(np.int64)
        else:
            status, aggs = ProxyArray(np.int32), proxy
        return [(self.kernel, args + [proxy, np.int64(0), status, aggs, aggs, self.dtype.type(0)]),
                (B.zero_kernel(), [status, np.int64(0)])]

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


def _make(d_in, d_out, op, init_value, exclusive):
    """The scan of struct values (_struct_scan.py) or of numbers."""
    from ._struct_scan import struct_scan
    if exclusive and init_value is None:
        raise ValueError("exclusive_scan needs an init_value")
    return struct_scan(d_in, d_out, op, init_value, exclusive) or _Scan(d_in, d_out, op, init_value, exclusive)


def make_inclusive_scan(d_in=None, d_out=None, op=None, init_value=None, **kwargs):
    return _make(d_in, d_out, op, init_value, False)


def make_exclusive_scan(d_in=None, d_out=None, op=None, init_value=None, **kwargs):
    return _make(d_in, d_out, op, init_value, True)


def _run(d_in, d_out, op, init_value, num_items, stream, exclusive):
    key = ("scan", input_key(d_in), op, _init_key(init_value), exclusive)
    obj = _cached(_make, key, d_in, d_out, op, init_value, exclusive)
    n = _count(num_items)
    need = obj.temp_bytes(n)
    obj.run(B.scratch(need, stream) if need else None, d_in, d_out, init_value, n, stream)


def inclusive_scan(d_in=None, d_out=None, op=None, init_value=None, num_items=None, stream=None, **kwargs):
    """d_out[i] = init op d_in[0] op ... op d_in[i] (without init_value: from d_in[0])."""
    _run(d_in, d_out, op, init_value, num_items, stream, False)


def exclusive_scan(d_in=None, d_out=None, op=None, init_value=None, num_items=None, stream=None, **kwargs):
    """d_out[0] = init; d_out[i] = init op d_in[0] op ... op d_in[i-1]."""
    _run(d_in, d_out, op, init_value, num_items, stream, True)
