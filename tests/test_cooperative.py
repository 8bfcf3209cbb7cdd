"""Cooperative groups without a GPU (numba's cuda.cg): this_grid().sync()
compiles to a grid barrier on the cooperative launch's workspace, ptxas
takes it, the kernel is marked cooperative (also in the disk cache), and
the launch path uses cuLaunchCooperativeKernel on the mock driver, with
numba's max_cooperative_grid_blocks and a clear error for a grid too large.
The GPU runs: tests/gpu/test_cooperative_gpu.py."""
import os
import sys
import textwrap

import pytest

import cudajit as cuda
from cudajit import CompileError

sys.path.insert(0, os.path.dirname(__file__))
import cooperative_kernels as K  # noqa: E402
from ptxas_check import assemble  # noqa: E402

SIG = "(float32[::1], float32[::1], int64)"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_grid_barrier_ptx(arch, tmp_path):
    ptx, _ = cuda.compile_ptx(K.reverse_rounds, SIG, arch=arch)
    # the workspace address from %envreg1:%envreg2, a release add and acquire polling per barrier
    assert "%envreg1" in ptx and "%envreg2" in ptx
    assert ptx.count("atom.add.release.gpu.u32") == 2
    assert ptx.count("ld.acquire.gpu.u32") == 2
    assemble(ptx, tmp_path, arch=arch, name="reverse_rounds")


def test_barrier_in_a_device_function(tmp_path):
    ptx, _ = cuda.compile_ptx(K.two_phase_sum, "(float32[::1], float32[::1], float32[::1])")
    assert "atom.add.release.gpu.u32" in ptx
    assemble(ptx, tmp_path, name="two_phase_sum")


def test_overloads_say_cooperative():
    K.reverse_rounds.compile(SIG)
    K.no_grid_barrier.compile("(float32[::1])")
    assert [ov.cooperative for ov in K.reverse_rounds.overloads.values()] == [True]
    assert [ov.cooperative for ov in K.no_grid_barrier.overloads.values()] == [False]
    assert "intrinsic grid_sync()" in K.reverse_rounds.inspect_ir(SIG)


def test_sync_takes_no_arguments():
    def bad(a):
        cuda.cg.this_grid().sync(1)   # L:bad
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(bad, "(float32[::1])")
    assert info.value.line == bad.__code__.co_firstlineno + 1


def test_host_use_is_refused():
    from cudajit.errors import DeviceOnlyError
    with pytest.raises(DeviceOnlyError, match="cudajit.cg.this_grid can only be used inside"):
        cuda.cg.this_grid()


MOCK = """
import sys
sys.path.insert(0, {tests!r})
import cooperative_kernels as K
coop = ctypes.CDLL(cuda._core.driver_library()).cjmock_cooperative_launch_count
install(lambda params: None)
a = cuda.to_device(np.arange(4096, dtype=np.float32))
b = cuda.device_array(4096, np.float32)
K.reverse_rounds[16, 256](a, b, 3)
K.no_grid_barrier[16, 256](a)
print(coop(), len(launches))
(ov,) = K.reverse_rounds.overloads.values()
print(ov.max_cooperative_grid_blocks(256), ov.max_cooperative_grid_blocks((32, 4)),
      ov.max_cooperative_grid_blocks(1024, 0))
try:
    K.reverse_rounds[132 * 8 + 1, 256](a, b, 3)
    print("launched")
except cuda.CudaAPIError as e:
    print(e)
print(coop())
"""


def test_cooperative_launch_mock(run_python, mock_driver, tmp_path, monkeypatch):
    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    code = MOCK_PRELUDE + textwrap.dedent(MOCK.format(tests=os.path.dirname(__file__)))
    out = run_python(code, driver=mock_driver).splitlines()
    assert out[0] == "1 2"   # one cooperative launch of the two
    # the mock holds 2048 threads an SM, at most 32 blocks, on 132 SMs
    assert out[1] == f"{132 * 8} {132 * 16} {132 * 2}"
    assert "the kernel synchronises its grid (cuda.cg.this_grid().sync())" in out[2]
    assert "the grid has 1057 blocks and the device holds at most 1056" in out[2]
    assert "max_cooperative_grid_blocks" in out[2]
    assert out[3] == "1"


def test_cooperative_flag_survives_the_disk_cache(run_python, mock_driver, tmp_path, monkeypatch):
    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    code = MOCK_PRELUDE + textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import cudajit as cuda
        k = cuda.jit(cache=True)(__import__("cooperative_kernels").reverse_rounds.py_func)
        coop = ctypes.CDLL(cuda._core.driver_library()).cjmock_cooperative_launch_count
        install(lambda params: None)
        a = cuda.to_device(np.arange(512, dtype=np.float32))
        k[2, 256](a, cuda.device_array(512, np.float32), 1)
        (ov,) = k.overloads.values()
        print(ov.stats["cache_result"], ov.cooperative, coop())
    """)
    assert run_python(code, driver=mock_driver).split() == ["miss", "True", "1"]
    assert run_python(code, driver=mock_driver).split() == ["hit", "True", "1"]
