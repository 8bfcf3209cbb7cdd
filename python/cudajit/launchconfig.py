"""numba.cuda.launchconfig: the launch configuration that made a kernel
compile.

A configured launch (``kernel[griddim, blockdim, stream, sharedmem]``)
has ``griddim``, ``blockdim``, ``stream``, ``sharedmem``, ``dispatcher``,
``args`` (while it launches) and ``pre_launch_callbacks``.
``capture_compile_config(kernel)`` records the configured launch whose
launch compiled the kernel, as numba's does.

numba also exposes the configuration *during* a launch-triggered
compilation, for its Python rewrite passes and compiler extensions.
cudajit compiles in C++ and runs no user Python code meanwhile, so there is
no place to ask from: ``current_launch_config()`` returns None and
``ensure_current_launch_config()`` raises, as numba's do outside a
compilation.
"""

import contextlib


def current_launch_config():
    """The launch configuration of the compilation in progress on this
    thread, or None (always None in cudajit: see the module docstring)."""
    return None


def ensure_current_launch_config():
    """The current launch configuration, or RuntimeError when there is none."""
    config = current_launch_config()
    if config is None:
        raise RuntimeError("No launch config set for this thread")
    return config


@contextlib.contextmanager
def capture_compile_config(dispatcher):
    """Within the block, a launch of ``dispatcher`` that compiles it records
    its configured launch in the yielded dict's ``"config"`` (None while no
    launch compiled: an already compiled kernel leaves it None)."""
    if dispatcher is None:
        raise TypeError("dispatcher is required")
    swap = getattr(dispatcher, "_swap_launch_capture", None)
    if swap is None:
        raise TypeError(f"capture_compile_config takes a @cudajit.jit kernel, not {type(dispatcher).__name__}")
    record = {"config": None}
    previous = swap(record)
    try:
        yield record
    finally:
        swap(previous)


__all__ = ["current_launch_config", "ensure_current_launch_config", "capture_compile_config"]
