"""inclusive_scan and exclusive_scan of struct items (gpu_struct values,
ZipIterator tuples, arrays of a structured dtype).

CUB's block scans and the look-back's shuffles take numbers only, so
struct scans take a simpler road of three launches, written for
correctness, not speed (they are not benchmarked):

1. each block scans its tile of BLOCK x IPT items in order (each thread IPT
   consecutive items, then a Hillis-Steele scan of the threads' totals in
   shared memory, field by field) and writes the tile's total;
2. one block scans the tiles' totals the same way, a tile of totals at a
   time with a carry, into each tile's exclusive prefix (the initial value
   first, where there is one);
3. each block scans its tile again from its prefix and writes the results.

The operator is applied only to neighbours in order: any associative
operator gives the sequential result."""
import numpy as np

from . import _build as B
from ._iterators import ProxyArray, as_input, input_args, length, output
from ._ops import device_op
from ._reduce import _count, check_output, op_name, struct_env
from ._struct import flat_value, struct_op, zero_flat

IPT = 4
TILE = B.BLOCK * IPT

# The tile of `left` items from `base` ({item}: item i), scanned: thread
# tid's inclusive total of the threads up to it in tot[tid] (tid < nt).
_TILE_SCAN = """
left = min(np.int64(TILE), n - base)
nt = (left + IPT - 1) // IPT
acc = init
first = True
for k in range(IPT):
    j = tid * IPT + k
    if j < left:
        i = base + j
        v = T({item})
        if first:
            acc = v
        else:
            acc = op(acc, v)
        first = False
tot = cuda.shared.array(BLOCK, REC)
if tid < nt:
    put(tot, tid, acc)
cuda.syncthreads()
step = 1
while step < nt:
    x = acc
    if tid < nt and tid >= step:
        x = op(get(tot, tid - step), get(tot, tid))
    cuda.syncthreads()
    if tid < nt and tid >= step:
        put(tot, tid, x)
    cuda.syncthreads()
    step *= 2
# the exclusive prefix of this thread's first item: run (valid where h)
if tid > 0 and tid < nt:
    t = get(tot, tid - 1)
    if h:
        run = op(run, t)
    else:
        run = t
    h = True
"""


def _indent(text, spaces):
    return "".join(" " * spaces + line + "\n" if line.strip() else "\n" for line in text.strip("\n").split("\n"))


def _sources(params, item, exclusive, has_init):
    tile = _indent(_TILE_SCAN.format(item=item), 4)
    aggregates = (f"def scan_aggregates({params}, aggs, n, init):\n"
                  "    init = unflat(init)\n"
                  "    tid = cuda.threadIdx.x\n"
                  "    base = np.int64(cuda.blockIdx.x) * TILE\n"
                  "    run = init\n"
                  "    h = False\n" + tile +
                  "    if tid == 0:\n"
                  "        put(aggs, cuda.blockIdx.x, get(tot, nt - 1))\n")
    prefixes = ("def scan_prefixes(in0_a, prefixes, n, init):\n"
                "    init = unflat(init)\n"
                "    tid = cuda.threadIdx.x\n"
                "    carry = init\n"
                f"    have = {has_init}\n"
                "    base = np.int64(0)\n"
                "    while base < n:\n"
                "        run = carry\n"
                "        h = have\n" + _indent(_TILE_SCAN.format(item="in0_a[i]"), 8) +
                "        for k in range(IPT):\n"
                "            j = tid * IPT + k\n"
                "            if j < left:\n"
                "                i = base + j\n"
                "                if h:\n"
                "                    put(prefixes, i, run)\n"
                "                v = T(in0_a[i])\n"
                "                if h:\n"
                "                    run = op(run, v)\n"
                "                else:\n"
                "                    run = v\n"
                "                h = True\n"
                "        total = get(tot, nt - 1)\n"
                "        if have:\n"
                "            carry = op(carry, total)\n"
                "        else:\n"
                "            carry = total\n"
                "        have = True\n"
                "        base += TILE\n"
                "        cuda.syncthreads()\n")
    if exclusive:
        step = ("                put(out, i, run)\n"
                "                run = op(run, v)\n")
    else:
        step = ("                if h:\n"
                "                    run = op(run, v)\n"
                "                else:\n"
                "                    run = v\n"
                "                h = True\n"
                "                put(out, i, run)\n")
    tiles = (f"def scan_struct_tiles({params}, out, prefixes, n, init):\n"
             "    init = unflat(init)\n"
             "    tid = cuda.threadIdx.x\n"
             "    base = np.int64(cuda.blockIdx.x) * TILE\n"
             "    run = init\n"
             f"    h = {'True' if has_init else 'cuda.blockIdx.x > 0'}\n"
             "    if h:\n"
             "        run = get(prefixes, cuda.blockIdx.x)\n" + tile +
             "    for k in range(IPT):\n"
             "        j = tid * IPT + k\n"
             "        if j < left:\n"
             "            i = base + j\n"
             "            v = T({item})\n".format(item=item) + step.replace("                ", "            "))
    return aggregates, prefixes, tiles


