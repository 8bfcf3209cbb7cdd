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
primitives fix it. So far: block.reduce, block.sum, block.exclusive_sum and
block.inclusive_sum (one item a thread), warp.reduce, warp.sum and
warp.exclusive_sum; cudajit's cuda.block.* / cuda.warp.* have the rest
(several items a thread, scans with an operator, load, store, radix sort,
histogram) under their own names."""

import types as _types

from .decorators import jit as _jit

__all__ = ["block", "warp"]


def _device(op):
    """A binary operator as cuda.block.reduce takes it: a plain Python
    function becomes a device function; device functions, operator.add,
    max and the like pass as they are."""
    return _jit(device=True)(op) if isinstance(op, _types.FunctionType) else op


def _one_item(name, items_per_thread, prefix_op):
    if items_per_thread != 1 or prefix_op is not None:
        raise NotImplementedError(
            f"cudajit.coop.{name}: one item a thread and no prefix_op so far; cuda.block.exclusive_sum / "
            "inclusive_sum take a local array of several items (docs/block_algorithms.md)")


def _primitive(name, dtype, threads, op=None):
    """The device function calling cudajit's cuda.<name> (cuda.block.sum for
    'block.sum'), with numba-cuda's attributes."""
    family, function = name.split(".")
    algorithm = getattr(getattr(_cuda, family), function)
    if op is None:
        def primitive(x):
            return algorithm(x)
    else:
        op = _device(op)

        def primitive(x):
            return algorithm(x, op)
    fn = _jit(device=True)(primitive)
    fn.files = []                  # numba-cuda's @cuda.jit(link=...) list: nothing to add
    fn.temp_storage_bytes = 0      # cudajit allocates CUB's shared storage itself
    fn.name, fn.dtype, fn.threads_per_block = name, dtype, threads   # (numpy or numba types)
    if family == "block":          # the block shape of kernels compiled before a launch
        fn._cudajit_coop_block_ = (threads,) if isinstance(threads, int) else tuple(threads)
    return fn


class block:
    """Block-wide primitives (cuda.coop.block's names)."""

    @staticmethod
    def reduce(dtype, threads_per_block, binary_op, items_per_thread=1, methods=None):
        return _primitive("block.reduce", dtype, threads_per_block, binary_op)

    @staticmethod
    def sum(dtype, threads_per_block, items_per_thread=1, methods=None):
        return _primitive("block.sum", dtype, threads_per_block)

    @staticmethod
    def exclusive_sum(dtype, threads_per_block, items_per_thread=1, prefix_op=None, methods=None):
        _one_item("block.exclusive_sum", items_per_thread, prefix_op)
        return _primitive("block.exclusive_sum", dtype, threads_per_block)

    @staticmethod
    def inclusive_sum(dtype, threads_per_block, items_per_thread=1, prefix_op=None, methods=None):
        _one_item("block.inclusive_sum", items_per_thread, prefix_op)
        return _primitive("block.inclusive_sum", dtype, threads_per_block)


class warp:
    """Warp-wide primitives (cuda.coop.warp's names)."""

    @staticmethod
    def reduce(dtype, binary_op, threads_in_warp=32, methods=None):
        return _primitive("warp.reduce", dtype, threads_in_warp, binary_op)

    @staticmethod
    def sum(dtype, threads_in_warp=32, methods=None):
        return _primitive("warp.sum", dtype, threads_in_warp)

    @staticmethod
    def exclusive_sum(dtype, threads_in_warp=32, methods=None):
        return _primitive("warp.exclusive_sum", dtype, threads_in_warp)


import cudajit as _cuda  # noqa: E402  (the stubs the device functions above call)
