"""Host memory the GPU reaches quickly or directly (numba.cuda's API):

* ``pinned_array``: a numpy array in page-locked memory (fast, asynchronous
  copies); ``pinned(*arrays)`` page-locks existing arrays for a ``with`` block.
* ``mapped_array``: page-locked and mapped into the device's address space:
  kernels read and write it in place (``mapped(*arrays)`` does the same for
  existing arrays, yielding device arrays).
* ``managed_array``: managed (unified) memory, one address for host and device.

The memory itself is C++ (``_core.PinnedHostBuffer``, ``ManagedBuffer``,
``HostRegistration``); numpy arrays view it through the buffer protocol.
Mapped and managed arrays carry ``__cuda_array_interface__``, so a kernel gets
their device address instead of a staged copy.
"""

import contextlib

from . import _core


def _numpy():
    import numpy
    return numpy


def _layout(shape, dtype, strides, order):
    """(shape tuple, dtype, strides or None, bytes the array spans)."""
    np = _numpy()
    dtype = np.dtype(dtype)
    if isinstance(shape, (float, np.floating)):
        raise TypeError("shape must be an integer or a tuple of integers")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if isinstance(strides, (int, np.integer)):
        strides = (int(strides),)
    elif strides:
        strides = tuple(int(s) for s in strides)
    else:
        strides = None
    if order not in ("C", "F"):
        raise ValueError("order must be 'C' or 'F'")
    count = 1
    for d in shape:
        if d < 0:
            raise ValueError(f"negative dimension {d} in a shape")
        count *= d
    if strides is None or count == 0:
        nbytes = count * dtype.itemsize
    else:
        if len(strides) != len(shape):
            raise ValueError("strides must have one entry per dimension")
        if any(s < 0 for s in strides):
            raise ValueError("negative strides are not supported")
        nbytes = dtype.itemsize + sum((d - 1) * s for d, s in zip(shape, strides))
    return shape, dtype, strides, nbytes


def _view(buffer, shape, dtype, strides, order, cls=None):
    np = _numpy()
    ary = np.ndarray(shape, dtype, buffer=buffer, strides=strides, order=order)
    if cls is not None:
        ary = ary.view(cls)
        ary._cudajit_memory = buffer
    return ary


def pinned_array(shape, dtype="float64", strides=None, order="C"):
    """An uninitialised numpy array in page-locked host memory."""
    shape, dtype, strides, nbytes = _layout(shape, dtype, strides, order)
    return _view(_core.PinnedHostBuffer(nbytes), shape, dtype, strides, order)


def pinned_array_like(ary):
    """``pinned_array`` with the shape, dtype and layout of ``ary``."""
    from .devicearray import _dense_strides_like, _order_like
    return pinned_array(ary.shape, ary.dtype, _dense_strides_like(ary), _order_like(ary))


def _device_view_interface(ary, device_base, host_base):
    """__cuda_array_interface__ of a numpy view of device-visible host memory."""
    c_contiguous = ary.flags["C_CONTIGUOUS"]
    return {
        "shape": ary.shape,
        "strides": None if c_contiguous else ary.strides,
        "typestr": ary.dtype.str,
        "data": (device_base + (ary.__array_interface__["data"][0] - host_base) if ary.size else 0,
                 False),
        "version": 3,
        "stream": None,
    }


def _host_pointer(ary):
    return ary.__array_interface__["data"][0]


