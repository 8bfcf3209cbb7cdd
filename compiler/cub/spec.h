// What one CUB instantiation is: the spec a caller (type inference / codegen)
// fills in for a `cuda.block.*` / `cuda.warp.*` call, its validation, and the
// deterministic name of the extern "C" entry point it produces.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "types/types.h"

namespace cj::cub {

// X(Enum, "numpy name", "code", "C++ type", cudajit Scalar, is_integer)
// The code appears in entry-point names; the Scalar is the type of the
// value in the entry point's C ABI (types/c_abi.h).
#define CJ_CUB_DTYPES(X)                                            \
  X(I32, "int32",   "i32", "int",                Int32,   true)   \
  X(I64, "int64",   "i64", "long long",          Int64,   true)   \
  X(U32, "uint32",  "u32", "unsigned int",       UInt32,  true)   \
  X(U64, "uint64",  "u64", "unsigned long long", UInt64,  true)   \
  X(F32, "float32", "f32", "float",              Float32, false)  \
  X(F64, "float64", "f64", "double",             Float64, false)  \
  X(I8,  "int8",    "i8",  "signed char",        Int8,    true)   \
  X(I16, "int16",   "i16", "short",              Int16,   true)   \
  X(U8,  "uint8",   "u8",  "unsigned char",      UInt8,   true)   \
  X(U16, "uint16",  "u16", "unsigned short",     UInt16,  true)

// X(Enum, "name"). User: an `extern "C" __device__ T name(T, T)` defined in
// another LTO-IR module (a user's @cuda.jit(device=True) function).
#define CJ_CUB_OPS(X) \
  X(None, "none")     \
  X(Sum, "sum")       \
  X(Min, "min")       \
  X(Max, "max")       \
  X(User, "user")

// X(Enum, "name", cub::BlockLoadAlgorithm, cub::BlockStoreAlgorithm,
//   radix-sort output arrangement?, cub::BlockHistogramAlgorithm)
// "" / false: the arrangement does not apply to that family.
// blocked/striped name the arrangement of items across the threads' registers
// (blocked: thread t holds items [t*ipt, (t+1)*ipt); striped: t, t+n, ...).
// transpose / warp_transpose also give a blocked arrangement but access
// memory coalesced through the temp storage.
#define CJ_CUB_ARRANGEMENTS(X)                                                              \
  X(Default,       "default",        "",                               "",                                 false, "") \
  X(Blocked,       "blocked",        "cub::BLOCK_LOAD_DIRECT",         "cub::BLOCK_STORE_DIRECT",          true,  "") \
  X(Striped,       "striped",        "cub::BLOCK_LOAD_STRIPED",        "cub::BLOCK_STORE_STRIPED",         true,  "") \
  X(Vectorize,     "vectorize",      "cub::BLOCK_LOAD_VECTORIZE",      "cub::BLOCK_STORE_VECTORIZE",       false, "") \
  X(Transpose,     "transpose",      "cub::BLOCK_LOAD_TRANSPOSE",      "cub::BLOCK_STORE_TRANSPOSE",       false, "") \
  X(WarpTranspose, "warp_transpose", "cub::BLOCK_LOAD_WARP_TRANSPOSE", "cub::BLOCK_STORE_WARP_TRANSPOSE", false, "") \
  X(Atomic,        "atomic",         "",                               "",                                 false, "cub::BLOCK_HISTO_ATOMIC") \
  X(Sort,          "sort",           "",                               "",                                 false, "cub::BLOCK_HISTO_SORT")

enum class Dtype : uint8_t {
#define X(E, name, code, cxx, scalar, is_int) E,
  CJ_CUB_DTYPES(X)
#undef X
      Count
};
enum class Op : uint8_t {
#define X(E, name) E,
  CJ_CUB_OPS(X)
#undef X
};
enum class Arrangement : uint8_t {
#define X(E, name, load, store, sort, histo) E,
  CJ_CUB_ARRANGEMENTS(X)
#undef X
};
enum class Family : uint8_t { Block, Warp };
// The C signature of an entry point (cub.h documents each).
enum class Shape : uint8_t { Reduce, Scan, ScanInit, Load, Store, Sort, SortPairs, Histogram };
enum class OpRule : uint8_t { OpNone, OpAny };
enum class Algorithm : uint8_t {
#define X(E, name, family, shape, oprule, gen) E,
#include "cub/algorithms.def"
#undef X
};

struct DtypeInfo {
  const char* name;
  const char* code;
  const char* cxx;
  Scalar scalar;
  bool is_integer;
};
struct AlgorithmInfo {
  const char* name;
  Family family;
  Shape shape;
  OpRule op_rule;
};
struct ArrangementInfo {
  const char* name;
  const char* load_algorithm;   // "" if not a load/store arrangement
  const char* store_algorithm;
  bool sort_output;             // valid as a radix-sort output arrangement
  const char* histo_algorithm;  // "" if not a histogram algorithm
};

const DtypeInfo& info(Dtype d);
const AlgorithmInfo& info(Algorithm a);
const ArrangementInfo& info(Arrangement a);
const char* opName(Op op);
// Parse names (numpy names or codes for dtypes); false if unknown.
bool parseDtype(std::string_view s, Dtype* out);
bool parseAlgorithm(std::string_view s, Algorithm* out);
bool parseOp(std::string_view s, Op* out);
bool parseArrangement(std::string_view s, Arrangement* out);

struct Spec {
  Algorithm algorithm = Algorithm::BlockReduce;
  Dtype dtype = Dtype::F32;          // items / keys / samples
  // block_radix_sort_pairs*: the value type (required).
  // block_histogram: the counter type (default uint32; int32/uint32/uint64).
  Dtype value_dtype = Dtype::Count;  // Count = not given
  Op op = Op::None;
  std::string user_op;               // Op::User: the extern "C" function's name
  int block[3] = {1, 1, 1};          // launch block shape (x, y, z)
  int items_per_thread = 1;
  Arrangement arrangement = Arrangement::Default;
  int warp_threads = 32;             // Warp family: logical warp size (power of 2, <= 32)
  int bins = 0;                      // block_histogram: number of bins
  int arch = 90;                     // compute_XX of the LTO-IR
  // Block algorithms that use their temp storage end with __syncthreads(),
  // so the next call may reuse the storage and (histogram) every thread sees
  // the finished bins. false: CUB's own contract (the caller synchronises).
  // normalized() sets it back to true where it does not apply.
  bool sync = true;

