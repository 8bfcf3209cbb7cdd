"""The differential fuzzer with GPU execution (issue 15, scripts/fuzz.py
--target gpu): random programs run by a kernel, one thread per argument set,
against CPython; any mismatch or crash fails (its minimised reproducer is
written under the test's temporary directory)."""
import os
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import fuzz  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


@pytest.mark.parametrize("backend", ["nvvm", "llvm"])
def test_fuzz_on_the_gpu(backend, tmp_path, capsys):
    if backend == "llvm":
        from cudajit import _core
        from cudajit.errors import ToolchainError
        try:
            _core.llvm_backend_version()
        except ToolchainError as e:
            pytest.skip(f"this build has no usable LLVM back end ({e})")
    status = fuzz.main(["--seconds", "40", "--seed", str(SEED), "--target", "gpu", "--backend", backend,
                        "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, f"seed {SEED}:\n{out}"
    assert "programs" in out and "mismatch 0, crash 0" in out
