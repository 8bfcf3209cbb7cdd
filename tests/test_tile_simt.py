"""Tile operations inside @cudajit.jit (SIMT) kernels without a GPU: they
compile for the launch block shape (1-, 2- and 3-d blocks of whole warps;
the golden tests/ir/tile_simt_block_2d.txt shows the threads' numbering)
through libNVVM and ptxas for sm_80 and sm_90; tile operations that not
every thread reaches, or that take scalars differing between threads, are
CompileErrors at their line (docs/tiles.md, "Tiles inside SIMT kernels").
The GPU runs of the same kernels: tests/gpu/test_tile_simt_gpu.py."""
import inspect
import os
import sys
import textwrap

import pytest

import cudajit as cuda
from cudajit import CompileError

sys.path.insert(0, os.path.dirname(__file__))
import tile_simt_kernels as K  # noqa: E402
from ptxas_check import assemble  # noqa: E402

F32_2D = "float32[:, ::1]"
F32_1D = "float32[::1]"
F16_2D = "float16[:, ::1]"

COMPILED = [
    ("normalize_rows", f"({F32_2D}, {F32_1D}, {F32_2D})"),
    ("simt_then_tile", f"({F32_2D}, {F32_2D}, {F32_1D})"),
    ("accumulate_chunks", f"({F32_2D}, {F32_2D})"),
    ("matmul_tiles", f"({F16_2D}, {F16_2D}, {F32_2D})"),
]
BLOCKS = [(128,), (32, 4), (32, 2, 2)]


def line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn.py_func)
    for k, text in enumerate(lines):
        if marker in text:
            return first + k
    raise AssertionError(f"{marker!r} not in {fn.py_func.__name__}")


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("name,sig", COMPILED, ids=[c[0] for c in COMPILED])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_for_the_block_shape(name, sig, block, arch, tmp_path):
    ptx, _ = cuda.compile_ptx(getattr(K, name), sig, block=block, arch=arch)
    assemble(ptx, tmp_path, arch=arch if arch != "sm_90" or "wgmma" not in ptx else "sm_90a", name=name)
    # the kernel requires the block it was compiled for (ptxas sizes registers for it)
    dims = (tuple(block) + (1, 1))[:3]
    assert f".reqntid {dims[0]}, {dims[1]}, {dims[2]}" in ptx


def test_matmul_uses_tensor_cores():
    sig = f"({F16_2D}, {F16_2D}, {F32_2D})"
    assert "wgmma.mma_async" in cuda.compile_ptx(K.matmul_tiles, sig, block=(128,), arch="sm_90")[0]
    assert "mma.sync.aligned" in cuda.compile_ptx(K.matmul_tiles, sig, block=(128,), arch="sm_80")[0]


def test_the_ir_names_the_block_shape():
    sig = f"({F32_2D}, {F32_1D}, {F32_2D})"
    k = cuda.jit(K.normalize_rows.py_func)   # a kernel of its own: one block shape compiled
    k.compile(sig, block=(32, 4))
    before = k.inspect_ir(sig, after="tile-check-simt")
    assert "num_warps=4" in before and "simt_block=32x4x1" in before and "tile.load" in before
    assert "intrinsic tile." not in k.inspect_ir(sig)   # all lowered


def test_kernels_without_tiles_keep_the_simt_pipeline():
    @cuda.jit
    def plain(x):
        x[cuda.threadIdx.x] = 1.0
    plain.compile(f"({F32_1D})")
    with pytest.raises(CompileError, match="not in the pipeline 'simt'"):
        plain.inspect_ir(f"({F32_1D})", after="tile-check-simt")


