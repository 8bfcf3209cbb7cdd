"""Struct items of cudajit.compute: ``gpu_struct`` (cuda.compute's name and
meaning) and what the generated kernels need to carry struct values.

A gpu_struct class is a namedtuple with declared field types: in kernels it
is a value (``s.x``, ``s[0]``, ``S(a, b)`` builds one, as any namedtuple),
on the host an instance is an initial value (``h_init``), and ``S.dtype``
is the aligned numpy structured dtype of arrays that hold its items.

The generated kernels never store a struct value whole: a value goes into a
record (an array item of ``S.dtype``, in global, shared or local memory)
field by field (``put``) and comes out of a record, a tuple or another
struct by position (``conv``), each field converted to its declared type.
That conversion also normalises an operator's result (Python's rules make
``int32 + int32`` an int64; an operator may return a plain tuple, as
cuda.compute allows), so every value a kernel holds has one type."""
import collections
import typing

import numpy as np

from ..decorators import jit


class GpuStruct(tuple):
    """Base of every gpu_struct class (a namedtuple with field types)."""
    __slots__ = ()
    dtype = None          # the aligned numpy structured dtype
    _field_types = ()     # numpy dtypes, or gpu_struct classes for nested structs

    def __array__(self, dtype=None, copy=None):
        out = np.zeros((), self.dtype)
        out[()] = to_record_tuple(self)
        return out if dtype is None else out.astype(dtype)


def _field_type(struct, field, t):
    if isinstance(t, type) and issubclass(t, GpuStruct):
        return t
    if isinstance(t, dict) or (isinstance(t, np.dtype) and t.names):
        return gpu_struct(t, f"{struct}_{field}")
    dt = np.dtype(t)
    if dt.kind not in "biuf" or dt.shape:
        raise TypeError(f"gpu_struct {struct} field {field!r}: {dt} is not a number type (bool, int, uint, "
                        "float) or a struct")
    return dt


def gpu_struct(field_dict, name="AnonymousStruct"):
    """A struct type (cuda.compute.gpu_struct): from an annotated class
    (``@gpu_struct class P: x: np.float32``), a dict ``{"x": np.float32}`` or
    a structured numpy dtype. Fields are numbers or other gpu_structs."""
    if isinstance(field_dict, np.dtype):
        if not field_dict.names:
            raise ValueError("gpu_struct: expected a structured numpy dtype")
        fields = {n: field_dict.fields[n][0] for n in field_dict.names}
    elif isinstance(field_dict, type):
        name = field_dict.__name__ if name == "AnonymousStruct" else name
        fields = typing.get_type_hints(field_dict)
    elif isinstance(field_dict, dict):
        fields = dict(field_dict)
    else:
        raise TypeError(f"gpu_struct takes an annotated class, a dict or a structured dtype, got "
                        f"{type(field_dict).__name__}")
    if not fields:
        raise ValueError("gpu_struct: a struct needs at least one field")
    names = list(fields)
    types = tuple(_field_type(name, n, fields[n]) for n in names)
    dtype = np.dtype([(n, t.dtype if isinstance(t, type) else t) for n, t in zip(names, types)], align=True)
    base = collections.namedtuple(name, names)

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], dict):
            kwargs, args = args[0], ()
        values = base.__new__(cls, *args, **kwargs)   # the namedtuple's argument checks
        return base.__new__(cls, *(_coerce(t, v) for t, v in zip(types, values)))

    cls = type(name, (base, GpuStruct), {"__new__": __new__, "__slots__": (), "dtype": dtype,
                                         "_field_types": types, "__module__": __name__})
    cls.__qualname__ = name
    _by_dtype.setdefault(dtype, cls)
    _all.append(cls)
    return cls


_all = []   # every gpu_struct class made


def _coerce(t, v):
    if isinstance(t, type):
        if isinstance(v, t):
            return v
        if isinstance(v, dict):
            return t(v)
        return t(*v)
    return t.type(v)


_by_dtype = {}   # structured dtype -> the gpu_struct made for it (first one)


def struct_of(dtype):
    """The gpu_struct of a structured dtype (one made from it when none was)."""
    dtype = np.dtype(dtype)
    found = _by_dtype.get(dtype)
    if found is None:
        found = gpu_struct(dtype, "Struct_" + "_".join(dtype.names))
        _by_dtype[dtype] = found
    return found


