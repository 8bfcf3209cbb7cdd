"""Inputs of cudajit.compute's algorithms: device arrays and cuda.compute's
iterators. Each becomes kernel parameters plus a Python expression for its
item at index `i`, which the algorithm's generated kernel source inlines
(no iterator object exists on the GPU; the compiler sees plain loads and
arithmetic)."""
import re

import numpy as np

from ._ops import device_op


class IteratorBase:
    """An input sequence that is not an array."""
    dtype = None
    tuple_items = False   # items are tuples (ZipIterator): only some algorithms take them

    def _items(self, prefix):
        """(kernel params [(name, value)], expression of item `i`, globals {name: object})."""
        raise NotImplementedError

    def _key(self):
        """What the generated kernel depends on (not the runtime values)."""
        raise NotImplementedError

    def _args(self):
        """The kernel arguments, in the order of _items' parameters."""
        return [v for _, v in self._items("")[0]]

    @property
    def value_dtype(self):
        """The numpy dtype of the items."""
        return self.dtype


class CountingIterator(IteratorBase):
    """start, start + 1, start + 2, ... (the dtype of ``start``)."""

    def __init__(self, start):
        self.start = _scalar(start, "CountingIterator start")
        self.dtype = self.start.dtype

    def _items(self, p):
        return [(f"{p}start", self.start)], f"{p}T({p}start + i)", {f"{p}T": self.dtype.type}

    def _args(self):
        return [self.start]

    def _key(self):
        return ("counting", self.dtype.str)


class ConstantIterator(IteratorBase):
    """value, value, value, ..."""

    def __init__(self, value):
        self.value = _scalar(value, "ConstantIterator value")
        self.dtype = self.value.dtype

    def _items(self, p):
        return [(f"{p}value", self.value)], f"{p}value", {}

    def _args(self):
        return [self.value]

    def _key(self):
        return ("constant", self.dtype.str)


class TransformIterator(IteratorBase):
    """op(it[i]) for an array or iterator `it` (no temporary array)."""

    def __init__(self, it, op):
        self.it = as_input(it, "TransformIterator input", tuples=True)
        self.op = device_op(op, 1, "TransformIterator op")

    def _items(self, p):
        params, expr, env = self.it._items(p + "t_")
        return params, f"{p}op({expr})", {**env, f"{p}op": self.op}

    def _args(self):
        return self.it._args()

    def _key(self):
        return ("transform", self.it._key(), self.op)

    @property
    def value_dtype(self):   # the op's result type, from the compiler's type inference
        return result_dtype(self.op, [self.it.value_dtype])


class ReverseIterator(IteratorBase):
    """array[n-1], array[n-2], ... array[0]."""

    def __init__(self, array):
        self.array = _ArrayInput(array, "ReverseIterator input")
        self.dtype = self.array.dtype

    def _items(self, p):
        return [(f"{p}a", self.array.array)], f"{p}a[{p}a.size - 1 - i]", {}

    def _args(self):
        return [self.array.array]

    def _key(self):
        return ("reverse", self.dtype.str)


ReverseInputIterator = ReverseIterator


# cuda.compute's cache modifiers and the kernel language's loads for them
# (cudajit.ldcs / ldcg / ldcv: one ld.global.cs / .cg / .cv each).
_CACHE_LOADS = {"stream": "ldcs", "global": "ldcg", "volatile": "ldcv"}


class CacheModifiedInputIterator(IteratorBase):
    """An array read through a cache modifier (cuda.compute's "stream",
    "global" or "volatile": ld.global.cs, ld.global.cg, ld.global.cv). Items
    of integer, float and bool dtypes are loaded with that hint; complex
    numbers and records with plain loads (the results are the same)."""

    def __init__(self, array, modifier="stream"):
        if modifier not in _CACHE_LOADS:
            raise ValueError("CacheModifiedInputIterator: modifier must be 'stream', 'global' or 'volatile', "
                             f"got {modifier!r}")
        self.array = _ArrayInput(array, "CacheModifiedInputIterator input")
        self.dtype = self.array.dtype
        self.modifier = modifier
        self.hinted = self.dtype.names is None and self.dtype.kind in "biuf"

    def _items(self, p):
        if not self.hinted:
            return self.array._items(p)
        import cudajit
        return [(f"{p}a", self.array.array)], f"{p}ld({p}a, i)", {f"{p}ld": getattr(cudajit, _CACHE_LOADS[self.modifier])}

    def _key(self):
        return ("cache_modified", self.modifier if self.hinted else None) + self.array._key()

    def _args(self):
        return [self.array.array]


