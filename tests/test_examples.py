"""The examples/ programs run where there is no GPU: each compiles its
kernels ahead of time instead of launching them (tests/gpu/test_examples_gpu.py
launches them)."""
import os
import subprocess
import sys

import pytest

import cudajit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name, *args):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.skipif(cudajit.is_available(), reason="a GPU is usable: tests/gpu/test_examples_gpu.py launches it")
def test_segmented_reduction_compiles_every_form():
    text = run_example("segmented_reduction.py", "--length", "256")
    for kernel in ("segment_sums_simt", "segment_sums:"):
        assert kernel in text
    try:
        cudajit._core.mathdx_library()
    except ImportError:
        assert "mathdx form skipped" in text
    else:
        assert "segment_sums_matvec: PTX" in text   # the cuBLASDx mat-vec form
        assert "segment_sums_matvec_stream: PTX" in text and " 0 cp.async" not in text   # its stream form
