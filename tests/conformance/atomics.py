"""Atomics: cuda.atomic.add/sub/max/min/exch/cas/and_/or_/xor/inc/dec with
their return values (one element per thread: the returned old value is
deterministic), under contention (many threads, few addresses, integer or
exactly representable float values so the order does not matter), in shared
and global memory, with tuple indices into 2-D arrays.
"""
import numpy as np

from ._registry import build, case, cuda, n_of, one_d, poison, rand, sn  # noqa: F401

TOPIC = "atomics"
G = globals()
TPB = 128
NBINS = 64

RET_SRC = '''
def {name}(a, v, ret):
    i = cuda.grid(1)
    if i < a.size:
        ret[i] = cuda.atomic.{op}(a, i, v[i])
'''

CONTENDED_SRC = '''
def {name}(a, key, v):
    i = cuda.grid(1)
    if i < v.size:
        cuda.atomic.{op}(a, key[i], v[i])
'''


def _inc(old, val):
    return np.where(old >= val, 0, old + 1).astype(old.dtype)


def _dec(old, val):
    return np.where((old == 0) | (old > val), val, old - 1).astype(old.dtype)


# op: (numpy elementwise update, dtypes)
OPS = {
    "add": (lambda a, v: a + v, ("int32", "uint32", "int64", "uint64", "float32", "float64")),
    "sub": (lambda a, v: a - v, ("int32", "uint32", "int64", "uint64", "float32", "float64")),
    "max": (np.maximum, ("int32", "uint32", "int64", "uint64", "float32", "float64")),
    "min": (np.minimum, ("int32", "uint32", "int64", "uint64", "float32", "float64")),
    "exch": (lambda a, v: v.copy(), ("int32", "uint32", "int64", "uint64")),   # numba: integer exch only
    "and_": (np.bitwise_and, ("int32", "uint32", "int64", "uint64")),
    "or_": (np.bitwise_or, ("int32", "uint32", "int64", "uint64")),
    "xor": (np.bitwise_xor, ("int32", "uint32", "int64", "uint64")),
    "inc": (_inc, ("uint32", "uint64")),
    "dec": (_dec, ("uint32", "uint64")),
}


def _vals(r, n, dt, lo=0, hi=1000):
    return rand(r, n, dt, lo, hi) if np.dtype(dt).kind != "f" else (rand(r, n, np.int64, -400, 400) / 4).astype(dt)


def _ret_ref(fn):
    def ref(a, v, ret):
        ret[...] = a
        a[...] = fn(a, v)
    return ref


for op, (fn, dtypes) in OPS.items():
    for dt in dtypes:
        name = f"atomic_{op.rstrip('_')}_return_{dt}"
        k = build(RET_SRC.format(name=name, op=op), name, G)
        hi = 40 if op in ("inc", "dec") else 1000
        case(name, f"void({dt}[::1], {dt}[::1], {dt}[::1])",
             (lambda dt, hi: lambda r: [_vals(r, n := n_of(r), dt, 0, hi), _vals(r, n, dt, 0, hi),
                                        poison(n, dt)])(dt, hi),
             one_d(TPB, arg=0), _ret_ref(fn), [0, 2], kernel=k, topic=TOPIC,
             covers=(f"cuda.atomic.{op} return value", dt, "global memory"))

CONTENDED = {"add": ("int32", "uint64", "float32", "float64"), "sub": ("int64", "float64"),
             "max": ("int32", "float64", "uint32"), "min": ("int64", "float32"),
             "and_": ("uint32",), "or_": ("int64",), "xor": ("int32",), "inc": ("uint32",), "dec": ("uint64",)}


