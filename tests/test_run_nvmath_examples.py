"""scripts/run_nvmath_examples.py (issue 13): the import rewrite, and the
mock-driver classification on a small folder of made-up examples (the real
ones are nvmath-python's, not in this tree; docs/mathdx.md has their table)."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_nvmath_examples as runner  # noqa: E402


def test_rewrite_changes_only_the_two_imports():
    text = textwrap.dedent("""\
        from numba import cuda
        from numba import int32, types
        import numba.cuda
        from nvmath.device import FFT, Dim3
        from nvmath.device.common_cuda import ComputeCapability
            from nvmath.device import Matmul  # indented
        from nvmath.linalg.advanced import Matmul as CublasltMatmul
        x = "from numba import cuda"
        """)
    out, changed = runner.rewrite(text)
    assert changed == 4
    assert out.split("\n") == [
        "import cudajit as cuda",
        "from numba import int32, types",
        "import numba.cuda",
        "from cudajit.mathdx import FFT, Dim3",
        "from cudajit.mathdx import ComputeCapability",
        "    from cudajit.mathdx import Matmul  # indented",
        "from nvmath.linalg.advanced import Matmul as CublasltMatmul",
        'x = "from numba import cuda"',
        "",
    ]


EXAMPLES = {
    # compiles, then fails its own check (dropped by -O in mock mode)
    "cufftdx_ok.py": """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def k(x):
            x[cuda.grid(1)] += 1.0

        d = cuda.to_device(np.zeros(32, np.float32))
        k[1, 32](d)
        assert d.copy_to_host()[0] == 1.0
        """,
    "cublasdx_bad.py": """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def k(x):
            x[0] = undefined_name

        k[1, 1](cuda.to_device(np.zeros(1)))
        """,
    "curand_missing.py": """
        from nvmath.device import LUSolver
        """,
    "cufftdx_cupy.py": """
        import cupy
        """,
    "notes.py": "raise SystemExit('not an example: not run')",
}


def test_mock_mode_classifies(tmp_path):
    folder = tmp_path / "examples"
    folder.mkdir()
    for name, text in EXAMPLES.items():
        (folder / name).write_text(textwrap.dedent(text))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "run_nvmath_examples.py"), str(folder),
                          "--mode", "mock", "-j", "2", "--timeout", "120", "--logs", str(tmp_path / "logs")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith(("cu", "curand"))}
    assert set(rows) == {"cufftdx_ok.py", "cublasdx_bad.py", "curand_missing.py", "cufftdx_cupy.py"}
    assert " compiles " in rows["cufftdx_ok.py"] and "1 kernel(s) compiled" in rows["cufftdx_ok.py"]
    assert " compile error " in rows["cublasdx_bad.py"] and "undefined_name" in rows["cublasdx_bad.py"]
    assert " other error " in rows["curand_missing.py"]
    assert "cannot import name 'LUSolver' from 'cudajit.mathdx'" in rows["curand_missing.py"]
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert " needs cupy " in rows["cufftdx_cupy.py"]
    assert (tmp_path / "logs" / "cufftdx_ok.log").exists()
