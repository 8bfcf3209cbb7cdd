"""Every kernel case launched on the GPU and checked against numpy, on fresh
random data each run, with the arguments as

  device   cudajit device arrays (cudajit.to_device), views by slicing them
  host     numpy arrays (cudajit copies them to the device and back)
  cupy     CuPy arrays, incl. strided views (a[:, ::2], transposes, negative steps)
  torch    PyTorch CUDA tensors, incl. non-contiguous views

Backends that are not installed are skipped with the reason. The seed of a
failing run is in the message; CUDAJIT_TEST_SEED=<seed> replays it.
"""
import numpy as np
import pytest

import cudajit as cuda
import kernel_cases as kc

pytestmark = pytest.mark.gpu


# ---------------------------------------------------------------------------
# Array backends
# ---------------------------------------------------------------------------


class DeviceBackend:
    name = "device"

    def upload(self, a):
        return cuda.to_device(a)

    def download(self, d):
        return d.copy_to_host()

    def sync(self):
        if hasattr(cuda, "synchronize"):
            cuda.synchronize()


class HostBackend:
    name = "host"

    def upload(self, a):
        return a                      # the kernel writes it through cudajit's copy-back

    def download(self, a):
        return a

    def sync(self):
        pass


class CupyBackend:
    name = "cupy"

    def __init__(self):
        self.cp = pytest.importorskip("cupy", reason="CuPy is not installed")

    def upload(self, a):
        return self.cp.asarray(a)

    def download(self, d):
        return self.cp.asnumpy(d)

    def sync(self):
        self.cp.cuda.Device().synchronize()


class TorchBackend:
    name = "torch"

    def __init__(self):
        self.torch = pytest.importorskip("torch", reason="PyTorch is not installed")
        if not self.torch.cuda.is_available():
            pytest.skip("PyTorch has no CUDA device")

    def upload(self, a):
        if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous:
            # keep Fortran order on the device: the reversed-axes view of a C tensor
            rev = tuple(reversed(range(a.ndim)))
            return kc.apply_view_ops(self._to_cuda(np.ascontiguousarray(a.transpose(rev))),
                                     (("permute", rev),))
        return self._to_cuda(a)

    def _to_cuda(self, a):
        try:
            t = self.torch.from_numpy(a).cuda()
        except TypeError as e:
            pytest.skip(f"torch cannot hold {a.dtype}: {e}")
        try:
            t.__cuda_array_interface__
        except (TypeError, AttributeError, ValueError, RuntimeError) as e:
            pytest.skip(f"torch exports no __cuda_array_interface__ for {t.dtype}: {e}")
        return t

    def download(self, t):
        return t.cpu().numpy()

    def sync(self):
        self.torch.cuda.synchronize()


BACKENDS = {"device": DeviceBackend, "host": HostBackend, "cupy": CupyBackend, "torch": TorchBackend}

# One dispatcher per kernel function: cases sharing a kernel (axpy in float32,
# float64, mixed, strided) exercise several specialisations of one dispatcher.
_dispatchers = {}


def dispatcher(fn):
    if fn not in _dispatchers:
        _dispatchers[fn] = cuda.jit(fn)
    return _dispatchers[fn]


def make_view(backend, arr, ops):
    try:
        return kc.apply_view_ops(arr, ops)
    except (TypeError, AttributeError, NotImplementedError, IndexError, ValueError) as e:
        if backend.name == "device":
            pytest.skip(f"cudajit device arrays cannot make the view {ops}: {e!r}")
        raise


def run_case(case, backend):
    rng, seed = kc.new_rng()
    args = case.make_inputs(rng)
    expected = kc.expected_outputs(case, args)
    _, bases = kc.numpy_args(args)
    on_device = {i: backend.upload(b) for i, b in bases.items()}
    launch_args = [make_view(backend, on_device[i], a.ops) if isinstance(a, kc.View)
                   else on_device.get(i, a) for i, a in enumerate(args)]
    grid, block = case.config(args)
    dispatcher(case.kernel)[grid, block](*launch_args)
    backend.sync()
    for i in case.outputs:
        actual = backend.download(on_device[i])
        kc.assert_output_matches(case, i, np.asarray(actual), expected[i],
                                 f"[{backend.name}, seed {seed}, grid {grid}, block {block}]")


PARAMS = [pytest.param(c, b, id=f"{c.name}-{b}") for c in kc.CASES for b in c.backends]


