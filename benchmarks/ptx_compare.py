"""PTX side by side: the benchmark kernels of bench_kernels.py compiled by
cudajit, numba-cuda and CUDA C++ (NVRTC), with instruction counts of each
kernel and of its loops. Runs on the CPU (no GPU needed): it explains the
device-time ratios of bench_kernels.py before a GPU run.

    python benchmarks/ptx_compare.py [--arch 90] [--only stencil5,reduce_tree] [--show KERNEL]

Columns, per implementation: `instrs` counts every PTX instruction of the
kernel (labels, directives and declarations excluded); for each loop (a
label with a backward branch to it) the innermost loops are listed as
`loop: n (i64 a, selp s, div d, ld l)`: its instructions, how many are
64-bit integer arithmetic, selects (index wraparound, floor fix-ups),
divisions/remainders, and global loads (`.nc`: through the read-only path).
`--show KERNEL` prints the three PTX listings of one kernel.

C++ is compiled by libnvrtc through ctypes (the toolkit's, found next to
CUDA_HOME or /usr/local/cuda), with bench_kernels.py's options; numba-cuda
with numba.cuda.compile_ptx(cc=(9, 0)). A missing one is a note, not an error.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_kernels as B  # noqa: E402

# numba spelling of each kernel's argument types, as bench_kernels.py passes them.
SIGNATURES = {
    "axpy": ["float32", "float32[::1]", "float32[::1]"],
    "hist_shared": ["int32[::1]", "int32[::1]"],
    "matmul_tiled": ["float32[:, ::1]", "float32[:, ::1]", "float32[:, ::1]"],
    "stencil5": ["float32[:, ::1]", "float32[:, ::1]"],
    "reduce_tree": ["float32[::1]", "float32[::1]"],
}

INSTR = re.compile(r"^\s*(@!?%p\d+\s+)?([a-z][\w.]*)\s")
LABEL = re.compile(r"^(\$?[\w$]+):")
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?[\w$]+);")


# ---------------------------------------------------------------------------
# Compilers
# ---------------------------------------------------------------------------

def port(module, fn):
    """fn with its global `cuda` bound to `module` (bench_kernels.jit_with's port)."""
    return type(fn)(fn.__code__, dict(fn.__globals__, cuda=module), fn.__name__)


def cudajit_ptx(name, arch):
    import cudajit
    sig = "void(" + ", ".join(SIGNATURES[name]) + ")"
    return cudajit.compile_ptx(port(cudajit, getattr(B, name)), sig, arch=f"sm_{arch}")[0]


def numba_ptx(name, arch):
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack   # numba-cuda 0.30 with numpy >= 2.5
    from numba import cuda
    sig = "void(" + ", ".join(SIGNATURES[name]) + ")"
    return cuda.compile_ptx(port(cuda, getattr(B, name)), sig, cc=(arch // 10, arch % 10))[0]


def nvrtc_library():
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    for root in roots:
        for sub in ("lib64", "lib"):
            p = Path(root) / sub / "libnvrtc.so"
            if root and p.exists():
                return ctypes.CDLL(str(p))
    return ctypes.CDLL("libnvrtc.so")


def cpp_ptx_all(arch):
    """{kernel name: PTX of that entry} for benchmarks/kernels_cpp/kernels.cu."""
    lib = nvrtc_library()
    src = (HERE / "kernels_cpp" / "kernels.cu").read_bytes()
    prog = ctypes.c_void_p()
    check = lambda rc, what: rc == 0 or (_ for _ in ()).throw(RuntimeError(f"NVRTC {what} failed ({rc})"))  # noqa: E731
    check(lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None), "create")
    opts = [b"-std=c++17", b"-dopt=on", f"-arch=compute_{arch}".encode(),
            f"-DTPB={B.TPB}".encode(), f"-DNBINS={B.NBINS}".encode(), f"-DTILE={B.TILE}".encode()]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    if rc != 0:
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(f"NVRTC failed: {log.value.decode(errors='replace')}")
    size = ctypes.c_size_t()
    check(lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "ptx size")
    buf = ctypes.create_string_buffer(size.value)
    check(lib.nvrtcGetPTX(prog, buf), "ptx")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    ptx = buf.value.decode()
    return {n: entry(ptx, n) for n in SIGNATURES}


# ---------------------------------------------------------------------------
# PTX analysis
# ---------------------------------------------------------------------------

def entry(ptx, name=None):
    """The body of one .entry (the first, or the one whose name is `name`)."""
    pat = r"\.entry\s+" + (re.escape(name) + r"\s*\(" if name else r"\S+\s*\(")
    m = re.search(pat, ptx)
    if not m:
        return ""
    start = ptx.index("{", m.end())
    depth, i = 0, start
    while i < len(ptx):
        depth += ptx[i] == "{"
        depth -= ptx[i] == "}"
        if depth == 0:
            return ptx[start:i + 1]
        i += 1
    return ptx[start:]


def instructions(lines):
    """The instruction lines (opcode known) among `lines`."""
    out = []
    for ln in lines:
        s = ln.split("//")[0]
        m = INSTR.match(s)
        if m and not s.strip().startswith("."):
            out.append((m.group(2), s.strip()))
    return out


def loops(body):
    """Innermost loops: (label, lines) for each label with a later branch back to it
    and no other such loop inside."""
    lines = body.splitlines()
    labels = {}
    found = []
    for i, ln in enumerate(lines):
        m = LABEL.match(ln.strip())
        if m:
            labels[m.group(1)] = i
        b = BRANCH.search(ln)
        if b and b.group(1) in labels and labels[b.group(1)] <= i:
            found.append((labels[b.group(1)], i, b.group(1)))
    inner = [f for f in found if not any(g is not f and f[0] <= g[0] and g[1] <= f[1] for g in found)]
    return [(name, lines[s:e + 1]) for s, e, name in inner]


def tally(ins):
    ops = [op for op, _ in ins]
    i64 = sum(1 for op in ops if re.match(r"(add|sub|mul|mad|shl|shr|and|or|xor|not|neg|max|min|cvt)\.", op)
              and re.search(r"\.(s64|u64|b64)\b", op))
    selp = sum(1 for op in ops if op.startswith("selp"))
    div = sum(1 for op in ops if op.startswith(("div.", "rem.")) and not op.startswith(("div.rn.f", "div.full", "div.approx")))
    ld = sum(1 for op in ops if op.startswith("ld.global"))
    nc = sum(1 for op in ops if op.startswith("ld.global.nc"))
    return {"n": len(ops), "i64": i64, "selp": selp, "div": div, "ld": ld, "nc": nc}


def describe(body):
    total = tally(instructions(body.splitlines()))
    parts = []
    for label, lines in loops(body):
        t = tally(instructions(lines))
        ld = f"ld {t['ld']}" + (f" ({t['nc']} nc)" if t["nc"] else "")
        parts.append(f"{label.lstrip('$')}: {t['n']} (i64 {t['i64']}, selp {t['selp']}, div {t['div']}, {ld})")
    return total, parts


# ---------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--only", help="comma-separated kernel names (" + ", ".join(SIGNATURES) + ")")
    ap.add_argument("--show", help="print the PTX of this kernel from every compiler")
    a = ap.parse_args(argv)
    names = [n for n in SIGNATURES if not a.only or n in a.only.split(",")]

    impls = {}
    try:
        cpp = cpp_ptx_all(a.arch)
        impls["cuda_cpp"] = lambda n: cpp[n]
    except Exception as e:  # noqa: BLE001
        print(f"note: CUDA C++ column skipped: {e}", file=sys.stderr)
    impls["cudajit"] = lambda n: entry(cudajit_ptx(n, a.arch))
    impls["numba"] = lambda n: entry(numba_ptx(n, a.arch))

    for n in names:
        print(f"== {n}({', '.join(SIGNATURES[n])})")
        for impl, get in impls.items():
            try:
                body = get(n)
            except Exception as e:  # noqa: BLE001
                print(f"   {impl:9s} skipped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
            total, parts = describe(body)
            print(f"   {impl:9s} instrs {total['n']:4d} (i64 {total['i64']:3d}, selp {total['selp']}, "
                  f"div {total['div']}, ld.global {total['ld']}, nc {total['nc']})")
            for p in parts:
                print(f"   {'':9s}   loop {p}")
            if a.show == n:
                print(body)


if __name__ == "__main__":
    main()
