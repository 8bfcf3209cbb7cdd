"""Generated kernels of cudajit.compute: each algorithm writes the Python
source of its kernels for one input structure (arrays, iterators), item
type and operator; the source is compiled by cudajit like any kernel (the
in-memory and disk caches, `python -m cudajit warm`), and the kernel object
is kept here, so that the next call with the same structure costs one
dictionary lookup and the launches."""
import numpy as np

from ..decorators import jit
from ..device import get_current_device
from ..devicearray import DeviceNDArray, device_array

BLOCK = 256   # threads per block of every generated kernel

_kernels = {}
_blocks = {}   # kernel -> its threads per block, where not BLOCK


def kernel(key, name, source, env, block=None):
    """The @jit kernel `name` defined by `source` (globals: cuda, np, BLOCK
    (`block` threads, default BLOCK), `env`)."""
    found = _kernels.get(key)
    if found is None:
        import cudajit
        namespace = {"cuda": cudajit, "np": np, "BLOCK": block or BLOCK, **env}
        exec(compile(source, f"<cudajit.compute {name}>", "exec"), namespace)
        found = jit(cache=True)(namespace[name])   # the disk cache: a second process compiles nothing
        _kernels[key] = found
        if block and block != BLOCK:
            _blocks[found] = block
    return found


def params_and_items(inputs):
    """Kernel parameters and item expressions of several inputs ("in0_", ...)."""
    params, exprs, env = [], [], {}
    for k, it in enumerate(inputs):
        p, e, g = it._items(f"in{k}_")
        params += p
        exprs.append(e)
        env.update(g)
    return params, exprs, env


_sm_counts = {}


def sm_count():
    dev = get_current_device()
    n = _sm_counts.get(dev.id)
    if n is None:
        n = _sm_counts[dev.id] = int(dev.MULTIPROCESSOR_COUNT)
    return n


_configured = {}   # (kernel, grid) -> kernel[grid, BLOCK]: made once, launched many times


def launch(k, grid, stream, args):
    if stream is None or (type(stream) is int and stream == 0):
        cfg = _configured.get((k, grid))
        if cfg is None:
            if len(_configured) > 4096:
                _configured.clear()
            cfg = _configured[(k, grid)] = k[grid, _blocks.get(k, BLOCK)]
        cfg(*args)
    else:
        k[grid, _blocks.get(k, BLOCK), stream](*args)


def typed_view(temp, dtype, count, offset_bytes=0):
    """`count` items of `dtype` in the user's temporary storage (bytes)."""
    arr = temp if isinstance(temp, DeviceNDArray) else _as_device(temp)
    begin = offset_bytes
    end = begin + count * np.dtype(dtype).itemsize
    return arr.reshape(-1)[begin:end].view(dtype)


def _as_device(a):
    # A view of the caller's buffer. No synchronisation with the stream its
    # interface names: the algorithm runs on the caller's stream (a sync here
    # would stall the host on every call of an object form)
    from ..devicearray import as_cuda_array
    return as_cuda_array(a, sync=False)


_scratch = {}   # (device, stream) -> the largest buffer one-call forms have needed there


def scratch(nbytes, stream):
    """Temporary storage for the one-call forms (reduce_into, ...): one
    buffer per device and stream, grown when a call needs more, so that a
    repeated call allocates nothing. Calls on one stream run in order, so
    they may share it."""
    key = (get_current_device().id, _stream_handle(stream))
    buf = _scratch.get(key)
    if buf is None or buf.size < nbytes:
        buf = _scratch[key] = device_array(max(align(nbytes), 256), np.uint8)
    return buf


def _stream_handle(stream):
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("handle", "ptr", "cuda_stream"):
        value = getattr(stream, attr, None)
        if value is not None:
            return int(getattr(value, "value", value) or 0)
    return id(stream)


def align(nbytes, to=256):
    return (int(nbytes) + to - 1) // to * to


