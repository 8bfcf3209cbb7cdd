// MatmulSpec's, FftSpec's and RandomSpec's text forms (the caches' key and the messages' subject).
//
// Built with std::to_string, not iostreams: once libNVVM / nvJitLink have
// run in the process, an std::ostringstream here printed integers as
// nothing (every spec then had the same text, and the memory cache handed
// one descriptor's result to another).
#include "mathdx/mathdx.h"

namespace cj::mathdx {
namespace {

std::string text(int64_t v) { return std::to_string(v); }
const std::string& text(const std::string& s) { return s; }

template <class T, size_t N>
std::string join(const std::array<T, N>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += (i ? sep : "") + text(v[i]);
  return out;
}

}  // namespace

std::string MatmulSpec::toString() const {
  return function + "(size=" + join(size, "x") + ", precision=" + join(precision, ",") +
         ", data_type=" + data_type + ", arrangement=" + join(arrangement, ",") +
         ", transpose_mode=" + join(transpose_mode, ",") + ", block_dim=" + join(block_dim, "x") +
         ", leading_dimension=" + join(leading_dimension, ",") + ", alignment=" + join(alignment, ",") +
         ", execution=" + execution + (api.empty() ? "" : ", api=" + api) + (code ? "" : ", code=none") +
         (with_pipeline ? ", with_pipeline" : "") + (input_streaming ? ", input_streaming" : "") +
         (static_block_dim ? ", static_block_dim" : "") +
         ", sm=" + std::to_string(sm) + ")";
}

std::string FftSpec::toString() const {
  return "FFT(size=" + std::to_string(size) + ", precision=" + precision + ", fft_type=" + fft_type +
         ", direction=" + direction + ", execution=" + execution + ", ffts_per_block=" +
         std::to_string(ffts_per_block) + ", elements_per_thread=" + std::to_string(elements_per_thread) +
         ", complex_layout=" + complex_layout + ", real_mode=" + real_mode + (api.empty() ? "" : ", api=" + api) +
         (code ? "" : ", code=none") + ", sm=" + std::to_string(sm) + ")";
}

std::string RandomSpec::toString() const {
  return "RNG(generator=" + generator + ", philox_rounds=" + std::to_string(philox_rounds) + ", distribution=" +
         distribution + ", output_type=" + output_type + ", method=" + method + ", normal_method=" + normal_method +
         ", sm=" + std::to_string(sm) + ")";
}

std::string TensorFunctionSpec::toString() const {
  std::string list;
  for (const TensorRef& t : tensors) list += (list.empty() ? "" : ";") + t.type + (t.like.empty() ? "" : ":" + t.like);
  MatmulSpec mm = matmul;
  mm.api = "tensors";
  mm.code = true;   // the device function's own code; the GEMM's pointer-API code plays no part
  // The GEMM's text last: its "sm=NN)" ends this one too (typeinfer reads the target there).
  std::string pipe;
  if (pipeline.depth > 0 || !pipelines.empty()) {
    auto dims = [](const std::vector<int64_t>& v) {
      std::string out;
      for (int64_t x : v) out += (out.empty() ? "" : "x") + std::to_string(x);
      return out;
    };
    pipe = "pipeline=depth:" + std::to_string(pipeline.depth) + ";a:" + dims(pipeline.a_shape) + "/" +
           dims(pipeline.a_stride) + ";b:" + dims(pipeline.b_shape) + "/" + dims(pipeline.b_stride) +
           ";takes:" + pipelines + ", ";
  }
  return "TENSORS(function=" + function + ", tensors=" + list + ", alignment=" + std::to_string(alignment) + ", " +
         pipe + mm.toString() + ")";
}

}  // namespace cj::mathdx
