"""merge_sort (cub::DeviceMergeSort's results: a stable sort of keys, and
items with them, under a user comparison `op(a, b)`: a goes before b).

Each block sorts a tile of TILE items in shared memory, then passes over
the whole sequence merge runs of TILE, 2 TILE, ... items pairwise until
one run is left. Both levels merge by rank: an item's place in the merged
run is its place in its own run plus the number of items of the other run
that go before it, found by binary search (for an item of the left run,
the right run's items that op puts strictly before it; for an item of the
right run, the left run's items it does not go before). Equal items thus
keep their order, and every item finds its place independently, with no
merge-path partitioning: O(n log^2 n) comparisons, simple and stable.
`op` must be a strict weak order (as for CUB): with NaN keys under `<` the
ranks may collide."""
import numpy as np

from . import _build as B
from ._iterators import ProxyArray, array_dtype, as_input, as_output, input_args, input_key, length, output
from ._ops import device_op
from ._struct import helpers, struct_of
from ._reduce import _cached, _count

IPT = 4                    # items per thread of the block sort
TILE = B.BLOCK * IPT       # items a block sorts in shared memory

# The place of item x (at j) when runs [start, mid) and [mid, end) of `s`
# are merged ({at}: how an index reads `s`).
_RANK = """
        if j < mid:
            lo = mid
            hi = end
            while lo < hi:
                m = (lo + hi) // 2
                if op({at_m}, x):
                    lo = m + 1
                else:
                    hi = m
            pos = j + (lo - mid)
        else:
            lo = start
            hi = mid
            while lo < hi:
                m = (lo + hi) // 2
                if not op(x, {at_m}):
                    lo = m + 1
                else:
                    hi = m
            pos = (j - mid) + lo"""

_BLOCK_SORT = """
def merge_block_sort({params}, out_keys, {out_items}n):
    tid = cuda.threadIdx.x
    base = cuda.blockIdx.x * TILE
    left = min(TILE, n - base)
    sk = cuda.shared.array(2 * TILE, KT)
    {shared_items}
    for k in range(IPT):
        j = tid + k * BLOCK
        if j < left:
            i = base + j
            sk[j] = {key_item}
            {load_item}
    cuda.syncthreads()
    src = 0
    w = 1
    while w < left:
        dst = TILE - src
        for k in range(IPT):
            j = tid + k * BLOCK
            if j < left:
                start = (j // (2 * w)) * (2 * w)
                mid = min(start + w, left)
                end = min(start + 2 * w, left)
                x = sk[src + j]
{rank_shared}
                sk[dst + pos] = x
                {move_shared}
        cuda.syncthreads()
        src = dst
        w *= 2
    for k in range(IPT):
        j = tid + k * BLOCK
        if j < left:
            out_keys[base + j] = sk[src + j]
            {store_item}
"""

_MERGE_PASS = """
def merge_pass(src_keys, {src_items}dst_keys, {dst_items}n, w):
    j = cuda.grid(1)
    while j < n:
        start = (j // (2 * w)) * (2 * w)
        mid = min(start + w, n)
        end = min(start + 2 * w, n)
        x = src_keys[j]
{rank_global}
        dst_keys[pos] = x
        {move_global}
        j += cuda.gridsize(1)
"""


def _indent(text, spaces):
    return "\n".join(" " * spaces + line[8:] if line.strip() else line for line in text.strip("\n").split("\n"))


