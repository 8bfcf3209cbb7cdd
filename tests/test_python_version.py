"""Which Pythons cudajit runs on: the decoder reads the bytecode of CPython
3.10, 3.11, 3.12 and 3.13 (one opcode table each); on any other version `import
cudajit` must fail with a clear ImportError before the extension loads."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cudajit


def _import_as(version):
    """Imports cudajit in a fresh interpreter that reports `version` as its
    sys.version_info; returns what it printed."""
    code = textwrap.dedent(f"""
        import collections, sys
        fields = "major minor micro releaselevel serial"
        sys.version_info = collections.namedtuple("version_info", fields)(*{version!r})
        try:
            import cudajit
        except ImportError as e:
            print("ImportError:", e)
        else:
            print("imported")
        print("extension loaded:", "cudajit._core" in sys.modules)
    """)
    env = dict(os.environ)
    package_parent = str(Path(cudajit.__file__).resolve().parents[1])
    env["PYTHONPATH"] = package_parent + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr   # an exception, never a crash
    return proc.stdout


@pytest.mark.parametrize("version", [(3, 14, 0, "final", 0), (3, 15, 2, "beta", 1),
                                     (3, 9, 18, "final", 0)])
def test_other_python_is_refused_at_import(version):
    out = _import_as(version)
    assert out.startswith("ImportError: cudajit supports CPython 3.10, 3.11, 3.12 and 3.13; "
                          f"this is Python {version[0]}.{version[1]}.{version[2]}"), out
    assert "extension loaded: False" in out


def test_supported_python_imports():
    v = sys.version_info
    out = _import_as((v.major, v.minor, v.micro, v.releaselevel, v.serial))
    assert out == "imported\nextension loaded: True\n"
