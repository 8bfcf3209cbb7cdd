"""cudajit.fp16 on the GPU: every function of tests/test_fp16.py's kernel on
fresh random float16 data, against numpy (float64 computed, rounded once to
float16): exact where CUDA's half functions are correctly rounded (add, sub,
mul, fma, neg, abs, max, min, the roundings, the comparisons), within two
float16 ulps for division and the transcendental functions."""
import os
import sys

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_fp16 import ALL_SIG, all_functions  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


def test_every_function_matches_numpy():
    rng = np.random.default_rng(SEED)
    n = 4096
    x = rng.uniform(-4, 4, n).astype(np.float16)
    y = rng.uniform(0.25, 8, n).astype(np.float16)
    z = rng.uniform(-4, 4, n).astype(np.float16)
    y[:64] = x[:64]                                 # equal pairs for the comparisons
    x[64] = np.nan                                  # hmax / hmin: NaN on one side gives the other
    out = cuda.to_device(np.full((24, n), np.nan, np.float16))
    flags = cuda.to_device(np.zeros((6, n), np.bool_))
    kernel = cuda.jit(ALL_SIG)(all_functions)
    kernel[n // 128, 128](cuda.to_device(x), cuda.to_device(y), cuda.to_device(z), out, flags)
    got, got_flags = out.copy_to_host(), flags.copy_to_host()

    X, Y, Z = (v.astype(np.float64) for v in (x, y, z))
    h = lambda v: v.astype(np.float16)            # one rounding from float64
    exact = {0: h(X + Y), 1: h(X - Y), 2: h(X * Y), 4: -x, 5: np.abs(x), 6: h(X * Y + Z),
             7: np.fmax(x, y), 8: np.fmin(x, y), 20: np.ceil(x), 21: np.floor(x),
             22: np.rint(x), 23: np.trunc(x)}
    close = {3: X / Y, 9: np.sin(X), 10: np.cos(X), 11: np.exp(X), 12: np.exp2(X), 13: 10.0 ** X,
             14: np.log(Y), 15: np.log2(Y), 16: np.log10(Y), 17: np.sqrt(Y), 18: 1 / np.sqrt(Y),
             19: 1 / Y}
    ok = ~np.isnan(x)
    for row, want in exact.items():
        sel = ok if row not in (7, 8) else slice(None)
        np.testing.assert_array_equal(got[row][sel], want[sel], err_msg=f"row {row}, seed {SEED}")
    for row, want in close.items():
        w = h(want)[ok].astype(np.float64)
        ulp = np.spacing(np.abs(w).astype(np.float16)).astype(np.float64)
        g = got[row][ok].astype(np.float64)
        # y[:64] copies x, so log/sqrt of a negative (NaN) and 1/0 (inf) occur: those must match exactly
        special = ~np.isfinite(w)
        np.testing.assert_array_equal(g[special], w[special], err_msg=f"row {row}, seed {SEED}")
        err = np.abs(g[~special] - w[~special])
        assert np.all(err <= 2 * ulp[~special]), \
            f"row {row}: max error {np.max(err / ulp[~special])} ulp, seed {SEED}"
    for k, op in enumerate((np.equal, np.not_equal, np.greater_equal, np.greater, np.less_equal,
                            np.less)):
        np.testing.assert_array_equal(got_flags[k], op(x, y), err_msg=f"comparison {k}, seed {SEED}")
