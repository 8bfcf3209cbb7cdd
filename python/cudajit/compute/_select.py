"""select and unique_by_key (cub::DeviceSelect's model): one pass with
decoupled look-back over the count of kept items, as the scans do; each
tile then writes its kept items at their global positions, in order, and
the last tile writes the total count."""
import numpy as np

from . import _build as B
from ._iterators import ProxyArray, _ArrayInput, as_input, as_output, input_args, input_key, length, output
from ._ops import OpKind, device_op, typed_op
from ._reduce import _cached, _count
from ._scan import IPT, LOAD_TILE, NEXT_TILE, THREADS, TILE, _slot, lookback, tile_state_bytes, tile_states

# {keep}: whether item k of this thread (index j in the tile) is kept.
_SOURCE = """
def {name}({params}, {outs}, num_out, n, status, aggs, incls):
""" + LOAD_TILE + """
    keep = cuda.local.array(IPT, np.bool_)
    pos = cuda.local.array(IPT, np.int64)
    for k in range(IPT):
        j = tid * IPT + k
        keep[k] = False
        if j < left:
            keep[k] = {keep}
        pos[k] = 1 if keep[k] else 0
    agg = cuda.block.reduce(pos, op)
{lookback}
    if tid == 0 and tile == num_tiles - 1:
        num_out[0] = prefix_of[0] + agg
    cuda.block.exclusive_sum(pos)
    start = prefix_of[0]
    for k in range(IPT):
        if keep[k]:
            {write}
"""


_LOOKBACK = lookback("p", "0", False)   # the state: kept items before the tile


class _Compaction:
    """A look-back pass whose tile state counts kept items (int64)."""

    struct = None

    def __init__(self, name, srcs, key, keep, write, outs, env, struct=False):
        self.srcs = srcs
        params, items, env2 = B.params_and_items(srcs)
        env = {**env2, "op": typed_op(OpKind.PLUS, 2, np.int64, "count"), "IPT": IPT, "TILE": TILE,
               "SLOT": _slot(np.int64), "S": np.int64, "T": srcs[0].value_dtype.type, **env}
        source = _SOURCE.format(name=name, params=", ".join(p for p, _ in params), outs=", ".join(outs),
                                lookback=_LOOKBACK,
                                item=items[0], keep=keep, write=write)
        if struct:
            source = struct_source(source, items[0])
        self.kernel = B.kernel(key, name, source, env, THREADS)

    def temp_bytes(self, n):
        return tile_state_bytes(n, np.int64)

    def run(self, temp, srcs, outs, num_out, n, stream):
        if n == 0:
            B.zero(num_out, 1, stream)
            return
        status, aggs, incls = tile_states(temp, n, np.int64, stream)
        args = [a for s in srcs for a in input_args(s)]
        B.launch(self.kernel, status.size - 1, stream, args + outs + [num_out, np.int64(n), status, aggs, incls])


def _count_out(d, what):
    out = output(d, what)
    if length(out) < 1 or np.dtype(out.dtype).kind not in "iu":
        raise TypeError(f"{what} must be an integer device array of at least one item")
    return out


# Struct items: the tile goes through shared and local arrays of records
# (CUB's loads and the typed arrays above take numbers), read into struct
# values to test and to write, field by field.
_STRUCT_LOAD = """
    buf = cuda.shared.array(TILE, REC)
    left = n - base
    for k in range(IPT):
        i = base + k * BLOCK + tid
        if k * BLOCK + tid < left:
            put(buf, k * BLOCK + tid, T({item}))
    cuda.syncthreads()
    items = cuda.local.array(IPT, REC)
    for k in range(IPT):
        j = tid * IPT + k
        if j < left:
            items[k] = buf[j]
        else:
            items[k] = buf[0]
    cuda.syncthreads()
"""


def struct_source(source, item):
    """A select/unique kernel's source for struct items."""
    load = LOAD_TILE[len(NEXT_TILE):].replace("{item}", item)
    assert load in source
    return source.replace(load, _STRUCT_LOAD.replace("{item}", item), 1)


