"""Device-wide algorithms with Python operators, in NVIDIA cuda.compute's
names and meaning (docs/compute.md): ``reduce_into``, ``inclusive_scan``,
``exclusive_scan``, ``segmented_reduce``, ``unary_transform``,
``binary_transform``, ``histogram_even``, ``select``, ``unique_by_key``,
``radix_sort``, ``merge_sort``, their ``make_*``
object forms, ``OpKind``, the input iterators and ``gpu_struct`` (struct
item types).

Each algorithm is a few kernels written in cudajit's own kernel language,
generated for the input structure, item type and operator, and compiled by
cudajit's pipeline (block-level CUB through NVRTC LTO-IR and nvJitLink, the
kernel caches in memory and on disk). Porting from cuda.compute means
changing ``import cuda.compute`` to ``import cudajit.compute``.
"""
from ._iterators import (CacheModifiedInputIterator, ConstantIterator, CountingIterator, IteratorBase,
                         PermutationIterator, ProxyArray, ReverseInputIterator, ReverseIterator,
                         TransformIterator, ZipIterator)
from ._ops import OpKind
from ._struct import gpu_struct
from ._reduce import Determinism, make_reduce_into, make_segmented_reduce, reduce_into, segmented_reduce
from ._build import compile_for, warm
from ._sort import DoubleBuffer, SortOrder, make_radix_sort, radix_sort
from ._merge_sort import make_merge_sort, merge_sort
from ._histogram import histogram_even, make_histogram_even
from ._select import make_select, make_unique_by_key, select, unique_by_key
from ._transform import binary_transform, make_binary_transform, make_unary_transform, unary_transform
from ._scan import exclusive_scan, inclusive_scan, make_exclusive_scan, make_inclusive_scan

__all__ = [
    "CacheModifiedInputIterator", "ConstantIterator", "CountingIterator", "Determinism", "IteratorBase", "OpKind",
    "PermutationIterator", "ProxyArray", "ReverseInputIterator", "ReverseIterator", "TransformIterator",
    "ZipIterator", "compile_for", "gpu_struct", "warm",
    "binary_transform", "make_binary_transform", "make_unary_transform", "unary_transform",
    "histogram_even", "make_histogram_even", "make_select", "make_unique_by_key", "select", "unique_by_key",
    "DoubleBuffer", "SortOrder", "make_radix_sort", "radix_sort", "make_merge_sort", "merge_sort",
    "exclusive_scan", "inclusive_scan", "make_exclusive_scan", "make_inclusive_scan",
    "make_reduce_into", "make_segmented_reduce", "reduce_into", "segmented_reduce",
]