def to_record_tuple(value):
    """Nested plain tuples of a struct value (what numpy takes for a record)."""
    return tuple(to_record_tuple(v) if isinstance(v, tuple) else v for v in value)


def is_struct_init(value):
    """Whether an initial value is a struct: a gpu_struct instance, a numpy
    record (np.void) or a one-item array of a structured dtype."""
    if isinstance(value, GpuStruct):
        return True
    if isinstance(value, (np.void, np.ndarray)):
        return value.dtype.names is not None
    return False


def init_struct(value):
    """The gpu_struct of a struct initial value."""
    if isinstance(value, GpuStruct):
        return type(value)
    return struct_of(value.dtype)


def leaves(S):
    """The numpy dtypes of S's fields, nested structs flattened, in order."""
    out = []
    for t in S._field_types:
        out += leaves(t) if isinstance(t, type) else [t]
    return out


def flat_value(value, S):
    """A struct initial value as the flat tuple of numpy scalars a kernel
    receives (nested fields in order), each of its field's type."""
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise ValueError(f"a struct initial value must be one item, got an array of shape {value.shape}")
        value = value.reshape(-1)[0]
    if isinstance(value, np.void):
        if value.dtype != S.dtype and len(value.dtype.names) != len(S._field_types):
            raise TypeError(f"the initial value's dtype {value.dtype} does not match {S.__name__}'s {S.dtype}")
        value = to_record_tuple(value.item())
    flat = []

    def walk(t, v):
        if isinstance(t, type):
            if not isinstance(v, tuple) or len(v) != len(t._field_types):
                raise TypeError(f"a {t.__name__} value needs {len(t._field_types)} fields, got {v!r}")
            for ft, fv in zip(t._field_types, v):
                walk(ft, fv)
        else:
            flat.append(t.type(v))
    walk(S, value)
    return tuple(flat)


def zero_flat(S):
    return tuple(t.type(0) for t in leaves(S))


def flat_signature(S):
    """numba's spelling of the flat tuple (a kernel parameter's type)."""
    return "Tuple(" + ", ".join("boolean" if t.kind == "b" else t.name for t in leaves(S)) + ")"


# ---- device functions of a struct, made once per class ----

_helpers = {}


def _build_expr(S, src, path=""):
    """Python expression building an S from `src` read by position."""
    parts = []
    for k, t in enumerate(S._field_types):
        at = f"{path}[{k}]"
        if isinstance(t, type):
            parts.append(_build_expr(t, src, at))
        else:
            parts.append(f"{_tname(t)}({src}{at})")
    return f"{_sname(S)}(" + ", ".join(parts) + ")"


def _tname(t):
    return f"np.{t.name}" if t.kind != "b" else "np.bool_"


def _sname(S):
    return f"S_{id(S):x}"


def _structs(S):
    out = {_sname(S): S}
    for t in S._field_types:
        if isinstance(t, type):
            out.update(_structs(t))
    return out


def _put_lines(S, dst, src, path=""):
    """Stores by position: any record of as many fields (a ZipIterator's
    f0, f1, ... or the user's names) takes the struct's values."""
    lines = []
    for k, t in enumerate(S._field_types):
        if isinstance(t, type):
            lines += _put_lines(t, f"{dst}[{k}]", src, f"{path}[{k}]")
        else:
            lines.append(f"    {dst}[{k}] = {src}{path}[{k}]")
    return lines


def _flat_expr(S, src, start=0):
    parts = []
    k = start
    for t in S._field_types:
        if isinstance(t, type):
            e, k = _flat_expr(t, src, k)
            parts.append(e)
        else:
            parts.append(f"{_tname(t)}({src}[{k}])")
            k += 1
    return f"{_sname(S)}(" + ", ".join(parts) + ")", k


