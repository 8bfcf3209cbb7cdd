"""The library-call stage (compiler/libcalls/): typed IR -> library-call
descriptors -> resolved entry symbols, C-ABI signatures, temp storage and
LTO-IR, through the CUB provider (NVRTC or its caches), without codegen.
No GPU needed.

CUB instantiations go to CUDAJIT_TEST_CUB_CACHE (kept across runs) or a
fresh directory, as in test_cub.py."""

import os

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")
import cudajit as cuda  # noqa: E402
from cudajit.errors import CompileError, ToolchainError  # noqa: E402

SUM = "block_reduce float32 op=sum block=128x1x1 ipt=1"
BLOCK_SUM_IR = f"""func k(v0:array(f32, 1d, C) a) -> none kernel  @k.py:1
bb0:
  v1:i64 = const 0
  v2:f32 = load v0, v1
  v3:f32 = intrinsic cub "{SUM}"(v2)
  v4:f32 = intrinsic cub "{SUM}"(v3)
  store v0, v1, v4
  v5:none = const none
  ret v5
"""


pytestmark = pytest.mark.usefixtures("cub_cache")


def test_collect_lists_each_descriptor_once():
    assert core.library_calls(BLOCK_SUM_IR) == [("cub", SUM)]
    no_calls = BLOCK_SUM_IR.replace(f'intrinsic cub "{SUM}"(v2)', "add v2, v2").replace(
        f'intrinsic cub "{SUM}"(v3)', "add v3, v3")
    assert core.library_calls(no_calls) == []
    assert core.resolve_library_calls(no_calls) == []


def test_block_sum_resolves_without_codegen():
    (r,) = core.resolve_library_calls(BLOCK_SUM_IR)
    desc = core.cub_describe(SUM)
    assert r["library"] == "cub" and r["descriptor"] == SUM
    assert r["symbol"] == desc["name"] == "cj_block_reduce_sum_f32_b128x1x1_i1"
    assert r["signature"] == ("f32", ["f32", "void*"])          # T f(T x, void* temp_storage)
    assert r["nvvm_declaration"] == desc["nvvm_declaration"] == f"declare float @{r['symbol']}(float, i8*)"
    ltoir, temp_bytes, temp_align, names = core.cub_ltoir(SUM)
    assert (r["temp_bytes"], r["temp_align"]) == (temp_bytes, temp_align)
    assert r["temp_bytes"] > 0 and r["temp_align"] >= 4
    assert r["ltoir"] == ltoir and names == [r["symbol"]]


def test_typed_ir_from_type_inference_resolves():
    # type inference records the descriptor; the passes' nosync shows in it
    def k(a):
        a[0] = cuda.block.sum(a[cuda.threadIdx.x])

    d = cuda.jit("void(float32[::1])", block=(128,))(k)
    text = d.inspect_ir(("float32[::1]",))
    calls = core.library_calls(text)
    assert calls == [("cub", SUM + " nosync")]
    (r,) = core.resolve_library_calls(text)
    assert r["symbol"] == "cj_block_reduce_sum_f32_b128x1x1_i1_nosync"
    assert r["signature"] == ("f32", ["f32", "void*"])


def test_bad_descriptor_is_a_toolchain_error():
    bad = BLOCK_SUM_IR.replace(SUM, "block_reduce float32 op=sum block=0x1x1 ipt=1")
    with pytest.raises(ToolchainError, match="bad CUB descriptor"):
        core.resolve_library_calls(bad)


def test_untyped_or_invalid_ir_is_refused():
    with pytest.raises(CompileError):
        core.library_calls("func f() -> none\nbb0:\n  v0:none = const none\n")
