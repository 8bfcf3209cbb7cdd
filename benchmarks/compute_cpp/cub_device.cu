// The peers of benchmarks/bench_compute.py: CUB's device-wide algorithms
// called from CUDA C++, built by nvcc into a shared library the benchmark
// loads with ctypes. Each function is CUB's two-phase call: with temp ==
// nullptr it only sets *bytes. Returns the cudaError_t.
#include <cub/cub.cuh>

extern "C" {

int cub_reduce_sum_f32(void* temp, size_t* bytes, const float* in, float* out, long long n, cudaStream_t s) {
  return static_cast<int>(cub::DeviceReduce::Sum(temp, *bytes, in, out, n, s));
}

int cub_inclusive_sum_f32(void* temp, size_t* bytes, const float* in, float* out, long long n, cudaStream_t s) {
  return static_cast<int>(cub::DeviceScan::InclusiveSum(temp, *bytes, in, out, n, s));
}

int cub_exclusive_sum_i32(void* temp, size_t* bytes, const int* in, int* out, long long n, cudaStream_t s) {
  return static_cast<int>(cub::DeviceScan::ExclusiveSum(temp, *bytes, in, out, n, s));
}

int cub_segmented_sum_f32(void* temp, size_t* bytes, const float* in, float* out, int segments, const int* begin,
                          const int* end, cudaStream_t s) {
  return static_cast<int>(cub::DeviceSegmentedReduce::Sum(temp, *bytes, in, out, segments, begin, end, s));
}

int cub_radix_sort_keys_u32(void* temp, size_t* bytes, const unsigned* in, unsigned* out, long long n,
                            cudaStream_t s) {
  return static_cast<int>(cub::DeviceRadixSort::SortKeys(temp, *bytes, in, out, n, 0, 32, s));
}

int cub_radix_sort_pairs_u32(void* temp, size_t* bytes, const unsigned* keys_in, unsigned* keys_out,
                             const unsigned* values_in, unsigned* values_out, long long n, cudaStream_t s) {
  return static_cast<int>(
      cub::DeviceRadixSort::SortPairs(temp, *bytes, keys_in, keys_out, values_in, values_out, n, 0, 32, s));
}

// The same with an int count: CUB then takes 32-bit offsets (choose_offset_t),
// whose tuning differs (sm_90: 20 keys a thread instead of 19, 23 pairs
// instead of 17), as cudajit's sorts below 2^32 items do.
int cub_radix_sort_keys_u32_i32(void* temp, size_t* bytes, const unsigned* in, unsigned* out, int n,
                                cudaStream_t s) {
  return static_cast<int>(cub::DeviceRadixSort::SortKeys(temp, *bytes, in, out, n, 0, 32, s));
}

int cub_radix_sort_pairs_u32_i32(void* temp, size_t* bytes, const unsigned* keys_in, unsigned* keys_out,
                                 const unsigned* values_in, unsigned* values_out, int n, cudaStream_t s) {
  return static_cast<int>(
      cub::DeviceRadixSort::SortPairs(temp, *bytes, keys_in, keys_out, values_in, values_out, n, 0, 32, s));
}

}  // extern "C"
