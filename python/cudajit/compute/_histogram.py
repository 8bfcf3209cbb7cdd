"""histogram_even (cub::DeviceHistogram::HistogramEven, one channel):
num_output_levels - 1 equal bins over [lower_level, upper_level); samples
outside are not counted. Each block counts into a shared-memory histogram
with shared atomics and adds it to d_histogram (zeroed first), as CUB's
shared-atomic strategy does; more bins than fit go to global atomics."""
import numpy as np

from . import _build as B
from ._iterators import ProxyArray, _scalar, as_input, as_output, input_args, input_key, length, output
from ._reduce import _cached, _count

SHARED_BINS = 2048

_SOURCE = """
def histogram({params}, hist, n, lower, upper, bins, scale):
    tid = cuda.threadIdx.x
{setup}
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        s = {item}
        if s >= lower and s < upper:
            b = {bin}
            if b >= bins:
                b = bins - 1
            cuda.atomic.add({counts}, b, 1)
        i += stride
{finish}
"""

_SHARED_SETUP = """    counts = cuda.shared.array(SHARED_BINS, np.int32)
    for b in range(tid, bins, BLOCK):
        counts[b] = 0
    cuda.syncthreads()"""

_SHARED_FINISH = """    cuda.syncthreads()
    for b in range(tid, bins, BLOCK):
        c = counts[b]
        if c != 0:
            cuda.atomic.add(hist, b, C(c))"""

class _HistogramEven:
    def __init__(self, d_samples, d_histogram, level_dtype):
        self.src = src = as_input(d_samples, "d_samples")
        self.count_dtype = as_output(d_histogram, "d_histogram").dtype
        if self.count_dtype.kind not in "iu":
            raise TypeError(f"d_histogram must hold integer counters, got {self.count_dtype}")
        self.level_dtype = np.dtype(level_dtype)
        sample = src.value_dtype
        integral = sample.kind in "iu" and self.level_dtype.kind in "iu"
        # integers: exact bin arithmetic in 64 bits; floats: (s - lower) * bins / range in the level type
        bin_expr = ("np.int64((np.int64(s) - np.int64(lower)) * bins // (np.int64(upper) - np.int64(lower)))"
                    if integral else "np.int64((s - lower) * scale)")
        params, (item,), env = B.params_and_items([src])
        env.update(SHARED_BINS=SHARED_BINS, C=self.count_dtype.type)
        self.kernels = {}
        for shared in (True, False):
            source = _SOURCE.format(params=", ".join(p for p, _ in params), item=item, bin=bin_expr,
                                    counts="counts" if shared else "hist",
                                    setup=_SHARED_SETUP if shared else "    pass",
                                    finish=_SHARED_FINISH if shared else "    pass")
            key = ("histogram_even", src._key(), self.count_dtype.str, self.level_dtype.str, shared)
            self.kernels[shared] = B.kernel(key, "histogram", source, env)

    def _levels(self, num_output_levels, lower_level, upper_level):
        levels = int(np.asarray(num_output_levels).reshape(-1)[0])
        if levels < 2:
            raise ValueError(f"num_output_levels must be >= 2 (bins = levels - 1), got {levels}")
        t = self.level_dtype.type
        lower, upper = t(_scalar(lower_level, "lower_level")), t(_scalar(upper_level, "upper_level"))
        if not lower < upper:
            raise ValueError(f"lower_level ({lower}) must be below upper_level ({upper})")
        bins = levels - 1
        scale = t(bins) / (upper - lower) if self.level_dtype.kind == "f" else np.float64(0)
        return bins, lower, upper, scale

    def launches(self):
        args = [v for _, v in B.params_and_items([self.src])[0]]
        t = self.level_dtype.type
        scale = t(1) if self.level_dtype.kind == "f" else np.float64(0)
        tail = [ProxyArray(self.count_dtype), np.int64(0), t(0), t(1), np.int64(1), scale]
        return [(self.kernels[True], args + tail), (self.kernels[False], args + tail),
                (B.zero_kernel(), [ProxyArray(self.count_dtype), np.int64(0)])]

    def __call__(self, temp_storage=None, d_samples=None, d_histogram=None, h_num_output_levels=None,
                 h_lower_level=None, h_upper_level=None, num_samples=None, stream=None):
        return B.two_phase(temp_storage, 0, lambda _: self.run(d_samples, d_histogram, h_num_output_levels,
                                                               h_lower_level, h_upper_level, num_samples, stream))

    def run(self, d_samples, d_histogram, num_output_levels, lower_level, upper_level, num_samples, stream):
        n = _count(num_samples)
        bins, lower, upper, scale = self._levels(num_output_levels, lower_level, upper_level)
        hist = output(d_histogram, "d_histogram")
        if length(hist) < bins:
            raise ValueError(f"d_histogram holds {length(hist)} counters; {bins} bins need as many")
        B.zero(hist, bins, stream)
        if n:
            args = input_args(d_samples)
            grid = min(-(-n // B.BLOCK), B.sm_count() * 8)
            B.launch(self.kernels[bins <= SHARED_BINS], grid, stream,
                     args + [hist, np.int64(n), lower, upper, np.int64(bins), scale])


def _level_dtype(d_samples, lower_level):
    value = _scalar(lower_level, "lower_level")
    return value.dtype if isinstance(value, np.generic) else as_input(d_samples).value_dtype


def make_histogram_even(d_samples=None, d_histogram=None, h_num_output_levels=None, h_lower_level=None,
                        h_upper_level=None, num_samples=None, **kwargs):
    lower, upper = _scalar(h_lower_level, "h_lower_level"), _scalar(h_upper_level, "h_upper_level")
    if lower.dtype != upper.dtype:
        raise TypeError(f"h_lower_level ({lower.dtype}) and h_upper_level ({upper.dtype}) must have one dtype")
    return _HistogramEven(d_samples, d_histogram, lower.dtype)


def histogram_even(d_samples=None, d_histogram=None, num_output_levels=None, lower_level=None, upper_level=None,
                   num_samples=None, stream=None, **kwargs):
    """Counts of samples in num_output_levels - 1 equal bins of
    [lower_level, upper_level) into d_histogram."""
    level = _level_dtype(d_samples, lower_level)
    key = ("histogram_even", input_key(d_samples), input_key(d_histogram), level.str)
    obj = _cached(_HistogramEven, key, d_samples, d_histogram, level)
    obj.run(d_samples, d_histogram, num_output_levels, lower_level, upper_level, num_samples, stream)
