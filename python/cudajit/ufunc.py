"""GPU ufuncs, generalized ufuncs and reductions (numba.cuda's high-level
API): ``vectorize(..., target="cuda")``, ``guvectorize(..., target="cuda")``,
``reduce`` / ``Reduce``.

They are host-side drivers of ordinary ``@cudajit.jit`` kernels: the user's
function becomes a device function, called by a small kernel made here per
arity (and per dtype for reductions), which the C++ compiler specialises and
caches like any other. The host side resolves types, broadcasts, allocates,
copies and launches; numpy arrays come back as numpy arrays, device (and
CuPy/PyTorch) arrays as device arrays, as numba's CUDA ufuncs do.
"""
import numpy as np

from . import _core
from .decorators import jit
from .devicearray import DeviceNDArray, device_array, to_device

_THREADS = 256


def _is_device(a):
    return isinstance(a, DeviceNDArray) or hasattr(a, "__cuda_array_interface__")


def _is_scalar(a):
    return isinstance(a, (bool, int, float, complex, np.generic)) and not isinstance(a, np.ndarray)


def _kernel_from_source(name, source, device_function, **env):
    """A @jit kernel made from generated source; its globals: `cuda`, the
    user's function as the device function `__f`, and `env`."""
    import cudajit
    namespace = {"cuda": cudajit, "__f": device_function, **env}
    exec(compile(source, f"<cudajit.{name}>", "exec"), namespace)
    return jit(namespace[name])


def _signature_dtypes(sig):
    """(return dtype or None, [arg dtype]) and the arg ndims, from a numba signature."""
    ret, args = _core.signature_types(sig)
    dtypes, ndims = [], []
    for a in args:
        base, _, dims = a.partition("[")
        dtypes.append(np.dtype("bool" if base == "bool" else base))
        ndims.append(dims.count(":") if dims else 0)
    rdt = None if ret in (None, "none", "void") else np.dtype(ret)
    return rdt, dtypes, ndims


def _weak_castable(value, dtype):
    """A Python scalar casts to a dtype of its kind or wider (NEP 50's weak scalars)."""
    if isinstance(value, np.generic):
        return np.can_cast(value.dtype, dtype, "safe")
    kind = dtype.kind
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return kind in "iufc"
    if isinstance(value, float):
        return kind in "fc"
    return kind == "c"


def _castable(a, dtype):
    if _is_scalar(a):
        return _weak_castable(a, dtype)
    if _is_device(a):
        return np.dtype(_dtype_of(a)) == dtype   # no conversion on the GPU: exact types
    return np.can_cast(np.asarray(a).dtype, dtype, "safe")


def _dtype_of(a):
    if isinstance(a, DeviceNDArray) or isinstance(a, np.ndarray):
        return a.dtype
    interface = getattr(a, "__cuda_array_interface__", None)
    if interface is not None:
        return np.dtype(interface["typestr"])
    return np.asarray(a).dtype


def _shape_of(a):
    if _is_scalar(a):
        return ()
    if isinstance(a, (DeviceNDArray, np.ndarray)):
        return tuple(a.shape)
    interface = getattr(a, "__cuda_array_interface__", None)
    if interface is not None:
        return tuple(interface["shape"])
    return np.asarray(a).shape


def _has_stream(stream):
    """numba's stream=0 (and None): the default stream, no stream argument."""
    return stream is not None and stream != 0


def _stream_kw(stream):
    return {"stream": stream} if _has_stream(stream) else {}


def _configured(kernel, blocks, stream):
    """kernel[blocks, _THREADS] on `stream` when one is given."""
    if _has_stream(stream):
        return kernel[blocks, _THREADS, stream]
    return kernel[blocks, _THREADS]


