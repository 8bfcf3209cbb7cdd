// The NVVM module skeleton and the public entry point emitNvvm.
#include "codegen/debug_info.h"
#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

// libNVVM's data layout for 64-bit NVPTX and the IR version it reads
// (NVVM IR 2.0, debug metadata 3.2). Shared-memory pointers (addrspace 3)
// are 32 bits, as NVRTC's are: the shared window is far below 4 GiB, and
// shared addressing (tree reductions, shared histograms, tiles) then costs
// one 32-bit add instead of 64-bit arithmetic.
constexpr const char* kDataLayout =
    "e-p:64:64:64-p3:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-"
    "f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64";
constexpr const char* kTriple = "nvptx64-nvidia-cuda";

// Which functions of the module are kernels: those marked is_kernel. A
// module with none is a device function compiled on its own
// (compile_ptx(device=True)).
bool isKernelOf(const ir::Module& m, size_t i) { return m.functions[i]->is_kernel; }

bool hasKernel(const ir::Module& m) {
  for (const auto& f : m.functions)
    if (f->is_kernel) return true;
  return false;
}

// A device function's definition as the function emitter writes it
// ("define internal <ret> @f(...) alwaysinline") made externally visible:
// the entry of a device-only module is what the caller links against, so it
// keeps its symbol (a PTX .visible .func) and is not forced inline.
std::string exported(std::string body) {
  const std::string internal = "define internal ";
  if (body.compare(0, internal.size(), internal) == 0) body.replace(0, internal.size(), "define ");
  const size_t eol = body.find('\n');
  const std::string inl = " alwaysinline";
  const size_t at = body.find(inl);
  if (at != std::string::npos && at < eol) body.erase(at, inl.size());
  return body;
}

}  // namespace

int Metadata::add(const std::string& body, bool distinct) {
  if (!distinct) {
    auto it = index_.find(body);
    if (it != index_.end()) return it->second;
  }
  int id = static_cast<int>(nodes_.size());
  nodes_.push_back(distinct ? "distinct " + body : body);
  if (!distinct) index_[body] = id;
  return id;
}

std::string Metadata::text() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) out += "!" + std::to_string(i) + " = " + nodes_[i] + "\n";
  return out;
}

ModuleEmitter::ModuleEmitter(const ir::Module& m, const CodegenOptions& options,
                             const libcalls::ResolvedCalls& calls)
    : module_(m), options_(options), calls_(calls) {
  if (options_.lineinfo || options_.debug) debug_ = std::make_unique<DebugInfo>(metadata_, m);
  for (const auto& fn : m.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs)
        if (in->isIntrinsic(ir::Intrinsic::Wgmma)) division_inline_ = true;
}

ModuleEmitter::~ModuleEmitter() = default;

void ModuleEmitter::declare(const std::string& declaration) {
  if (declared_.insert(declaration).second) declarations_.push_back(declaration);
}

std::string ModuleEmitter::addGlobal(const std::string& hint, const std::string& definition) {
  std::string name = hint;
  for (int n = 1; global_names_.count(name); ++n) name = hint + "." + std::to_string(n);
  global_names_.insert(name);
  std::string ref = "@" + llvmIdent(name);
  globals_.push_back(ref + " = " + definition);
  return ref;
}

std::string ModuleEmitter::addGlobalOnce(const std::string& name, const std::string& definition) {
  auto it = once_globals_.find(name);
  if (it != once_globals_.end()) return it->second;
  return once_globals_[name] = addGlobal(name, definition);
}

void ModuleEmitter::requireBlock(const int dims[3]) {
  for (int d = 0; d < 3; ++d) required_block_[d] = dims[d];
}

void ModuleEmitter::define(const std::string& name, const std::string& text) {
  if (declared_.insert("define @" + name).second) helper_defs_.push_back(text);
}

std::string ModuleEmitter::helper(Helper h, Scalar s) {
  auto key = std::make_pair(static_cast<int>(h), static_cast<int>(s));
  auto it = helpers_.find(key);
  if (it != helpers_.end()) return it->second;
  std::string name = "@" + helperBaseName(h) + "_" + std::string(scalarShortName(s));
  std::vector<std::string> decls;
  helper_defs_.push_back(helperDefinition(h, s, name, &decls));
  for (const auto& d : decls) declare(d);
  helpers_[key] = name;
  return name;
}

std::string ModuleEmitter::functionName(const ir::Function& fn) const {
  for (size_t i = 0; i < module_.functions.size(); ++i) {
    if (module_.functions[i].get() == &fn && isKernelOf(module_, i)) return "@" + kernelSymbol(fn);
  }
  return "@" + llvmIdent(ptxSafeName(fn.name));
}

