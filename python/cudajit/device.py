"""The GPU and its driver, as numba.cuda shows them: availability, devices
(``get_current_device()``, ``gpus``, ``select_device``), contexts
(``current_context().get_memory_info()``), streams, events, profiling.

Everything here calls the C++ runtime (``cudajit._core``); these classes only
give its answers numba's shapes. Without a usable driver each call raises
``CudaSupportError`` (``is_available()`` and ``close()`` never raise).
"""

import collections
import contextlib
import sys
import threading

from . import _core

MemoryInfo = collections.namedtuple("MemoryInfo", "free,total")
Event = _core.Event


def is_available():
    """True when a CUDA driver and a GPU can be used (never raises)."""
    return _core.is_available()


def synchronize():
    """Waits for all work on the current device."""
    _core.synchronize()


# ---- devices ------------------------------------------------------------------

_NO_RESET = ("{what} is not supported by cudajit: it keeps each device's primary context, and the "
             "kernels loaded into it, for the life of the process; device memory is freed when its "
             "arrays are garbage collected (docs/host_api.md, 'Devices and contexts')")


class Device:
    """One GPU (numba's Device): ``id``, ``name``, ``compute_capability``,
    ``uuid``, and every ``CU_DEVICE_ATTRIBUTE_*`` of cuda.h by its name
    without the prefix (``MAX_THREADS_PER_BLOCK``, ``MULTIPROCESSOR_COUNT``,
    ``WARP_SIZE``, ...), read from the driver on first use."""

    def __init__(self, ordinal):
        info = _core.device_info(ordinal)
        self._info = info
        self.id = info["id"]
        self.name = info["name"]
        self.compute_capability = tuple(info["compute_capability"])

    def __getattr__(self, name):
        if not name.isupper():   # numba's attribute names are upper case
            raise AttributeError(f"'Device' object has no attribute {name!r}")
        value = _core.device_attribute(self.id, name)
        setattr(self, name, value)
        return value

    def __getitem__(self, key):
        """The properties by cudajit's older dict keys (``d["compute_capability"]``)."""
        return self._info[key]

    @property
    def uuid(self):
        return _core.device_uuid(self.id)

    def reset(self):
        """numba's Device.reset() destroys the device's primary context and all
        its memory (cuDevicePrimaryCtxReset); cudajit does not."""
        raise NotImplementedError(_NO_RESET.format(what="Device.reset()"))

    @property
    def supports_float16(self):
        return self.compute_capability >= (5, 3)

    @property
    def supports_bfloat16(self):
        return self.compute_capability >= (8, 0)

    @property
    def supports_fp8(self):
        return self.compute_capability >= (8, 9)

    def get_primary_context(self):
        return Context(self)

    def get_device_identity(self):
        return {"pci_domain_id": self.PCI_DOMAIN_ID, "pci_bus_id": self.PCI_BUS_ID,
                "pci_device_id": self.PCI_DEVICE_ID}

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA device {self.id:d} '{self.name}'>"


@contextlib.contextmanager
def _on_device(ordinal):
    """Makes ``ordinal`` the calling thread's device for a block."""
    previous = _core.current_device()
    if previous != ordinal:
        _core.select_device(ordinal)
    try:
        yield
    finally:
        if previous != ordinal:
            _core.select_device(previous)


class _DeviceContextManager:
    """``cuda.gpus[i]``: the device, and a ``with`` block that works on it
    (the previous device is current again afterwards)."""

    def __init__(self, ordinal):
        self._ordinal = ordinal
        self._device = None
        self._tls = threading.local()   # each thread's stack of devices to go back to

    @property
    def _dev(self):
        if self._device is None:
            self._device = Device(self._ordinal)
        return self._device

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._dev, name)

    def __getitem__(self, key):
        return self._dev[key]

    def __eq__(self, other):
        other_id = getattr(other, "id", None)
        return other_id == self._ordinal and isinstance(other, (Device, _DeviceContextManager))

    def __hash__(self):
        return hash(self._ordinal)

    def __enter__(self):
        stack = self._tls.__dict__.setdefault("previous", [])
        stack.append(_core.current_device())
        _core.select_device(self._ordinal)
        return self._dev

    def __exit__(self, *exc):
        _core.select_device(self._tls.previous.pop())
        return False

    def __repr__(self):
        return f"<Managed Device {self._ordinal}>"


