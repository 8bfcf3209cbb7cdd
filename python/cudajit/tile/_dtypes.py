"""cuTile's data types: ``ct.float32``, ``ct.bfloat16``, ``ct.int32``...

Each dtype is one immutable object. Inside tile code the bytecode decoder
freezes it to the symbol in ``_cudajit_symbol_``: numpy's name where numpy has
the type (so the compiler's existing dtype handling applies to it) and
``cudajit.tile.<name>`` for the two numpy lacks (bfloat16, tfloat32).
``ir_name`` is the short name the IR text prints (``f32``), or None where the
compiler has no scalar for it yet (docs/tiles.md, "dtypes").
"""

from ._errors import device_only


class DType:
    """A tile element type (cuTile's ``DType``). Immutable; compare with ``is`` or ``==``."""

    __slots__ = ("_name", "_bitwidth", "_category", "_ir_name", "_cudajit_symbol_")

    def __init__(self, name, bitwidth, category, ir_name, symbol):
        self._name = name
        self._bitwidth = bitwidth
        self._category = category     # "bool", "int", "uint", "float", "restricted_float"
        self._ir_name = ir_name
        self._cudajit_symbol_ = symbol

    @property
    def name(self):
        """The dtype's name, as cuTile spells it (``"float32"``)."""
        return self._name

    @property
    def bitwidth(self):
        """The number of bits of one element."""
        return self._bitwidth

    @property
    def category(self):
        """``"bool"``, ``"int"``, ``"uint"``, ``"float"`` or ``"restricted_float"``
        (tfloat32: only a matmul operand, no arithmetic)."""
        return self._category

    @property
    def ir_name(self):
        """The compiler's short name (``"f32"``), or None where it has no scalar yet."""
        return self._ir_name

    def __call__(self, value, /):
        """In tile code: converts a scalar to this dtype. Not callable on the host."""
        raise device_only(f"cudajit.tile.{self._name}")

    def __repr__(self):
        return f"<DType '{self._name}'>"

    def __str__(self):
        return self._name

    def __reduce__(self):
        return (_lookup, (self._name,))

    def __setattr__(self, name, value):
        if hasattr(self, "_cudajit_symbol_"):
            raise AttributeError("DType objects are immutable")
        object.__setattr__(self, name, value)


# One row per dtype: (name, bits, category, IR short name or None, symbol).
_TABLE = (
    ("bool_", 8, "bool", "b1", "numpy.bool_"),
    ("int8", 8, "int", "i8", "numpy.int8"),
    ("int16", 16, "int", "i16", "numpy.int16"),
    ("int32", 32, "int", "i32", "numpy.int32"),
    ("int64", 64, "int", "i64", "numpy.int64"),
    ("uint8", 8, "uint", "u8", "numpy.uint8"),
    ("uint16", 16, "uint", "u16", "numpy.uint16"),
    ("uint32", 32, "uint", "u32", "numpy.uint32"),
    ("uint64", 64, "uint", "u64", "numpy.uint64"),
    ("float16", 16, "float", "f16", "numpy.float16"),
    ("float32", 32, "float", "f32", "numpy.float32"),
    ("float64", 64, "float", "f64", "numpy.float64"),
    # numpy has neither: their symbols are cudajit.tile's own.
    ("bfloat16", 16, "float", "bf16", "cudajit.tile.bfloat16"),
    ("tfloat32", 32, "restricted_float", "tf32", "cudajit.tile.tfloat32"),
)

DTYPES = {row[0]: DType(*row) for row in _TABLE}


def _lookup(name):
    return DTYPES[name]
