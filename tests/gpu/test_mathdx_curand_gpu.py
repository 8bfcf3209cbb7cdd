"""cudajit.mathdx.random (nvmath.device.random's curand_kernel.h API) on the
GPU: every generator and distribution, checked by its moments over about a
million draws, reproducibility of a seed, independence of subsequences, and
Philox's 4-wide functions."""
import os

import numpy as np
import pytest

import cudajit as cuda
from cudajit.mathdx import random

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
THREADS, BLOCKS, DRAWS = 128, 64, 128
N = THREADS * BLOCKS
MAKERS = {"XORWOW": random.StatesXORWOW, "Philox4_32_10": random.StatesPhilox4_32_10,
          "MRG32k3a": random.StatesMRG32k3a}
COMPILED = random.Compile(cc=None)


@cuda.jit(link=COMPILED.files)
def setup(states, seed):
    i = cuda.grid(1)
    if i < states.shape[0]:
        random.init(seed, i, 0, states[i])


@cuda.jit(link=COMPILED.files)
def draw(states, f32, f64, u32):
    i = cuda.grid(1)
    for k in range(f32.shape[1]):
        f32[i, k, 0] = random.uniform(states[i])
        f32[i, k, 1] = random.normal(states[i])
        f32[i, k, 2] = random.log_normal(states[i], 0.25, 0.5)
        f64[i, k, 0] = random.uniform_double(states[i])
        f64[i, k, 1] = random.normal_double(states[i])
        u32[i, k, 0] = random.poisson(states[i], 4.5)
        u32[i, k, 1] = random.rand(states[i])
        v = random.normal2(states[i])
        f32[i, k, 3] = v.x
        f32[i, k, 4] = v.y


@cuda.jit(link=COMPILED.files)
def draw_wide(states, f32, f64):
    i = cuda.grid(1)
    for k in range(f32.shape[1]):
        u = random.uniform4(states[i])
        n = random.normal4(states[i])
        d = random.uniform2_double(states[i])
        f32[i, k, 0] = u.x
        f32[i, k, 1] = u.y
        f32[i, k, 2] = u.z
        f32[i, k, 3] = u.w
        f32[i, k, 4] = n.x
        f32[i, k, 5] = n.w
        f64[i, k, 0] = d.x
        f64[i, k, 1] = d.y


def run(kind, seed=None):
    states = MAKERS[kind](N)
    setup[BLOCKS, THREADS](states, SEED if seed is None else seed)
    f32 = np.full((N, DRAWS, 5), np.nan, np.float32)
    f64 = np.full((N, DRAWS, 2), np.nan)
    u32 = np.full((N, DRAWS, 2), 0xDEADBEEF, np.uint32)
    d32, d64, du32 = cuda.to_device(f32), cuda.to_device(f64), cuda.to_device(u32)
    draw[BLOCKS, THREADS](states, d32, d64, du32)
    return d32.copy_to_host(), d64.copy_to_host(), du32.copy_to_host()


def check_moments(x, mean, var, what):
    x = np.asarray(x, np.float64).ravel()
    se_mean = np.sqrt(var / x.size)
    assert abs(x.mean() - mean) < 6 * se_mean, (what, x.mean(), mean, SEED)
    assert abs(x.var() / var - 1) < 0.01, (what, x.var(), var, SEED)


@pytest.mark.parametrize("kind", list(MAKERS))
def test_distributions(kind):
    f32, f64, u32 = run(kind)
    for name, v in (("uniform", f32[..., 0]), ("uniform_double", f64[..., 0])):
        assert v.min() > 0 and v.max() <= 1, (kind, name)
        check_moments(v, 0.5, 1 / 12, f"{kind} {name}")
    for name, v in (("normal", f32[..., 1]), ("normal_double", f64[..., 1]),
                    ("normal2.x", f32[..., 3]), ("normal2.y", f32[..., 4])):
        check_moments(v, 0.0, 1.0, f"{kind} {name}")
    mu, sigma = 0.25, 0.5
    check_moments(f32[..., 2], np.exp(mu + sigma ** 2 / 2), (np.exp(sigma ** 2) - 1) * np.exp(2 * mu + sigma ** 2),
                  f"{kind} log_normal")
    check_moments(u32[..., 0], 4.5, 4.5, f"{kind} poisson")
    bits = u32[..., 1].ravel()
    check_moments(bits.astype(np.float64) / 2.0 ** 32, 0.5, 1 / 12, f"{kind} rand")
    assert np.mean(bits & 1) == pytest.approx(0.5, abs=0.005), kind


@pytest.mark.parametrize("kind", list(MAKERS))
def test_seed_reproduces_and_subsequences_differ(kind):
    a, _, _ = run(kind, seed=SEED % 100000)
    b, _, _ = run(kind, seed=SEED % 100000)
    np.testing.assert_array_equal(a, b)
    first = a[:, 0, 0]
    assert len(np.unique(first)) > 0.99 * N, kind       # thread i's subsequence i: distinct draws
    c, _, _ = run(kind, seed=SEED % 100000 + 1)
    assert np.mean(a == c) < 0.01, kind


def test_philox_wide_functions():
    states = random.StatesPhilox4_32_10(N)
    setup[BLOCKS, THREADS](states, SEED)
    f32 = np.full((N, DRAWS // 4, 6), np.nan, np.float32)
    f64 = np.full((N, DRAWS // 4, 2), np.nan)
    draw_wide[BLOCKS, THREADS](states, f32, f64)
    u = f32[..., :4]
    assert u.min() > 0 and u.max() <= 1
    check_moments(u, 0.5, 1 / 12, "uniform4")
    check_moments(f32[..., 4:], 0.0, 1.0, "normal4")
    check_moments(f64, 0.5, 1 / 12, "uniform2_double")
    # the four lanes are not copies of each other
    assert np.mean(u[..., 0] == u[..., 1]) < 0.001


def test_wide_functions_refuse_another_generator():
    # In a child process: the trap leaves its CUDA context unusable.
    import subprocess
    import sys
    code = (
        "import numpy as np, cudajit as cuda\n"
        "from cudajit.mathdx import random\n"
        "@cuda.jit\n"
        "def k(states, out):\n"
        "    i = cuda.grid(1)\n"
        "    random.init(1, i, 0, states[i])\n"
        "    out[i] = random.uniform4(states[i]).x\n"
        "s = random.StatesXORWOW(32)\n"
        "out = cuda.device_array(32, np.float32)\n"
        "k[1, 32](s, out)\n"
        "cuda.synchronize()\n"
        "print('no error')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert "no error" not in proc.stdout and proc.returncode != 0, proc.stdout
    assert "needs a Philox4_32_10 state" in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)