class _MergeSort:
    def __init__(self, d_in_keys, d_in_items, d_out_keys, d_out_items, op):
        keys = as_input(d_in_keys, "d_in_keys", tuples=True)
        items = None if d_in_items is None else as_input(d_in_items, "d_in_items", tuples=True)
        _check_out(d_out_keys, "d_out_keys", keys)
        if (d_out_items is None) != (items is None):
            raise ValueError("merge_sort: give both d_in_items and d_out_items, or neither")
        if items is not None:
            _check_out(d_out_items, "d_out_items", items)
        self.op = device_op(op, 2, "op")
        self.keys, self.items = keys, items
        self.key_dtype = keys.value_dtype
        self.item_dtype = None if items is None else items.value_dtype
        srcs = [keys] + ([items] if items is not None else [])
        params, exprs, env = B.params_and_items(srcs)
        self.params = params
        self.tile = _tile(self.key_dtype, self.item_dtype)
        env = {**env, "op": self.op, "IPT": self.tile // B.BLOCK, "TILE": self.tile, "KT": self.key_dtype.type,
               "VT": None if items is None else self.item_dtype.type}
        with_items = items is not None
        rank_shared = _indent(_RANK.format(at_m="sk[src + m]"), 16)
        block = _BLOCK_SORT.format(
            params=", ".join(p for p, _ in params), out_items="out_items, " if with_items else "",
            shared_items="si = cuda.shared.array(2 * TILE, VT)" if with_items else "",
            key_item=exprs[0], load_item=f"si[j] = {exprs[1]}" if with_items else "",
            rank_shared=rank_shared, move_shared="si[dst + pos] = si[src + j]" if with_items else "",
            store_item="out_items[base + j] = si[src + j]" if with_items else "")
        structure = (keys._key(), None if items is None else items._key(), self.op, self.tile)
        # Struct keys and items: shared arrays of their records, filled field
        # by field; the sort moves whole records and the comparison reads them
        if self.key_dtype.names:
            block = block.replace(f"sk[j] = {exprs[0]}", f"kput(sk, j, {exprs[0]})")
            env["kput"] = helpers(struct_of(self.key_dtype))["put"]
        if with_items and self.item_dtype.names:
            block = block.replace(f"si[j] = {exprs[1]}", f"iput(si, j, {exprs[1]})")
            env["iput"] = helpers(struct_of(self.item_dtype))["put"]
        env.update(KT=_array_dtype(self.key_dtype), VT=None if items is None else _array_dtype(self.item_dtype))
        self.block_sort = B.kernel(("merge_block_sort",) + structure, "merge_block_sort", block, env)
        merge = _MERGE_PASS.format(src_items="src_items, " if with_items else "",
                                   dst_items="dst_items, " if with_items else "",
                                   rank_global=_indent(_RANK.format(at_m="src_keys[m]"), 8),
                                   move_global="dst_items[pos] = src_items[j]" if with_items else "")
        self.merge_pass = B.kernel(("merge_pass", self.key_dtype.str,
                                    None if items is None else self.item_dtype.str, self.op),
                                   "merge_pass", merge, {"op": self.op})

    def go_check(self, out_k, out_i):
        for out, dtype, what in ((out_k, self.key_dtype, "d_out_keys"), (out_i, self.item_dtype, "d_out_items")):
            if dtype is not None and dtype.names and np.dtype(array_dtype(out)) != dtype:
                raise TypeError(f"{what} holds {np.dtype(array_dtype(out))}; merge_sort moves whole records: "
                                f"it must hold {dtype}, the input's")

    def passes(self, n):
        """Global merge passes after the block sort."""
        p, w = 0, self.tile
        while w < n:
            p, w = p + 1, w * 2
        return p

    def _layout(self, n):
        keys_b = B.align(n * self.key_dtype.itemsize)
        items_b = 0 if self.item_dtype is None else B.align(n * self.item_dtype.itemsize)
        return keys_b, items_b

    def temp_bytes(self, n):
        """The spare copy the passes alternate with (none when the block sort suffices)."""
        return sum(self._layout(n)) if self.passes(n) else 0

    def launches(self):
        P = ProxyArray
        args = [v for _, v in self.params]
        keys = self._pair(P(self.key_dtype), P(self.item_dtype) if self.items is not None else None)
        return [(self.block_sort, args + keys + [np.int64(0)]),
                (self.merge_pass, keys + keys + [np.int64(0), np.int64(0)])]

    def _pair(self, keys, items):
        """A kernel's arguments for keys and, when the sort has them, items."""
        return [keys] + ([items] if self.items is not None else [])

    def __call__(self, temp_storage=None, d_in_keys=None, d_in_items=None, d_out_keys=None, d_out_items=None,
                 op=None, num_items=None, stream=None):
        if num_items is None and isinstance(op, (int, np.integer)):
            num_items, stream = op, num_items   # the older protocol: (..., d_out_items, num_items, stream)
        n = _count(num_items)
        return B.two_phase(temp_storage, self.temp_bytes(n),
                           lambda temp: self.go(temp, d_in_keys, d_in_items, d_out_keys, d_out_items, n, stream))

    def go(self, temp, d_in_keys, d_in_items, d_out_keys, d_out_items, n, stream):
        with_items = self.items is not None
        if (d_in_items is None) == with_items or (d_out_items is None) == with_items:
            raise ValueError("merge_sort: this object was made "
                             + ("with" if with_items else "without") + " items; call it the same way")
        out_k = output(d_out_keys, "d_out_keys")
        out_i = output(d_out_items, "d_out_items") if with_items else None
        if self.key_dtype.names or (with_items and self.item_dtype.names):
            self.go_check(out_k, out_i)
        for name, a in (("d_in_keys", d_in_keys), ("d_in_items", d_in_items)):
            if hasattr(a, "__cuda_array_interface__") and length(a) < n:   # iterators have no length
                raise ValueError(f"{name} holds {length(a)} items, num_items is {n}")
        if length(out_k) < n or (with_items and length(out_i) < n):
            raise ValueError(f"d_out_keys and d_out_items must hold num_items ({n}) items")
        if n == 0:
            return
        passes = self.passes(n)
        if passes:
            keys_b, _ = self._layout(n)
            spare_k = B.typed_view(temp, self.key_dtype, n)
            spare_i = B.typed_view(temp, self.item_dtype, n, keys_b) if with_items else None
        # The last pass writes d_out; the ones before alternate with the spare.
        def buffers(p):
            return (out_k, out_i) if (passes - 1 - p) % 2 == 0 else (spare_k, spare_i)
        first_k, first_i = buffers(-1)
        srcs = input_args(d_in_keys) + (input_args(d_in_items) if with_items else [])
        B.launch(self.block_sort, -(-n // self.tile), stream, srcs + self._pair(first_k, first_i) + [np.int64(n)])
        grid = max(1, min(-(-n // B.BLOCK), 32 * B.sm_count()))
        w = self.tile
        for p in range(passes):
            B.launch(self.merge_pass, grid, stream,
                     self._pair(*buffers(p - 1)) + self._pair(*buffers(p)) + [np.int64(n), np.int64(w)])
            w *= 2


_SHARED = 48 * 1024   # static shared memory a block may have


def _tile(key_dtype, item_dtype):
    """Items a block sorts: TILE, or for large records (structs) the largest
    power of two down to BLOCK whose two copies of keys and items fit."""
    per_item = 2 * (np.dtype(key_dtype).itemsize + (0 if item_dtype is None else np.dtype(item_dtype).itemsize))
    tile = TILE
    while tile > B.BLOCK and tile * per_item > _SHARED:
        tile //= 2
    if tile * per_item > _SHARED:
        raise TypeError(f"merge_sort: keys and items of {per_item // 2} bytes together are too large for its "
                        f"block sort (at most {_SHARED // (2 * B.BLOCK)} bytes)")
    return tile


def _array_dtype(dtype):
    """What shared arrays of these keys or items hold: the dtype (records), else its scalar type."""
    return dtype if dtype.names else dtype.type


def _check_out(d_out, what, src):
    """An output array: of a struct input, the same structured dtype (the
    sort copies whole records)."""
    out = as_output(d_out, what)
    want = np.dtype(src.value_dtype)
    if want.names and np.dtype(out.dtype) != want:
        raise TypeError(f"{what} holds {np.dtype(out.dtype)}; merge_sort moves whole records: it must hold "
                        f"{want}, the input's")


def make_merge_sort(d_in_keys=None, d_in_items=None, d_out_keys=None, d_out_items=None, op=None, **kwargs):
    """A reusable stable sort for these key/item types and comparison: called
    as ``obj(temp_storage, d_in_keys, d_in_items, d_out_keys, d_out_items,
    op, num_items, stream=None)``; without storage it returns the bytes it
    needs."""
    return _MergeSort(d_in_keys, d_in_items, d_out_keys, d_out_items, op)


def merge_sort(d_in_keys=None, d_in_items=None, d_out_keys=None, d_out_items=None, op=None, num_items=None,
               stream=None, **kwargs):
    """Sorts keys (and items with them) stably by ``op(a, b)`` (a before b)
    into d_out_keys / d_out_items, which may be the inputs themselves
    (cub::DeviceMergeSort::SortPairsCopy / SortKeysCopy)."""
    key = ("merge_sort", input_key(d_in_keys), None if d_in_items is None else input_key(d_in_items),
           d_out_items is None, op)
    obj = _cached(_MergeSort, key, d_in_keys, d_in_items, d_out_keys, d_out_items, op)
    n = _count(num_items)
    need = obj.temp_bytes(n)
    obj.go(B.scratch(need, stream) if need else None, d_in_keys, d_in_items, d_out_keys, d_out_items, n, stream)
