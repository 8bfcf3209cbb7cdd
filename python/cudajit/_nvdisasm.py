"""nvdisasm, NVIDIA's SASS disassembler, for ``kernel.inspect_sass()``: found
at run time like the rest of the toolkit (nothing at build time)."""
import os
import shutil
import subprocess
import sys
import tempfile


def find_nvdisasm():
    """The nvdisasm to run: $CUDAJIT_NVDISASM, the toolkit's ($CUDA_HOME,
    $CUDA_PATH, /usr/local/cuda), the nvidia-cuda-nvdisasm wheel's on
    sys.path, else PATH. None when there is none."""
    candidates = []
    if os.environ.get("CUDAJIT_NVDISASM"):
        candidates.append(os.environ["CUDAJIT_NVDISASM"])
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates.append(os.path.join(root, "bin", "nvdisasm"))
    for site in sys.path:
        for sub in ("cu13", "cu12", "cuda_nvdisasm"):
            candidates.append(os.path.join(site or ".", "nvidia", sub, "bin", "nvdisasm"))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("nvdisasm")


def disassemble(cubin):
    """The SASS of a cubin (nvdisasm -c); RuntimeError when nvdisasm is missing or fails."""
    tool = find_nvdisasm()
    if tool is None:
        raise RuntimeError("inspect_sass needs NVIDIA's nvdisasm, which was not found: install the CUDA "
                           "toolkit or `pip install nvidia-cuda-nvdisasm`, or set CUDAJIT_NVDISASM to its path")
    with tempfile.TemporaryDirectory(prefix="cudajit_sass_") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        r = subprocess.run([tool, "-c", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"nvdisasm ({tool}) failed: {r.stderr.strip()[:2000]}")
    return r.stdout
