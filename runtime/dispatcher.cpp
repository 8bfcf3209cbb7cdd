#include "runtime/dispatcher.h"

#include <chrono>
#include <functional>

#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/signature.h"
#include "support/error.h"

namespace cj::rt {
namespace {

constexpr int kDefaultArch = 90;            // sm_90 when no GPU says otherwise
constexpr unsigned kStaticSharedLimit = 48 * 1024;

// Can a value of type `from` be passed where an explicit signature declares
// `to`? Numbers convert to numbers (numba's safe and unsafe conversions);
// arrays need the same dtype and ndim and a layout at least as strict.
bool convertible(const Type* from, const Type* to) {
  if (from == to) return true;
  if (from->isScalar() && to->isScalar())
    return !from->isComplex() && !to->isComplex();
  if (from->is(TypeKind::Tuple) && to->is(TypeKind::Tuple)) {
    if (from->elems.size() != to->elems.size()) return false;
    for (size_t k = 0; k < from->elems.size(); ++k)
      if (!convertible(from->elems[k], to->elems[k])) return false;
    return true;
  }
  if (from->is(TypeKind::Array) && to->is(TypeKind::Array)) {
    if (from->scalar != to->scalar || from->ndim != to->ndim) return false;
    if (to->layout == Layout::A || to->layout == from->layout) return true;
    return from->ndim <= 1 && from->layout != Layout::A;   // dense 1-d is both C and F
  }
  return false;
}

}  // namespace

size_t SignatureKeyHash::operator()(const SignatureKey& k) const {
  size_t h = std::hash<int>()(k.block[0] * 131071 + k.block[1] * 8191 + k.block[2]);
  for (const Type* t : k.args) h = h * 1000003u ^ std::hash<const void*>()(t);
  return h;
}

Dispatcher::Dispatcher(py::object py_function, DispatcherOptions options)
    : py_function_(std::move(py_function)), options_(options) {}

const ir::Module& Dispatcher::untyped() {
  if (!untyped_) {
    const auto start = std::chrono::steady_clock::now();
    untyped_ = driver::decode(py_function_.ptr());
    decode_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return *untyped_;
}

std::string Dispatcher::untypedIr() { return ir::printModule(untyped()); }

int Dispatcher::numArgs() {
  const ir::Module& m = untyped();
  return m.functions.empty() ? 0 : static_cast<int>(m.functions.front()->arg_names.size());
}

int Dispatcher::targetArch() const {
  if (options_.arch) return options_.arch;
  if (driverAvailable()) return deviceInfo(currentDevice()).arch();
  return kDefaultArch;
}

driver::CompileOptions Dispatcher::compileOptions(int arch, bool want_cubin, Block block) const {
  driver::CompileOptions o;
  for (int d = 0; d < 3; ++d) o.infer.block_dims[d] = block[d];
  o.target.arch = arch;
  o.target.opt = options_.opt;
  o.target.fastmath = options_.fastmath;
  o.target.debug = options_.debug;
  o.target.lineinfo = options_.lineinfo;
  o.codegen.fastmath = options_.fastmath;
  o.codegen.debug = options_.debug;
  o.codegen.lineinfo = options_.lineinfo;
  o.want_cubin = want_cubin;
  return o;
}

Overload* Dispatcher::find(const std::vector<const Type*>& args, Block block) const {
  if (block_specialised_) {
    auto it = by_key_.find(SignatureKey{args, block});
    if (it != by_key_.end()) return it->second.get();
  }
  auto it = by_key_.find(SignatureKey{args, {{0, 0, 0}}});
  if (it != by_key_.end()) return it->second.get();
  // No block shape asked (inspect_*, explicit compiles): the first overload
  // of these types, whatever block shape it was specialised on.
  if (block_specialised_ && block == Block{{0, 0, 0}})
    for (Overload* ov : order_)
      if (ov->key.args == args) return ov;
  return nullptr;
}

Overload& Dispatcher::compileFor(const std::vector<const Type*>& args, Block block) {
  if (Overload* hit = find(args, block)) return *hit;
  const int nargs = numArgs();
  if (static_cast<int>(args.size()) != nargs)
    throw CompileError(untyped().functions.front()->filename,
                       untyped().functions.front()->first_line, 0, "signature",
                       "the signature " + numbaArgsString(args) + " has " +
                           std::to_string(args.size()) + " argument(s) but the function takes " +
                           std::to_string(nargs));
  auto ov = std::make_unique<Overload>();
  ov->key.args = args;
  ov->arch = targetArch();
  ov->compiled = driver::compile(untyped(), args, compileOptions(ov->arch, /*want_cubin=*/true, block));
  if (order_.empty()) ov->compiled.times.decode = decode_seconds_;
  // Block algorithms: this overload serves only its launch block shape.
  if (ov->compiled.block_specialised) {
    ov->key.block = block;
    block_specialised_ = true;
  }
  ov->slots = abi::kernelSlots(args);
  Overload* raw = ov.get();
  by_key_.emplace(ov->key, std::move(ov));
  order_.push_back(raw);
  return *raw;
}

Overload& Dispatcher::compileExplicit(const std::vector<const Type*>& args, Block block) {
  explicit_signatures_ = true;
  return compileFor(args, block);
}

void Dispatcher::noMatchingSignature(const std::vector<const Type*>& actual) const {
  std::string declared;
  for (const Overload* ov : order_) declared += "\n  " + numbaArgsString(ov->key.args);
  throw ArgumentTypeError("no matching definition for argument type(s) " +
                          numbaArgsString(actual) + "; the kernel was declared with:" + declared);
}

Overload* Dispatcher::select(const std::vector<const Type*>& actual, Block block) {
  if (Overload* hit = find(actual, block)) return hit;
  if (!explicit_signatures_) return &compileFor(actual, block);
  // The declared signature with the most exactly matching arguments wins.
  Overload* best = nullptr;
  int best_exact = -1;
  for (Overload* ov : order_) {
    const auto& want = ov->key.args;
    if (want.size() != actual.size()) continue;
    int exact = 0;
    bool ok = true;
    for (size_t k = 0; k < want.size() && ok; ++k) {
      ok = convertible(actual[k], want[k]);
      exact += actual[k] == want[k];
    }
    if (ok && exact > best_exact) {
      best = ov;
      best_exact = exact;
    }
  }
  if (!best) noMatchingSignature(actual);
  // Declared for another block shape: the same signature for this one.
  if (best->key.block != Block{{0, 0, 0}} && best->key.block != block) return &compileFor(best->key.args, block);
  return best;
}

Overload::Loaded& Dispatcher::loadedOn(Overload& ov, int device) {
  if (ov.loaded.size() <= static_cast<size_t>(device)) ov.loaded.resize(device + 1);
  if (ov.loaded[device]) return *ov.loaded[device];
  const int arch = deviceInfo(device).arch();
  const std::vector<char>* cubin = &ov.compiled.cubin;
  if (arch != ov.arch && !options_.arch) {
    // Compiled eagerly for another GPU (or with no GPU): build for this one.
    auto it = ov.cubins_for_other_archs.find(arch);
    if (it == ov.cubins_for_other_archs.end()) {
      driver::CompiledKernel k =
          driver::compile(untyped(), ov.key.args, compileOptions(arch, true, ov.key.block));
      it = ov.cubins_for_other_archs.emplace(arch, std::move(k.cubin)).first;
    }
    cubin = &it->second;
  }
  auto l = std::make_unique<Overload::Loaded>();
  l->module = std::make_unique<LoadedModule>(*cubin);
  l->function = l->module->function(ov.compiled.symbol);
  ov.loaded[device] = std::move(l);
  return *ov.loaded[device];
}

const std::string& Dispatcher::ptx(Overload& ov) {
  if (ov.ptx.empty()) ov.ptx = driver::ptxOf(ov.compiled, compileOptions(ov.arch, false).target);
  return ov.ptx;
}

void Dispatcher::launch(const LaunchConfig& config, const py::tuple& args) {
  ensureContext();   // no driver / no GPU: CudaSupportError before any work
  const int nargs = numArgs();
  if (static_cast<int>(args.size()) != nargs) {
    const ir::Function& fn = *untyped().functions.front();
    throw ArgumentTypeError(fn.py_name + "() takes " + std::to_string(nargs) +
                            " argument(s) but " + std::to_string(args.size()) + " were given");
  }
  LaunchArgs la;
  classifyArgs(args, &la);
  Overload& ov = *select(la.types, Block{{static_cast<int>(config.block[0]), static_cast<int>(config.block[1]),
                                          static_cast<int>(config.block[2])}});
  const int device = currentDevice();
  Overload::Loaded& loaded = loadedOn(ov, device);

  if (config.shared_bytes > kStaticSharedLimit && config.shared_bytes > loaded.dynamic_shared_limit) {
    const unsigned limit = static_cast<unsigned>(deviceInfo(device).max_shared_per_block_optin);
    if (config.shared_bytes > limit)
      throw ArgumentValueError("dynamic shared memory of " + std::to_string(config.shared_bytes) +
                               " bytes exceeds the device's limit of " + std::to_string(limit));
    CJ_CU(cuFuncSetAttribute, loaded.function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          static_cast<int>(config.shared_bytes));
    loaded.dynamic_shared_limit = config.shared_bytes;
  }

  stageIn(la, config.stream);
  PackedParams params;
  params.pack(ov.slots, la.values);
  CJ_CU(cuLaunchKernel, loaded.function, config.grid[0], config.grid[1], config.grid[2],
        config.block[0], config.block[1], config.block[2], config.shared_bytes, config.stream,
        params.pointers(), nullptr);
  stageOut(la, config.stream);
}

namespace {

driver::CompileOptions aheadOfTimeOptions(const DispatcherOptions& options, Block block) {
  driver::CompileOptions o;
  o.target.arch = options.arch ? options.arch : kDefaultArch;
  o.target.opt = options.opt;
  o.target.fastmath = o.codegen.fastmath = options.fastmath;
  o.target.debug = o.codegen.debug = options.debug;
  o.target.lineinfo = o.codegen.lineinfo = options.lineinfo;
  for (int d = 0; d < 3; ++d) o.infer.block_dims[d] = block[d];
  return o;
}

}  // namespace

CubinResult compileCubin(const py::object& py_function, const std::vector<const Type*>& args,
                         const DispatcherOptions& options, Block block) {
  std::shared_ptr<const ir::Module> untyped = driver::decode(py_function.ptr());
  driver::CompileOptions o = aheadOfTimeOptions(options, block);
  o.want_cubin = true;
  driver::CompiledKernel k;
  {
    // Past decoding nothing touches Python: callers may compile (warm the
    // caches) from several threads at once.
    py::gil_scoped_release nogil;
    k = driver::compile(*untyped, args, o);
  }
  return {std::move(k.cubin), k.symbol, k.return_type};
}

PtxResult compilePtx(const py::object& py_function, const std::vector<const Type*>& args,
                     bool device, const DispatcherOptions& options, Block block) {
  std::shared_ptr<const ir::Module> untyped = driver::decode(py_function.ptr());
  driver::CompileOptions o;
  for (int d = 0; d < 3; ++d) o.infer.block_dims[d] = block[d];
  o.target.arch = options.arch ? options.arch : kDefaultArch;
  o.target.opt = options.opt;
  o.target.fastmath = o.codegen.fastmath = options.fastmath;
  o.target.debug = o.codegen.debug = options.debug;
  o.target.lineinfo = o.codegen.lineinfo = options.lineinfo;
  o.want_cubin = false;
  o.device = device;
  driver::CompiledKernel k = driver::compile(*untyped, args, o);
  return {std::move(k.ptx), k.return_type};
}

}  // namespace cj::rt