REFUSED = [
    ("tile_in_branch", f"({F32_1D}, {F32_1D})", "L:branch",
     "not every thread of the block reaches: the branch at line {L-1} depends on cuda.threadIdx.x"),
    ("tile_after_early_return", f"({F32_1D}, {F32_1D})", "L:return",
     "not every thread of the block reaches: the branch at line {L-2} depends on cuda.threadIdx.y"),
    ("varying_scalar", f"({F32_1D}, {F32_1D})", "L:scalar",
     "differs between the threads of the block (it depends on cuda.threadIdx.x at line {L0})"),
    ("varying_index_from_device_function", f"({F32_1D}, {F32_1D})", "L:devfn",
     "differs between the threads of the block (it depends on a device function's result"),
    ("varying_trip_count", f"({F32_1D}, {F32_1D})", "L:loop",
     "the branch at line {L-1} depends on cuda.threadIdx.x"),
    ("varying_break", f"({F32_1D}, {F32_1D}, int64)", "L:break",
     "the branch at line {L-2} depends on"),
    ("joined_value", f"({F32_1D}, {F32_1D})", "L:join",
     "depends on a value that depends on the path taken at the branch at line {L-4}"),
    ("from_shared_array", f"({F32_1D}, {F32_1D})", "L:shared",
     "ct.load works on arrays in global memory (kernel arguments and their views); this one is a "
     "shared array (cuda.shared.array)"),
]


@pytest.mark.parametrize("name,sig,marker,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_at_the_line(name, sig, marker, message):
    kernel = getattr(K, name)
    line = line_of(kernel, marker)
    for d in range(-4, 1):
        message = message.replace("{L%s}" % (d if d else "0"), str(line + d))
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(kernel, sig, block=(32, 4))
    e = info.value
    assert message in str(e)
    assert e.line == line and e.file.endswith("tile_simt_kernels.py")


def test_the_block_shape_is_needed():
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(K.normalize_rows, f"({F32_2D}, {F32_1D}, {F32_2D})")
    assert "compiled for its launch block shape" in str(info.value)
    assert "block=(128,)" in str(info.value) and info.value.construct == "ct.load"


@pytest.mark.parametrize("block", [(48,), (16, 3), (64, 32)])
def test_whole_warps_only(block):
    with pytest.raises(CompileError, match="a block of whole warps, at most 1024 threads"):
        cuda.compile_ptx(K.normalize_rows, f"({F32_2D}, {F32_1D}, {F32_2D})", block=block)


def test_tiles_keep_to_static_shared_memory():
    # 3 stages of 128x64 + 64x128 float16 operands: 96 KB, past a SIMT
    # kernel's 48 KB of static shared memory (a tile kernel would take it
    # as dynamic shared memory).
    src = textwrap.dedent("""
        import cudajit as cuda
        import cudajit.tile as ct

        @cuda.jit
        def big(a, b, c):
            acc = ct.zeros((128, 128), dtype=ct.float32)
            for k in range(ct.cdiv(a.shape[1], 64)):
                acc = ct.mma(ct.load(a, index=(cuda.blockIdx.x, k), shape=(128, 64)),
                             ct.load(b, index=(k, cuda.blockIdx.y), shape=(64, 128)), acc)
            ct.store(c, index=(cuda.blockIdx.x, cuda.blockIdx.y), tile=acc)
    """)
    env = {}
    exec(compile(src, "big_simt.py", "exec"), env)
    with pytest.raises(CompileError, match="SIMT kernel's tiles have static shared memory only: 48 KB"):
        cuda.compile_ptx(env["big"], f"({F16_2D}, {F16_2D}, {F32_2D})", block=(256,), arch="sm_90")


MOCK_KERNEL = """
import cudajit.tile as ct

@cuda.jit
def k(x, out):
    t = ct.load(x, index=(cuda.blockIdx.x,), shape=(128,))
    ct.store(out, index=(cuda.blockIdx.x,), tile=t + 1.0)

install(lambda params: None)
x = cuda.to_device(np.arange(256, dtype=np.float32))
out = cuda.device_array(256, np.float32)
for block in ((128,), (64, 2), (128,)):
    k[2, block](x, out)
print(len(k.overloads), [launch["block"] for launch in launches], [launch["shared"] for launch in launches])
"""


def test_one_overload_per_block_shape_mock(run_python, mock_driver, tmp_path, monkeypatch):
    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    out = run_python(MOCK_PRELUDE + MOCK_KERNEL, driver=mock_driver).splitlines()
    assert out[-1] == "2 [(128, 1, 1), (64, 2, 1), (128, 1, 1)] [0, 0, 0]"
