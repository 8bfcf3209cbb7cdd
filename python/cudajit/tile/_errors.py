"""The errors of the tile API, in one place so that every message reads alike."""

from ..errors import CompileError, DeviceOnlyError


def device_only(symbol):
    """The error for a tile operation called on the host."""
    return DeviceOnlyError(
        f"{symbol} can only be used in tile code (inside a @cudajit.tile.kernel), "
        "not called from the host")


def not_compiled_yet(py_func):
    """The error every tile kernel gets at compile/launch time until the tile
    pipeline exists (issue 11): it names the kernel and where it is defined."""
    code = py_func.__code__
    name = py_func.__qualname__
    text = (f"{code.co_filename}:{code.co_firstlineno}: tile kernel '{name}' cannot be compiled: "
            "cudajit.tile kernels are recognised but not compiled yet (docs/tiles.md lists "
            "what exists); write it as a @cudajit.jit SIMT kernel for now")
    return CompileError(text, file=code.co_filename, line=code.co_firstlineno,
                        construct="cudajit.tile.kernel",
                        message=f"tile kernel '{name}' cannot be compiled yet",
                        hint="tile kernels are not compiled yet: use @cudajit.jit for now")
