"""Segmented sum as a tile kernel (issue 11's running case): out[s] = sum(x[s, :]).

    python examples/tile_segment_sum.py [--segments 4096] [--length 1024]

One block per segment loads the row as a (1, TILE) tile (padded with zeros when
the row is shorter than the tile) and stores ct.sum over axis 1. Launched both
ways: cuTile's ct.launch(stream, grid, kernel, args) and numba's kernel[grid](*args).
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


@ct.kernel
def segment_sums(x, out, TILE: ct.Constant[int]):
    seg = ct.bid(0)
    t = ct.load(x, index=(seg, 0), shape=(1, TILE), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(seg,), tile=ct.sum(t, axis=1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--segments", type=int, default=4096)
    p.add_argument("--length", type=int, default=1024)
    a = p.parse_args()
    tile = 1 << (a.length - 1).bit_length()          # the row, rounded up to a power of two

    rng = np.random.default_rng()
    x_host = rng.standard_normal((a.segments, a.length)).astype(np.float32)
    want = x_host.astype(np.float64).sum(axis=1)
    x = cp.asarray(x_host)

    ok_all = True
    launches = {"ct.launch": lambda out: ct.launch(cp.cuda.get_current_stream(), (a.segments,),
                                                   segment_sums, (x, out, tile))}
    if ct.__name__.startswith("cudajit"):
        launches["kernel[grid]"] = lambda out: segment_sums[a.segments](x, out, tile)
    for name, launch in launches.items():
        out = cp.full(a.segments, np.nan, np.float32)
        launch(out)
        got = cp.asnumpy(out).astype(np.float64)
        err = np.max(np.abs(got - want))
        ok = bool(np.allclose(got, want, rtol=1e-5, atol=1e-4))
        ok_all &= ok
        print(f"segment sums, {a.segments} x {a.length} float32, tile (1, {tile}), {name}: "
              f"{'OK' if ok else 'WRONG'} (max abs error {err:.2e})")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