class PermutationIterator(IteratorBase):
    """values[indices[i]]: `values` (an array or iterator) in the order the
    integers of `indices` (an array or iterator) give. Indices outside
    `values` are not checked (as CUB's)."""

    def __init__(self, values, indices):
        self.values = as_input(values, "PermutationIterator values", tuples=True)
        self.indices = as_input(indices, "PermutationIterator indices")
        self.tuple_items = self.values.tuple_items
        if np.dtype(self.indices.value_dtype).kind not in "iu":
            raise TypeError("PermutationIterator indices must be integers, got "
                            f"{np.dtype(self.indices.value_dtype)}")

    def _items(self, p):
        vparams, vexpr, venv = self.values._items(p + "v_")
        iparams, iexpr, ienv = self.indices._items(p + "x_")
        # The values' item at the index the indices give: their `i` replaced.
        return vparams + iparams, re.sub(r"\bi\b", f"({iexpr})", vexpr), {**venv, **ienv}

    def _args(self):
        return self.values._args() + self.indices._args()

    def _key(self):
        return ("permutation", self.values._key(), self.indices._key())

    @property
    def value_dtype(self):
        return self.values.value_dtype


class ZipIterator(IteratorBase):
    """(it0[i], it1[i], ...): the items of several arrays or iterators side
    by side. An operator receives a tuple (x[0], x[1], ...: cuda.compute's
    struct fields by position). Its value type is a structured dtype of
    fields f0, f1, ... (what a record of its items holds). Taken by
    unary_transform / binary_transform, TransformIterator and
    PermutationIterator; the other algorithms need struct items (records
    as values), not there yet, and refuse it."""
    tuple_items = True

    def __init__(self, *iterators):
        if len(iterators) == 1 and isinstance(iterators[0], (list, tuple)):
            iterators = tuple(iterators[0])       # ZipIterator([a, b]) too
        if not iterators:
            raise ValueError("ZipIterator needs at least one array or iterator")
        self.inputs = [as_input(it, f"ZipIterator input {k}", tuples=True) for k, it in enumerate(iterators)]
        self.dtype = np.dtype([(f"f{k}", np.dtype(it.value_dtype)) for k, it in enumerate(self.inputs)], align=True)
        _tuple_dtypes.add(self.dtype)

    def _items(self, p):
        params, exprs, env = [], [], {}
        for k, it in enumerate(self.inputs):
            kp, ke, kg = it._items(f"{p}z{k}_")
            params += kp
            exprs.append(ke)
            env.update(kg)
        return params, "(" + ", ".join(exprs) + ",)", env

    def _args(self):
        return [a for it in self.inputs for a in it._args()]

    def _key(self):
        return ("zip", tuple(it._key() for it in self.inputs))