  int blockThreads() const { return block[0] * block[1] * block[2]; }
};

// Checks every field against the algorithm's rules and fills defaults
// (arrangement, histogram counter type). Throws ToolchainError naming the
// offending field; callers turn that into a CompileError at the call site.
Spec normalized(const Spec& s);
// The same without throwing: false and the message in *error.
bool tryNormalize(const Spec& s, Spec* out, std::string* error);

// The extern "C" entry point's name, a function of the normalized spec only:
//   cj_<algorithm>[_<op>]_<dtype>[_<value dtype>]_b<x>x<y>x<z>_i<ipt>
//     [_<arrangement>][_w<warp threads>][_n<bins>][_nosync]
// <op> is sum|min|max or u<len><name> for a user op (length-prefixed, so
// distinct specs never share a name). Fields an algorithm does not use are
// left out.
std::string entryName(const Spec& normalized_spec);

// Whether the entry point of a normalized spec touches its temp storage
// (false: blocked / striped / vectorize loads and stores, and warp
// algorithms, whose storage is per warp and needs no barrier).
bool usesBlockTempStorage(const Spec& normalized_spec);

// The spec as one line of text, for IR attributes and golden tests:
//   block_reduce float32 op=sum block=256x1x1 ipt=1
//   block_radix_sort_pairs uint32 value=float64 block=128x1x1 ipt=4 arrangement=striped nosync
//   warp_reduce float32 op=user:my_op block=64x1x1 ipt=1 warp=16 arch=80
// Only the fields that differ from the defaults or that the algorithm uses
// appear; parseSpec reads it back (then normalize it).
std::string toString(const Spec& s);
bool parseSpec(std::string_view text, Spec* out, std::string* error);

// A one-line description for messages: "block_reduce(sum, float32, block 256x1x1, ipt 1)".
std::string describe(const Spec& s);

}  // namespace cj::cub
