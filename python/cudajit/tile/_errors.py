"""The errors of the tile API, in one place so that every message reads alike."""

from ..errors import DeviceOnlyError


def device_only(symbol):
    """The error for a tile operation called on the host."""
    return DeviceOnlyError(
        f"{symbol} can only be used in tile code (inside a @cudajit.tile.kernel), "
        "not called from the host")


# cuTile's exception names (cuda.tile.TileTypeError & co), so that a ported
# `except ct.TileTypeError:` catches what cudajit raises. cudajit reports every
# problem of a kernel's source (syntax, types, values, unsupported features, a
# failed static_assert) as one CompileError with the file and line, and the
# toolchain's failures as ToolchainError: the names below are those classes,
# so each catches all of its kind rather than cuTile's finer split. cudajit
# has no compiler timeout (compiler_timeout is accepted without effect):
# TileCompilerTimeoutError is a class of its own that nothing raises.
from ..errors import CompileError, ToolchainError  # noqa: E402

TileSyntaxError = CompileError
TileTypeError = CompileError
TileValueError = CompileError
TileUnsupportedFeatureError = CompileError
TileStaticAssertionError = CompileError
TileCompilerExecutionError = ToolchainError


class TileCompilerTimeoutError(ToolchainError):
    """cuTile's error for a compile past compiler_timeout; cudajit never raises it."""


ERROR_NAMES = ("TileSyntaxError", "TileTypeError", "TileValueError", "TileUnsupportedFeatureError",
               "TileStaticAssertionError", "TileCompilerExecutionError", "TileCompilerTimeoutError")
