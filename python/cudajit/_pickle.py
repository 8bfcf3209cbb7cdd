"""Pickling ``@cudajit.jit`` kernels, device functions and tile kernels.

cloudpickle's convention, so that kernels can be sent to multiprocessing
pools, Dask and Ray workers: a kernel that its module holds under its
qualified name goes by reference (the receiving process imports the module
and takes that kernel, with its in-memory and disk caches); any other
(a closure, one defined in ``__main__`` or a notebook) goes by value, as its
Python function and the options it was made with, and is made again through
the public decorator. The function is left to the pickler: plain pickle
takes it by reference (so a closure fails there, with pickle's own error),
cloudpickle by value. Compiled code never travels; the receiver compiles
(or reads the disk cache).
"""

import importlib
import sys


def _walk(obj, qualname):
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _by_value_module(module):
    # cloudpickle.register_pickle_by_value(module): the user says the workers
    # cannot import it, so its kernels must travel by value too.
    cp = sys.modules.get("cloudpickle.cloudpickle")
    registered = getattr(cp, "_is_registered_pickle_by_value", None)
    return registered is not None and registered(module)


def _reference(obj):
    """(module name, qualname) when importing the module and walking the
    qualname gives back ``obj`` itself, else None."""
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    # __main__ differs in every process (a worker's is its own script or none).
    if not module_name or not qualname or module_name == "__main__" or "<locals>" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None or _by_value_module(module):
        return None
    try:
        found = _walk(module, qualname)
    except AttributeError:
        return None
    return (module_name, qualname) if found is obj else None


def load_by_reference(module_name, qualname):
    """Unpickles a kernel sent by reference."""
    return _walk(importlib.import_module(module_name), qualname)


def rebuild_jit(py_func, options, signatures, device):
    """Unpickles a ``@cudajit.jit`` kernel or device function sent by value:
    the decorator again, with its options; declared signatures compile again."""
    from .decorators import jit
    if signatures:
        return jit(list(signatures), device=device, **options)(py_func)
    return jit(device=device, **options)(py_func)


def rebuild_tile_kernel(py_func, options):
    """Unpickles a ``@cudajit.tile.kernel`` sent by value."""
    from .tile import kernel
    return kernel(**options)(py_func)


def reduce(obj, by_value):
    """``__reduce__`` of the three: by reference when importable, else ``by_value``
    (a (rebuild function, args) pair)."""
    ref = _reference(obj)
    return (load_by_reference, ref) if ref is not None else by_value
