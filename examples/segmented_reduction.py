"""Segmented reduction, SIMT form: the sum of each segment of a flat array.

    python examples/segmented_reduction.py [--segments 20000] [--mean-length 500]

Segments are given CSR-style: segment s is values[offsets[s]:offsets[s+1]]
(segments may be empty). One block per segment: its threads stride over the
segment, accumulate privately, then reduce in shared memory (a tree with
cuda.syncthreads()). Cooperative (CUB block reduce) and tile versions follow
in later issues; this is the plain numba.cuda-dialect baseline.
"""
import argparse
import sys
import time

import numpy as np

import cudajit as cuda

TPB = 256  # threads per block; the shared array's length must be a constant


@cuda.jit
def segmented_sum(values, offsets, out):
    seg = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    partial = cuda.shared.array(TPB, np.float64)

    acc = 0.0
    i = offsets[seg] + tid
    end = offsets[seg + 1]
    while i < end:
        acc += values[i]
        i += TPB
    partial[tid] = acc
    cuda.syncthreads()

    stride = TPB // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2

    if tid == 0:
        out[seg] = partial[0]


SIGNATURE = "void(float32[::1], int64[::1], float64[::1])"


def make_segments(rng, segments, mean_length):
    lengths = rng.poisson(mean_length, segments)
    lengths[rng.random(segments) < 0.02] = 0           # a few empty segments
    offsets = np.zeros(segments + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = rng.standard_normal(int(offsets[-1])).astype(np.float32)
    return values, offsets


def reference(values, offsets):
    c = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    return c[offsets[1:]] - c[offsets[:-1]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=20000)
    ap.add_argument("--mean-length", type=int, default=500)
    a = ap.parse_args()

    if not cuda.is_available():
        print("No usable CUDA GPU here; compiling only (sm_90).")
        ptx, _ = cuda.compile_ptx(segmented_sum.py_func, SIGNATURE, arch="sm_90")
        print(f"PTX for {SIGNATURE}: {len(ptx)} chars, "
              f"{ptx.count('bar.sync')} barrier(s), shared memory: {'.shared' in ptx}")
        return 0

    rng = np.random.default_rng()
    values, offsets = make_segments(rng, a.segments, a.mean_length)
    d_values, d_offsets = cuda.to_device(values), cuda.to_device(offsets)
    d_out = cuda.to_device(np.full(a.segments, np.nan))

    segmented_sum[a.segments, TPB](d_values, d_offsets, d_out)    # compiles, then runs
    cuda.synchronize()
    runs = 20
    t0 = time.perf_counter()
    for _ in range(runs):
        segmented_sum[a.segments, TPB](d_values, d_offsets, d_out)
    cuda.synchronize()
    seconds = (time.perf_counter() - t0) / runs

    got = d_out.copy_to_host()
    want = reference(values, offsets)
    ok = np.allclose(got, want, rtol=1e-6, atol=1e-5)   # a missing value is ~1
    print(f"{a.segments} segments, {values.size} values: {'OK' if ok else 'WRONG'} "
          f"(max abs error {np.max(np.abs(got - want)):.3g}); "
          f"{seconds * 1e6:.1f} us per launch, {values.nbytes / seconds / 1e9:.1f} GB/s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
