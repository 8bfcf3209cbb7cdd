"""cudajit.compute against CUB from CUDA C++, CuPy/PyTorch and cuda.compute
(issue 17).

Rows: reduce (sum) of 2^28 float32; inclusive scan (sum) of 2^28 float32;
segmented sum of 65536 x 1024 float32; radix sort of 2^26 uint32 keys (and
key-value pairs). Columns: device time per call (CUDA events around one call,
after a ~2 ms spin kernel so that the host's overhead hides; median of
--runs, the implementations' calls interleaved) of cudajit.compute (OpKind.PLUS), CUB's Device* algorithm called
from CUDA C++ (benchmarks/compute_cpp/cub_device.cu, built by nvcc into a
shared library, temporary storage allocated once), CuPy (cupy.sum /
cupy.cumsum / axis sum / cupy.sort), PyTorch (torch.sum / torch.cumsum /
torch.sort) and cuda.compute when it can be imported. The target: cudajit
within 3% of CUB C++ on each row.

Then the host overhead of a cached call (wall time per call of reduce_into
on 4096 items, back to back) beside one empty cudajit kernel launch (target
<= 2x), and the first call of reduce_into with a new user operator (ms),
beside cuda.compute's.

--only radix: the radix rows alone (checked against cupy.sort first), with
cudajit's object form (temporary storage allocated once) and CUB C++ called
with an int count (32-bit offsets, as cudajit's sorts below 2^32 items
take) beside the long long one; CUDAJIT_RADIX_OFFSET_BITS=64 makes
cudajit's offsets 64-bit too.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402

TARGET = 1.03


def load_cub(path):
    """The CUB C++ library: `path`, else built with nvcc (cached by source hash)."""
    src = HERE / "compute_cpp" / "cub_device.cu"
    if not path:
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.path.exists(nvcc):
            C.note("CUB C++ column skipped: no nvcc")
            return None
        digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
        path = os.path.join(tempfile.gettempdir(), f"cudajit_bench_cub_{digest}.so")
        if not os.path.exists(path):
            r = subprocess.run([nvcc, "-O3", "-arch=native", "-shared", "-Xcompiler", "-fPIC", "-o", path, str(src)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                C.note(f"CUB C++ column skipped: nvcc failed: {r.stderr[-400:]}")
                return None
    lib = ctypes.CDLL(path)
    for name in ("cub_reduce_sum_f32", "cub_inclusive_sum_f32", "cub_segmented_sum_f32",
                 "cub_radix_sort_keys_u32", "cub_radix_sort_pairs_u32", "cub_radix_sort_keys_u32_i32",
                 "cub_radix_sort_pairs_u32_i32"):
        getattr(lib, name).restype = ctypes.c_int
    return lib


class CubCall:
    """One CUB two-phase call with its temporary storage allocated once."""

    def __init__(self, cp, fn, *args):
        self.fn, self.args = fn, [ctypes.c_void_p(a) if isinstance(a, int) and a > 2**40 else a for a in args]
        size = ctypes.c_size_t(0)
        err = fn(None, ctypes.byref(size), *self.args, None)
        if err:
            raise RuntimeError(f"CUB size query failed: cudaError {err}")
        self.temp = cp.empty(max(size.value, 1), dtype=cp.uint8)
        self.size = size

    def __call__(self):
        err = self.fn(ctypes.c_void_p(self.temp.data.ptr), ctypes.byref(self.size), *self.args, None)
        if err:
            raise RuntimeError(f"CUB call failed: cudaError {err}")


def ptr(a):
    return ctypes.c_void_p(a.data.ptr)


def timed_row(args, timer, rows, name, impls):
    """Each implementation's median over --runs calls, the calls
    interleaved (one of each in turn), so that a GPU's clocks ramping or
    drifting weigh on all of them alike."""
    r = {"name": name}
    live = {}
    for key, fn in impls.items():
        if fn is None:
            continue
        try:
            for _ in range(3):
                timer.time_ms(fn)
            live[key] = fn
        except Exception as e:  # noqa: BLE001
            C.note(f"{name}/{key}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    samples = {key: [] for key in live}
    for _ in range(args.runs):
        for key, fn in live.items():
            samples[key].append(timer.time_ms(fn))
    for key, times in samples.items():
        r[key] = float(np.median(times))
    rows.append(r)
    print(name, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)


def print_table(args, rows):
    table = C.Table("device time per call, ms (median of %d); ratio to CUB C++" % args.runs,
                    ["algorithm", "cudajit", "CUB C++", "CuPy", "PyTorch", "cuda.compute", "cudajit/CUB",
                     f"<= {TARGET}"])
    for r in rows:
        ratio = C.ratio(r.get("cudajit"), r.get("cub_cpp"))
        r["ratio_vs_cub"] = ratio
        table.add(r["name"], r.get("cudajit"), r.get("cub_cpp"), r.get("cupy"), r.get("torch"), r.get("cuda_compute"),
                  ratio, None if ratio is None else ("yes" if ratio <= TARGET else "NO"))
    print(table.render())


def radix_rows(args, cp, cc, torch, nvc, cub, timer, keys, vals, keys_out, vals_out, n_sort, rows=None):
    """The radix sort rows: 2^26 uint32 keys, and key-value pairs; cudajit's
    one-call form and its object form (temporary storage allocated once, as
    the CUB C++ column's), CUB C++ with a 64-bit count (long long) and with
    an int count (32-bit offsets), CuPy, PyTorch, cuda.compute. The results
    are checked against cupy.sort first."""
    standalone = rows is None
    rows = [] if rows is None else rows

    def row(name, impls):
        timed_row(args, timer, rows, name, impls)

    want = cp.sort(keys)
    cc.radix_sort(keys, keys_out, vals, vals_out, cc.SortOrder.ASCENDING, n_sort)
    assert bool((keys_out == want).all()), "radix sort pairs: keys"

    def packed(k, v):
        return cp.sort((k.astype(cp.uint64) << 32) | v.astype(cp.uint64))
    assert bool((packed(keys, vals) == packed(keys_out, vals_out)).all()), "radix sort pairs: values"
    keys_out.fill(0)
    cc.radix_sort(keys, keys_out, None, None, cc.SortOrder.ASCENDING, n_sort)
    assert bool((keys_out == want).all()), "radix sort keys"
    del want
    obj_k = cc.make_radix_sort(keys, keys_out, None, None, cc.SortOrder.ASCENDING)
    tmp_k = cp.empty(max(obj_k(None, keys, keys_out, None, None, n_sort), 1), cp.uint8)
    obj_p = cc.make_radix_sort(keys, keys_out, vals, vals_out, cc.SortOrder.ASCENDING)
    tmp_p = cp.empty(max(obj_p(None, keys, keys_out, vals, vals_out, n_sort), 1), cp.uint8)
    tk = torch.as_tensor(keys.view(cp.int32), device="cuda") if torch is not None else None
    row(f"radix sort 2^{int(np.log2(n_sort))} u32 keys", {
        "cudajit": lambda: cc.radix_sort(keys, keys_out, None, None, cc.SortOrder.ASCENDING, n_sort),
        "cudajit_object": lambda: obj_k(tmp_k, keys, keys_out, None, None, n_sort),
        "cub_cpp": CubCall(cp, cub.cub_radix_sort_keys_u32, ptr(keys), ptr(keys_out), ctypes.c_longlong(n_sort))
        if cub else None,
        "cub_cpp_int": CubCall(cp, cub.cub_radix_sort_keys_u32_i32, ptr(keys), ptr(keys_out), ctypes.c_int(n_sort))
        if cub else None,
        "cupy": lambda: cp.sort(keys),
        "torch": (lambda: torch.sort(tk)) if torch is not None else None,
        "cuda_compute": (lambda: nvc.radix_sort(d_in_keys=keys, d_out_keys=keys_out, d_in_values=None,
                                                d_out_values=None, order=nvc.SortOrder.ASCENDING,
                                                num_items=n_sort)) if nvc is not None else None,
    })
    row(f"radix sort 2^{int(np.log2(n_sort))} u32 pairs", {
        "cudajit": lambda: cc.radix_sort(keys, keys_out, vals, vals_out, cc.SortOrder.ASCENDING, n_sort),
        "cudajit_object": lambda: obj_p(tmp_p, keys, keys_out, vals, vals_out, n_sort),
        "cub_cpp": CubCall(cp, cub.cub_radix_sort_pairs_u32, ptr(keys), ptr(keys_out), ptr(vals), ptr(vals_out),
                           ctypes.c_longlong(n_sort)) if cub else None,
        "cub_cpp_int": CubCall(cp, cub.cub_radix_sort_pairs_u32_i32, ptr(keys), ptr(keys_out), ptr(vals),
                               ptr(vals_out), ctypes.c_int(n_sort)) if cub else None,
        "cuda_compute": (lambda: nvc.radix_sort(d_in_keys=keys, d_out_keys=keys_out, d_in_values=vals,
                                                d_out_values=vals_out, order=nvc.SortOrder.ASCENDING,
                                                num_items=n_sort)) if nvc is not None else None,
    })

    if standalone:
        print_table(args, rows)
        for r in rows:
            print(f"{r['name']}: cudajit object form {r.get('cudajit_object')} ms "
                  f"(/CUB C++: {C.ratio(r.get('cudajit_object'), r.get('cub_cpp'))}); CUB C++ with an int count "
                  f"{r.get('cub_cpp_int')} ms (cudajit/that: {C.ratio(r.get('cudajit'), r.get('cub_cpp_int'))})")
        C.write_json(args.out, {"rows": rows, "offset_bits": os.environ.get("CUDAJIT_RADIX_OFFSET_BITS", "auto")})
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--scale", type=float, default=1.0, help="size factor (1.0: 2^28 items, 65536 segments)")
    ap.add_argument("--cub-lib", help="a prebuilt cub_device.cu library (else nvcc builds one)")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--only", choices=["radix"], help="radix: the radix sort rows alone (after a check of their "
                    "results against cupy.sort), no host-overhead or first-call measures")
    args = ap.parse_args()

    cj = C.load_cudajit()
    cp = C.load_cupy()
    if cj is None or cp is None:
        print("needs cudajit and CuPy on a GPU")
        return 1
    import cudajit.compute as cc
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        torch = None
        C.note(f"PyTorch column skipped: {e}")
    try:
        import cuda.compute as nvc
    except Exception as e:  # noqa: BLE001
        nvc = None
        C.note(f"cuda.compute column skipped: {e}")
    cub = load_cub(args.cub_lib)
    raw = C.load_raw_cuda()
    timer = C.DeviceTimer(raw, cp)
    rng = np.random.default_rng(17)

    n = int(2**28 * args.scale) if args.only != "radix" else 1024
    segs, seg_len = int(65536 * args.scale), 1024
    n_sort = int(2**26 * args.scale)
    x = cp.asarray(rng.random(n, dtype=np.float32))
    out1 = cp.empty(1, np.float32)
    out_n = cp.empty(n, np.float32)
    h0 = np.zeros(1, np.float32)
    xs = x[: segs * seg_len]
    offsets = cp.arange(0, (segs + 1) * seg_len, seg_len, dtype=cp.int32)
    out_s = cp.empty(segs, np.float32)
    keys = cp.asarray(rng.integers(0, 2**32, n_sort, dtype=np.uint32))
    vals = cp.asarray(rng.integers(0, 2**32, n_sort, dtype=np.uint32))
    keys_out, vals_out = cp.empty_like(keys), cp.empty_like(vals)
    tx = torch.as_tensor(x, device="cuda") if torch is not None else None

    if args.only == "radix":
        return radix_rows(args, cp, cc, torch, nvc, cub, timer, keys, vals, keys_out, vals_out, n_sort)
    # correctness first: every implementation against numpy (float sums to a relative 1e-5)
    xh = cp.asnumpy(x)
    want_sum = xh.astype(np.float64).sum()
    cc.reduce_into(x, out1, cc.OpKind.PLUS, n, h0)
    assert abs(float(out1.get()[0]) - want_sum) <= 1e-5 * want_sum, ("reduce", out1.get(), want_sum)
    cc.inclusive_scan(x, out_n, cc.OpKind.PLUS, None, n)
    got = cp.asnumpy(out_n)
    want = np.cumsum(xh, dtype=np.float64)
    assert np.allclose(got[:: max(1, n // 4096)], want[:: max(1, n // 4096)], rtol=1e-4), "inclusive scan"
    cc.segmented_reduce(xs, out_s, offsets[:-1], offsets[1:], cc.OpKind.PLUS, h0, segs)
    np.testing.assert_allclose(cp.asnumpy(out_s), xh[: segs * seg_len].reshape(segs, seg_len).sum(axis=1),
                               rtol=1e-4)

    rows = []

    def row(name, impls):
        timed_row(args, timer, rows, name, impls)

    red = cc.make_reduce_into(x, out1, cc.OpKind.PLUS, h0)
    red_tmp = cp.empty(max(red(None, x, out1, n, None, h0), 1), cp.uint8)
    row("reduce sum 2^28 f32", {
        "cudajit": lambda: red(red_tmp, x, out1, n, None, h0),
        "cub_cpp": CubCall(cp, cub.cub_reduce_sum_f32, ptr(x), ptr(out1), ctypes.c_longlong(n)) if cub else None,
        "cupy": lambda: cp.sum(x, out=out1[0]),
        "torch": (lambda: torch.sum(tx)) if torch is not None else None,
        "cuda_compute": (lambda: nvc.reduce_into(d_in=x, d_out=out1, op=nvc.OpKind.PLUS, num_items=n, h_init=h0))
        if nvc is not None else None,
    })
    scan = cc.make_inclusive_scan(x, out_n, cc.OpKind.PLUS, None)
    scan_tmp = cp.empty(max(scan(None, x, out_n, None, None, n), 1), cp.uint8)
    row("inclusive scan 2^28 f32", {
        "cudajit": lambda: scan(scan_tmp, x, out_n, None, None, n),
        "cub_cpp": CubCall(cp, cub.cub_inclusive_sum_f32, ptr(x), ptr(out_n), ctypes.c_longlong(n)) if cub else None,
        "cupy": lambda: cp.cumsum(x, out=out_n),
        "torch": (lambda: torch.cumsum(tx, 0)) if torch is not None else None,
        "cuda_compute": (lambda: nvc.inclusive_scan(d_in=x, d_out=out_n, op=nvc.OpKind.PLUS, init_value=None,
                                                    num_items=n)) if nvc is not None else None,
    })
    starts, ends = offsets[:-1], offsets[1:]
    seg = cc.make_segmented_reduce(xs, out_s, starts, ends, cc.OpKind.PLUS, h0)
    x2 = xs.reshape(segs, seg_len)
    no_tmp = cp.empty(1, cp.uint8)
    row(f"segmented sum {segs}x{seg_len} f32", {
        "cudajit": lambda: seg(no_tmp, xs, out_s, segs, starts, ends, None, h0),
        "cub_cpp": CubCall(cp, cub.cub_segmented_sum_f32, ptr(xs), ptr(out_s), ctypes.c_int(segs), ptr(starts),
                           ptr(ends)) if cub else None,
        "cupy": lambda: cp.sum(x2, axis=1, out=out_s),
        "torch": (lambda: torch.sum(torch.as_tensor(x2, device="cuda"), 1)) if torch is not None else None,
        "cuda_compute": (lambda: nvc.segmented_reduce(d_in=xs, d_out=out_s, num_segments=segs,
                                                      start_offsets_in=starts, end_offsets_in=ends,
                                                      op=nvc.OpKind.PLUS, h_init=h0)) if nvc is not None else None,
    })
    radix_rows(args, cp, cc, torch, nvc, cub, timer, keys, vals, keys_out, vals_out, n_sort, rows)

    print_table(args, rows)

    # host overhead of a cached call against one kernel launch
    small = cp.asarray(rng.random(4096, dtype=np.float32))

    @cj.jit
    def empty(a):
        pass

    empty[1, 32](small)
    sync = cp.cuda.runtime.deviceSynchronize
    launch_s = C.median_wall_per_call(lambda: empty[1, 32](small), sync, 200, 15)
    call_s = C.median_wall_per_call(lambda: cc.reduce_into(small, out1, cc.OpKind.PLUS, 4096, h0), sync, 200, 15)
    obj = cc.make_reduce_into(small, out1, cc.OpKind.PLUS, h0)
    obj_s = C.median_wall_per_call(lambda: obj(no_tmp, small, out1, 4096, None, h0), sync, 200, 15)
    print(f"host overhead per call: one empty kernel launch {launch_s * 1e6:.2f} us; reduce_into(4096) "
          f"{call_s * 1e6:.2f} us ({call_s / launch_s:.2f}x, target <= 2x); make_reduce_into object "
          f"{obj_s * 1e6:.2f} us ({obj_s / launch_s:.2f}x)")
    nvc_s = None
    if nvc is not None:
        try:
            nvc_s = C.median_wall_per_call(lambda: nvc.reduce_into(d_in=small, d_out=out1, op=nvc.OpKind.PLUS,
                                                                   num_items=4096, h_init=h0), sync, 50, 7, warmup=20)
            print(f"cuda.compute reduce_into(4096): {nvc_s * 1e6:.2f} us a call")
        except Exception as e:  # noqa: BLE001
            C.note(f"cuda.compute host overhead: {e}")

    # first call with a new user operator (a fresh function: no cache of any kind has it)
    tag = time.time_ns()
    ns = {}
    exec(f"def op(a, b):\n    return a + b * np.float32(1.0 + 1e-30 * {tag % 1000})\n", {"np": np}, ns)
    os.environ.setdefault("CUDAJIT_CACHE", "0")
    t0 = time.perf_counter()
    cc.reduce_into(small, out1, ns["op"], 4096, h0)
    sync()
    first_ms = (time.perf_counter() - t0) * 1e3
    print(f"first reduce_into with a new user operator: cudajit {first_ms:.0f} ms")
    nvc_first = None
    if nvc is not None:
        ns2 = {}
        exec(f"def op(a, b):\n    return a + b * np.float32(1.0 + 1e-30 * {(tag + 1) % 1000})\n", {"np": np}, ns2)
        try:
            t0 = time.perf_counter()
            nvc.reduce_into(d_in=small, d_out=out1, op=ns2["op"], num_items=4096, h_init=h0)
            sync()
            nvc_first = (time.perf_counter() - t0) * 1e3
            print(f"first reduce_into with a new user operator: cuda.compute {nvc_first:.0f} ms")
        except Exception as e:  # noqa: BLE001
            C.note(f"cuda.compute first call: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    C.write_json(args.out, {"rows": rows, "host_launch_us": launch_s * 1e6, "host_reduce_into_us": call_s * 1e6,
                            "host_object_us": obj_s * 1e6, "cuda_compute_host_us": None if nvc_s is None else nvc_s * 1e6,
                            "first_call_ms": first_ms, "cuda_compute_first_call_ms": nvc_first,
                            "environment": C.environment(raw, cj, None, cp)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
