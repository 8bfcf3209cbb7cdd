"""CUB instantiations (issue #3, the CUB side), no GPU needed.

spec dict -> generated C++ TU -> NVRTC LTO-IR (+ temp-storage layout) ->
disk cache -> nvJitLink with a hand-written NVVM IR kernel's LTO-IR -> cubin
(and PTX that ptxas accepts).

The whole compile matrix runs once per session into a fresh cache directory
(set CUDAJIT_TEST_CUB_CACHE to a directory to keep the cache across runs:
reruns then read the disk cache instead of running NVRTC).
"""

import concurrent.futures
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")
if not hasattr(core, "cub_ltoir"):
    pytest.skip("cudajit._core was built without bind_cub", allow_module_level=True)
from cudajit.errors import ToolchainError  # noqa: E402

DTYPES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]
INT_DTYPES = ["int32", "int64", "uint32", "uint64"]
NVVM_TYPE = {"int32": "i32", "int64": "i64", "uint32": "i32", "uint64": "i64",
             "float32": "float", "float64": "double"}
ALGORITHMS = [
    "block_reduce", "block_allreduce", "block_inclusive_sum", "block_exclusive_sum", "block_inclusive_scan",
    "block_inclusive_scan_init", "block_exclusive_scan", "block_load", "block_store",
    "block_radix_sort", "block_radix_sort_descending", "block_radix_sort_pairs",
    "block_radix_sort_pairs_descending", "block_histogram", "warp_reduce", "warp_allreduce",
    "warp_inclusive_sum", "warp_exclusive_sum", "warp_inclusive_scan",
    "warp_inclusive_scan_init", "warp_exclusive_scan",
]
WITH_OP = {"block_reduce", "block_allreduce", "warp_allreduce", "block_inclusive_scan", "block_inclusive_scan_init",
           "block_exclusive_scan", "warp_reduce", "warp_inclusive_scan",
           "warp_inclusive_scan_init", "warp_exclusive_scan"}
LOAD_STORE_ARRANGEMENTS = ["blocked", "striped", "vectorize", "transpose", "warp_transpose"]
BLOCKS = [32, 256, 1024, (32, 4), (8, 4, 2)]   # plus 128 for every (algorithm, dtype)
ARCH = 90


def make_spec(algorithm, dtype, block, variant):
    """A valid spec; `variant` cycles the optional fields (op, items per
    thread, arrangement, value type, bins, logical warp size)."""
    s = {"algorithm": algorithm, "dtype": dtype, "block": block,
         "items_per_thread": [1, 4, 2, 3][variant % 4]}
    if algorithm in WITH_OP:
        s["op"] = ["sum", "min", "max"][variant % 3]
    if algorithm in ("block_load", "block_store"):
        s["arrangement"] = LOAD_STORE_ARRANGEMENTS[variant % 5]
    if algorithm.startswith("block_radix_sort"):
        s["arrangement"] = ["blocked", "striped"][variant % 2]
    if algorithm.startswith("block_radix_sort_pairs"):
        s["value_dtype"] = DTYPES[(variant + 1) % 6]
    if algorithm == "block_histogram":
        s["arrangement"] = ["atomic", "sort"][variant % 2]
        s["value_dtype"] = ["uint32", "int32", "uint64"][variant % 3]
        s["bins"] = [256, 64, 17][variant % 3]
    if algorithm.startswith("warp_"):
        s["warp_threads"] = [32, 16, 8][variant % 3]
    if variant % 5 == 4:
        s["sync"] = False
    return s


def spec_id(s):
    b = s["block"]
    b = "x".join(map(str, b)) if isinstance(b, tuple) else str(b)
    sync = "" if s.get("sync", True) else "-nosync"
    return f"{s['algorithm']}-{s.get('op', '')}-{s['dtype']}-b{b}-i{s.get('items_per_thread', 1)}{sync}"


def build_matrix():
    specs = []
    # every algorithm x every item type, 128 threads
    for a in ALGORITHMS:
        for v, d in enumerate(INT_DTYPES if a == "block_histogram" else DTYPES):
            specs.append(make_spec(a, d, 128, v))
    # every algorithm x the other block shapes, the item type rotating
    for i, a in enumerate(ALGORITHMS):
        for j, b in enumerate(BLOCKS):
            types = INT_DTYPES if a == "block_histogram" else DTYPES
            specs.append(make_spec(a, types[(i + j) % len(types)], b, i + j))
    return specs


