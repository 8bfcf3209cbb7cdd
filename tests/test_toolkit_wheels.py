"""The toolkit from NVIDIA's pip wheels (`pip install cudajit[cuda]`), with
no system toolkit in the way: the layout the wheels install
(site-packages/nvidia/cu13/{lib, nvvm/libdevice, include/cccl}) is searched
through sys.path before /usr/local/cuda. CI has no network for the wheels
themselves (170 MB), so the test lays their files out from the system
toolkit under a directory of sys.path and checks that everything is taken
from there: libNVVM, libdevice and nvJitLink (a kernel compiles to a cubin)
and NVRTC with the CCCL headers (a kernel with a CUB block algorithm)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cudajit
from cudajit import _core


def _system_file(*candidates):
    for c in candidates:
        if Path(c).exists():
            return Path(c).resolve()
    pytest.skip(f"no system toolkit file among {candidates}")


def test_the_wheels_layout_is_found_through_sys_path(tmp_path):
    paths = _core.toolchain_paths()
    cuda = Path(paths["libnvvm"]).resolve().parents[1]
    site = tmp_path / "site-packages"
    cu13 = site / "nvidia" / "cu13"
    (cu13 / "lib").mkdir(parents=True)
    (cu13 / "nvvm" / "libdevice").mkdir(parents=True)
    (cu13 / "include").mkdir(parents=True)
    links = {
        cu13 / "lib" / "libnvvm.so.4": Path(paths["libnvvm"]).resolve(),
        cu13 / "lib" / "libnvJitLink.so.13": Path(paths["nvjitlink"]).resolve(),
        cu13 / "nvvm" / "libdevice" / "libdevice.10.bc": Path(paths["libdevice"]).resolve(),
        cu13 / "lib" / "libnvrtc.so.13": _system_file(cuda / "lib64" / "libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13"),
        cu13 / "include" / "cccl": _system_file(cuda / "include" / "cccl", "/usr/local/cuda/include/cccl"),
    }
    for builtins in (cuda / "lib64").glob("libnvrtc-builtins*.so*"):
        links[cu13 / "lib" / builtins.name] = builtins.resolve()
    for link, target in links.items():
        link.symlink_to(target)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(site)!r})
        import cudajit as cuda
        from cudajit import _core

        @cuda.jit("void(float32[::1], float32[::1])")
        def scale(x, y):
            i = cuda.grid(1)
            if i < x.size:
                y[i] = x[i] * 2.0

        @cuda.jit("void(int32[::1], int32[::1])", block=(128,))
        def block_sum(x, out):
            s = cuda.block.sum(x[cuda.threadIdx.x])
            if cuda.threadIdx.x == 0:
                out[0] = s

        assert scale.overloads[("float32[::1]", "float32[::1]")].cubin[:4] == b"\\x7fELF"
        assert block_sum.overloads[("int32[::1]", "int32[::1]")].cubin[:4] == b"\\x7fELF"
        for what, path in sorted(_core.toolchain_paths().items()):
            print(what, path)
        print("cub", _core.cub_toolchain())
    """)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_HOME", "CUDA_PATH", "CUDAJIT_LIBNVVM", "CUDAJIT_NVJITLINK", "CUDAJIT_LIBDEVICE",
                        "CUDAJIT_CCCL_INCLUDE", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(Path(cudajit.__file__).resolve().parents[1])
    env["CUDAJIT_CACHE_DIR"] = str(tmp_path / "cache")   # nothing from earlier CUB builds
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    found = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    cub = found.pop("cub")
    assert set(found) == {"libnvvm", "libdevice", "nvjitlink"}, found
    for what, path in found.items():
        assert path.startswith(str(cu13)), (what, path)
    # NVRTC and the CCCL headers the block algorithm was instantiated with
    assert f"({cu13}/lib/libnvrtc.so.13)" in cub and f"CCCL headers {cu13}/include/cccl" in cub, cub