std::string ModuleEmitter::run() {
  std::vector<std::string> bodies;
  struct Kernel {
    std::string name, params;
    std::vector<int> grid_constant;
    int occupancy;
    int max_threads, max_cluster_rank;   // launch bounds; 0: none
  };
  std::vector<Kernel> kernels;
  const bool device_only = !hasKernel(module_);
  for (size_t i = 0; i < module_.functions.size(); ++i) {
    const ir::Function& fn = *module_.functions[i];
    bool kernel = isKernelOf(module_, i);
    FunctionEmitter fe(*this, fn, kernel);
    if (kernel && fn.num_warps) {
      // A tile kernel runs with exactly its chosen block, a SIMT kernel with
      // tiles with the launch block it was compiled for: ptxas may use the
      // registers that leaves.
      const int tile_block[3] = {fn.num_warps * 32, 1, 1};
      requireBlock(fn.simt_block[0] ? fn.simt_block : tile_block);
    }
    bodies.push_back(device_only && i == 0 ? exported(fe.run()) : fe.run());
    if (kernel)
      kernels.push_back({functionName(fn), fe.paramTypeList(), fe.gridConstantParams(), fn.occupancy,
                         fn.max_threads, fn.max_cluster_rank});
  }

  std::string out;
  std::string title = module_.functions.empty() ? "" : module_.functions[0]->py_name;
  out += "; cudajit NVVM IR" + (title.empty() ? std::string() : ": " + title) + "\n";
  out += std::string("target datalayout = \"") + kDataLayout + "\"\n";
  out += std::string("target triple = \"") + kTriple + "\"\n\n";
  for (const auto& g : globals_) out += g + "\n";
  if (!globals_.empty()) out += "\n";
  for (const auto& d : declarations_) out += d + "\n";
  if (!declarations_.empty()) out += "\n";
  for (const auto& h : helper_defs_) out += h + "\n";
  for (const auto& b : bodies) out += b + "\n";

  // Kernels go in @llvm.used: under -gen-lto libNVVM otherwise treats them
  // as unreferenced and LTO drops them.
  if (!kernels.empty()) {
    std::string used;
    for (const auto& [name, params, grid_constant, occupancy, max_threads, max_cluster_rank] : kernels) {
      used += (used.empty() ? "" : ", ") + std::string("i8* bitcast (void (") + params + ")* " + name + " to i8*)";
    }
    out += "@llvm.used = appending global [" + std::to_string(kernels.size()) + " x i8*] [" + used +
           "], section \"llvm.metadata\"\n\n";
  }

  std::string annotations;
  for (const auto& [name, params, grid_constant, occupancy, max_threads, max_cluster_rank] : kernels) {
    // The annotation names the kernel through a pointer of its exact type.
    auto annotate = [&, &name = name, &params = params](const std::string& key, const std::string& value) {
      int node = metadata_.add("!{void (" + params + ")* " + name + ", !\"" + key + "\", " + value + "}");
      annotations += (annotations.empty() ? "!" : ", !") + std::to_string(node);
    };
    annotate("kernel", "i32 1");
    for (int d = 0; d < 3 && required_block_[0] > 0; ++d)
      annotate(std::string("reqntid") + "xyz"[d], "i32 " + std::to_string(required_block_[d]));
    // ptxas fits the registers to this many blocks per SM (cuTile's hint, launch_bounds' min_blocks)
    if (occupancy > 0) annotate("minctasm", "i32 " + std::to_string(occupancy));
    // launch_bounds: the most threads a launch may have, blocks a cluster may
    // hold. A required block (a block-wide library call) bounds it exactly,
    // and ptxas refuses .maxntid beside .reqntid.
    if (max_threads > 0 && required_block_[0] <= 0) annotate("maxntidx", "i32 " + std::to_string(max_threads));
    // libNVVM reads the cluster bound as "cluster_max_blocks", LLVM's NVPTX as "maxclusterrank"
    if (max_cluster_rank > 0)
      for (const char* key : {"cluster_max_blocks", "maxclusterrank"}) annotate(key, "i32 " + std::to_string(max_cluster_rank));
    if (!grid_constant.empty()) {
      std::string positions;
      for (int k : grid_constant) positions += (positions.empty() ? "i32 " : ", i32 ") + std::to_string(k);
      annotate("grid_constant", "!" + std::to_string(metadata_.add("!{" + positions + "}")));
    }
  }
  int version = metadata_.add("!{i32 2, i32 0, i32 3, i32 2}");
  out += "!nvvm.annotations = !{" + annotations + "}\n";
  out += "!nvvmir.version = !{!" + std::to_string(version) + "}\n";
  if (debug_) out += debug_->namedMetadata();
  out += metadata_.text();
  return out;
}

std::string emitNvvm(const ir::Module& typed, const CodegenOptions& options,
                     const libcalls::ResolvedCalls& calls) {
  ModuleEmitter m(typed, options, calls);
  return m.run();
}

}  // namespace cj::codegen
