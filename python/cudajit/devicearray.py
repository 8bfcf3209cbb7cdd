"""Device arrays: ``to_device``, ``device_array``, ``device_array_like``,
``as_cuda_array``, ``from_cuda_array_interface``, ``is_cuda_array``.

``DeviceNDArray`` itself is C++ (``_core.DeviceNDArray``, bind_device_array.cpp):
shape, strides, dtype, size, ndim, nbytes, ``copy_to_host()``,
``copy_to_device()``, indexing and assignment, ``reshape``, ``ravel``, ``T``,
``view``, ``squeeze``, ``split``, ``bind``, ``__cuda_array_interface__``.
As in numba, a copy runs on the stream given, else on the stream the array is
bound to (``to_device(..., stream=s)``, ``device_array(..., stream=s)``,
``bind(s)``), and is then asynchronous; with neither it is synchronous.
"""

from . import _core

DeviceNDArray = _core.DeviceNDArray


def is_cuda_array(obj):
    """True for objects exposing ``__cuda_array_interface__``."""
    return hasattr(obj, "__cuda_array_interface__")


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A ``DeviceNDArray`` viewing the memory a ``__cuda_array_interface__``
    dict describes (no copy); ``owner`` is kept alive with it. With ``sync``
    the interface's stream, if any, is synchronised first."""
    return DeviceNDArray.from_cuda_array_interface(desc, owner, sync)


def as_cuda_array(obj, sync=True):
    """A ``DeviceNDArray`` viewing the GPU memory of any object with
    ``__cuda_array_interface__`` (CuPy, PyTorch, ...); no copy."""
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is None:
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return DeviceNDArray.from_cuda_array_interface(interface, obj, sync)


def to_device(obj, stream=0, copy=True, to=None):
    """Copies a host array (anything ``numpy.asarray`` accepts) to the GPU.

    The result is bound to ``stream`` when one is given (numba's rule: its
    later copies default to that stream, asynchronously). With ``to=``,
    copies into that existing device array and returns it. A device array is
    returned as it is; another library's GPU array becomes a view of it.
    """
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, DeviceNDArray):
        return obj
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        return DeviceNDArray.from_cuda_array_interface(interface, obj, True)
    return DeviceNDArray.from_host(obj, stream, copy)


def device_array(shape, dtype="float64", strides=None, order="C", stream=0):
    """An uninitialised device array (numba.cuda.device_array)."""
    return DeviceNDArray(shape, dtype, order, strides, stream)


def device_array_like(ary, stream=0):
    """An uninitialised device array with the shape and dtype of ``ary``, C or
    F contiguous as ``ary`` is (a strided ``ary``: dense, its axes in the same
    memory order)."""
    return DeviceNDArray(ary.shape, ary.dtype, _order_like(ary), _dense_strides_like(ary), stream)


def _flags(ary):
    if isinstance(ary, DeviceNDArray):
        return ary.is_c_contiguous(), ary.is_f_contiguous()
    flags = getattr(ary, "flags", None)
    if flags is None:
        return True, False
    return bool(flags["C_CONTIGUOUS"]), bool(flags["F_CONTIGUOUS"])


def _order_like(ary):
    c, f = _flags(ary)
    return "F" if f and not c else "C"


def _dense_strides_like(ary):
    """None when C or F order does; else strides packing ``ary``'s axes
    densely in the order of their stride sizes (numpy's empty_like rule)."""
    c, f = _flags(ary)
    if c or f or len(ary.shape) <= 1:
        return None
    itemsize = ary.dtype.itemsize
    strides = [0] * len(ary.shape)
    step = itemsize
    for axis in sorted(range(len(ary.shape)), key=lambda k: abs(ary.strides[k])):
        strides[axis] = step
        step *= ary.shape[axis]
    return tuple(strides)