@pytest.mark.parametrize("case,backend_name", PARAMS)
def test_kernel(case, backend_name):
    run_case(case, BACKENDS[backend_name]())


def test_enough_kernels_launched():
    assert len({c.kernel for c in kc.CASES}) >= 40


# ---------------------------------------------------------------------------
# The README example, inspection, explicit signatures
# ---------------------------------------------------------------------------


def _text(x):
    return "\n".join(map(str, x.values())) if isinstance(x, dict) else str(x)


def test_readme_axpy_and_inspection():
    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    rng, seed = kc.new_rng()
    n = 4096 * 256
    xh = rng.standard_normal(n).astype(np.float32)
    yh = rng.standard_normal(n).astype(np.float32)
    x = cuda.to_device(xh)
    y = cuda.to_device(yh)
    axpy[4096, 256](2.0, x, y)
    got = y.copy_to_host()
    np.testing.assert_allclose(got, (2.0 * xh.astype(np.float64) + yh).astype(np.float32),
                               rtol=1e-6, atol=1e-6, err_msg=f"seed {seed}")
    ir, nvvm, ptx = _text(axpy.inspect_ir()), _text(axpy.inspect_nvvm()), _text(axpy.inspect_ptx())
    assert "axpy" in ir
    assert "define" in nvvm and "axpy" in nvvm
    assert ".entry" in ptx


def test_explicit_signature_accepts_contiguous_and_strided():
    k = cuda.jit("void(float32, float32[:], float32[:])")(kc.axpy)
    rng, seed = kc.new_rng()
    n = 10000
    xh = rng.standard_normal(n).astype(np.float32)
    yh = rng.standard_normal(n).astype(np.float32)
    y = cuda.to_device(yh)
    k[blocks(n), 128](np.float32(1.5), cuda.to_device(xh), y)
    np.testing.assert_allclose(y.copy_to_host(), np.float32(1.5) * xh + yh, rtol=1e-6, atol=1e-6,
                               err_msg=f"seed {seed}")


def blocks(n, tpb=128):
    return (n + tpb - 1) // tpb


def test_repeated_launches_same_result():
    k = dispatcher(kc.axpy)
    rng, seed = kc.new_rng()
    xh = rng.standard_normal(5000)
    yh = rng.standard_normal(5000)
    x, y = cuda.to_device(xh), cuda.to_device(yh)
    for _ in range(10):
        k[blocks(5000), 128](0.5, x, y)
    expected = yh.copy()
    for _ in range(10):
        expected = 0.5 * xh + expected
    np.testing.assert_allclose(y.copy_to_host(), expected, rtol=1e-13, err_msg=f"seed {seed}")


def test_host_array_is_copied_back():
    k = dispatcher(kc.axpy)
    rng, _ = kc.new_rng()
    x = rng.standard_normal(3000)
    y = rng.standard_normal(3000)
    y0 = y.copy()
    k[blocks(3000), 128](2.0, x, y)
    np.testing.assert_allclose(y, 2.0 * x + y0, rtol=1e-14)
    np.testing.assert_array_equal(x, x)  # the input is still readable


# ---------------------------------------------------------------------------
# Launch errors (strict here: a GPU is present)
# ---------------------------------------------------------------------------


def test_wrong_argument_count():
    k = dispatcher(kc.axpy)
    x = cuda.to_device(np.arange(8, dtype=np.float32) + 1)
    with pytest.raises((TypeError, cuda.CompileError)) as info:
        k[1, 8](x, x)
    assert "argument" in str(info.value).lower()


@pytest.mark.parametrize("bad", ["a string", [1.0], {"k": 1}, None, object()],
                         ids=["str", "list", "dict", "None", "object"])
def test_unsupported_argument_type(bad):
    k = dispatcher(kc.axpy)
    x = cuda.to_device(np.arange(8, dtype=np.float32) + 1)
    with pytest.raises((TypeError, cuda.CompileError)):
        k[1, 8](bad, x, x)


def test_kernel_still_works_after_errors():
    k = dispatcher(kc.axpy)
    x = cuda.to_device(np.arange(8, dtype=np.float32) + 1)
    with pytest.raises((TypeError, cuda.CompileError)):
        k[1, 8]("bad", x, x)
    y = cuda.to_device(np.ones(8, np.float32))
    k[1, 8](np.float32(2), x, y)
    np.testing.assert_array_equal(y.copy_to_host(), 2 * (np.arange(8) + 1) + 1)
