#include "cub/source_gen.h"

#include <cctype>

#include "support/error.h"

namespace cj::cub {
namespace {

// What a generator needs: the normalized spec and the pieces of the TU it
// appends to. `defs` goes into the anonymous namespace, `body` is the entry
// point's body; the entry's signature follows from the shape (signatureOf).
struct Gen {
  const Spec& s;
  std::string defs;
  std::string body;

  int ipt() const { return s.items_per_thread; }
  bool isSum() const { return s.op == Op::Sum; }
  // CCCL 3.0 under NVRTC without the toolkit's cuda_fp16.h (only -I cccl):
  // _CCCL_HAS_NVFP16() and _CCCL_HAS_NVBF16() are 0, so
  // enable_sm80_simd_reduction<float, cuda::std::plus<>, N >= 4> loses its
  // half/bfloat16 condition and is true; cub::ThreadReduce then takes the
  // "never reached" ThreadReduceSimd, which asserts and returns input[0].
  // Every sum over >= 4 float32 items in a thread (BlockReduce::Sum,
  // BlockScan::InclusiveSum/ExclusiveSum) is affected: those use CjOp
  // (a + b), which takes the sequential path, instead of cuda::std::plus.
  bool avoidCubPlus() const { return s.dtype == Dtype::F32 && s.items_per_thread >= 4; }
  // An Algo bound to the caller's storage: the block's, or this warp's slot.
  std::string blockAlgo() const { return "Algo(*static_cast<TempStorage*>(temp_storage))"; }
  std::string warpAlgo() const {
    return "Algo(static_cast<Algo::TempStorage*>(temp_storage)[cj_linear_tid() / W])";
  }
};

using Generator = void (*)(Gen&);

// Copies between the caller's items (a pointer, usually to a local array the
// LTO inliner turns back into registers) and CUB's T[IPT] reference arrays.
const char* kCopyIn = "  T in[IPT];\n  for (int i = 0; i < IPT; ++i) in[i] = items[i];\n";
const char* kCopyOut = "  for (int i = 0; i < IPT; ++i) items[i] = in[i];\n";

// ---- block reduce ----------------------------------------------------------------------
// Generators that return a value leave it in `result`; generate() appends the
// barrier (Spec::sync) and the return.
void genBlockReduce(Gen& g) {
  bool all = g.s.algorithm == Algorithm::BlockAllReduce;
  g.defs += "using Algo = cub::BlockReduce<T, BX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BY, BZ>;\n";
  if (all)  // the aggregate is broadcast through a slot after CUB's storage
    g.defs += "struct TempStorage {\n  Algo::TempStorage reduce;\n  T result;\n};\n";
  else
    g.defs += "using TempStorage = Algo::TempStorage;\n";
  std::string call = g.isSum() && !g.avoidCubPlus() ? "Sum(in)" : "Reduce(in, CjOp{})";
  if (g.ipt() == 1)
    g.body += "  T in[1] = {x};\n";
  else
    g.body += kCopyIn;
  g.body += "  TempStorage& temp = *static_cast<TempStorage*>(temp_storage);\n";
  g.body += std::string("  T result = Algo(") + (all ? "temp.reduce" : "temp") + ")." + call + ";\n";
  if (all) {
    g.body += "  if (cj_linear_tid() == 0) temp.result = result;\n";
    g.body += "  __syncthreads();\n  result = temp.result;\n";
  }
}

// ---- block scans -----------------------------------------------------------------------
void genBlockScan(Gen& g) {
  g.defs += "using Algo = cub::BlockScan<T, BX, cub::BLOCK_SCAN_RAKING, BY, BZ>;\n"
            "using TempStorage = Algo::TempStorage;\n";
  std::string call;
  switch (g.s.algorithm) {
    case Algorithm::BlockInclusiveSum:
      call = g.avoidCubPlus() ? "InclusiveScan(in, in, CjOp{})" : "InclusiveSum(in, in)";
      break;
    case Algorithm::BlockExclusiveSum:
      call = g.avoidCubPlus() ? "ExclusiveScan(in, in, T(0), CjOp{})" : "ExclusiveSum(in, in)";
      break;
    case Algorithm::BlockInclusiveScan: call = "InclusiveScan(in, in, CjOp{})"; break;
    case Algorithm::BlockInclusiveScanInit: call = "InclusiveScan(in, in, initial, CjOp{})"; break;
    case Algorithm::BlockExclusiveScan: call = "ExclusiveScan(in, in, initial, CjOp{})"; break;
    default: throw ToolchainError("genBlockScan: not a block scan");
  }
  // CUB's array overloads allow output to alias input.
  if (g.ipt() == 1) {
    g.body += "  T in[1] = {x};\n  " + g.blockAlgo() + "." + call + ";\n  T result = in[0];\n";
  } else {
    g.body += kCopyIn;
    g.body += "  " + g.blockAlgo() + "." + call + ";\n";
    g.body += kCopyOut;
  }
}

// ---- block load / store ------------------------------------------------------------------
// valid_items must be the same in every thread of the block (the transposing
// arrangements synchronise the block inside). A full tile takes CUB's
// unguarded path.
const char* kClampValid =
    "  const int valid = valid_items <= 0 ? 0 : (valid_items >= TILE ? TILE : int(valid_items));\n";

void genBlockLoad(Gen& g) {
  g.defs += std::string("using Algo = cub::BlockLoad<T, BX, IPT, ") +
            info(g.s.arrangement).load_algorithm + ", BY, BZ>;\n"
            "using TempStorage = Algo::TempStorage;\n";
  g.body += "  T in[IPT];\n";
  g.body += kClampValid;
  g.body += "  if (valid == TILE) " + g.blockAlgo() + ".Load(block_ptr, in);\n";
  g.body += "  else " + g.blockAlgo() + ".Load(block_ptr, in, valid, oob_default);\n";
  g.body += kCopyOut;
}

void genBlockStore(Gen& g) {
  g.defs += std::string("using Algo = cub::BlockStore<T, BX, IPT, ") +
            info(g.s.arrangement).store_algorithm + ", BY, BZ>;\n"
            "using TempStorage = Algo::TempStorage;\n";
  g.body += kCopyIn;
  g.body += kClampValid;
  g.body += "  if (valid == TILE) " + g.blockAlgo() + ".Store(block_ptr, in);\n";
  g.body += "  else " + g.blockAlgo() + ".Store(block_ptr, in, valid);\n";
}

// ---- block radix sort --------------------------------------------------------------------
void genBlockRadixSort(Gen& g) {
  bool pairs = info(g.s.algorithm).shape == Shape::SortPairs;
  bool descending = g.s.algorithm == Algorithm::BlockRadixSortDesc ||
                    g.s.algorithm == Algorithm::BlockRadixSortPairsDesc;
  bool striped = g.s.arrangement == Arrangement::Striped;
  g.defs += std::string("using Algo = cub::BlockRadixSort<T, BX, IPT, ") +
            (pairs ? "V" : "cub::NullType") +
            ", 4, true, cub::BLOCK_SCAN_WARP_SCANS, cudaSharedMemBankSizeFourByte, BY, BZ>;\n"
            "using TempStorage = Algo::TempStorage;\n";
  std::string method = std::string("Sort") + (descending ? "Descending" : "") +
                       (striped ? "BlockedToStriped" : "");
  g.body += "  T in[IPT];\n  for (int i = 0; i < IPT; ++i) in[i] = keys[i];\n";
  if (pairs) g.body += "  V vals[IPT];\n  for (int i = 0; i < IPT; ++i) vals[i] = values[i];\n";
  g.body += "  " + g.blockAlgo() + "." + method + (pairs ? "(in, vals);\n" : "(in);\n");
  g.body += "  for (int i = 0; i < IPT; ++i) keys[i] = in[i];\n";
  if (pairs) g.body += "  for (int i = 0; i < IPT; ++i) values[i] = vals[i];\n";
}

// ---- block histogram ---------------------------------------------------------------------
void genBlockHistogram(Gen& g) {
  g.defs += "constexpr int BINS = " + std::to_string(g.s.bins) + ";\n";
  g.defs += std::string("using Algo = cub::BlockHistogram<T, BX, IPT, BINS, ") +
            info(g.s.arrangement).histo_algorithm + ", BY, BZ>;\n"
            "using TempStorage = Algo::TempStorage;\n";
  // Histogram() zeroes the bins, synchronises the block, then counts.
  g.body += "  T in[IPT];\n  for (int i = 0; i < IPT; ++i) in[i] = samples[i];\n";
  g.body += "  " + g.blockAlgo() + ".Histogram(in, histogram);\n";
}

// ---- warp reduce / scans -----------------------------------------------------------------
// One CUB TempStorage per logical warp; the entry point picks its warp's slot
// from the linear thread index (hardware warps are consecutive linear ids).
const char* kWarpDefs =
    "constexpr int W = WARP_THREADS;\n"
    "constexpr int NWARPS = BX * BY * BZ / W;\n";

const char* kThreadReduce =
    "  T acc = items[0];\n  for (int i = 1; i < IPT; ++i) acc = CjOp{}(acc, items[i]);\n";

void genWarpReduce(Gen& g) {
  g.defs += kWarpDefs;
  g.defs += "using Algo = cub::WarpReduce<T, W>;\nusing TempStorage = Algo::TempStorage[NWARPS];\n";
  std::string call = g.isSum() ? "Sum(acc)" : "Reduce(acc, CjOp{})";
  if (g.ipt() == 1)
    g.body += "  T acc = x;\n";
  else
    g.body += kThreadReduce;
  g.body += "  T result = " + g.warpAlgo() + "." + call + ";\n";
  // Lane 0 of the logical warp holds the aggregate; every lane of the
  // hardware warp takes part in the shuffle (the whole block calls).
  if (g.s.algorithm == Algorithm::WarpAllReduce)
    g.body += "  result = cub::ShuffleIndex<W>(result, 0, 0xffffffffu);\n";
}

void genWarpScan(Gen& g) {
  g.defs += kWarpDefs;
  g.defs += "using Algo = cub::WarpScan<T, W>;\nusing TempStorage = Algo::TempStorage[NWARPS];\n";
  Algorithm a = g.s.algorithm;
  if (g.ipt() == 1) {
    g.body += "  T result;\n";
    switch (a) {
      case Algorithm::WarpInclusiveSum: g.body += "  " + g.warpAlgo() + ".InclusiveSum(x, result);\n"; break;
      case Algorithm::WarpExclusiveSum: g.body += "  " + g.warpAlgo() + ".ExclusiveSum(x, result);\n"; break;
      case Algorithm::WarpInclusiveScan: g.body += "  " + g.warpAlgo() + ".InclusiveScan(x, result, CjOp{});\n"; break;
      case Algorithm::WarpInclusiveScanInit:
        // initial (+) x0 (+) ... (+) xi = exclusive prefix seeded with initial, then (+) xi.
        g.body += "  T prefix;\n  " + g.warpAlgo() + ".ExclusiveScan(x, prefix, initial, CjOp{});\n";
        g.body += "  result = CjOp{}(prefix, x);\n";
        break;
      case Algorithm::WarpExclusiveScan:
        g.body += "  " + g.warpAlgo() + ".ExclusiveScan(x, result, initial, CjOp{});\n";
        break;
      default: throw ToolchainError("genWarpScan: not a warp scan");
    }
    return;
  }
  // Several items per thread: scan the threads' aggregates across the warp,
  // then each thread scans its own items seeded with its prefix.
  g.body += kThreadReduce;
  g.body += "  T prefix;\n";
  bool inclusive = a != Algorithm::WarpExclusiveSum && a != Algorithm::WarpExclusiveScan;
  switch (a) {
    case Algorithm::WarpInclusiveSum:
    case Algorithm::WarpExclusiveSum:  // lane 0's prefix is 0
      g.body += "  " + g.warpAlgo() + ".ExclusiveSum(acc, prefix);\n";
      break;
    case Algorithm::WarpInclusiveScan:  // lane 0 has no prefix: start from its first item
      g.body += "  " + g.warpAlgo() + ".ExclusiveScan(acc, prefix, CjOp{});\n";
      g.body += "  T run = items[0];\n  if (cj_linear_tid() % W != 0) run = CjOp{}(prefix, run);\n";
      g.body += "  items[0] = run;\n";
      g.body += "  for (int i = 1; i < IPT; ++i) { run = CjOp{}(run, items[i]); items[i] = run; }\n";
      return;
    case Algorithm::WarpInclusiveScanInit:
    case Algorithm::WarpExclusiveScan:
      g.body += "  " + g.warpAlgo() + ".ExclusiveScan(acc, prefix, initial, CjOp{});\n";
      break;
    default: throw ToolchainError("genWarpScan: not a warp scan");
  }
  g.body += "  T run = prefix;\n";
  if (inclusive)
    g.body += "  for (int i = 0; i < IPT; ++i) { run = CjOp{}(run, items[i]); items[i] = run; }\n";
  else
    g.body += "  for (int i = 0; i < IPT; ++i) { T x = items[i]; items[i] = run; run = CjOp{}(run, x); }\n";
}

const Generator kGenerators[] = {
#define X(E, name, family, shape, oprule, gen) gen,
#include "cub/algorithms.def"
#undef X
};

// ---- signatures --------------------------------------------------------------------------
Param scalar(const std::string& name, Dtype d) { return {info(d).cxx, CType::value(info(d).scalar), name}; }
Param pointer(const std::string& name, Dtype d, bool is_const) {
  return {std::string(is_const ? "const " : "") + info(d).cxx + "*", CType::pointer(info(d).scalar),
          name};
}

EntryPoint signatureOf(const Spec& s) {
  EntryPoint e;
  e.name = entryName(s);
  e.ret_cxx = "void";
  e.ret = CType::voidType();
  bool one = s.items_per_thread == 1;
  auto returnsT = [&] {
    e.ret_cxx = info(s.dtype).cxx;
    e.ret = CType::value(info(s.dtype).scalar);
  };
  switch (info(s.algorithm).shape) {
    case Shape::Reduce:
      returnsT();
      e.params.push_back(one ? scalar("x", s.dtype) : pointer("items", s.dtype, true));
      break;
    case Shape::Scan:
    case Shape::ScanInit:
      if (one) {
        returnsT();
        e.params.push_back(scalar("x", s.dtype));
      } else {
        e.params.push_back(pointer("items", s.dtype, false));
      }
      if (info(s.algorithm).shape == Shape::ScanInit) e.params.push_back(scalar("initial", s.dtype));
      break;
    case Shape::Load:
      e.params = {pointer("block_ptr", s.dtype, true), pointer("items", s.dtype, false),
                  {"long long", CType::value(Scalar::Int64), "valid_items"}, scalar("oob_default", s.dtype)};
      break;
    case Shape::Store:
      e.params = {pointer("block_ptr", s.dtype, false), pointer("items", s.dtype, true),
                  {"long long", CType::value(Scalar::Int64), "valid_items"}};
      break;
    case Shape::Sort:
      e.params = {pointer("keys", s.dtype, false)};
      break;
    case Shape::SortPairs:
      e.params = {pointer("keys", s.dtype, false), pointer("values", s.value_dtype, false)};
      break;
    case Shape::Histogram:
      e.params = {pointer("samples", s.dtype, true), pointer("histogram", s.value_dtype, false)};
      break;
  }
  e.params.push_back({"void*", CType::voidPointer(), "temp_storage"});
  return e;
}

std::string opFunctor(const Spec& s) {
  std::string head =
      "struct CjOp {\n  __device__ __forceinline__ T operator()(const T& a, const T& b) const { ";
  switch (s.op) {
    case Op::None:
    case Op::Sum: return head + "return a + b; }\n};\n";
    case Op::Min: return head + "return a < b ? a : b; }\n};\n";  // as cuda::minimum
    case Op::Max: return head + "return a < b ? b : a; }\n};\n";  // as cuda::maximum
    case Op::User: return head + "return ::" + s.user_op + "(a, b); }\n};\n";
  }
  return head + "}\n};\n";
}

}  // namespace

std::string EntryPoint::cDeclaration() const {
  std::string out = "extern \"C\" __device__ " + ret_cxx + " " + name + "(";
  for (size_t i = 0; i < params.size(); ++i)
    out += (i ? ", " : "") + params[i].cxx + " " + params[i].name;
  return out + ")";
}

CSignature EntryPoint::signature() const {
  CSignature sig;
  sig.ret = ret;
  for (const Param& p : params) sig.params.push_back(p.type);
  return sig;
}

const std::string& prelude() {
  static const std::string text =
      "#include <cub/block/block_reduce.cuh>\n"
      "#include <cub/block/block_scan.cuh>\n"
      "#include <cub/block/block_load.cuh>\n"
      "#include <cub/block/block_store.cuh>\n"
      "#include <cub/block/block_radix_sort.cuh>\n"
      "#include <cub/block/block_histogram.cuh>\n"
      "#include <cub/warp/warp_reduce.cuh>\n"
      "#include <cub/warp/warp_scan.cuh>\n";
  return text;
}

Generated generate(const Spec& spec) {
  Generated out;
  out.spec = normalized(spec);
  const Spec& s = out.spec;
  out.entry = signatureOf(s);

  Gen g{s, {}, {}};
  kGenerators[static_cast<int>(s.algorithm)](g);

  std::string src = "// cudajit CUB instantiation: " + describe(s) + "\n";
  src += prelude();
  if (s.op == Op::User)
    src += std::string("\nextern \"C\" __device__ ") + info(s.dtype).cxx + " " + s.user_op + "(" +
           info(s.dtype).cxx + ", " + info(s.dtype).cxx + ");\n";
  src += "\nnamespace {\n";
  // Read back through NVRTC's lowered name (see source_gen.h).
  src += "template <unsigned long long Bytes, unsigned long long Align>\n"
         "__device__ const int cj_layout = 0;\n";
  src += std::string("using T = ") + info(s.dtype).cxx + ";\n";
  if (s.value_dtype != Dtype::Count) src += std::string("using V = ") + info(s.value_dtype).cxx + ";\n";
  src += "constexpr int BX = " + std::to_string(s.block[0]) + ", BY = " + std::to_string(s.block[1]) +
         ", BZ = " + std::to_string(s.block[2]) + ";\n";
  src += "constexpr int IPT = " + std::to_string(s.items_per_thread) + ";\n";
  src += "constexpr int TILE = BX * BY * BZ * IPT;\n";
  if (info(s.algorithm).family == Family::Warp)
    src += "constexpr int WARP_THREADS = " + std::to_string(s.warp_threads) + ";\n";
  src += "__device__ __forceinline__ int cj_linear_tid() {\n"
         "  return int(threadIdx.x) + BX * (int(threadIdx.y) + BY * int(threadIdx.z));\n}\n";
  src += opFunctor(s);
  src += g.defs;
  src += "}  // namespace\n\n";
  if (s.sync && usesBlockTempStorage(s)) g.body += "  __syncthreads();  // the storage is free again\n";
  if (out.entry.ret_cxx != "void") g.body += "  return result;\n";
  src += out.entry.cDeclaration() + " {\n" + g.body + "}\n";
  out.source = std::move(src);
  out.layout_expression = "&cj_layout<sizeof(TempStorage), alignof(TempStorage)>";
  return out;
}

bool layoutFromLoweredName(const std::string& lowered, uint64_t* bytes, uint64_t* align) {
  // Itanium mangling of cj_layout<B, A>: ...9cj_layoutILy<B>ELy<A>EE...
  size_t p = lowered.find("cj_layoutI");
  if (p == std::string::npos) return false;
  p += 10;
  uint64_t vals[2];
  for (uint64_t& v : vals) {
    if (p + 2 > lowered.size() || lowered[p] != 'L' || !std::isalpha(static_cast<unsigned char>(lowered[p + 1])))
      return false;
    p += 2;
    if (p >= lowered.size() || !std::isdigit(static_cast<unsigned char>(lowered[p]))) return false;
    v = 0;
    while (p < lowered.size() && std::isdigit(static_cast<unsigned char>(lowered[p])))
      v = v * 10 + uint64_t(lowered[p++] - '0');
    if (p >= lowered.size() || lowered[p] != 'E') return false;
    ++p;
  }
  *bytes = vals[0];
  *align = vals[1];
  return true;
}

}  // namespace cj::cub
