"""Matrix product as a tile kernel: C = A @ B, float16 in, float32 accumulate.

    python examples/tile_matmul.py [--m 1000] [--n 1500] [--k 700] [--dtype float16|float32]

cuTile's MatMul sample: a 1-d grid of (tm, tn) output tiles visited in groups
of GROUP_SIZE_M rows of tiles (for L2 reuse), a K loop of ct.mma on (tm, tk)
and (tk, tn) tiles with zero padding on the ragged edges, float32 accumulator
cast to C's dtype on the way out. float32 inputs go through tfloat32 (tensor
cores). Checked against numpy (float64); prints OK, exits 1 on a mismatch.
CUDAJIT_TILE_IMPL=cuda.tile runs the very same kernel under NVIDIA's cuTile.
"""
import argparse
import os
import sys

import cupy as cp
import numpy as np

if os.environ.get("CUDAJIT_TILE_IMPL") == "cuda.tile":
    import cuda.tile as ct
else:
    import cudajit.tile as ct

ConstInt = ct.Constant[int]


def swizzle_2d(M, N, tm, tn, GROUP_SIZE_M):
    bid = ct.bid(0)
    num_bid_m = ct.cdiv(M, tm)
    num_bid_n = ct.cdiv(N, tn)
    num_bid_in_group = GROUP_SIZE_M * num_bid_n
    group_id = bid // num_bid_in_group
    first_bid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_bid_m - first_bid_m, GROUP_SIZE_M)
    bid_m = first_bid_m + (bid % group_size_m)
    bid_n = (bid % num_bid_in_group) // group_size_m
    return bid_m, bid_n


@ct.kernel
def matmul_kernel(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    M = A.shape[0]
    N = B.shape[1]
    bidx, bidy = swizzle_2d(M, N, tm, tn, 8)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    dtype = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bidx, bidy), tile=ct.astype(acc, C.dtype))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=1000)
    p.add_argument("--n", type=int, default=1500)
    p.add_argument("--k", type=int, default=700)
    p.add_argument("--dtype", choices=["float16", "float32"], default="float16")
    a = p.parse_args()
    dt = np.dtype(a.dtype)
    tm, tn, tk = (128, 256, 64) if dt.itemsize == 2 else (64, 64, 32)

    rng = np.random.default_rng()
    a_host = rng.standard_normal((a.m, a.k)).astype(dt)
    b_host = rng.standard_normal((a.k, a.n)).astype(dt)
    A, B = cp.asarray(a_host), cp.asarray(b_host)
    C = cp.full((a.m, a.n), np.nan, np.float32)
    grid = (ct.cdiv(a.m, tm) * ct.cdiv(a.n, tn),)
    ct.launch(cp.cuda.get_current_stream(), grid, matmul_kernel, (A, B, C, tm, tn, tk))
    got = cp.asnumpy(C)

    a64, b64 = a_host.astype(np.float64), b_host.astype(np.float64)
    want = a64 @ b64
    # accumulation in float32 (inputs exact in float16); tf32 rounds the inputs to 10 bits
    tol = (2e-3 if dt.itemsize == 2 else 4e-3) * (np.abs(a64) @ np.abs(b64))
    ok = bool((np.abs(got - want) <= tol + 1e-6).all())
    print(f"matmul ({a.m} x {a.k}) @ ({a.k} x {a.n}), {a.dtype} in, float32 accumulate, tiles "
          f"{tm}x{tn}x{tk}: {'OK' if ok else 'WRONG'} (max abs error {np.nanmax(np.abs(got - want)):.2e}, "
          f"{int(np.isnan(got).sum())} NaN)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
