"""The README example: y = a*x + y on the GPU, written in the numba.cuda dialect.

    python examples/axpy.py

With a GPU: runs the kernel on cudajit device arrays, checks the result
against numpy and prints the stages' output sizes. Without one: says so,
compiles the kernel anyway (no GPU is needed to compile) and prints its typed
IR and PTX.
"""
import sys

import numpy as np

import cudajit as cuda

SIGNATURE = "void(float32, float32[::1], float32[::1])"


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def one_text(inspected):
    """inspect_*() gives one text for a signature, or {signature: text}."""
    if isinstance(inspected, dict):
        return "\n".join(str(v) for v in inspected.values())
    return str(inspected)


def without_gpu():
    reason = getattr(cuda._core, "unavailable_reason", lambda: "")()
    print(f"No usable CUDA GPU here{': ' + reason if reason else ''}.")
    print(f"Compiling axpy for {SIGNATURE} anyway (sm_90; no GPU needed).\n")
    axpy.compile(SIGNATURE)
    print("---- typed IR " + "-" * 58)
    print(one_text(axpy.inspect_ir(SIGNATURE)))
    print("---- PTX " + "-" * 63)
    print(one_text(axpy.inspect_ptx(SIGNATURE)))
    return 0


def with_gpu():
    n = 4096 * 256
    rng = np.random.default_rng()
    a = np.float32(2.0)
    x_host = rng.standard_normal(n).astype(np.float32)
    y_host = rng.standard_normal(n).astype(np.float32)

    x = cuda.to_device(x_host)
    y = cuda.to_device(y_host)
    axpy[4096, 256](a, x, y)
    result = y.copy_to_host()

    expected = a * x_host + y_host
    ok = np.allclose(result, expected, rtol=1e-6, atol=1e-6)
    print(f"axpy on {n} float32 elements: {'OK' if ok else 'WRONG'} "
          f"(max abs error {np.max(np.abs(result - expected)):.3g})")
    print(f"signatures: {axpy.signatures}")
    print(f"typed IR: {len(one_text(axpy.inspect_ir()))} chars, "
          f"NVVM IR: {len(one_text(axpy.inspect_nvvm()))} chars, "
          f"PTX: {len(one_text(axpy.inspect_ptx()))} chars")
    print("---- typed IR " + "-" * 58)
    print(one_text(axpy.inspect_ir()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(with_gpu() if cuda.is_available() else without_gpu())
