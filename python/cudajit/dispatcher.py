"""Kernel and device-function objects returned by ``@cudajit.jit``.

The kernel dispatcher is C++ (``_core.Dispatcher``): ``kernel[grid, block]``
is a C slot (which this subclass inherits) and the call that follows is a
vectorcall into the runtime, so a launch runs no Python code of cudajit.
This subclass only adds the function's name, docstring and repr.
"""

import functools

from . import _core, _pickle
from .errors import DeviceOnlyError


def _has_block(key):
    return len(key) == 2 and isinstance(key[0], tuple)


class SignatureDict(dict):
    """``inspect_ir()`` / ``inspect_nvvm()`` / ``inspect_ptx()`` without a
    signature, ``overloads`` and ``stats``: ``{signature: value}`` (numba's
    convention). A kernel specialised on its launch block shape (block
    algorithms) is keyed ``(types, (x, y, z))``; its types alone find it while
    one block shape is compiled. Printed, it shows each text under a header
    line naming its signature."""

    def __missing__(self, key):
        hits = [v for k, v in self.items() if _has_block(k) and k[0] == tuple(key)]
        if len(hits) == 1:
            return hits[0]
        raise KeyError(key)

    def __str__(self):
        parts = []
        for sig, text in self.items():
            if _has_block(sig):
                parts.append(f"--- ({', '.join(sig[0])}) block={sig[1]} ---")
            else:
                parts.append(f"--- ({', '.join(sig)}) ---")
            parts.append(str(text).rstrip("\n"))
        return "\n".join(parts) + ("\n" if parts else "")


