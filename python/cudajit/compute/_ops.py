"""Operators of cudajit.compute: ``OpKind`` (cuda.compute's built-in
operators) and user operators (plain Python functions or
``@cudajit.jit(device=True)`` functions), each made into a device function
the algorithms' generated kernels call as ``op(a, b)``."""
import enum

import numpy as np

from ..decorators import jit
from ..dispatcher import DeviceFunction


class OpKind(enum.Enum):
    """cuda.compute's well-known operators."""
    PLUS = "a + b"
    MINUS = "a - b"
    MULTIPLIES = "a * b"
    DIVIDES = "a / b"
    MODULUS = "a % b"
    EQUAL_TO = "a == b"
    NOT_EQUAL_TO = "a != b"
    GREATER = "a > b"
    LESS = "a < b"
    GREATER_EQUAL = "a >= b"
    LESS_EQUAL = "a <= b"
    LOGICAL_AND = "a and b"
    LOGICAL_OR = "a or b"
    LOGICAL_NOT = "not a"
    BIT_AND = "a & b"
    BIT_OR = "a | b"
    BIT_XOR = "a ^ b"
    BIT_NOT = "~a"
    IDENTITY = "a"
    NEGATE = "-a"
    MINIMUM = "a if a < b else b"
    MAXIMUM = "a if a > b else b"

    # identity hash, in C: members are keys of the per-call caches
    __hash__ = object.__hash__

    @property
    def arity(self):
        return 1 if "b" not in self.value else 2


_device_functions = {}   # OpKind or user function -> device dispatcher


def _opkind_function(kind):
    params = "a" if kind.arity == 1 else "a, b"
    namespace = {}
    exec(compile(f"def {kind.name.lower()}({params}):\n    return {kind.value}\n",
                 f"<cudajit.compute OpKind.{kind.name}>", "exec"), namespace)
    return namespace[kind.name.lower()]


_typed = {}


def typed_op(op, arity, dtype, what="op"):
    """`op` as a device function returning `dtype` (cuda.compute's operators
    are (T, T) -> T). Python's integer rules widen int32 + int32 to int64:
    a result of the same kind is converted back to T; one of another kind
    (a float from integer items) is a TypeError."""
    dev = device_op(op, arity, what)
    dtype = np.dtype(dtype)
    key = (dev, arity, dtype.str)
    found = _typed.get(key)
    if found is None:
        from ._iterators import result_dtype
        ret = result_dtype(dev, [dtype] * arity)
        if ret != dtype and not np.can_cast(ret, dtype, "same_kind"):
            name = op.name if isinstance(op, OpKind) else getattr(op, "__qualname__", repr(op))
            raise TypeError(f"{what} {name} returns {ret} for {dtype} operands: the result must be "
                            f"{dtype} (the item type), or a type of the same kind")
        params = "a" if arity == 1 else "a, b"
        namespace = {"f": dev, "T": dtype.type}
        exec(compile(f"def typed({params}):\n    return T(f({params}))\n",
                     f"<cudajit.compute op -> {dtype}>", "exec"), namespace)
        found = _typed[key] = jit(device=True)(namespace["typed"])
    return found


def device_op(op, arity, what="op"):
    """The device function for `op`, made once per operator."""
    if isinstance(op, OpKind):
        if op.arity != arity:
            raise ValueError(f"{what}: OpKind.{op.name} takes {op.arity} operand(s), this algorithm "
                             f"needs a {'unary' if arity == 1 else 'binary'} operator")
        key = op
    elif callable(op):
        key = op
    else:
        raise TypeError(f"{what} must be a cudajit.compute.OpKind or a Python function, got "
                        f"{type(op).__name__}")
    found = _device_functions.get(key)
    if found is None:
        if isinstance(op, OpKind):
            found = jit(device=True)(_opkind_function(op))
        elif isinstance(op, DeviceFunction):
            found = op
        else:
            found = jit(device=True)(op)
        _device_functions[key] = found
    return found
