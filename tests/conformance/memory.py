"""Memory spaces and block synchronisation: shared.array (static 1-D and
2-D, dynamic with shape 0), local.array (1-D, 2-D), const.array_like,
syncthreads, syncthreads_count/_and/_or, threadfence, threadfence_block,
the shared-memory tree reduction (`while w > 0: ... w //= 2`).
"""
import numpy as np

from ._registry import case, cuda, n_of, poison, rand  # noqa: F401

TOPIC = "memory"
TPB = 128
TILE = 16
TILE_PAD = 17     # a padded tile row (numba needs a constant shape: no TILE + 1)
NK = 8

COEFFS = np.array([0.5, -1.25, 2.0, 0.125, -0.75, 1.5, 3.0, -2.5], dtype=np.float64)
LUT = np.arange(64, dtype=np.int32) * 7 % 64


def _blocks(args, tpb=TPB):
    n = next(a for a in args if isinstance(a, np.ndarray)).size
    return ((n + tpb - 1) // tpb, tpb)


def _block_sums(x, tpb, dtype=None):
    nb = (x.size + tpb - 1) // tpb
    pad = np.zeros(nb * tpb, dtype=dtype or x.dtype)
    pad[:x.size] = x
    return pad.reshape(nb, tpb).sum(axis=1, dtype=dtype or x.dtype)


def tree_reduce(x, partial):
    s = cuda.shared.array(TPB, dtype=np.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    w = cuda.blockDim.x // 2
    while w > 0:
        if t < w:
            s[t] += s[t + w]
        cuda.syncthreads()
        w //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


case("shared_tree_reduction_while", "void(float64[::1], float64[::1])",
     lambda r: [rand(r, n := n_of(r, 5000, 20000), np.float64), poison((n + TPB - 1) // TPB, np.float64)],
     _blocks, lambda x, p: p.__setitem__(..., _block_sums(x, TPB)), [1], kernel=tree_reduce, rtol=1e-12,
     atol=1e-12, topic=TOPIC, covers=("shared.array static", "syncthreads", "while w > 0: w //= 2"))


def shared_2d_transpose(a, out):
    tile = cuda.shared.array((TILE, TILE_PAD), dtype=np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * TILE
    by = cuda.blockIdx.y * TILE
    if by + ty < a.shape[0] and bx + tx < a.shape[1]:
        tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    if bx + ty < a.shape[1] and by + tx < a.shape[0]:
        out[bx + ty, by + tx] = tile[tx, ty]


case("shared_2d_tile_transpose", "void(float32[:, ::1], float32[:, ::1])",
     lambda r: [rand(r, (s := (int(r.integers(60, 200)), int(r.integers(60, 200)))), np.float32),
                poison(s[::-1], np.float32)],
     lambda args: (((args[0].shape[1] + TILE - 1) // TILE, (args[0].shape[0] + TILE - 1) // TILE), (TILE, TILE)),
     lambda a, out: out.__setitem__(..., a.T), [1], kernel=shared_2d_transpose, topic=TOPIC,
     covers=("2-D shared.array with padding", "threadIdx.y/blockIdx.y"))


def dynamic_shared(x, out):
    buf = cuda.shared.array(0, dtype=np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    if i < x.size:
        out[i] = buf[cuda.blockDim.x - 1 - t]


def _dyn_ref(x, out):
    nb = (x.size + TPB - 1) // TPB
    pad = np.zeros(nb * TPB, np.float32)
    pad[:x.size] = x
    out[...] = pad.reshape(nb, TPB)[:, ::-1].reshape(-1)[:x.size]


case("shared_dynamic_shape0", "void(float32[::1], float32[::1])",
     lambda r: [rand(r, n := n_of(r), np.float32), poison(n, np.float32)],
     lambda args: ((args[0].size + TPB - 1) // TPB, TPB, 0, TPB * 4), _dyn_ref, [1], kernel=dynamic_shared,
     topic=TOPIC, covers=("shared.array(0, dtype) dynamic shared memory", "launch with sharedmem bytes"))


def local_sort(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        buf = cuda.local.array(NK, dtype=np.float64)
        for k in range(NK):
            buf[k] = x[i, k]
        for a in range(1, NK):
            v = buf[a]
            b = a - 1
            while b >= 0 and buf[b] > v:
                buf[b + 1] = buf[b]
                b -= 1
            buf[b + 1] = v
        for k in range(NK):
            out[i, k] = buf[k]


case("local_array_insertion_sort", "void(float64[:, ::1], float64[:, ::1])",
     lambda r: [rand(r, (m := n_of(r, 500, 2000), NK), np.float64), poison((m, NK), np.float64)],
     lambda args: ((args[0].shape[0] + 127) // 128, 128), lambda x, out: out.__setitem__(..., np.sort(x, axis=1)),
     [1], kernel=local_sort, topic=TOPIC, covers=("local.array 1-D", "while with and-condition"))


def local_2d(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        a = cuda.local.array((3, 3), dtype=np.float64)
        for r in range(3):
            for c in range(3):
                a[r, c] = m[i, r * 3 + c]
        # a @ a.T, trace
        tr = 0.0
        for r in range(3):
            s = 0.0
            for c in range(3):
                s += a[r, c] * a[r, c]
            tr += s
        out[i] = tr + a[2, 0] * a[0, 2]


case("local_array_2d", "void(float64[:, ::1], float64[::1])",
     lambda r: [rand(r, (m := n_of(r, 500, 2000), 9), np.float64), poison(m, np.float64)],
     lambda args: ((args[0].shape[0] + 127) // 128, 128),
     lambda m, out: out.__setitem__(..., (m ** 2).sum(axis=1) + m[:, 6] * m[:, 2]), [1], kernel=local_2d,
     rtol=1e-13, topic=TOPIC, covers=("local.array((3, 3))",))


def const_array(x, out, idx):
    c = cuda.const.array_like(COEFFS)
    lut = cuda.const.array_like(LUT)
    i = cuda.grid(1)
    if i < x.size:
        s = 0.0
        for k in range(c.size):
            s = s * x[i] + c[k]
        out[i] = s
        idx[i] = lut[i % 64]


def _const_ref(x, out, idx):
    s = np.zeros_like(x)
    for c in COEFFS:
        s = s * x + c
    out[...] = s
    idx[...] = LUT[np.arange(x.size) % 64]


case("const_array_like", "void(float64[::1], float64[::1], int32[::1])",
     lambda r: [rand(r, n := n_of(r), np.float64, -1.5, 1.5), poison(n, np.float64), poison(n, np.int32)],
     _blocks, _const_ref, [1, 2], kernel=const_array, rtol=1e-13, atol=1e-13, topic=TOPIC,
     covers=("cuda.const.array_like (float64 and int32 globals)",))


def sync_count_and_or(x, counts, alls, anys):
    i = cuda.grid(1)
    v = x[i] if i < x.size else 0
    c = cuda.syncthreads_count(np.int32(v > 0))     # numba types the predicate int32
    a = cuda.syncthreads_and(np.int32(v != 0))
    o = cuda.syncthreads_or(np.int32(v > 90))
    if cuda.threadIdx.x == 0:
        counts[cuda.blockIdx.x] = c
        alls[cuda.blockIdx.x] = a
        anys[cuda.blockIdx.x] = o


def _sync_ref(x, counts, alls, anys):
    nb = counts.size
    pad = np.zeros(nb * TPB, x.dtype)
    pad[:x.size] = x
    p = pad.reshape(nb, TPB)
    counts[...] = (p > 0).sum(axis=1)
    alls[...] = (p != 0).all(axis=1)
    anys[...] = (p > 90).any(axis=1)


case("syncthreads_count_and_or", "void(int32[::1], int32[::1], int32[::1], int32[::1])",
     lambda r: [rand(r, n := n_of(r, 3000, 9000), np.int32, -100, 100), poison(nb := (n + TPB - 1) // TPB, np.int32),
                poison(nb, np.int32), poison(nb, np.int32)],
     _blocks, _sync_ref, [1, 2, 3], kernel=sync_count_and_or, topic=TOPIC,
     covers=("syncthreads_count", "syncthreads_and", "syncthreads_or"))


def fences(x, out, flag):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 3
        cuda.threadfence_block()
        cuda.threadfence()
        if i == 0:
            flag[0] = 1


case("threadfence_and_block", "void(float32[::1], float32[::1], int32[::1])",
     lambda r: [rand(r, n := n_of(r), np.float32), poison(n, np.float32), poison(1, np.int32)],
     _blocks, lambda x, out, f: (out.__setitem__(..., x * np.float32(3)), f.__setitem__(0, 1)), [1, 2],
     kernel=fences, rtol=1e-7, topic=TOPIC, covers=("threadfence", "threadfence_block"))


def block_scan(x, out):
    s = cuda.shared.array(TPB, dtype=np.int64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < TPB:
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


def _scan_ref(x, out):
    nb = (x.size + TPB - 1) // TPB
    pad = np.zeros(nb * TPB, np.int64)
    pad[:x.size] = x
    out[...] = np.cumsum(pad.reshape(nb, TPB), axis=1).reshape(-1)[:x.size]


case("shared_block_inclusive_scan", "void(int64[::1], int64[::1])",
     lambda r: [rand(r, n := n_of(r), np.int64, -999, 999), poison(n, np.int64)], _blocks, _scan_ref, [1],
     kernel=block_scan, topic=TOPIC, covers=("Hillis-Steele scan in shared memory", "d *= 2 loop"))


def shared_matmul(a, b, c):
    sa = cuda.shared.array((TILE, TILE), dtype=np.float32)
    sb = cuda.shared.array((TILE, TILE), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = np.float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        k = t * TILE
        sa[ty, tx] = a[x, k + ty] if x < a.shape[0] and k + ty < a.shape[1] else 0
        sb[ty, tx] = b[k + tx, y] if y < b.shape[1] and k + tx < b.shape[0] else 0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[j, tx] * sb[ty, j]
        cuda.syncthreads()
    if x < c.shape[0] and y < c.shape[1]:
        c[x, y] = acc


case("shared_tile_matmul", "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
     lambda r: [rand(r, (m := int(r.integers(40, 120)), k := int(r.integers(40, 120))), np.float32, -1, 1),
                rand(r, (k, nn := int(r.integers(40, 120))), np.float32, -1, 1), poison((m, nn), np.float32)],
     lambda args: (((args[0].shape[0] + TILE - 1) // TILE, (args[1].shape[1] + TILE - 1) // TILE), (TILE, TILE)),
     lambda a, b, c: c.__setitem__(..., (a.astype(np.float64) @ b).astype(np.float32)), [2], kernel=shared_matmul,
     rtol=1e-4, atol=1e-4, topic=TOPIC, covers=("two 2-D shared tiles", "conditional expression loads"))


def stencil5(a, out):
    i, j = cuda.grid(2)
    m, n = a.shape
    if 0 < i < m - 1 and 0 < j < n - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    elif i < m and j < n:
        out[i, j] = a[i, j]


def _stencil_ref(a, out):
    out[...] = a
    out[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) - a[1:-1, 1:-1]


case("stencil_5point_chained_bounds", "void(float64[:, ::1], float64[:, ::1])",
     lambda r: [rand(r, (s := (int(r.integers(50, 200)), int(r.integers(50, 200)))), np.float64),
                poison(s, np.float64)],
     lambda args: (((args[0].shape[0] + 15) // 16, (args[0].shape[1] + 15) // 16), (16, 16)), _stencil_ref, [1],
     kernel=stencil5, rtol=1e-14, atol=1e-14, topic=TOPIC, covers=("5-point stencil", "0 < i < m - 1 guards"))


def array_byte_sizes(c, x, out):
    # numba's ndarray.itemsize / .nbytes: intp, constant itemsize, size * itemsize
    out[0] = c.itemsize
    out[1] = c.nbytes
    out[2] = x.itemsize
    out[3] = x.nbytes + x[0, 0]


def _byte_sizes_ref(c, x, out):
    out[...] = [c.itemsize, c.nbytes, x.itemsize, x.nbytes + x[0, 0]]


case("array_itemsize_nbytes", "void(complex64[:, ::1], int64[:, ::1], int64[::1])",
     lambda r: [(rand(r, (s := (int(r.integers(3, 40)), int(r.integers(3, 40)))), np.float32)
                 + 1j * rand(r, s, np.float32)).astype(np.complex64),
                r.integers(1, 1000, size=(int(r.integers(2, 9)), 3)).astype(np.int64),
                poison(4, np.int64)],
     (1, 1), _byte_sizes_ref, [2], kernel=array_byte_sizes, topic=TOPIC,
     covers=("ndarray.itemsize", "ndarray.nbytes"))


def array_transpose(a, out):
    # numba's ndarray.T: a view with the dimensions reversed (F order for a C array)
    t = a.T
    r, c = cuda.grid(2)
    if r < t.shape[0] and c < t.shape[1]:
        out[r, c] = t[r, c] * 2.0 + a.T.T[c, r] + t.strides[0] / 8.0


case("array_transpose_T", "void(float64[:, ::1], float64[:, ::1])",
     lambda r: [rand(r, (s := (int(r.integers(5, 90)), int(r.integers(5, 90)))), np.float64),
                poison(s[::-1], np.float64)],
     # x covers t's rows (a's columns), y its columns
     lambda args: (((args[0].shape[1] + 15) // 16, (args[0].shape[0] + 15) // 16), (16, 16)),
     lambda a, out: out.__setitem__(..., 3.0 * a.T + a.T.strides[0] / 8.0), [1], kernel=array_transpose,
     topic=TOPIC, covers=("ndarray.T",))
