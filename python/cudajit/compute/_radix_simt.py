"""radix_sort's fallback, written in cudajit's own kernel language, for
what CUB's kernels (_sort.py) do not take: strided arrays and values of
other sizes than 1, 2, 4, 8 and 16 bytes. cub::DeviceRadixSort's results
(stable, ascending or descending, keys with or without values, a bit
range): least-significant-digit passes of 8 bits. Each pass counts every
tile's digits, scans the (digit, tile) counts with _scan.py's exclusive
scan, and scatters: a tile ranks its keys stably (warp by warp, with
match_any_sync), stages them in shared memory in sorted order, and writes
key i of digit d to offset[d, tile] + its rank among the tile's keys of
digit d. Keys are compared as CUB does: integers by value, floats by the
IEEE order and NaNs by their bits, both through an order-preserving map of
their bits to unsigned integers, -0.0 taken as +0.0 (as CUB's onesweep
does: the two compare equal, and keep their order)."""
import numpy as np

from . import _build as B
from ._iterators import ProxyArray, length, output
from ._ops import OpKind
from ._scan import _Scan
from ._sort_types import DoubleBuffer, SortOrder, check_bits, check_double_buffers

RADIX_BITS = 8
DIGITS = 1 << RADIX_BITS
WARPS = B.BLOCK // 32         # B.BLOCK == DIGITS: the scatter's thread d owns digit d


def _value_type(value_dtype):
    """The values' element type in the kernels: the numpy scalar type, or the
    structured dtype itself for struct values (shared arrays of records)."""
    if value_dtype is None:
        return None
    return value_dtype if value_dtype.names is not None else value_dtype.type


def _keys_per_thread(key_dtype, value_dtype):
    """16, or 8 with an 8-byte key or value: the staged tile (keys and
    values) stays within the 48 KB of static shared memory."""
    wide = np.dtype(key_dtype).itemsize > 4 or (value_dtype is not None and np.dtype(value_dtype).itemsize > 4)
    return 8 if wide else 16


_UNSIGNED = {4: np.uint32, 8: np.uint64}

# The digit of key `k` at `shift`: its bits as an unsigned U, mapped so that
# unsigned order is the keys' order (signed: the sign bit flipped; floats:
# all bits flipped when negative, else the sign bit), reversed for
# DESCENDING.
# (SIGN, ALL, TOP: U constants, the sign bit, all bits, bits - 1.)
_DIGIT = """
def digit_of(k, shift, mask):
    u = k.view(U)
    {order}
    return np.int32((u >> shift) & mask)
"""


def _digit_source(dtype, descending):
    if dtype.kind == "u":
        order = "u = u"
    elif dtype.kind == "i":
        order = "u = u ^ SIGN"
    else:   # -0.0 (SIGN's bits) as +0.0 first, as CUB does
        order = "u = U(0) if u == SIGN else u\n    u = u ^ (ALL if (u >> TOP) != U(0) else SIGN)"
    if descending:
        order += "\n    u = u ^ ALL"
    return _DIGIT.format(order=order)


_COUNT = """
def radix_count(keys, n, counts, shift, mask, num_tiles):
    tid = cuda.threadIdx.x
    hist = cuda.shared.array(DIGITS, np.int32)
    for d in range(tid, DIGITS, BLOCK):
        hist[d] = 0
    cuda.syncthreads()
    base = np.int64(cuda.blockIdx.x) * TILE
    for k in range(IPT):
        i = base + k * BLOCK + tid
        if i < n:
            cuda.atomic.add(hist, digit_of(keys[i], shift, mask), 1)
    cuda.syncthreads()
    for d in range(tid, DIGITS, BLOCK):
        counts[d * num_tiles + cuda.blockIdx.x] = hist[d]
"""

