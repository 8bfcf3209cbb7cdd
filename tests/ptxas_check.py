"""ptxas, the toolkit's PTX assembler: CI's proof (no GPU) that the PTX
cudajit emits is valid for the target. One lookup for every test file."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest


def find_ptxas():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "bin" / "ptxas").is_file():
            return str(Path(root) / "bin" / "ptxas")
    if Path("/usr/local/cuda/bin/ptxas").is_file():
        return "/usr/local/cuda/bin/ptxas"
    return shutil.which("ptxas")


PTXAS = find_ptxas()


def assemble(ptx, tmp_path, arch="sm_90", name="k", what="the PTX", options=()):
    """Assembles `ptx` for `arch` with ptxas's extra `options` (skips the test
    without ptxas); fails with ptxas's messages and the PTX when it is
    rejected. Returns the output's path."""
    return assemble_with_messages(ptx, tmp_path, arch, name, what, options)[0]


def assemble_with_messages(ptx, tmp_path, arch="sm_90", name="k", what="the PTX", options=()):
    """assemble(), also returning what ptxas printed (its advisories, -v's
    resource usage)."""
    if PTXAS is None:
        pytest.skip("ptxas not found (CUDA_HOME, CUDA_PATH, /usr/local/cuda/bin, PATH)")
    src = tmp_path / f"{name}.ptx"
    src.write_text(ptx)
    out = tmp_path / f"{name}.cubin"
    r = subprocess.run([PTXAS, f"-arch={arch}", *options, str(src), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"ptxas rejected {what}:\n{r.stderr}\n--- PTX ---\n{ptx}"
    return out, r.stderr
