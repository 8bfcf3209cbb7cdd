"""radix_sort's argument types (cuda.compute's names)."""
import enum

from ._iterators import length, output


class SortOrder(enum.Enum):
    ASCENDING = 0
    DESCENDING = 1


class DoubleBuffer:
    """Two arrays of one size: the sort reads `current()`, may use the
    other, and leaves its result in `current()` (the selector moves)."""

    def __init__(self, d_current, d_alternate):
        self.d_buffers = [d_current, d_alternate]
        self.selector = 0

    def current(self):
        return self.d_buffers[self.selector]

    def alternate(self):
        return self.d_buffers[self.selector ^ 1]


def check_bits(dtype, begin_bit, end_bit):
    """(begin, end) of a sort's bit range over keys of `dtype` (None: all)."""
    bits = dtype.itemsize * 8
    begin = 0 if begin_bit is None else int(begin_bit)
    end = bits if end_bit is None else int(end_bit)
    if not 0 <= begin <= end <= bits:
        raise ValueError(f"radix_sort: need 0 <= begin_bit <= end_bit <= {bits} for {dtype} keys, "
                         f"got {begin}, {end}")
    return begin, end


def check_double_buffers(keys, values, with_values, n):
    """DoubleBuffer keys: the values are a DoubleBuffer too, and every array
    holds n items."""
    if with_values and not isinstance(values, DoubleBuffer):
        raise TypeError("radix_sort: with DoubleBuffer keys, d_in_values must be a DoubleBuffer too (or None)")
    for a in keys.d_buffers + (values.d_buffers if with_values else []):
        if length(output(a, "a DoubleBuffer array")) < n:
            raise ValueError(f"a DoubleBuffer array holds {length(a)} items, num_items is {n}")
