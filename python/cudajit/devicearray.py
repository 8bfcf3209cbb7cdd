"""Device arrays: ``to_device``, ``device_array``, ``device_array_like``.

``DeviceNDArray`` itself is C++ (``_core.DeviceNDArray``): shape, strides,
dtype, size, ndim, nbytes, ``copy_to_host()``, ``copy_to_device()``,
``__cuda_array_interface__`` and basic slicing.
"""

from . import _core

DeviceNDArray = _core.DeviceNDArray


def is_cuda_array(obj):
    """True for objects exposing ``__cuda_array_interface__``."""
    return hasattr(obj, "__cuda_array_interface__")


def to_device(obj, stream=0, copy=True, to=None):
    """Copies a host array (anything ``numpy.asarray`` accepts) to the GPU.

    With ``to=``, copies into that existing device array and returns it.
    """
    if to is not None:
        to.copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, DeviceNDArray):
        return obj
    return DeviceNDArray.from_host(obj)


def device_array(shape, dtype="float64", strides=None, order="C", stream=0):
    """An uninitialised device array (numba.cuda.device_array)."""
    if strides is not None:
        raise NotImplementedError("device_array: explicit strides are not supported; use order")
    return DeviceNDArray(shape, dtype, order)


def device_array_like(ary, stream=0):
    """An uninitialised device array with the shape, dtype and order of ``ary``."""
    order = "F" if (getattr(ary, "ndim", 1) > 1 and _is_f_only(ary)) else "C"
    return DeviceNDArray(ary.shape, ary.dtype, order)


def _is_f_only(ary):
    if isinstance(ary, DeviceNDArray):
        return ary.is_f_contiguous() and not ary.is_c_contiguous()
    flags = getattr(ary, "flags", None)
    if flags is None:
        return False
    return bool(flags["F_CONTIGUOUS"]) and not bool(flags["C_CONTIGUOUS"])
