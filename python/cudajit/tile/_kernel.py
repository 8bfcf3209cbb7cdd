"""``@cudajit.tile.kernel`` and ``cudajit.tile.launch``.

A tile kernel is launched with a grid only: ``ct.launch(stream, grid, kernel,
args)`` as in cuTile, or ``kernel[n](*args)`` / ``kernel[(gx, gy),](*args)`` in
numba's spelling (a bare ``kernel[a, b]`` is numba's [blocks, threads]: refused). The
block size is the compiler's choice (``num_warps`` overrides it).

A kernel compiles once per (argument types, values of its ``Constant``
parameters): each set of constant values has its own C++ dispatcher (the
SIMT kernels' launch path), which compiles with the "tile" pipeline and
launches with the block size the compiler chose.
"""

import collections
import functools
import inspect
import types
import typing

from .. import _core, _pickle
from ._annotations import is_constant_annotation
from ._by_target import ByTarget


def _with_device_helpers(py_func, seen=None):
    """cuTile calls plain Python helper functions from kernels; cudajit's decoder
    takes device functions. The kernel's function with a globals view in which
    every plain function it names is a device function (recursively)."""
    from ..dispatcher import DeviceFunction
    seen = {} if seen is None else seen
    if py_func in seen:
        return seen[py_func]
    names = [n for n in py_func.__code__.co_names
             if isinstance(py_func.__globals__.get(n), types.FunctionType)]
    if not names:
        seen[py_func] = py_func
        return py_func
    env = dict(py_func.__globals__)
    clone = types.FunctionType(py_func.__code__, env, py_func.__name__, py_func.__defaults__,
                               py_func.__closure__)
    clone.__qualname__ = py_func.__qualname__
    clone.__kwdefaults__ = py_func.__kwdefaults__
    seen[py_func] = clone
    for n in names:
        env[n] = DeviceFunction(_with_device_helpers(py_func.__globals__[n], seen))
    return clone


def _check_option(name, value, ok, rule):
    for v in value.values_given() if isinstance(value, ByTarget) else [value]:
        if v is not None and not (isinstance(v, int) and not isinstance(v, bool) and ok(v)):
            raise ValueError(f"cudajit.tile.kernel: {name} must be {rule}, got {v!r}")


def _is_power_of_two(v):
    return v > 0 and v & (v - 1) == 0


def _constant_parameters(py_func):
    """The names of the parameters annotated ``Constant`` / ``Constant[...]``, in order."""
    try:
        hints = typing.get_type_hints(py_func, include_extras=True)
    except Exception:   # an annotation that does not evaluate: read the raw ones
        hints = dict(getattr(py_func, "__annotations__", {}))
    params = inspect.signature(py_func).parameters
    return tuple(p for p in params if p in hints and is_constant_annotation(hints[p]))


