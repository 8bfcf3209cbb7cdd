"""cudajit.libdevice on the GPU: float, tuple-returning and integer functions
on fresh random data against numpy (libdevice's documented accuracy: sinf
within 2 ulp, the others exact here), outputs poisoned first."""
import os

import numpy as np
import pytest

import cudajit as cuda
from cudajit import libdevice

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


def test_functions_against_numpy():
    rng = np.random.default_rng(SEED)
    n = 4096
    x = rng.uniform(-8, 8, n).astype(np.float32)
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)

    @cuda.jit
    def k(x, u, f, e, s, c, hi, pop, rint):
        i = cuda.grid(1)
        if i < x.size:
            f[i] = libdevice.sinf(x[i])
            m, ex = libdevice.frexpf(x[i])
            e[i] = m * 2.0 ** ex
            s[i], c[i] = libdevice.sincos(np.float64(x[i]))
            hi[i] = libdevice.umulhi(u[i], np.uint32(2654435761))
            pop[i] = libdevice.popc(np.int32(u[i]))
            rint[i] = libdevice.float2int_rn(x[i])

    outs = [np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32), np.full(n, np.nan),
            np.full(n, np.nan), np.zeros(n, np.uint32), np.full(n, -1, np.int32), np.full(n, -99, np.int32)]
    d = [cuda.to_device(a) for a in outs]
    k[n // 128, 128](cuda.to_device(x), cuda.to_device(u), *d)
    f, e, s, c, hi, pop, rint = (a.copy_to_host() for a in d)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(f, np.sin(x64), rtol=0, atol=2.5e-7, err_msg=f"seed {SEED}")
    np.testing.assert_array_equal(e, x)
    np.testing.assert_allclose(s, np.sin(x64), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(c, np.cos(x64), rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(hi, ((u.astype(np.uint64) * 2654435761) >> 32).astype(np.uint32))
    np.testing.assert_array_equal(pop, [bin(int(v)).count("1") for v in u])
    np.testing.assert_array_equal(rint, np.rint(x).astype(np.int32))
