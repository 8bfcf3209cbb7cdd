"""Block algorithms: cudajit's cuda.block.* against the same CUB algorithms in
CUDA C++, and against hand-written shared-memory code.

    python benchmarks/bench_cub.py [--segments 65536] [--length 1024] [--tiles 65536] [--runs 30] [--out cub.json]

Sections (float32 unless said otherwise, 256 threads per block):

  segmented sum   2^16 segments x 1024: one block per row, a strided loop, then
                  cuda.block.sum (cudajit) / cub::BlockReduce<float, 256>::Sum
                  (CUDA C++); also the hand-written shared-memory tree under
                  cudajit and numba-cuda, and CuPy's x.sum(axis=-1)
  block scan      2^16 tiles of 256 x 4 items: warp-transposed load, inclusive
                  sum, warp-transposed store (cub::BlockLoad/BlockScan/BlockStore)
  block sort      2^16 tiles of 256 x 4 uint32 keys: warp-transposed load,
                  radix sort to a striped arrangement, striped store
                  (cub::BlockRadixSort::SortBlockedToStriped)

CUDA C++ is compiled by CuPy's RawModule (NVRTC) against the CCCL headers
cudajit's own CUB instantiations use (cudajit._core.cub_toolchain()), with the
same template arguments. Device time with CUDA events around one launch,
after a ~2 ms spin kernel so that the host's launch overhead hides behind it;
median of --runs after warm-up. Every result is checked against numpy first.
Ratios: time / CUDA C++ time (1.00 = as fast; the target for cudajit's
cuda.block.sum is <= 1.03), and cudajit cuda.block.sum / numba-cuda
shared-memory (< 1 = faster).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

TPB = 256
IPT = 4


# ---------------------------------------------------------------------------
# Kernels. Plain functions: `cuda` is bound to cudajit or numba.cuda by jit_with.
# ---------------------------------------------------------------------------

def segment_sums_block(x, out):
    seg = cuda.blockIdx.x  # noqa: F821
    acc = np.float32(0.0)
    for i in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):  # noqa: F821
        acc += x[seg, i]
    total = cuda.block.sum(acc)  # noqa: F821
    if cuda.threadIdx.x == 0:  # noqa: F821
        out[seg] = total


def segment_sums_shared(x, out):
    seg = cuda.blockIdx.x  # noqa: F821
    tid = cuda.threadIdx.x  # noqa: F821
    partial = cuda.shared.array(TPB, np.float32)  # noqa: F821
    acc = np.float32(0.0)
    for i in range(tid, x.shape[1], TPB):
        acc += x[seg, i]
    partial[tid] = acc
    cuda.syncthreads()  # noqa: F821
    stride = TPB // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()  # noqa: F821
        stride //= 2
    if tid == 0:
        out[seg] = partial[0]


def tile_scan(x, out):
    base = cuda.blockIdx.x * (TPB * IPT)  # noqa: F821
    items = cuda.block.load(x, base, IPT, "warp_transpose")  # noqa: F821
    cuda.block.inclusive_sum(items)  # noqa: F821
    cuda.block.store(out, base, items, "warp_transpose")  # noqa: F821


def tile_sort(x, out):
    base = cuda.blockIdx.x * (TPB * IPT)  # noqa: F821
    keys = cuda.block.load(x, base, IPT, "warp_transpose")  # noqa: F821
    cuda.block.radix_sort(keys, arrangement="striped")  # noqa: F821
    cuda.block.store(out, base, keys, "striped")  # noqa: F821


CPP_SOURCE = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

constexpr int TPB = 256, IPT = 4;

extern "C" __global__ void segment_sums_block(const float* x, float* out, long long length) {
  using Reduce = cub::BlockReduce<float, TPB>;
  __shared__ typename Reduce::TempStorage temp;
  const long long seg = blockIdx.x;
  float acc = 0.0f;
  for (long long i = threadIdx.x; i < length; i += blockDim.x) acc += x[seg * length + i];
  float total = Reduce(temp).Sum(acc);
  if (threadIdx.x == 0) out[seg] = total;
}

extern "C" __global__ void tile_scan(const float* x, float* out) {
  using Load = cub::BlockLoad<float, TPB, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<float, TPB, cub::BLOCK_SCAN_RAKING>;
  using Store = cub::BlockStore<float, TPB, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Store::TempStorage store;
  } temp;
  const long long base = (long long)blockIdx.x * TPB * IPT;
  float items[IPT];
  Load(temp.load).Load(x + base, items);
  __syncthreads();
  Scan(temp.scan).InclusiveSum(items, items);
  __syncthreads();
  Store(temp.store).Store(out + base, items);
}

extern "C" __global__ void tile_sort(const unsigned* x, unsigned* out) {
  using Load = cub::BlockLoad<unsigned, TPB, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<unsigned, TPB, IPT, cub::NullType, 4, true,
                                   cub::BLOCK_SCAN_WARP_SCANS>;
  using Store = cub::BlockStore<unsigned, TPB, IPT, cub::BLOCK_STORE_STRIPED>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
    typename Store::TempStorage store;
  } temp;
  const long long base = (long long)blockIdx.x * TPB * IPT;
  unsigned keys[IPT];
  Load(temp.load).Load(x + base, keys);
  __syncthreads();
  Sort(temp.sort).SortBlockedToStriped(keys);
  __syncthreads();
  Store(temp.store).Store(out + base, keys);
}
"""


