"""Shared pieces of the benchmarks: loading the competitors (each optional),
a small CUDA driver helper (NVRTC + cuLaunchKernel through cuda.bindings: the
launch floor, the spin kernel, events), timing and the ratio table.

Every competitor is optional: a missing one becomes a note and an empty
column, never an exception.
"""
from __future__ import annotations

import ctypes
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

NOTES: list[str] = []


def note(text: str) -> None:
    NOTES.append(text)
    print(f"note: {text}", file=sys.stderr)


# ---------------------------------------------------------------------------
# Competitors
# ---------------------------------------------------------------------------


def load_cudajit():
    try:
        import cudajit
    except Exception as e:  # noqa: BLE001  (a broken build is a note, not a crash)
        note(f"cudajit column skipped: cannot import cudajit ({e})")
        return None
    if not cudajit.is_available():
        note("cudajit column skipped: cudajit.is_available() is False")
        return None
    return cudajit


def load_numba():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack    # numba-cuda 0.30 with numpy >= 2.5
    try:
        from numba import cuda
        import numba
    except Exception as e:  # noqa: BLE001
        note(f"numba-cuda column skipped: cannot import numba.cuda ({e})")
        return None
    try:
        if not cuda.is_available():
            note("numba-cuda column skipped: numba.cuda.is_available() is False")
            return None
    except Exception as e:  # noqa: BLE001
        note(f"numba-cuda column skipped: {e}")
        return None
    try:
        from importlib.metadata import version
        cuda.bench_version = version("numba-cuda")
    except Exception:  # noqa: BLE001
        cuda.bench_version = numba.__version__
    return cuda


def load_cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        note(f"CUDA C++ (CuPy RawKernel) column skipped: {e}")
        return None
    return cupy


def load_raw_cuda():
    """RawCuda over cuda.bindings, or None (with a note) without it or a GPU."""
    try:
        from cuda.bindings import driver, nvrtc
    except Exception as e:  # noqa: BLE001
        note(f"raw cuLaunchKernel floor skipped: cuda.bindings missing ({e})")
        return None
    try:
        return RawCuda((driver, nvrtc))
    except Exception as e:  # noqa: BLE001
        note(f"raw cuLaunchKernel floor skipped: no usable driver/GPU ({str(e).splitlines()[0]})")
        return None


# ---------------------------------------------------------------------------
# cuda.bindings: context, NVRTC, launches, events
# ---------------------------------------------------------------------------


def _check(result):
    err = result[0]
    if int(err) != 0:
        raise RuntimeError(f"CUDA error {err}")
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


class RawCuda:
    """The primary context of device 0 through cuda.bindings (shared with
    cudajit, numba-cuda and CuPy, which all use the primary context)."""

    def __init__(self, bindings):
        self.driver, self.nvrtc = bindings
        d = self.driver
        _check(d.cuInit(0))
        self.device = _check(d.cuDeviceGet(0))
        self.ctx = _check(d.cuDevicePrimaryCtxRetain(self.device))
        _check(d.cuCtxSetCurrent(self.ctx))
        attr = d.CUdevice_attribute
        self.cc = (_check(d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device)),
                   _check(d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device)))
        self.clock_khz = _check(d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, self.device))
        name = _check(d.cuDeviceGetName(256, self.device))
        self.name = name.split(b"\0")[0].decode()
        self._modules = []

    def compile(self, source: str, names: list[str]) -> dict:
        n = self.nvrtc
        prog = _check(n.nvrtcCreateProgram(source.encode(), b"bench.cu", 0, [], []))
        arch = f"-arch=sm_{self.cc[0]}{self.cc[1]}".encode()
        err = n.nvrtcCompileProgram(prog, 2, [arch, b"-std=c++17"])[0]
        if int(err) != 0:
            size = _check(n.nvrtcGetProgramLogSize(prog))
            log = b" " * size
            n.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(f"NVRTC failed:\n{log.decode(errors='replace')}")
        size = _check(n.nvrtcGetCUBINSize(prog))
        cubin = b" " * size
        _check(n.nvrtcGetCUBIN(prog, cubin))
        module = _check(self.driver.cuModuleLoadData(cubin))
        self._modules.append(module)
        return {name: _check(self.driver.cuModuleGetFunction(module, name.encode())) for name in names}

    def launch(self, fn, grid, block, params_address: int):
        return self.driver.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params_address, 0)

    def event(self):
        return _check(self.driver.cuEventCreate(0))

    def record(self, ev):
        _check(self.driver.cuEventRecord(ev, 0))

    def elapsed_ms(self, start, end) -> float:
        _check(self.driver.cuEventSynchronize(end))
        return _check(self.driver.cuEventElapsedTime(start, end))

    def synchronize(self):
        _check(self.driver.cuCtxSynchronize())