def helpers(S):
    """{"conv": x -> S by position (records, tuples, structs), "put":
    (records, k, value) stores field by field, "get": (records, k) -> S,
    "unflat": the flat kernel parameter -> S} as device functions."""
    found = _helpers.get(S)
    if found is None:
        src = ("def conv(x):\n    return " + _build_expr(S, "x") + "\n"
               "def get(a, k):\n    return conv(a[k])\n"
               "def put(a, k, v):\n    r = a[k]\n" + "\n".join(_put_lines(S, "r", "v")) + "\n"
               "def unflat(t):\n    return " + _flat_expr(S, "t")[0] + "\n")
        namespace = {"np": np, **_structs(S)}
        exec(compile(src, f"<cudajit.compute struct {S.__name__}>", "exec"), namespace)
        found = {}
        for name in ("conv", "get", "put", "unflat"):   # in order: each sees the ones it calls
            found[name] = namespace[name] = jit(device=True)(namespace[name])
        _helpers[S] = found
    return found


# ---- an operator's result, checked ----

def _split_args(text):
    """'A, B(C, D), E' -> ['A', 'B(C, D)', 'E'] (top-level commas)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_result(ret):
    """A device function's result type (numba's spelling) as (kind, name,
    elements): ("scalar", dtype name, []), ("tuple", "", [elements]) or
    ("struct", class name, [elements])."""
    if ret.startswith("NamedTuple("):
        args = _split_args(ret[len("NamedTuple("):-1])
        return "struct", args[0].split("(")[0], args[1:]
    if ret.startswith("UniTuple("):
        elem, count = _split_args(ret[len("UniTuple("):-1])
        return "tuple", "", [elem] * int(count)
    if ret.startswith("Tuple("):
        return "tuple", "", _split_args(ret[len("Tuple("):-1])
    return "scalar", ret, []


def dtype_of_result(ret):
    """The numpy dtype of a result type string: a struct's or tuple's is
    structured (a known gpu_struct's own; a tuple's fields f0, f1, ...)."""
    kind, name, elems = parse_result(ret)
    if kind == "scalar":
        return np.dtype("bool" if ret in ("bool", "boolean") else ret)
    fields = [dtype_of_result(e) for e in elems]
    if kind == "struct":
        for dt, S in _by_dtype.items():
            if S.__qualname__ == name and len(dt.names) == len(fields):
                return dt
    return np.dtype([(f"f{k}", f) for k, f in enumerate(fields)], align=True)


_typed = {}


def struct_op(op_name, dev, arg_dtypes, S, what="op"):
    """Device function `dev` (on items of `arg_dtypes`) made to return S:
    its result must be an S or a tuple of S's field count (converted by
    position, each field to its type, as cuda.compute converts a tuple);
    another struct or a number is a TypeError naming the operator."""
    key = (dev, tuple(np.dtype(d) for d in arg_dtypes), S)
    found = _typed.get(key)
    if found is not None:
        return found
    from ._iterators import result_type
    ret = result_type(dev, arg_dtypes)
    kind, name, elems = parse_result(ret)
    fields = len(S._field_types)
    # another class of the same fields and types is the same struct to the
    # kernels (struct_of gives the first class made for a dtype)
    same = kind == "struct" and any(c.__qualname__ == name and c.dtype == S.dtype for c in _all + [S])
    if kind == "scalar" or (kind == "struct" and not same) or len(elems) != fields:
        got = {"scalar": ret, "struct": f"a {name} struct", "tuple": f"a tuple of {len(elems)} items"}[kind]
        raise TypeError(f"{what} {op_name} returns {got}: the result must be a {S.__name__} "
                        f"(or a tuple of its {fields} fields)")
    for (field, t), e in zip(zip(S._fields, S._field_types), elems):
        if not isinstance(t, type) and parse_result(e)[0] == "scalar":
            got = dtype_of_result(e)
            if got != t and not np.can_cast(got, t, "same_kind"):
                raise TypeError(f"{what} {op_name} returns {got} for field {field!r} of {S.__name__}, "
                                f"which holds {t}: the field must get a {t} or a type of the same kind")
    conv = helpers(S)["conv"]
    params = ", ".join(f"a{k}" for k in range(len(arg_dtypes)))
    namespace = {"f": dev, "conv": conv}
    exec(compile(f"def typed({params}):\n    return conv(f({params}))\n",
                 f"<cudajit.compute op -> {S.__name__}>", "exec"), namespace)
    found = _typed[key] = jit(device=True)(namespace["typed"])
    return found
