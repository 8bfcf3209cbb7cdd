#!/usr/bin/env bash
# The CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer (issue 15),
# or under ThreadSanitizer with SANITIZER=thread.
#
#   bash scripts/sanitize.sh [WORKDIR] [pytest args...]
#   SANITIZER=thread bash scripts/sanitize.sh [WORKDIR] [pytest args...]
#
# Builds _core with -DCUDAJIT_SANITIZE=ON into WORKDIR (default build-asan/),
# puts it beside a copy of the Python package, and runs pytest with the
# sanitizer runtimes preloaded (CPython is not instrumented). Leak detection
# is off: the interpreter's own allocations would drown the report. Any
# sanitizer report stops the run with a non-zero status. Without pytest
# arguments it runs the compile-level suites and the fuzzer's test (thread:
# the tests that compile from several threads at once; the LLVM back end's
# plugin is left out of that build, its LLVM being uninstrumented anyway).
# Reports TSan makes about the CUDA toolkit's libraries (libNVVM, nvJitLink,
# NVRTC: uninstrumented, their own locking invisible) are suppressed in
# scripts/tsan.supp, each with the reason.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
thread=0
[ "${SANITIZER:-}" = "thread" ] && thread=1
if [ "$thread" = 1 ]; then work="${1:-$root/build-tsan}"; else work="${1:-$root/build-asan}"; fi
shift || true
# PYTHON: the interpreter (TSan needs one it can start under: pyenv's 3.11
# build segfaults with libtsan preloaded, Debian's /usr/bin/python3 with a
# venv holding numpy and pytest does not). PYTHON_RUN: the one that runs the
# tests, when it differs from the one the build is configured with.
py="${PYTHON:-$(command -v python3)}"
run_py="${PYTHON_RUN:-$py}"

if [ "$thread" = 1 ]; then flags=(-DCUDAJIT_SANITIZE=thread -DCUDAJIT_LLVM=OFF); else flags=(-DCUDAJIT_SANITIZE=ON); fi
# SANITIZE_FAST=1 (CI): -O1 without debug information and without the LLVM
# back end's plugin, a build that fits CI's time (stack traces keep function
# names, not lines).
build_type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "${SANITIZE_FAST:-0}" = 1 ]; then
  build_type=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1" -DCUDAJIT_LLVM=OFF)
fi
mkdir -p "$work"
cmake -S "$root" -B "$work/build" -G Ninja "${build_type[@]}" "${flags[@]}" \
      -DPython_EXECUTABLE="$py" -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$work/pkg/cudajit" > "$work.cmake.log"
ninja -C "$work/build" _core
mkdir -p "$work/pkg/cudajit"
(cd "$root/python/cudajit" && find . \( -name '*.py' -o -name '*.cu' \) -exec cp --parents {} "$work/pkg/cudajit/" \;)

if [ "$thread" = 1 ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libtsan.so)"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp"
  if [ "$#" -eq 0 ]; then
    set -- "$root/tests/test_kernels_compile.py::test_compiles_concurrently_from_threads" \
           "$root/tests/test_link.py::test_compiles_concurrently_from_threads" \
           "$root/tests/test_cub.py::test_second_call_is_a_memory_hit" \
           "$root/tests/test_llvm_backend.py::test_compiles_concurrently_from_threads"
  fi
else
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:detect_odr_violation=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
if [ "$#" -eq 0 ]; then
  set -- "$root/tests/test_decoder.py" "$root/tests/test_golden.py" "$root/tests/test_ir.py" \
         "$root/tests/test_cfg.py" "$root/tests/test_use_lists.py" "$root/tests/test_passes.py" \
         "$root/tests/test_typeinfer.py" "$root/tests/test_errors.py" "$root/tests/test_conformance_compile.py" \
         "$root/tests/test_tile_compile.py" "$root/tests/test_tile_simt.py" "$root/tests/test_fuzz.py" \
         "$root/tests/test_foreign.py" "$root/tests/test_libdevice.py"
fi
cd "$work"
PYTHONPATH="$work/pkg" "$run_py" -m pytest -q -p no:cacheprovider "$@"
