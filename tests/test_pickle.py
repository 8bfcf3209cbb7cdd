"""Pickling kernels (python/cudajit/_pickle.py): module-level kernels go by
reference, closures by value with cloudpickle; the unpickled kernel compiles
to the same PTX. Also through a multiprocessing spawn pool and a Dask
cluster. No GPU needed."""
import multiprocessing
import os
import pickle
import re
import sys
from pathlib import Path

import pytest

import cudajit
import cudajit.tile as ct

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
import pickle_kernels as pk  # noqa: E402

cloudpickle = pytest.importorskip("cloudpickle")

TILE_SIG = ["float32[::1]", "float32[::1]", "int64"]


def _ptx(kernel, sig, **kw):
    return cudajit.compile_ptx(kernel, sig, **kw)[0]


def _entry(ptx):
    """The name of the PTX's .entry (kernel) or .func (device function)."""
    m = re.search(r"^\.visible \.(?:entry|func)\s+(?:\([^)]*\)\s*)?(\w+)\(", ptx, re.M)
    assert m, "no entry in the PTX"
    return m.group(1)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def worker_env(monkeypatch):
    """Spawned workers import pickle_kernels from tests/ (and cudajit as this
    process does: installed, or from the inherited PYTHONPATH)."""
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", TESTS + (os.pathsep + old if old else ""))


# ---- by reference -----------------------------------------------------------

@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("name", ["scale", "use_dev", "dev_square", "eager_div", "tile_scale"])
def test_module_level_by_reference(dumps, name):
    obj = getattr(pk, name)
    data = dumps(obj)
    assert b"load_by_reference" in data and b"pickle_kernels" in data
    assert b"rebuild" not in data
    assert pickle.loads(data) is obj


def test_nested_qualname_by_reference():
    data = pickle.dumps(pk.Nested.inner)
    assert b"Nested.inner" in data
    assert pickle.loads(data) is pk.Nested.inner
    assert cloudpickle.loads(cloudpickle.dumps(pk.Nested.inner)) is pk.Nested.inner


def test_alias_under_another_name_goes_by_value():
    # The module holds the function under the kernel's qualname, not the
    # kernel: by value, and plain pickle takes the function by reference.
    kernel = cudajit.jit(pk.ptx_in_worker)
    assert b"rebuild_jit" in pickle.dumps(kernel)
    back = pickle.loads(pickle.dumps(kernel))
    assert back is not kernel and back.py_func is pk.ptx_in_worker


# ---- by value ---------------------------------------------------------------

def _make_closure(c):
    @cudajit.jit
    def closure_kernel(x):
        i = cudajit.grid(1)
        if i < x.size:
            x[i] = x[i] * c
    return closure_kernel


def test_closure_by_value_with_cloudpickle():
    k = _make_closure(7.5)
    data = cloudpickle.dumps(k)
    assert b"rebuild_jit" in data
    k2 = cloudpickle.loads(data)
    assert isinstance(k2, cudajit.dispatcher.Dispatcher) and k2 is not k
    assert k2.__qualname__ == k.__qualname__
    ptx = _ptx(k, pk.F32)
    assert _ptx(k2, pk.F32) == ptx
    assert "closure_kernel" in _entry(ptx) and "0f40F00000" in ptx   # 7.5 folded in
    # compile() and inspect_ptx() work on the copy too.
    k2.compile(pk.F32)
    assert _entry(k2.inspect_ptx(("float32[::1]",))) == _entry(ptx)


def test_closure_with_plain_pickle_fails_in_pickle():
    with pytest.raises((pickle.PicklingError, AttributeError), match="closure_kernel"):
        pickle.dumps(_make_closure(2.0))


def _make_with_device(c):
    @cudajit.jit(device=True)
    def add_c(v):
        return v + c

    @cudajit.jit
    def calls_device(x):
        i = cudajit.grid(1)
        if i < x.size:
            x[i] = add_c(x[i]) * 2.0
    return add_c, calls_device


def test_device_function_and_caller_by_value():
    dev, k = _make_with_device(1.25)
    dev2, k2 = cloudpickle.loads(cloudpickle.dumps((dev, k)))
    assert isinstance(dev2, cudajit.dispatcher.DeviceFunction) and dev2 is not dev
    assert dev2.options == dev.options and dev2.signatures == dev.signatures
    ptx = _ptx(k, pk.F32)
    assert _ptx(k2, pk.F32) == ptx and "calls_device" in _entry(ptx)
    dptx = _ptx(dev, "float32(float32)", device=True)
    assert _ptx(dev2, "float32(float32)", device=True) == dptx and "add_c" in _entry(dptx)
    with pytest.raises(cudajit.errors.DeviceOnlyError):
        dev2(1.0)


def test_device_function_options_and_signatures_kept():
    dev = cudajit.jit("float32(float32)", device=True, fastmath=True)(lambda v: v * 2.0)
    dev2 = cloudpickle.loads(cloudpickle.dumps(dev))
    assert dev2.signatures == ["float32(float32)"] and dev2.options == {"fastmath": True}


