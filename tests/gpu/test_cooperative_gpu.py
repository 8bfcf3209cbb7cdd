"""Cooperative groups on the GPU (numba's cuda.cg): grid barriers against
numpy on fresh random data, across many blocks and rounds; the grid limit
from max_cooperative_grid_blocks and the error past it."""
import os
import sys

import numpy as np
import pytest

import cudajit as cuda

pytestmark = pytest.mark.gpu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cooperative_kernels as K  # noqa: E402

SEED = int(os.environ.get("CUDAJIT_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


def reverse_rounds_reference(a, rounds):
    a = a.astype(np.float32).copy()
    for _ in range(rounds):
        b = a[::-1] + np.float32(1.0)
        a = b * np.float32(0.5)
    return a, b


@pytest.mark.parametrize("n,threads", [(100_000, 256), (4096, 1024), (777, 64)])
def test_reverse_rounds(n, threads):
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal(n).astype(np.float32)
    blocks = -(-n // threads)
    K.reverse_rounds.compile("(float32[::1], float32[::1], int64)")
    (ov,) = K.reverse_rounds.overloads.values()
    assert ov.cooperative
    limit = ov.max_cooperative_grid_blocks(threads)
    assert limit >= cuda.get_current_device().MULTIPROCESSOR_COUNT
    if blocks > limit:
        pytest.skip(f"{blocks} blocks exceed this GPU's cooperative limit {limit}")
    da, db = cuda.to_device(a), cuda.to_device(np.full(n, np.nan, np.float32))
    K.reverse_rounds[blocks, threads](da, db, 25)
    want_a, want_b = reverse_rounds_reference(a, 25)
    np.testing.assert_array_equal(da.copy_to_host(), want_a, err_msg=f"seed {SEED}")
    np.testing.assert_array_equal(db.copy_to_host(), want_b, err_msg=f"seed {SEED}")


def test_two_phase_sum_in_one_launch():
    rng = np.random.default_rng(SEED)
    n = 200_000
    x = rng.standard_normal(n).astype(np.float32)
    blocks = -(-n // 256)
    partial = cuda.to_device(np.full(blocks, np.nan, np.float32))
    out = cuda.to_device(np.full(1, np.nan, np.float32))
    K.two_phase_sum[blocks, 256](cuda.to_device(x), partial, out)
    np.testing.assert_allclose(out.copy_to_host()[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)


def test_a_grid_past_the_limit_is_refused():
    K.reverse_rounds.compile("(float32[::1], float32[::1], int64)")
    (ov,) = K.reverse_rounds.overloads.values()
    limit = ov.max_cooperative_grid_blocks(1024)
    a = cuda.to_device(np.zeros(1024 * (limit + 1), np.float32))
    b = cuda.device_array_like(a)
    with pytest.raises(cuda.CudaAPIError, match=f"the grid has {limit + 1} blocks and the device holds "
                                                 f"at most {limit}"):
        K.reverse_rounds[limit + 1, 1024](a, b, 1)
    cuda.synchronize()