def _contended_ref(op):
    def ref(a, key, v):
        if op in ("inc", "dec"):
            f = _inc if op == "inc" else _dec
            for k, val in zip(key, v):
                a[k] = f(a[k:k + 1], val)[0]
            return
        ufunc = {"add": np.add, "sub": np.subtract, "max": np.maximum, "min": np.minimum,
                 "and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}[op]
        ufunc.at(a, key, v)
    return ref


def _contended_inputs(op, dt, vhi):
    def make(r):
        a = _vals(r, NBINS, dt, 0, vhi)
        key = rand(r, n := n_of(r, 4000, 12000), np.int64, 0, NBINS)
        if op in ("inc", "dec"):
            # inc/dec with different vals on one address do not commute
            # (inc(5, val=3) then inc(., val=10) gives 1; the other order 0):
            # one val per address, so the result does not depend on the order
            # the GPU runs the threads in.
            return [a, key, _vals(r, NBINS, dt, 1, vhi)[key]]
        return [a, key, _vals(r, n, dt, 0, vhi)]
    return make


for op, dtypes in CONTENDED.items():
    for dt in dtypes:
        name = f"atomic_{op.rstrip('_')}_contended_{dt}"
        k = build(CONTENDED_SRC.format(name=name, op=op), name, G)
        vhi = 1 << 20 if op in ("and_", "or_", "xor") else (30 if op in ("inc", "dec") else 1000)
        case(name, f"void({dt}[::1], int64[::1], {dt}[::1])", _contended_inputs(op, dt, vhi),
             one_d(TPB, arg=2), _contended_ref(op), [0], kernel=k, topic=TOPIC,
             covers=(f"cuda.atomic.{op} under contention", dt))


def cas_return(a, expected, new, ret):
    i = cuda.grid(1)
    if i < a.size:
        ret[i] = cuda.atomic.cas(a, i, expected[i], new[i])


def _cas_inputs(dt):
    def make(r):
        n = n_of(r)
        a = rand(r, n, dt, 0, 1000)
        exp = a.copy()
        miss = r.random(n) < 0.5
        exp[miss] += 1
        return [a, exp, rand(r, n, dt, 0, 1000), poison(n, dt)]
    return make


def _cas_ref(a, exp, new, ret):
    ret[...] = a
    a[...] = np.where(a == exp, new, a)


for dt in ("int32", "uint32", "int64", "uint64"):
    case(f"atomic_cas_return_{dt}", f"void({dt}[::1], {dt}[::1], {dt}[::1], {dt}[::1])", _cas_inputs(dt),
         one_d(TPB, arg=0), _cas_ref, [0, 3], kernel=cas_return, topic=TOPIC,
         covers=("cuda.atomic.cas(ary, idx, old, val) return value", dt))


def slot_allocation(x, counter, mark, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 0:
            slot = cuda.atomic.add(counter, 0, 1)
            mark[slot] = 1
            out[slot] = 0
        else:
            out[i] = 0


def _slot_inputs(r):
    n = n_of(r)
    x = rand(r, n, np.int32, -9, 9)
    return [x, np.zeros(1, np.int32) + 0, np.zeros(n, np.int32) - 1, poison(n, np.int32)]


def _slot_ref(x, counter, mark, out):
    k = int((x > 0).sum())
    counter[0] = k
    mark[:k] = 1
    out[:k] = 0
    out[np.nonzero(x <= 0)[0]] = 0


case("atomic_add_return_slot_allocation", "void(int32[::1], int32[::1], int32[::1], int32[::1])", _slot_inputs,
     one_d(TPB, arg=0), _slot_ref, [1, 2], kernel=slot_allocation, topic=TOPIC,
     covers=("atomic.add's returned old values are distinct slots 0..k-1",))


def shared_histogram(x, hist):
    sh = cuda.shared.array(NBINS, dtype=np.int32)
    t = cuda.threadIdx.x
    if t < NBINS:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(sh, x[i] % NBINS, 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(hist, t, sh[t])


def _hist_ref(x, hist):
    np.add.at(hist, x % NBINS, 1)


case("atomic_add_shared_histogram", "void(int64[::1], int32[::1])",
     lambda r: [rand(r, n_of(r, 5000, 20000), np.int64, 0, 10**6), rand(r, NBINS, np.int32, 1, 100)],
     one_d(TPB, arg=0), _hist_ref, [1], kernel=shared_histogram, topic=TOPIC,
     covers=("atomic.add on shared memory", "shared -> global flush"))


def shared_max_min(x, mx, mn):
    smax = cuda.shared.array(1, dtype=np.float32)
    smin = cuda.shared.array(1, dtype=np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t == 0:
        smax[0] = -np.inf
        smin[0] = np.inf
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.max(smax, 0, x[i])
        cuda.atomic.min(smin, 0, x[i])
    cuda.syncthreads()
    if t == 0:
        mx[cuda.blockIdx.x] = smax[0]
        mn[cuda.blockIdx.x] = smin[0]


def _shared_mm_ref(x, mx, mn):
    nb = mx.size
    pad = np.concatenate([x, np.full(nb * TPB - x.size, np.nan, np.float32)]).reshape(nb, TPB)
    mx[...] = np.nanmax(pad, axis=1)
    mn[...] = np.nanmin(pad, axis=1)


case("atomic_max_min_shared_float32", "void(float32[::1], float32[::1], float32[::1])",
     lambda r: [rand(r, n := n_of(r), np.float32), poison(nb := (n + TPB - 1) // TPB, np.float32), poison(nb, np.float32)],
     one_d(TPB, arg=0), _shared_mm_ref, [1, 2], kernel=shared_max_min, topic=TOPIC,
     covers=("atomic.max/min on shared float32", "-np.inf/np.inf constants"))


def atomic_tuple_index(rows, cols, counts, sums, v):
    i = cuda.grid(1)
    if i < rows.size:
        cuda.atomic.add(counts, (rows[i], cols[i]), 1)
        cuda.atomic.add(sums, (rows[i], cols[i]), v[i])


def _tuple_idx_ref(rows, cols, counts, sums, v):
    np.add.at(counts, (rows, cols), 1)
    np.add.at(sums, (rows, cols), v)


case("atomic_add_tuple_index_2d", "void(int32[::1], int32[::1], int64[:, ::1], float64[:, ::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r, 4000, 9000), np.int32, 0, 8), rand(r, n, np.int32, 0, 8),
                rand(r, (8, 8), np.int64, 0, 50), (rand(r, (8, 8), np.int64, -40, 40) / 4.0),
                (rand(r, n, np.int64, -40, 40) / 4.0)],
     one_d(TPB, arg=0), _tuple_idx_ref, [2, 3], kernel=atomic_tuple_index, topic=TOPIC,
     covers=("atomic.add with a tuple index on a 2-D array",))


def shared_exch_cas(x, out):
    lock = cuda.shared.array(1, dtype=np.int32)
    slot = cuda.shared.array(1, dtype=np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        lock[0] = 0
        slot[0] = -1
    cuda.syncthreads()
    # exactly one thread of the block wins the cas; it records its lane
    if cuda.atomic.cas(lock, 0, 0, 1) == 0:
        cuda.atomic.exch(slot, 0, t)
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + (1 if slot[0] >= 0 else 100) + lock[0]


case("atomic_cas_exch_shared_single_winner", "void(int32[::1], int32[::1])",
     lambda r: [rand(r, n := n_of(r), np.int32, -999, 999), poison(n, np.int32)], one_d(TPB, arg=0),
     lambda x, out: out.__setitem__(..., x + 2), [1], kernel=shared_exch_cas, topic=TOPIC,
     covers=("atomic.cas on shared memory", "atomic.exch on shared memory"))
