"""Cross-checks the kernel cases against numba-cuda (not a pytest file).

    NUMBA_ENABLE_CUDASIM=1 python3 tests/gpu/check_cases_with_numba.py sim [names...]
        runs every case in numba's CUDA simulator on the CPU and compares it
        with the numpy reference: checks the cases themselves (references,
        launch configurations, inputs) without cudajit or a GPU.
    python3 tests/gpu/check_cases_with_numba.py ptx [names...]
        compiles every case with numba.cuda.compile_ptx(sig, cc=(9, 0)) and
        assembles it with ptxas: checks that each signature is valid numba.
    python3 tests/gpu/check_cases_with_numba.py gpu [names...]
        (GPU machine) launches every case with numba-cuda: a reference
        point for tests/gpu/test_kernels_gpu.py.
"""
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ["CUDAJIT_CASES_WITH_NUMBA"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack    # numba-cuda 0.30 with numpy 2.5

from numba import cuda  # noqa: E402

import kernel_cases as kc  # noqa: E402


def run_case(case, mode):
    rng, seed = kc.new_rng()
    args = case.make_inputs(rng)
    sig = kc.signature_of(args)
    assert sig.replace(" ", "") == case.sig.replace(" ", ""), f"signature {sig} != {case.sig}"
    if mode == "ptx":
        ptx, _ = cuda.compile_ptx(case.kernel, case.sig, cc=(9, 0))
        ptxas = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "ptxas"
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "k.ptx").write_text(ptx)
            subprocess.run([str(ptxas), "-arch=sm_90", "k.ptx", "-o", "k.cubin"], cwd=d, check=True)
        return seed
    expected = kc.expected_outputs(case, args)
    _, bases = kc.numpy_args(args)
    dev = {i: cuda.to_device(b) for i, b in bases.items()}
    launch_args = [kc.apply_view_ops(dev[i], a.ops) if isinstance(a, kc.View) else dev.get(i, a)
                   for i, a in enumerate(args)]
    grid, block = case.config(args)
    cuda.jit(case.kernel)[grid, block](*launch_args)
    for i in case.outputs:
        kc.assert_output_matches(case, i, dev[i].copy_to_host(), expected[i], f"(seed {seed})")
    return seed


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "sim"
    names = set(sys.argv[2:])
    failed = 0
    for case in kc.CASES:
        if names and case.name not in names:
            continue
        t = time.perf_counter()
        try:
            seed = run_case(case, mode)
            print(f"ok    {case.name}  ({time.perf_counter() - t:.1f}s, seed {seed})", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL  {case.name}", flush=True)
            traceback.print_exc()
    print(f"{len(kc.CASES)} cases, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
