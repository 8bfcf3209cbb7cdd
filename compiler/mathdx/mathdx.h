// MathDx device libraries (cuBLASDx GEMM, cuFFTDx FFT, cuRANDDx RNG) through NVIDIA's
// libmathdx: a description of a routine (sizes, precisions, arrangement,
// block shape, target) -> its LTO-IR, the extern "C" symbol to call, and the
// traits a caller needs (leading dimensions, block dim, shared memory size).
//
// libmathdx is loaded with dlopen on first use (library.h says where from):
// nothing MathDx is needed to build or import cudajit. Names and spellings
// follow nvmath.device (numpy dtype names, 'real'/'complex', 'row_major').
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/error.h"

namespace cj::mathdx {

// libmathdx is not installed (or lacks an entry point cudajit needs). The
// Python binding raises ImportError for it, naming the pip package.
struct LibraryMissing : ToolchainError {
  using ToolchainError::ToolchainError;
};

// A cuBLASDx descriptor (cuBLASDx's operators). Every array is (A, B, C)
// except size (M, N, K). 0 / empty: the operator is not set and libmathdx
// picks its default (block_dim: the suggested one; leading_dimension: the
// tight one; arrangement: column-major).
struct MatmulSpec {
  std::array<int64_t, 3> size{0, 0, 0};
  std::array<std::string, 3> precision;   // "float16", "float32", "float64", ...
  std::string data_type = "real";         // "real" | "complex"
  std::array<std::string, 3> arrangement; // "row_major" | "col_major" | all empty
  std::array<std::string, 2> transpose_mode;  // A, B (deprecated in cuBLASDx)
  std::array<int64_t, 3> block_dim{0, 0, 0};
  std::array<int64_t, 3> leading_dimension{0, 0, 0};
  std::array<int64_t, 3> alignment{0, 0, 0};  // bytes
  std::string function = "MM";
  std::string execution = "Block";
  // "": the pointer API with the descriptor's leading dimensions,
  // void(alpha*, a*, b*, beta*, c*); "dynamic_ld": leading dimensions given at
  // the call, void(alpha*, a*, unsigned* lda, b*, unsigned* ldb, beta*, c*, unsigned* ldc).
  std::string api;
  int sm = 0;                                 // 80, 90, ...
  // false: the traits and the symbol, no LTO-IR. A Matmul object is built so
  // (finalizing the code is most of an instantiation's 5-20 s, and a kernel
  // on the tensor API never links it); matmulCode() makes the code when a
  // kernel links the routine.
  bool code = true;
  // cuBLASDx's WithPipeline and EnableInputStreaming (a GEMM a pipeline runs).
  bool with_pipeline = false, input_streaming = false;
  // cuBLASDx's experimental StaticBlockDim: the kernel is launched with
  // exactly block_dim threads (a larger launch block is then refused).
  bool static_block_dim = false;

  // One line, every field, the key of the caches: "MM(size=32x32x32, ...)".
  std::string toString() const;
};

struct MatmulResult {
  std::string spec;                    // MatmulSpec::toString()
  std::vector<std::vector<char>> ltoir;  // one or more LTO-IR modules
  std::string symbol;                  // extern "C" entry point
  std::string api;                     // MatmulSpec::api
  std::array<std::string, 3> value_type;   // A, B, C: "float32", "complex64", ...
  std::array<int64_t, 3> value_size{0, 0, 0};  // bytes
  std::array<int64_t, 3> size{0, 0, 0};
  std::array<int64_t, 3> block_dim{0, 0, 0};
  std::array<int64_t, 3> suggested_block_dim{0, 0, 0};
  std::array<int64_t, 3> leading_dimension{0, 0, 0};
  std::array<int64_t, 3> suggested_leading_dimension{0, 0, 0};
  std::array<std::string, 3> arrangement;
  std::array<int64_t, 3> alignment{0, 0, 0};
  int64_t max_threads_per_block = 0;
  // A, B and C one after the other, each at its alignment: what cuBLASDx's
  // get_shared_storage_size() gives for the shared-memory API.
  int64_t shared_memory_size = 0;
};

// A cuFFTDx descriptor, with the register ("thread data") API. 0 / empty:
// not set (libmathdx's default; direction: forward for r2c, inverse for c2r).
struct FftSpec {
  int64_t size = 0;
  std::string precision;          // "float16", "float32", "float64"
  std::string fft_type = "c2c";   // "c2c" | "r2c" | "c2r"
  std::string direction;          // "forward" | "inverse"
  std::string execution = "Block";  // "Block" | "Thread"
  int64_t ffts_per_block = 0;
  int64_t elements_per_thread = 0;
  std::string complex_layout;     // real FFTs: "natural" | "packed" | "full"
  std::string real_mode;          // real FFTs: "normal" | "folded"
  // "" : the register API, void(value_type* thread_data[, value_type* smem]);
  // "shared_memory": cuFFTDx's shared-memory API (Block only), void(value_type* smem)
  // on the block's data in shared memory.
  std::string api;
  int sm = 0;
  // false: the traits and the symbol, no LTO-IR (FFT(ffts_per_block=
  // 'suggested') asks libmathdx for the suggestion so, before the FFT itself).
  bool code = true;