class _Select(_Compaction):
    def __init__(self, d_in, d_out, d_num_selected_out, cond):
        src = as_input(d_in, "d_in", tuples=True)
        self.cond = device_op(cond, 1, "cond")
        items = np.dtype(src.value_dtype)
        if not items.names:
            as_output(d_out, "d_out")
            key = ("select", src._key(), self.cond)
            super().__init__("select_tiles", [src], key, "cond(items[k])", "out[start + pos[k]] = items[k]",
                             ["out"], {"cond": self.cond})
            return
        from ._reduce import check_output, struct_env
        from ._struct import struct_of
        self.struct = S = struct_of(items)
        check_output(d_out, "d_out", S)
        key = ("select", src._key(), self.cond, S)
        super().__init__("select_tiles", [src], key, "cond(get(items, k))",
                         "put(out, start + pos[k], get(items, k))", ["out"], {"cond": self.cond, **struct_env(S)},
                         struct=True)

    def launches(self):
        args = [v for _, v in B.params_and_items(self.srcs)[0]]
        P = ProxyArray
        return [(self.kernel, args + [P(self.srcs[0].value_dtype), P(np.int64), np.int64(0), P(np.int32),
                                      P(np.int64), P(np.int64)])]

    def __call__(self, temp_storage=None, d_in=None, d_out=None, d_num_selected_out=None, cond=None,
                 num_items=None, stream=None):
        n = _count(num_items)
        return B.two_phase(temp_storage, self.temp_bytes(n), lambda temp: self.go(temp, d_in, d_out, d_num_selected_out, n, stream))

    def go(self, temp, d_in, d_out, d_num_selected_out, n, stream):
        out = output(d_out, "d_out")
        if self.struct is not None:
            from ._reduce import check_output
            check_output(out, "d_out", self.struct)
        if length(out) < n:
            raise ValueError(f"d_out holds {length(out)} items, num_items is {n} (it may keep them all)")
        self.run(temp, [d_in], [out], _count_out(d_num_selected_out, "d_num_selected_out"), n,
                 stream)


