"""cuTile's enumerations: padding of ragged loads, rounding, memory order and scope.

Values are cuTile's, so code that prints or compares them behaves the same.
Inside tile code a member freezes to the symbol ``cudajit.tile.<Enum>.<MEMBER>``
and a class to ``cudajit.tile.<Enum>`` (``_cudajit_symbol_``, from a mixin and
the metaclass: Enum reserves ``_sunder_`` names in a class body).
"""

from enum import Enum, EnumMeta


class _SymbolicEnum(EnumMeta):
    """The enum classes themselves freeze to ``cudajit.tile.<Enum>`` too (a
    kernel may alias one: ``from cuda.tile import RoundingMode as RMd``)."""

    @property
    def _cudajit_symbol_(cls):
        return f"cudajit.tile.{cls.__name__}"


class _MemberSymbol:
    """A member freezes to ``cudajit.tile.<Enum>.<MEMBER>``."""

    @property
    def _cudajit_symbol_(self):
        return f"cudajit.tile.{type(self).__name__}.{self.name}"


class PaddingMode(_MemberSymbol, Enum, metaclass=_SymbolicEnum):
    """What a load puts in the elements of a tile that lie outside the array."""
    UNDETERMINED = "undetermined"   #: any value (the fastest: no select)
    ZERO = "zero"                   #: 0
    NEG_ZERO = "neg_zero"           #: -0.0
    NAN = "nan"                     #: NaN (float dtypes)
    POS_INF = "pos_inf"             #: +inf (float dtypes)
    NEG_INF = "neg_inf"             #: -inf (float dtypes): the identity of max


class RoundingMode(_MemberSymbol, Enum, metaclass=_SymbolicEnum):
    """The rounding of a floating-point operation or conversion."""
    RN = "nearest_even"
    RZ = "zero"
    RM = "negative_inf"
    RP = "positive_inf"
    RA = "nearest_away"
    FULL = "full"
    APPROX = "approx"
    RZI = "nearest_int_to_zero"


class MemoryOrder(_MemberSymbol, Enum, metaclass=_SymbolicEnum):
    """The ordering of a memory operation (atomics, and loads/stores that synchronise)."""
    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(_MemberSymbol, Enum, metaclass=_SymbolicEnum):
    """The threads that a memory order is relative to."""
    NONE = "none"
    BLOCK = "block"
    CLUSTER = "cluster"
    DEVICE = "device"
    SYS = "sys"


ENUMS = (PaddingMode, RoundingMode, MemoryOrder, MemoryScope)
