"""GPU ufuncs, gufuncs and reductions in numba.cuda's spelling (the user
side of python/cudajit/ufunc.py): tests/test_ufunc.py checks their typing,
errors and generated kernels without a GPU, tests/gpu/test_ufunc_gpu.py
runs them against numpy."""
import math

import cudajit as cuda
from cudajit import guvectorize, vectorize


@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"], target="cuda")
def discriminant(a, b, c):
    return math.sqrt(b ** 2 - 4 * a * c)


@cuda.jit(device=True)
def scaled(x, y, z):
    return x ** y / z


@vectorize(["float32(float32, float32, float32)"], target="cuda")
def calls_a_device_function(x, y, z):
    return scaled(x, y, z)


@vectorize(["int64(int64, int64)", "float64(float64, float64)"], target="cuda")
def floor_mod(a, b):
    return a % b


@vectorize
def lazy_axpy(a, x, y):
    return a * x + y


@guvectorize(["void(float32[:, :], float32[:, :], float32[:, :])",
              "void(float64[:, :], float64[:, :], float64[:, :])"],
             "(m,n),(n,p)->(m,p)", target="cuda")
def matmulcore(A, B, C):
    m, n = A.shape
    n, p = B.shape
    for i in range(m):
        for j in range(p):
            s = 0.0
            for k in range(n):
                s += A[i, k] * B[k, j]
            C[i, j] = s


@guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->()", target="cuda")
def shifted_norm(x, shift, out):
    s = 0.0
    for k in range(x.shape[0]):
        s += (x[k] - shift) ** 2
    out[0] = math.sqrt(s)


@cuda.reduce
def sum_reduce(a, b):
    return a + b


max_reduce = cuda.Reduce(lambda a, b: max(a, b))
