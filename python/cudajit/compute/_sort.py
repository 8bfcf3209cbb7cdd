"""radix_sort: cub::DeviceRadixSort's own kernels (the onesweep histogram,
exclusive sum, onesweep and single-tile kernels), compiled by NVRTC for the
GPU's architecture and cached in memory and on disk (compiler/cub/
device_radix_sort.h), with CUB's host dispatch done in C++ by cudajit's
runtime (runtime/device_radix_sort.h). Stable, ascending or descending,
keys with or without values, a bit range, DoubleBuffers; floats in IEEE
order with -0.0 and +0.0 equal, as CUB sorts them.

What CUB's kernels do not take goes to the sort written in cudajit's own
kernel language (_radix_simt.py): strided arrays, values whose items are
not 1, 2, 4, 8 or 16 bytes, and, with a warning, everything where CUB's
kernels do not compile (CCCL headers of another shape than the 3.0 ones
the instantiation is written for)."""
import types
import warnings

import numpy as np

from .. import _core
from . import _build as B
from ._iterators import ProxyArray, array_dtype, contiguous, length, output
from ._reduce import _cached, _count
from ._sort_types import DoubleBuffer, SortOrder, check_bits, check_double_buffers

KEY_DTYPES = [np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64)]
VALUE_BYTES = (1, 2, 4, 8, 16)   # values are moved as bits of their size

__all__ = ["DoubleBuffer", "SortOrder", "make_radix_sort", "radix_sort"]


class _CubProgram:
    """CUB's radix sort kernels of one sorter, as `python -m cudajit warm`
    and compile_for see a kernel: `_warm(signature, arch, block)` compiles
    them for an architecture into the disk cache (no GPU needed)."""
    _cache = True
    py_func = types.SimpleNamespace(__name__="cub_radix_sort")   # the name warm reports

    def __init__(self, sorter):
        self.sorter = sorter

    def program(self, arch, offset64=None):
        """The program a sort of fewer than 2^32 items runs (offset64=None),
        or the one with the offsets asked for."""
        s = self.sorter
        if offset64 is None:
            offset64 = _core.radix_sort_offset64(0, s.key_bytes, s.value_bytes, int(arch))
        return _core.radix_sort_program(s.key_name, s.value_bytes, s.descending, offset64, int(arch))

    def _warm(self, signature, arch, block=None):
        return self.program(arch)["from"] == "compiled"

    def cubin_for(self, cc):
        return self.program(cc[0] * 10 + cc[1])["cubin"]


