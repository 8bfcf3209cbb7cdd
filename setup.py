# Builds the C++ core (cudajit._core) with CMake, in the shape of pybind11's
# cmake_example.
import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _sanitize_option(value):
    if value in (None, "", "0"):
        return "OFF"
    return "thread" if value.strip().lower() == "thread" else "ON"


def _llvm_option(value):
    if value in (None, ""):
        return "AUTO"
    return "OFF" if value.strip().lower() in ("0", "off", "no", "false") else "ON"


class CMakeExtension(Extension):
    def __init__(self, name: str, sourcedir: str = "") -> None:
        super().__init__(name, sources=[])
        self.sourcedir = os.fspath(Path(sourcedir).resolve())


class CMakeBuild(build_ext):
    def build_extension(self, ext: CMakeExtension) -> None:
        ext_fullpath = Path.cwd() / self.get_ext_fullpath(ext.name)
        extdir = ext_fullpath.parent.resolve()
        cfg = "Debug" if os.environ.get("CUDAJIT_DEBUG_BUILD") else "Release"
        cmake_args = [
            f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={extdir}{os.sep}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DCMAKE_BUILD_TYPE={cfg}",
            # CUDAJIT_SANITIZE=1: AddressSanitizer + UBSan, =thread: ThreadSanitizer
            # (scripts/sanitize.sh runs the tests)
            f"-DCUDAJIT_SANITIZE={_sanitize_option(os.environ.get('CUDAJIT_SANITIZE'))}",
            # CUDAJIT_LLVM=0: no LLVM back end plugin; =1: require it (CMake fails without
            # LLVM 17+); unset: built when CMake finds LLVM (docs/backends.md)
            f"-DCUDAJIT_LLVM={_llvm_option(os.environ.get('CUDAJIT_LLVM'))}",
        ]
        build_args = []
        try:
            import ninja  # noqa: F401
            cmake_args += ["-GNinja"]
        except ImportError:
            if subprocess.run(["ninja", "--version"], capture_output=True).returncode == 0:
                cmake_args += ["-GNinja"]
        if "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            build_args += [f"-j{os.cpu_count() or 2}"]
        build_temp = Path(self.build_temp) / ext.name
        build_temp.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cmake", ext.sourcedir, *cmake_args], cwd=build_temp, check=True)
        subprocess.run(["cmake", "--build", ".", *build_args], cwd=build_temp, check=True)


setup(
    ext_modules=[CMakeExtension("cudajit._core")],
    cmdclass={"build_ext": CMakeBuild},
)
