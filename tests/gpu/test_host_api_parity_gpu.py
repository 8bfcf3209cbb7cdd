"""The numba-cuda host items of tests/test_host_api_parity.py on a real GPU,
against numpy on fresh random data with poisoned outputs:
shared_memory_carveout= (read back with cuda-bindings' cuFuncGetAttribute),
pre-launch callbacks and cudajit.launchconfig, extensions=, CUDA IPC (the
handle opened in a child process started with multiprocessing's spawn),
Context.push/pop and require_context.
"""
import multiprocessing
import os
import pickle
import threading

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
POISON = np.float32(-12345.0)


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def reverse_in_blocks(x, out):
    # each block reverses its 128 values through shared memory
    s = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i]
    cuda.syncthreads()
    out[i] = s[127 - t] * 2.0


def _expected_reverse(a):
    return (a.reshape(-1, 128)[:, ::-1] * 2.0).reshape(-1)


@pytest.mark.parametrize("carveout, value", [("MaxShared", 100), ("MaxL1", 0), (50, 50), ("default", -1)])
def test_carveout_set_and_kernel_correct(rng, carveout, value):
    kernel = cuda.jit(shared_memory_carveout=carveout)(reverse_in_blocks)
    a = rng.standard_normal(128 * 64).astype(np.float32)
    out = cuda.to_device(np.full_like(a, POISON))
    kernel[64, 128](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), _expected_reverse(a))
    drv = pytest.importorskip("cuda.bindings.driver")
    sig = kernel.signatures[0]
    handle = kernel.overloads[sig]._function_handle()
    err, got = drv.cuFuncGetAttribute(
        drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, drv.CUfunction(handle))
    assert int(err) == 0, err
    if value >= 0:   # what the driver reports after "default" (-1) is its own choice
        assert got == value, (carveout, got)


def test_pre_launch_callbacks_and_capture(rng):
    from cudajit import launchconfig
    kernel = cuda.jit(reverse_in_blocks)
    a = rng.standard_normal(128 * 8).astype(np.float32)
    da, out = cuda.to_device(a), cuda.to_device(np.full_like(a, POISON))
    s = cuda.stream()
    cfg = kernel[8, 128, s]
    seen = []

    def callback(k, config):
        # runs before the launch: the output is still the poison
        seen.append((k.signature, config.griddim, config.blockdim, config.args,
                     float(out.copy_to_host()[0])))
    cfg.pre_launch_callbacks.append(callback)
    with launchconfig.capture_compile_config(kernel) as capture:
        cfg(da, out)
    s.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), _expected_reverse(a))
    assert capture["config"] is cfg
    (sig, grid, block, args, first), = seen
    assert grid == (8, 1, 1) and block == (128, 1, 1) and args[0] is da and args[1] is out
    assert first == POISON and tuple(sig) == kernel.signatures[0]


class Boxed:
    def __init__(self, arr):
        self.arr = arr


class Unbox:
    def prepare_args(self, ty, val, stream=None, retr=None):
        if isinstance(val, Boxed):
            return ty, val.arr
        return ty, val


def test_extensions_unbox_arguments(rng):
    kernel = cuda.jit(extensions=[Unbox()])(reverse_in_blocks)
    a = rng.standard_normal(128 * 4).astype(np.float32)
    out = cuda.to_device(np.full_like(a, POISON))
    kernel[4, 128](Boxed(cuda.to_device(a)), Boxed(out))
    np.testing.assert_array_equal(out.copy_to_host(), _expected_reverse(a))


# ---- IPC: the handle goes to a child process (spawn) ----------------------------


@cuda.jit
def _add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1.0


def _ipc_child(payload, queue):
    try:
        import cudajit as cj
        kind, blob = payload
        if kind == "array":
            handle = pickle.loads(blob)
            with handle as arr:                 # open, use, close
                seen = arr.copy_to_host()
                _add_one[(arr.size + 127) // 128, 128](arr.reshape(arr.size) if arr.ndim > 1 else arr)
                cj.synchronize()
            queue.put(("ok", seen))
        else:
            raw, shape, offset = blob
            with cj.open_ipc_array(raw, shape, np.float64, offset=offset) as arr:
                queue.put(("ok", arr.copy_to_host()))
    except BaseException as e:   # reported to the parent, which fails the test with it
        import traceback
        queue.put(("error", traceback.format_exc()))


def _run_child(payload):
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_ipc_child, args=(payload, queue))
    proc.start()
    try:
        status, value = queue.get(timeout=240)
    finally:
        proc.join(timeout=60)
    assert status == "ok", value
    assert proc.exitcode == 0
    return value


def test_ipc_array_handle_in_a_child_process(rng):
    a = rng.standard_normal((64, 48)).astype(np.float32)
    d = cuda.to_device(a)
    handle = d.get_ipc_handle()
    seen = _run_child(("array", pickle.dumps(handle)))
    np.testing.assert_array_equal(seen, a)                   # the child read our memory
    np.testing.assert_array_equal(d.copy_to_host(), a + 1)   # and wrote into it


def test_ipc_view_and_open_ipc_array_in_a_child_process(rng):
    b = rng.standard_normal(1000)
    d = cuda.to_device(b)
    v = d[100:400]
    seen = _run_child(("array", pickle.dumps(v.get_ipc_handle())))
    np.testing.assert_array_equal(seen, b[100:400])
    expect = b.copy()
    expect[100:400] += 1
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    raw = d.get_ipc_handle()._ipc_handle.handle
    got = _run_child(("raw", (raw, (10, 20), 8 * 500)))
    np.testing.assert_array_equal(got, expect[500:700].reshape(10, 20))


# ---- contexts ----------------------------------------------------------------


def test_context_push_pop_and_require_context(rng):
    ctx = cuda.current_context()
    ctx.push()
    a = rng.standard_normal(256).astype(np.float32)
    d = cuda.to_device(a)
    ctx.pop()

    @cuda.require_context
    def double_on_a_fresh_thread(x):
        out = cuda.device_array_like(x)
        out.copy_to_device(x)
        _add_one[2, 128](out)
        cuda.synchronize()
        return out.copy_to_host()

    results = []
    t = threading.Thread(target=lambda: results.append(double_on_a_fresh_thread(d)))
    t.start()
    t.join()
    np.testing.assert_array_equal(results[0], a + 1)
