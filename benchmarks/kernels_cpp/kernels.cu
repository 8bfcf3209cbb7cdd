// The five benchmark kernels of bench_kernels.py in CUDA C++, written the way
// a CUDA programmer writes them, with the same algorithm, launch shape and
// data types as the Python versions (compiled by NVRTC at full optimisation).
// TPB, NBINS and TILE are passed as -D macros so both sides agree.

#ifndef TPB
#define TPB 256
#endif
#ifndef NBINS
#define NBINS 256
#endif
#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// Per-block histogram in shared memory (shared atomics), flushed with one
// global atomic per bin. Grid-stride over the input; blockDim.x == NBINS.
extern "C" __global__ void hist_shared(const int* __restrict__ x, long long n, int* __restrict__ hist) {
    __shared__ int sh[NBINS];
    int t = threadIdx.x;
    sh[t] = 0;
    __syncthreads();
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + t; i < n; i += stride)
        atomicAdd(&sh[x[i]], 1);
    __syncthreads();
    atomicAdd(&hist[t], sh[t]);
}

// C = A @ B with TILE x TILE shared tiles (row-major, square n).
extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int n) {
    __shared__ float sA[TILE][TILE];
    __shared__ float sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE + tx;   // column
    int y = blockIdx.y * TILE + ty;   // row
    float acc = 0.0f;
    for (int t = 0; t < gridDim.x; ++t) {
        int k = t * TILE;
        sA[ty][tx] = (y < n && k + tx < n) ? A[y * n + k + tx] : 0.0f;
        sB[ty][tx] = (x < n && k + ty < n) ? B[(k + ty) * n + x] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; ++j) acc += sA[ty][j] * sB[j][tx];
        __syncthreads();
    }
    if (y < n && x < n) C[y * n + x] = acc;
}

// 5-point stencil; the boundary is copied.
extern "C" __global__ void stencil5(const float* __restrict__ a, float* __restrict__ out, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < m - 1 && j > 0 && j < n - 1) {
        long long c = (long long)i * n + j;
        out[c] = 0.25f * (a[c - n] + a[c + n] + a[c - 1] + a[c + 1]) - a[c];
    } else if (i < m && j < n) {
        long long c = (long long)i * n + j;
        out[c] = a[c];
    }
}

// Grid-stride accumulation, then a shared-memory tree reduction
// (w = TPB/2; while (w > 0) { ...; w /= 2; }), one partial sum per block.
extern "C" __global__ void reduce_tree(const float* __restrict__ x, long long n, float* __restrict__ partial) {
    __shared__ float s[TPB];
    int t = threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + t; i < n; i += stride) acc += x[i];
    s[t] = acc;
    __syncthreads();
    int w = TPB / 2;
    while (w > 0) {
        if (t < w) s[t] += s[t + w];
        __syncthreads();
        w /= 2;
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
