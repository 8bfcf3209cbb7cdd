"""Runs cudajit device functions of scalars on the host, to check values on
machines without a GPU.

The function's typed IR goes through cudajit's NVVM emitter as usual; the
NVVM IR text (LLVM IR) is then JIT-compiled for the CPU by llvmlite (the
LLVM that numba ships), with each libdevice function (__nv_cos, ...) bound
to the C math library's function of the same name. Only functions of
scalars (ints, floats, bools, complex numbers) and without SIMT intrinsics
run this way; libm and libdevice may differ in the last bit, so compare
with a tolerance.

    f = host_function(my_device_fn, ["complex128", "int64"])
    f(1 + 2j, 3)          # -> Python complex / float / int / bool

backend="llvm" runs what the LLVM back end's optimiser makes of the module
instead (issue 16): the text, with the host entry that calls the function,
goes through the plugin's O3 pipeline for the NVPTX target first
(_core.llvm_optimize; libdevice stays calls, bound to libm as above), so the
fuzzer checks LLVM's optimiser on cudajit's IR against CPython.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import re

import pytest

llvm = pytest.importorskip("llvmlite.binding")

from cudajit import _core  # noqa: E402

_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
_KEEP = []          # execution engines live as long as the functions they made
_READY = []

_SCALARS = {   # numba name -> (LLVM type, kind)
    "bool": ("i1", "b"), "boolean": ("i1", "b"),
    "int8": ("i8", "i"), "int16": ("i16", "i"), "int32": ("i32", "i"), "int64": ("i64", "i"),
    "uint8": ("i8", "u"), "uint16": ("i16", "u"), "uint32": ("i32", "u"), "uint64": ("i64", "u"),
    "float32": ("float", "f"), "float64": ("double", "f"),
    "complex64": ("{float, float}", "c"), "complex128": ("{double, double}", "c"),
}


def _init():
    if not _READY:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _READY.append(True)


def _bind_libdevice(text: str) -> None:
    for name in sorted(set(re.findall(r"@(__nv_\w+)\(", text))):
        fn = getattr(_LIBM, name[len("__nv_"):])
        llvm.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)


def _host_text(nvvm: str, metadata: bool = False) -> str:
    """The module without its GPU target and NVVM's named nodes; metadata=True
    keeps the numbered nodes (LLVM's optimiser attaches loop metadata)."""
    drop = ("target ", "!nvvm") if metadata else ("target ", "!")
    keep = [ln for ln in nvvm.splitlines() if not ln.startswith(drop) and "!nvvm" not in ln]
    return "\n".join(keep)


_ARRAY = re.compile(r"^(\w+)\[(::1|:)\]$")   # a 1-d array: "float64[::1]" (C) or "int64[:]" (A)


def _load(slot: str, ty: str, kind: str, k: int, lines: list) -> str:
    """Loads argument k (32-byte slots of doubles / int64s) as an LLVM value."""
    p = f"%p{k}"
    lines.append(f"  {p} = getelementptr [4 x double], ptr %args, i64 {k}")
    if kind == "a":
        # cudajit's 1-d array: {data pointer, [shape], [stride in bytes]}, by value
        for i, what in enumerate(("data", "n", "stride")):
            lines.append(f"  %{what}{k}.p = getelementptr i64, ptr {p}, i64 {i}")
            lines.append(f"  %{what}{k} = load i64, ptr %{what}{k}.p")
        lines.append(f"  %ptr{k} = inttoptr i64 %data{k} to ptr")
        lines.append(f"  %s{k}.0 = insertvalue {ty} undef, ptr %ptr{k}, 0")
        lines.append(f"  %s{k}.1 = insertvalue {ty} %s{k}.0, i64 %n{k}, 1, 0")
        lines.append(f"  %a{k} = insertvalue {ty} %s{k}.1, i64 %stride{k}, 2, 0")
        return f"%a{k}"
    if kind == "c":
        part = "float" if "float," in ty else "double"
        lines.append(f"  %re{k}.d = load double, ptr {p}")
        lines.append(f"  {p}i = getelementptr double, ptr {p}, i64 1")
        lines.append(f"  %im{k}.d = load double, ptr {p}i")
        re_, im_ = f"%re{k}.d", f"%im{k}.d"
        if part == "float":
            lines.append(f"  %re{k} = fptrunc double {re_} to float")
            lines.append(f"  %im{k} = fptrunc double {im_} to float")
            re_, im_ = f"%re{k}", f"%im{k}"
        lines.append(f"  %z{k}.0 = insertvalue {ty} undef, {part} {re_}, 0")
        lines.append(f"  %a{k} = insertvalue {ty} %z{k}.0, {part} {im_}, 1")
        return f"%a{k}"
    if kind == "f":
        lines.append(f"  %d{k} = load double, ptr {p}")
        if ty == "float":
            lines.append(f"  %a{k} = fptrunc double %d{k} to float")
            return f"%a{k}"
        return f"%d{k}"
    lines.append(f"  %q{k} = load i64, ptr {p}")
    if ty == "i64":
        return f"%q{k}"
    lines.append(f"  %a{k} = trunc i64 %q{k} to {ty}")
    return f"%a{k}"


def _store(ret: str, value: str, lines: list) -> str:
    """Stores the result into %out as doubles / an int64; returns its kind."""
    if ret.startswith("{"):
        part = "float" if "float," in ret else "double"
        for i in (0, 1):
            lines.append(f"  %r{i} = extractvalue {ret} {value}, {i}")
            v = f"%r{i}"
            if part == "float":
                lines.append(f"  %r{i}.d = fpext float %r{i} to double")
                v = f"%r{i}.d"
            lines.append(f"  %o{i} = getelementptr double, ptr %out, i64 {i}")
            lines.append(f"  store double {v}, ptr %o{i}")
        return "c"
    if ret in ("float", "double"):
        v = value
        if ret == "float":
            lines.append(f"  %r.d = fpext float {value} to double")
            v = "%r.d"
        lines.append(f"  store double {v}, ptr %out")
        return "f"
    if ret == "i1":
        lines.append(f"  %r.q = zext i1 {value} to i64")
    elif ret == "i64":
        lines.append(f"  %r.q = add i64 {value}, 0")
    else:
        lines.append(f"  %r.q = sext {ret} {value} to i64")
    lines.append("  store i64 %r.q, ptr %out")
    return "b" if ret == "i1" else "i"


_FPTOUI = re.compile(r"^(\s*%[\w.]+) = fptoui (double|float) (\S+) to (i\d+)$", re.M)


def _outline_fptoui(text: str) -> str:
    """Each fptoui as a call of a function that does it, out of line.
    llvmlite 0.50's LLVM 22 (an assertions build) aborts the process in x86
    instruction selection, at any optimisation level, on valid IR: uitofp of
    umin(fptoui x, 0) (`float(min(np.uint64(0), np.uint64(x)))`, found by
    scripts/fuzz.py; cudajit's NVVM and LLVM 19 back ends compile it). Behind
    a call the selector cannot see the pattern; the conversion is the same."""
    used = set()

    def call(m):
        used.add((m.group(2), m.group(4)))
        return f"{m.group(1)} = call {m.group(4)} @__host_fptoui_{m.group(2)}_{m.group(4)}({m.group(2)} {m.group(3)})"
    text = _FPTOUI.sub(call, text)
    for src, dst in sorted(used):
        text += (f"\ndefine internal {dst} @__host_fptoui_{src}_{dst}({src} %v) noinline {{\n"
                 f"  %r = fptoui {src} %v to {dst}\n  ret {dst} %r\n}}\n")
    return text


def _arg_type(t: str):
    m = _ARRAY.match(t)
    if m:
        return "{ptr, [1 x i64], [1 x i64]}", "a"
    return _SCALARS[t]


def host_function(pyfunc, types, backend="nvvm"):
    """A Python callable running `pyfunc` (compiled by cudajit for `types`) on the CPU."""
    _init()
    typed = _core.infer_ir(pyfunc, list(types))
    nvvm = _core.emit_nvvm_from_ir(typed, backend=backend)
    text = _host_text(nvvm)
    name = re.search(r"^func ([^\s(]+)\(", typed, re.M).group(1)
    m = re.search(r"^define (\{[^}]*\}|\S+) @\"?" + re.escape(name) + r"\"?\(", text, re.M)
    ret = m.group(1)
    lines = ["define void @__host_entry(ptr %args, ptr %out) {", "entry:"]
    vals = []
    for k, t in enumerate(types):
        ty, kind = _arg_type(t)
        vals.append(f"{ty} {_load('', ty, kind, k, lines)}")
    callee = m.group(0)[len("define ") + len(ret) + 1:-1]
    lines.append(f"  %res = call {ret} {callee}({', '.join(vals)})")
    out_kind = _store(ret, "%res", lines)
    lines += ["  ret void", "}"]
    full = text + "\n" + "\n".join(lines) + "\n"
    if backend == "llvm":
        # the entry keeps the (internal) function alive through LLVM's O3
        full = _host_text(_core.llvm_optimize(full), metadata=True)
    full = _outline_fptoui(full)
    _bind_libdevice(full)
    mod = llvm.parse_assembly(full)
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    _KEEP.append(engine)
    entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(engine.get_function_address("__host_entry"))

    def call(*args):
        buf = (ctypes.c_double * (4 * max(1, len(args))))()
        qbuf = ctypes.cast(buf, ctypes.POINTER(ctypes.c_int64))
        for k, (a, t) in enumerate(zip(args, types)):
            kind = _arg_type(t)[1]
            if kind == "a":   # a numpy array of the declared dtype, 1-d; it must outlive the call
                m = _ARRAY.match(t)
                if a.ndim != 1 or a.dtype.name != m.group(1) or (m.group(2) == "::1" and a.strides[0] != a.itemsize):
                    raise TypeError(f"argument {k}: a 1-d {t} numpy array expected, got {a.dtype}{a.shape}")
                qbuf[4 * k], qbuf[4 * k + 1], qbuf[4 * k + 2] = a.ctypes.data, a.shape[0], a.strides[0]
            elif kind == "c":
                buf[4 * k], buf[4 * k + 1] = complex(a).real, complex(a).imag
            elif kind == "f":
                buf[4 * k] = float(a)
            else:
                qbuf[4 * k] = int(a) if kind != "u" else int(a) & (2 ** 64 - 1)
        out = (ctypes.c_double * 2)()
        entry(ctypes.addressof(buf), ctypes.addressof(out))
        if out_kind == "c":
            return complex(out[0], out[1])
        if out_kind == "f":
            return out[0]
        q = ctypes.cast(out, ctypes.POINTER(ctypes.c_int64))[0]
        return bool(q) if out_kind == "b" else q
    return call