class ProxyArray:
    """A stand-in for a 1-d device array of `dtype`: builds an algorithm's
    kernels (make_* and ``compile_for``) where no array, or no GPU, exists."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.ndim = 1
        self.shape = (0,)
        self.size = 0

    def __repr__(self):
        return f"ProxyArray({self.dtype})"


class _ArrayInput(IteratorBase):
    """A 1-d device array (cudajit's, CuPy's, PyTorch's)."""

    def __init__(self, array, what):
        if isinstance(array, ProxyArray):
            self.array, self.dtype, self.contiguous = array, array.dtype, True
            return
        if isinstance(array, np.ndarray) or not hasattr(array, "__cuda_array_interface__"):
            raise TypeError(f"{what} must be a device array (cudajit, CuPy, PyTorch), got "
                            f"{type(array).__name__}")
        self.array = array
        self.dtype = array_dtype(array)
        if len(array.shape) != 1:
            raise ValueError(f"{what} must be 1-d, got shape {tuple(array.shape)}")
        self.contiguous = contiguous(array)

    def _items(self, p):
        if self.dtype.names:   # records: read into a struct value (field by field, by position)
            from ._struct import helpers, struct_of
            return [(f"{p}a", self.array)], f"{p}C({p}a[i])", {f"{p}C": helpers(struct_of(self.dtype))["conv"]}
        return [(f"{p}a", self.array)], f"{p}a[i]", {}

    def _args(self):
        return [self.array]

    def _key(self):
        return ("array", self.dtype if self.dtype.names else self.dtype.str, self.contiguous)


def _scalar(value, what):
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise ValueError(f"{what} must be one value, got an array of shape {value.shape}")
        value = value.reshape(-1)[0]
    if isinstance(value, np.generic):
        return value
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    raise TypeError(f"{what} must be a number or a numpy scalar, got {type(value).__name__}")


def as_input(obj, what="d_in", tuples=False):
    """An array or iterator as an input sequence; one of tuples
    (ZipIterator) only where `tuples` says the caller takes them."""
    if isinstance(obj, IteratorBase):
        if obj.tuple_items and not tuples:
            raise TypeError(f"{what}: a ZipIterator's items are tuples, which this algorithm does not take yet "
                            "(cudajit.compute takes them in reduce_into, the scans, segmented_reduce, the "
                            "transforms, TransformIterator and PermutationIterator)")
    else:
        obj = _ArrayInput(obj, what)
    if not tuples and np.dtype(obj.value_dtype).names:
        raise TypeError(f"{what}: its items are structs ({np.dtype(obj.value_dtype)}), which this algorithm does "
                        "not take yet (cudajit.compute takes struct items in reduce_into, the scans, "
                        "segmented_reduce and the transforms)")
    return obj


_foreign_dtypes = {}   # a library's dtype object (torch.float32) -> numpy dtype


def array_dtype(array):
    """The numpy dtype of a device array, cheaply (this is on every call's path)."""
    dt = array.dtype
    if isinstance(dt, np.dtype):
        return dt
    found = _foreign_dtypes.get(dt)
    if found is None:
        found = _foreign_dtypes[dt] = np.dtype(array.__cuda_array_interface__["typestr"])
    return found


_is_array_type = {}   # type -> whether its objects are device arrays (asked once per type:
                      # PyTorch builds __cuda_array_interface__ anew on every access)


def _array_type(obj):
    t = type(obj)
    found = _is_array_type.get(t)
    if found is None:
        found = _is_array_type[t] = (not issubclass(t, (IteratorBase, np.ndarray))
                                     and hasattr(obj, "__cuda_array_interface__"))
    return found


def contiguous(array):
    """Whether a 1-d device array is dense (kernels may then use CUB's
    block loads on it). Asked the cheapest way each library offers."""
    flags = getattr(array, "flags", None)
    if flags is not None and hasattr(flags, "c_contiguous"):        # CuPy
        return bool(flags.c_contiguous)
    test = getattr(array, "is_c_contiguous", None) or getattr(array, "is_contiguous", None)
    if callable(test):                                               # cudajit, PyTorch
        return bool(test())
    strides = array.__cuda_array_interface__.get("strides")
    return strides is None or strides[0] == array_dtype(array).itemsize


def input_key(obj):
    """What the generated kernels depend on, for the one-call forms' caches."""
    if _array_type(obj):
        dt = array_dtype(obj)
        return (dt.str if dt.names is None else dt, contiguous(obj))   # records: "|V16" names no struct
    if isinstance(obj, IteratorBase):
        return obj._key()
    return as_input(obj)._key()   # raises the error


def input_args(obj):
    """The kernel arguments of an input (an array is its own)."""
    return obj._args() if isinstance(obj, IteratorBase) else [obj]


def init_value(value, dtype_type):
    """A 1-element array, numpy scalar or number as `dtype_type`."""
    if type(value) is np.ndarray and value.shape == (1,) and value.dtype.type is dtype_type:
        return value[0]
    return dtype_type(scalar_init(value))


def as_output(obj, what="d_out"):
    """Outputs are device arrays."""
    if isinstance(obj, IteratorBase):
        raise TypeError(f"{what}: cudajit.compute writes to device arrays; output iterators are "
                        "not supported yet")
    return _ArrayInput(obj, what)


def output(obj, what="d_out"):
    """A checked output array, as given."""
    if not _array_type(obj) or len(obj.shape) != 1:
        as_output(obj, what)   # raises the error
    return obj


def length(array):
    return array.shape[0]


_result_dtypes = {}
_result_types = {}
_tuple_dtypes = set()   # ZipIterators' dtypes: their items are tuples, not structs


def result_dtype(op, arg_dtypes):
    """The result dtype of device function `op` on `arg_dtypes`, from the
    compiler's type inference (compile_ptx of the device function); a
    struct's or tuple's is a structured dtype."""
    key = (op, tuple(np.dtype(d) for d in arg_dtypes))
    found = _result_dtypes.get(key)
    if found is None:
        ret = result_type(op, arg_dtypes)
        if ret.startswith(("Tuple(", "UniTuple(", "NamedTuple(")):
            from ._struct import dtype_of_result
            found = dtype_of_result(ret)
        else:
            found = np.dtype("bool" if ret == "bool" else ret)
        _result_dtypes[key] = found
    return found


def result_type(op, arg_dtypes):
    """numba's spelling of `op`'s result type on items of `arg_dtypes`.
    Struct items (structured dtypes other than a ZipIterator's tuples) are
    given to it as their gpu_struct's values, built in a probe from flat
    tuples (a kernel signature cannot spell a namedtuple)."""
    arg_dtypes = tuple(np.dtype(d) for d in arg_dtypes)
    key = (op, arg_dtypes)
    found = _result_types.get(key)
    if found is None:
        from ..decorators import compile_ptx
        structs = [d.names is not None and d not in _tuple_dtypes for d in arg_dtypes]
        if any(structs):
            from ._struct import flat_signature, helpers, struct_of
            params = [f"a{k}" for k in range(len(arg_dtypes))]
            namespace = {"f": op}
            call = []
            for k, (d, is_struct) in enumerate(zip(arg_dtypes, structs)):
                if is_struct:
                    namespace[f"u{k}"] = helpers(struct_of(d))["unflat"]
                    call.append(f"u{k}(a{k})")
                else:
                    call.append(f"a{k}")
            exec(compile(f"def probe({', '.join(params)}):\n    return f({', '.join(call)})\n",
                         "<cudajit.compute operator probe>", "exec"), namespace)
            fn = namespace["probe"]
            names = [flat_signature(struct_of(d)) if st else _numba_name(d) for d, st in zip(arg_dtypes, structs)]
        else:
            fn = op.py_func
            names = [_numba_name(d) for d in arg_dtypes]
        _, found = compile_ptx(fn, f"({', '.join(names)})", device=True)
        _result_types[key] = found
    return found


def _numba_name(dtype):
    """numba's name of a number's dtype; a ZipIterator's (fields f0, f1, ...)
    is the tuple its items are."""
    dtype = np.dtype(dtype)
    if dtype.names:
        return "Tuple(" + ", ".join(_numba_name(dtype.fields[n][0]) for n in dtype.names) + ")"
    return "boolean" if dtype.kind == "b" else dtype.name


def scalar_init(value, what="h_init"):
    """An initial value: a 1-element numpy array (cuda.compute's form), a
    numpy scalar or a Python number."""
    if value is None:
        raise TypeError(f"{what} is required")
    return _scalar(value, what)
