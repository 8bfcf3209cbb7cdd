"""Foreign device functions: ``cudajit.declare_device`` (numba.cuda's).

A kernel calls a device function written in CUDA C++ (or given as PTX,
LTO-IR or a binary) through the object ``declare_device`` returns; the file
that defines it is linked into the kernel, from ``link=`` here or from the
kernel's ``@cudajit.jit(link=[...])``. The function follows numba's ABI::

    extern "C" __device__ int name(T* return_value, args...);   // returns 0

``.cu`` files are compiled by NVRTC to LTO-IR and optimised with the kernel
(the call can be inlined). docs/language.md, "Foreign device functions".
"""
import os

from . import _core
from .errors import DeviceOnlyError


def link_paths(link, who):
    """The link files as absolute paths, checked to exist (None: none)."""
    if link is None:
        return []
    if isinstance(link, (str, bytes, os.PathLike)):
        link = [link]
    paths = []
    for item in link:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{who}(link=...) takes file names, got {type(item).__name__}")
        path = os.path.abspath(os.fspath(item))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{who}(link=...): no such file: {path}")
        paths.append(path)
    return paths


class ForeignFunction:
    """A foreign device function, callable inside kernels."""

    def __init__(self, name, sig, link=None, use_cooperative=False):
        if not isinstance(name, str):
            raise TypeError(f"declare_device: name must be a str, got {type(name).__name__}")
        if not isinstance(sig, str):
            raise TypeError("declare_device: give the signature as a string, e.g. 'float32(float32, float32)' "
                            f"(got {type(sig).__name__})")
        if use_cooperative:
            raise NotImplementedError("declare_device(use_cooperative=True) is not supported by cudajit")
        self.name = name
        self.sig = sig
        self._symbol, self.link = _core.declare_foreign(name, sig, link_paths(link, "declare_device"))

    @property
    def _cudajit_symbol_(self):
        """What the kernel decoder freezes this object to (compiler/typeinfer/rules_foreign.cpp)."""
        return self._symbol

    def __call__(self, *args):
        raise DeviceOnlyError(f"the foreign device function '{self.name}' can only be called inside a kernel")

    def __reduce__(self):   # declared again where it lands (a worker process)
        return (ForeignFunction, (self.name, self.sig, self.link or None))

    def __repr__(self):
        return f"<foreign device function {self.name} {self.sig}>"


def declare_device(name, sig, link=None, use_cooperative=False):
    """Declares a device function defined outside Python (numba.cuda.declare_device):
    ``name`` is its extern "C" symbol, ``sig`` its signature in numba's spelling
    (``"float32(float32, float32)"``; ``CPointer(float32)`` or ``voidptr`` for a
    pointer, to which a kernel passes an array). ``link``: files that define it
    (.cu, .ptx, .ltoir, .cubin, .fatbin, .o, .a), linked into every kernel that
    calls it."""
    return ForeignFunction(name, sig, link, use_cooperative)
