// cudajit.mathdx.random.<key>.init / generate / skip_offset /
// skip_subsequence: a cuRANDDx generator's device functions on a state
// array; scalars are passed by pointer, generate's distribution parameters
// as one pair (codegen/lower_mathdx.cpp).
//
// cudajit.mathdx.fft.<key>[.execute](thread_data[, smem]): one cuFFTDx FFT
// in place on a thread's values (execution 'Thread') or on the block's
// (execution 'Block', with a shared-memory workspace), as nvmath.device's
// `FFT.execute(...)` / `FFT(...)`; thread_data an array of the FFT's value
// type, smem any array (its bytes are the workspace).
//
// cudajit.mathdx.matmul.<key>[.execute](alpha, a, b, beta, c): one cuBLASDx
// block GEMM, C = alpha * A @ B + beta * C, as nvmath.device's
// `MM.execute(...)` (and its older spelling `MM(...)`) in numba kernels. A
// Matmul object freezes to that symbol (python/cudajit/mathdx.py); its key
// names the descriptor this process instantiated (mathdx/mathdx.h), whose
// value types and block shape the call is checked against. The call becomes
// `intrinsic mathdx "<key>"` (libcalls/library_call.h) with alpha and beta
// converted to C's value type; codegen passes everything by pointer.
#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "mathdx/mathdx.h"
#include "typeinfer/infer.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/mathdx_tensors.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer {

// "complex32x2" is float16x4 (vector_dtype_names.def).
const Type* mathdxValueItemType(const std::string& name) {
  Scalar sc;
  if (parseScalar(name, &sc)) return scalarTy(sc);
  return vectorNamed(name, /*dtype_names=*/true);
}

std::string mathdxLaunchBlockName(const Site& s, const std::array<int64_t, 3>& built) {
  const InferOptions& options = s.ctx.specializer().options();
  const int64_t* d = options.block_dims[0] > 0 ? nullptr : built.data();
  int64_t b[3];
  for (int i = 0; i < 3; ++i) b[i] = d ? d[i] : options.block_dims[i];
  return "block=" + std::to_string(b[0]) + "x" + std::to_string(b[1]) + "x" + std::to_string(b[2]);
}

