"""Layers point down: a stage includes only its own headers and those of the
stages it links (CMakeLists.txt's cj_stage lines, followed transitively).

The build cannot check this by itself: every stage's include path is the
whole compiler/ tree and all stages end up in one _core module, so an
#include of a later stage compiles and links. This test reads the
`#include "..."` lines of compiler/*/ and runtime/ instead."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STAGE_LINE = re.compile(r"^cj_stage\((\w+)\s+([\w/]+)((?:\s+[\w:${}]+)*)\)", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Edges the build allows but the design does not: the launch path (runtime/)
# reaches the compiler through driver/ and the small headers below it, never
# type inference's internals.
FORBIDDEN = {("runtime", "typeinfer")}

# Known upward edges, each to be removed by a change under way. Delete an
# entry when its include goes; an entry that no longer matches an include
# fails the test.
KNOWN_UPWARD = set()


def stages():
    """{stage folder: the stage folders it may include} from CMakeLists.txt:
    the stages its cj_stage line lists, and theirs, transitively."""
    text = (REPO / "CMakeLists.txt").read_text()
    by_name, order = {}, []
    for name, folder, deps in STAGE_LINE.findall(text):
        by_name[name] = (folder, [d for d in deps.split() if d.startswith("cj_")])
        order.append(name)
    assert order[:3] == ["cj_support", "cj_types", "cj_ir"], order

    def below(name, seen):
        for dep in by_name[name][1]:
            assert order.index(dep) < order.index(name), f"{name} links the later stage {dep}"
            if dep not in seen:
                seen.add(dep)
                below(dep, seen)
        return seen

    return {by_name[n][0]: {by_name[d][0] for d in below(n, set())} for n in order}


def stage_of(include, folders):
    """The stage folder an include names ("ir/ir.h" -> compiler/ir), or None."""
    for folder in folders:
        short = folder.removeprefix("compiler/")
        if include.startswith(short + "/"):
            return folder
    return None


def include_edges():
    folders = stages()
    for folder in folders:
        for path in sorted((REPO / folder).glob("*")):
            if path.suffix not in (".h", ".cpp", ".def"):
                continue
            for inc in INCLUDE.findall(path.read_text()):
                target = stage_of(inc, folders)
                if target is not None:
                    yield str(path.relative_to(REPO)), folder, inc, target


def test_stage_order_is_read():
    folders = stages()
    assert folders["compiler/ir"] == {"compiler/types", "compiler/support"}
    assert "compiler/typeinfer" in folders["runtime"]
    assert "compiler/bytecode" not in folders["compiler/passes"]


def test_includes_point_down():
    folders = stages()
    upward, used_exceptions = [], set()
    for path, folder, inc, target in include_edges():
        if target == folder or target in folders[folder]:
            continue
        if (path, inc) in KNOWN_UPWARD:
            used_exceptions.add((path, inc))
            continue
        upward.append(f"{path}: #include \"{inc}\" ({target} is not below {folder})")
    assert not upward, "includes that point up or sideways:\n" + "\n".join(upward)
    assert used_exceptions == KNOWN_UPWARD, (
        f"KNOWN_UPWARD lists includes that are gone: {sorted(KNOWN_UPWARD - used_exceptions)}")


def test_forbidden_edges():
    bad = [f"{path}: #include \"{inc}\"" for path, folder, inc, target in include_edges()
           if (folder.removeprefix("compiler/"), target.removeprefix("compiler/")) in FORBIDDEN]
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_bad_include():
    folders = stages()
    assert stage_of("typeinfer/infer.h", folders) == "compiler/typeinfer"
    assert "compiler/codegen" not in folders["compiler/typeinfer"]
    assert stage_of("vector", folders) is None


def test_llvm_text_only_in_codegen():
    """NVVM IR text is codegen's (behind codegen/nvvm_emitter.h): no other
    stage writes LLVM declarations or definitions."""
    pattern = re.compile(r'"[^"\n]*\b(declare|define)\s+(void|i\d+\b|float|double|half|ptr|%|\{|'
                         r'internal|private|linkonce_odr|weak|"\s*\+)')
    allowed = {"compiler/codegen"}
    found = []
    for folder in [*stages(), "python/src"]:
        if folder in allowed:
            continue
        for path in sorted((REPO / folder).glob("*.cpp")):
            for k, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(REPO)}:{k}: {line.strip()}")
    assert not found, "LLVM IR text outside codegen/:\n" + "\n".join(found)


def test_codegen_behind_its_interface():
    """Outside compiler/codegen/, the code generator is reached through
    codegen/backend.h (and abi.h, the parameter layout): never the NVVM
    writer's own header or functions."""
    allowed = {"codegen/backend.h", "codegen/abi.h"}
    found = []
    for folder in [*stages(), "python/src"]:
        if folder == "compiler/codegen":
            continue
        for path in sorted((REPO / folder).glob("*")):
            if path.suffix not in (".h", ".cpp"):
                continue
            text = path.read_text()
            for inc in INCLUDE.findall(text):
                if inc.startswith("codegen/") and inc not in allowed:
                    found.append(f"{path.relative_to(REPO)}: #include \"{inc}\"")
            for name in ("emitNvvm(", "codegen::kernelSymbol("):
                if name in text:
                    found.append(f"{path.relative_to(REPO)}: calls {name[:-1]}")
    assert not found, "\n".join(found)


def test_the_nvvm_backend_through_the_interface():
    """The driver's back end, through the bindings: its artifact is NVVM
    text that defines the kernel under the symbol the back end names."""
    from cudajit import _core
    ir = "func k(v0:array(f32, 1d, C) x) -> none kernel\nbb0:\n  ret\n"
    text = _core.emit_nvvm_from_ir(ir)
    symbol = _core.kernel_symbol_from_ir(ir)
    assert f"define void @{symbol}(" in text
    assert "nvvm.annotations" in text


def test_llvm_plugin_stands_apart():
    """compiler/llvm_nvptx is the LLVM back end's plugin, not a stage of
    _core: it includes no cudajit header but its own C interface, and only
    the link stage includes that (link/llvm_compile.cpp opens the plugin)."""
    plugin = REPO / "compiler" / "llvm_nvptx"
    ours = {p.name for p in (REPO / "compiler").iterdir() if p.is_dir()}
    for path in sorted(plugin.glob("*.cpp")) + sorted(plugin.glob("*.h")):
        for inc in re.findall(r'#include\s+"([^"]+)"', path.read_text()):
            first = inc.split("/")[0]
            assert inc == "llvm_nvptx/llvm_nvptx.h" or first not in ours | {"runtime", "python"}, \
                f"{path.relative_to(REPO)} includes cudajit's {inc}"
    users = []
    for folder in [*stages(), "python/src"]:
        for path in sorted((REPO / folder).glob("*")):
            if path.suffix in (".cpp", ".h") and re.search(r'#include\s+"llvm_nvptx/', path.read_text()):
                users.append(str(path.relative_to(REPO)))
    assert users == ["compiler/link/llvm_compile.cpp"], users
