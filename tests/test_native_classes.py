"""The launch path's Python classes of our own (python/src/native_class.h):
_core.Dispatcher, _core.Stream and _core.DeviceNDArray hold their C++ value
inline, with methods that are pybind11 functions; C slots translate C++
exceptions through bind_errors.cpp as pybind11's bindings do."""

import textwrap
import weakref

import pytest

import cudajit as cuda
from cudajit import _core

from test_runtime import MOCK_PRELUDE


def copy(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = x[i]


def test_classes_are_named_as_before():
    for cls, name in [(_core.Dispatcher, "Dispatcher"), (_core.Stream, "Stream"),
                      (_core.DeviceNDArray, "DeviceNDArray")]:
        assert cls.__name__ == name and cls.__module__ == "cudajit._core"
    assert cuda.DeviceNDArray.__cuda_memory__ is True


def test_a_stream_comes_only_from_the_functions():
    with pytest.raises(TypeError, match="cannot create"):
        _core.Stream()
    s = cuda.external_stream(0x1234)
    assert s.handle == 0x1234 and s.external and int(s) == 0x1234
    assert s == cuda.external_stream(0x1234) and s != cuda.external_stream(0x1235)
    assert s != 0x1234 and hash(s) == hash(0x1234)
    assert weakref.ref(s)() is s


def test_dispatcher_methods_and_subclass():
    k = cuda.jit(copy)
    assert type(k) is cuda.Dispatcher and isinstance(k, _core.Dispatcher)
    assert k.py_func is copy and k.signatures == [] and k._options["opt"] == 3
    assert k.__name__ == "copy"          # the subclass's __dict__ (functools.update_wrapper)
    assert weakref.ref(k)() is k
    k.__init__(copy)                      # a second __init__ changes nothing
    assert k.py_func is copy
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        k(1, 2)
    with pytest.raises(TypeError, match="expected a cudajit._core.Dispatcher"):
        _core.Dispatcher.inspect_ir(object())
    bare = _core.Dispatcher.__new__(_core.Dispatcher)
    with pytest.raises(TypeError, match="not initialised"):
        bare[1, 32]


def test_the_subscript_is_the_base_class_slot():
    # cudajit.Dispatcher defines no __getitem__: the C slot is inherited, not
    # a Python-level lookup.
    assert "__getitem__" not in vars(cuda.Dispatcher)
    assert cuda.Dispatcher.__getitem__ is _core.Dispatcher.__getitem__
    assert type(_core.Dispatcher.__dict__["__getitem__"]).__name__ == "wrapper_descriptor"


def test_a_compile_error_from_the_launch_slot(run_python, mock_driver):
    """launcherCall (a vectorcall slot) raises cudajit.errors.CompileError with
    its attributes; kernel[...] (mp_subscript) raises ValueError for a bad
    configuration; a DeviceNDArray is weak-referenceable and keeps its value."""
    code = MOCK_PRELUDE + "\n" + textwrap.dedent("""
        import weakref
        from cudajit.errors import CompileError

        @cuda.jit
        def bad(x):
            x[0] = undefined_name

        d = cuda.to_device(np.arange(4, dtype=np.float32))
        assert weakref.ref(d)() is d and d.shape == (4,) and d.copy_to_host()[3] == 3
        try:
            bad[1, 1](d)
        except CompileError as e:
            print("compile", e.line > 0, "undefined_name" in str(e))
        try:
            bad[1, 0](d)
        except ValueError as e:
            print("value")
        launcher = bad[2, 32]
        print(launcher.griddim, launcher.blockdim)
    """)
    out = run_python(code, driver=mock_driver).split("\n")
    assert out[:3] == ["compile True True", "value", "(2, 1, 1) (32, 1, 1)"]
