"""Device-side assignment for ``DeviceNDArray.__setitem__`` (numba does the
same with a kernel): ``lhs[...] = rhs`` where ``rhs`` already has ``lhs``'s
shape (broadcast axes have stride 0). bind_device_array.cpp calls ``assign``
only when no single copy can do the work: a strided destination, or a
source of another dtype or layout. One kernel per dimension count, written
out here and compiled by cudajit on first use."""

from . import _core  # noqa: F401  (the extension must be loaded before the kernels)
from .decorators import jit
from .stubs import STUBS

_THREADS = 256
_kernels = {}


def _source(ndim):
    """A kernel for `ndim`-d arrays: thread i writes the i-th element in C order."""
    index = ", ".join(f"i{k}" for k in range(ndim))
    lines = [f"def assign_{ndim}d(lhs, rhs):",
             "    i = grid(1)",
             "    if i < lhs.size:",
             "        r = i"]
    for k in reversed(range(1, ndim)):
        lines.append(f"        i{k} = r % lhs.shape[{k}]")
        lines.append(f"        r = r // lhs.shape[{k}]")
    lines.append("        i0 = r")
    lines.append(f"        lhs[{index}] = rhs[{index}]")
    return "\n".join(lines) + "\n"


def _kernel(ndim):
    kernel = _kernels.get(ndim)
    if kernel is None:
        namespace = {"grid": STUBS["grid"]}
        exec(compile(_source(ndim), f"<cudajit assign {ndim}d>", "exec"), namespace)
        kernel = _kernels[ndim] = jit(namespace[f"assign_{ndim}d"])
    return kernel


def assign(lhs, rhs, stream):
    """lhs[...] = rhs on `stream` (a handle; 0: the default stream), asynchronously."""
    n = lhs.size
    if n == 0:
        return
    blocks = (n + _THREADS - 1) // _THREADS
    _kernel(lhs.ndim)[blocks, _THREADS, stream](lhs, rhs)