# Stable ranks: warp w holds keys base + w*32*IPT + k*32 + lane; item by
# item, the lanes with the same digit (match_any_sync) rank by lane, and the
# lowest of them adds the group to the warp's count of that digit. Thread d
# then turns digit d's warp counts into offsets within the tile's keys of
# digit d, and a block-wide exclusive sum gives where each digit starts in
# the tile. The keys (and values) are staged in shared memory in their
# sorted order within the tile, and written out from there: consecutive
# threads write consecutive keys of one digit to consecutive places, so the
# writes coalesce (as CUB's onesweep stages them).
_SCATTER = """
def radix_scatter(keys, {vals_in}keys_out, {vals_out}n, offsets, shift, mask, num_tiles):
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    counts = cuda.shared.array((WARPS, DIGITS), np.int32)
    for d in range(tid, WARPS * DIGITS, BLOCK):
        counts[d // DIGITS, d % DIGITS] = 0
    cuda.syncthreads()
    tile_base = np.int64(cuda.blockIdx.x) * TILE
    base = tile_base + warp * (32 * IPT)
    below = np.uint32((1 << lane) - 1)
    ranks = cuda.local.array(IPT, np.int32)
    digits = cuda.local.array(IPT, np.int32)
    for k in range(IPT):
        i = base + k * 32 + lane
        d = DIGITS
        if i < n:
            d = digit_of(keys[i], shift, mask)
        peers = cuda.match_any_sync(0xFFFFFFFF, d)
        before = cuda.popc(peers & below)
        if d < DIGITS:
            ranks[k] = counts[warp, d] + before
        cuda.syncwarp()
        if d < DIGITS and before == 0:
            counts[warp, d] += cuda.popc(peers)
        cuda.syncwarp()
        digits[k] = d
    cuda.syncthreads()
    starts = cuda.shared.array(DIGITS, np.int32)
    outs = cuda.shared.array(DIGITS, np.int64)
    total = np.int32(0)
    for w in range(WARPS):          # BLOCK == DIGITS: thread tid owns digit tid
        c = counts[w, tid]
        counts[w, tid] = total
        total += c
    start = cuda.block.exclusive_sum(total)
    starts[tid] = start
    outs[tid] = np.int64(offsets[tid * num_tiles + cuda.blockIdx.x]) - start
    staged = cuda.shared.array(TILE, K)
    {stage_decl}
    cuda.syncthreads()
    for k in range(IPT):
        i = base + k * 32 + lane
        if i < n:
            d = digits[k]
            at = starts[d] + counts[warp, d] + ranks[k]
            staged[at] = keys[i]
            {stage_value}
    cuda.syncthreads()
    valid = n - tile_base
    for k in range(IPT):
        q = k * BLOCK + tid
        if q < valid:
            key = staged[q]
            at = outs[digit_of(key, shift, mask)] + q
            keys_out[at] = key
            {move_value}
"""


