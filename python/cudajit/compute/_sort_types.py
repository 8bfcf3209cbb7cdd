"""radix_sort's argument types (cuda.compute's names)."""
import enum


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