class _UniqueByKey(_Compaction):
    def __init__(self, d_in_keys, d_in_items, d_out_keys, d_out_items, d_num_selected_out, op):
        keys, items = as_input(d_in_keys, "d_in_keys", tuples=True), as_input(d_in_items, "d_in_items", tuples=True)
        self.eq = device_op(op, 2, "op")
        self.outs = self._structs(keys, items, d_out_keys, d_out_items)
        key = ("unique_by_key", keys._key(), items._key(), self.eq)
        self.srcs = [keys, items]
        self._build(keys, items, key)

    @staticmethod
    def _structs(keys, items, d_out_keys, d_out_items):
        """The struct types of keys and items (None: numbers), their outputs checked."""
        from ._reduce import check_output
        from ._struct import struct_of
        found = []
        for src, out, what in ((keys, d_out_keys, "d_out_keys"), (items, d_out_items, "d_out_items")):
            dt = np.dtype(src.value_dtype)
            S = struct_of(dt) if dt.names else None
            check_output(out, what, S)
            found.append(S)
        return found

    def _build(self, keys, items, key):
        """The kernel: the key before each item is the previous one in the
        tile's shared copy, or, for a tile's first, read from d_in_keys.
        Struct keys go through records (struct_source), struct items are
        written field by field."""
        params, exprs, env = B.params_and_items([keys, items])
        kstruct, istruct = self.outs
        item_write = (f"iput(out_items, start + pos[k], IC({exprs[1]}))" if istruct
                      else f"out_items[start + pos[k]] = {exprs[1]}")
        key_write = "put(out_keys, start + pos[k], get(items, k))" if kstruct else "out_keys[start + pos[k]] = items[k]"
        write = (f"{key_write}\n"
                 "            i = base + tid * IPT + k\n"
                 f"            {item_write}")
        names = ", ".join(p for p, _ in params)
        if not isinstance(keys, _ArrayInput):
            raise TypeError("unique_by_key: d_in_keys must be a device array")
        prev = exprs[0].replace("[i]", "[max(base - 1, 0)]")
        if kstruct:
            keep = f"base + j == 0 or not eq(get(buf, j - 1) if j > 0 else {prev}, get(items, k))"
        else:
            keep = f"base + j == 0 or not eq(buf[j - 1] if j > 0 else {prev}, items[k])"
        source = _SOURCE.format(name="unique_tiles", params=names, outs="out_keys, out_items", item=exprs[0],
                                lookback=_LOOKBACK,
                                keep=keep, write=write)
        env = {**env, "op": typed_op(OpKind.PLUS, 2, np.int64, "count"), "eq": self.eq, "IPT": IPT, "TILE": TILE,
               "SLOT": _slot(np.int64), "S": np.int64, "T": keys.value_dtype.type}
        if kstruct:
            from ._reduce import struct_env
            source = struct_source(source, exprs[0])
            env.update(struct_env(kstruct))
        if istruct:
            from ._struct import helpers
            env.update(iput=helpers(istruct)["put"], IC=helpers(istruct)["conv"])
        self.kernel = B.kernel(key, "unique_tiles", source, env, THREADS)

    def launches(self):
        args = [v for _, v in B.params_and_items(self.srcs)[0]]
        P = ProxyArray
        return [(self.kernel, args + [P(self.srcs[0].value_dtype), P(self.srcs[1].value_dtype), P(np.int64),
                                      np.int64(0), P(np.int32), P(np.int64), P(np.int64)])]

    def __call__(self, temp_storage=None, d_in_keys=None, d_in_items=None, d_out_keys=None, d_out_items=None,
                 d_out_num_selected=None, op=None, num_items=None, stream=None):
        n = _count(num_items)
        return B.two_phase(temp_storage, self.temp_bytes(n), lambda temp: self.go(temp, d_in_keys, d_in_items, d_out_keys, d_out_items, d_out_num_selected, n, stream))

    def go(self, temp, d_in_keys, d_in_items, d_out_keys, d_out_items, d_out_num_selected, n, stream):
        ok, oi = output(d_out_keys, "d_out_keys"), output(d_out_items, "d_out_items")
        if self.outs[0] is not None or self.outs[1] is not None:
            from ._reduce import check_output
            check_output(ok, "d_out_keys", self.outs[0])
            check_output(oi, "d_out_items", self.outs[1])
        if length(ok) < n or length(oi) < n:
            raise ValueError(f"d_out_keys and d_out_items must hold num_items ({n}) items")
        self.run(temp, [d_in_keys, d_in_items], [ok, oi], _count_out(d_out_num_selected, "d_out_num_selected"), n, stream)


def make_select(d_in=None, d_out=None, d_num_selected_out=None, cond=None, **kwargs):
    return _Select(d_in, d_out, d_num_selected_out, cond)


def select(d_in=None, d_out=None, d_num_selected_out=None, cond=None, num_items=None, stream=None, **kwargs):
    """The items of d_in for which cond(item) is true, in order, into d_out;
    their count into d_num_selected_out[0] (cub::DeviceSelect::If)."""
    obj = _cached(_Select, ("select", input_key(d_in), cond), d_in, d_out, d_num_selected_out, cond)
    n = _count(num_items)
    need = obj.temp_bytes(n)
    obj.go(B.scratch(need, stream) if need else None, d_in, d_out, d_num_selected_out, n, stream)


def make_unique_by_key(d_in_keys=None, d_in_items=None, d_out_keys=None, d_out_items=None, d_out_num_selected=None,
                       op=None, **kwargs):
    return _UniqueByKey(d_in_keys, d_in_items, d_out_keys, d_out_items, d_out_num_selected, op)


def unique_by_key(d_in_keys=None, d_in_items=None, d_out_keys=None, d_out_items=None, d_out_num_selected=None,
                  op=None, num_items=None, stream=None, **kwargs):
    """The first key (and its item) of each run of consecutive keys equal
    under op, in order; the number of runs into d_out_num_selected[0]
    (cub::DeviceSelect::UniqueByKey)."""
    key = ("unique_by_key", input_key(d_in_keys), input_key(d_in_items), op)
    obj = _cached(_UniqueByKey, key, d_in_keys, d_in_items, d_out_keys, d_out_items, d_out_num_selected, op)
    n = _count(num_items)
    need = obj.temp_bytes(n)
    obj.go(B.scratch(need, stream) if need else None, d_in_keys, d_in_items, d_out_keys, d_out_items,
           d_out_num_selected, n, stream)
