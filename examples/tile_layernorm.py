"""Layer norm (forward) as a tile kernel: y = (x - mean) / sqrt(var + eps) * w + b, per row.

    python examples/tile_layernorm.py [--rows 2048] [--cols 3000] [--tile 1024]

cuTile's LayerNorm sample: one block per row, three passes over the row in
(1, TILE_N) tiles (mean, variance with the tail masked by ct.where, then the
normalised, scaled and shifted output); the mean and 1/std are stored too.
Checked against numpy (float64); prints OK, exits 1 on a mismatch.
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

PAD_ZERO = ct.PaddingMode.ZERO


@ct.kernel
def layer_norm_fwd(X, W, B, Y, Mean, Rstd, eps, TILE_N: ct.Constant[int]):
    bid_m = ct.bid(0)
    num_tiles = ct.num_tiles(X, axis=1, shape=(1, TILE_N))
    N = X.shape[1]

    mean = ct.full((1, TILE_N), 0, dtype=ct.float32)
    for j in range(num_tiles):
        mean += ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=PAD_ZERO)
    mean = ct.sum(mean, axis=1) / N
    ct.store(Mean, index=(bid_m,), tile=mean)

    var = ct.full((1, TILE_N), 0, dtype=ct.float32)
    for j in range(num_tiles):
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        mask = (j * TILE_N + ct.arange(TILE_N, dtype=ct.int32)) < N
        centered = ct.where(mask, tx - mean, 0)
        var += centered * centered
    var = ct.sum(var, axis=1) / N
    rstd = 1 / ct.sqrt(var + eps)
    ct.store(Rstd, index=(bid_m,), tile=rstd)

    for j in range(num_tiles):
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        tw = ct.load(W, index=(j,), shape=(TILE_N,), padding_mode=PAD_ZERO)
        tb = ct.load(B, index=(j,), shape=(TILE_N,), padding_mode=PAD_ZERO)
        ty = (tx - mean) * rstd * tw + tb
        ct.store(Y, index=(bid_m, j), tile=ty.astype(Y.dtype))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2048)
    p.add_argument("--cols", type=int, default=3000)
    p.add_argument("--tile", type=int, default=1024)
    a = p.parse_args()
    eps = 1e-5

    rng = np.random.default_rng()
    x_host = (2 * rng.standard_normal((a.rows, a.cols)) + 1.5).astype(np.float32)
    w_host = rng.standard_normal(a.cols).astype(np.float32)
    b_host = rng.standard_normal(a.cols).astype(np.float32)
    x, w, b = cp.asarray(x_host), cp.asarray(w_host), cp.asarray(b_host)
    y = cp.full((a.rows, a.cols), np.nan, np.float32)
    mean = cp.full(a.rows, np.nan, np.float32)
    rstd = cp.full(a.rows, np.nan, np.float32)
    ct.launch(cp.cuda.get_current_stream(), (a.rows,), layer_norm_fwd,
              (x, w, b, y, mean, rstd, eps, a.tile))

    x64 = x_host.astype(np.float64)
    mu = x64.mean(axis=1)
    rs = 1 / np.sqrt(x64.var(axis=1) + eps)
    want = (x64 - mu[:, None]) * rs[:, None] * w_host + b_host
    got = cp.asnumpy(y)
    ok = (np.allclose(got, want, rtol=1e-4, atol=1e-4)
          and np.allclose(cp.asnumpy(mean), mu, rtol=1e-5, atol=1e-5)
          and np.allclose(cp.asnumpy(rstd), rs, rtol=1e-4))
    print(f"layer norm, {a.rows} x {a.cols} float32, TILE_N {a.tile}: {'OK' if ok else 'WRONG'} "
          f"(max abs error of y {np.nanmax(np.abs(got - want)):.2e}, {int(np.isnan(got).sum())} NaN)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