  // "FFT(size=128, ...)": every field, the key of the caches.
  std::string toString() const;
};

// A trait libmathdx does not define for a descriptor (a Thread FFT has no
// block_dim, shared_memory_size or ffts_per_block).
constexpr int64_t kNoTrait = -1;

struct FftResult {
  std::string spec;                     // FftSpec::toString()
  std::vector<std::vector<char>> ltoir;
  std::string symbol;                   // void(value_type* thread_data[, value_type* smem])
  std::string execution;                // "Block" | "Thread"
  std::string api;                      // FftSpec::api
  std::string value_type, input_type, output_type;   // "complex64", "float32", ...
  int64_t size = 0, elements_per_thread = 0, storage_size = 0, stride = 0;
  int64_t implicit_type_batching = 0, input_length = 0, output_length = 0;
  int64_t input_elements_per_thread = 0, output_elements_per_thread = 0;
  int64_t shared_memory_size = kNoTrait, ffts_per_block = kNoTrait, suggested_ffts_per_block = kNoTrait;
  std::array<int64_t, 3> block_dim{kNoTrait, kNoTrait, kNoTrait};
};

// A cuRANDDx generator with one distribution, executed by a thread. The
// device functions made: init, generate, skip_offset, skip_subsequence.
struct RandomSpec {
  std::string generator = "philox4_32";   // "xorwow" | "mrg32k3a" | "philox4_32" | "pcg"
  int64_t philox_rounds = 0;              // 0: cuRANDDx's default (10)
  std::string distribution = "uniform";   // "uniform_bits" | "uniform" | "normal" | "log_normal" | "poisson"
  std::string output_type = "float32";    // a value type name: float32, float64, uint32, ...
  std::string method = "single";          // "single" | "pair" | "quad": values a call gives
  std::string normal_method;              // normal / log-normal: "icdf" | "box_muller"
  int sm = 0;

  std::string toString() const;           // "RNG(generator=philox4_32, ...)"
};

// The device functions of a RandomResult, in its `symbols` order.
enum class RandomFunction { Init, Generate, SkipOffset, SkipSubsequence, Count };

struct RandomResult {
  std::string spec;
  // One LTO-IR module defines every function: shared, so that a kernel calling
  // several of them links it once.
  std::shared_ptr<const std::vector<char>> ltoir;
  std::array<std::string, static_cast<size_t>(RandomFunction::Count)> symbols;
  int64_t state_size = 0, state_alignment = 0;
  int64_t count = 1;                      // values a generate call writes
  std::string output_type, param_type;    // param_type: float64 for Poisson, else output_type
};

// cuBLASDx's tensor API: an opaque tensor of a GEMM (a layout of
// nvmath.device: suggest_layout_smem_a(), get_layout_gmem_c(), ...) and the
// device functions on such tensors. In kernels a tensor is passed by value as
// struct {void* ptr} (shared and register tensors) or struct {void* ptr;
// long long ld} (global tensors, whose leading dimension is a run-time value).
struct TensorRef {
  std::string type;   // cublasdxTensorType's name, lower case: "suggested_smem_a", "gmem_c", "suggested_rmem_c", ...
  std::string like;   // "": the GEMM's own value type; else a value type name (cublasdxMakeTensorLike)
};

// cuBLASDx's pipelines (nvmath's DevicePipeline and TilePipeline): a device
// pipeline streams tiles of global A and B through `depth` shared-memory
// stages; their shapes and strides (in elements) are part of the descriptor.
// A tile pipeline is one block's share of it. In kernels both go by value as
// struct {void* ptr}: the device pipeline's state in global memory (made on
// the host by its "create" function), the tile pipeline's in local memory.
struct PipelineSpec {
  int64_t depth = 0;   // 0: no pipeline
  std::vector<int64_t> a_shape, a_stride, b_shape, b_stride;
};

struct PipelineTraits {
  int64_t storage_bytes = 0, storage_alignment = 0;
  int64_t buffer_size = 0, buffer_alignment = 0;   // the device pipeline's shared memory
  std::array<int64_t, 3> block_dim{0, 0, 0};       // the device pipeline's launch block
};

// One device function on tensors of a Matmul (api "tensors"), or with
// function "traits" none: only the tensors' (and the pipelines') traits.
struct TensorFunctionSpec {
  MatmulSpec matmul;                 // its api is set to "tensors"
  // "traits" | "execute" | "copy" | "copy_wait" | "clear" | "axpby" | ...
  // | "create" | "destroy" | "reset" (of pipelines)
  std::string function = "traits";
  std::vector<TensorRef> tensors;
  int64_t alignment = 0;             // copy: the copy's alignment in bytes (0: the tensors')
  PipelineSpec pipeline;
  std::string pipelines;             // those the function takes, in order: "device", "tile" or "device,tile"

