"""The GPU and its driver: availability, devices, synchronisation."""

import sys

from . import _core


def is_available():
    """True when a CUDA driver and a GPU can be used (never raises)."""
    return _core.is_available()


def synchronize():
    """Waits for all work on the current device."""
    _core.synchronize()


def select_device(device_id):
    """Makes ``device_id`` the current device of the calling thread."""
    _core.select_device(device_id)


def get_current_device():
    """The current device's properties (a dict: name, compute_capability, ...)."""
    return _core.device_info(_core.current_device())


def list_devices():
    """Every device's properties."""
    return [_core.device_info(i) for i in range(_core.device_count())]


def detect(file=None):
    """Prints the GPUs found (as numba.cuda.detect does); True if any is usable."""
    out = file or sys.stdout
    if not _core.is_available():
        print(f"CUDA is not available: {_core.unavailable_reason()}", file=out)
        return False
    devices = list_devices()
    print(f"Found {len(devices)} CUDA devices (driver {_core.driver_version()}, "
          f"{_core.driver_library()})", file=out)
    for d in devices:
        major, minor = d["compute_capability"]
        print(f"id {d['id']:>4} {d['name']:>40} [SUPPORTED]", file=out)
        print(f"{'Compute Capability:':>40} {major}.{minor}", file=out)
        print(f"{'PCI Bus ID:':>40} {d['pci_bus_id']}", file=out)
        print(f"{'Multiprocessors:':>40} {d['multiprocessors']}", file=out)
        print(f"{'Memory:':>40} {d['total_memory'] / 2**30:.1f} GiB", file=out)
    print(f"Summary:\n\t{len(devices)}/{len(devices)} devices are supported", file=out)
    return True