class _DeviceList:
    """``cuda.gpus``: every GPU, each a ``with``-able device."""

    def __init__(self):
        self._items = None

    @property
    def _list(self):
        if self._items is None:
            self._items = [_DeviceContextManager(i) for i in range(_core.device_count())]
        return self._items

    def __getitem__(self, index):
        if not isinstance(index, (int, slice)):
            index = int(index)
        return self._list[index]

    def __iter__(self):
        return iter(self._list)

    def __len__(self):
        return len(self._list)

    @property
    def current(self):
        """The calling thread's device."""
        return self._list[_core.current_device()]

    def __str__(self):
        return ", ".join(str(d) for d in self._list)


gpus = _DeviceList()


def select_device(device_id):
    """Makes ``device_id`` the current device of the calling thread; returns it."""
    _core.select_device(device_id)
    return Device(device_id)


def get_current_device():
    """The calling thread's device (a ``Device``)."""
    return Device(_core.current_device())


def list_devices():
    """Every device (``cuda.gpus``)."""
    return gpus


# ---- contexts -------------------------------------------------------------------


class Context:
    """A device's primary context (numba's Context): memory information,
    synchronisation, and its streams and events. cudajit keeps one primary
    context per device for the life of the process."""

    def __init__(self, device):
        self.device = device

    def get_memory_info(self):
        """(free, total) bytes of device memory."""
        with _on_device(self.device.id):
            return MemoryInfo(*_core.memory_info())

    def get_active_blocks_per_multiprocessor(self, func, blocksize, memsize, flags=None):
        """numba's: blocks of ``blocksize`` threads and ``memsize`` bytes of
        dynamic shared memory one SM holds at once, for ``func`` (what
        ``kernel.compile(sig).library.get_cufunc()`` gives)."""
        overload = getattr(func, "overload", None)
        if overload is None:
            raise TypeError("get_active_blocks_per_multiprocessor takes kernel.compile(sig).library.get_cufunc()")
        with _on_device(self.device.id):
            return overload._active_blocks_per_multiprocessor(int(blocksize), int(memsize))

    def synchronize(self):
        with _on_device(self.device.id):
            _core.synchronize()

    def push(self):
        """numba's Context.push(): makes this context (its device) current on
        the calling thread until the matching pop(); pushes nest."""
        stack = _pushed_contexts()
        stack.append((self, _core.current_device()))
        _core.select_device(self.device.id)

    def pop(self):
        """Undoes this context's push(): the thread's previous device is
        current again. It must be the last context pushed on this thread."""
        stack = _pushed_contexts()
        if not stack or stack[-1][0] != self:
            raise RuntimeError(f"Context.pop(): {self!r} is not the last context pushed on this thread")
        _, previous = stack.pop()
        _core.select_device(previous)

    def reset(self):
        """numba's Context.reset() frees every allocation and module of the
        context at once; cudajit does not."""
        raise NotImplementedError(_NO_RESET.format(what="Context.reset()"))

    def create_stream(self):
        with _on_device(self.device.id):
            return _core.stream(False)

    def create_external_stream(self, ptr):
        return _core.external_stream(ptr)

    def create_event(self, timing=True):
        with _on_device(self.device.id):
            return _core.Event(timing)

    def get_default_stream(self):
        return _core.default_stream()

    def get_legacy_default_stream(self):
        return _core.legacy_default_stream()

    def get_per_thread_default_stream(self):
        return _core.per_thread_default_stream()

    def __eq__(self, other):
        return isinstance(other, Context) and other.device == self.device

    def __hash__(self):
        return hash(self.device)

    def __repr__(self):
        return f"<CUDA context of device {self.device.id}>"


_push_state = threading.local()


def _pushed_contexts():
    stack = getattr(_push_state, "stack", None)
    if stack is None:
        stack = _push_state.stack = []
    return stack