MATRIX = build_matrix()
MATRIX_IDS = [spec_id(s) for s in MATRIX]
assert len(set(MATRIX_IDS)) == len(MATRIX_IDS)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    keep = os.environ.get("CUDAJIT_TEST_CUB_CACHE")
    root = keep or str(tmp_path_factory.mktemp("cudajit-cache"))
    old = os.environ.get("CUDAJIT_CACHE_DIR")
    os.environ["CUDAJIT_CACHE_DIR"] = root
    core.cub_clear_memory_cache()
    yield os.path.join(root, "cub")
    if old is None:
        os.environ.pop("CUDAJIT_CACHE_DIR", None)
    else:
        os.environ["CUDAJIT_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def compiled(cache_dir):
    """{spec id: (ltoir, temp_bytes, temp_align, names) or the exception}.
    The first spec warms NVRTC's precompiled header; the rest compile on a
    few threads (the binding releases the GIL)."""
    results = {}

    def one(s):
        try:
            return core.cub_ltoir(s)
        except Exception as e:  # reported per spec by test_matrix_compiles
            return e

    results[MATRIX_IDS[0]] = one(MATRIX[0])
    workers = max(2, min(4, os.cpu_count() or 2))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for sid, r in zip(MATRIX_IDS[1:], pool.map(one, MATRIX[1:])):
            results[sid] = r
    return results


# ---- NVVM IR -> LTO-IR (libNVVM) and LTO link (nvJitLink), through ctypes ----------------

def _cuda_roots():
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    return [r for r in roots if r]


def _find(names, subdirs):
    for r in _cuda_roots():
        for sd in subdirs:
            for n in names:
                p = os.path.join(r, sd, n)
                if os.path.exists(p):
                    return p
    return None


class Toolkit:
    def __init__(self):
        nvvm = _find(["libnvvm.so", "libnvvm.so.4"], ["nvvm/lib64", "lib64", "lib"])
        jl = _find(["libnvJitLink.so", "libnvJitLink.so.13", "libnvJitLink.so.12"], ["lib64", "lib"])
        if not nvvm or not jl:
            pytest.skip("libNVVM / nvJitLink not found")
        self.nvvm = ctypes.CDLL(nvvm)
        self.jl = ctypes.CDLL(jl)
        self.ptxas = _find(["ptxas"], ["bin"])
        for f in ("nvJitLinkGetErrorLog", "nvJitLinkGetLinkedCubin", "nvJitLinkGetLinkedPtx"):
            getattr(self.jl, f).argtypes = [ctypes.c_void_p, ctypes.c_char_p]

    def nvvm_to_ltoir(self, text):
        lib = self.nvvm
        prog = ctypes.c_void_p()
        assert lib.nvvmCreateProgram(ctypes.byref(prog)) == 0
        try:
            src = text.encode()
            assert lib.nvvmAddModuleToProgram(prog, src, ctypes.c_size_t(len(src)), b"kernel") == 0
            opts = (ctypes.c_char_p * 2)(f"-arch=compute_{ARCH}".encode(), b"-gen-lto")
            rc = lib.nvvmCompileProgram(prog, 2, opts)
            n = ctypes.c_size_t()
            lib.nvvmGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value + 1)
            lib.nvvmGetProgramLog(prog, log)
            assert rc == 0, f"libNVVM failed: {log.value.decode()}\n{text}"
            assert lib.nvvmGetCompiledResultSize(prog, ctypes.byref(n)) == 0
            out = ctypes.create_string_buffer(n.value)
            assert lib.nvvmGetCompiledResult(prog, out) == 0
            return out.raw
        finally:
            lib.nvvmDestroyProgram(ctypes.byref(prog))

    def link(self, inputs, ptx=False):
        """inputs: [(name, ltoir bytes)] -> cubin bytes, or PTX text. Raises
        RuntimeError with nvJitLink's log. -optimize-unused-variables drops
        the hundreds of weak constexpr members libcu++ leaves in every
        NVRTC module (nothing on the host reads them)."""
        lib = self.jl
        opts = [f"-arch=sm_{ARCH}".encode(), b"-lto", b"-optimize-unused-variables"]
        opts += [b"-ptx"] if ptx else []
        h = ctypes.c_void_p()
        assert lib.nvJitLinkCreate(ctypes.byref(h), len(opts), (ctypes.c_char_p * len(opts))(*opts)) == 0
        try:
            rc = 0
            for name, data in inputs:
                rc = rc or lib.nvJitLinkAddData(h, 3, data, ctypes.c_size_t(len(data)), name.encode())
            rc = rc or lib.nvJitLinkComplete(h)
            if rc:
                n = ctypes.c_size_t()
                lib.nvJitLinkGetErrorLogSize(h, ctypes.byref(n))
                log = ctypes.create_string_buffer(n.value + 1)
                lib.nvJitLinkGetErrorLog(h, log)
                raise RuntimeError(f"nvJitLink error {rc}: {log.value.decode()}")
            n = ctypes.c_size_t()
            if ptx:
                assert lib.nvJitLinkGetLinkedPtxSize(h, ctypes.byref(n)) == 0
                out = ctypes.create_string_buffer(n.value)
                assert lib.nvJitLinkGetLinkedPtx(h, out) == 0
                return out.value.decode()
            assert lib.nvJitLinkGetLinkedCubinSize(h, ctypes.byref(n)) == 0
            out = ctypes.create_string_buffer(n.value)
            assert lib.nvJitLinkGetLinkedCubin(h, out) == 0
            return out.raw
        finally:
            lib.nvJitLinkDestroy(ctypes.byref(h))

    def ptxas_check(self, ptx, tmp_path):
        if not self.ptxas:
            pytest.skip("ptxas not found")
        path = tmp_path / "linked.ptx"
        path.write_text(ptx)
        r = subprocess.run([self.ptxas, f"-arch=sm_{ARCH}", str(path), "-o", os.devnull],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.fixture(scope="session")
def toolkit():
    return Toolkit()


HEADER = (
    'target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-'
    'i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"\n'
    'target triple = "nvptx64-nvidia-cuda"\n\n'
)
FOOTER = (
    '@llvm.used = appending global [1 x i8*] [i8* bitcast (void (i8*)* @cj_test_kernel to i8*)], '
    'section "llvm.metadata"\n\n'
    "!nvvm.annotations = !{!0}\n"
    '!0 = !{void (i8*)* @cj_test_kernel, !"kernel", i32 1}\n'
    "!nvvmir.version = !{!1}\n"
    "!1 = !{i32 2, i32 0, i32 3, i32 2}\n"
)


def kernel_ir(spec, desc, temp_bytes, temp_align):
    """A kernel in the NVVM IR dialect codegen emits that calls the entry point
    the way cub.h prescribes: shared temp storage [temp_bytes x i8] aligned to
    temp_align, addrspacecast to generic i8*; thread items in a local array
    (alloca) filled from and written back to global memory; scalars loaded
    from global memory; results stored back (so nothing folds away)."""
    m = re.fullmatch(r"declare (\S+) @(\w+)\((.*)\)", desc["nvvm_declaration"])
    ret, name = m.group(1), m.group(2)
    types = [t.strip() for t in m.group(3).split(",")]
    cparams = re.search(r"\((.*)\)", desc["c_declaration"]).group(1).split(",")
    pnames = [p.split()[-1] for p in cparams]
    assert len(types) == len(pnames) and pnames[-1] == "temp_storage"
    ipt = spec.get("items_per_thread", 1)
    glob, body, after, args = [], [], [], []
    counter = [0]

    def fresh():
        counter[0] += 1
        return f"%v{counter[0]}"

    def buf_ptr(elem, index):
        p, q = fresh(), fresh()
        body.append(f"{p} = bitcast i8* %buf to {elem}*")
        body.append(f"{q} = getelementptr {elem}, {elem}* {p}, i64 {index}")
        return q

    body += ["%tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
             "%tid64 = zext i32 %tid to i64",
             f"%base = mul i64 %tid64, {ipt}"]
    for ty, pname in zip(types, pnames):
        v = fresh()
        if pname == "temp_storage":
            arr = f"[{temp_bytes} x i8]"
            glob.append(f"@cj_cub_tmp.0 = internal addrspace(3) global {arr} undef, align {temp_align}")
            body.append(f"{v} = addrspacecast i8 addrspace(3)* getelementptr inbounds "
                        f"({arr}, {arr} addrspace(3)* @cj_cub_tmp.0, i64 0, i64 0) to i8*")
        elif pname == "histogram":
            e, arr = ty[:-1], f"[{spec['bins']} x {ty[:-1]}]"
            glob.append(f"@cj_hist = internal addrspace(3) global {arr} undef, align 8")
            body.append(f"{v} = addrspacecast {e} addrspace(3)* getelementptr inbounds "
                        f"({arr}, {arr} addrspace(3)* @cj_hist, i64 0, i64 0) to {ty}")
            x, dst = fresh(), buf_ptr(e, "%tid64")
            after += [f"{x} = load {e}, {e}* {v}", f"store {e} {x}, {e}* {dst}"]
        elif pname == "block_ptr":
            body.append(f"{v} = bitcast i8* %buf to {ty}")
        elif ty.endswith("*"):
            e = ty[:-1]
            a = fresh()
            body.append(f"{a} = alloca [{ipt} x {e}], align 8")
            body.append(f"{v} = getelementptr inbounds [{ipt} x {e}], [{ipt} x {e}]* {a}, i64 0, i64 0")
            for k in range(ipt):
                idx, x, slot = fresh(), fresh(), fresh()
                body.append(f"{idx} = add i64 %base, {k}")
                src = buf_ptr(e, idx)
                body.append(f"{x} = load {e}, {e}* {src}")
                body.append(f"{slot} = getelementptr inbounds {e}, {e}* {v}, i64 {k}")
                body.append(f"store {e} {x}, {e}* {slot}")
                y = fresh()
                after += [f"{y} = load {e}, {e}* {slot}", f"store {e} {y}, {e}* {src}"]
        else:  # a scalar argument, different in each thread
            src = buf_ptr(ty, "%tid64")
            body.append(f"{v} = load {ty}, {ty}* {src}")
        args.append(f"{ty} {v}")
    call = f"call {ret} @{name}({', '.join(args)})"
    if ret == "void":
        body.append(call)
    else:
        r = fresh()
        body.append(f"{r} = {call}")
        after.append(f"store {ret} {r}, {ret}* {buf_ptr(ret, '%tid64')}")
    lines = "\n".join("  " + x for x in body + after)
    return (HEADER + "\n".join(glob) + "\n\n" + desc["nvvm_declaration"] + "\n"
            "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n\n"
            f"define void @cj_test_kernel(i8* %buf) {{\nentry:\n{lines}\n  ret void\n}}\n\n" + FOOTER)


# ---- the compile matrix -----------------------------------------------------------------

@pytest.mark.parametrize("spec", MATRIX, ids=MATRIX_IDS)
def test_matrix_compiles(spec, compiled):
    r = compiled[spec_id(spec)]
    if isinstance(r, Exception):
        raise r
    ltoir, temp_bytes, temp_align, names = r
    desc = core.cub_describe(spec)
    assert names == [desc["name"]]
    assert len(ltoir) > 1000
    assert ltoir[:4] == b"\xed\x43\x4e\x7f"   # NVVM LTO-IR container
    assert temp_bytes >= 1 and temp_align in (1, 2, 4, 8, 16)
    assert temp_bytes % temp_align == 0   # sizeof is a multiple of alignof
    # Blocked load/store and atomic histograms need no shared memory; the
    # transposing arrangements and sorts need at least a tile.
    tile_bytes = 4 * _threads(spec["block"]) * spec["items_per_thread"]
    if spec["algorithm"].startswith("block_radix_sort") or spec.get("arrangement") in (
            "transpose", "warp_transpose"):
        assert temp_bytes >= tile_bytes // 2
    if spec.get("arrangement") in ("blocked", "striped", "vectorize", "atomic") and \
            spec["algorithm"] in ("block_load", "block_store", "block_histogram"):
        assert temp_bytes == 1


def _threads(block):
    n = 1
    for d in (block if isinstance(block, tuple) else (block,)):
        n *= d
    return n


def test_every_algorithm_and_type_is_in_the_matrix():
    seen = {(s["algorithm"], s["dtype"]) for s in MATRIX}
    for a in ALGORITHMS:
        for d in (INT_DTYPES if a == "block_histogram" else DTYPES):
            assert (a, d) in seen
    for b in BLOCKS + [128]:
        assert {s["algorithm"] for s in MATRIX if s["block"] == b} == set(ALGORITHMS)
    assert {s["items_per_thread"] for s in MATRIX} == {1, 2, 3, 4}


def test_second_call_is_a_memory_hit(compiled):
    before = core.cub_cache_stats()
    for s in MATRIX:
        assert core.cub_ltoir(s) == compiled[spec_id(s)]
    after = core.cub_cache_stats()
    assert after["memory_hits"] - before["memory_hits"] == len(MATRIX)
    assert after["compiles"] == before["compiles"]


def test_memory_cache_keeps_the_most_recently_used(compiled):
    """The bound a user sets (issue 15): the least recently used instances
    leave memory, and come back from the disk cache, byte for byte."""
    from cudajit import cache
    assert cache.memory_cache_limit() == 1024   # $CUDAJIT_MEMORY_CACHE_ENTRIES unset
    specs = MATRIX[:4]
    try:
        core.cub_clear_memory_cache()
        cache.set_memory_cache_limit(2)
        before = core.cub_cache_stats()
        for s in specs:
            assert core.cub_ltoir(s) == compiled[spec_id(s)]
        mid = core.cub_cache_stats()
        assert mid["memory_entries"] == 2 and mid["evictions"] - before["evictions"] == 2
        # the two most recent are memory hits, the first one a disk read again
        assert core.cub_ltoir(specs[3]) == compiled[spec_id(specs[3])]
        assert core.cub_ltoir(specs[0]) == compiled[spec_id(specs[0])]
        after = core.cub_cache_stats()
        assert after["memory_hits"] - mid["memory_hits"] == 1
        assert after["disk_hits"] - mid["disk_hits"] == 1 and after["compiles"] == before["compiles"]
        with pytest.raises(ValueError, match=">= 0"):
            cache.set_memory_cache_limit(-1)
    finally:
        cache.set_memory_cache_limit(1024)


def test_memory_cache_limit_from_the_environment():
    code = ("import cudajit.cache as c; print(c.memory_cache_limit()); "
            "c.set_memory_cache_limit(0); print(c.memory_cache_limit())")
    env = dict(os.environ, CUDAJIT_MEMORY_CACHE_ENTRIES="7")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["7", "0"]


def test_new_process_state_reads_the_disk_cache(compiled):
    core.cub_clear_memory_cache()
    before = core.cub_cache_stats()
    for s in MATRIX:
        assert core.cub_ltoir(s) == compiled[spec_id(s)]
    after = core.cub_cache_stats()
    assert after["disk_hits"] - before["disk_hits"] == len(MATRIX)
    assert after["compiles"] == before["compiles"]
    assert after["corrupt_entries"] == before["corrupt_entries"]


def test_cache_entries_are_checksummed_files(compiled, cache_dir):
    """The entry format disk_cache.h documents, checked with hashlib."""
    for s in MATRIX:
        path = core.cub_cache_path(s)
        assert os.path.dirname(path) == cache_dir
        assert re.fullmatch(r"[0-9a-f]{64}\.cjcub", os.path.basename(path))
        data = open(path, "rb").read()
        assert data[:8] == b"CJCUBLTO"
        assert hashlib.sha256(data[:-32]).digest() == data[-32:]
        ltoir, temp_bytes, temp_align, _ = compiled[spec_id(s)]
        # support/disk_cache.h framing: magic, u32 version, u32 0, u64 body size
        body_size = int.from_bytes(data[16:24], "little")
        assert len(data) == 24 + body_size + 32
        fields = [int.from_bytes(data[o:o + 8], "little") for o in (24, 32, 40)]
        assert fields[:2] == [temp_bytes, temp_align]
        src_size = fields[2]
        source = data[48:48 + src_size].decode()
        assert source == core.cub_describe(s)["source"]
        assert data[48 + src_size:-32] == ltoir
    assert not [f for f in os.listdir(cache_dir) if f.endswith(".tmp")]


def test_entry_names_are_distinct_and_deterministic():
    names = [core.cub_describe(s)["name"] for s in MATRIX]
    assert len(set(names)) == len(names)
    assert names == [core.cub_describe(s)["name"] for s in MATRIX]
    assert core.cub_describe({"algorithm": "block_reduce", "dtype": "float32", "op": "sum",
                              "block": 256})["name"] == "cj_block_reduce_sum_f32_b256x1x1_i1"
    assert core.cub_describe({"algorithm": "warp_reduce", "dtype": "f64", "op": "user",
                              "user_op": "my_op", "block": (32, 2), "items_per_thread": 2})[
        "name"] == "cj_warp_reduce_u5my_op_f64_b32x2x1_i2_w32"
    # a user op's name is length-prefixed: these two must not collide
    a = core.cub_describe({"algorithm": "block_reduce", "dtype": "int32", "op": "user",
                           "user_op": "f_i32", "block": 64})["name"]
    b = core.cub_describe({"algorithm": "block_reduce", "dtype": "int32", "op": "user",
                           "user_op": "f", "block": 64})["name"]
    assert a != b


def test_text_form_round_trips(compiled):
    for s in MATRIX:
        d = core.cub_describe(s)
        assert core.cub_describe(d["spec"]) == d
    before = core.cub_cache_stats()
    assert core.cub_ltoir(core.cub_describe(MATRIX[5])["spec"]) == compiled[MATRIX_IDS[5]]
    assert core.cub_cache_stats()["compiles"] == before["compiles"]


@pytest.mark.parametrize("text,spec", [
    ("block_reduce float32 op=sum block=256x1x1 ipt=1",
     {"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": 256}),
    ("block_radix_sort_pairs uint32 value=float64 block=32x4x1 ipt=4 arrangement=striped",
     {"algorithm": "block_radix_sort_pairs", "dtype": "u32", "value_dtype": "float64",
      "block": (32, 4), "items_per_thread": 4, "arrangement": "striped"}),
    ("warp_reduce float32 op=user:my_op block=64x1x1 ipt=2 warp=16 arch=80",
     {"algorithm": "warp_reduce", "dtype": "float32", "op": "user", "user_op": "my_op",
      "block": 64, "items_per_thread": 2, "warp_threads": 16, "arch": 80}),
    ("block_histogram int32 value=uint32 block=128x1x1 ipt=2 arrangement=atomic bins=64 nosync",
     {"algorithm": "block_histogram", "dtype": "int32", "block": 128, "items_per_thread": 2,
      "bins": 64, "sync": False}),
])
def test_text_form(text, spec):
    assert core.cub_describe(spec)["spec"] == text
    assert core.cub_describe(text) == core.cub_describe(spec)


@pytest.mark.parametrize("text", ["", "block_reduce", "block_sum float32", "block_reduce f16",
                                  "block_reduce float32 op=sum block=2x", "block_reduce float32 ipt",
                                  "block_reduce float32 op=sum colour=red",
                                  "block_reduce float32 op=sum block=1x2x3x4"])
def test_bad_text_form_raises_value_error(text):
    with pytest.raises(ValueError):
        core.cub_describe(text)


# ---- the C ABI ------------------------------------------------------------------------------

ABI_CASES = [
    ({"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": 256},
     "declare float @cj_block_reduce_sum_f32_b256x1x1_i1(float, i8*)"),
    ({"algorithm": "block_reduce", "dtype": "int64", "op": "max", "block": 128, "items_per_thread": 4},
     "declare i64 @cj_block_reduce_max_i64_b128x1x1_i4(i64*, i8*)"),
    ({"algorithm": "block_allreduce", "dtype": "float32", "op": "max", "block": 128},
     "declare float @cj_block_allreduce_max_f32_b128x1x1_i1(float, i8*)"),
    ({"algorithm": "warp_allreduce", "dtype": "uint64", "op": "sum", "block": 128,
      "items_per_thread": 2, "warp_threads": 8},
     "declare i64 @cj_warp_allreduce_sum_u64_b128x1x1_i2_w8(i64*, i8*)"),
    ({"algorithm": "block_exclusive_sum", "dtype": "uint32", "block": 64},
     "declare i32 @cj_block_exclusive_sum_u32_b64x1x1_i1(i32, i8*)"),
    ({"algorithm": "block_inclusive_sum", "dtype": "float64", "block": 64, "items_per_thread": 2},
     "declare void @cj_block_inclusive_sum_f64_b64x1x1_i2(double*, i8*)"),
    ({"algorithm": "block_exclusive_scan", "dtype": "int32", "op": "min", "block": 64},
     "declare i32 @cj_block_exclusive_scan_min_i32_b64x1x1_i1(i32, i32, i8*)"),
    ({"algorithm": "block_inclusive_scan_init", "dtype": "float32", "op": "max", "block": 64,
      "items_per_thread": 3},
     "declare void @cj_block_inclusive_scan_init_max_f32_b64x1x1_i3(float*, float, i8*)"),
    ({"algorithm": "block_load", "dtype": "float32", "block": 128, "items_per_thread": 4,
      "arrangement": "striped"},
     "declare void @cj_block_load_f32_b128x1x1_i4_striped(float*, float*, i64, float, i8*)"),
    ({"algorithm": "block_store", "dtype": "uint64", "block": 128, "items_per_thread": 4},
     "declare void @cj_block_store_u64_b128x1x1_i4_blocked(i64*, i64*, i64, i8*)"),
    ({"algorithm": "block_radix_sort", "dtype": "float32", "block": 128},
     "declare void @cj_block_radix_sort_f32_b128x1x1_i1_blocked(float*, i8*)"),
    ({"algorithm": "block_radix_sort_pairs_descending", "dtype": "uint32", "value_dtype": "float64",
      "block": 128, "items_per_thread": 2, "arrangement": "striped"},
     "declare void @cj_block_radix_sort_pairs_descending_u32_f64_b128x1x1_i2_striped(i32*, double*, i8*)"),
    ({"algorithm": "block_histogram", "dtype": "uint32", "block": 128, "items_per_thread": 4,
      "bins": 256},
     "declare void @cj_block_histogram_u32_u32_b128x1x1_i4_atomic_n256(i32*, i32*, i8*)"),
    ({"algorithm": "warp_exclusive_scan", "dtype": "int64", "op": "sum", "block": 64,
      "warp_threads": 16},
     "declare i64 @cj_warp_exclusive_scan_sum_i64_b64x1x1_i1_w16(i64, i64, i8*)"),
]


@pytest.mark.parametrize("spec,decl", ABI_CASES, ids=[c[1].split("@")[1].split("(")[0] for c in ABI_CASES])
def test_nvvm_declaration(spec, decl):
    d = core.cub_describe(spec)
    assert d["nvvm_declaration"] == decl
    assert d["c_declaration"].startswith('extern "C" __device__ ')
    assert d["c_declaration"].endswith("void* temp_storage)")
    assert d["c_declaration"] + " {" in d["source"]


def test_generated_source_shape():
    src = core.cub_describe({"algorithm": "block_histogram", "dtype": "int32", "block": (16, 4),
                             "items_per_thread": 2, "bins": 32, "arrangement": "sort"})["source"]
    assert src.startswith("// cudajit CUB instantiation: block_histogram(")
    assert "#include <cub/block/block_histogram.cuh>" in src
    assert "cub::BlockHistogram<T, BX, IPT, BINS, cub::BLOCK_HISTO_SORT, BY, BZ>" in src
    assert "constexpr int BX = 16, BY = 4, BZ = 1;" in src
    assert "namespace {" in src   # helpers are TU-local: no clashes between instantiations
    # every TU starts with the same includes, so one precompiled header serves all
    def prelude(source):
        return source.split("\n", 1)[1].split("\n\n")[0]
    others = {prelude(core.cub_describe(s)["source"]) for s in MATRIX}
    assert others == {prelude(src)} and prelude(src).count("#include <cub/") == 8


def test_sync_ends_block_algorithms_with_a_barrier():
    def describe(**kw):
        return core.cub_describe(dict({"dtype": "float32", "block": 128}, **kw))

    tail = "  __syncthreads();  // the storage is free again\n  return result;\n}\n"
    d = describe(algorithm="block_reduce", op="sum")
    assert d["source"].endswith(tail)
    d = describe(algorithm="block_reduce", op="sum", sync=False)
    assert d["name"].endswith("_nosync") and "__syncthreads" not in d["source"]
    assert d["source"].endswith("  return result;\n}\n")
    # the broadcast of allreduce keeps its own barrier without sync
    d = describe(algorithm="block_allreduce", op="min", sync=False)
    assert d["source"].count("__syncthreads();") == 1 and "temp.result" in d["source"]
    d = describe(algorithm="warp_allreduce", op="min")
    assert "cub::ShuffleIndex<W>(result, 0, 0xffffffffu)" in d["source"]
    assert "__syncthreads" not in d["source"]
    # nothing to synchronise: sync=False is dropped, one canonical name
    for kw in ({"algorithm": "block_load", "items_per_thread": 4},
               {"algorithm": "warp_reduce", "op": "sum"}):
        a, b = describe(**kw), describe(sync=False, **kw)
        assert a == b and "_nosync" not in a["name"] and "__syncthreads" not in a["source"]
    d = describe(algorithm="block_load", items_per_thread=4, arrangement="transpose")
    assert "__syncthreads();  // the storage" in d["source"]
    d = describe(algorithm="block_histogram", dtype="int32", bins=16)
    assert "__syncthreads();  // the storage" in d["source"]


# ---- spec validation ----------------------------------------------------------------------

BAD_SPECS = [
    ({"algorithm": "block_reduce", "dtype": "float32", "block": 128}, "needs an op"),
    ({"algorithm": "block_load", "dtype": "float32", "block": 128, "op": "sum"}, "takes no op"),
    ({"algorithm": "block_histogram", "dtype": "float32", "block": 128, "bins": 8}, "integers"),
    ({"algorithm": "block_histogram", "dtype": "int32", "block": 128}, "bins"),
    ({"algorithm": "block_histogram", "dtype": "int32", "block": 128, "bins": 8,
      "value_dtype": "float32"}, "counters"),
    ({"algorithm": "block_radix_sort_pairs", "dtype": "int32", "block": 128}, "value_dtype"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": 128,
      "value_dtype": "int32"}, "value_dtype"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": 2048}, "1024"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": (64, 32)}, "1024"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": 0}, ">= 1"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": 64,
      "items_per_thread": 0}, "items_per_thread"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": 64,
      "arrangement": "striped"}, "no arrangement"),
    ({"algorithm": "block_load", "dtype": "int32", "block": 64, "arrangement": "atomic"},
     "load/store arrangement"),
    ({"algorithm": "block_radix_sort", "dtype": "int32", "block": 64, "arrangement": "transpose"},
     "sort output"),
    ({"algorithm": "block_load", "dtype": "int32", "block": 48, "arrangement": "warp_transpose"},
     "whole warps"),
    ({"algorithm": "warp_reduce", "dtype": "int32", "op": "sum", "block": 64, "warp_threads": 12},
     "power of two"),
    ({"algorithm": "warp_reduce", "dtype": "int32", "op": "sum", "block": 24}, "multiple"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "block": 64, "warp_threads": 16},
     "warp algorithms only"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "user", "block": 64}, "C identifier"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "user", "user_op": "my-op",
      "block": 64}, "C identifier"),
    ({"algorithm": "block_reduce", "dtype": "int32", "op": "sum", "user_op": "f", "block": 64},
     "user_op"),
]


