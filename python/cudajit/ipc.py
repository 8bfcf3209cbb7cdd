"""CUDA IPC as numba.cuda has it: ``DeviceNDArray.get_ipc_handle()`` gives
an ``IpcArrayHandle`` that pickles; another process on the same machine
opens it (``.open()`` / ``with handle as arr:``) as a device array over the
same memory, or opens a raw handle with ``open_ipc_array(handle, shape,
dtype, strides=None, offset=0)``. The driver calls (cuIpcGetMemHandle,
cuIpcOpenMemHandle, cuIpcCloseMemHandle) are in runtime/ipc.cpp; this file
only arranges them into numba's classes.

As in numba, a handle opened in the process that made it does not work
(the driver refuses), and arrays over an opened handle must not be used
once it is closed.
"""

import contextlib

from . import _core


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def _normalise_shape(shape):
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def _array_over(ptr, shape, strides, dtype, owner):
    """A DeviceNDArray over `ptr` (memory `owner` keeps mapped)."""
    import numpy as np
    dtype = np.dtype(dtype)
    shape = _normalise_shape(shape)
    if strides is None:
        strides = _c_strides(shape, dtype.itemsize)
    elif isinstance(strides, int):
        strides = (strides,)
    strides = tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"strides {strides} do not match shape {shape}")
    desc = {"shape": shape, "strides": strides, "typestr": dtype.str, "data": (int(ptr), False),
            "version": 3}
    if dtype.fields is not None:
        desc["descr"] = dtype   # the dtype itself: its list form loses aligned records' padding
    return _core.DeviceNDArray.from_cuda_array_interface(desc, owner, False)


class IpcHandle:
    """numba's IpcHandle: the 64 bytes of cuIpcGetMemHandle for a device
    allocation (``handle``), its size, the offset of the shared memory in
    it, and ``source_info`` (the exporting device's ordinal and UUID).
    ``base`` keeps the exporter's array alive; it is not pickled."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = bytes(handle)
        self.size = size
        self.source_info = source_info
        self.offset = offset
        self._mapping = None

    def open(self, context=None):
        """Opens the handle in ``context`` (default: the current device's) and
        returns the address of the shared memory (the allocation's base plus
        the offset)."""
        if self._mapping is not None:
            raise ValueError("IpcHandle is already opened")
        device = context.device.id if context is not None else _core.current_device()
        self._mapping = _core.IpcMapping(self.handle, device)
        return self._mapping.base + self.offset

    def open_array(self, context, shape, dtype, strides=None):
        """``open()``, as a device array of ``shape`` and ``dtype``."""
        ptr = self.open(context)
        return _array_over(ptr, shape, strides, dtype, self._mapping)

    def close(self):
        if self._mapping is None:
            raise ValueError("IpcHandle not opened")
        mapping, self._mapping = self._mapping, None
        mapping.close()

    def __reduce__(self):
        return (type(self), (None, self.handle, self.size, self.source_info, self.offset))

    def __repr__(self):
        return f"<cudajit.IpcHandle size={self.size} offset={self.offset} source={self.source_info}>"


class IpcArrayHandle:
    """numba's IpcArrayHandle: an IPC handle and the array's shape, strides
    and dtype; pickle it to another process on the same machine, which calls
    ``open()`` (a DeviceNDArray sharing the memory) and ``close()``, or uses
    it as a context manager (``with handle as arr:``). Not for the process
    that made it."""

    def __init__(self, ipc_handle, array_desc):
        self._ipc_handle = ipc_handle
        self._array_desc = dict(array_desc)

    def open(self):
        ptr = self._ipc_handle.open()
        d = self._array_desc
        return _array_over(ptr, d["shape"], d["strides"], d["dtype"], self._ipc_handle._mapping)

    def close(self):
        """Closes the handle: arrays from open() must not be used after."""
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, exc_type, exc, tb):
        self.close()

    def __repr__(self):
        return f"<cudajit.IpcArrayHandle {self._array_desc}>"


def get_ipc_handle(ary):
    """``DeviceNDArray.get_ipc_handle()``: the IpcArrayHandle of ``ary``'s
    memory (any device memory of this process cuMemAlloc'd, by cudajit or
    another library; the offset into the allocation travels with it)."""
    if ary.size == 0:
        raise ValueError("get_ipc_handle: the array is empty (there is no memory to share)")
    handle, offset, size, device = _core.ipc_export(ary.device_pointer)
    source = {"device": device, "uuid": _core.device_uuid(device)}
    ipch = IpcHandle(ary, handle, size, source_info=source, offset=offset)
    return IpcArrayHandle(ipch, dict(shape=tuple(ary.shape), strides=tuple(ary.strides), dtype=ary.dtype))


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """numba's open_ipc_array: opens the raw IPC ``handle`` (64 bytes, as
    ``bytes`` or a sequence of ints) of another process as a device array of
    ``shape`` and ``dtype`` (``strides``: C order when omitted) starting
    ``offset`` bytes into the allocation; closed when the block ends."""
    raw = bytes(bytearray(handle)) if not isinstance(handle, bytes) else handle
    import numpy as np
    dtype = np.dtype(dtype)
    size = int(np.prod(_normalise_shape(shape))) * dtype.itemsize
    ipch = IpcHandle(None, raw, size, offset=offset)
    arr = ipch.open_array(None, shape, dtype, strides)
    try:
        yield arr
    finally:
        ipch.close()
