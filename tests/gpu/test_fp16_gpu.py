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
from test_fp16 import ALL_SIG, ALL_SIG_BF16, all_functions, all_functions_bf16  # noqa: E402

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


def _to_bf16(v):
    """float64 values rounded once to bfloat16 (to nearest even), as float64."""
    b = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(v), np.nan, out)


def test_every_bf16_function_matches_numpy():
    """cuda.bf16 on PyTorch bfloat16 tensors: arithmetic, fma and the roundings
    within one bfloat16 ulp of the float64 result (computed in float32 and
    rounded once, or in float64 for fma), the comparisons exact, the math
    functions within two ulps."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(SEED)
    n = 4096
    x = _to_bf16(rng.uniform(-4, 4, n))
    y = _to_bf16(rng.uniform(0.25, 8, n))
    z = _to_bf16(rng.uniform(-4, 4, n))
    y[:64] = x[:64]
    t = lambda v: torch.tensor(v, dtype=torch.bfloat16, device="cuda")
    out = torch.full((24, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    flags = torch.zeros((6, n), dtype=torch.bool, device="cuda")
    kernel = cuda.jit(ALL_SIG_BF16)(all_functions_bf16)
    kernel[n // 128, 128](t(x), t(y), t(z), out, flags)
    got = out.float().cpu().numpy().astype(np.float64)
    got_flags = flags.cpu().numpy()
    want = {0: x + y, 1: x - y, 2: x * y, 3: x / y, 4: -x, 5: np.abs(x), 6: x * y + z,
            7: np.fmax(x, y), 8: np.fmin(x, y), 9: np.sin(x), 10: np.cos(x), 11: np.exp(x),
            12: np.exp2(x), 13: 10.0 ** x, 14: np.log(y), 15: np.log2(y), 16: np.log10(y),
            17: np.sqrt(y), 18: 1 / np.sqrt(y), 19: 1 / y, 20: np.ceil(x), 21: np.floor(x),
            22: np.rint(x), 23: np.trunc(x)}
    exact = (4, 5, 7, 8, 20, 21, 22, 23)
    with np.errstate(invalid="ignore", divide="ignore"):   # y[:64] copies x: log/sqrt of negatives, 1/0
        want = {row: _to_bf16(w) for row, w in want.items()}
    for row, w in want.items():
        g = got[row]
        special = ~np.isfinite(w)   # NaN and inf must match exactly
        np.testing.assert_array_equal(g[special], w[special], err_msg=f"bf16 row {row}, seed {SEED}")
        w, g = w[~special], g[~special]
        ulp = np.abs(w) * 2.0 ** -7 + 1e-38
        err = np.abs(g - w)
        limit = 0 if row in exact else (1 if row in (0, 1, 2, 3, 6) else 2) * ulp
        assert np.all(err <= limit), f"bf16 row {row}: max error {np.max(err / ulp)} ulp, seed {SEED}"
    for k, op in enumerate((np.equal, np.not_equal, np.greater_equal, np.greater, np.less_equal,
                            np.less)):
        np.testing.assert_array_equal(got_flags[k], op(x, y), err_msg=f"bf16 comparison {k}, seed {SEED}")


def test_bf16_exact_conversions():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(SEED)
    x = torch.tensor(rng.uniform(-100, 100, 1024), dtype=torch.bfloat16, device="cuda")
    f = torch.full((1024,), float("nan"), dtype=torch.float32, device="cuda")
    i = torch.zeros(1024, dtype=torch.int16, device="cuda")

    @cuda.jit
    def k(x, f, i):
        j = cuda.grid(1)
        if j < x.shape[0]:
            f[j] = cuda.bf16.bfloat16_to_float32(x[j])
            i[j] = cuda.bf16.bfloat16_as_int16(x[j])

    k[8, 128](x, f, i)
    assert torch.equal(f, x.float())
    assert torch.equal(i, x.view(torch.int16))
