#include "cub/spec.h"

#include <vector>

#include "support/error.h"

namespace cj::cub {
namespace {

const DtypeInfo kDtypes[] = {
#define X(E, name, code, cxx, scalar, is_int) {name, code, cxx, Scalar::scalar, is_int},
    CJ_CUB_DTYPES(X)
#undef X
};
const AlgorithmInfo kAlgorithms[] = {
#define X(E, name, family, shape, oprule, gen) \
  {name, Family::family, Shape::shape, OpRule::oprule},
#include "cub/algorithms.def"
#undef X
};
const ArrangementInfo kArrangements[] = {
#define X(E, name, load, store, sort, histo) {name, load, store, sort, histo},
    CJ_CUB_ARRANGEMENTS(X)
#undef X
};
const char* const kOps[] = {
#define X(E, name) name,
    CJ_CUB_OPS(X)
#undef X
};

template <class Enum, class Table, class NameOf>
bool parseBy(std::string_view s, Enum* out, const Table& table, NameOf name_of) {
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
    if (s == name_of(table[i])) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

[[noreturn]] void bad(const Spec& s, const std::string& what) {
  throw ToolchainError("invalid CUB spec " + describe(s) + ": " + what);
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (digit && i > 0))) return false;
  }
  return true;
}

bool isPow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

const DtypeInfo& info(Dtype d) { return kDtypes[static_cast<int>(d)]; }
const AlgorithmInfo& info(Algorithm a) { return kAlgorithms[static_cast<int>(a)]; }
const ArrangementInfo& info(Arrangement a) { return kArrangements[static_cast<int>(a)]; }
const char* opName(Op op) { return kOps[static_cast<int>(op)]; }

bool parseDtype(std::string_view s, Dtype* out) {
  return parseBy(s, out, kDtypes, [](const DtypeInfo& d) { return d.name; }) ||
         parseBy(s, out, kDtypes, [](const DtypeInfo& d) { return d.code; });
}
bool parseAlgorithm(std::string_view s, Algorithm* out) {
  return parseBy(s, out, kAlgorithms, [](const AlgorithmInfo& a) { return a.name; });
}
bool parseOp(std::string_view s, Op* out) {
  return parseBy(s, out, kOps, [](const char* n) { return n; });
}
bool parseArrangement(std::string_view s, Arrangement* out) {
  return parseBy(s, out, kArrangements, [](const ArrangementInfo& a) { return a.name; });
}

std::string describe(const Spec& s) {
  const AlgorithmInfo& a = info(s.algorithm);
  std::string out = std::string(a.name) + "(";
  if (s.op != Op::None)
    out += (s.op == Op::User ? "user op '" + s.user_op + "'" : std::string(opName(s.op))) + ", ";
  out += info(s.dtype).name;
  if (s.value_dtype != Dtype::Count) out += std::string(", ") + info(s.value_dtype).name;
  out += ", block " + std::to_string(s.block[0]) + "x" + std::to_string(s.block[1]) + "x" +
         std::to_string(s.block[2]);
  out += ", items_per_thread " + std::to_string(s.items_per_thread);
  if (s.arrangement != Arrangement::Default) out += std::string(", ") + info(s.arrangement).name;
  if (a.family == Family::Warp && s.warp_threads != 32)
    out += ", warp_threads " + std::to_string(s.warp_threads);
  if (s.bins) out += ", bins " + std::to_string(s.bins);
  if (!s.sync) out += ", nosync";
  return out + ")";
}

