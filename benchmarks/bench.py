"""All benchmarks in one run, one JSON:

    python benchmarks/bench.py --out bench.json [--runs 30] [--calls 2000] [--sizes ...]

Sections: launch overhead (bench_launch.py) and axpy throughput
(bench_axpy.py), cudajit side by side with numba-cuda, CUDA C++ (CuPy
RawKernel) and, for launches, a raw cuLaunchKernel loop (the floor).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import bench_axpy  # noqa: E402
import bench_launch  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--sizes", default="1048576,16777216,67108864")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args()
    raw = C.load_raw_cuda()
    cj, nb, cp = C.load_cudajit(), C.load_numba(), C.load_cupy()
    payload = {"environment": C.environment(raw, cj, nb, cp), "runs": a.runs, "calls": a.calls}
    payload["launch"] = bench_launch.report(bench_launch.run(a.calls, a.runs, raw, cj, nb, cp,
                                                             bench_launch.load_torch()))
    print()
    try:
        timer = C.DeviceTimer(raw, cp)
        sizes = [int(s) for s in a.sizes.split(",")]
        payload["axpy"] = bench_axpy.report(bench_axpy.run(sizes, a.runs, timer, cj, nb, cp))
    except RuntimeError as e:
        C.note(f"axpy skipped: {e}")
        payload["axpy"] = {}
    C.write_json(a.out, payload)


if __name__ == "__main__":
    main()
