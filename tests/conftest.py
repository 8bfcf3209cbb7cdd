"""Shared pytest setup: the `gpu` marker and the driver stand-ins for CI.

Tests marked ``@pytest.mark.gpu`` launch kernels on a real GPU; they skip,
with the reason, where ``cudajit.is_available()`` is false. Everything else
runs in CI (toolkit, no GPU). The ``mock_driver`` fixture builds a fake
libcuda (runtime/testing/mock_libcuda.cpp) so the launch path can be checked
without a GPU, in a subprocess that points CUDAJIT_CUDA_DRIVER at it.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# numba-cuda 0.30 (used by the differential tests) still calls np.row_stack,
# which numpy 2.5 removed; the GPU machine has numpy 2.5.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

# The IR verifier runs before the passes and after every one of them in the
# whole suite (release builds skip it otherwise: compiler/passes/pipeline.h);
# subprocesses inherit it.
os.environ.setdefault("CUDAJIT_VERIFY_IR", "1")

REPO = Path(__file__).resolve().parents[1]
STUB_LIBCUDA = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib" / "stubs" / "libcuda.so"


def _gpu_unavailable_reason():
    try:
        import cudajit
    except ImportError as e:  # the extension is not built: say so instead of a traceback per test
        return f"cudajit cannot be imported ({e})"
    if cudajit.is_available():
        return None
    return "no usable CUDA GPU: " + cudajit._core.unavailable_reason()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: launches kernels; needs a CUDA GPU and driver")


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    reason = _gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in gpu_items:
        item.add_marker(skip)


def _package_dir():
    import cudajit
    return str(Path(cudajit.__file__).resolve().parents[1])


@pytest.fixture(scope="session")
def mock_driver(tmp_path_factory):
    """Path of a fake libcuda built from runtime/testing/mock_libcuda.cpp."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        pytest.skip("no C++ compiler to build the mock CUDA driver")
    out = tmp_path_factory.mktemp("mockcuda") / "libcuda_mock.so"
    src = REPO / "runtime" / "testing" / "mock_libcuda.cpp"
    subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", str(src), "-o", str(out)],
                   check=True, capture_output=True)
    return str(out)


@pytest.fixture
def run_python():
    """run_python(code, driver=None) runs `code` in a fresh interpreter (the
    driver is loaded once per process) with CUDAJIT_CUDA_DRIVER=driver and
    returns its stdout; a non-zero exit fails the test with stderr."""

    def run(code, driver=None, expect_ok=True):
        env = dict(os.environ)
        env["PYTHONPATH"] = _package_dir() + os.pathsep + env.get("PYTHONPATH", "")
        if driver is not None:
            env["CUDAJIT_CUDA_DRIVER"] = driver
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                              capture_output=True, text=True, timeout=300)
        if expect_ok and proc.returncode != 0:
            pytest.fail(f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    return run


@pytest.fixture(scope="module")
def cub_cache(tmp_path_factory):
    """CUB instantiations go to CUDAJIT_TEST_CUB_CACHE, else a fresh directory
    per test module (modules that compile CUB use it: usefixtures)."""
    keep = os.environ.get("CUDAJIT_TEST_CUB_CACHE")
    path = keep or str(tmp_path_factory.mktemp("cub-cache"))
    old = os.environ.get("CUDAJIT_CACHE_DIR")
    os.environ["CUDAJIT_CACHE_DIR"] = path
    yield path
    if old is None:
        os.environ.pop("CUDAJIT_CACHE_DIR", None)
    else:
        os.environ["CUDAJIT_CACHE_DIR"] = old