def jit_with(module, fn):
    """`fn` compiled by `module` (cudajit or numba.cuda): a copy of the
    function whose global `cuda` is that module (ported code's one change)."""
    glb = dict(fn.__globals__)
    glb["cuda"] = module
    return module.jit(type(fn)(fn.__code__, glb, fn.__name__))


def cccl_include_dir():
    import cudajit
    m = re.search(r"CCCL headers (\S+)", cudajit._core.cub_toolchain())
    if not m:
        raise RuntimeError("cannot tell which CCCL headers cudajit uses")
    return m.group(1)


def cpp_module(cp):
    if cp is None:
        return None
    try:
        mod = cp.RawModule(code=CPP_SOURCE, options=("-std=c++17", f"-I{cccl_include_dir()}"),
                           backend="nvrtc")
        mod.get_function("segment_sums_block")   # compiles now: failures become a note
        return mod
    except Exception as e:  # noqa: BLE001
        C.note(f"CUDA C++ (CUB) column skipped: {str(e).splitlines()[0][:300]}")
        return None


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------

def expect(name, ok):
    if not ok:
        raise AssertionError(f"{name}: wrong result")


def segmented(segments, length, runs, timer, cj, nb, cp, mod):
    rng = np.random.default_rng()
    xh = rng.standard_normal((segments, length)).astype(np.float32)
    want = xh.sum(axis=1, dtype=np.float64)
    close = lambda got: np.allclose(np.asarray(got, np.float64), want, rtol=1e-4, atol=1e-3)  # noqa: E731
    row = {}
    x = cp.asarray(xh) if cp is not None else None
    if mod is not None:
        f = mod.get_function("segment_sums_block")
        out = cp.zeros(segments, cp.float32)
        n = np.int64(length)
        launch = lambda: f((segments,), (TPB,), (x, out, n))  # noqa: E731
        launch()
        expect("cuda_cpp", close(cp.asnumpy(out)))
        row["cuda_cpp"] = C.median_device_ms(timer, launch, runs)
    if cj is not None:
        xd = x if x is not None else cj.to_device(xh)
        for name, fn in (("cudajit_block", segment_sums_block), ("cudajit_shared", segment_sums_shared)):
            k = jit_with(cj, fn)
            out = cj.device_array(segments, np.float32)
            launch = lambda k=k, out=out: k[segments, TPB](xd, out)  # noqa: E731
            launch()
            expect(name, close(out.copy_to_host()))
            row[name] = C.median_device_ms(timer, launch, runs)
    if nb is not None:
        k = jit_with(nb, segment_sums_shared)
        xd = nb.to_device(xh)
        out = nb.device_array(segments, np.float32)
        launch = lambda: k[segments, TPB](xd, out)  # noqa: E731
        launch()
        expect("numba_shared", close(out.copy_to_host()))
        row["numba_shared"] = C.median_device_ms(timer, launch, runs)
    if cp is not None:
        result = {}
        launch = lambda: result.__setitem__("s", x.sum(axis=-1))  # noqa: E731
        launch()
        expect("cupy_sum", close(cp.asnumpy(result["s"])))
        row["cupy_sum"] = C.median_device_ms(timer, launch, runs)
    return row


