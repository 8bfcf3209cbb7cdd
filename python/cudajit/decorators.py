"""``jit`` and ``compile_ptx``: numba.cuda's decorator and PTX entry point."""

import os
import types

from . import _core
from .dispatcher import DeviceFunction, Dispatcher, coop_block

# numba.cuda.jit's options. Those cudajit does not act on yet are accepted so
# that ported code runs unchanged.
_OPTIONS = {"fastmath", "debug", "lineinfo", "opt", "cache", "max_registers", "link", "inline",
            "boundscheck", "lto", "launch_bounds", "forceinline", "block", "fast_compile",
            "backend", "shared_memory_carveout", "extensions"}

_CARVEOUT_NAMES = {"default": -1, "maxl1": 0, "maxshared": 100}


def _carveout(value):
    """numba's shared_memory_carveout: "MaxL1" (0), "MaxShared" (100),
    "default" (-1, the driver's choice; any case) or a percentage 0..100 of
    the unified L1/shared memory to give to shared memory (-1: the default).
    None: not set. Checked here with numba's errors; the runtime sets
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT on each loaded kernel."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.lower() not in _CARVEOUT_NAMES:
            raise ValueError(f"Invalid carveout value: {value}. Must be -1 to 100 or one of "
                             f"{list(_CARVEOUT_NAMES)}")
        return _CARVEOUT_NAMES[value.lower()]
    if isinstance(value, int):
        if not -1 <= value <= 100:
            raise ValueError("Carveout must be between -1 and 100")
        return int(value)
    raise TypeError(f"shared_memory_carveout must be str or int, got {type(value).__name__}")


def _opt_level(opt):
    if opt is True or opt is None:
        return 3
    if opt is False:
        return 0
    level = int(opt)
    if not 0 <= level <= 3:
        raise ValueError(f"opt must be a bool or 0..3, got {opt!r}")
    return level


def _is_python_function(obj):
    return isinstance(obj, types.FunctionType)   # inspect.isfunction, without importing inspect


def _use_cache(option):
    """cache=True, unless $CUDAJIT_CACHE says otherwise for every kernel:
    "1" turns the disk cache on, "0" off."""
    env = os.environ.get("CUDAJIT_CACHE", "")
    if env in ("0", "1"):
        return env == "1"
    return bool(option)


def _fast_compile(option):
    """fast_compile="min" | "mid" | "max" (True: "max"; False / None: off),
    unless $CUDAJIT_FAST_COMPILE gives the level for every kernel ("0": off)."""
    env = os.environ.get("CUDAJIT_FAST_COMPILE", "")
    if env:
        option = None if env == "0" else env
    if option is None or option is False:
        return ""
    if option is True:
        return "max"
    return str(option)   # _core checks the level


def _backend(option):
    """backend="nvvm" (libNVVM) | "llvm" (LLVM's NVPTX back end); None: ""
    (the core takes $CUDAJIT_BACKEND, else "nvvm", and checks the name)."""
    return "" if option is None else str(option)


def _refuse_tile_kernel(obj):
    if getattr(obj, "_cudajit_tile_kernel_", False):
        raise TypeError("jit() cannot be applied to a @cudajit.tile.kernel (a tile kernel is "
                        "not a SIMT kernel)")


def _link_files(options, device):
    """jit(link=[...]): the files (CUDA C++ .cu, .ptx, .ltoir, .cubin, .fatbin,
    .o, .a) linked into every kernel compiled from the function, as absolute
    paths; they must exist now (docs/language.md, "Foreign device functions")."""
    from .foreign import link_paths
    files = link_paths(options.get("link"), "jit")
    if files and device:
        raise NotImplementedError(
            "jit(device=True, link=...) is not supported: give the files to the kernel's "
            "@cudajit.jit(link=[...]) or to cudajit.declare_device(..., link=[...])")
    return files


def _extensions(options):
    """jit(extensions=[...]): numba's argument-preparation objects, each with
    prepare_args(ty, val, stream=..., retr=...) returning (ty, val)."""
    extensions = options.get("extensions") or ()
    if not isinstance(extensions, (list, tuple)):
        raise TypeError(f"jit(extensions=...) takes a list, got {type(extensions).__name__}")
    for ext in extensions:
        if not callable(getattr(ext, "prepare_args", None)):
            raise TypeError(f"jit(extensions=...): {ext!r} has no prepare_args(ty, val, stream=..., retr=...) "
                            "method")
    return list(extensions)


def _make(py_func, signatures, device, options):
    link = _link_files(options, device)
    _refuse_tile_kernel(py_func)
    extensions = _extensions(options)
    if device:
        return DeviceFunction(py_func, signatures or (), options)
    kernel = Dispatcher(py_func, fastmath=bool(options.get("fastmath", False)),
                        debug=bool(options.get("debug", False)),
                        lineinfo=bool(options.get("lineinfo", False)),
                        opt=_opt_level(options.get("opt", True)),
                        cache=_use_cache(options.get("cache", False)),
                        fast_compile=_fast_compile(options.get("fast_compile")),
                        backend=_backend(options.get("backend")), link=link,
                        launch_bounds=options.get("launch_bounds"),
                        shared_memory_carveout=options.get("shared_memory_carveout"))
    # What pickling by value needs to make this kernel again (cudajit._pickle):
    # the options as given (the receiver's $CUDAJIT_CACHE applies there).
    kernel._jit_options = dict(options)
    kernel.extensions.extend(extensions)
    kernel._jit_signatures = list(signatures) if signatures else None
    # a kernel with block algorithms and no block= compiles at its first
    # launch, unless the cudajit.coop primitives it names fix the block
    block = options.get("block") or coop_block(py_func)
    for sig in signatures or ():
        _core.Dispatcher.compile(kernel, sig, block, until_launch=True)
    return kernel


def jit(func_or_sig=None, device=False, **options):
    """Compiles a Python function for the GPU (numba.cuda.jit).

    ``@jit`` compiles lazily, once per argument type signature, at the first
    launch with those types. ``@jit("void(float32, float32[:])")`` or
    ``@jit([sig, ...])`` compiles the given signatures now (no GPU needed) and
    converts launch arguments to them. ``@jit(device=True)`` makes a device
    function, callable from kernels. Options: fastmath, debug, lineinfo, opt,
    cache, fast_compile (and numba's others, accepted); ``block=(256,)`` gives the launch
    block shape eager signatures of kernels with block algorithms
    (``cuda.block.*``, ``cuda.warp.*``) are compiled for (a launch with another
    shape compiles another specialisation).

    ``cache=True`` keeps compiled kernels on disk (``$CUDAJIT_CACHE_DIR``,
    default ``~/.cache/cudajit``) keyed by everything that changes the code;
    ``python -m cudajit warm`` fills it ahead of time. See docs/caching.md.

    ``fast_compile="min" | "mid" | "max"`` passes libNVVM's and ptxas's
    ``-Ofast-compile`` level: a faster first compile for less optimised
    code ($CUDAJIT_FAST_COMPILE sets it for every kernel).

    ``backend="llvm"`` compiles through LLVM's NVPTX back end (LLVM's
    optimiser and code generator, libdevice linked as bitcode) instead of
    libNVVM, the default; $CUDAJIT_BACKEND=llvm sets it for every kernel
    that does not name one. See docs/backends.md.

    ``launch_bounds=256`` or ``(256, 2)`` or ``(256, 2, 4)``, as numba-cuda:
    the most threads a launch of the kernel may have (PTX ``.maxntid``, so
    ptxas may give each thread more registers), the fewest blocks an SM
    should hold at once (``.minnctapersm``), the most blocks of a cluster
    (``.maxclusterrank``). A launch with more threads fails with the
    driver's error.

    ``shared_memory_carveout="MaxShared" | "MaxL1" | "default"`` or a
    percentage 0..100 (-1: the default), as numba-cuda: how much of the
    unified L1/shared memory the kernel prefers as shared memory (set on
    each loaded kernel; only a preference, on GPUs with a unified L1).

    ``extensions=[obj, ...]``, as numba-cuda: before each launch every
    argument goes through ``obj.prepare_args(ty, val, stream=stream,
    retr=retr)`` of each object, the last first, which returns the ``(ty,
    val)`` the next one (and then the launch) takes; ``ty`` is the type the
    launch gives the value in numba's spelling (``"float64[::1]"``, None for
    an object a launch cannot take), ``retr`` a list of functions called
    after the launch. ``kernel.extensions`` is the list (append to it).
    """
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"jit() got unknown option(s): {', '.join(sorted(unknown))}")
    _carveout(options.get("shared_memory_carveout"))   # bad values fail at the decorator, as numba's
    if func_or_sig is None:
        return lambda f: _make(f, None, device, options)
    if _is_python_function(func_or_sig):
        return _make(func_or_sig, None, device, options)
    if isinstance(func_or_sig, (Dispatcher, DeviceFunction)):
        raise TypeError("jit() was applied twice to the same function")
    _refuse_tile_kernel(func_or_sig)
    signatures = list(func_or_sig) if isinstance(func_or_sig, list) else [func_or_sig]

    def decorate(f):
        if not _is_python_function(f):
            raise TypeError(f"jit() decorates Python functions, not {type(f).__name__}")
        return _make(f, signatures, device, options)

    return decorate


def _arch_number(cc, arch):
    if cc is not None:
        major, minor = cc
        return int(major) * 10 + int(minor)
    text = str(arch)
    for prefix in ("sm_", "compute_"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return int(text.rstrip("a").rstrip("f"))


def _aot_link_files(pyfunc, link, who):
    """compile_ptx / compile_cubin's files to link: those given, then those of
    a kernel made by @jit(link=...)."""
    from .foreign import link_paths
    return link_paths(link, who) + list(getattr(pyfunc, "_options", {}).get("link", []))


def _py_func(pyfunc):
    if isinstance(pyfunc, (Dispatcher, DeviceFunction)):
        return pyfunc.py_func
    return pyfunc


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False, cc=None,
                opt=True, arch="sm_90", block=None, fast_compile=None, constants=None, backend=None,
                link=None, launch_bounds=None, abi=None, abi_info=None):
    """Compiles ``pyfunc`` for one signature to PTX without a GPU.

    Returns ``(ptx, return_type)``; the return type is numba's spelling
    ("none" for kernels). ``cc=(9, 0)`` or ``arch="sm_90"`` picks the target.
    ``device=True`` compiles a device function (a ``.func``). Kernels that use
    block algorithms (``cuda.block.*``, ``cuda.warp.*``) need the launch block
    shape, ``block=(256,)``; their PTX is the linked result (the CUB
    instantiations included, after link-time optimisation). A
    ``@cudajit.tile.kernel`` takes the values of its ``Constant`` parameters
    as ``constants={"TILE": 128}``. ``link=[...]``: files linked in (foreign
    device functions, ``declare_device``; from CUDA C++ or LTO-IR alone the
    PTX is the linked result). ``backend="llvm"`` compiles through
    LLVM's NVPTX back end instead of libNVVM (default: $CUDAJIT_BACKEND, else
    "nvvm"); its PTX of a kernel with block algorithms is the kernel's own,
    their calls extern (nvJitLink links them when it makes the cubin).
    """
    if getattr(pyfunc, "_cudajit_tile_kernel_", False):
        return pyfunc.compile_ptx(sig, constants=constants, cc=cc, arch=arch, backend=backend), "none"
    name = _abi_name(abi, abi_info, device, "compile_ptx")
    files = _aot_link_files(pyfunc, link, "compile_ptx")
    ptx, _, resty, _ = _core.compile_aot(_py_func(pyfunc), sig, device=device, want_cubin=False,
                                         fastmath=fastmath, arch=_arch_number(cc, arch),
                                         opt=_opt_level(opt), lineinfo=lineinfo, debug=debug,
                                         block=block, fast_compile=_fast_compile(fast_compile),
                                         backend=_backend(backend), link=files, launch_bounds=launch_bounds,
                                         name=name)
    return ptx, resty


def _abi_name(abi, abi_info, device, what):
    """numba's abi= / abi_info= of compile and compile_ptx: device functions
    get the C ABI (``T name(args...)``, named by their Python name or
    ``abi_info={"abi_name": ...}``); kernels need abi="numba" (or none
    given). The name to export, "" for the Python name."""
    if abi not in (None, "c", "numba"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    if abi == "numba" and device:
        raise NotImplementedError("abi='numba' for device functions (a status return and the result through "
                                  "a pointer) is not supported by cudajit: use abi='c'")
    if not abi_info:
        return ""
    unknown = set(abi_info) - {"abi_name"}
    if unknown:
        raise ValueError(f"{what}: abi_info has unknown key(s) {sorted(unknown)}; cudajit reads 'abi_name'")
    return str(abi_info.get("abi_name") or "")


def compile_cubin(pyfunc, sig, debug=False, lineinfo=False, fastmath=False, cc=None, opt=True,
                  arch="sm_90", block=None, fast_compile=None, backend=None, link=None, launch_bounds=None):
    """Compiles a kernel for one signature to a cubin (ELF bytes) without a
    GPU, for ahead-of-time use (``cuModuleLoadData``). Returns
    ``(cubin, symbol)``: the kernel's entry name in the cubin. ``block=(256,)``
    gives the launch block shape of kernels that use block algorithms;
    ``link=[...]`` files to link in (as ``jit(link=...)``; a kernel made by
    ``@jit(link=...)`` brings its own)."""
    files = _aot_link_files(pyfunc, link, "compile_cubin")
    _, cubin, _, symbol = _core.compile_aot(_py_func(pyfunc), sig, device=False, want_cubin=True,
                                            fastmath=fastmath, arch=_arch_number(cc, arch),
                                            opt=_opt_level(opt), lineinfo=lineinfo, debug=debug,
                                            block=block, fast_compile=_fast_compile(fast_compile),
                                            backend=_backend(backend), link=files,
                                            launch_bounds=launch_bounds)
    return cubin, symbol


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None, opt=None,
            abi="c", abi_info=None, output="ptx", forceinline=False, launch_bounds=None):
    """numba.cuda.compile: a Python function compiled for other code to call
    or link, without a GPU. Returns ``(code, return_type)``: ``code`` is PTX
    (str) for ``output="ptx"``, LTO-IR (bytes, for nvJitLink) for
    ``output="ltoir"``. Device functions (the default) get the C ABI,
    ``T name(args...)``, named by their Python name or ``abi_info={"abi_name":
    "..."}``; kernels (``device=False``) need ``abi="numba"``, as in numba.
    The LTO-IR is the function's own: block algorithms or foreign functions
    it calls are left for the caller's link."""
    if abi is None:
        raise NotImplementedError("Unsupported ABI: None")
    name = _abi_name(abi, abi_info, device, "compile")
    if output not in ("ptx", "ltoir"):
        raise NotImplementedError(f"Unsupported output type: {output}")
    ptx, ltoir, resty, _ = _core.compile_aot(_py_func(pyfunc), sig, device=device, want_cubin=False,
                                             fastmath=fastmath, arch=_arch_number(cc, "sm_90"),
                                             opt=_opt_level(True if opt is None else opt), lineinfo=lineinfo,
                                             debug=bool(debug), want_ltoir=output == "ltoir", name=name)
    return (ltoir if output == "ltoir" else ptx), resty


def _current_cc():
    from .device import get_current_device
    return get_current_device().compute_capability


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, opt=None,
                               abi="c", abi_info=None, output="ptx", forceinline=False, launch_bounds=None):
    """``compile`` for the compute capability of the current device (needs a GPU)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device, fastmath=fastmath,
                   cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info, output=output)


def compile_ptx_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False, opt=True,
                                   abi=None, abi_info=None):
    """``compile_ptx`` for the compute capability of the current device (needs a GPU)."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device, fastmath=fastmath,
                       cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info)