Spec normalized(const Spec& in) {
  Spec s = in;
  if (static_cast<size_t>(s.algorithm) >= sizeof(kAlgorithms) / sizeof(kAlgorithms[0]))
    throw ToolchainError("invalid CUB spec: unknown algorithm");
  if (s.dtype >= Dtype::Count) throw ToolchainError("invalid CUB spec: no item dtype");
  const AlgorithmInfo& a = info(s.algorithm);

  // Block shape: the launch block the kernel is specialised on.
  for (int d = 0; d < 3; ++d)
    if (s.block[d] < 1) bad(s, "block dimensions must be >= 1");
  if (s.block[0] > 1024 || s.block[1] > 1024 || s.block[2] > 64 || s.blockThreads() > 1024)
    bad(s, "a block holds at most 1024 threads (x, y <= 1024, z <= 64)");
  if (s.items_per_thread < 1 || s.items_per_thread > 256)
    bad(s, "items_per_thread must be in [1, 256]");
  if (s.arch < 50 || s.arch > 1000) bad(s, "arch must be a compute capability such as 90");

  // Op.
  if (a.op_rule == OpRule::OpNone && s.op != Op::None) bad(s, "this algorithm takes no op");
  if (a.op_rule == OpRule::OpAny && s.op == Op::None) bad(s, "this algorithm needs an op (sum, min, max or user)");
  if (s.op == Op::User) {
    if (!isIdentifier(s.user_op)) bad(s, "user_op must be a C identifier, got '" + s.user_op + "'");
  } else if (!s.user_op.empty()) {
    bad(s, "user_op is given but op is not 'user'");
  }

  // Family-specific fields.
  if (a.family == Family::Warp) {
    if (!isPow2(s.warp_threads) || s.warp_threads > 32)
      bad(s, "warp_threads must be a power of two <= 32");
    if (s.blockThreads() % s.warp_threads != 0)
      bad(s, "the block's thread count must be a multiple of warp_threads");
  } else if (s.warp_threads != 32) {
    bad(s, "warp_threads applies to warp algorithms only");
  }

  const ArrangementInfo& arr = info(s.arrangement);
  switch (a.shape) {
    case Shape::Load:
    case Shape::Store:
      if (s.arrangement == Arrangement::Default) s.arrangement = Arrangement::Blocked;
      if (!*info(s.arrangement).load_algorithm)
        bad(s, std::string("arrangement '") + arr.name + "' is not a load/store arrangement "
               "(blocked, striped, vectorize, transpose, warp_transpose)");
      if (s.arrangement == Arrangement::WarpTranspose && s.blockThreads() % 32 != 0)
        bad(s, "warp_transpose needs a block of whole warps");
      break;
    case Shape::Sort:
    case Shape::SortPairs:
      if (s.arrangement == Arrangement::Default) s.arrangement = Arrangement::Blocked;
      if (!info(s.arrangement).sort_output)
        bad(s, std::string("arrangement '") + arr.name + "' is not a sort output arrangement (blocked, striped)");
      break;
    case Shape::Histogram:
      if (s.arrangement == Arrangement::Default) s.arrangement = Arrangement::Atomic;
      if (!*info(s.arrangement).histo_algorithm)
        bad(s, std::string("arrangement '") + arr.name + "' is not a histogram algorithm (atomic, sort)");
      break;
    default:
      if (s.arrangement != Arrangement::Default)
        bad(s, "this algorithm takes no arrangement");
  }

  if (a.shape == Shape::SortPairs) {
    if (s.value_dtype >= Dtype::Count) bad(s, "radix sort of pairs needs value_dtype");
  } else if (a.shape == Shape::Histogram) {
    if (!info(s.dtype).is_integer) bad(s, "histogram samples must be integers (bin indices)");
    if (s.value_dtype == Dtype::Count) s.value_dtype = Dtype::U32;
    if (s.value_dtype != Dtype::I32 && s.value_dtype != Dtype::U32 && s.value_dtype != Dtype::U64)
      bad(s, "histogram counters (value_dtype) must be int32, uint32 or uint64");
    if (s.bins < 1 || s.bins > 65536) bad(s, "histogram needs bins in [1, 65536]");
  } else if (s.value_dtype != Dtype::Count) {
    bad(s, "value_dtype applies to radix_sort_pairs and histogram only");
  }
  if (a.shape != Shape::Histogram && s.bins != 0) bad(s, "bins applies to histogram only");
  if (!usesBlockTempStorage(s)) s.sync = true;  // nothing to synchronise: one canonical spec
  return s;
}

bool usesBlockTempStorage(const Spec& s) {
  if (info(s.algorithm).family != Family::Block) return false;
  Shape shape = info(s.algorithm).shape;
  if (shape == Shape::Load || shape == Shape::Store)
    return s.arrangement == Arrangement::Transpose || s.arrangement == Arrangement::WarpTranspose;
  return true;
}

