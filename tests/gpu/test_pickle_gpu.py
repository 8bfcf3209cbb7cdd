"""Kernels shipped to other processes (issue 12) launching on the GPU: a
multiprocessing spawn pool of 4 workers unpickles kernels (by reference from
an importable module, and by value: a closure through cloudpickle) and runs
them on fresh random data; the parent checks every result against numpy.
The CPU tier of the same round trips is tests/test_pickle.py."""
import multiprocessing
import os
import sys

import numpy as np
import pytest

import cudajit

pytestmark = pytest.mark.gpu

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)
import pickle_kernels as pk  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.fixture
def worker_env(monkeypatch):
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", TESTS + (os.pathsep + old if old else ""))


def _closure(c):
    @cudajit.jit
    def shift(x):
        i = cudajit.grid(1)
        if i < x.size:
            x[i] = x[i] + c
    return shift


def _check(results, expect):
    pids = set()
    for (pid, x, y), f in zip(results, expect):
        pids.add(pid)
        np.testing.assert_allclose(y, f(x), rtol=1e-6, err_msg=f"CUDAJIT_TEST_SEED={SEED}")
    assert os.getpid() not in pids
    return pids


def test_spawn_pool_of_4_launches_unpickled_kernels(worker_env):
    jobs = [(pk.scale, SEED + k) for k in range(4)] + [(pk.use_dev, SEED + 10 + k) for k in range(4)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(pk.launch_in_worker, jobs)
    expect = [lambda x: x * 3.0] * 4 + [lambda x: x * x + 1.0] * 4
    assert len(_check(results, expect)) >= 2


def test_spawn_pool_launches_closures_by_value(worker_env):
    cloudpickle = pytest.importorskip("cloudpickle")
    kernels = [_closure(float(c)) for c in (1, 2, 3, 4)]
    payloads = [cloudpickle.dumps(k) for k in kernels]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(pk.launch_pickled_in_worker, [(p, SEED + 20 + k) for k, p in enumerate(payloads)])
    _check(results, [lambda x, c=c: x + c for c in (1.0, 2.0, 3.0, 4.0)])