std::string mathdxDimText(const int64_t* d) {
  return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

std::optional<std::array<int64_t, 3>> mathdxOtherLaunchBlock(const Site& s, const std::array<int64_t, 3>& want) {
  const InferOptions& options = s.ctx.specializer().options();
  if (options.block_dims[0] <= 0) return std::nullopt;
  const std::array<int64_t, 3> launched = {options.block_dims[0], options.block_dims[1], options.block_dims[2]};
  if (launched == want) return std::nullopt;
  return launched;
}

namespace {

constexpr std::string_view kPrefix = "cudajit.mathdx.matmul.";
constexpr std::string_view kFftPrefix = "cudajit.mathdx.fft.";
constexpr std::string_view kRandomPrefix = "cudajit.mathdx.random.";

// "<key>" and the method ("" for a call of the object itself) of a symbol.
std::pair<std::string, std::string> keyAndMethod(std::string_view name, std::string_view prefix) {
  std::string_view rest = name.substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return {std::string(rest), ""};
  return {std::string(rest.substr(0, dot)), std::string(rest.substr(dot + 1))};
}

// The target a descriptor was built for: its spec text ends "sm=NN)".
int specSm(const std::string& spec) {
  const size_t at = spec.rfind("sm=");
  return at == std::string::npos ? 0 : std::atoi(spec.c_str() + at + 3);
}

// LTO-IR links into its own target or a newer one, not an older one.
void checkTarget(const Site& s, const std::string& what, const std::string& spec,
                 void (*failure)(const Site&, const std::string&, const std::string&)) {
  const int built = specSm(spec), arch = s.ctx.specializer().options().arch;
  if (built > arch)
    failure(s, "this " + what + " was built for sm_" + std::to_string(built) + " (its LTO-IR); the kernel is compiled for sm_" +
                   std::to_string(arch),
            "build it with sm=" + std::to_string(arch) + " (the oldest target the kernel runs on)");
}

// A block-wide routine is built for one block shape. An FFT must be launched
// with exactly it. A GEMM may run in a larger block, as cuBLASDx's BlockDim
// allows (nvmath's cublasdx_blockdim_gemm example): with BlockDim of rank r
// (its last dimension above 1), the launch's first r-1 dimensions equal the
// descriptor's, its r-th is at least as large, the rest are free; threads
// past the descriptor's count take no part. `larger` says which rule.
void checkBlockShape(const Site& s, const std::string& what, const std::array<int64_t, 3>& built,
                     void (*failure)(const Site&, const std::string&, const std::string&), bool larger = false) {
  const InferOptions& options = s.ctx.specializer().options();
  if (options.block_dims[0] <= 0) return;
  const int64_t launched[3] = {options.block_dims[0], options.block_dims[1], options.block_dims[2]};
  int rank = 1;
  for (int d = 0; d < 3; ++d)
    if (built[d] > 1) rank = d + 1;
  for (int d = 0; d < 3; ++d) {
    const bool ok = !larger ? launched[d] == built[d]
                  : d + 1 < rank ? launched[d] == built[d]
                  : d + 1 == rank ? launched[d] >= built[d]
                  : true;
    if (ok) continue;
    std::string rule = larger ? " (a larger block must keep the first " + std::to_string(rank - 1) +
                                    " dimension(s) and grow dimension " + std::to_string(rank) + " or later ones)"
                              : "";
    failure(s, what + " was built for block_dim " + mathdxDimText(built.data()) + "; this kernel is launched with " +
                   mathdxDimText(launched) + rule,
            "launch with " + std::string(what == "FFT" ? "fft" : "MM") + ".block_dim threads per block");
  }
}

// A Matmul's launch-block rule: a larger block unless it was built with
// static_block_dim=True (cuBLASDx then assumes exactly block_dim threads).
// The flag is part of the spec text, the key every served result carries.
void checkMatmulBlockShape(const Site& s, const mathdx::MatmulResult& mm,
                           void (*failure)(const Site&, const std::string&, const std::string&)) {
  const bool exact = mm.spec.find(", static_block_dim") != std::string::npos;
  checkBlockShape(s, exact ? "Matmul (static_block_dim=True)" : "Matmul", mm.block_dim, failure, /*larger=*/!exact);
}

// "complex32 (float16x2)" for a vector value type, "float32" for a scalar.
std::string itemName(const std::string& value_type, const Type* item) {
  return isVectorType(item) ? value_type + " (" + vectorName(item) + ")" : typeToNumbaString(item);
}

struct Call {
  std::string key;
  std::shared_ptr<const mathdx::MatmulResult> mm;
  const Type* value[3];   // A, B, C: a scalar, or a vector for complex half (complex32: float16x2)
  bool dynamic_ld = false;   // execute(alpha, a, lda, b, ldb, beta, c, ldc)
};

// Errors name the call as the user wrote it ("FFT.execute", "Random.init",
// "Matmul" for MM(...)), not the per-descriptor symbol.
[[noreturn]] void failAs(const Site& s, std::string_view prefix, const std::string& kind, const std::string& message,
                         const std::string& hint) {
  const std::string method = keyAndMethod(s.name, prefix).second;
  s.ctx.fail(s.instr, method.empty() ? kind : kind + "." + method, message, hint);
}

[[noreturn]] void fail(const Site& s, const std::string& message, const std::string& hint = {}) {
  failAs(s, kPrefix, "Matmul", message, hint);
}

Call analyze(const Site& s) {
  Call c;
  std::string method;
  std::tie(c.key, method) = keyAndMethod(s.name, kPrefix);
  if (!method.empty() && method != "execute")
    fail(s, "Matmul." + method + " is not callable inside kernels",
         "call MM.execute(alpha, a, b, beta, c)");
  c.mm = mathdx::servedResult(c.key);
  if (!c.mm) fail(s, "this Matmul was not built in this process (descriptor " + c.key + ")");
  checkTarget(s, "Matmul", c.mm->spec, fail);
  for (int i = 0; i < 3; ++i)
    if (!(c.value[i] = mathdxValueItemType(c.mm->value_type[i])))
      fail(s, "Matmul's " + std::string(1, "abc"[i]) + " value type " + c.mm->value_type[i] +
                  " has no array type in cudajit kernels");
  // (alpha, a, b, beta, c), or with runtime leading dimensions (alpha, a, lda,
  // b, ldb, beta, c, ldc): cuBLASDx's dynamic-LD API, the descriptor's sibling.
  c.dynamic_ld = s.args.size() == 8;
  if ((s.args.size() != 5 && !c.dynamic_ld) || !s.kw_args.empty())
    fail(s, "Matmul.execute takes 5 positional arguments (alpha, a, b, beta, c) or 8 (alpha, a, lda, b, ldb, "
            "beta, c, ldc), got " + std::to_string(s.argCount()));
  const size_t at_a = 1, at_b = c.dynamic_ld ? 3 : 2, at_beta = c.dynamic_ld ? 5 : 3, at_c = c.dynamic_ld ? 6 : 4;
  const size_t at[3] = {at_a, at_b, at_c};
  for (int i = 0; i < 3; ++i) {
    const Type* t = s.argType(at[i]);
    if (!t->is(TypeKind::Array) || arrayElementType(t) != c.value[i])
      fail(s, "Matmul.execute's " + std::string(1, "abc"[i]) + " must be an array of " +
                  itemName(c.mm->value_type[i], c.value[i]) + ", got " + typeToString(t));
    if (c.dynamic_ld && (!s.argType(at[i] + 1)->is(TypeKind::Scalar) || !s.argType(at[i] + 1)->isInt()))
      fail(s, "Matmul.execute's ld" + std::string(1, "abc"[i]) + " must be an integer, got " +
                  typeToString(s.argType(at[i] + 1)));
  }
  for (size_t i : {size_t{0}, at_beta}) {
    const Type* t = s.argType(i);
    if (!t->is(TypeKind::Scalar) && t != c.value[2])
      fail(s, std::string(i == 0 ? "alpha" : "beta") + " must be a number, got " + typeToString(t));
  }
  if (c.dynamic_ld && c.mm->api != "dynamic_ld") {
    std::shared_ptr<const mathdx::MatmulResult> sibling;
    try {
      sibling = mathdx::matmulWithApi(c.key, "dynamic_ld");
    } catch (const CompileError& e) {
      fail(s, "the Matmul's runtime leading-dimension API: " + e.message);
    } catch (const ToolchainError& e) {
      fail(s, std::string("the Matmul's runtime leading-dimension API: ") + e.what());
    }
    if (!sibling) fail(s, "this Matmul was not built in this process (descriptor " + c.key + ")");
    c.mm = sibling;
    c.key = mathdx::specKey(sibling->spec);
  } else if (!c.dynamic_ld && c.mm->api == "dynamic_ld") {
    fail(s, "a Matmul built with execute_api='dynamic_leading_dimensions' takes 8 arguments "
            "(alpha, a, lda, b, ldb, beta, c, ldc), got 5");
  }
  return c;
}

const Type* mathdxType(const Site& s) {
  analyze(s);
  return noneTy();
}

ir::Instr* mathdxLower(const Site& s, Emitter& e) {
  Call c = analyze(s);
  checkMatmulBlockShape(s, *c.mm, fail);
  const Type* ct = c.value[2];
  // alpha and beta as C's value type; a real number for a complex half C
  // (float16x2) goes through complex128, as nvmath converts only complex ones.
  auto scale = [&](ir::Instr* v) {
    if (isComplexPairVector(ct) && v->type->isScalar() && !v->type->isComplex())
      v = e.convert(v, scalarTy(Scalar::Complex128));
    return e.convert(v, ct);
  };
  std::vector<ir::Instr*> operands;
  if (c.dynamic_ld) {   // leading dimensions as unsigned 32-bit, by pointer
    const Type* u32 = scalarTy(Scalar::UInt32);
    operands = {scale(s.args[0]), s.args[1], e.convert(s.args[2], u32), s.args[3], e.convert(s.args[4], u32),
                scale(s.args[5]), s.args[6], e.convert(s.args[7], u32)};
  } else {
    operands = {scale(s.args[0]), s.args[1], s.args[2], scale(s.args[3]), s.args[4]};
  }
  ir::Instr* call =
      makeLibraryCall(e, libcalls::Library::Mathdx, c.key, voidTy(), std::move(operands), "Matmul.execute");
  call->names.push_back(mathdxLaunchBlockName(s, c.mm->block_dim));
  return nullptr;   // no value (as CUB's void calls)
}

// --- FFT -----------------------------------------------------------------------

[[noreturn]] void failFft(const Site& s, const std::string& message, const std::string& hint = {}) {
  failAs(s, kFftPrefix, "FFT", message, hint);
}

struct FftCall {
  std::string key;
  std::shared_ptr<const mathdx::FftResult> fft;
};

// The shared-memory API (cuFFTDx's execute(smem) on the block's data in
// shared memory): an FFT built with execute_api='shared_memory', or the
// sibling of a Block FFT called with one argument, as nvmath's FFT picks the
// API by the call.
void useSharedMemoryApi(const Site& s, FftCall* c) {
  if (c->fft->api == "shared_memory") return;
  std::shared_ptr<const mathdx::FftResult> sibling;
  try {
    sibling = mathdx::fftWithApi(c->key, "shared_memory");
  } catch (const CompileError& e) {
    failFft(s, "the FFT's shared-memory API: " + e.message);
  } catch (const ToolchainError& e) {
    failFft(s, std::string("the FFT's shared-memory API: ") + e.what());
  }
  if (!sibling) failFft(s, "this FFT was not built in this process (descriptor " + c->key + ")");
  c->fft = sibling;
  c->key = mathdx::specKey(sibling->spec);
}

FftCall analyzeFft(const Site& s) {
  FftCall c;
  std::string method;
  std::tie(c.key, method) = keyAndMethod(s.name, kFftPrefix);
  if (!method.empty() && method != "execute")
    failFft(s, "FFT." + method + " is not callable inside kernels",
            "call fft.execute(thread_data[, shared_mem]) or fft.execute(shared_mem)");
  c.fft = mathdx::servedFft(c.key);
  if (!c.fft) failFft(s, "this FFT was not built in this process (descriptor " + c.key + ")");
  checkTarget(s, "FFT", c.fft->spec, failFft);
  const Type* value = mathdxValueItemType(c.fft->value_type);
  if (!value) failFft(s, "the FFT's value type " + c.fft->value_type + " has no array type in cudajit kernels");
  const std::string value_name = itemName(c.fft->value_type, value);
  const bool block = c.fft->execution == "Block";
  const bool shared_api = c.fft->api == "shared_memory";
  if (!s.kw_args.empty()) failFft(s, "FFT.execute takes no keyword arguments");
  if (shared_api || (block && s.args.size() == 1)) {
    if (s.args.size() != 1)
      failFft(s, "an FFT built with execute_api='shared_memory' takes 1 argument (shared_mem), got " +
                     std::to_string(s.argCount()));
    const Type* smem = s.argType(0);
    if (!smem->is(TypeKind::Array) || arrayElementType(smem) != value || smem->space != MemSpace::Shared)
      failFft(s, "a Block FFT's execute takes (thread_data, shared_mem), or (shared_mem) alone for the "
                 "shared-memory API: shared_mem must be a shared-memory array of " +
                     value_name + " (the block's data), got " + typeToString(smem) +
                     (smem->is(TypeKind::Array) && smem->space != MemSpace::Shared ? " not in shared memory" : ""),
              "cuda.shared.array(shape=(0,), dtype=fft.value_type) with fft.shared_memory_size bytes at launch");
    useSharedMemoryApi(s, &c);
    return c;
  }
  const size_t want = block ? 2 : 1;
  if (s.args.size() != want)
    failFft(s, std::string("a ") + c.fft->execution + " FFT's execute takes " +
                   (block ? "2 arguments (thread_data, shared_mem) or 1 (shared_mem)" : "1 argument (thread_data)") +
                   ", got " + std::to_string(s.argCount()));
  const Type* data = s.argType(0);
  if (!data->is(TypeKind::Array) || arrayElementType(data) != value)
    failFft(s, "thread_data must be an array of " + value_name + " (the FFT's value type), got " +
                   typeToString(data));
  if (block && !s.argType(1)->is(TypeKind::Array))
    failFft(s, "shared_mem must be an array (the FFT's shared-memory workspace), got " + typeToString(s.argType(1)));
  return c;
}

const Type* fftType(const Site& s) {
  analyzeFft(s);
  return noneTy();
}

ir::Instr* fftLower(const Site& s, Emitter& e) {
  FftCall c = analyzeFft(s);
  if (c.fft->execution == "Block") checkBlockShape(s, "FFT", c.fft->block_dim, failFft);
  makeLibraryCall(e, libcalls::Library::Mathdx, c.key, voidTy(), s.args, "FFT.execute");
  return nullptr;
}

// --- Random ----------------------------------------------------------------------

[[noreturn]] void failRandom(const Site& s, const std::string& message, const std::string& hint = {}) {
  failAs(s, kRandomPrefix, "Random", message, hint);
}

struct RandomCall {
  std::string key, method;
  std::shared_ptr<const mathdx::RandomResult> rng;
  Scalar output, param;
};

// Its parameters: 'a' state array, 'o' output array, 'u' uint64, 'p' a
// distribution parameter (optional).
struct RandomMethod {
  const char* name;
  const char* params;
  const char* spelling;
};
const RandomMethod kRandomMethods[] = {
    {"init", "uuua", "init(seed, subsequence, offset, state)"},
    {"generate", "aopp", "generate(state, out[, a, b])"},
    {"skip_offset", "au", "skip_offset(state, n)"},
    {"skip_subsequence", "au", "skip_subsequence(state, n)"},
};

const RandomMethod* randomMethod(const std::string& name) {
  for (const RandomMethod& m : kRandomMethods)
    if (name == m.name) return &m;
  return nullptr;
}

RandomCall analyzeRandom(const Site& s) {
  RandomCall c;
  std::tie(c.key, c.method) = keyAndMethod(s.name, kRandomPrefix);
  const RandomMethod* m = randomMethod(c.method);
  if (!m)
    failRandom(s, (c.method.empty() ? std::string("a Random object is not callable")
                                    : "Random." + c.method + " is not callable inside kernels"),
               "call R.init(seed, subsequence, offset, state), R.generate(state, out[, a, b]), R.skip_offset(state, n) "
               "or R.skip_subsequence(state, n)");
  c.rng = mathdx::servedRandom(c.key);
  if (!c.rng) failRandom(s, "this Random was not built in this process (descriptor " + c.key + ")");
  checkTarget(s, "Random", c.rng->spec, failRandom);
  if (!parseScalar(c.rng->output_type, &c.output) || !parseScalar(c.rng->param_type, &c.param))
    failRandom(s, "the generator's output type " + c.rng->output_type + " has no array type in cudajit kernels");
  const std::string params = m->params;
  const size_t required = params.find('p') == std::string::npos ? params.size() : params.find('p');
  if (!s.kw_args.empty() || s.args.size() < required || s.args.size() > params.size())
    failRandom(s, "Random." + c.method + " takes " + m->spelling + ", got " + std::to_string(s.argCount()) +
                      " argument(s)");
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Type* t = s.argType(i);
    switch (params[i]) {
      case 'a':
        if (!t->is(TypeKind::Array) || t->readonly)
          failRandom(s, "the state must be a writable array (a row of R.states(n): R.state_size bytes), got " +
                            typeToString(t));
        break;
      case 'o':
        if (!t->is(TypeKind::Array) || t->scalar != c.output || t->readonly)
          failRandom(s, "out must be a writable array of " + std::string(scalarNumbaName(c.output)) +
                            " (R.count values), got " + typeToString(t));
        break;
      default:
        if (!t->is(TypeKind::Scalar) || t->isComplex())
          failRandom(s, std::string("argument ") + std::to_string(i + 1) + " of " + m->spelling +
                            " must be a real number, got " + typeToString(t));
    }
  }
  const bool poisson = c.rng->param_type != c.rng->output_type;   // lambda is a double
  if (c.method == "generate" && poisson && s.args.size() < 3)
    failRandom(s, "a Poisson generator's generate needs lambda: generate(state, out, lam)");
  return c;
}

const Type* randomType(const Site& s) {
  analyzeRandom(s);
  return noneTy();
}

ir::Instr* randomLower(const Site& s, Emitter& e) {
  RandomCall c = analyzeRandom(s);
  const std::string params = randomMethod(c.method)->params;
  std::vector<ir::Instr*> operands;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == 'a' || params[i] == 'o') {
      operands.push_back(s.args[i]);
    } else if (params[i] == 'u') {
      operands.push_back(e.convert(s.args[i], scalarTy(Scalar::UInt64)));
    } else {
      // The distribution's parameters, defaults as cuRANDDx's: uniform (0, 1),
      // normal and log-normal (0, 1); a Poisson generator's lambda is given.
      const Type* pt = scalarTy(c.param);
      const double fallback = i == 3 ? 1.0 : 0.0;
      operands.push_back(i < s.args.size() ? e.convert(s.args[i], pt) : e.convert(e.constant(ir::Const::real(fallback), scalarTy(Scalar::Float64)), pt));
    }
  }
  makeLibraryCall(e, libcalls::Library::Mathdx, c.key + ":" + c.method, voidTy(), std::move(operands),
                  "Random." + c.method);
  return nullptr;
}