class PackedParams:
    """A pre-packed void*[] for cuLaunchKernel (the values are kept alive)."""

    def __init__(self, *values):
        self.values = list(values)
        self.array = (ctypes.c_void_p * len(values))(
            *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in self.values])
        self.address = ctypes.addressof(self.array)


SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
"""


class DeviceTimer:
    """Device time of one launch: a spin kernel first (so that the host's
    launch overhead hides behind it), then events around the launch."""

    def __init__(self, raw: RawCuda | None, cupy, spin_ms: float = 2.0):
        self.raw, self.cupy = raw, cupy
        if raw is not None:
            self.spin_fn = raw.compile(SPIN_SOURCE, ["spin"])["spin"]
            self.spin_params = PackedParams(ctypes.c_longlong(int(spin_ms * raw.clock_khz)))
            self.start, self.end = raw.event(), raw.event()
        elif cupy is not None:
            self.spin_kernel = cupy.RawKernel(SPIN_SOURCE, "spin")
            khz = cupy.cuda.runtime.getDeviceProperties(0)["clockRate"]
            self.cycles = np.int64(spin_ms * khz)
            self.start, self.end = cupy.cuda.Event(), cupy.cuda.Event()
        else:
            raise RuntimeError("device timing needs cuda.bindings or CuPy")

    def time_ms(self, launch) -> float:
        if self.raw is not None:
            self.raw.launch(self.spin_fn, 1, 1, self.spin_params.address)
            self.raw.record(self.start)
            launch()
            self.raw.record(self.end)
            return self.raw.elapsed_ms(self.start, self.end)
        cp = self.cupy
        self.spin_kernel((1,), (1,), (self.cycles,))
        self.start.record(cp.cuda.Stream.null)
        launch()
        self.end.record(cp.cuda.Stream.null)
        self.end.synchronize()
        return cp.cuda.get_elapsed_time(self.start, self.end)


# ---------------------------------------------------------------------------
# Timing and reporting
# ---------------------------------------------------------------------------


def median_wall_per_call(fn, sync, calls: int, runs: int, warmup: int = 200) -> float:
    """Median over `runs` of the wall time per call of `calls` back-to-back
    calls (seconds); `sync` waits for the GPU between runs, not inside."""
    for _ in range(warmup):
        fn()
    sync()
    per_call = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        per_call.append((t1 - t0) / calls)
    return statistics.median(per_call)


def median_device_ms(timer: DeviceTimer, launch, runs: int, warmup: int = 5) -> float:
    for _ in range(warmup):
        timer.time_ms(launch)
    return statistics.median(timer.time_ms(launch) for _ in range(runs))


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list] = field(default_factory=list)

    def add(self, *row):
        self.rows.append(list(row))

    def render(self) -> str:
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, float):
                return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
            return str(v)

        cells = [self.columns] + [[fmt(v) for v in r] for r in self.rows]
        widths = [max(len(r[k]) for r in cells) for k in range(len(self.columns))]
        lines = [self.title, "  ".join(c.ljust(w) for c, w in zip(cells[0], widths)),
                 "  ".join("-" * w for w in widths)]
        lines += ["  ".join(c.rjust(w) if k else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths)))
                  for r in cells[1:]]
        return "\n".join(lines)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def environment(raw: RawCuda | None, cudajit, numba_cuda, cupy) -> dict:
    env = {"python": platform.python_version(), "numpy": np.__version__,
           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    if raw is not None:
        env["device"] = raw.name
        env["compute_capability"] = f"{raw.cc[0]}.{raw.cc[1]}"
    if cudajit is not None:
        env["cudajit"] = getattr(cudajit, "__version__", "?")
    if numba_cuda is not None:
        env["numba_cuda"] = getattr(numba_cuda, "bench_version", "?")
    if cupy is not None:
        env["cupy"] = cupy.__version__
    return env


def write_json(path: str | None, payload: dict) -> None:
    payload = dict(payload, notes=list(NOTES))
    if path:
        with open(path, "w") as f:
            json.dump(payload, f, indent=2, default=float)
        print(f"wrote {path}")