def _launch(kernel, n, stream, *args):
    """One thread per element of n."""
    if n:
        _configured(kernel, (n + _THREADS - 1) // _THREADS, stream)(*args)


def _sync(stream):
    if _has_stream(stream):
        stream.synchronize()


def _as_device_ndarray(a):
    """A device array (cudajit's, or another library's through
    __cuda_array_interface__) as a DeviceNDArray."""
    return a if isinstance(a, DeviceNDArray) else to_device(a)


class _Inputs:
    """Launch arguments: device arrays (host arrays copied over, cast to
    `dtypes` first), scalars as numpy scalars of their dtype."""

    def __init__(self, values, dtypes, stream):
        self.any_device = any(_is_device(v) for v in values)
        self.args = []
        for v, dt in zip(values, dtypes):
            if _is_scalar(v):
                self.args.append(dt.type(v))
            elif _is_device(v):
                self.args.append(_as_device_ndarray(v))
            else:
                self.args.append(to_device(np.ascontiguousarray(np.asarray(v), dtype=dt), **_stream_kw(stream)))


class CUDAUFunc:
    """A GPU ufunc (numba.cuda's ufunc-like object): call it on numpy, device
    or CuPy/PyTorch arrays and scalars, which broadcast; ``out=`` an array to
    write, ``stream=`` to launch on."""

    def __init__(self, pyfunc, signatures):
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "ufunc")
        self.__doc__ = pyfunc.__doc__
        self._device = jit(device=True)(pyfunc)
        self._types = []            # [(arg dtypes, return dtype)] in declaration order
        for sig in signatures or ():
            ret, args, ndims = _signature_dtypes(sig)
            if ret is None or any(ndims):
                raise TypeError(f"vectorize signature {sig!r}: scalar arguments and a scalar result, "
                                "as float32(float32, float32)")
            self._types.append((args, ret))
        self.nin = len(self._types[0][0]) if self._types else _arity(pyfunc)
        self.nout = 1
        self._kernels = {}
        self._lazy = {}             # no signatures: input dtypes -> result dtype

    @property
    def types(self):
        return ["".join(d.char for d in args) + "->" + ret.char for args, ret in self._types]

    def _resolve(self, inputs):
        for args, ret in self._types:
            if all(_castable(v, dt) for v, dt in zip(inputs, args)):
                return args, ret
        if self._types:
            got = ", ".join(str(_dtype_of(v)) if not _is_scalar(v) else type(v).__name__ for v in inputs)
            raise TypeError(f"ufunc '{self.__name__}' not supported for the input types ({got}): its "
                            f"types are {', '.join(self.types)}")
        # No signatures: the inputs' own types, the result as the compiler types it.
        args = [np.dtype(np.asarray(v).dtype) if _is_scalar(v) else np.dtype(_dtype_of(v)) for v in inputs]
        key = tuple(args)
        if key not in self._lazy:
            from .decorators import compile_ptx
            sig = "(" + ", ".join(str(d) for d in args) + ")"
            _, ret = compile_ptx(self.py_func, sig, device=True)
            self._lazy[key] = np.dtype(str(ret))
        return args, self._lazy[key]

    def _kernel(self, ndim, scalar_mask):
        """ndim 0: every operand flat and of the result's shape (out[i] =
        f(a0[i], ...)); else operands of `ndim` dimensions, broadcast ones
        of extent 1 (the index modulo the extent is 0 there)."""
        key = (ndim, scalar_mask)
        if key not in self._kernels:
            names = [f"a{k}" for k in range(self.nin)]
            if ndim == 0:
                body = "    if i < out.shape[0]:\n"
                target = "out[i]"
            else:
                lines = ["    if i < out.size:\n", "        r = i\n"]
                for d in range(ndim - 1, 0, -1):
                    lines.append(f"        j{d} = r % out.shape[{d}]\n        r //= out.shape[{d}]\n")
                lines.append("        j0 = r\n")
                body = "".join(lines)
                target = "out[" + ", ".join(f"j{d}" for d in range(ndim)) + "]"

            def element(k):
                if scalar_mask[k]:
                    return names[k]
                if ndim == 0:
                    return f"{names[k]}[i]"
                return f"{names[k]}[" + ", ".join(f"j{d} % {names[k]}.shape[{d}]" for d in range(ndim)) + "]"
            call = f"__f({', '.join(element(k) for k in range(self.nin))})"
            source = (f"def __ufunc({', '.join(['out'] + names)}):\n"
                      f"    i = cuda.grid(1)\n{body}        {target} = {call}\n")
            self._kernels[key] = _kernel_from_source("__ufunc", source, self._device)
        return self._kernels[key]

    def __call__(self, *inputs, out=None, stream=0):
        if len(inputs) == self.nin + 1 and out is None:
            inputs, out = inputs[:-1], inputs[-1]
        if len(inputs) != self.nin:
            raise TypeError(f"ufunc '{self.__name__}' takes {self.nin} input(s), got {len(inputs)}")
        # a 0-d host array is a scalar of its dtype
        inputs = tuple(v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in inputs)
        args, ret = self._resolve(inputs)
        shapes = [_shape_of(v) for v in inputs]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"ufunc '{self.__name__}': operands could not be broadcast together with "
                             f"shapes {' '.join(str(s) for s in shapes)}") from None
        if out is not None and tuple(_shape_of(out)) != shape:
            raise ValueError(f"ufunc '{self.__name__}': out has shape {_shape_of(out)}, the result {shape}")
        if out is not None and _is_device(out) and np.dtype(_dtype_of(out)) != ret:
            raise TypeError(f"ufunc '{self.__name__}': out is {_dtype_of(out)}, the result {ret}")
        ins = _Inputs(inputs, args, stream)
        result = _as_device_ndarray(out) if out is not None and _is_device(out) else \
            device_array(shape, ret, **_stream_kw(stream))
        n = int(np.prod(shape))
        scalar_mask = tuple(_is_scalar(v) for v in inputs)
        same = all(s == shape or m for s, m in zip(shapes, scalar_mask))
        contiguous = all(m or a.is_c_contiguous() for a, m in zip(ins.args, scalar_mask)) and \
            result.is_c_contiguous()
        if n and same and contiguous:
            flat = [a if m else a.reshape(n) for a, m in zip(ins.args, scalar_mask)]
            _launch(self._kernel(0, scalar_mask), n, stream, result.reshape(n), *flat)
        elif n:
            ndim = max(len(shape), 1)
            expanded = []
            for a, s, m in zip(ins.args, shapes, scalar_mask):
                expanded.append(a if m else a.reshape((1,) * (ndim - len(s)) + tuple(s)))
            _launch(self._kernel(ndim, scalar_mask), n, stream, result.reshape((1,) * (ndim - len(shape)) + shape),
                    *expanded)
        if out is not None and not _is_device(out):
            host = result.copy_to_host(**_stream_kw(stream))
            _sync(stream)
            out[...] = host
            return out
        if out is not None or ins.any_device:
            return out if out is not None else result
        host = result.copy_to_host(**_stream_kw(stream))
        _sync(stream)
        return host[()] if host.ndim == 0 else host