class TileKernel:
    """A function decorated with ``@cudajit.tile.kernel``: the entry point of tile code,
    run by every block of the grid it is launched over."""

    # cudajit.jit / compile_ptx recognise tile kernels by this, without importing this module.
    _cudajit_tile_kernel_ = True

    def __init__(self, py_func, *, num_ctas=None, occupancy=None, opt_level=3,
                 num_worker_warps=None, num_warps=None):
        if not isinstance(py_func, types.FunctionType):
            raise TypeError("cudajit.tile.kernel decorates Python functions, not "
                            f"{type(py_func).__name__}")
        _check_option("num_ctas", num_ctas, lambda v: _is_power_of_two(v) and v <= 16,
                      "a power of two from 1 to 16")
        _check_option("occupancy", occupancy, lambda v: 1 <= v <= 32, "an int from 1 to 32")
        _check_option("opt_level", opt_level, lambda v: 0 <= v <= 3, "an int from 0 to 3")
        _check_option("num_worker_warps", num_worker_warps, lambda v: v in (4, 8), "4 or 8")
        _check_option("num_warps", num_warps, lambda v: _is_power_of_two(v) and v <= 32,
                      "a power of two from 1 to 32 (at most 1024 threads)")
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = {"num_ctas": num_ctas, "occupancy": occupancy, "opt_level": opt_level,
                        "num_worker_warps": num_worker_warps, "num_warps": num_warps}
        self.parameters = tuple(inspect.signature(py_func).parameters)
        self.constant_parameters = _constant_parameters(py_func)
        self._constant_index = tuple(self.parameters.index(p) for p in self.constant_parameters)
        self._by_target = any(isinstance(v, ByTarget) for v in self.options.values())
        # Constant values -> _core.Dispatcher, most recently used last; at most
        # cudajit.cache.memory_cache_limit() of them (a kernel launched with
        # ever new Constant values keeps a bounded set; the dropped ones come
        # back from the disk cache).
        self._dispatchers = collections.OrderedDict()
        self._compiled_func = None   # py_func with its helpers as device functions (first compile)

    def replace_hints(self, **hints):
        """A new kernel of the same function with some options changed (its own cache)."""
        unknown = set(hints) - set(self.options)
        if unknown:
            raise TypeError(f"replace_hints() got unknown option(s): {', '.join(sorted(unknown))}")
        return TileKernel(self.py_func, **{**self.options, **hints})

    def __call__(self, *args, **kwargs):
        raise TypeError(f"tile kernel '{self.py_func.__qualname__}' cannot be called directly: "
                        "use cudajit.tile.launch(stream, grid, kernel, args) or kernel[grid](*args)")

    def __getitem__(self, config):
        return _Launcher(self, _numba_style_grid(config))

    def _check_args(self, args):
        if len(args) != len(self.parameters):
            raise TypeError(f"tile kernel '{self.py_func.__qualname__}' takes "
                            f"{len(self.parameters)} argument(s), got {len(args)}")

    def _constants(self, values):
        """{parameter index: value} for the Constant parameters, checked."""
        out = {}
        for i, v in zip(self._constant_index, values):
            if not isinstance(v, (bool, int, float)):
                raise TypeError(f"tile kernel '{self.py_func.__qualname__}': Constant parameter "
                                f"'{self.parameters[i]}' must be an int, float or bool, got "
                                f"{type(v).__name__}")
            out[i] = v
        return out

    def dispatcher(self, args):
        """The compiled form for these launch arguments' Constant values (a
        ``_core.Dispatcher``: ``inspect_ir``, ``inspect_ptx``, ``stats``)."""
        self._check_args(args)
        values = tuple(args[i] for i in self._constant_index)
        key = tuple((type(v), v) for v in values)
        arch = None
        if self._by_target:   # options per GPU generation: the current device's
            major, minor = _core.device_info(_core.current_device())["compute_capability"]
            arch = major * 10 + minor
            key += (arch,)
        d = self._dispatchers.get(key)
        if d is not None:
            self._dispatchers.move_to_end(key)
            return d
        d = _core.Dispatcher(self._function(), opt=self._option("opt_level", arch),
                             tile=self._tile_options(values, arch))
        self._dispatchers[key] = d
        limit = _core.memory_cache_limit()
        while limit and len(self._dispatchers) > limit:
            self._dispatchers.popitem(last=False)
        return d

    def _option(self, name, arch):
        """An option's value, a ByTarget resolved for ``arch``."""
        value = self.options[name]
        if isinstance(value, ByTarget):
            return value.resolve(arch, 3 if name == "opt_level" else None)
        return value

    def _function(self):
        # Helpers are looked up at the first compile, not at decoration: a
        # module may define them below the kernel.
        if self._compiled_func is None:
            self._compiled_func = _with_device_helpers(self.py_func)
        return self._compiled_func

    def _tile_options(self, values, arch=None):
        return {"num_warps": self._option("num_warps", arch), "occupancy": self._option("occupancy", arch),
                "constants": self._constants(values)}

    def _launch(self, stream, grid, args):
        d = self.dispatcher(args)
        gx = grid + (1,) * (3 - len(grid))
        if stream is None:
            d[gx, 1](*args)
        else:
            d[gx, 1, stream](*args)

    def compile_ptx(self, signature, constants=None, cc=None, arch="sm_90", backend=None):
        """PTX for one signature (a type per parameter, numba's spelling)
        and the Constant parameters' values by name; needs no GPU."""
        constants = dict(constants or {})
        missing = [p for p in self.constant_parameters if p not in constants]
        if missing:
            raise TypeError(f"compile_ptx: values needed for the Constant parameter(s) {missing}")
        unknown = sorted(set(constants) - set(self.constant_parameters))
        if unknown:
            raise TypeError(f"compile_ptx: {unknown} are not Constant parameters of "
                            f"'{self.py_func.__qualname__}'")
        from ..decorators import _arch_number
        values = [constants[p] for p in self.constant_parameters]
        number = _arch_number(cc, arch)
        ptx, _, _, _ = _core.compile_aot(self._function(), signature, arch=number,
                                         opt=self._option("opt_level", number), tile=self._tile_options(values, number),
                                         backend="" if backend is None else str(backend))
        return ptx

    def __repr__(self):
        return f"<cudajit.tile.kernel {self.py_func.__qualname__}>"

    def __reduce__(self):
        # The compiled dispatchers stay behind: the receiver compiles its own.
        return _pickle.reduce(self, (_pickle.rebuild_tile_kernel, (self.py_func, self.options)))