class _RadixSort:
    """The fallback sorter; _sort._RadixSort makes it from types it checked."""

    def __init__(self, key_dtype, value_dtype, order):
        self.key_dtype = np.dtype(key_dtype)
        self.value_dtype = None if value_dtype is None else np.dtype(value_dtype)
        self.order = order
        U = _UNSIGNED[self.key_dtype.itemsize]
        self.ipt = _keys_per_thread(self.key_dtype, self.value_dtype)
        self.tile = B.BLOCK * self.ipt
        env = {"U": U, "DIGITS": DIGITS, "IPT": self.ipt, "TILE": self.tile, "WARPS": WARPS,
               "K": self.key_dtype.type, "V": _value_type(self.value_dtype)}
        bits = self.key_dtype.itemsize * 8
        digit_ns = {"np": np, "U": U, "SIGN": U(1 << (bits - 1)), "ALL": U((1 << bits) - 1), "TOP": U(bits - 1)}
        exec(compile(_digit_source(self.key_dtype, order is SortOrder.DESCENDING),
                     f"<cudajit.compute radix digit {self.key_dtype}>", "exec"), digit_ns)
        from ..decorators import jit
        env["digit_of"] = jit(device=True)(digit_ns["digit_of"])
        key = ("radix", self.key_dtype.str, order.value, self.ipt)
        self.count = B.kernel(key + ("count",), "radix_count", _COUNT, env)
        with_values = self.value_dtype is not None
        source = _SCATTER.format(vals_in="vals, " if with_values else "", vals_out="vals_out, " if with_values else "",
                                 stage_decl="staged_values = cuda.shared.array(TILE, V)" if with_values else "",
                                 stage_value="staged_values[at] = vals[i]" if with_values else "",
                                 move_value="vals_out[at] = staged_values[q]" if with_values else "")
        self.scatter = B.kernel(key + ("scatter", with_values), "radix_scatter", source, env)
        self.scans = {}

    def _scan(self, count_dtype):
        s = self.scans.get(count_dtype)
        if s is None:
            P = ProxyArray(count_dtype)
            s = self.scans[count_dtype] = _Scan(P, P, OpKind.PLUS, np.zeros(1, count_dtype), True)
        return s

    def _layout(self, n):
        tiles = max(1, -(-n // self.tile))
        count_dtype = np.dtype(np.int32 if n < 2**31 else np.int64)
        counts = B.align(DIGITS * tiles * count_dtype.itemsize)
        scan = B.align(self._scan(count_dtype).temp_bytes(DIGITS * tiles))
        keys = B.align(n * self.key_dtype.itemsize)
        vals = B.align(n * self.value_dtype.itemsize) if self.value_dtype is not None else 0
        return tiles, count_dtype, counts, scan, keys, vals

    def temp_bytes(self, n, double_buffer=False):
        if n == 0:
            return 0
        tiles, _, counts, scan, keys, vals = self._layout(n)
        return 2 * counts + scan + (0 if double_buffer else keys + vals)

    def launches(self):
        K = ProxyArray(self.key_dtype)
        shift = _UNSIGNED[self.key_dtype.itemsize](0)
        out = [(self.count, [K, np.int64(0), ProxyArray(np.int32), shift, shift, np.int64(1)])]
        vals = [ProxyArray(self.value_dtype)] if self.value_dtype is not None else []
        for count_dtype in (np.int32, np.int64):
            out.append((self.scatter, [K] + vals + [K] + vals + [np.int64(0), ProxyArray(count_dtype), shift,
                                                                shift, np.int64(1)]))
        return out + self._scan(np.dtype(np.int32)).launches()

    def passes(self, temp, n, begin, end, passes, src, dst, stream, with_values):
        """Runs `passes` digit passes over bits [begin, end) from
        src=(keys, vals) through the destinations `dst(p)` (pairs) of pass p."""
        tiles, count_dtype, counts_b, scan_b, _, _ = self._layout(n)
        counts = B.typed_view(temp, count_dtype, DIGITS * tiles)
        offsets = B.typed_view(temp, count_dtype, DIGITS * tiles, counts_b)
        scan_temp = B.typed_view(temp, np.uint8, scan_b, 2 * counts_b) if scan_b else None
        scan = self._scan(count_dtype)
        U = _UNSIGNED[self.key_dtype.itemsize]
        zero = count_dtype.type(0)
        for p in range(passes):
            low = begin + p * RADIX_BITS
            shift, mask = U(low), U((1 << min(RADIX_BITS, end - low)) - 1)
            keys, vals = src
            B.launch(self.count, tiles, stream, [keys, n, counts, shift, mask, tiles])
            scan.run(scan_temp, counts, offsets, zero, DIGITS * tiles, stream)
            keys_out, vals_out = dst(p)
            args = [keys] + ([vals] if with_values else []) + [keys_out] + ([vals_out] if with_values else [])
            B.launch(self.scatter, tiles, stream, args + [n, offsets, shift, mask, tiles])
            src = (keys_out, vals_out)


def sort(sorter, temp, d_in_keys, d_out_keys, d_in_values, d_out_values, n, begin_bit, end_bit, stream):
    begin, end = check_bits(sorter.key_dtype, begin_bit, end_bit)
    passes = -(-(end - begin) // RADIX_BITS)
    with_values = sorter.value_dtype is not None
    if isinstance(d_in_keys, DoubleBuffer):
        check_double_buffers(d_in_keys, d_in_values, with_values, n)
        kb, vb = d_in_keys, d_in_values
        if n == 0 or passes == 0:
            return
        sel = kb.selector
        src = (kb.d_buffers[sel], vb.d_buffers[sel] if with_values else None)

        def dst(p):
            s = sel ^ ((p + 1) & 1)
            return kb.d_buffers[s], (vb.d_buffers[s] if with_values else None)
        sorter.passes(temp, n, begin, end, passes, src, dst, stream, with_values)
        kb.selector = sel ^ (passes & 1)
        if with_values:
            vb.selector = kb.selector
        return
    keys_out = output(d_out_keys, "d_out_keys")
    if length(keys_out) < n or length(d_in_keys) < n:
        raise ValueError(f"d_in_keys and d_out_keys must hold num_items ({n}) items")
    if with_values:
        vals_out = output(d_out_values, "d_out_values")
        if length(vals_out) < n or length(d_in_values) < n:
            raise ValueError(f"d_in_values and d_out_values must hold num_items ({n}) items")
    else:
        vals_out = None
    if n == 0:
        return
    if passes == 0:   # an empty bit range: a stable sort leaves the order as it is
        from ._transform import unary_transform
        from ._ops import OpKind as K
        unary_transform(d_in_keys, keys_out, K.IDENTITY, n, stream)
        if with_values:
            unary_transform(d_in_values, vals_out, K.IDENTITY, n, stream)
        return
    _, _, counts_b, scan_b, keys_b, _ = sorter._layout(n)
    spare_at = 2 * counts_b + scan_b
    spare_keys = B.typed_view(temp, sorter.key_dtype, n, spare_at)
    spare_vals = B.typed_view(temp, sorter.value_dtype, n, spare_at + keys_b) if with_values else None

    def dst(p):   # the last pass writes d_out; the ones before alternate with the spare
        return (keys_out, vals_out) if (passes - 1 - p) % 2 == 0 else (spare_keys, spare_vals)
    sorter.passes(temp, n, begin, end, passes, (d_in_keys, d_in_values), dst, stream, with_values)
