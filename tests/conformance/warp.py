"""Warp-level and bit intrinsics: laneid, warpsize, activemask,
shfl_sync/shfl_up_sync/shfl_down_sync/shfl_xor_sync (int32, int64,
float32, float64), all/any/eq/ballot/match_any/match_all_sync, popc, brev,
clz, ffs, fma, cbrt, selp. Launch sizes are whole warps.
"""
import numpy as np

from ._registry import SMALL, build, case, cuda, n_of, poison, rand, sn  # noqa: F401

TOPIC = "warp"
G = globals()
FULL = 0xFFFFFFFF


def _warps(args):
    n = next(a for a in args if isinstance(a, np.ndarray)).size
    return (n // 128, 128)


def _wn(r):
    return 128 * int(r.integers(1, 3) if SMALL else r.integers(8, 40))


def lane_ids(out):
    i = cuda.grid(1)
    out[0, i] = cuda.laneid
    out[1, i] = cuda.warpsize
    out[2, i] = cuda.activemask() == FULL


def _lane_ref(out):
    n = out.shape[1]
    out[0] = np.arange(n) % 32
    out[1] = 32
    out[2] = 1


case("laneid_warpsize_activemask", "void(int64[:, ::1])",
     lambda r: [poison((3, _wn(r)), np.int64)], lambda args: (args[0].shape[1] // 128, 128), _lane_ref, [0],
     kernel=lane_ids, topic=TOPIC, covers=("cuda.laneid", "cuda.warpsize", "cuda.activemask()"))

SHFL_SRC = '''
def {name}(x, out):
    i = cuda.grid(1)
    v = x[i]
    lane = cuda.laneid
    out[0, i] = cuda.shfl_sync(FULL, v, (lane * 7 + 3) % 32)
    out[1, i] = cuda.shfl_up_sync(FULL, v, 3)
    out[2, i] = cuda.shfl_down_sync(FULL, v, 5)
    out[3, i] = cuda.shfl_xor_sync(FULL, v, 9)
'''


def _shfl_ref(x, out):
    w = x.reshape(-1, 32)
    lane = np.arange(32)
    out[0] = w[:, (lane * 7 + 3) % 32].reshape(-1)
    up = np.where(lane >= 3, lane - 3, lane)
    out[1] = w[:, up].reshape(-1)
    down = np.where(lane + 5 < 32, lane + 5, lane)
    out[2] = w[:, down].reshape(-1)
    out[3] = w[:, lane ^ 9].reshape(-1)


for dt in ("int32", "int64", "float32", "float64"):     # numba: no unsigned shuffles
    name = f"shfl_sync_variants_{dt}"
    k = build(SHFL_SRC.format(name=name), name, G)
    case(name, f"void({dt}[::1], {dt}[:, ::1])",
         (lambda dt: lambda r: [rand(r, n := _wn(r), dt, *((0 if dt.startswith("u") else -10**6, 10**6)
                                                           if "int" in dt else (-4, 4))), poison((4, n), dt)])(dt),
         _warps, _shfl_ref, [1], kernel=k, topic=TOPIC,
         covers=("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", dt))


def warp_reduce(x, out):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


case("warp_reduce_shfl_down_float64", "void(float64[::1], float64[::1])",
     lambda r: [rand(r, n := _wn(r), np.float64), poison(n // 32, np.float64)], _warps,
     lambda x, out: out.__setitem__(..., x.reshape(-1, 32).sum(axis=1)), [1], kernel=warp_reduce, rtol=1e-13,
     atol=1e-13, topic=TOPIC, covers=("warp reduction with shfl_down_sync in a while loop",))


def vote(x, out):
    i = cuda.grid(1)
    p = x[i] > 0
    out[0, i] = cuda.all_sync(FULL, p)
    out[1, i] = cuda.any_sync(FULL, x[i] > 95)
    out[2, i] = cuda.eq_sync(FULL, x[i] > -1000)
    out[3, i] = cuda.ballot_sync(FULL, p)


def _vote_ref(x, out):
    w = x.reshape(-1, 32)
    p = w > 0
    rep = lambda v: np.repeat(v, 32)  # noqa: E731
    out[0] = rep(p.all(axis=1))
    out[1] = rep((w > 95).any(axis=1))
    out[2] = 1
    # numba types ballot_sync as int32 (numba/cuda/intrinsics.py: signature(types.i4, ...)),
    # so lane 31's bit is the sign: stored into int64 it sign-extends (cvt.s64.s32).
    out[3] = rep((p * (1 << np.arange(32, dtype=np.int64))).sum(axis=1).astype(np.uint32).view(np.int32))


case("vote_all_any_eq_ballot", "void(int32[::1], int64[:, ::1])",
     lambda r: [rand(r, n := _wn(r), np.int32, -3, 100), poison((4, n), np.int64)], _warps, _vote_ref, [1],
     kernel=vote, topic=TOPIC, covers=("all_sync", "any_sync", "eq_sync", "ballot_sync"))


def match(x, anys, alls, preds):
    i = cuda.grid(1)
    anys[i] = cuda.match_any_sync(FULL, x[i])
    m, p = cuda.match_all_sync(FULL, x[i] // 1000)
    alls[i] = m
    preds[i] = p


def _match_ref(x, anys, alls, preds):
    w = x.reshape(-1, 32)
    bits = 1 << np.arange(32, dtype=np.int64)
    eq = w[:, :, None] == w[:, None, :]
    anys[...] = (eq * bits[None, None, :]).sum(axis=2).reshape(-1).astype(anys.dtype)
    same = (w // 1000 == (w // 1000)[:, :1]).all(axis=1)
    alls[...] = np.repeat(np.where(same, 0xFFFFFFFF, 0), 32).astype(alls.dtype)
    preds[...] = np.repeat(same, 32)


def _match_inputs(r):
    n = _wn(r)
    x = rand(r, n, np.int32, 0, 6)
    w = x.reshape(-1, 32)
    w[::2] += 0                     # even warps: values 0..5, all in the same thousand
    w[1::2, 0] += 5000              # odd warps: one lane differs by thousands
    return [x, poison(n, np.uint32), poison(n, np.uint32), rand(r, n, np.bool_)]


case("match_any_all_sync", "void(int32[::1], uint32[::1], uint32[::1], boolean[::1])", _match_inputs, _warps,
     _match_ref, [1, 2, 3], kernel=match, topic=TOPIC, covers=("match_any_sync", "match_all_sync -> (mask, pred)"))

BITS_SRC = '''
def {name}(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = cuda.popc(v)
        out[1, i] = cuda.clz(v)
        out[2, i] = cuda.ffs(v)
        out[3, i] = {brev_expr}
'''


def _bits_ref(bits):
    def ref(x, out):
        u = x.astype(np.uint64) & np.uint64((1 << bits) - 1)
        pys = [int(v) for v in u]
        out[0] = [bin(v).count("1") for v in pys]
        out[1] = [bits - v.bit_length() for v in pys]
        out[2] = [(v & -v).bit_length() for v in pys]
        if x.dtype.kind == "u":
            out[3] = [int(f"{v:0{bits}b}"[::-1], 2) & ((1 << 62) - 1) if bits == 64 else int(f"{v:0{bits}b}"[::-1], 2)
                      for v in pys]
        else:
            out[3] = 0
    return ref


for dt, bits in (("uint32", 32), ("uint64", 64), ("int32", 32), ("int64", 64)):
    name = f"bit_intrinsics_{dt}"
    brev = ("cuda.brev(v)" + (" & 0x3FFFFFFFFFFFFFFF" if bits == 64 else "")) if dt.startswith("u") else "0"
    k = build(BITS_SRC.format(name=name, brev_expr=brev), name, G)
    case(name, f"void({dt}[::1], int64[:, ::1])",
         (lambda dt, bits: lambda r: [rand(r, n := n_of(r), dt, 1, (1 << (bits - 2))), poison((4, n), np.int64)])(dt, bits),
         lambda args: ((args[0].size + 127) // 128, 128), _bits_ref(bits), [1], kernel=k, topic=TOPIC,
         covers=("popc", "clz", "ffs (1-based)", "brev (unsigned only in numba)", dt))


def fma_cbrt_selp(a, b, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = cuda.fma(a[i], b[i], c[i])
        out[1, i] = cuda.cbrt(a[i])
        out[2, i] = cuda.selp(a[i] > b[i], a[i], c[i])


def _fcs_ref(a, b, c, out):
    out[0] = a * b + c
    out[1] = np.cbrt(a)
    out[2] = np.where(a > b, a, c)


for dt, tol in (("float32", 3e-6), ("float64", 1e-14)):
    case(f"fma_cbrt_selp_{dt}", f"void({dt}[::1], {dt}[::1], {dt}[::1], {dt}[:, ::1])",
         (lambda dt: lambda r: [rand(r, n := n_of(r), dt), rand(r, n, dt), rand(r, n, dt), poison((3, n), dt)])(dt),
         lambda args: ((args[0].size + 127) // 128, 128), _fcs_ref, [3], kernel=fma_cbrt_selp, rtol=tol, atol=tol,
         topic=TOPIC, covers=("cuda.fma", "cuda.cbrt", "cuda.selp", dt))