class _RadixSort:
    """One key type, value type and order: CUB's kernels, and the fallback
    sorter made when first needed."""

    def __init__(self, key_dtype, value_dtype, order):
        self.key_dtype = np.dtype(key_dtype)
        if self.key_dtype not in KEY_DTYPES:
            raise TypeError(f"radix_sort: keys must be one of {', '.join(str(d) for d in KEY_DTYPES)}, "
                            f"got {self.key_dtype}")
        self.value_dtype = None if value_dtype is None else np.dtype(value_dtype)
        if not isinstance(order, SortOrder):
            raise TypeError(f"radix_sort: order must be a cudajit.compute.SortOrder, got {order!r}")
        self.order = order
        self.descending = order is SortOrder.DESCENDING
        self.key_name = self.key_dtype.name
        self.key_bytes = self.key_dtype.itemsize
        self.value_bytes = 0 if self.value_dtype is None else self.value_dtype.itemsize
        self.cub_values = self.value_dtype is None or self.value_bytes in VALUE_BYTES
        self.cub = _CubProgram(self)
        self._simt = None
        self._cub_compiles = None

    def simt(self):
        if self._simt is None:
            from ._radix_simt import _RadixSort as Simt
            self._simt = Simt(self.key_dtype, self.value_dtype, self.order)
        return self._simt

    def serves(self, arrays):
        """Whether CUB's kernels take these arrays (None: not given). What
        is no device array goes to the fallback, whose checks name it."""
        try:
            dense = self.cub_values and all(a is None or isinstance(a, ProxyArray) or contiguous(a) for a in arrays)
        except AttributeError:
            return False
        return dense and self.cub_compiles()

    def cub_compiles(self):
        """Whether CUB's kernels compile for this GPU, asked once (the
        program is then in memory for the sort). Where they do not (CCCL
        headers whose kernels take other template arguments than the ones
        cudajit instantiates), the fallback sorts, with a warning. Without
        a GPU (a size query): assumed."""
        if self._cub_compiles is None:
            if not _core.is_available():
                return True
            from ..device import get_current_device
            from ..errors import ToolchainError
            major, minor = get_current_device().compute_capability
            try:
                self.cub.program(major * 10 + minor)
                self._cub_compiles = True
            except ToolchainError as e:
                warnings.warn(f"radix_sort: CUB's radix sort kernels do not compile here ({str(e).splitlines()[0]}); "
                              "cudajit's own radix sort serves instead", RuntimeWarning, stacklevel=4)
                self._cub_compiles = False
        return self._cub_compiles

    def temp_bytes(self, n, double_buffer, begin, end, cub):
        if not cub:
            return self.simt().temp_bytes(n, double_buffer)
        return _core.radix_sort_temp_bytes(n, self.key_bytes, self.value_bytes, begin, end, double_buffer)

    def launches(self):
        """What warming compiles: CUB's kernels (the fallback's are compiled
        when a strided array first needs them)."""
        return [(self.cub, [])]


def _sorter(key_dtype, value_dtype, order):
    key = ("radix_sort", np.dtype(key_dtype).str, None if value_dtype is None else np.dtype(value_dtype).str, order)
    return _cached(_RadixSort, key, key_dtype, value_dtype, order)


def _arrays(d_in_keys, d_out_keys, d_in_values, d_out_values):
    if isinstance(d_in_keys, DoubleBuffer):
        return d_in_keys.d_buffers + (d_in_values.d_buffers if isinstance(d_in_values, DoubleBuffer) else [])
    return [d_in_keys, d_out_keys, d_in_values, d_out_values]


def _plan(sorter, d_in_keys, d_out_keys, d_in_values, d_out_values, n, begin_bit, end_bit):
    """(whether CUB's kernels serve the call, bytes of temporary storage)."""
    begin, end = check_bits(sorter.key_dtype, begin_bit, end_bit)
    cub = sorter.serves(_arrays(d_in_keys, d_out_keys, d_in_values, d_out_values))
    return cub, sorter.temp_bytes(n, isinstance(d_in_keys, DoubleBuffer), begin, end, cub)


class _RadixSortObject:
    def __init__(self, d_in_keys, d_out_keys, d_in_values, d_out_values, order):
        keys = d_in_keys.current() if isinstance(d_in_keys, DoubleBuffer) else d_in_keys
        values = d_in_values.current() if isinstance(d_in_values, DoubleBuffer) else d_in_values
        self.sorter = _sorter(array_dtype(keys), None if values is None else array_dtype(values), order)

    def __call__(self, temp_storage=None, d_in_keys=None, d_out_keys=None, d_in_values=None, d_out_values=None,
                 num_items=None, begin_bit=None, end_bit=None, stream=None):
        n = _count(num_items)
        cub, need = _plan(self.sorter, d_in_keys, d_out_keys, d_in_values, d_out_values, n, begin_bit, end_bit)
        return B.two_phase(temp_storage, need, lambda temp: _sort(self.sorter, cub, temp, d_in_keys, d_out_keys,
                                                                  d_in_values, d_out_values, n, begin_bit,
                                                                  end_bit, stream))


