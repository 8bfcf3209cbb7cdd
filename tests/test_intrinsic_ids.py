"""Intrinsics by id (ir/intrinsics.h): the parser maps each name of
intrinsics.def to its enum id (a hashed lookup) and the printer spells the
id's name back, so every row round-trips; an unknown name keeps its spelling
only for the verifier's message."""

import re
from pathlib import Path

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")

DEF = Path(__file__).parent.parent / "compiler" / "ir" / "intrinsics.def"
ROW = re.compile(r'^X\((\w+),\s*"([^"]+)",\s*(-?\d+),\s*(\w+),\s*(\d+),')


def rows():
    out = [ROW.match(line).groups() for line in DEF.read_text().splitlines() if ROW.match(line)]
    assert len(out) > 90
    return out


def test_family_and_access_columns():
    for enum, name, arity, family, access in rows():
        # Element accesses with values are the atomics and the cache-hinted
        # stores; cas carries two values (hinted loads carry none: 0).
        stores = family == "Atomic" or (family == "Hint" and name.startswith("st."))
        assert (int(access) > 0) == stores, name
        assert int(access) == (2 if name == "atomic_cas" else 1 if stores else 0), name
        if name.startswith("sreg."):
            assert family == "Sreg", name


@pytest.mark.parametrize("name", [r[1] for r in rows()])
def test_every_name_round_trips(name):
    text = f"func f() -> none\nbb0:\n  v0:? = intrinsic {name}()\n  v1:? = const none\n  ret v1\n"
    assert f"intrinsic {name}()" in core.parse_print_ir(text)


def test_unknown_name_reaches_the_verifier():
    text = "func f() -> none\nbb0:\n  v0:i32 = intrinsic sreg.nope()\n  v1:none = const none\n  ret v1\n"
    assert "intrinsic sreg.nope()" in core.parse_print_ir(text)
    assert core.verify_ir(text, True) == "f:bb0:v0: unknown intrinsic 'sreg.nope'"
