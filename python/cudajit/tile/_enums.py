"""cuTile's enumerations: padding of ragged loads, rounding, memory order and scope.

Values are cuTile's, so code that prints or compares them behaves the same.
Inside tile code a member freezes to the symbol ``cudajit.tile.<Enum>.<MEMBER>``
(``_cudajit_symbol_``; set after the class is made because Enum reserves
``_sunder_`` names in a class body).
"""

from enum import Enum


class PaddingMode(Enum):
    """What a load puts in the elements of a tile that lie outside the array."""
    UNDETERMINED = "undetermined"   #: any value (the fastest: no select)
    ZERO = "zero"                   #: 0
    NEG_ZERO = "neg_zero"           #: -0.0
    NAN = "nan"                     #: NaN (float dtypes)
    POS_INF = "pos_inf"             #: +inf (float dtypes)
    NEG_INF = "neg_inf"             #: -inf (float dtypes): the identity of max


class RoundingMode(Enum):
    """The rounding of a floating-point operation or conversion."""
    RN = "nearest_even"
    RZ = "zero"
    RM = "negative_inf"
    RP = "positive_inf"
    RA = "nearest_away"
    FULL = "full"
    APPROX = "approx"
    RZI = "nearest_int_to_zero"


class MemoryOrder(Enum):
    """The ordering of a memory operation (atomics, and loads/stores that synchronise)."""
    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(Enum):
    """The threads that a memory order is relative to."""
    NONE = "none"
    BLOCK = "block"
    CLUSTER = "cluster"
    DEVICE = "device"
    SYS = "sys"


ENUMS = (PaddingMode, RoundingMode, MemoryOrder, MemoryScope)

for _enum in ENUMS:
    _enum._cudajit_symbol_ = property(
        lambda self: f"cudajit.tile.{type(self).__name__}.{self.name}",
        doc="The compiler symbol this member freezes to inside tile code.")