def _sort(sorter, cub, temp, d_in_keys, d_out_keys, d_in_values, d_out_values, n, begin_bit, end_bit,
          stream):
    if not cub:
        from ._radix_simt import sort
        return sort(sorter.simt(), temp, d_in_keys, d_out_keys, d_in_values, d_out_values, n, begin_bit, end_bit,
                    stream)
    begin, end = check_bits(sorter.key_dtype, begin_bit, end_bit)
    with_values = sorter.value_dtype is not None
    have = int(getattr(temp, "nbytes", 0)) if temp is not None else 0

    def same_type(a, what, dtype):   # CUB's kernels move bits: another dtype would be garbage
        if array_dtype(output(a, what)) != dtype:
            raise TypeError(f"radix_sort: {what} holds {array_dtype(a)}, the keys' (values') type is {dtype}")
    if isinstance(d_in_keys, DoubleBuffer):
        check_double_buffers(d_in_keys, d_in_values, with_values, n)
        kb, vb = d_in_keys, d_in_values
        for a in kb.d_buffers:
            same_type(a, "a DoubleBuffer array", sorter.key_dtype)
        for a in vb.d_buffers if with_values else []:
            same_type(a, "a DoubleBuffer array", sorter.value_dtype)
        if n == 0:
            return
        flipped = _core.radix_sort(sorter.key_name, sorter.value_bytes, sorter.descending, kb.current(),
                                   kb.alternate(), vb.current() if with_values else None,
                                   vb.alternate() if with_values else None, n, begin, end, True, temp, have, stream)
        if flipped:
            kb.selector ^= 1
        if with_values:
            vb.selector = kb.selector
        return
    keys_out = output(d_out_keys, "d_out_keys")
    same_type(d_in_keys, "d_in_keys", sorter.key_dtype)
    same_type(keys_out, "d_out_keys", sorter.key_dtype)
    if length(keys_out) < n or length(d_in_keys) < n:
        raise ValueError(f"d_in_keys and d_out_keys must hold num_items ({n}) items")
    if with_values:
        vals_out = output(d_out_values, "d_out_values")
        same_type(d_in_values, "d_in_values", sorter.value_dtype)
        same_type(vals_out, "d_out_values", sorter.value_dtype)
        if length(vals_out) < n or length(d_in_values) < n:
            raise ValueError(f"d_in_values and d_out_values must hold num_items ({n}) items")
    else:
        vals_out = None
    if n == 0:
        return
    _core.radix_sort(sorter.key_name, sorter.value_bytes, sorter.descending, d_in_keys, keys_out,
                     d_in_values if with_values else None, vals_out, n, begin, end, False, temp, have, stream)


def make_radix_sort(d_in_keys=None, d_out_keys=None, d_in_values=None, d_out_values=None,
                    order=SortOrder.ASCENDING, **kwargs):
    return _RadixSortObject(d_in_keys, d_out_keys, d_in_values, d_out_values, order)


def radix_sort(d_in_keys=None, d_out_keys=None, d_in_values=None, d_out_values=None, order=SortOrder.ASCENDING,
               num_items=None, begin_bit=None, end_bit=None, stream=None, **kwargs):
    """Sorts keys (and values with them), stably, by the bits
    [begin_bit, end_bit) of the keys (cub::DeviceRadixSort::SortPairs /
    SortKeys, their Descending forms with order=SortOrder.DESCENDING). With
    a DoubleBuffer for the keys (and values) the result is in its
    current() afterwards."""
    keys = d_in_keys.current() if isinstance(d_in_keys, DoubleBuffer) else d_in_keys
    values = d_in_values.current() if isinstance(d_in_values, DoubleBuffer) else d_in_values
    sorter = _sorter(array_dtype(output(keys, "d_in_keys")),
                     None if values is None else array_dtype(output(values, "d_in_values")), order)
    n = _count(num_items)
    cub, need = _plan(sorter, d_in_keys, d_out_keys, d_in_values, d_out_values, n, begin_bit, end_bit)
    _sort(sorter, cub, B.scratch(need, stream) if need else None, d_in_keys, d_out_keys, d_in_values,
          d_out_values, n, begin_bit, end_bit, stream)
