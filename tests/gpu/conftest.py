"""GPU tests: skipped, with the reason, where no CUDA driver or device is usable."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: kernel_cases

_skip_reason = []


def gpu_skip_reason():
    """None when kernels can be launched here, else why not (computed once)."""
    if not _skip_reason:
        _skip_reason.append(_probe())
    return _skip_reason[0]


def _probe():
    import numpy as np

    import cudajit
    from cudajit.errors import CudaSupportError

    try:
        if hasattr(cudajit, "is_available") and not cudajit.is_available():
            return "no usable CUDA driver/GPU (cudajit.is_available() is False)"
        cudajit.to_device(np.arange(4, dtype=np.float32)).copy_to_host()
    except CudaSupportError as e:
        return f"no usable CUDA driver/GPU: {e}"
    return None


@pytest.fixture(autouse=True)
def _require_gpu(request):
    if request.node.get_closest_marker("gpu") is not None:
        reason = gpu_skip_reason()
        if reason:
            pytest.skip(reason)