def _arity(pyfunc):
    import inspect
    return len(inspect.signature(pyfunc).parameters)


def _parse_layout(layout):
    """'(m,n),(n)->(m)' -> ([('m','n'), ('n',)], [('m',)])."""
    import re
    text = layout.replace(" ", "")
    if "->" not in text:
        raise ValueError(f"gufunc layout {layout!r} has no '->'")
    left, right = text.split("->")

    def groups(part):
        found = re.findall(r"\(([^()]*)\)", part)
        if "".join(f"({g})" for g in found) != part.replace(",(", "(").replace("),", ")") and \
                ",".join(f"({g})" for g in found) != part:
            raise ValueError(f"gufunc layout {layout!r} is not of the form (m,n),(n)->(m)")
        return [tuple(d for d in g.split(",") if d) for g in found]
    return groups(left), groups(right)


class CUDAGUFunc:
    """A GPU generalized ufunc (numba.cuda's guvectorize): the function
    works on core slices of its arrays as the layout says; the leading
    (loop) dimensions are spread over threads, one call per thread."""

    def __init__(self, pyfunc, signatures, layout):
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "gufunc")
        self._device = jit(device=True)(pyfunc)
        self._ins, self._outs = _parse_layout(layout)
        self.nin, self.nout = len(self._ins), len(self._outs)
        self.layout = layout
        self._types = []
        for sig in signatures:
            ret, args, ndims = _signature_dtypes(sig)
            if ret is not None:
                raise TypeError(f"guvectorize signature {sig!r} must return void")
            if len(args) != self.nin + self.nout:
                raise TypeError(f"guvectorize signature {sig!r} has {len(args)} arguments; the layout "
                                f"{layout!r} has {self.nin + self.nout}")
            for k, core in enumerate(self._ins + self._outs):
                if ndims[k] not in (len(core), len(core) + (0 if core else 1)):
                    raise TypeError(f"guvectorize signature {sig!r}: argument {k + 1} has {ndims[k]} "
                                    f"dimension(s), the layout gives it {len(core)}")
            self._types.append((args, ndims))
        if not self._types:
            raise TypeError("guvectorize needs at least one signature")
        self._kernel = None

    def _make_kernel(self):
        if self._kernel is None:
            names = [f"a{k}" for k in range(self.nin + self.nout)]
            # an input without loop dimensions has extent 1 there: every call reads it
            args = ", ".join(f"{n}[i % {n}.shape[0]]" for n in names)
            source = (f"def __gufunc({', '.join(names)}):\n"
                      f"    i = cuda.grid(1)\n"
                      f"    if i < {names[-1]}.shape[0]:\n"
                      f"        __f({args})\n")
            self._kernel = _kernel_from_source("__gufunc", source, self._device)
        return self._kernel

    def __call__(self, *args, out=None, stream=0):
        if out is not None:
            args = args + (tuple(out) if isinstance(out, (tuple, list)) else (out,))
        if len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(f"gufunc '{self.__name__}' takes {self.nin} input(s) (and optionally its "
                            f"{self.nout} output(s)), got {len(args)}")
        inputs, outs = list(args[:self.nin]), list(args[self.nin:])
        for dtypes, ndims in self._types:
            if all(_castable(v, dt) for v, dt in zip(inputs, dtypes)):
                break
        else:
            got = ", ".join(str(_dtype_of(v)) for v in inputs)
            raise TypeError(f"gufunc '{self.__name__}' not supported for the input types ({got})")
        # core dimensions: bound by the inputs, checked for agreement
        sizes, loops = {}, []
        for k, (v, core) in enumerate(zip(inputs, self._ins)):
            shape = _shape_of(v)
            if len(shape) < len(core):
                raise ValueError(f"gufunc '{self.__name__}': input {k + 1} has shape {shape}, the layout "
                                 f"{self.layout!r} needs at least {len(core)} dimension(s)")
            split = len(shape) - len(core)
            loops.append(shape[:split])
            for name, size in zip(core, shape[split:]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"gufunc '{self.__name__}': dimension '{name}' is {sizes[name]} in one "
                                     f"operand and {size} in input {k + 1}")
        try:
            loop = np.broadcast_shapes(*loops)
        except ValueError:
            raise ValueError(f"gufunc '{self.__name__}': loop dimensions {loops} do not broadcast") from None
        for k, l in enumerate(loops):
            if l not in ((), loop):
                raise ValueError(f"gufunc '{self.__name__}': input {k + 1}'s loop dimensions {l} must be "
                                 f"{loop} or none (partial broadcasting is not supported)")
        missing = [d for core in self._outs for d in core if d not in sizes]
        if missing:
            raise ValueError(f"gufunc '{self.__name__}': output dimension(s) {missing} are not set by "
                             "any input")
        n = int(np.prod(loop)) if loop else 1
        any_device = any(_is_device(v) for v in inputs + outs)
        ins = _Inputs(inputs, dtypes[:self.nin], stream)
        launch_args = []
        for k, (a, core) in enumerate(zip(ins.args, self._ins)):
            if _is_scalar(inputs[k]):
                a = to_device(np.full((1,) + (1,) * (ndims[k] - len(core)), a), **_stream_kw(stream))
                launch_args.append(a)
                continue
            shape = _shape_of(a)
            lead = int(np.prod(loops[k])) if loops[k] else 1
            core_shape = shape[len(loops[k]):]
            if ndims[k] > len(core):   # a '()' core declared as an array: a one-element view
                core_shape = core_shape + (1,)
            launch_args.append(a.reshape((lead,) + tuple(core_shape)))
        results = []
        for k, core in enumerate(self._outs):
            dt = dtypes[self.nin + k]
            shape = tuple(loop) + tuple(sizes[d] for d in core)
            given = outs[k] if k < len(outs) else None
            if given is not None and tuple(_shape_of(given)) != shape:
                raise ValueError(f"gufunc '{self.__name__}': output {k + 1} has shape "
                                 f"{_shape_of(given)}, the result {shape}")
            dev = _as_device_ndarray(given) if given is not None and _is_device(given) else \
                device_array(shape, dt, **_stream_kw(stream))
            results.append((given, dev))
            core_shape = tuple(sizes[d] for d in core)
            if ndims[self.nin + k] > len(core):
                core_shape = core_shape + (1,)
            launch_args.append(dev.reshape((n,) + core_shape))
        _launch(self._make_kernel(), n, stream, *launch_args)
        returned = []
        for given, dev in results:
            if given is not None and not _is_device(given):
                given[...] = dev.copy_to_host(**_stream_kw(stream))
                returned.append(given)
            elif given is not None or any_device:
                returned.append(dev)
            else:
                returned.append(dev.copy_to_host(**_stream_kw(stream)))
        _sync(stream)
        return returned[0] if len(returned) == 1 else tuple(returned)


