// curand_kernel.h's device API behind numba's foreign-function ABI, for
// cudajit.mathdx.random (nvmath.device.random's names; docs/mathdx.md "RNG").
//
// Every state is one record: a generator tag at offset 0, the curand state
// at offset 16 (mathdx_random.py makes the dtypes). One entry point per
// operation takes the record as void* and switches on the tag (a branch
// every thread of a kernel takes alike), so that one
// Python name (random.uniform) serves every generator as nvmath's does.
// Each function is `extern "C" __device__ int f(T* ret, ...)`, returning 0
// (numba's ABI, docs/language.md "Foreign device functions"); 2- and
// 4-wide results are written through an output pointer (a local array).
#include <curand_kernel.h>

namespace {

enum Kind : int { kXorwow = 1, kPhilox = 2, kMrg32k3a = 3 };

// The sizes mathdx_random.py gives each state's bytes.
static_assert(sizeof(curandStateXORWOW_t) <= 48, "XORWOW state size");
static_assert(sizeof(curandStatePhilox4_32_10_t) <= 64, "Philox state size");
static_assert(sizeof(curandStateMRG32k3a_t) <= 48, "MRG32k3a state size");

__device__ int kindOf(void* record) { return *static_cast<int*>(record); }
template <class S>
__device__ S* stateOf(void* record) {
  return reinterpret_cast<S*>(static_cast<char*>(record) + 16);
}

// Runs `statement` with `s` pointing at the record's state, of its
// generator's type (NVRTC compiles no lambdas into device code without
// extended-lambda support, hence a macro).
#define CJ_WITH_STATE(record, statement)                                                    \
  switch (kindOf(record)) {                                                                 \
    case kPhilox: { auto* s = stateOf<curandStatePhilox4_32_10_t>(record); statement; break; } \
    case kMrg32k3a: { auto* s = stateOf<curandStateMRG32k3a_t>(record); statement; break; }    \
    default: { auto* s = stateOf<curandStateXORWOW_t>(record); statement; break; }             \
  }

}  // namespace

extern "C" {

__device__ int cj_curand_init(int* ret, unsigned long long seed, unsigned long long subsequence,
                              unsigned long long offset, void* record) {
  CJ_WITH_STATE(record, curand_init(seed, subsequence, offset, s));
  *ret = 0;
  return 0;
}

__device__ int cj_curand_rand(unsigned int* ret, void* record) {
  CJ_WITH_STATE(record, *ret = curand(s));
  return 0;
}

__device__ int cj_curand_uniform(float* ret, void* record) {
  CJ_WITH_STATE(record, *ret = curand_uniform(s));
  return 0;
}

__device__ int cj_curand_uniform_double(double* ret, void* record) {
  CJ_WITH_STATE(record, *ret = curand_uniform_double(s));
  return 0;
}

__device__ int cj_curand_normal(float* ret, void* record) {
  CJ_WITH_STATE(record, *ret = curand_normal(s));
  return 0;
}

__device__ int cj_curand_normal_double(double* ret, void* record) {
  CJ_WITH_STATE(record, *ret = curand_normal_double(s));
  return 0;
}

__device__ int cj_curand_log_normal(float* ret, void* record, float mean, float stddev) {
  CJ_WITH_STATE(record, *ret = curand_log_normal(s, mean, stddev));
  return 0;
}

__device__ int cj_curand_log_normal_double(double* ret, void* record, double mean, double stddev) {
  CJ_WITH_STATE(record, *ret = curand_log_normal_double(s, mean, stddev));
  return 0;
}

__device__ int cj_curand_poisson(unsigned int* ret, void* record, double lambda) {
  CJ_WITH_STATE(record, *ret = curand_poisson(s, lambda));
  return 0;
}

__device__ int cj_curand_normal2(int* ret, void* record, float* out) {
  float2 v;
  CJ_WITH_STATE(record, v = curand_normal2(s));
  out[0] = v.x;
  out[1] = v.y;
  *ret = 0;
  return 0;
}

__device__ int cj_curand_normal2_double(int* ret, void* record, double* out) {
  double2 v;
  CJ_WITH_STATE(record, v = curand_normal2_double(s));
  out[0] = v.x;
  out[1] = v.y;
  *ret = 0;
  return 0;
}

__device__ int cj_curand_skipahead(int* ret, unsigned long long n, void* record) {
  CJ_WITH_STATE(record, skipahead(n, s));
  *ret = 0;
  return 0;
}

__device__ int cj_curand_skipahead_sequence(int* ret, unsigned long long n, void* record) {
  CJ_WITH_STATE(record, skipahead_sequence(n, s));
  *ret = 0;
  return 0;
}

// Philox4_32_10 only, as in curand_kernel.h (the 4-wide and uniform2_double
// functions exist for it alone). The generator is known only at run time
// here: another one's state stops the kernel with a message rather than
// being read as a Philox state.
static __device__ void requirePhilox(void* record, const char* what) {
  if (kindOf(record) != kPhilox) {
    printf("cudajit.mathdx.random.%s: needs a Philox4_32_10 state (random.StatesPhilox4_32_10), as curand's %s\n",
           what, what);
    __trap();
  }
}

__device__ int cj_curand_rand4(int* ret, void* record, unsigned int* out) {
  requirePhilox(record, "rand4");
  uint4 v = curand4(stateOf<curandStatePhilox4_32_10_t>(record));
  out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
  *ret = 0;
  return 0;
}

__device__ int cj_curand_uniform4(int* ret, void* record, float* out) {
  requirePhilox(record, "uniform4");
  float4 v = curand_uniform4(stateOf<curandStatePhilox4_32_10_t>(record));
  out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
  *ret = 0;
  return 0;
}

__device__ int cj_curand_normal4(int* ret, void* record, float* out) {
  requirePhilox(record, "normal4");
  float4 v = curand_normal4(stateOf<curandStatePhilox4_32_10_t>(record));
  out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
  *ret = 0;
  return 0;
}

__device__ int cj_curand_uniform2_double(int* ret, void* record, double* out) {
  requirePhilox(record, "uniform2_double");
  double2 v = curand_uniform2_double(stateOf<curandStatePhilox4_32_10_t>(record));
  out[0] = v.x;
  out[1] = v.y;
  *ret = 0;
  return 0;
}

}  // extern "C"
