"""The conformance suite on the GPU: every case of tests/conformance
launched through cudajit on fresh random data and compared with its numpy
reference; and a dozen cases (all of them with --all) launched, unchanged,
under numba-cuda to show that the references are numba's semantics.

    PYTHONPATH=python python3 -m pytest tests/gpu/test_conformance_gpu.py -q
    # the numba side alone, as a script (binds `cuda` to numba.cuda):
    python3 tests/gpu/test_conformance_gpu.py --numba [--all] [--cases a,b,...]

The seed of a failing run is in the message; CUDAJIT_TEST_SEED=<seed> replays it.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

# The dozen that also run under numba-cuda (semantics-heavy ones: floor
# division and modulo signs, promotion, wrapping constructors, truncation,
# negative-step ranges, loops, shared memory, atomics' return values).
NUMBA_DOZEN = (
    "floordiv_int32", "mod_float64", "truediv_int64", "promote_int32_float32", "promote_int8_uint8",
    "shifts_int8", "ctor_int8_wraps", "ctor_int32_of_float_truncates", "literal_types",
    "range_negative_steps", "nested_loops_break_continue", "augmented_assignment_locals",
    "shared_tree_reduction_while", "atomic_add_return_slot_allocation", "math_floor_float32",
    "tuple_returned_from_device_function",
)


def _launch_config(cfg):
    grid, block = cfg[0], cfg[1]
    extra = tuple(cfg[2:])
    return (grid, block) + extra


def _dispatcher(cuda, case, cache={}):  # noqa: B006  (a per-process cache on purpose)
    key = (id(cuda), case.kernel, case.options)
    if key not in cache:
        opts = dict(case.jit_options)
        eager = opts.pop("eager", False)
        if eager:
            cache[key] = cuda.jit(list(case.kernel.__cudajit_eager__), **opts)(case.kernel)
        else:
            cache[key] = cuda.jit(**opts)(case.kernel) if opts else cuda.jit(case.kernel)
    return cache[key]


def run_case(cuda, case, reg):
    """Launches `case` with `cuda` (cudajit or numba.cuda) and checks its outputs."""
    rng, seed = reg.new_rng()
    args = case.make_inputs(rng)
    expected = reg.expected_outputs(case, args)
    slack = reg.output_slack(case, args)
    dev = {i: cuda.to_device(a)
           for i, a in enumerate(args) if isinstance(a, np.ndarray)}
    launch_args = [dev.get(i, a) for i, a in enumerate(args)]
    cfg = _launch_config(case.config(args))
    _dispatcher(cuda, case)[cfg](*launch_args)
    cuda.synchronize()
    for i in case.outputs:
        reg.assert_output_matches(case, i, dev[i].copy_to_host(), expected[i], f"[seed {seed}, launch {cfg}]",
                                  slack.get(i))


# ---------------------------------------------------------------------------
# pytest: cudajit on the GPU
# ---------------------------------------------------------------------------

if __name__ == "__main__" and "--numba" in sys.argv:
    os.environ["CUDAJIT_CONFORMANCE_WITH_NUMBA"] = "1"   # before conformance binds `cuda`
if os.environ.get("CUDAJIT_CONFORMANCE_WITH_NUMBA") or __name__ == "__main__":
    CASES = []
else:
    import conformance
    from conformance import _registry as reg
    CASES = conformance.CASES


@pytest.mark.gpu
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_conformance_case(case):
    import cudajit
    run_case(cudajit, case, reg)


def test_numba_dozen_exist():
    names = {c.name for c in CASES}
    missing = [n for n in NUMBA_DOZEN if n not in names]
    assert not missing and len(NUMBA_DOZEN) >= 12, missing


@pytest.mark.gpu
def test_references_are_numbas():
    """The dozen under numba-cuda in a fresh process (numba binds `cuda` at import)."""
    pytest.importorskip("numba.cuda")
    env = dict(os.environ, CUDAJIT_CONFORMANCE_WITH_NUMBA="1")
    cmd = [sys.executable, __file__, "--numba"]
    if os.environ.get("CONFORMANCE_NUMBA_ALL"):
        cmd.append("--all")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    print(proc.stdout[-6000:])
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-4000:]
    assert "numba-cuda:" in proc.stdout


# ---------------------------------------------------------------------------
# script: numba-cuda side
# ---------------------------------------------------------------------------


def main(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--numba", action="store_true", help="run the cases under numba-cuda")
    ap.add_argument("--all", action="store_true", help="every case, not only the dozen")
    ap.add_argument("--cases", help="comma-separated case names")
    a = ap.parse_args(argv)
    if a.numba:
        os.environ["CUDAJIT_CONFORMANCE_WITH_NUMBA"] = "1"
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack
        from numba import cuda
    else:
        import cudajit as cuda
    import conformance
    from conformance import _registry as reg
    names = a.cases.split(",") if a.cases else (None if a.all else list(NUMBA_DOZEN))
    cases = [c for c in conformance.CASES if names is None or c.name in names]
    passed, failed = [], []
    for c in cases:
        try:
            run_case(cuda, c, reg)
            passed.append(c.name)
            print(f"PASS {c.name}")
        except Exception as e:  # noqa: BLE001  (reported, counted)
            failed.append(c.name)
            print(f"FAIL {c.name}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
    label = "numba-cuda" if a.numba else "cudajit"
    print(f"{label}: {len(passed)} passed, {len(failed)} failed of {len(cases)}")
    if a.numba and not a.all:
        return 1 if failed else 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
