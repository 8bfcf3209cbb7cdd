"""cudajit.tile.tune: cuTile's autotuning helper, ``exhaustive_search``: every
configuration of a search space compiled, launched and timed on the GPU, the
fastest kept (``import cudajit.tile as ct; ct.tune.exhaustive_search(...)``)."""

import dataclasses
import math
import statistics
import sys
import typing

from ... import _core

__all__ = ["exhaustive_search", "TuningResult", "Measurement"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Measurement:
    """One configuration's time: the mean of its samples, in microseconds,
    and half the 95% confidence interval."""
    config: typing.Any
    mean_us: float
    num_samples: int
    error_margin_us: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class TuningResult:
    """The fastest measurement, every successful one (fastest first), and the
    configurations that failed as ``(config, exception type, message)``."""
    best: Measurement
    successes: typing.Sequence[Measurement]
    failures: typing.Sequence[tuple]

    def summary(self, *, top_k=10, bottom_k=2):
        lines = [f"{len(self.successes)} configuration(s) timed, {len(self.failures)} failed"]
        shown = list(self.successes[:top_k])
        if len(self.successes) > top_k:
            shown += list(self.successes[-bottom_k:]) if bottom_k else []
        for m in shown:
            lines.append(f"  {m.mean_us:10.2f} us +- {m.error_margin_us:.2f} ({m.num_samples} runs)  {m.config}")
        for config, kind, message in self.failures:
            lines.append(f"  failed: {config}: {kind.__name__}: {message}")
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


def _time_us(launch, stream, samples):
    start, end = _core.Event(True), _core.Event(True)
    times = []
    for _ in range(samples):
        start.record(stream)
        launch()
        end.record(stream)
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return times


def exhaustive_search(search_space, stream, grid_fn, kernel, args_fn, hints_fn=None, *, quiet=False,
                      single_run_timeout_sec=None):
    """Times ``kernel`` (or ``kernel(config)``) launched over ``grid_fn(config)``
    with ``args_fn(config)`` and the options ``hints_fn(config)`` for every
    configuration of ``search_space`` on ``stream``; returns a TuningResult
    whose ``best.config`` is the fastest. A configuration that does not
    compile or launch is recorded in ``failures``; if all fail, the first
    error is raised. ``single_run_timeout_sec`` is accepted; cudajit runs the
    candidates in this process."""
    from .._kernel import TileKernel, launch

    successes, failures, first_error = [], [], None
    configs = list(search_space)
    for n, config in enumerate(configs):
        try:
            k = kernel(config) if not isinstance(kernel, TileKernel) and callable(kernel) else kernel
            hints = hints_fn(config) if hints_fn else {}
            if hints:
                k = k.replace_hints(**hints)
            grid = grid_fn(config)
            args = args_fn(config)

            def run():
                launch(stream, grid, k, args)
            times = _time_us(run, stream, 3)   # compiles, warms up
            times = _time_us(run, stream, 10)
            mean = statistics.fmean(times)
            margin = 1.96 * statistics.stdev(times) / math.sqrt(len(times)) if len(times) > 1 else 0.0
            successes.append(Measurement(config=config, mean_us=mean, num_samples=len(times), error_margin_us=margin))
        except Exception as e:  # noqa: BLE001  (a configuration that fails is a result, not the end)
            first_error = first_error or e
            failures.append((config, type(e), str(e)))
        if not quiet:
            print(f"\rtuning: {n + 1}/{len(configs)} configurations, {len(failures)} failed", end="",
                  file=sys.stderr, flush=True)
    if not quiet:
        print(file=sys.stderr)
    if not successes:
        raise first_error
    successes.sort(key=lambda m: m.mean_us)
    return TuningResult(best=successes[0], successes=successes, failures=failures)
