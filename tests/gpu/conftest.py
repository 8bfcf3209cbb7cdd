"""tests/gpu: kernels launched on a GPU. Every test here is marked `gpu`;
tests/conftest.py skips them, with the reason, where no GPU is usable."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: kernel_cases