class ScanCall:
    """The scans' object protocol (cuda.compute's): obj(temp_storage, d_in,
    d_out, op, init_value, num_items, stream), on the class's temp_bytes(n)
    and run(temp, d_in, d_out, init_value, n, stream)."""

    def __call__(self, temp_storage=None, d_in=None, d_out=None, op=None, init_value=None, num_items=None,
                 stream=None):
        n = _count(num_items)
        return B.two_phase(temp_storage, self.temp_bytes(n),
                           lambda temp: self.run(temp, d_in, d_out, init_value, n, stream))


class StructScan(ScanCall):
    """A scan whose values are structs of gpu_struct S."""

    def __init__(self, src, d_out, op, init_value, exclusive, S):
        self.src, self.struct, self.dtype = src, S, S.dtype
        check_output(d_out, "d_out", S)
        self.exclusive, self.has_init = exclusive, init_value is not None
        self.op = struct_op(op_name(op), device_op(op, 2, "op"), [S.dtype] * 2, S, "op")
        params, (item,), env = B.params_and_items([src])
        env.update(struct_env(S), op=self.op, IPT=IPT, TILE=TILE)
        names = ", ".join(p for p, _ in params)
        aggregates, prefixes, tiles = _sources(names, item, exclusive, self.has_init)
        key = ("struct_scan", src._key(), self.op, S)
        self.aggregates = B.kernel(key + ("aggregates",), "scan_aggregates", aggregates, env)
        self.prefixes = B.kernel(("struct_scan", ("array", S.dtype, True), self.op, S, self.has_init, "prefixes"),
                                 "scan_prefixes", prefixes, {**struct_env(S), "op": self.op, "IPT": IPT,
                                                             "TILE": TILE})
        self.tiles = B.kernel(key + (exclusive, self.has_init, "tiles"), "scan_struct_tiles", tiles, env)

    def temp_bytes(self, n):
        """The tiles' totals and prefixes."""
        if n == 0:
            return 0
        return 2 * B.align(-(-n // TILE) * self.dtype.itemsize)

    def launches(self):
        args = [v for _, v in B.params_and_items([self.src])[0]]
        proxy, n, init = ProxyArray(self.dtype), np.int64(0), zero_flat(self.struct)
        return [(self.aggregates, args + [proxy, n, init]), (self.prefixes, [proxy, proxy, n, init]),
                (self.tiles, args + [proxy, proxy, n, init])]

    def run(self, temp, d_in, d_out, init_value, n, stream):
        if n == 0:
            return
        out = output(d_out, "d_out")
        check_output(out, "d_out", self.struct)
        if length(out) < n:
            raise ValueError(f"d_out holds {length(out)} items, num_items is {n}")
        init = flat_value(init_value, self.struct) if self.has_init else zero_flat(self.struct)
        tiles = -(-n // TILE)
        part = B.align(tiles * self.dtype.itemsize)
        aggs = B.typed_view(temp, self.dtype, tiles)
        prefixes = B.typed_view(temp, self.dtype, tiles, part)
        args = input_args(d_in)
        B.launch(self.aggregates, tiles, stream, args + [aggs, np.int64(n), init])
        B.launch(self.prefixes, 1, stream, [aggs, prefixes, np.int64(tiles), init])
        B.launch(self.tiles, tiles, stream, args + [out, prefixes, np.int64(n), init])


def struct_scan(d_in, d_out, op, init_value, exclusive):
    """A StructScan where the scan's values are structs, else None."""
    from ._reduce import item_struct
    src = as_input(d_in, "d_in", tuples=True)
    S = item_struct(init_value, src, "init_value")
    return None if S is None else StructScan(src, d_out, op, init_value, exclusive, S)