@pytest.mark.parametrize("spec,message", BAD_SPECS, ids=[m for _, m in BAD_SPECS])
def test_invalid_specs_are_rejected_before_nvrtc(spec, message):
    before = core.cub_cache_stats()["compiles"]
    with pytest.raises(ToolchainError, match=re.escape(message)):
        core.cub_describe(spec)
    with pytest.raises(ToolchainError, match=re.escape(message)):
        core.cub_ltoir(spec)
    assert core.cub_cache_stats()["compiles"] == before


@pytest.mark.parametrize("spec", [
    {"algorithm": "block_sum", "dtype": "float32"},
    {"algorithm": "block_reduce", "dtype": "float16", "op": "sum"},
    {"algorithm": "block_reduce", "dtype": "float32", "op": "prod"},
    {"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "blok": 3},
    {"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": (1, 2, 3, 4)},
    {"dtype": "float32"},
], ids=["algorithm", "dtype", "op", "key", "dims", "missing"])
def test_malformed_spec_dicts_raise_value_error(spec):
    with pytest.raises(ValueError):
        core.cub_describe(spec)


def test_nvrtc_failure_carries_log_and_source(cache_dir):
    # `double` passes the identifier check but is a keyword: NVRTC rejects the TU.
    spec = {"algorithm": "block_reduce", "dtype": "float32", "op": "user", "user_op": "double",
            "block": 64}
    with pytest.raises(ToolchainError) as e:
        core.cub_ltoir(spec)
    msg = str(e.value)
    assert "NVRTC compilation failed" in msg and "error" in msg
    assert "--- source ---" in msg and "cj_block_reduce_u6double_f32_b64x1x1_i1" in msg
    assert not os.path.exists(core.cub_cache_path(spec))


# ---- cache robustness -----------------------------------------------------------------------

def _corrupt_truncate(path, other):
    data = open(path, "rb").read()
    open(path, "wb").write(data[:len(data) // 2])


def _corrupt_flip(path, other):
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(path, "wb").write(bytes(data))


def _corrupt_empty(path, other):
    open(path, "wb").close()


def _corrupt_garbage(path, other):
    open(path, "wb").write(os.urandom(5000))


def _corrupt_header_sizes(path, other):
    data = bytearray(open(path, "rb").read())
    data[40:48] = (2 ** 62).to_bytes(8, "little")   # an absurd LTO-IR size
    open(path, "wb").write(bytes(data))


def _corrupt_other_entry(path, other):
    # a whole, valid entry of another spec under this key: checksum passes, source does not
    shutil.copyfile(other, path)


CORRUPTIONS = [_corrupt_truncate, _corrupt_flip, _corrupt_empty, _corrupt_garbage,
               _corrupt_header_sizes, _corrupt_other_entry]


@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=[c.__name__[9:] for c in CORRUPTIONS])
def test_corrupt_entry_is_recompiled(corrupt, compiled):
    i = CORRUPTIONS.index(corrupt)
    spec, other = MATRIX[3 + 9 * i], MATRIX[4 + 9 * i]
    expected = compiled[spec_id(spec)]
    path = core.cub_cache_path(spec)
    corrupt(path, core.cub_cache_path(other))
    core.cub_clear_memory_cache()
    before = core.cub_cache_stats()
    ltoir, temp_bytes, temp_align, names = core.cub_ltoir(spec)
    after = core.cub_cache_stats()
    assert after["corrupt_entries"] == before["corrupt_entries"] + 1
    assert after["compiles"] == before["compiles"] + 1
    assert (temp_bytes, temp_align, names) == expected[1:]
    assert ltoir[:4] == expected[0][:4] and abs(len(ltoir) - len(expected[0])) < 64
    # rewritten whole: the next fresh read is a disk hit
    core.cub_clear_memory_cache()
    assert core.cub_ltoir(spec)[0] == ltoir
    assert core.cub_cache_stats()["disk_hits"] == after["disk_hits"] + 1


def test_unwritable_cache_dir_still_compiles(compiled, monkeypatch):
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", "/dev/null/not-a-dir")
    core.cub_clear_memory_cache()
    spec = MATRIX[1]
    before = core.cub_cache_stats()
    r = core.cub_ltoir(spec)
    after = core.cub_cache_stats()
    assert after["write_failures"] == before["write_failures"] + 1
    assert after["compiles"] == before["compiles"] + 1
    assert r[1:] == compiled[spec_id(spec)][1:]
    core.cub_clear_memory_cache()


CHILD = textwrap.dedent("""
    import hashlib, json, sys
    import cudajit._core as core
    r = core.cub_ltoir(json.loads(sys.argv[1]))
    s = core.cub_cache_stats()
    s["sha"] = hashlib.sha256(r[0]).hexdigest()
    s["layout"] = [r[1], r[2]]
    print(json.dumps(s))
""")


def test_processes_share_the_disk_cache(tmp_path):
    """Two processes compile the same spec at once into an empty cache; a
    third reads it without NVRTC (the 'second process takes milliseconds' case,
    measured by its counters)."""
    spec = {"algorithm": "block_inclusive_scan", "dtype": "float32", "op": "max",
            "block": (64, 2), "items_per_thread": 2}
    env = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(core.__file__)),
                                           os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", CHILD, json.dumps(spec)]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        outs.append(json.loads(out))
    for o in outs:
        assert o["compiles"] + o["disk_hits"] == 1
    assert outs[0]["layout"] == outs[1]["layout"]
    files = os.listdir(tmp_path / "cub")
    assert len(files) == 1 and files[0].endswith(".cjcub")
    third = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0, third.stderr
    o = json.loads(third.stdout)
    assert (o["compiles"], o["disk_hits"], o["corrupt_entries"]) == (0, 1, 0)
    assert o["sha"] in {x["sha"] for x in outs}


# ---- linking with a kernel --------------------------------------------------------------------

LINK_SPECS = [s for s in MATRIX if s["block"] in (256, (32, 4))] + [
    s for s in MATRIX if s["block"] == 128 and s["dtype"] == "float64"]
LINK_IDS = [spec_id(s) for s in LINK_SPECS]


@pytest.mark.parametrize("spec", LINK_SPECS, ids=LINK_IDS)
def test_links_with_a_kernel(spec, compiled, toolkit):
    ltoir, temp_bytes, temp_align, names = compiled[spec_id(spec)]
    ir = kernel_ir(spec, core.cub_describe(spec), temp_bytes, temp_align)
    kernel = toolkit.nvvm_to_ltoir(ir)
    cubin = toolkit.link([("kernel", kernel), ("cub", ltoir)])
    assert cubin[:4] == b"\x7fELF"
    assert b"cj_test_kernel" in cubin


def test_every_algorithm_links():
    assert {s["algorithm"] for s in LINK_SPECS} == set(ALGORITHMS)
    assert {s["dtype"] for s in LINK_SPECS} == set(DTYPES)


@pytest.mark.parametrize("spec", [
    {"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": 256},
    {"algorithm": "block_allreduce", "dtype": "float64", "op": "max", "block": (32, 8)},
    {"algorithm": "block_radix_sort_pairs", "dtype": "uint32", "value_dtype": "float32",
     "block": (32, 4), "items_per_thread": 4, "arrangement": "blocked"},
    {"algorithm": "warp_exclusive_scan", "dtype": "int64", "op": "min", "block": 128,
     "items_per_thread": 3},
], ids=["reduce", "allreduce", "sort_pairs", "warp_scan"])
def test_linked_ptx_assembles_and_is_inlined(spec, toolkit, cache_dir, tmp_path):
    ltoir, temp_bytes, temp_align, names = core.cub_ltoir(spec)
    ir = kernel_ir(spec, core.cub_describe(spec), temp_bytes, temp_align)
    ptx = toolkit.link([("kernel", toolkit.nvvm_to_ltoir(ir)), ("cub", ltoir)], ptx=True)
    assert ".visible .entry cj_test_kernel(" in ptx
    # block algorithms go through the shared temp storage; warp ones through shuffles
    assert "shfl.sync" in ptx if spec["algorithm"].startswith("warp_") else ".shared" in ptx
    # link-time optimisation inlined the entry point into the kernel
    assert not re.search(r"\b%s\b" % names[0], ptx)
    assert ptx.count(".global .") <= 2   # no leftover weak variables from the headers
    toolkit.ptxas_check(ptx, tmp_path)


USER_OP = HEADER + textwrap.dedent("""\
    define float @cj_user_absmax(float %a, float %b) {
    entry:
      %fa = call float @llvm.fabs.f32(float %a)
      %fb = call float @llvm.fabs.f32(float %b)
      %c = fcmp ogt float %fa, %fb
      %r = select i1 %c, float %a, float %b
      ret float %r
    }
    declare float @llvm.fabs.f32(float)

    !nvvmir.version = !{!0}
    !0 = !{i32 2, i32 0, i32 3, i32 2}
""")


@pytest.mark.parametrize("algorithm,ipt", [("block_reduce", 1), ("block_exclusive_scan", 2),
                                           ("warp_inclusive_scan", 4)])
def test_user_op_from_another_lto_module_links(algorithm, ipt, toolkit, cache_dir, tmp_path):
    spec = {"algorithm": algorithm, "dtype": "float32", "op": "user", "user_op": "cj_user_absmax",
            "block": 128, "items_per_thread": ipt}
    desc = core.cub_describe(spec)
    assert 'extern "C" __device__ float cj_user_absmax(float, float);' in desc["source"]
    ltoir, temp_bytes, temp_align, names = core.cub_ltoir(spec)
    kernel = toolkit.nvvm_to_ltoir(kernel_ir(spec, desc, temp_bytes, temp_align))
    user = toolkit.nvvm_to_ltoir(USER_OP)
    cubin = toolkit.link([("kernel", kernel), ("cub", ltoir), ("user", user)])
    assert cubin[:4] == b"\x7fELF"
    ptx = toolkit.link([("kernel", kernel), ("cub", ltoir), ("user", user)], ptx=True)
    assert not re.search(r"\bcj_user_absmax\b", ptx)   # inlined across the three modules
    assert "abs.f32" in ptx                 # ... and its body is there
    toolkit.ptxas_check(ptx, tmp_path)
    with pytest.raises(RuntimeError, match="cj_user_absmax"):
        toolkit.link([("kernel", kernel), ("cub", ltoir)])   # the op's module is missing


def test_two_instantiations_link_into_one_kernel(toolkit, compiled):
    """TU-local helpers live in anonymous namespaces: two CUB modules with the
    same helper names (CjOp, cj_layout, Algo) link without clashes."""
    a = {"algorithm": "block_reduce", "dtype": "float32", "op": "min", "block": 256}
    b = {"algorithm": "block_reduce", "dtype": "float32", "op": "max", "block": 256}
    mods, decls, glob, calls = [], [], [], []
    for k, s in enumerate((a, b)):
        ltoir, tb, ta, names = core.cub_ltoir(s)
        mods.append((f"cub{k}", ltoir))
        decls.append(core.cub_describe(s)["nvvm_declaration"])
        glob.append(f"@tmp{k} = internal addrspace(3) global [{tb} x i8] undef, align {ta}")
        calls.append(
            f"  %t{k} = addrspacecast i8 addrspace(3)* getelementptr inbounds ([{tb} x i8], "
            f"[{tb} x i8] addrspace(3)* @tmp{k}, i64 0, i64 0) to i8*\n"
            f"  %r{k} = call float @{names[0]}(float %x, i8* %t{k})\n")
    ir = (HEADER + "\n".join(glob + decls) + "\n\n"
          "define void @cj_test_kernel(i8* %buf) {\nentry:\n"
          "  %p = bitcast i8* %buf to float*\n  %x = load float, float* %p\n" + "".join(calls) +
          "  %s = fadd float %r0, %r1\n  store float %s, float* %p\n  ret void\n}\n\n" + FOOTER)
    cubin = toolkit.link([("kernel", toolkit.nvvm_to_ltoir(ir))] + mods)
    assert cubin[:4] == b"\x7fELF"


# ---- on a GPU: the instantiations compute what CUB promises --------------------------------
#
# A kernel per case (one block) whose parameters are one global buffer per C
# parameter of the entry point plus one for its result: scalars are read per
# thread, thread items are copied into a local array and back, histograms
# are copied out of shared memory. numpy computes the expected values.
# In CI the kernels are built and linked to cubins (test_gpu_cases_link);
# only the launch needs the GPU (tests/conftest.py skips it elsewhere).

import numpy as np  # noqa: E402

NP = {"int32": np.int32, "int64": np.int64, "uint32": np.uint32, "uint64": np.uint64,
      "float32": np.float32, "float64": np.float64}
NVVM_NP = {"i32": None, "i64": None, "float": np.float32, "double": np.float64}


def _dims(block):
    b = list(block) if isinstance(block, tuple) else [block]
    return (b + [1, 1])[:3]


def _decl_params(desc):
    m = re.fullmatch(r"declare (\S+) @(\w+)\((.*)\)", desc["nvvm_declaration"])
    types = [t.strip() for t in m.group(3).split(",")]
    names = [p.split()[-1] for p in re.search(r"\((.*)\)", desc["c_declaration"]).group(1).split(",")]
    return m.group(1), m.group(2), list(zip(types, names))


def gpu_kernel_ir(spec, desc, temp_bytes, temp_align):
    """(NVVM IR, [buffer names in kernel-parameter order])."""
    ret, name, params = _decl_params(desc)
    bx, by, bz = _dims(spec["block"])
    ipt = spec.get("items_per_thread", 1)
    kparams, glob, body, after, tail, args = [], [], [], [], [], []
    counter = [0]

    def fresh():
        counter[0] += 1
        return f"%v{counter[0]}"

    def gptr(buf, elem, index):
        p, q = fresh(), fresh()
        body.append(f"{p} = bitcast i8* %{buf} to {elem}*")
        body.append(f"{q} = getelementptr inbounds {elem}, {elem}* {p}, i64 {index}")
        return q

    body += ["%tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
             "%ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()",
             "%tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()",
             f"%l0 = mul i32 %tz, {by}", "%l1 = add i32 %l0, %ty", f"%l2 = mul i32 %l1, {bx}",
             "%lt = add i32 %l2, %tx", "%tid64 = zext i32 %lt to i64",
             f"%base = mul i64 %tid64, {ipt}"]
    for ty, pname in params:
        v = fresh()
        if pname == "temp_storage":
            arr = f"[{temp_bytes} x i8]"
            glob.append(f"@cj_cub_tmp.0 = internal addrspace(3) global {arr} undef, align {temp_align}")
            body.append(f"{v} = addrspacecast i8 addrspace(3)* getelementptr inbounds "
                        f"({arr}, {arr} addrspace(3)* @cj_cub_tmp.0, i64 0, i64 0) to i8*")
            args.append(f"{ty} {v}")
            continue
        kparams.append(pname)
        if pname == "histogram":
            e, arr = ty[:-1], f"[{spec['bins']} x {ty[:-1]}]"
            glob.append(f"@cj_hist = internal addrspace(3) global {arr} undef, align 8")
            body.append(f"{v} = addrspacecast {e} addrspace(3)* getelementptr inbounds "
                        f"({arr}, {arr} addrspace(3)* @cj_hist, i64 0, i64 0) to {ty}")
            dst = gptr(pname, e, "%tid64")
            s, x = fresh(), fresh()
            tail += [f"%hc = icmp ult i64 %tid64, {spec['bins']}",
                     "br i1 %hc, label %hcopy, label %hdone", "hcopy:",
                     f"{s} = getelementptr inbounds {e}, {e}* {v}, i64 %tid64",
                     f"{x} = load {e}, {e}* {s}", f"store {e} {x}, {e}* {dst}",
                     "br label %hdone", "hdone:"]
        elif pname == "block_ptr":
            body.append(f"{v} = bitcast i8* %{pname} to {ty}")
        elif ty.endswith("*"):
            e, a = ty[:-1], fresh()
            body.append(f"{a} = alloca [{ipt} x {e}], align 8")
            body.append(f"{v} = getelementptr inbounds [{ipt} x {e}], [{ipt} x {e}]* {a}, i64 0, i64 0")
            for k in range(ipt):
                idx, x, slot, y = fresh(), fresh(), fresh(), fresh()
                body.append(f"{idx} = add i64 %base, {k}")
                src = gptr(pname, e, idx)
                body += [f"{x} = load {e}, {e}* {src}",
                         f"{slot} = getelementptr inbounds {e}, {e}* {v}, i64 {k}",
                         f"store {e} {x}, {e}* {slot}"]
                after += [f"{y} = load {e}, {e}* {slot}", f"store {e} {y}, {e}* {src}"]
        else:
            src = gptr(pname, ty, "%tid64")
            body.append(f"{v} = load {ty}, {ty}* {src}")
        args.append(f"{ty} {v}")
    call = f"call {ret} @{name}({', '.join(args)})"
    if ret == "void":
        body.append(call)
    else:
        kparams.append("ret")
        r = fresh()
        body.append(f"{r} = {call}")
        after.append(f"store {ret} {r}, {ret}* {gptr('ret', ret, '%tid64')}")
    sig = ", ".join(f"i8* %{p}" for p in kparams)
    fty = "void (" + ", ".join("i8*" for _ in kparams) + ")*"
    lines = "\n".join(("  " + x if not x.endswith(":") else x) for x in body + after + tail)
    ir = (HEADER + "\n".join(glob) + "\n\n" + desc["nvvm_declaration"] + "\n" +
          "".join(f"declare i32 @llvm.nvvm.read.ptx.sreg.tid.{d}()\n" for d in "xyz") +
          f"\ndefine void @cj_test_kernel({sig}) {{\nentry:\n{lines}\n  ret void\n}}\n\n"
          f'@llvm.used = appending global [1 x i8*] [i8* bitcast ({fty} @cj_test_kernel to i8*)], '
          'section "llvm.metadata"\n\n!nvvm.annotations = !{!0}\n'
          f'!0 = !{{{fty} @cj_test_kernel, !"kernel", i32 1}}\n'
          "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0, i32 3, i32 2}\n")
    return ir, kparams


def _absmax(a, b):
    return a if abs(a) > abs(b) else b


def _op(spec):
    return {"sum": lambda a, b: a + b, "min": min, "max": max,
            "user": _absmax}[spec["op"]] if "op" in spec else (lambda a, b: a + b)


def _accumulate(op, dtype, xs):
    out, acc = [], None
    for x in xs:
        acc = x if acc is None else dtype(op(acc, x))
        out.append(acc)
    return np.array(out, dtype=dtype)


def gpu_inputs_and_expected(spec, kparams, rng):
    """Host buffers for every kernel parameter and {buffer: (expected, mask)}."""
    a = spec["algorithm"]
    dt = NP[spec["dtype"]]
    n = int(np.prod(_dims(spec["block"])))
    ipt = spec.get("items_per_thread", 1)
    tile = n * ipt
    W = spec.get("warp_threads", 32) if a.startswith("warp_") else n
    floats = np.issubdtype(dt, np.floating)

    def values(count, unique=False):
        if unique:
            if floats:
                return (rng.permutation(count) * 0.5 - count / 7).astype(dt)
            lo = -count // 3 if np.issubdtype(dt, np.signedinteger) else 0
            return (rng.permutation(count) + lo).astype(dt)
        if floats:
            return rng.uniform(-4, 4, count).astype(dt)
        lo = -50 if np.issubdtype(dt, np.signedinteger) else 0
        return rng.integers(lo, 60, count).astype(dt)

    bufs, expect = {}, {}
    op = _op(spec)
    if a.endswith("reduce") or "scan" in a or a.endswith("_sum"):
        items = values(tile)
        bufs["x" if ipt == 1 else "items"] = items.copy()
        if "initial" in kparams:
            bufs["initial"] = np.full(n, values(1)[0], dtype=dt)
        init = bufs["initial"][0] if "initial" in kparams else None
        groups = tile // (W * ipt)
        out = np.empty(tile, dtype=dt)
        mask = np.ones(tile, dtype=bool)
        for gi in range(groups):
            seg = slice(gi * W * ipt, (gi + 1) * W * ipt)
            xs = list(items[seg])
            if a.endswith("allreduce") or a.endswith("_reduce"):
                agg = _accumulate(op, dt, xs)[-1]
                out[seg] = agg
                if a.endswith("_reduce"):   # valid in the first thread of the group only
                    mask[seg] = False
                    mask[seg.start] = True
            elif a.endswith("inclusive_sum") or a.endswith("inclusive_scan"):
                out[seg] = _accumulate(op, dt, xs)
            elif a.endswith("inclusive_scan_init"):
                out[seg] = _accumulate(op, dt, [init] + xs)[1:]
            elif a.endswith("exclusive_sum"):
                out[seg] = _accumulate(op, dt, [dt(0)] + xs)[:-1]
            elif a.endswith("exclusive_scan"):
                out[seg] = _accumulate(op, dt, [init] + xs)[:-1]
        if ipt == 1 or a.endswith("reduce"):
            if a.endswith("reduce"):   # one value per thread: its group's, at the thread
                out = out.reshape(n, ipt)[:, 0].copy()
                mask = mask.reshape(n, ipt)[:, 0].copy()
            expect["ret"] = (out, mask)
            bufs["ret"] = np.zeros(n, dtype=dt)
        else:
            expect["items"] = (out, mask)
    elif a in ("block_load", "block_store"):
        valid = spec["_valid"]
        bufs["valid_items"] = np.full(n, valid, dtype=np.int64)
        striped = spec.get("arrangement") == "striped"
        t, j = np.meshgrid(np.arange(n), np.arange(ipt), indexing="ij")
        mem_index = (j * n + t if striped else t * ipt + j).reshape(-1)   # per (thread, item)
        if a == "block_load":
            data = values(tile)
            oob = values(1)[0]
            bufs["block_ptr"] = data
            bufs["oob_default"] = np.full(n, oob, dtype=dt)
            bufs["items"] = np.zeros(tile, dtype=dt)
            expect["items"] = (np.where(mem_index < valid, data[np.minimum(mem_index, tile - 1)], oob).astype(dt),
                               np.ones(tile, dtype=bool))
        else:
            items = values(tile)
            before = values(tile)
            bufs["block_ptr"] = before.copy()
            bufs["items"] = items
            out = before.copy()
            keep = mem_index < valid
            out[mem_index[keep]] = items[keep]
            expect["block_ptr"] = (out, np.ones(tile, dtype=bool))
    elif a.startswith("block_radix_sort"):
        keys = values(tile, unique=True)
        order = np.argsort(keys, kind="stable")
        if "descending" in a:
            order = order[::-1]
        t, j = np.meshgrid(np.arange(n), np.arange(ipt), indexing="ij")
        rank = (j * n + t if spec.get("arrangement") == "striped" else t * ipt + j).reshape(-1)
        bufs["keys"] = keys
        expect["keys"] = (keys[order][rank], np.ones(tile, dtype=bool))
        if "values" in kparams:
            vals = np.arange(tile).astype(NP[spec["value_dtype"]])
            bufs["values"] = vals
            expect["values"] = (vals[order][rank], np.ones(tile, dtype=bool))
    elif a == "block_histogram":
        bins = spec["bins"]
        samples = rng.integers(0, bins, tile).astype(dt)
        bufs["samples"] = samples
        vt = NP[spec.get("value_dtype", "uint32")]
        bufs["histogram"] = np.zeros(n, dtype=vt)
        hist = np.zeros(n, dtype=vt)
        hist[:bins] = np.bincount(samples.astype(np.int64), minlength=bins)
        mask = np.arange(n) < bins
        expect["histogram"] = (hist, mask)
    else:
        raise AssertionError(a)
    for p in kparams:
        assert p in bufs, (p, spec)
    return [bufs[p] for p in kparams], {kparams.index(k): v for k, v in expect.items()}


GPU_CASES = [
    {"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": 256},
    {"algorithm": "block_reduce", "dtype": "int32", "op": "min", "block": (32, 4), "items_per_thread": 4},
    {"algorithm": "block_reduce", "dtype": "uint64", "op": "max", "block": 128, "items_per_thread": 2},
    {"algorithm": "block_allreduce", "dtype": "float64", "op": "sum", "block": (16, 8, 2)},
    {"algorithm": "block_allreduce", "dtype": "int64", "op": "max", "block": 1024},
    {"algorithm": "block_inclusive_sum", "dtype": "int32", "block": 128},
    {"algorithm": "block_exclusive_sum", "dtype": "uint32", "block": 256, "items_per_thread": 3},
    {"algorithm": "block_inclusive_scan", "dtype": "float32", "op": "max", "block": 128, "items_per_thread": 2},
    {"algorithm": "block_inclusive_scan_init", "dtype": "int64", "op": "min", "block": 64},
    {"algorithm": "block_inclusive_scan_init", "dtype": "float64", "op": "sum", "block": 64, "items_per_thread": 2},
    {"algorithm": "block_exclusive_scan", "dtype": "float64", "op": "sum", "block": (32, 2), "items_per_thread": 4},
    {"algorithm": "block_exclusive_scan", "dtype": "int32", "op": "max", "block": 128, "sync": False},
    {"algorithm": "block_radix_sort", "dtype": "float32", "block": 128, "items_per_thread": 4},
    {"algorithm": "block_radix_sort_descending", "dtype": "int64", "block": (32, 4), "items_per_thread": 2,
     "arrangement": "striped"},
    {"algorithm": "block_radix_sort", "dtype": "uint32", "block": 256},
    {"algorithm": "block_radix_sort_pairs", "dtype": "uint32", "value_dtype": "float64", "block": 128,
     "items_per_thread": 4},
    {"algorithm": "block_radix_sort_pairs_descending", "dtype": "int32", "value_dtype": "int64",
     "block": 64, "items_per_thread": 2, "arrangement": "striped"},
    {"algorithm": "block_histogram", "dtype": "uint32", "block": 128, "items_per_thread": 4, "bins": 64},
    {"algorithm": "block_histogram", "dtype": "int32", "block": 256, "items_per_thread": 2, "bins": 100,
     "arrangement": "sort"},
    {"algorithm": "block_histogram", "dtype": "int64", "value_dtype": "uint64", "block": (32, 2),
     "items_per_thread": 3, "bins": 17},
    {"algorithm": "warp_reduce", "dtype": "float32", "op": "sum", "block": 128},
    {"algorithm": "warp_reduce", "dtype": "int32", "op": "max", "block": 128, "items_per_thread": 4,
     "warp_threads": 16},
    {"algorithm": "warp_allreduce", "dtype": "float64", "op": "min", "block": 96},
    {"algorithm": "warp_allreduce", "dtype": "uint32", "op": "sum", "block": 64, "items_per_thread": 2,
     "warp_threads": 8},
    {"algorithm": "warp_inclusive_sum", "dtype": "int64", "block": 64, "items_per_thread": 3},
    {"algorithm": "warp_exclusive_sum", "dtype": "uint32", "block": 128, "warp_threads": 8},
    {"algorithm": "warp_exclusive_sum", "dtype": "float32", "block": 64, "items_per_thread": 2},
    {"algorithm": "warp_inclusive_scan", "dtype": "float32", "op": "max", "block": 64, "items_per_thread": 2},
    {"algorithm": "warp_inclusive_scan", "dtype": "int32", "op": "min", "block": 64, "items_per_thread": 3,
     "warp_threads": 16},
    {"algorithm": "warp_inclusive_scan_init", "dtype": "int32", "op": "sum", "block": 128, "warp_threads": 16},
    {"algorithm": "warp_inclusive_scan_init", "dtype": "uint64", "op": "max", "block": 64, "items_per_thread": 2},
    {"algorithm": "warp_exclusive_scan", "dtype": "float64", "op": "min", "block": 64, "items_per_thread": 3},
    {"algorithm": "block_reduce", "dtype": "float32", "op": "user", "user_op": "cj_user_absmax", "block": 128},
    {"algorithm": "block_inclusive_scan", "dtype": "float32", "op": "user", "user_op": "cj_user_absmax",
     "block": 128, "items_per_thread": 2},
    {"algorithm": "warp_allreduce", "dtype": "float32", "op": "user", "user_op": "cj_user_absmax", "block": 64},
]
for _arr in LOAD_STORE_ARRANGEMENTS:
    for _alg, _dt in (("block_load", "float32"), ("block_store", "int64")):
        for _partial in (0, 37):
            GPU_CASES.append({"algorithm": _alg, "dtype": _dt, "block": 128, "items_per_thread": 4,
                              "arrangement": _arr, "_valid": 512 - _partial})
GPU_IDS = [spec_id(s) + (f"-{s.get('arrangement')}-v{s['_valid']}" if "_valid" in s else
                         f"-{s.get('arrangement', '')}{s.get('user_op', '')}") for s in GPU_CASES]


def _cub_spec(case):
    return {k: v for k, v in case.items() if not k.startswith("_")}


def build_gpu_case(case, toolkit):
    spec = _cub_spec(case)
    desc = core.cub_describe(spec)
    ltoir, temp_bytes, temp_align, _ = core.cub_ltoir(spec)
    ir, kparams = gpu_kernel_ir(spec, desc, temp_bytes, temp_align)
    inputs = [("kernel", toolkit.nvvm_to_ltoir(ir)), ("cub", ltoir)]
    if spec.get("op") == "user":
        inputs.append(("user", toolkit.nvvm_to_ltoir(USER_OP)))
    return toolkit.link(inputs), kparams


@pytest.mark.parametrize("case", GPU_CASES, ids=GPU_IDS)
def test_gpu_cases_link(case, toolkit, cache_dir):
    cubin, kparams = build_gpu_case(case, toolkit)
    assert cubin[:4] == b"\x7fELF"
    # the host side of the GPU test is consistent with the kernel's parameters
    bufs, expect = gpu_inputs_and_expected(case, kparams, np.random.default_rng(0))
    assert len(bufs) == len(kparams) and expect


class Driver:
    """The few CUDA driver calls a one-block launch needs, through ctypes."""

    def __init__(self):
        self.cu = cu = ctypes.CDLL("libcuda.so.1")
        P, U64, SZ = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t
        cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(U64), SZ]
        cu.cuMemcpyHtoD_v2.argtypes = [U64, P, SZ]
        cu.cuMemcpyDtoH_v2.argtypes = [P, U64, SZ]
        cu.cuMemFree_v2.argtypes = [U64]
        cu.cuModuleLoadData.argtypes = [ctypes.POINTER(P), ctypes.c_char_p]
        cu.cuModuleGetFunction.argtypes = [ctypes.POINTER(P), P, ctypes.c_char_p]
        cu.cuModuleUnload.argtypes = [P]
        cu.cuLaunchKernel.argtypes = [P] + [ctypes.c_uint] * 7 + [P, P, P]
        self.check(cu.cuInit(0), "cuInit")
        dev, ctx = ctypes.c_int(), P()
        self.check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    @staticmethod
    def check(rc, what):
        assert rc == 0, f"{what} failed with CUresult {rc}"

    def launch(self, cubin, block, arrays):
        cu = self.cu
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(cu.cuModuleLoadData(ctypes.byref(mod), cubin), "cuModuleLoadData")
        ptrs = []
        try:
            self.check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"cj_test_kernel"), "cuModuleGetFunction")
            for a in arrays:
                d = ctypes.c_uint64()
                self.check(cu.cuMemAlloc_v2(ctypes.byref(d), max(a.nbytes, 8)), "cuMemAlloc")
                ptrs.append(d)
                self.check(cu.cuMemcpyHtoD_v2(d, a.ctypes.data, a.nbytes), "cuMemcpyHtoD")
            params = (ctypes.c_void_p * len(ptrs))(*[ctypes.addressof(d) for d in ptrs])
            bx, by, bz = _dims(block)
            self.check(cu.cuLaunchKernel(fn, 1, 1, 1, bx, by, bz, 0, None, params, None), "cuLaunchKernel")
            self.check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
            out = []
            for a, d in zip(arrays, ptrs):
                host = np.empty_like(a)
                self.check(cu.cuMemcpyDtoH_v2(host.ctypes.data, d, a.nbytes), "cuMemcpyDtoH")
                out.append(host)
            return out
        finally:
            for d in ptrs:
                cu.cuMemFree_v2(d)
            cu.cuModuleUnload(mod)