def numba_type(value):
    """The launch type of a kernel argument, numba's spelling (for AOT compiles)."""
    from ._iterators import ProxyArray, array_dtype
    if isinstance(value, ProxyArray) or hasattr(value, "__cuda_array_interface__"):
        dtype = np.dtype(value.dtype) if isinstance(value, ProxyArray) else array_dtype(value)
        contiguous = isinstance(value, ProxyArray) or _contiguous(value)
        if dtype.names:   # records: the IR's spelling (numba's needs numba's Record type)
            from .._core import record_type
            return f"array({record_type(dtype)}, 1d, {'C' if contiguous else 'A'})"
        name = "boolean" if dtype.kind == "b" else dtype.name
        return f"{name}[::1]" if contiguous else f"{name}[:]"
    if isinstance(value, tuple):   # a struct's fields, flat (an initial value)
        return "Tuple(" + ", ".join(numba_type(v) for v in value) + ")"
    dtype = np.asarray(value).dtype
    return "boolean" if dtype.kind == "b" else dtype.name


def _contiguous(array):
    from ._iterators import array_dtype
    strides = array.__cuda_array_interface__.get("strides")
    return strides is None or strides == (array_dtype(array).itemsize,)


def _signature(args):
    return tuple(numba_type(a) for a in args)


def warm(objects, arch=None):
    """Puts the kernels of make_* objects (built on arrays or ProxyArrays)
    into the disk cache for `arch` ("sm_90"; default: this GPU's, else
    sm_90), without a GPU, as `python -m cudajit warm` does for a module's
    objects. Returns how many kernels were compiled (the rest were cached)."""
    from ..cli import _archs
    if not isinstance(objects, (list, tuple)):
        objects = [objects]
    archs = _archs([arch] if isinstance(arch, str) else arch)
    compiled = 0
    for obj in objects:
        for k, signature, block in kernels_to_warm(obj):
            for a in archs:
                compiled += bool(k._warm(signature, a, block))
    return compiled


def launches_of(obj):
    """(kernel, example arguments) pairs of a make_* object."""
    inner = getattr(obj, "sorter", None)   # radix_sort's object wraps the sorter
    return (inner or obj).launches()


def is_compute_object(obj):
    """A make_* object of cudajit.compute (what `python -m cudajit warm` looks for)."""
    return type(obj).__module__.startswith(__package__ + ".") and (hasattr(obj, "launches") or hasattr(obj, "sorter"))


def kernels_to_warm(obj):
    """(kernel, signature as numba type names, launch block) of each kernel a
    make_* object launches."""
    return [(k, _signature(args), (_blocks.get(k, BLOCK),)) for k, args in launches_of(obj)]


def compile_for(launches, cc=(9, 0)):
    """Cubins of (kernel, example arguments) pairs for GPU `cc`, without a GPU:
    what a make_* object would launch. Returns [(kernel name, cubin bytes)]."""
    from ..decorators import compile_cubin
    out = []
    for k, args in launches:
        if hasattr(k, "cubin_for"):   # CUB's own kernels (radix_sort): one NVRTC program
            out.append((k.py_func.__name__, k.cubin_for(cc)))
            continue
        sig = "void(" + ", ".join(numba_type(a) for a in args) + ")"
        cubin, symbol = compile_cubin(k.py_func, sig, cc=cc, block=(_blocks.get(k, BLOCK),))
        out.append((k.py_func.__name__, cubin))
    return out


_ZERO = """
def fill_zero(a, count):
    i = cuda.grid(1)
    while i < count:
        a[i] = 0
        i += cuda.gridsize(1)
"""


def zero(array, count, stream):
    """array[:count] = 0 on `stream` (tile states, histograms, counts)."""
    launch(zero_kernel(), max(1, min(-(-count // BLOCK), 1024)), stream, [array, count])


def zero_kernel():
    return kernel(("fill_zero",), "fill_zero", _ZERO, {})


def two_phase(temp_storage, need, run):
    """cuda.compute's object protocol: without storage, the bytes needed;
    with enough storage, run(temp_storage) and the bytes needed."""
    if temp_storage is None:
        return need
    have = int(getattr(temp_storage, "nbytes", 0))
    if need and have < need:
        raise ValueError(f"temp_storage holds {have} bytes; this call needs {need} "
                         "(call the object with temp_storage=None for the size)")
    run(temp_storage)
    return need
