"""Vector add as a tile kernel (cuTile's quickstart): c = a + b.

    python examples/tile_vector_add.py [--n 1000003] [--tile 1024]

Each block adds one tile of TILE elements; the last tile runs past the end of
the arrays (n is not a multiple of the tile), so its load is padded and its
store masked. Checked against numpy; prints OK, exits 1 on a mismatch.
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
def vector_add(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ta = ct.load(a, index=(i,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    tb = ct.load(b, index=(i,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(c, index=(i,), tile=ta + tb)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_003)
    p.add_argument("--tile", type=int, default=1024)
    a = p.parse_args()

    rng = np.random.default_rng()
    a_host = rng.standard_normal(a.n).astype(np.float32)
    b_host = rng.standard_normal(a.n).astype(np.float32)
    x, y = cp.asarray(a_host), cp.asarray(b_host)
    guard = 37                                        # c is followed by poison that must stay
    c_big = cp.full(a.n + guard, np.nan, np.float32)
    c = c_big[:a.n]

    ct.launch(cp.cuda.get_current_stream(), (ct.cdiv(a.n, a.tile),), vector_add, (x, y, c, a.tile))
    got = cp.asnumpy(c_big)

    want = a_host + b_host
    ok = bool(np.array_equal(got[:a.n], want) and np.isnan(got[a.n:]).all())
    print(f"vector add, {a.n} float32, tile {a.tile}: {'OK' if ok else 'WRONG'} "
          f"(max abs error {np.nanmax(np.abs(got[:a.n] - want)):.2e}, "
          f"{int((~np.isnan(got[a.n:])).sum())} writes past the end)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
