"""``cudajit.In``, ``Out``, ``InOut`` (numba's): wrap a host array argument to
say which way the launch copies it. A plain numpy argument is copied to the
device and back (``InOut``); ``In(x)`` only copies it there, ``Out(x)`` only
back (the device buffer starts uninitialised). Device arrays and other
libraries' GPU arrays are passed as they are whatever the wrapper. The C++
launch path (runtime/args.cpp) reads the class's ``_cudajit_copy_``."""


class ArgHint:
    _cudajit_copy_ = "inout"

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"{type(self).__name__}({self.value!r})"


class In(ArgHint):
    """Copied to the device before the launch, not back."""
    _cudajit_copy_ = "in"


class Out(ArgHint):
    """Copied back to the host after the launch, not to the device before."""
    _cudajit_copy_ = "out"


class InOut(ArgHint):
    """Copied both ways (what a plain numpy argument gets)."""
    _cudajit_copy_ = "inout"
