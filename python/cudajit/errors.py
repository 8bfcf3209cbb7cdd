"""Exceptions raised by cudajit."""


class CompileError(Exception):
    """A kernel could not be compiled: an unsupported construct, a type
    conflict, a bad signature. Carries the Python source location."""

    def __init__(self, text, file="", line=0, col=0, construct="", message="", hint=""):
        super().__init__(text)
        self.file = file
        self.line = line
        self.col = col
        self.construct = construct
        self.message = message or text
        self.hint = hint


class ToolchainError(RuntimeError):
    """libNVVM, nvJitLink or another part of the CUDA toolkit failed or is missing."""


class CudaSupportError(RuntimeError):
    """No usable CUDA driver or GPU: kernels compile, but cannot be launched."""


class CudaAPIError(RuntimeError):
    """A CUDA driver call returned an error code."""

    def __init__(self, text, code=0, function=""):
        super().__init__(text)
        self.code = code
        self.function = function


class DeviceOnlyError(RuntimeError):
    """A device-only object (cudajit.grid, cudajit.threadIdx.x, ...) was used on
    the host: it means something only inside a @cudajit.jit function."""


class CacheWarning(UserWarning):
    """A disk cache entry was truncated or corrupt (it is ignored and the
    kernel compiled again), or the cache directory cannot be written."""