// --- cuBLASDx's tensor API (rules_mathdx_tensors.cpp) ----------------------------

// A call of the tensor API: a function of it, a Matmul's layout method, or
// MM.execute with tensors. `key` and `method` name the Matmul's ("" else).
bool tensorCall(const Site& s, std::string* key, std::string* method) {
  if (s.name.rfind(mathdx_tensors::kApiPrefix, 0) == 0 || mathdx_tensors::isMethod(s.name)) return true;
  if (s.name.rfind(mathdx_tensors::kLayoutPrefix, 0) == 0 || s.name.rfind(mathdx_tensors::kTensorPrefix, 0) == 0)
    s.ctx.fail(s.instr, "call", "a Matmul layout or tensor is not callable",
               "pass it to make_tensor, copy, MM.execute, ...");
  if (s.name.rfind(kPrefix, 0) != 0) return false;
  std::tie(*key, *method) = keyAndMethod(s.name, kPrefix);
  if (mathdx_tensors::isLayoutMethod(*method) || mathdx_tensors::isAccumulatorMethod(*method)) return true;
  if (*method != "execute" && !method->empty()) return false;
  for (const ir::Instr* a : s.args)
    if (mathdx_tensors::isTensor(a->type)) return true;
  return false;
}

const Type* routineType(const Site& s) {
  std::string key, method;
  if (tensorCall(s, &key, &method)) return mathdx_tensors::type(s, key, method);
  if (s.name.rfind(kRandomPrefix, 0) == 0) return randomType(s);
  return s.name.rfind(kFftPrefix, 0) == 0 ? fftType(s) : mathdxType(s);
}

ir::Instr* routineLower(const Site& s, Emitter& e) {
  std::string key, method;
  if (tensorCall(s, &key, &method)) {
    if (!key.empty() && !mathdx_tensors::isLayoutMethod(method)) {
      auto mm = mathdx::servedResult(key);
      if (!mm) fail(s, "this Matmul was not built in this process (descriptor " + key + ")");
      checkTarget(s, "Matmul", mm->spec, fail);
      checkMatmulBlockShape(s, *mm, fail);
    }
    return mathdx_tensors::lower(s, e, key, method);
  }
  if (s.name.rfind(kRandomPrefix, 0) == 0) return randomLower(s, e);
  return s.name.rfind(kFftPrefix, 0) == 0 ? fftLower(s, e) : mathdxLower(s, e);
}

}  // namespace

namespace rules {
const Rule mathdxCall{routineType, routineLower};
}

bool isMathdxSymbol(std::string_view name) {
  return name.rfind(kPrefix, 0) == 0 || name.rfind(kFftPrefix, 0) == 0 || name.rfind(kRandomPrefix, 0) == 0 ||
         mathdx_tensors::isSymbol(name);
}

}  // namespace cj::typeinfer