std::string toString(const Spec& s) {
  std::string out = std::string(info(s.algorithm).name) + " " + info(s.dtype).name;
  if (s.value_dtype != Dtype::Count) out += std::string(" value=") + info(s.value_dtype).name;
  if (s.op == Op::User)
    out += " op=user:" + s.user_op;
  else if (s.op != Op::None)
    out += std::string(" op=") + opName(s.op);
  out += " block=" + std::to_string(s.block[0]) + "x" + std::to_string(s.block[1]) + "x" +
         std::to_string(s.block[2]);
  out += " ipt=" + std::to_string(s.items_per_thread);
  if (s.arrangement != Arrangement::Default) out += std::string(" arrangement=") + info(s.arrangement).name;
  if (s.warp_threads != 32) out += " warp=" + std::to_string(s.warp_threads);
  if (s.bins) out += " bins=" + std::to_string(s.bins);
  if (!s.sync) out += " nosync";
  if (s.arch != 90) out += " arch=" + std::to_string(s.arch);
  return out;
}

namespace {

bool parseInt(std::string_view v, int* out) {
  if (v.empty() || v.size() > 9) return false;
  int n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *out = n;
  return true;
}

}  // namespace

bool parseSpec(std::string_view text, Spec* out, std::string* error) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  auto fail = [&](const std::string& why) {
    *error = "bad CUB spec '" + std::string(text) + "': " + why;
    return false;
  };
  Spec s;
  if (words.size() < 2) return fail("expected '<algorithm> <dtype> key=value...'");
  if (!parseAlgorithm(words[0], &s.algorithm)) return fail("unknown algorithm");
  if (!parseDtype(words[1], &s.dtype)) return fail("unknown dtype");
  for (size_t w = 2; w < words.size(); ++w) {
    std::string_view word = words[w];
    if (word == "nosync") {
      s.sync = false;
      continue;
    }
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) return fail("expected key=value, got '" + std::string(word) + "'");
    std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    bool ok = true;
    if (key == "value") {
      ok = parseDtype(value, &s.value_dtype);
    } else if (key == "op") {
      if (value.substr(0, 5) == "user:") {
        s.op = Op::User;
        s.user_op = std::string(value.substr(5));
      } else {
        ok = parseOp(value, &s.op);
      }
    } else if (key == "block") {
      int dims[3] = {1, 1, 1}, d = 0;
      size_t start = 0;
      while (ok) {
        size_t x = value.find('x', start);
        ok = d < 3 && parseInt(value.substr(start, x == std::string_view::npos ? x : x - start), &dims[d++]);
        if (x == std::string_view::npos) break;
        start = x + 1;
      }
      for (int k = 0; k < 3; ++k) s.block[k] = dims[k];
    } else if (key == "ipt") {
      ok = parseInt(value, &s.items_per_thread);
    } else if (key == "arrangement") {
      ok = parseArrangement(value, &s.arrangement);
    } else if (key == "warp") {
      ok = parseInt(value, &s.warp_threads);
    } else if (key == "bins") {
      ok = parseInt(value, &s.bins);
    } else if (key == "arch") {
      ok = parseInt(value, &s.arch);
    } else {
      return fail("unknown key '" + std::string(key) + "'");
    }
    if (!ok) return fail("bad value for " + std::string(key));
  }
  *out = s;
  return true;
}

bool tryNormalize(const Spec& s, Spec* out, std::string* error) {
  try {
    *out = normalized(s);
    return true;
  } catch (const ToolchainError& e) {
    *error = e.what();
    return false;
  }
}

std::string entryName(const Spec& s) {
  const AlgorithmInfo& a = info(s.algorithm);
  std::string n = std::string("cj_") + a.name;
  if (s.op == Op::User)
    n += "_u" + std::to_string(s.user_op.size()) + s.user_op;
  else if (s.op != Op::None)
    n += std::string("_") + opName(s.op);
  n += std::string("_") + info(s.dtype).code;
  if (s.value_dtype != Dtype::Count) n += std::string("_") + info(s.value_dtype).code;
  n += "_b" + std::to_string(s.block[0]) + "x" + std::to_string(s.block[1]) + "x" +
       std::to_string(s.block[2]);
  n += "_i" + std::to_string(s.items_per_thread);
  if (s.arrangement != Arrangement::Default) n += std::string("_") + info(s.arrangement).name;
  if (a.family == Family::Warp) n += "_w" + std::to_string(s.warp_threads);
  if (a.shape == Shape::Histogram) n += "_n" + std::to_string(s.bins);
  if (!s.sync) n += "_nosync";
  return n;
}

}  // namespace cj::cub