class Dispatcher(_core.Dispatcher):
    """A ``@cudajit.jit`` kernel.

    Launch it as ``kernel[blocks, threads](*args)`` or
    ``kernel[blocks, threads, stream, dynamic_shared_bytes](*args)``. It is
    compiled once per argument type signature (or only for the signatures
    given to ``@jit``). ``signatures``, ``overloads`` and ``stats`` describe
    what was compiled; ``inspect_ir``, ``inspect_nvvm`` and ``inspect_ptx``
    show each stage's output.
    """

    def __init__(self, py_func, fastmath=False, debug=False, lineinfo=False, opt=3, cache=False,
                 fast_compile="", backend="", link=(), launch_bounds=None, shared_memory_carveout=None):
        from .decorators import _carveout
        carveout = _carveout(shared_memory_carveout)
        super().__init__(py_func, fastmath=fastmath, debug=debug, lineinfo=lineinfo, opt=opt,
                         cache=cache, fast_compile=fast_compile, backend=backend, link=list(link),
                         launch_bounds=launch_bounds,
                         shared_memory_carveout=-2 if carveout is None else carveout)
        functools.update_wrapper(self, py_func, updated=())

    def __repr__(self):
        return f"<cudajit kernel {self.py_func.__qualname__}>"

    def inspect_types(self, file=None, signature=None, pretty=False):
        """numba's inspect_types(): prints, per compiled signature, the
        kernel's source with the typed IR instructions each line became
        (every instruction carries its line), to ``file`` (default stdout).
        ``pretty`` (numba's notebook HTML) gives the same text."""
        import inspect as _inspect
        import re
        import sys
        out = file if file is not None else sys.stdout
        try:
            source, first = _inspect.getsourcelines(self.py_func)
            path = _inspect.getsourcefile(self.py_func) or "<unknown>"
        except (OSError, TypeError):
            source, first, path = [], 0, "<unknown>"
        irs = self.inspect_ir() if signature is None else {tuple(signature): self.inspect_ir(signature)}
        located = re.compile(r"^\s+(.*?)\s+@(\d+):\d+(.*)$")   # "  v3:i64 = cast v2  @5:9 [i]"
        for sig, text in irs.items():
            by_line = {}
            for ln in str(text).splitlines():
                m = located.match(ln)
                if m:
                    by_line.setdefault(int(m.group(2)), []).append((m.group(1) + m.group(3)).rstrip())
            types = sig[0] if _has_block(sig) else sig
            print(f"{self.py_func.__name__} ({', '.join(types)})", file=out)
            print("-" * 80, file=out)
            print(f"# File: {path}", file=out)
            # every source line, and the lines instructions name where the source is gone
            for lineno in sorted(set(range(first, first + len(source))) | set(by_line)):
                print(f"# --- LINE {lineno} --- ", file=out)
                if first <= lineno < first + len(source):
                    print(source[lineno - first].rstrip("\n"), file=out)
                for instr in by_line.get(lineno, ()):
                    print(f"#   {instr}", file=out)
            print("=" * 80, file=out)

    def __reduce__(self):
        # _make records the decorator's options and signatures; a Dispatcher
        # made directly has only its resolved options.
        options = getattr(self, "_jit_options", None)
        if options is None:
            options = self._options
        return _pickle.reduce(self, (_pickle.rebuild_jit, (
            self.py_func, options, getattr(self, "_jit_signatures", None), False)))

    def inspect_sass(self, signature=None):
        """numba's ``inspect_sass``: the SASS of the compiled overload for
        ``signature`` (its argument types, as ``signatures`` lists them), or
        ``{signature: sass}`` of every overload; disassembled by NVIDIA's
        nvdisasm (the toolkit's, or the ``nvidia-cuda-nvdisasm`` wheel's)."""
        from ._nvdisasm import disassemble
        overloads = self.overloads
        if signature is not None:
            key = tuple(signature) if isinstance(signature, (tuple, list)) else (signature,)
            try:
                overload = overloads[key]
            except KeyError:
                raise KeyError(f"inspect_sass: no overload compiled for {key}; compiled: "
                               f"{list(overloads.keys())}") from None
            return disassemble(overload.cubin)
        return SignatureDict((sig, disassemble(o.cubin)) for sig, o in overloads.items())

    def specialize(self, *args):
        """numba's ``kernel.specialize(*args)``: a kernel compiled now for the
        types of ``args`` (arrays, scalars, as a launch would type them),
        with this kernel's options; launches convert to that one signature."""
        from .decorators import jit
        options = dict(getattr(self, "_jit_options", None) or self._options)
        options.pop("block", None)
        options["extensions"] = list(self.extensions)   # those appended since the decorator too
        kernel = jit(self._arg_signature(*args), **options)(self.py_func)
        kernel._specialized = True
        return kernel

    @property
    def specialized(self):
        """True for a kernel made by specialize() (numba's attribute)."""
        return getattr(self, "_specialized", False)

    def compile(self, signature, block=None):
        """Compiles one signature now (no GPU needed); block=(256,) for kernels
        specialised on their launch block. Returns the overload's signature
        key (a tuple); as numba's _Kernel, it also answers
        ``.library.get_cufunc()`` (the CUfunction on the current device, in
        ``.handle`` a ctypes.c_void_p), which nvmath's examples hand to
        cuda-bindings (cuFuncSetAttribute) and to
        ``current_context().get_active_blocks_per_multiprocessor``."""
        if block is None:
            block = coop_block(self.py_func)
        return CompiledKey(super().compile(signature, block), self)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A 1-d launch over ``ntasks`` threads (numba's forall): for kernels
        whose thread ``cuda.grid(1)`` does task i and skips i >= ntasks.
        Without ``tpb`` the block size is the driver's occupancy
        calculator's choice for the compiled kernel."""
        return ForAll(self, ntasks, tpb, stream, sharedmem)


class CompiledKey(tuple):
    """What ``kernel.compile(sig)`` returns: the signature key, and numba's
    ``_Kernel.library`` beside it."""

    def __new__(cls, key, kernel):
        self = super().__new__(cls, key)
        self._kernel = kernel
        return self

    @property
    def library(self):
        return _Library(self._kernel.overloads[tuple(self)])


class _Library:
    """numba's CUDACodeLibrary, as far as get_cufunc() goes."""

    def __init__(self, overload):
        self._overload = overload

    def get_cufunc(self):
        return CuFunction(self._overload)


class CuFunction:
    """numba's CUDA function object: ``handle`` is the CUfunction (loaded on
    the current device), as a ctypes.c_void_p as numba's ctypes binding
    gives it."""

    def __init__(self, overload):
        import ctypes
        self.overload = overload
        self.handle = ctypes.c_void_p(overload._function_handle())


class ForAll:
    """``kernel.forall(ntasks, tpb, stream, sharedmem)``: call it with the
    kernel's arguments."""

    def __init__(self, dispatcher, ntasks, tpb=0, stream=0, sharedmem=0):
        if ntasks < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        self.dispatcher = dispatcher
        self.ntasks = ntasks
        self.thread_per_block = tpb
        self.stream = stream
        self.sharedmem = sharedmem

    def __call__(self, *args):
        if self.ntasks == 0:
            return
        tpb = self.thread_per_block or self.dispatcher._suggest_block_size(self.sharedmem, *args)
        blocks = (self.ntasks + tpb - 1) // tpb
        if self.sharedmem or (self.stream is not None and not (isinstance(self.stream, int)
                                                                and self.stream == 0)):
            return self.dispatcher[blocks, tpb, self.stream, self.sharedmem](*args)
        return self.dispatcher[blocks, tpb](*args)


def coop_block(py_func):
    """The block shape the cudajit.coop primitives a kernel names fix
    (numba-cuda's cuda.coop: coop.block.reduce(dtype, 256, op)), for
    compiling it before a launch gives one; None when it names none (or
    primitives that disagree). Looks at the kernel's own globals and
    closure, not into the device functions it calls."""
    code = getattr(py_func, "__code__", None)
    if code is None:
        return None
    seen = [py_func.__globals__.get(name) for name in code.co_names]
    seen += [cell.cell_contents for cell in (py_func.__closure__ or ()) if _filled(cell)]
    blocks = {getattr(obj, "_cudajit_coop_block_", None) for obj in seen} - {None}
    return blocks.pop() if len(blocks) == 1 else None


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _signature_text(sig):
    ret, args = _core.signature_types(sig)
    return f"{'void' if ret in (None, 'none') else ret}({', '.join(args)})"


class DeviceFunction:
    """A ``@cudajit.jit(device=True)`` function: callable from kernels and other
    device functions (the decoder compiles its Python function into the
    caller), not from the host."""

    def __init__(self, py_func, signatures=(), options=None):
        self._cudajit_device_py_func_ = py_func
        self.py_func = py_func
        # numba Signature objects (Tuple((int16, int64))(float64)) as the text
        # the decoder reads: "Tuple(int16, int64)(float64)"
        self.signatures = [s if isinstance(s, str) else _signature_text(s) for s in signatures]
        self.options = dict(options or {})
        functools.update_wrapper(self, py_func, updated=())

    def __call__(self, *args, **kwargs):
        raise DeviceOnlyError(
            f"{self.py_func.__qualname__} is a device function (@cudajit.jit(device=True)): "
            "call it from a kernel, not from the host")

    def __repr__(self):
        return f"<cudajit device function {self.py_func.__qualname__}>"

    def __reduce__(self):
        return _pickle.reduce(self, (_pickle.rebuild_jit, (
            self.py_func, self.options, self.signatures or None, True)))
