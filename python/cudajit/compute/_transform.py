"""unary_transform and binary_transform: d_out[i] = op(inputs[i]...), one
grid-stride kernel (no temporary storage)."""
import numpy as np

from . import _build as B
from ._iterators import IteratorBase, input_args, input_key, length, output, ProxyArray, as_input, as_output
from ._ops import device_op
from ._reduce import _cached, _count

_SOURCE = """
def transform({params}, out, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        out[i] = op({items})
        i += stride
"""


class _Transform:
    def __init__(self, inputs, d_out, op, arity):
        self.srcs = [as_input(d, f"d_in{k + 1}" if arity > 1 else "d_in", tuples=True) for k, d in enumerate(inputs)]
        self.out_dtype = np.dtype(as_output(d_out, "d_out").dtype)
        self.op = device_op(op, arity, "op")
        params, items, env = B.params_and_items(self.srcs)
        source = _SOURCE
        self.struct = None
        if self.out_dtype.names:   # struct results: the op's checked and converted, stored field by field
            from ._reduce import op_name
            from ._struct import helpers, struct_of, struct_op
            self.struct = S = struct_of(self.out_dtype)
            self.op = struct_op(op_name(op), self.op, [s.value_dtype for s in self.srcs], S, "op")
            env["put"] = helpers(S)["put"]
            source = source.replace("out[i] = op({items})", "put(out, i, op({items}))")
        env["op"] = self.op
        key = ("transform", tuple(s._key() for s in self.srcs), self.op)
        self.kernel = B.kernel(key, "transform",
                               source.format(params=", ".join(p for p, _ in params), items=", ".join(items)), env)

    def launches(self):
        args = [v for _, v in B.params_and_items(self.srcs)[0]]
        return [(self.kernel, args + [ProxyArray(self.out_dtype), np.int64(0)])]

    def run(self, inputs, d_out, num_items, stream):
        n = _count(num_items)
        out = output(d_out, "d_out")
        if self.struct is not None:
            from ._reduce import check_output
            check_output(out, "d_out", self.struct)
        if length(out) < n:
            raise ValueError(f"d_out holds {length(out)} items, num_items is {n}")
        for d in inputs:
            if not isinstance(d, IteratorBase) and length(d) < n:
                raise ValueError(f"an input holds {length(d)} items, num_items is {n}")
        if n:
            args = [a for d in inputs for a in input_args(d)]
            grid = min(-(-n // B.BLOCK), B.sm_count() * 16)
            B.launch(self.kernel, grid, stream, args + [out, np.int64(n)])


class _Unary(_Transform):
    def __init__(self, d_in, d_out, op):
        super().__init__([d_in], d_out, op, 1)

    def __call__(self, d_in=None, d_out=None, op=None, num_items=None, stream=None):
        self.run([d_in], d_out, num_items, stream)


class _Binary(_Transform):
    def __init__(self, d_in1, d_in2, d_out, op):
        super().__init__([d_in1, d_in2], d_out, op, 2)

    def __call__(self, d_in1=None, d_in2=None, d_out=None, op=None, num_items=None, stream=None):
        self.run([d_in1, d_in2], d_out, num_items, stream)


def make_unary_transform(d_in=None, d_out=None, op=None, **kwargs):
    return _Unary(d_in, d_out, op)


def make_binary_transform(d_in1=None, d_in2=None, d_out=None, op=None, **kwargs):
    return _Binary(d_in1, d_in2, d_out, op)


def unary_transform(d_in=None, d_out=None, op=None, num_items=None, stream=None, **kwargs):
    """d_out[i] = op(d_in[i])."""
    key = ("unary", input_key(d_in), op)
    obj = _cached(_Unary, key, d_in, d_out, op)
    obj.run([d_in], d_out, num_items, stream)


def binary_transform(d_in1=None, d_in2=None, d_out=None, op=None, num_items=None, stream=None, **kwargs):
    """d_out[i] = op(d_in1[i], d_in2[i])."""
    key = ("binary", input_key(d_in1), input_key(d_in2), op)
    obj = _cached(_Binary, key, d_in1, d_in2, d_out, op)
    obj.run([d_in1, d_in2], d_out, num_items, stream)
