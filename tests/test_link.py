"""compiler/link: libNVVM and nvJitLink loaded with dlopen, found at run time.

Runs without a GPU: NVVM IR -> PTX / LTO-IR (libNVVM), inputs -> cubin
(nvJitLink), error reporting with the tools' logs, the library search order.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest

core = pytest.importorskip("cudajit._core")
from cudajit.errors import ToolchainError  # noqa: E402

PTXAS = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
HEADER = '''target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
'''
FOOTER = '''!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 2}
'''

# A kernel calling libdevice and an external device function `scale`
# (defined in another module, as CUB functions are).
KERNEL = HEADER + '''
declare float @scale(float)
declare float @__nv_expf(float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define void @kern(float* %p) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %q = getelementptr float, float* %p, i64 %i
  %x = load float, float* %q
  %e = call float @__nv_expf(float %x)
  %y = call float @scale(float %e)
  %z = fdiv float %y, %x
  store float %z, float* %q
  ret void
}
@llvm.used = appending global [1 x i8*] [i8* bitcast (void (float*)* @kern to i8*)], section "llvm.metadata"
!nvvm.annotations = !{!0}
!0 = !{void (float*)* @kern, !"kernel", i32 1}
''' + FOOTER

SCALE = HEADER + '''
define float @scale(float %x) {
  %y = fmul float %x, 3.0
  ret float %y
}
''' + FOOTER

SELF_CONTAINED = KERNEL.replace("declare float @scale(float)", '''define internal float @scale(float %x) {
  %y = fmul float %x, 3.0
  ret float %y
}''')


def test_toolchain_version_and_paths():
    v = core.toolchain_version()
    assert re.match(r"libNVVM \d+\.\d+ \(IR \d+\.\d+\); nvJitLink \d+\.\d+", v), v
    paths = core.toolchain_paths()
    for key in ("libnvvm", "libdevice", "nvjitlink"):
        assert os.path.isfile(paths[key]), paths
    assert paths["libdevice"].endswith("libdevice.10.bc")


def test_nvvm_to_ptx_links_libdevice_lazily():
    ptx = core.nvvm_to_ptx(SELF_CONTAINED, arch=90)
    assert ptx.startswith("//") and "\0" not in ptx
    assert ".target sm_90" in ptx and ".entry kern(" in ptx
    assert "__nv_expf" not in ptx          # inlined from libdevice
    assert "ex2.approx" in ptx             # what expf becomes
    assert "__nv_sinf" not in ptx          # nothing else of libdevice is pulled in


def test_arch_option_reaches_ptx():
    assert ".target sm_80" in core.nvvm_to_ptx(SELF_CONTAINED, arch=80)


def test_fastmath_changes_code():
    precise = core.nvvm_to_ptx(SELF_CONTAINED)
    fast = core.nvvm_to_ptx(SELF_CONTAINED, fastmath=True)
    assert "div.rn.f32" in precise
    assert "div.rn.f32" not in fast and ("div.approx" in fast or "div.full" in fast)
    assert ".ftz" in fast


def test_bad_nvvm_ir_raises_with_libnvvm_log():
    with pytest.raises(ToolchainError) as e:
        core.nvvm_to_ptx(HEADER + "define void @k( {\n}\n" + FOOTER)
    msg = str(e.value)
    assert "nvvmCompileProgram" in msg and "NVVM_ERROR" in msg
    assert re.search(r"\(\d+, \d+\): parse", msg), msg   # libNVVM's log: position and reason


def test_invalid_nvvm_semantics_raise_with_log():
    bad = SELF_CONTAINED.replace("store float %z", "store float %undefined_value")
    with pytest.raises(ToolchainError, match="undefined_value|use of undefined value"):
        core.nvvm_to_ltoir(bad)


def test_ptx_assembles():
    if not os.path.exists(PTXAS):
        pytest.skip("ptxas not found")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(core.nvvm_to_ptx(SELF_CONTAINED))
        r = subprocess.run([PTXAS, "-arch=sm_90", src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_lto_link_of_two_modules_gives_cubin():
    kern = core.nvvm_to_ltoir(KERNEL, arch=90)
    scale = core.nvvm_to_ltoir(SCALE, arch=90)
    assert isinstance(kern, bytes) and len(kern) > 100 and kern[:4] != b"\x7fELF"
    cubin = core.link_cubin([("ltoir", kern, "kern"), ("ltoir", scale, "scale")], arch=90)
    assert cubin[:4] == b"\x7fELF"
    assert b"kern" in cubin   # the kernel survived LTO (it is in @llvm.used)


def test_lto_drops_kernels_missing_from_llvm_used():
    # Why codegen lists kernels in @llvm.used: libNVVM's -gen-lto treats
    # everything else as unreferenced.
    unused = SELF_CONTAINED.replace("@llvm.used", "@not.used")
    ptx = core.link_ptx([("ltoir", core.nvvm_to_ltoir(unused))])
    assert ".entry" not in ptx


def test_link_ptx_after_lto_resolves_external_calls():
    kern = core.nvvm_to_ltoir(KERNEL)
    scale = core.nvvm_to_ltoir(SCALE)
    ptx = core.link_ptx([("ltoir", kern), ("ltoir", scale)], arch=90)
    assert ".entry kern(" in ptx
    assert "mul.f32" in ptx or "mul.rn.f32" in ptx    # scale() inlined by LTO
    assert "call" not in re.sub(r"//.*", "", ptx)


def test_undefined_symbol_reports_nvjitlink_log():
    kern = core.nvvm_to_ltoir(KERNEL)
    with pytest.raises(ToolchainError) as e:
        core.link_cubin([("ltoir", kern)], arch=90)
    msg = str(e.value)
    assert "nvJitLink" in msg and "NVJITLINK_ERROR" in msg
    assert "scale" in msg   # the log names the missing function


def test_link_ptx_and_relocatable_cubin_inputs():
    ptx = core.nvvm_to_ptx(SELF_CONTAINED)
    cubin = core.link_cubin([("ptx", ptx.encode())], arch=90)
    assert cubin[:4] == b"\x7fELF"
    if not os.path.exists(PTXAS):
        pytest.skip("ptxas not found")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        obj = os.path.join(d, "k.o")
        with open(src, "w") as f:
            f.write(ptx)
        subprocess.run([PTXAS, "-arch=sm_90", "-c", src, "-o", obj], check=True)
        with open(obj, "rb") as f:
            linked = core.link_cubin([("cubin", f.read())], arch=90)
    assert linked[:4] == b"\x7fELF"


def test_link_rejects_bad_inputs():
    with pytest.raises(ToolchainError, match="nothing to link"):
        core.link_cubin([], arch=90)
    with pytest.raises(ToolchainError, match="NVJITLINK_ERROR"):
        core.link_cubin([("ltoir", b"not an lto module")], arch=90)
    with pytest.raises(ToolchainError, match="only from LTO-IR"):
        core.link_ptx([("ptx", core.nvvm_to_ptx(SELF_CONTAINED))])
    with pytest.raises(ValueError):
        core.link_cubin([("wasm", b"")])


def test_lineinfo_and_debug_options():
    ptx = core.nvvm_to_ptx(SELF_CONTAINED, lineinfo=True)
    assert ".entry kern(" in ptx
    dbg = core.nvvm_to_ptx(SELF_CONTAINED, debug=True, opt=0)
    assert ".entry kern(" in dbg


def test_compiles_concurrently_from_threads():
    results, errors = [], []

    def work():
        try:
            results.append(core.nvvm_to_ptx(SELF_CONTAINED))
            results.append(core.link_cubin([("ltoir", core.nvvm_to_ltoir(SELF_CONTAINED))]))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    ptxs = [r for r in results if isinstance(r, str)]
    assert len(ptxs) == 4 and len(set(ptxs)) == 1
    assert all(r[:4] == b"\x7fELF" for r in results if isinstance(r, bytes))


def run_fresh(code, **env):
    """Runs `code` in a fresh interpreter (libraries load once per process)."""
    e = dict(os.environ)
    e.update(env)
    e["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)


def test_missing_library_override_is_reported():
    r = run_fresh("import cudajit._core as c\ntry:\n    c.nvvm_to_ptx('x')\nexcept Exception as e:\n"
                  "    print(type(e).__name__, e)", CUDAJIT_LIBNVVM="/nonexistent/libnvvm.so")
    assert r.returncode == 0, r.stderr
    assert "ToolchainError" in r.stdout and "/nonexistent/libnvvm.so" in r.stdout and "CUDAJIT_LIBNVVM" in r.stdout


def test_cuda_home_layout_is_searched_first():
    paths = core.toolchain_paths()
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "nvvm", "lib64"))
        os.makedirs(os.path.join(root, "nvvm", "libdevice"))
        os.makedirs(os.path.join(root, "lib64"))
        os.symlink(paths["libnvvm"], os.path.join(root, "nvvm", "lib64", "libnvvm.so"))
        os.symlink(paths["libdevice"], os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc"))
        os.symlink(paths["nvjitlink"], os.path.join(root, "lib64", "libnvJitLink.so"))
        r = run_fresh("import cudajit._core as c\nprint(c.toolchain_paths())", CUDA_HOME=root)
        assert r.returncode == 0, r.stderr
        assert f"{root}/nvvm/lib64/libnvvm.so" in r.stdout
        assert f"{root}/nvvm/libdevice/libdevice.10.bc" in r.stdout
        assert f"{root}/lib64/libnvJitLink.so" in r.stdout


def test_pip_wheel_layout_is_found_through_sys_path():
    paths = core.toolchain_paths()
    with tempfile.TemporaryDirectory() as site:
        nvcc = os.path.join(site, "nvidia", "cuda_nvcc", "nvvm")
        os.makedirs(os.path.join(nvcc, "lib64"))
        os.makedirs(os.path.join(nvcc, "libdevice"))
        os.makedirs(os.path.join(site, "nvidia", "nvjitlink", "lib"))
        os.symlink(paths["libnvvm"], os.path.join(nvcc, "lib64", "libnvvm.so"))
        os.symlink(paths["libdevice"], os.path.join(nvcc, "libdevice", "libdevice.10.bc"))
        os.symlink(paths["nvjitlink"], os.path.join(site, "nvidia", "nvjitlink", "lib", "libnvJitLink.so.13"))
        code = (f"import sys; sys.path.insert(0, {site!r})\nimport cudajit._core as c\n"
                "print(c.toolchain_paths())\nprint(len(c.nvvm_to_ptx(" + repr(SELF_CONTAINED) + ")))")
        r = run_fresh(code, CUDA_HOME="", CUDA_PATH="")
        assert r.returncode == 0, r.stderr
        assert f"{nvcc}/lib64/libnvvm.so" in r.stdout
        assert f"{nvcc}/libdevice/libdevice.10.bc" in r.stdout
        assert f"{site}/nvidia/nvjitlink/lib/libnvJitLink.so.13" in r.stdout