def require_context(fn):
    """numba's decorator: ``fn`` runs with the current device's primary
    context current on the calling thread (made current first if need be)."""
    import functools

    @functools.wraps(fn)
    def with_context(*args, **kwargs):
        _core.select_device(_core.current_device())   # retains / makes current the primary context
        return fn(*args, **kwargs)

    return with_context


def current_context(devnum=None):
    """The primary context of ``devnum`` (default: the current device)."""
    ordinal = _core.current_device() if devnum is None else devnum
    device = Device(ordinal)
    with _on_device(ordinal):
        _core.memory_info()   # makes the context current (and creates it) now, as numba does
    return Context(device)


def close():
    """Waits for the work of every device cudajit used. cudajit keeps its
    primary contexts (and loaded kernels) for the life of the process, so
    unlike numba nothing is torn down: device arrays free their memory when
    they are garbage collected."""
    if _core.is_available():
        _core.synchronize_all_devices()


# ---- streams and events ------------------------------------------------------------


def stream(non_blocking=False):
    """A new CUDA stream on the current device (numba.cuda.stream)."""
    return _core.stream(non_blocking)


def default_stream():
    """The default stream (handle 0)."""
    return _core.default_stream()


def legacy_default_stream():
    """The legacy default stream (CU_STREAM_LEGACY)."""
    return _core.legacy_default_stream()


def per_thread_default_stream():
    """The per-thread default stream (CU_STREAM_PER_THREAD)."""
    return _core.per_thread_default_stream()


def external_stream(ptr):
    """A stream created elsewhere, by its CUstream handle (an int); not owned."""
    return _core.external_stream(ptr)


def event(timing=True):
    """A CUDA event on the current device; ``timing=False`` events are cheaper
    but cannot be timed."""
    return _core.Event(timing)


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded, completed events."""
    return _core.event_elapsed_time(evtstart, evtend)


# ---- profiling, cleanup, capabilities -------------------------------------------------


def profile_start():
    """Starts the CUDA profiler's collection (Nsight Systems / Compute)."""
    _core.profile_start()


def profile_stop():
    """Stops the CUDA profiler's collection."""
    _core.profile_stop()


@contextlib.contextmanager
def profiling():
    """Profiles the ``with`` block only."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()


@contextlib.contextmanager
def defer_cleanup():
    """numba defers freeing device memory inside this block; cudajit frees
    an allocation when its last array goes away, so there is nothing to defer."""
    yield


def is_float16_supported():
    """float16 works on every GPU cudajit supports."""
    return True


def is_bfloat16_supported():
    """True when the current device has compute capability 8.0 or later."""
    return get_current_device().supports_bfloat16


def is_fp8_supported():
    return get_current_device().supports_fp8


class _Runtime:
    """``cuda.runtime``: cudajit uses no CUDA runtime library; the version is
    the driver's CUDA version (13.0 for a CUDA 13.0 driver)."""

    def get_version(self):
        v = _core.driver_version()
        return (v // 1000, (v % 1000) // 10)

    def is_supported_version(self):
        return True


runtime = _Runtime()


def is_supported_version():
    return True


def detect(file=None):
    """Prints the GPUs found (as numba.cuda.detect does); True if any is usable."""
    out = file or sys.stdout
    if not _core.is_available():
        print(f"CUDA is not available: {_core.unavailable_reason()}", file=out)
        return False
    devices = [Device(i) for i in range(_core.device_count())]
    print(f"Found {len(devices)} CUDA devices (driver {_core.driver_version()}, "
          f"{_core.driver_library()})", file=out)
    for d in devices:
        major, minor = d.compute_capability
        print(f"id {d.id:>4} {d.name:>40} [SUPPORTED]", file=out)
        print(f"{'Compute Capability:':>40} {major}.{minor}", file=out)
        print(f"{'PCI Bus ID:':>40} {d['pci_bus_id']}", file=out)
        print(f"{'UUID:':>40} {d.uuid}", file=out)
        print(f"{'Multiprocessors:':>40} {d['multiprocessors']}", file=out)
        print(f"{'Memory:':>40} {d['total_memory'] / 2**30:.1f} GiB", file=out)
    print(f"Summary:\n\t{len(devices)}/{len(devices)} devices are supported", file=out)
    return True