class _Launcher:
    """``kernel[grid]``: calling it launches on the default stream."""

    def __init__(self, kernel, grid):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args):
        self.kernel._launch(None, self.grid, args)


def _numba_style_grid(config):
    """``kernel[n]`` or ``kernel[(gx, gy),]``. A bare ``kernel[a, b]`` is refused:
    Python passes it as the tuple (a, b), which numba reads as [blocks, threads];
    taking it as a 2-d grid would run a ported SIMT launch silently wrong."""
    if isinstance(config, tuple):
        if len(config) != 1:
            raise TypeError(
                "a tile kernel is launched with a grid only: kernel[n], or kernel[(gx, gy),] for "
                f"a 2-d or 3-d grid (kernel{list(config)} reads as numba's [blocks, threads, ...]); "
                "the compiler picks the block size (@cudajit.tile.kernel(num_warps=...) sets it)")
        config = config[0]
    return _check_grid(config)


def _check_grid(grid):
    """cuTile's Dim3: an int or a tuple of 1 to 3 positive ints."""
    dims = grid if isinstance(grid, tuple) else (grid,)
    ok = 1 <= len(dims) <= 3 and all(isinstance(d, int) and not isinstance(d, bool) and d > 0
                                     for d in dims)
    if not ok:
        raise TypeError(f"a tile kernel's grid is an int or a tuple of 1 to 3 positive ints, "
                        f"got {grid!r}")
    return dims


def kernel(function=None, /, *, num_ctas=None, occupancy=None, opt_level=3,
           num_worker_warps=None, num_warps=None):
    """Marks a Python function as a tile kernel (cuTile's ``@ct.kernel``).

    Options (cuTile's): ``num_ctas`` (blocks per cluster, a power of two up to
    16), ``occupancy`` (blocks per SM hint, 1..32), ``opt_level`` (0..3),
    ``num_worker_warps`` (4 or 8). cudajit's own: ``num_warps`` (block size in
    warps; the compiler picks one otherwise). Parameters annotated
    ``Constant[...]`` are compile-time constants: each value compiles its own
    kernel.

    """
    options = {"num_ctas": num_ctas, "occupancy": occupancy, "opt_level": opt_level,
               "num_worker_warps": num_worker_warps, "num_warps": num_warps}
    if function is None:
        return lambda f: TileKernel(f, **options)
    return TileKernel(function, **options)


def launch(stream, grid, kernel, kernel_args, /):
    """Launches a tile kernel over ``grid`` blocks on ``stream`` (cuTile's ``ct.launch``).

    ``grid`` is an int or a tuple of up to 3 ints; ``kernel_args`` a tuple with
    one value per kernel parameter (arrays, scalars, the values of ``Constant``
    parameters).
    """
    if not isinstance(kernel, TileKernel):
        raise TypeError("cudajit.tile.launch launches @cudajit.tile.kernel functions, not "
                        f"{type(kernel).__name__} (launch @cudajit.jit kernels as kernel[grid, block])")
    dims = _check_grid(grid)
    if not isinstance(kernel_args, tuple):
        raise TypeError(f"kernel_args must be a tuple, got {type(kernel_args).__name__}")
    kernel._launch(stream, dims, kernel_args)