  // "TENSORS(function=copy, tensors=gmem_a;suggested_smem_a, alignment=0, MM(...))".
  std::string toString() const;
};

// Every tensor type's name, in cublasdxTensorType's order: a traits query of
// all of them is what a layout's traits come from (one cache entry a GEMM).
const std::vector<std::string>& tensorTypeNames();

struct TensorTraits {
  int64_t uid = 0, storage_bytes = 0, alignment = 0, logical_size = 0;
};

struct TensorFunctionResult {
  std::string spec;
  std::string symbol;                       // "" for "traits"
  std::vector<std::vector<char>> ltoir;     // empty for "traits"
  std::vector<TensorTraits> tensors;        // one per TensorRef
  PipelineTraits device_pipeline, tile_pipeline;   // with a pipeline (depth > 0)
};

// Instantiates a spec somewhere else and returns compileSerialized's bytes.
//
// libmathdx (0.4.1) carries a static libstdc++ whose locale facet ids are
// GNU-unique symbols, bound process-wide to the system libstdc++'s: once
// anything in the process has built a C++ locale (any C++ stream: ours, or
// an imported library's) before libmathdx's first use, every number it
// writes into its generated C++ throws std::bad_cast, which it reports as
// "An internal error occurred". A fresh process is the one place where
// libmathdx is sure to come first: the binding hands matmul() a function
// that runs compileSerialized there.
using Instantiate = std::function<std::string(const MatmulSpec&)>;
using InstantiateFft = std::function<std::string(const FftSpec&)>;
using InstantiateRandom = std::function<std::string(const RandomSpec&)>;
using InstantiateTensorFunction = std::function<std::string(const TensorFunctionSpec&)>;

// Validates the spec, then fetches the result from the memory cache, the
// disk cache (support/disk_cache.h: <cache root>/mathdx) or instantiates it
// (through `elsewhere` when given, else in this process). Throws
// LibraryMissing, CompileError (a descriptor libmathdx rejects, with its
// message; or a spelling not in enums.def) or ToolchainError.
std::shared_ptr<const MatmulResult> matmul(const MatmulSpec& spec, const Instantiate& elsewhere = {});

std::shared_ptr<const FftResult> fft(const FftSpec& spec, const InstantiateFft& elsewhere = {});
std::shared_ptr<const RandomResult> random(const RandomSpec& spec, const InstantiateRandom& elsewhere = {});
// Served as the routines are; a kernel finds it by specKey(result->spec)
// (servedTensorFunction). Without `elsewhere`, a miss goes to the
// instantiator setTensorFunctionInstantiator() registered.
std::shared_ptr<const TensorFunctionResult> tensorFunction(const TensorFunctionSpec& spec,
                                                           const InstantiateTensorFunction& elsewhere = {});
void setTensorFunctionInstantiator(InstantiateTensorFunction instantiate);
std::shared_ptr<const TensorFunctionResult> servedTensorFunction(const std::string& key);
// Serves the specs not served yet side by side (threads, each through the
// registered instantiator's own process): a kernel's tensor functions cost
// the slowest NVRTC compile instead of their sum. Errors are dropped: the
// call that needs a spec serves it again and reports them.
void prefetchTensorFunctions(const std::vector<TensorFunctionSpec>& specs);
// How prefetchTensorFunctions waits for its threads: `run(work)` runs work
// with the embedding interpreter's lock released when the calling thread
// holds it (the Python binding registers it: its instantiator takes that
// lock on each thread, and a compile may run holding it). Unset: work runs
// as is.
void setUnlockedSection(std::function<void(const std::function<void()>&)> run);
// The spec of a Matmul served in this process, by its key; false for another key.
bool servedMatmulSpec(const std::string& key, MatmulSpec* spec);
// The spec of a tensor function with a pipeline served here (a DevicePipeline's
// traits), by its key: what the pipeline's functions in kernels are made from.
bool servedPipelineSpec(const std::string& key, TensorFunctionSpec* spec);
// The traits of one tensor of a Matmul served here (tensor type, "like" value
// type or ""), from the query of all of its tensors (tensorTypeNames; with a
// "like" type, all but the accumulators, which libmathdx does not remake). Throws
// as tensorFunction; ToolchainError for a key not served here.
TensorTraits matmulTensorTraits(const std::string& mm_key, const std::string& tensor, const std::string& like);
// The traits query matmulTensorTraits serves (false for a key not served here).
bool matmulTraitsSpec(const std::string& mm_key, const std::string& like, TensorFunctionSpec* spec);

// cuFFTDx's knob query (nvmath's FFT.valid): the combinations of the
// named knobs ("elements_per_thread", "ffts_per_block") libmathdx offers for
// the spec's other operators, one tuple each, in libmathdx's order. Runs in
// this process, uncached (the Python face runs it in a fresh one, as an
// instantiation). Throws CompileError for an unknown knob or a spec
// libmathdx refuses.
std::vector<std::vector<int64_t>> fftKnobs(const FftSpec& spec, const std::vector<std::string>& knobs);

// Instantiates the spec through libmathdx in this process, in the disk
// cache's serialized form (what an Instantiate returns).
std::string compileSerialized(const MatmulSpec& spec);
std::string compileSerialized(const FftSpec& spec);
std::string compileSerialized(const RandomSpec& spec);
std::string compileSerialized(const TensorFunctionSpec& spec);

// The name a descriptor goes by in kernels (the symbol
// `cudajit.mathdx.matmul.<key>` a Matmul object freezes to, `...fft.<key>`
// an FFT, `...random.<key>` a Random): 16 hex digits
// of the SHA-256 of libmathdx's version and the spec text (throws
// LibraryMissing without libmathdx). Every result matmul() served in this
// process can be found by it; nullptr for a key it has not served.
std::string specKey(const std::string& spec_text);
std::shared_ptr<const MatmulResult> servedResult(const std::string& key);
std::shared_ptr<const FftResult> servedFft(const std::string& key);
std::shared_ptr<const RandomResult> servedRandom(const std::string& key);

// A served FFT's sibling with another execute API (FftSpec::api): nvmath's
// FFT picks the API by the call (fft(smem) on a Block FFT is cuFFTDx's
// shared-memory API), so a kernel may need the sibling of the FFT it names.
// Served like fft(), a miss instantiated through the function
// setFftInstantiator() registered (the Python binding's fresh process);
// nullptr for a key not served here. Throws as fft() does, ToolchainError
// when no instantiator is registered.
std::shared_ptr<const FftResult> fftWithApi(const std::string& key, const std::string& api);
void setFftInstantiator(InstantiateFft instantiate);
// The same for a GEMM: MM.execute(alpha, a, lda, b, ldb, beta, c, ldc) is
// cuBLASDx's dynamic leading-dimension API (MatmulSpec::api "dynamic_ld").
std::shared_ptr<const MatmulResult> matmulWithApi(const std::string& key, const std::string& api);
// The result of `key` with its LTO-IR: itself, or its spec with code = true,
// through the registered instantiator (nullptr for a key not served here).
std::shared_ptr<const MatmulResult> matmulCode(const std::string& key);
void setMatmulInstantiator(Instantiate instantiate);

// "libmathdx 0.4.1 at /.../libmathdx.so.0"; throws LibraryMissing.
std::string libraryDescription();
// Directories searched as site-packages for the nvidia-libmathdx wheel.
void addSiteDirectories(const std::vector<std::string>& dirs);

struct CacheStats {
  int64_t memory_hits = 0, disk_hits = 0, compiles = 0;
};
CacheStats cacheStats();
std::string cacheDirectory();
void clearMemoryCache();

}  // namespace cj::mathdx
