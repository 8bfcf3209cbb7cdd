"""CCCL's cuda.coop (cuda.cooperative) for numba-cuda, over cudajit's own
cooperative algorithms (cuda.block.*, cuda.warp.*: CUB linked as LTO-IR).

    from cudajit import coop          # for: from cuda import coop

    block_max = coop.block.reduce(np.int16, 256, op_max)

    @cuda.jit(link=block_max.files)   # files: [] (cudajit links CUB itself)
    def k(x, out):
        m = block_max(x[cuda.grid(1)])   # valid in thread 0

coop.block.X(dtype, threads_per_block, ...) returns a device function. The
kernel calling it is specialised on its launch block, as with cuda.block.X,
so a launch with another block size gets its own, correct, compile;
threads_per_block is the block shape the kernel is compiled for before a
launch (@cuda.jit(signature), kernel.compile(signature)), as numba-cuda's
primitives fix it. Only block.reduce, block.sum, warp.reduce and warp.sum
so far; cudajit's cuda.block.* / cuda.warp.* have the rest (scans, load,
store, radix sort, histogram) under their own names."""

import numpy as _np

from .decorators import jit as _jit

__all__ = ["block", "warp"]


def _device(op):
    """A binary operator as cuda.block.reduce takes it: a device function."""
    if op is None or getattr(op, "_cudajit_device_", False) or hasattr(op, "py_func"):
        return op
    return _jit(device=True)(op)


def _primitive(fn, name, dtype, threads):
    fn.files = []                  # numba-cuda's @cuda.jit(link=...) list: nothing to add
    fn.temp_storage_bytes = 0      # cudajit allocates CUB's shared storage itself
    fn.name, fn.dtype, fn.threads_per_block = name, dtype, threads   # (numpy or numba types)
    if name.startswith("block."):   # the block shape of kernels compiled before a launch
        fn._cudajit_coop_block_ = (threads,) if isinstance(threads, int) else tuple(threads)
    return fn


class block:
    """Block-wide primitives (cuda.coop.block's names)."""

    @staticmethod
    def reduce(dtype, threads_per_block, binary_op, items_per_thread=1, methods=None):
        op = _device(binary_op)

        def reduce_(x):
            return _cuda.block.reduce(x, op)
        return _primitive(_jit(device=True)(reduce_), "block.reduce", dtype, threads_per_block)

    @staticmethod
    def sum(dtype, threads_per_block, items_per_thread=1, methods=None):
        def sum_(x):
            return _cuda.block.sum(x)
        return _primitive(_jit(device=True)(sum_), "block.sum", dtype, threads_per_block)


class warp:
    """Warp-wide primitives (cuda.coop.warp's names)."""

    @staticmethod
    def reduce(dtype, binary_op, threads_in_warp=32, methods=None):
        op = _device(binary_op)

        def reduce_(x):
            return _cuda.warp.reduce(x, op)
        return _primitive(_jit(device=True)(reduce_), "warp.reduce", dtype, threads_in_warp)

    @staticmethod
    def sum(dtype, threads_in_warp=32, methods=None):
        def sum_(x):
            return _cuda.warp.sum(x)
        return _primitive(_jit(device=True)(sum_), "warp.sum", dtype, threads_in_warp)


import cudajit as _cuda  # noqa: E402  (the stubs the device functions above call)
