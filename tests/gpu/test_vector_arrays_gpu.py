"""Arrays of vector types, launched (issue 13): local float32x4 items at run-
time indices, their view as float32x2, a shared 'complex32' (float16x2)
array written from complex64 and read back by a neighbour after the
barrier, and a shared float16 array written in pairs (the stores libNVVM
used to delete). Fresh random data against numpy, outputs poisoned."""
import os

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
TPB = 256


@cuda.jit
def vector_arrays(x, c, out, cout, hout):
    i = cuda.grid(1)
    tid = cuda.threadIdx.x
    h = cuda.shared.array(TPB, "complex32")
    p = cuda.shared.array(2 * TPB, np.float16)
    t = cuda.local.array(4, cuda.float32x4)
    xi = np.float32(0.0)
    ci = np.complex64(0.0)
    if i < x.size:
        xi = x[i]
        ci = c[i]
    for k in range(4):
        t[k] = cuda.float32x4(xi, k, xi * k, -xi)
    j = (tid + 1) % 4
    v = t[j]
    w = t.view(cuda.float32x2)[2 * j + 1]          # (t[j].z, t[j].w)
    h[tid] = ci                                    # complex64 -> float16x2
    p[2 * tid] = ci.real                           # a pair of float16 stores
    p[2 * tid + 1] = ci.imag
    cuda.syncthreads()
    if i < x.size:
        out[i] = v.x + v.y + w.x + w.y
        cout[i] = h[(tid + 1) % TPB]               # float16x2 -> complex64
        hout[i] = p[(2 * tid + 3) % (2 * TPB)]


def test_vector_arrays():
    rng = np.random.default_rng(SEED)
    n = int(rng.integers(1500, 5000))
    x = rng.uniform(-4, 4, n).astype(np.float32)
    c = (rng.uniform(-4, 4, n) + 1j * rng.uniform(-4, 4, n)).astype(np.complex64)
    out = cuda.to_device(np.full(n, np.nan, np.float32))
    cout = cuda.to_device(np.full(n, np.nan + 1j * np.nan, np.complex64))
    hout = cuda.to_device(np.full(n, np.nan, np.float16))
    vector_arrays[(n + TPB - 1) // TPB, TPB](cuda.to_device(x), cuda.to_device(c), out, cout, hout)

    i = np.arange(n)
    j = ((i % TPB) + 1) % 4
    want = x + j + x * j - x
    np.testing.assert_allclose(out.copy_to_host(), want.astype(np.float32), rtol=1e-6, atol=1e-5,
                               err_msg=f"seed {SEED}")
    nb = i - i % TPB + (i % TPB + 1) % TPB                 # the neighbour's item
    half = c.real.astype(np.float16).astype(np.float32) + 1j * c.imag.astype(np.float16).astype(np.float32)
    want_c = np.where(nb < n, half[np.minimum(nb, n - 1)], 0).astype(np.complex64)
    np.testing.assert_array_equal(cout.copy_to_host(), want_c, err_msg=f"seed {SEED}")
    # p[2 * tid + 3] is the imaginary part of item tid + 1 (wrapping in the block)
    want_h = np.where(nb < n, c.imag[np.minimum(nb, n - 1)], 0).astype(np.float16)
    np.testing.assert_array_equal(hout.copy_to_host(), want_h, err_msg=f"seed {SEED}")
