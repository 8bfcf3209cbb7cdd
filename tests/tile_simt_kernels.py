"""@cudajit.jit (SIMT) kernels that call tile operations beside their
thread-index code (docs/tiles.md, "Tiles inside SIMT kernels").
tests/test_tile_simt.py compiles them and checks the refusals;
tests/gpu/test_tile_simt_gpu.py runs them against numpy."""
import cudajit as cuda
import cudajit.tile as ct

ROW = 256
CHUNK = 128
ZERO = ct.PaddingMode.ZERO


@cuda.jit(device=True)
def flat_thread():
    return cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)


@cuda.jit(device=True)
def block_threads():
    return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z


@cuda.jit(device=True)
def chunks(n):
    return (n + CHUNK - 1) // CHUNK


@cuda.jit
def normalize_rows(x, sums, y):
    """The row's sum by tiles, then every thread divides its share of the row."""
    row = cuda.blockIdx.x
    t = ct.load(x, index=(row, 0), shape=(1, ROW))
    ct.store(sums, index=(row,), tile=ct.sum(t, axis=1))
    cuda.syncthreads()   # the tile's store before other threads read it
    s = sums[row]
    for j in range(flat_thread(), ROW, block_threads()):
        y[row, j] = x[row, j] / s


@cuda.jit
def simt_then_tile(x, tmp, out):
    """Per-thread values written by SIMT code, reduced by a tile: the tile
    operations follow a loop whose trip count differs between threads."""
    row = cuda.blockIdx.x
    for j in range(flat_thread(), ROW, block_threads()):
        tmp[row, j] = x[row, j] * x[row, j] + j
    cuda.syncthreads()
    t = ct.load(tmp, index=(row, 0), shape=(1, ROW))
    ct.store(out, index=(row,), tile=ct.max(t, axis=1))


@cuda.jit
def accumulate_chunks(x, out):
    """A loop with a uniform trip count (a device function's result) around
    tile loads; the last chunk is ragged (padded with zeros)."""
    row = cuda.blockIdx.x
    acc = ct.zeros((1, CHUNK), dtype=ct.float32)
    for k in range(chunks(x.shape[1])):
        acc += ct.load(x, index=(row, k), shape=(1, CHUNK), padding_mode=ZERO)
    ct.store(out, index=(row, 0), tile=acc)
    cuda.syncthreads()
    if flat_thread() == 0:
        out[row, 0] += 1.0


@cuda.jit
def matmul_tiles(a, b, c):
    """One 64x64 tile of c per block, K in steps of 32 (tensor cores)."""
    bm = cuda.blockIdx.x
    bn = cuda.blockIdx.y
    acc = ct.zeros((64, 64), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], 32)):
        ta = ct.load(a, index=(bm, k), shape=(64, 32), padding_mode=ZERO)
        tb = ct.load(b, index=(k, bn), shape=(32, 64), padding_mode=ZERO)
        acc = ct.mma(ta, tb, acc)
    ct.store(c, index=(bm, bn), tile=acc)


# ---- refused: each a CompileError at the tile operation's line ------------------

@cuda.jit
def tile_in_branch(x, out):
    if cuda.threadIdx.x < 32:
        t = ct.load(x, index=(0,), shape=(CHUNK,))   # L:branch
        ct.store(out, index=(0,), tile=t)


@cuda.jit
def tile_after_early_return(x, out):
    if cuda.threadIdx.y > 0:
        return
    t = ct.load(x, index=(0,), shape=(CHUNK,))   # L:return
    ct.store(out, index=(0,), tile=t)


@cuda.jit
def varying_scalar(x, out):
    t = ct.load(x, index=(0,), shape=(CHUNK,))
    ct.store(out, index=(0,), tile=t * cuda.threadIdx.x)   # L:scalar


@cuda.jit
def varying_index_from_device_function(x, out):
    t = ct.load(x, index=(flat_thread(),), shape=(CHUNK,))   # L:devfn
    ct.store(out, index=(0,), tile=t)


@cuda.jit
def varying_trip_count(x, out):
    for i in range(cuda.threadIdx.x):
        t = ct.load(x, index=(i,), shape=(CHUNK,))   # L:loop
        ct.store(out, index=(0,), tile=t)


@cuda.jit
def varying_break(x, out, n):
    acc = ct.zeros((CHUNK,), dtype=ct.float32)
    for i in range(n):
        if x[cuda.threadIdx.x] > 3:
            break
        acc += ct.load(x, index=(i,), shape=(CHUNK,))   # L:break
    ct.store(out, index=(0,), tile=acc)


@cuda.jit
def joined_value(x, out):
    if cuda.threadIdx.x == 0:
        i = 1
    else:
        i = 2
    t = ct.load(x, index=(i,), shape=(CHUNK,))   # L:join
    ct.store(out, index=(0,), tile=t)


@cuda.jit
def from_shared_array(x, out):
    sh = cuda.shared.array(CHUNK, cuda.float32)
    sh[cuda.threadIdx.x] = x[cuda.threadIdx.x]
    cuda.syncthreads()
    t = ct.load(sh, index=(0,), shape=(CHUNK,))   # L:shared
    ct.store(out, index=(0,), tile=t)
