"""Kernel and device-function objects returned by ``@cudajit.jit``.

The kernel dispatcher is C++ (``_core.Dispatcher``): ``kernel[grid, block]``
and the call that follows never run Python code of cudajit. This subclass
only adds the function's name and docstring.
"""

import functools

from . import _core
from .errors import DeviceOnlyError


class Dispatcher(_core.Dispatcher):
    """A ``@cudajit.jit`` kernel.

    Launch it as ``kernel[blocks, threads](*args)`` or
    ``kernel[blocks, threads, stream, dynamic_shared_bytes](*args)``. It is
    compiled once per argument type signature (or only for the signatures
    given to ``@jit``). ``inspect_ir``, ``inspect_nvvm`` and ``inspect_ptx``
    show each stage's output.
    """

    def __init__(self, py_func, fastmath=False, debug=False, lineinfo=False, opt=3):
        super().__init__(py_func, fastmath=fastmath, debug=debug, lineinfo=lineinfo, opt=opt)
        functools.update_wrapper(self, py_func, updated=())

    def __repr__(self):
        return f"<cudajit kernel {self.py_func.__qualname__}>"


class DeviceFunction:
    """A ``@cudajit.jit(device=True)`` function: callable from kernels and other
    device functions (the decoder compiles its Python function into the
    caller), not from the host."""

    def __init__(self, py_func, signatures=(), options=None):
        self._cudajit_device_py_func_ = py_func
        self.py_func = py_func
        self.signatures = list(signatures)
        self.options = dict(options or {})
        functools.update_wrapper(self, py_func, updated=())

    def __call__(self, *args, **kwargs):
        raise DeviceOnlyError(
            f"{self.py_func.__qualname__} is a device function (@cudajit.jit(device=True)): "
            "call it from a kernel, not from the host")

    def __repr__(self):
        return f"<cudajit device function {self.py_func.__qualname__}>"
