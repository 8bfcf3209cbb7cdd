"""The examples/ programs launched: each checks its own results against
numpy and exits non-zero on a wrong one."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("name, args", [
    ("segmented_reduction.py", ["--segments", "3000", "--length", "1024", "--runs", "2"]),
    ("fft_convolution.py", ["--size", "256", "--batch", "999"]),
    ("transform_reduce.py", ["--n", "1000003"]),
])
def test_example_runs_and_checks_itself(name, args):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "WRONG" not in out.stdout and "OK" in out.stdout, out.stdout