def tiled(kind, tiles, runs, timer, cj, cp, mod):
    rng = np.random.default_rng()
    tile = TPB * IPT
    if kind == "scan":
        xh = rng.standard_normal(tiles * tile).astype(np.float32)
        want = np.cumsum(xh.reshape(tiles, tile).astype(np.float64), axis=1).ravel()
        check = lambda got: np.allclose(got, want, rtol=1e-4, atol=1e-3)  # noqa: E731
        fn, name = tile_scan, "tile_scan"
    else:
        xh = rng.integers(0, 2**32, tiles * tile, dtype=np.uint64).astype(np.uint32)
        want = np.sort(xh.reshape(tiles, tile), axis=1).ravel()
        check = lambda got: np.array_equal(got, want)  # noqa: E731
        fn, name = tile_sort, "tile_sort"
    row = {}
    x = cp.asarray(xh) if cp is not None else None
    if mod is not None:
        f = mod.get_function(name)
        out = cp.zeros_like(x)
        launch = lambda: f((tiles,), (TPB,), (x, out))  # noqa: E731
        launch()
        expect(f"cuda_cpp {kind}", check(cp.asnumpy(out)))
        row["cuda_cpp"] = C.median_device_ms(timer, launch, runs)
    if cj is not None:
        xd = x if x is not None else cj.to_device(xh)
        k = jit_with(cj, fn)
        out = cj.device_array(xh.size, xh.dtype)
        launch = lambda: k[tiles, TPB](xd, out)  # noqa: E731
        launch()
        expect(f"cudajit {kind}", check(out.copy_to_host()))
        row["cudajit_block"] = C.median_device_ms(timer, launch, runs)
    return row


def report(results: dict, bytes_moved: dict) -> dict:
    table = C.Table("block algorithms, device time per launch (median)",
                    ["section", "impl", "us", "GB/s", "x CUDA C++ (CUB)", "x numba smem"])
    out = {}
    for section, row in results.items():
        cpp, nb = row.get("cuda_cpp"), row.get("numba_shared")
        out[section] = {}
        for name, ms in row.items():
            entry = {"us": ms * 1e3, "GBps": bytes_moved[section] / (ms * 1e-3) / 1e9,
                     "ratio_vs_cuda_cpp": C.ratio(ms, cpp), "ratio_vs_numba_shared": C.ratio(ms, nb)}
            out[section][name] = entry
            table.add(section, name, entry["us"], entry["GBps"], entry["ratio_vs_cuda_cpp"],
                      entry["ratio_vs_numba_shared"])
    print(table.render())
    seg = out.get("segmented_sum", {})
    targets = {
        "segmented sum: cudajit cuda.block.sum / CUB C++ <= 1.03":
            (seg.get("cudajit_block") or {}).get("ratio_vs_cuda_cpp"),
        "segmented sum: cudajit cuda.block.sum / numba-cuda shared memory < 1":
            (seg.get("cudajit_block") or {}).get("ratio_vs_numba_shared"),
        "block scan: cudajit / CUB C++": (out.get("block_scan", {}).get("cudajit_block") or {}).get("ratio_vs_cuda_cpp"),
        "block sort: cudajit / CUB C++": (out.get("block_sort", {}).get("cudajit_block") or {}).get("ratio_vs_cuda_cpp"),
    }
    print()
    for what, r in targets.items():
        print(f"  {what}: {'-' if r is None else f'{r:.3f}'}")
    out["ratios"] = targets
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=1 << 16)
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--tiles", type=int, default=1 << 16)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    raw = C.load_raw_cuda()
    cj, nb, cp = C.load_cudajit(), C.load_numba(), C.load_cupy()
    env = C.environment(raw, cj, nb, cp)
    try:
        timer = C.DeviceTimer(raw, cp)
    except RuntimeError as e:
        C.note(f"block algorithms skipped: {e}")
        C.write_json(a.out, {"environment": env, "cub": {}})
        return None
    if cj is not None:
        env["cub_toolchain"] = cj._core.cub_toolchain()
    mod = cpp_module(cp)
    results = {
        "segmented_sum": segmented(a.segments, a.length, a.runs, timer, cj, nb, cp, mod),
        "block_scan": tiled("scan", a.tiles, a.runs, timer, cj, cp, mod),
        "block_sort": tiled("sort", a.tiles, a.runs, timer, cj, cp, mod),
    }
    tile_bytes = a.tiles * TPB * IPT * 4 * 2
    bytes_moved = {"segmented_sum": a.segments * a.length * 4 + a.segments * 4,
                   "block_scan": tile_bytes, "block_sort": tile_bytes}
    payload = {"environment": env, "runs": a.runs,
               "sizes": {"segments": a.segments, "length": a.length, "tiles": a.tiles,
                         "threads_per_block": TPB, "items_per_thread": IPT},
               "cub": report(results, bytes_moved)}
    C.write_json(a.out, payload)
    return payload


if __name__ == "__main__":
    main()
