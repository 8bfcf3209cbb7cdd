"""Row softmax as a tile kernel: y[i, :] = exp(x[i, :] - max) / sum(exp(x[i, :] - max)).

    python examples/tile_softmax.py [--rows 4096] [--cols 1000]

One block per row: the row is one (1, TN) tile, TN the row length rounded up
to a power of two, padded with -inf so that the padding adds exp(-inf) = 0 to
the sum; the max and the sum are reductions over axis 1 that broadcast back
(keepdims). Checked against numpy (float64); prints OK, exits 1 on a mismatch.
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


@ct.kernel
def softmax_rows(x, y, TN: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, TN), padding_mode=ct.PaddingMode.NEG_INF)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(y, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=1000)
    a = p.parse_args()
    tn = 1 << (a.cols - 1).bit_length()

    rng = np.random.default_rng()
    x_host = (3 * rng.standard_normal((a.rows, a.cols))).astype(np.float32)
    x = cp.asarray(x_host)
    y = cp.full((a.rows, a.cols), np.nan, np.float32)
    ct.launch(cp.cuda.get_current_stream(), (a.rows,), softmax_rows, (x, y, tn))
    got = cp.asnumpy(y)

    x64 = x_host.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    ok = bool(np.allclose(got, want, rtol=1e-5, atol=1e-7))
    print(f"row softmax, {a.rows} x {a.cols} float32, tile (1, {tn}): {'OK' if ok else 'WRONG'} "
          f"(max abs error {np.nanmax(np.abs(got - want)):.2e}, {int(np.isnan(got).sum())} NaN)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
