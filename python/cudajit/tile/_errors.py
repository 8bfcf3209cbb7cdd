"""The errors of the tile API, in one place so that every message reads alike."""

from ..errors import DeviceOnlyError


def device_only(symbol):
    """The error for a tile operation called on the host."""
    return DeviceOnlyError(
        f"{symbol} can only be used in tile code (inside a @cudajit.tile.kernel), "
        "not called from the host")
