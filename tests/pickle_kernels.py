"""Kernels for tests/test_pickle.py, in a module that spawned worker processes
(multiprocessing, Dask) can import, so that they pickle by reference."""
import os
import sys

import cudajit
import cudajit.tile as ct

F32 = "void(float32[::1])"
DIV = "void(float32[::1], float32[::1])"


@cudajit.jit
def scale(x):
    i = cudajit.grid(1)
    if i < x.size:
        x[i] = x[i] * 3.0


@cudajit.jit(device=True)
def dev_square(v):
    return v * v


@cudajit.jit
def use_dev(x):
    i = cudajit.grid(1)
    if i < x.size:
        x[i] = dev_square(x[i]) + 1.0


# Eager, with options: fastmath turns the division into div.approx.
@cudajit.jit(DIV, fastmath=True)
def eager_div(x, y):
    i = cudajit.grid(1)
    if i < x.size:
        x[i] = x[i] / y[i]


@ct.kernel
def tile_scale(x, out, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(ct.bid(0),), tile=t * 2.0)


class Nested:
    """A kernel under a dotted qualname (Nested.inner)."""

    @cudajit.jit
    def inner(x):
        i = cudajit.grid(1)
        if i < x.size:
            x[i] = x[i] + 1.0


def ptx_in_worker(kernel, sig, constants=None):
    """Run in a worker: the PTX of the kernel it received, its pid, and whether
    that kernel is its module's own object (it came by reference)."""
    if constants is not None:
        ptx, _ = cudajit.compile_ptx(kernel, sig, constants=constants)
    else:
        ptx, _ = cudajit.compile_ptx(kernel, sig)
    module = sys.modules.get(kernel.__module__)
    own = module is not None and getattr(module, kernel.__name__, None) is kernel
    return os.getpid(), own, ptx


def launch_in_worker(kernel, seed, n=1000):
    """Run in a worker with a GPU: launches the kernel it received on fresh
    random data (through cudajit's own device arrays) and returns (pid,
    input, output) for the parent to check."""
    import numpy as np
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    d = cudajit.to_device(x)
    kernel[(n + 127) // 128, 128](d)
    return os.getpid(), x, d.copy_to_host()


def launch_pickled_in_worker(payload, seed):
    """launch_in_worker for a kernel that arrives as cloudpickle bytes (by value)."""
    import cloudpickle
    return launch_in_worker(cloudpickle.loads(payload), seed)