def _make_tile(scale):
    @ct.kernel(num_warps=4)
    def tile_closure(x, out, T: ct.Constant[int]):
        t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=ct.PaddingMode.ZERO)
        ct.store(out, index=(ct.bid(0),), tile=t * scale + 1.0)
    return tile_closure


def test_tile_kernel_by_value():
    tk = _make_tile(3.0)
    _ptx(tk, TILE_SIG, constants={"T": 64})   # a compiled dispatcher does not travel
    data = cloudpickle.dumps(tk)
    assert b"rebuild_tile_kernel" in data
    tk2 = cloudpickle.loads(data)
    assert isinstance(tk2, ct.TileKernel) and tk2 is not tk
    assert tk2.options == tk.options and tk2.options["num_warps"] == 4
    assert tk2.constant_parameters == ("T",)
    for T in (64, 128):
        ptx = _ptx(tk, TILE_SIG, constants={"T": T})
        assert _ptx(tk2, TILE_SIG, constants={"T": T}) == ptx
        assert "tile_closure" in _entry(ptx)


def test_tile_kernel_by_reference_compiles():
    tk = pickle.loads(pickle.dumps(pk.tile_scale))
    assert tk is pk.tile_scale
    ptx = _ptx(tk, TILE_SIG, constants={"T": 128})
    assert "tile_scale" in _entry(ptx) and ".entry" in ptx


def _make_eager(c):
    @cudajit.jit([pk.DIV, "void(float64[::1], float64[::1])"], fastmath=True, cache=True)
    def eager_closure(x, y):
        i = cudajit.grid(1)
        if i < x.size:
            x[i] = x[i] / y[i] + c
    return eager_closure


def test_eager_signatures_and_options_by_value():
    k = _make_eager(0.5)
    data = cloudpickle.dumps(k)
    k2 = cloudpickle.loads(data)
    assert k2 is not k
    # The signatures were declared again, and compiled on unpickling.
    assert sorted(k2.signatures) == sorted(k.signatures) and len(k2.signatures) == 2
    assert k2._jit_options == {"fastmath": True, "cache": True}
    assert k2._options == k._options and k2._options["fastmath"]
    for sig in k.signatures:
        assert k2.inspect_ptx(sig) == k.inspect_ptx(sig)
    ptx = k2.inspect_ptx(("float32[::1]", "float32[::1]"))
    assert "div.approx" in ptx and "eager_closure" in _entry(ptx)   # fastmath kept
    # A later copy (another worker) reads what the first one wrote to disk.
    # (Not the original's entry: cloudpickle names the copy's file
    # <dynamic-code>, and the file is part of the key.)
    k3 = cloudpickle.loads(data)
    for sig in k.signatures:
        assert k3.stats[sig]["cache_result"] == "hit"
        assert k3.inspect_ptx(sig) == k.inspect_ptx(sig)


def test_module_level_eager_by_value_when_registered():
    """cloudpickle.register_pickle_by_value(module): its kernels go by value."""
    cloudpickle.register_pickle_by_value(pk)
    try:
        data = cloudpickle.dumps(pk.eager_div)
    finally:
        cloudpickle.unregister_pickle_by_value(pk)
    assert b"rebuild_jit" in data
    k2 = cloudpickle.loads(data)
    assert k2 is not pk.eager_div
    assert k2.signatures == pk.eager_div.signatures == [("float32[::1]", "float32[::1]")]
    sig = k2.signatures[0]
    assert k2.inspect_ptx(sig) == pk.eager_div.inspect_ptx(sig)
    assert "div.approx" in k2.inspect_ptx(sig)


# ---- other processes --------------------------------------------------------

def test_multiprocessing_spawn_pool(worker_env):
    jobs = [(pk.scale, pk.F32, None), (pk.use_dev, pk.F32, None), (pk.eager_div, pk.DIV, None),
            (pk.tile_scale, TILE_SIG, {"T": 64})]
    expected = [_ptx(k, sig, **({"constants": c} if c else {})) for k, sig, c in jobs]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(pk.ptx_in_worker, jobs)
    for (kernel, _, _), want, (pid, own, ptx) in zip(jobs, expected, results):
        assert pid != os.getpid()
        assert own, f"{kernel} was not the worker's module-level kernel"
        assert ptx == want and kernel.__name__ in _entry(ptx)


def test_dask_distributed_closures(worker_env):
    distributed = pytest.importorskip("distributed")
    kernels = [_make_closure(float(c)) for c in (2, 3)]
    tk = _make_tile(5.0)
    expected = [_ptx(k, pk.F32) for k in kernels]
    expected_tile = _ptx(tk, TILE_SIG, constants={"T": 32})
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        assert len(workers) == 2
        futures = [client.submit(pk.ptx_in_worker, k, pk.F32, workers=[w], pure=False)
                   for w in workers for k in kernels]
        futures.append(client.submit(pk.ptx_in_worker, tk, TILE_SIG, {"T": 32}, pure=False))
        results = client.gather(futures)
    pids = set()
    for (pid, own, ptx), want in zip(results, expected * 2 + [expected_tile]):
        pids.add(pid)
        assert not own   # closures came by value
        assert ptx == want
        assert "closure_kernel" in _entry(ptx) or "tile_closure" in _entry(ptx)
    assert os.getpid() not in pids and len(pids) == 2