def _make_device_visible_class(name, doc, device_base_of, host_base_of):
    np = _numpy()

    def __array_finalize__(self, obj):
        # Views and slices keep the memory (and so its device address) alive.
        self._cudajit_memory = getattr(obj, "_cudajit_memory", None)

    def __cuda_array_interface__(self):
        mem = self._cudajit_memory
        if mem is None:
            raise AttributeError("this array is not in device-visible memory")
        return _device_view_interface(self, device_base_of(mem), host_base_of(mem))

    # numba's DeviceNDArray methods. The memory is host memory the device
    # also sees, so a copy is a numpy copy once the kernels that may write it
    # have finished: the stream given, or (0, numba's default) every stream.
    def _settle(stream):
        if stream:
            stream.synchronize()
        else:
            _core.synchronize()

    def copy_to_host(self, ary=None, stream=0):
        """A numpy copy (into ``ary`` if given, of the same shape and dtype)."""
        _settle(stream)
        if ary is None:
            return np.array(self, copy=True, subok=False)
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(f"copy_to_host(): ary has shape {ary.shape} and dtype {ary.dtype}, "
                             f"this array {self.shape} and {self.dtype}")
        np.copyto(ary, self)
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copies ``ary`` (same shape and dtype) into this array."""
        ary = np.asarray(ary)
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(f"copy_to_device(): ary has shape {ary.shape} and dtype {ary.dtype}, "
                             f"this array {self.shape} and {self.dtype}")
        _settle(stream)
        np.copyto(self, ary)

    def split(self, section, stream=0):
        """Views of ``section`` elements each (the last may be shorter) of a
        1-D contiguous array."""
        if self.ndim != 1 or not self.flags["C_CONTIGUOUS"]:
            raise ValueError("split() needs a one-dimensional contiguous array")
        if section <= 0:
            raise ValueError("split(): section must be positive")
        return [self[i:i + section] for i in range(0, self.shape[0], section)]

    return type(name, (np.ndarray,), {
        "__doc__": doc,
        "__array_finalize__": __array_finalize__,
        "__cuda_array_interface__": property(__cuda_array_interface__),
        "copy_to_host": copy_to_host,
        "copy_to_device": copy_to_device,
        "split": split,
    })


_classes = {}


def _mapped_class():
    if "mapped" not in _classes:
        _classes["mapped"] = _make_device_visible_class(
            "MappedNDArray", "A numpy array in mapped page-locked memory: kernels use it in place.",
            lambda mem: mem.device_pointer, lambda mem: mem.host_pointer)
    return _classes["mapped"]


def _managed_class():
    if "managed" not in _classes:
        _classes["managed"] = _make_device_visible_class(
            "ManagedNDArray", "A numpy array in managed memory: kernels use it in place.",
            lambda mem: mem.pointer, lambda mem: mem.pointer)
    return _classes["managed"]


def mapped_array(shape, dtype="float64", strides=None, order="C", stream=0, portable=False,
                 wc=False):
    """An uninitialised numpy array in page-locked memory mapped into the
    device's address space: kernels read and write it directly (no copies).
    ``portable``: pinned for every context; ``wc``: write-combined."""
    shape, dtype, strides, nbytes = _layout(shape, dtype, strides, order)
    buf = _core.PinnedHostBuffer(nbytes, mapped=True, portable=portable, wc=wc)
    return _view(buf, shape, dtype, strides, order, _mapped_class())


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    """``mapped_array`` with the shape, dtype and layout of ``ary``."""
    from .devicearray import _dense_strides_like, _order_like
    return mapped_array(ary.shape, ary.dtype, _dense_strides_like(ary), _order_like(ary),
                        stream=stream, portable=portable, wc=wc)


def managed_array(shape, dtype="float64", strides=None, order="C", stream=0, attach_global=True):
    """An uninitialised numpy array in managed memory, usable from the host
    and (in place) from kernels. ``attach_global=False`` attaches it to the
    host until a stream uses it."""
    shape, dtype, strides, nbytes = _layout(shape, dtype, strides, order)
    buf = _core.ManagedBuffer(nbytes, attach_global=attach_global)
    return _view(buf, shape, dtype, strides, order, _managed_class())


def _host_arrays(arrays):
    np = _numpy()
    for ary in arrays:
        if not isinstance(ary, np.ndarray):
            raise TypeError(f"expected numpy arrays, got '{type(ary).__name__}'")
    return arrays


@contextlib.contextmanager
def pinned(*arylist):
    """Page-locks the memory of existing numpy arrays for a ``with`` block
    (faster, asynchronous copies to and from them)."""
    regs = [_core.HostRegistration(ary, mapped=False) for ary in _host_arrays(arylist)]
    try:
        yield
    finally:
        for reg in regs:
            reg.release()


@contextlib.contextmanager
def mapped(*arylist, **kws):
    """Page-locks and maps existing numpy arrays for a ``with`` block,
    yielding a device array (or a list of them) that views each in place."""
    if kws and set(kws) != {"stream"}:
        raise TypeError("mapped() takes only 'stream' as a keyword")
    stream = kws.get("stream", 0)
    from .devicearray import DeviceNDArray
    regs, views = [], []
    try:
        for ary in _host_arrays(arylist):
            reg = _core.HostRegistration(ary, mapped=True)
            regs.append(reg)
            desc = _device_view_interface(ary, reg.device_pointer, reg.host_pointer)
            view = DeviceNDArray.from_cuda_array_interface(desc, ary, False)
            views.append(view.bind(stream) if stream else view)
        yield views[0] if len(views) == 1 else views
    finally:
        for reg in regs:
            reg.release()