def vectorize(signatures=None, target="cuda", **options):
    """numba's ``@vectorize([...], target="cuda")``: a GPU ufunc."""
    if callable(signatures) and not isinstance(signatures, (str, list, tuple)):
        return CUDAUFunc(signatures, None)
    if target != "cuda":
        raise ValueError(f"cudajit.vectorize compiles for target='cuda' only, got target={target!r}")
    if isinstance(signatures, str):
        signatures = [signatures]
    return lambda f: CUDAUFunc(f, signatures)


def guvectorize(signatures, layout, target="cuda", **options):
    """numba's ``@guvectorize([...], "(n)->()", target="cuda")``: a GPU gufunc."""
    if target != "cuda":
        raise ValueError(f"cudajit.guvectorize compiles for target='cuda' only, got target={target!r}")
    if isinstance(signatures, str):
        signatures = [signatures]
    return lambda f: CUDAGUFunc(f, signatures, layout)


_REDUCE_SOURCE = '''
def __reduce(arr, n, init, final, res):
    sh = cuda.shared.array(THREADS, DTYPE)
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * THREADS
    stride = THREADS * cuda.gridDim.x
    i = start + tid
    if i < n:
        acc = arr[i]
        j = i + stride
        while j < n:
            acc = __f(acc, arr[j])
            j += stride
        sh[tid] = acc
    cuda.syncthreads()
    width = min(THREADS, n - start)
    while width > 1:
        half = (width + 1) // 2
        if tid < width - half:
            sh[tid] = __f(sh[tid], sh[tid + half])
        cuda.syncthreads()
        width = half
    if tid == 0:
        if final:
            res[0] = __f(sh[0], init)
        else:
            res[cuda.blockIdx.x] = sh[0]
'''


