"""The golden test runner: case files tests/ir/*.txt in the shape of Cinder's hir_tests.

A case file is a free-form comment, then sections, each opened by a line
``--- Name ---``::

    Folding floor division of negative ints.
    --- Input ---
    func f() -> i64
    bb0:
      ...
    --- Passes ---
    fold
    dce
    --- Expected ---
    func f() -> i64
    ...

Sections:

Input         IR text (it starts with ``func``) or Python source (anything
              else; the last top-level ``def`` is the function, unless a
              ``Function`` section names it).
Signature     Python cases: argument types in numba spelling,
              ``float32, float32[:], float32[:]``. Absent: the untyped
              (decoded) IR is the output.
Function      Python cases: the name of the function to compile (a
              dispatcher is unwrapped through its ``py_func``).
Passes        pass names, one per line or comma separated (``default`` is the
              default pipeline). Absent for IR input: the case checks that the
              input parses and verifies, and the output is the printed IR.
Expected      the printed IR, or ``error: <message>`` when a stage rejects the
              input. ``Expected 3.10`` ... ``Expected 3.13``
              hold output that differs with the interpreter's bytecode (or
              with the source positions CPython gives it); they win over
              ``Expected``. An IR case with no Passes and no Expected section
              must print back exactly as its Input (a round trip).
              3.10's bytecode has source lines and no columns: there, a
              Python case without an ``Expected 3.10`` section is compared with its
              ``Expected`` (else ``Expected 3.11``) output, columns removed.

IR input is typed unless a value has the unknown type ``?``.

Setting CUDAJIT_UPDATE_GOLDEN=1 rewrites the expectations in place; review
them as a diff (``git diff tests/ir``).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SECTION_RE = re.compile(r"^--- (.+?) ---\s*$")
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
VERSIONS = ("3.10", "3.11", "3.12", "3.13")
HAS_COLUMNS = sys.version_info >= (3, 11)


def without_columns(text: str) -> str:
    """`@7:16` -> `@7` (an instruction's location; `@file.py:4` stays)."""
    return re.sub(r"(@\d+):\d+", r"\1", text)
UPDATE = os.environ.get("CUDAJIT_UPDATE_GOLDEN", "") not in ("", "0")


class SkipCase(Exception):
    """The stage a case needs is not built yet."""


@dataclass
class CaseFile:
    path: Path
    preamble: str = ""
    sections: list[tuple[str, str]] = field(default_factory=list)   # (name, body), in file order

    @classmethod
    def read(cls, path: Path) -> "CaseFile":
        case = cls(path)
        name, lines, pre = None, [], []
        for line in path.read_text().splitlines(keepends=True):
            m = SECTION_RE.match(line)
            if m:
                if name is not None:
                    case.sections.append((name, "".join(lines)))
                name, lines = m.group(1).strip(), []
            elif name is None:
                pre.append(line)
            else:
                lines.append(line)
        if name is not None:
            case.sections.append((name, "".join(lines)))
        case.preamble = "".join(pre)
        return case

    def get(self, name: str) -> str | None:
        for n, body in self.sections:
            if n == name:
                return body
        return None

    def set(self, name: str, body: str) -> None:
        for i, (n, _) in enumerate(self.sections):
            if n == name:
                self.sections[i] = (name, body)
                return
        self.sections.append((name, body))

    def remove(self, name: str) -> None:
        self.sections = [(n, b) for n, b in self.sections if n != name]

    def write(self) -> None:
        out = [self.preamble]
        for name, body in self.sections:
            if body and not body.endswith("\n"):
                body += "\n"
            out.append(f"--- {name} ---\n{body}")
        self.path.write_text("".join(out))

    # -- what the case asks for --

    @property
    def input(self) -> str:
        text = self.get("Input")
        if text is None:
            raise ValueError(f"{self.path.name}: no '--- Input ---' section")
        return text

    @property
    def is_python(self) -> bool:
        for line in self.input.splitlines():
            s = line.strip()
            if s and not s.startswith("#"):
                return not s.startswith("func ")
        return False

    @property
    def passes(self) -> list[str] | None:
        text = self.get("Passes")
        if text is None:
            return None
        return [p for p in re.split(r"[\s,]+", text) if p]

    def expected_section(self) -> str | None:
        """The section this interpreter compares with (None: none yet)."""
        if self.get(f"Expected {VERSION}") is not None:
            return f"Expected {VERSION}"
        if self.get("Expected") is not None:
            return "Expected"
        if not HAS_COLUMNS and self.get("Expected 3.11") is not None:
            return "Expected 3.11"
        return None

    def borrows_expectation(self, section: str | None) -> bool:
        """Whether this interpreter compares with output recorded under
        columns it does not have (3.10 reading another version's section)."""
        return (not HAS_COLUMNS and self.is_python and section is not None
                and section != f"Expected {VERSION}")


def split_signature(text: str) -> list[str]:
    """'float32, float32[:, ::1], UniTuple(int64, 2)' -> three type strings."""
    out, depth, cur = [], 0, ""
    for ch in text.strip():
        if ch in "[({":   # braces: a record's IR text (record{x: f32 @0, ...})
            depth += 1
        elif ch in "])}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def is_untyped_ir(text: str) -> bool:
    return re.search(r":\?", text) is not None


def load_python_function(case: CaseFile):
    source = case.input
    filename = case.path.stem + ".py"
    namespace: dict = {"__name__": "golden_" + case.path.stem}
    exec(compile(source, filename, "exec"), namespace)
    name = (case.get("Function") or "").strip()
    if not name:
        defs = [n.name for n in ast.parse(source).body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not defs:
            raise ValueError(f"{case.path.name}: the Input defines no function")
        name = defs[-1]
    fn = namespace[name]
    # A decorated kernel (a dispatcher) stands for its Python function.
    return getattr(fn, "py_func", fn)


def run_case(case: CaseFile, core) -> str:
    """What the pipeline prints for the case: IR text, or 'error: <message>'."""
    from cudajit.errors import CompileError

    passes = case.passes
    try:
        if case.is_python:
            golden_ir = getattr(core, "golden_ir", None)
            if golden_ir is None:
                raise SkipCase("Python-source golden cases need _core.golden_ir "
                               "(decoder + type inference), not on this branch yet")
            fn = load_python_function(case)
            sig = case.get("Signature")
            types = split_signature(sig) if sig is not None else []
            text = golden_ir(fn, types)
            if passes:
                text = core.run_passes(text, passes, bool(types))
            return text
        text = case.input
        typed = not is_untyped_ir(text)
        if passes is None:
            problem = core.verify_ir(text, typed)
            return f"error: {problem}\n" if problem else core.parse_print_ir(text)
        return core.run_passes(text, passes, typed)
    except CompileError as e:
        return f"error: {e.message}\n"


def check_case(path: Path, core) -> None:
    """Runs one case file; asserts (or, with CUDAJIT_UPDATE_GOLDEN=1, rewrites)
    its expectation."""
    case = CaseFile.read(path)
    got = run_case(case, core)
    section = case.expected_section()
    round_trip = not case.is_python and case.passes is None and section is None
    if round_trip:
        want = case.input
        assert got == want, f"{path.name}: the IR does not print back as written\n" + diff(want, got)
        return
    want = case.get(section) if section else None
    if want is not None and case.borrows_expectation(section):
        want = without_columns(want)
    if want == got:
        return
    if UPDATE:
        # 3.10 reading 3.11's section records its own beside it.
        borrowed_311 = case.borrows_expectation(section) and section != "Expected"
        update_expectation(case, None if borrowed_311 else section, got)
        case.write()
        return
    if want is None:
        raise AssertionError(f"{path.name}: no '--- Expected ---' section; "
                             "run with CUDAJIT_UPDATE_GOLDEN=1 and review the diff")
    raise AssertionError(f"{path.name} [{section}] differs (CUDAJIT_UPDATE_GOLDEN=1 "
                         "rewrites it):\n" + diff(want, got))


def update_expectation(case: CaseFile, section: str | None, got: str) -> None:
    if section is None:
        # A case already split by version gets this version's section.
        split = any(case.get(f"Expected {v}") is not None for v in VERSIONS)
        case.set(f"Expected {VERSION}" if split else "Expected", got)
    elif section == "Expected" and case.is_python:
        # Output of a Python case now differs by version: keep what the other
        # version produced (it passed there) and record this one's.
        old = case.get("Expected")
        case.remove("Expected")
        for v in VERSIONS:
            if v != VERSION and case.get(f"Expected {v}") is None:
                case.set(f"Expected {v}", old)
        case.set(f"Expected {VERSION}", got)
    else:
        case.set(section, got)


def diff(want: str, got: str) -> str:
    import difflib
    return "".join(difflib.unified_diff(want.splitlines(keepends=True), got.splitlines(keepends=True),
                                        "expected", "actual"))


# ---- the tests ----------------------------------------------------------------

import pytest  # noqa: E402

CASE_DIR = Path(__file__).parent / "ir"
CASES = sorted(CASE_DIR.glob("*.txt"))


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("cudajit._core", reason="cudajit._core is not built")


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(path, core):
    try:
        check_case(path, core)
    except SkipCase as why:
        pytest.skip(str(why))


def test_cases_exist():
    assert len(CASES) >= 10, f"golden cases missing from {CASE_DIR}"


# ---- the runner's own behaviour --------------------------------------------------

IR_CASE = """Doc line.
--- Input ---
func f() -> i64
bb0:
  v0:i64 = const 6
  v1:i64 = const 7
  v2:i64 = mul v0, v1
  ret v2
--- Passes ---
fold
dce
"""


def test_update_fills_a_missing_expectation(tmp_path, core, monkeypatch):
    path = tmp_path / "case.txt"
    path.write_text(IR_CASE)
    with pytest.raises(AssertionError, match="no '--- Expected ---' section"):
        check_case(path, core)
    monkeypatch.setattr(sys.modules[__name__], "UPDATE", True)
    check_case(path, core)
    text = path.read_text()
    assert text.startswith(IR_CASE)
    assert text.endswith("--- Expected ---\nfunc f() -> i64\nbb0:\n  v2:i64 = const 42\n  ret v2\n")
    monkeypatch.setattr(sys.modules[__name__], "UPDATE", False)
    check_case(path, core)   # now passes as written


def test_a_wrong_expectation_fails_with_a_diff(tmp_path, core):
    path = tmp_path / "case.txt"
    path.write_text(IR_CASE + "--- Expected ---\nfunc f() -> i64\nbb0:\n  v2:i64 = const 41\n  ret v2\n")
    with pytest.raises(AssertionError, match=r"(?s)differs.*-  v2:i64 = const 41.*\+  v2:i64 = const 42"):
        check_case(path, core)


def test_update_splits_a_python_expectation_by_version(tmp_path, monkeypatch):
    class FakeCore:
        @staticmethod
        def golden_ir(fn, types):
            assert fn.__name__ == "g" and types == ["float32[:, ::1]", "int64"]
            return "new output\n"

    path = tmp_path / "py_case.txt"
    path.write_text("--- Input ---\ndef g(a, n):\n    return n\n"
                    "--- Signature ---\nfloat32[:, ::1], int64\n--- Expected ---\nold output\n")
    monkeypatch.setattr(sys.modules[__name__], "UPDATE", True)
    check_case(path, FakeCore)
    case = CaseFile.read(path)
    assert case.get("Expected") is None
    assert case.get(f"Expected {VERSION}") == "new output\n"
    other = [v for v in VERSIONS if v != VERSION]
    assert [case.get(f"Expected {v}") for v in other] == ["old output\n"] * len(other)


def test_update_adds_this_versions_section_to_a_case_split_by_version(tmp_path, monkeypatch):
    # A case with sections for the other versions only (a version added
    # later) gets `Expected <this version>`, not a catch-all `Expected`.
    class FakeCore:
        @staticmethod
        def golden_ir(fn, types):
            return "this version\n"

    others = [v for v in VERSIONS if v != VERSION]
    path = tmp_path / "py_case.txt"
    path.write_text("--- Input ---\ndef g(a):\n    return a\n" +
                    "".join(f"--- Expected {v} ---\nold {v}\n" for v in others))
    monkeypatch.setattr(sys.modules[__name__], "UPDATE", True)
    check_case(path, FakeCore)
    case = CaseFile.read(path)
    assert case.get("Expected") is None
    assert case.get(f"Expected {VERSION}") == "this version\n"
    assert [case.get(f"Expected {v}") for v in others] == [f"old {v}\n" for v in others]


def test_signature_split_respects_brackets():
    assert split_signature("float32, float32[:, ::1], UniTuple(int64, 2)") == [
        "float32", "float32[:, ::1]", "UniTuple(int64, 2)"]