@pytest.fixture(scope="session")
def driver():
    return Driver()


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=GPU_IDS)
def test_gpu_results_match_numpy(case, toolkit, driver, cache_dir):
    cubin, kparams = build_gpu_case(case, toolkit)
    seed = int.from_bytes(os.urandom(4), "little")   # fresh data each run; the seed is in any failure
    bufs, expect = gpu_inputs_and_expected(case, kparams, np.random.default_rng(seed))
    out = driver.launch(cubin, case["block"], bufs)
    for index, (want, mask) in expect.items():
        got = out[index]
        name = f"{kparams[index]} (seed {seed})"
        if np.issubdtype(want.dtype, np.floating) and case.get("op", "sum") == "sum":
            scale = np.abs(bufs[0]).sum() if bufs[0].dtype == want.dtype else 1.0
            tol = (1e-5 if want.dtype == np.float32 else 1e-12) * max(scale, 1.0)
            np.testing.assert_allclose(got[mask], want[mask], rtol=0, atol=tol, err_msg=name)
        else:
            np.testing.assert_array_equal(got[mask], want[mask], err_msg=name)


# ---- a toolkit that is missing or incomplete --------------------------------------------------

MISSING = textwrap.dedent("""
    import sys
    import cudajit._core as core
    from cudajit.errors import ToolchainError
    try:
        core.cub_ltoir({"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": 32})
    except ToolchainError as e:
        print("ToolchainError:", e)
        sys.exit(0)
    sys.exit(1)
""")


@pytest.mark.parametrize("env,message", [
    ({"CUDAJIT_NVRTC": "/nonexistent/libnvrtc.so"}, "CUDAJIT_NVRTC names a missing file"),
    ({"CUDAJIT_CCCL_INCLUDE": "/tmp"}, "has no cub/block/block_reduce.cuh"),
], ids=["nvrtc", "cccl"])
def test_missing_toolkit_parts_raise_toolchain_error(env, message, tmp_path):
    full = dict(os.environ, CUDAJIT_CACHE_DIR=str(tmp_path), **env,
                PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(core.__file__)),
                                            os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", MISSING], env=full, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert message in r.stdout