class Reduce:
    """numba's ``cuda.Reduce(binop)``: a reduction of a 1-d array with a
    Python binary function (associative and commutative), two passes of a
    block tree reduction. ``Reduce(f)(arr, size=None, res=None, init=0,
    stream=0)``: the result, or written to ``res[0]`` (a device array)."""

    def __init__(self, functor):
        self.py_func = functor
        self._device = jit(device=True)(functor)
        self._kernels = {}

    def _kernel(self, dtype):
        if dtype not in self._kernels:
            self._kernels[dtype] = _kernel_from_source("__reduce", _REDUCE_SOURCE, self._device,
                                                       THREADS=_THREADS, DTYPE=dtype.type)
        return self._kernels[dtype]

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        if _is_scalar(arr) or len(_shape_of(arr)) != 1:
            raise TypeError("reduce takes a 1-d array")
        dtype = np.dtype(_dtype_of(arr))
        n = _shape_of(arr)[0] if size is None else int(size)
        if not 0 <= n <= _shape_of(arr)[0]:
            raise ValueError(f"reduce: size {size} is outside the array's {_shape_of(arr)[0]} elements")
        init = dtype.type(init)
        if n == 0:
            if res is not None:
                res.copy_to_device(np.array([init], dtype), **_stream_kw(stream))
                return None
            return init
        data = _as_device_ndarray(arr) if _is_device(arr) else \
            to_device(np.ascontiguousarray(arr), **_stream_kw(stream))
        kernel = self._kernel(dtype)
        blocks = min((n + _THREADS - 1) // _THREADS, 1024)
        out = res if res is not None else device_array(1, dtype, **_stream_kw(stream))
        if blocks == 1:
            _configured(kernel, 1, stream)(data, n, init, True, out)
        else:
            partials = device_array(blocks, dtype, **_stream_kw(stream))
            _configured(kernel, blocks, stream)(data, n, init, False, partials)
            _configured(kernel, 1, stream)(partials, blocks, init, True, out)
        if res is not None:
            return None
        value = out.copy_to_host(**_stream_kw(stream))
        _sync(stream)
        return value[0]


def reduce(functor):
    """numba's ``@cuda.reduce``: ``Reduce(functor)``."""
    return Reduce(functor)
