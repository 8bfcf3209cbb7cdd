"""The numba.cuda conformance suite: >= 200 kernels as data (see _registry.py).

    from conformance import CASES, CASES_BY_NAME

Set CUDAJIT_CONFORMANCE_WITH_NUMBA=1 before importing to bind `cuda` to numba.cuda.
"""
import importlib

from . import _registry

# Each topic module registers its cases on import.
TOPICS = ("arith", "scalars", "mathfuncs", "control", "tuples", "memory", "atomics", "warp",
          "devfuncs")
for _t in TOPICS:
    importlib.import_module(f"{__name__}.{_t}")

CASES = _registry.CASES
CASES_BY_NAME = _registry.by_name()
