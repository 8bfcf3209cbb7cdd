// The LLVM back end's plugin (llvm_nvptx.h): parse the module with LLVM's
// assembly parser, link libdevice as bitcode (only what is called, then
// internalised, as clang's -mlink-builtin-bitcode does), run LLVM's O0-O3
// pipeline with the NVPTX target's own passes (NVVMReflect among them), and
// print PTX with the NVPTX code generator.
#include "llvm_nvptx/llvm_nvptx.h"

#include <sys/random.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";
// wgmma, TMA and mbarrier waits in the tile kernels' inline PTX need 8.0;
// every toolkit cudajit supports assembles it.
constexpr const char* kPtxFeature = "+ptx80";

// A failure anywhere in one compile: its text becomes the log.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// LLVM's fatal errors ("Cannot select", an inline-asm constraint it cannot
// meet) would abort the process; the handler turns them into an exception
// that cj_llvm_compile catches. The unwinding crosses LLVM's frames (built
// with unwind tables); what that compile allocated may leak.
void onFatalError(void*, const char* reason, bool) { throw Failure(std::string("LLVM: ") + reason); }

// $CUDAJIT_LLVM_FLAGS: LLVM's own command-line options (`-unroll-threshold=300
// -nvptx-fma-level=0`), for experiments with the optimiser, as clang's -mllvm.
// Read once, when the plugin is loaded; they are part of cj_llvm_version(),
// and so of the kernel cache key.
const std::string& userFlags() {
  static const std::string flags = [] {
    const char* text = std::getenv("CUDAJIT_LLVM_FLAGS");
    return std::string(text ? text : "");
  }();
  return flags;
}

// LLVM options cudajit always sets, before the user's (which may override
// them). -sink-common-insts=false: SimplifyCFG would merge the stores that
// end both arms of an if/else into one store after the join, its address
// and value behind phis. libNVVM keeps the two stores; on the GPU the merged
// form made bench_kernels' stencil 1.03x libNVVM's time, 1.00x without it.
constexpr const char* kDefaultFlags[] = {"-sink-common-insts=false"};

void parseFlags() {
  std::vector<std::string> words{"cudajit"};
  words.insert(words.end(), std::begin(kDefaultFlags), std::end(kDefaultFlags));
  std::istringstream in(userFlags());
  for (std::string word; in >> word;) words.push_back(word);
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &os))
    throw Failure("$CUDAJIT_LLVM_FLAGS: " + os.str());
}

void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    llvm::install_fatal_error_handler(onFatalError, nullptr);
    parseFlags();
  });
}

// Errors and warnings LLVM reports through the context while it optimises
// and generates code (inline assembly it rejects, for instance). Without a
// handler the context prints them and exits on the first error.
struct Diagnostics {
  std::string errors;
  static void handle(const llvm::DiagnosticInfo* diagnostic, void* self) {
    const llvm::DiagnosticInfo& info = *diagnostic;
    if (info.getSeverity() != llvm::DS_Error) return;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    static_cast<Diagnostics*>(self)->errors += os.str() + "\n";
  }
};

// libdevice's bytes, read once per path: every compile parses the functions
// it needs lazily from them.
const std::string& libdeviceBytes(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::string> files;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = files.find(path);
  if (it != files.end()) return it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure("cannot read libdevice '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return files.emplace(path, bytes.str()).first->second;
}

bool callsLibdevice(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

void linkLibdevice(llvm::Module& m, const std::string& path) {
  const std::string& bytes = libdeviceBytes(path);
  llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()), "libdevice.10.bc");
  llvm::Expected<std::unique_ptr<llvm::Module>> lib = llvm::getLazyBitcodeModule(buffer, m.getContext());
  if (!lib) throw Failure("libdevice '" + path + "': " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  // Only the functions the module calls come in, and they become internal so
  // that the optimiser inlines them and drops the rest.
  bool failed = llvm::Linker::linkModules(
      m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module& linked, const llvm::StringSet<>& from_libdevice) {
        llvm::internalizeModule(linked, [&](const llvm::GlobalValue& gv) {
          return !gv.hasName() || !from_libdevice.contains(gv.getName());
        });
      });
  if (failed) throw Failure("linking libdevice '" + path + "' failed");
}

// libdevice asks __nvvm_reflect("__CUDA_PREC_SQRT") whether sqrtf must be
// correctly rounded. LLVM 19's NVVMReflect knows only __CUDA_FTZ and
// __CUDA_ARCH and answers 0 to the rest, which would make every sqrtf
// approximate; libNVVM answers 1 unless -prec-sqrt=0 (fastmath). Answer as
// libNVVM does before LLVM's pass sees the calls.
void answerPrecSqrt(llvm::Module& m, bool fastmath) {
  llvm::Function* reflect = m.getFunction("__nvvm_reflect");
  if (!reflect) return;
  std::vector<llvm::CallInst*> calls;
  for (llvm::User* user : reflect->users())
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) calls.push_back(call);
  for (llvm::CallInst* call : calls) {
    auto* name = llvm::dyn_cast<llvm::GlobalVariable>(call->getArgOperand(0)->stripPointerCasts());
    if (!name || !name->hasInitializer()) continue;
    auto* text = llvm::dyn_cast<llvm::ConstantDataSequential>(name->getInitializer());
    if (!text || !text->isCString() || text->getAsCString() != "__CUDA_PREC_SQRT") continue;
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), fastmath ? 0 : 1));
    call->eraseFromParent();
  }
}

std::unique_ptr<llvm::TargetMachine> targetMachine(const CjLlvmOptions& o) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target) throw Failure("LLVM has no NVPTX target: " + error);
  std::string cpu = "sm_" + std::to_string(o.arch) + (o.arch_specific ? "a" : "");
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;   // libNVVM's -fma=1 default
  options.UnsafeFPMath = o.fastmath != 0;             // div.approx / sqrt.approx (-prec-div=0 -prec-sqrt=0)
  llvm::CodeGenOptLevel level = o.opt <= 0 ? llvm::CodeGenOptLevel::None
                                : o.opt == 1 ? llvm::CodeGenOptLevel::Less
                                : o.opt == 2 ? llvm::CodeGenOptLevel::Default
                                             : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(kTriple, cpu, kPtxFeature, options, std::nullopt, std::nullopt, level));
  if (!tm) throw Failure("LLVM could not create an NVPTX target machine for " + cpu);
  if (!tm->getMCSubtargetInfo()->isCPUStringValid(cpu))
    throw Failure("LLVM " LLVM_VERSION_STRING " has no NVPTX target " + cpu +
                  " (compile for this GPU with backend='nvvm')");
  return tm;
}

// fastmath: single-precision denormals flushed (the .ftz instructions, and
// libdevice's __nvvm_reflect("__CUDA_FTZ") through the module flag), as
// libNVVM's -ftz=1.
void applyFastMath(llvm::Module& m) {
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", 1);
  for (llvm::Function& f : m)
    if (!f.isDeclaration()) f.addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");
}

// Runtime unrolling of small loops whose trip count is only known at run
// time, the grid-stride loop above all (`while i < n: ...; i += stride`).
// LLVM's NVPTX tuning allows runtime unrolling, but not when the trip count
// takes a division (by the stride), which libNVVM computes and unrolls by 4:
// four loads in flight instead of one, 1.32x on bench_kernels' reduction.
// The pass marks such loops as an `unroll_count(4)` pragma would, which
// lets LLVM's unroller pay for the division; it runs before the unroller.
struct RuntimeUnrollHint : llvm::PassInfoMixin<RuntimeUnrollHint> {
  static constexpr unsigned kCount = 4;
  static constexpr unsigned kMaxInstructions = 60;   // small bodies only, as libNVVM's choice

  static bool worthUnrolling(llvm::Loop& loop, llvm::ScalarEvolution& se) {
    if (!loop.isInnermost() || loop.getLoopID() || !loop.getLoopLatch()) return false;
    const llvm::SCEV* taken = se.getBackedgeTakenCount(&loop);
    if (llvm::isa<llvm::SCEVCouldNotCompute>(taken) || llvm::isa<llvm::SCEVConstant>(taken)) return false;
    unsigned max_trips = se.getSmallConstantMaxTripCount(&loop);
    if (max_trips != 0 && max_trips <= kCount) return false;
    unsigned instructions = 0;
    for (llvm::BasicBlock* block : loop.blocks()) {
      for (llvm::Instruction& in : *block) {
        if (++instructions > kMaxInstructions) return false;
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&in))   // barriers, shuffles, calls
          if (call->isConvergent() || !call->getCalledFunction() || !call->getCalledFunction()->isIntrinsic())
            return false;
      }
    }
    return true;
  }

  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& analyses) {
    llvm::LoopInfo& loops = analyses.getResult<llvm::LoopAnalysis>(f);
    llvm::ScalarEvolution& se = analyses.getResult<llvm::ScalarEvolutionAnalysis>(f);
    llvm::LLVMContext& context = f.getContext();
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      if (!worthUnrolling(*loop, se)) continue;
      llvm::Metadata* count[] = {
          llvm::MDString::get(context, "llvm.loop.unroll.count"),
          llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), kCount))};
      llvm::Metadata* parts[] = {nullptr, llvm::MDNode::get(context, count)};
      llvm::MDNode* id = llvm::MDNode::getDistinct(context, parts);
      id->replaceOperandWith(0, id);   // a loop id names itself first
      loop->setLoopID(id);
    }
    return llvm::PreservedAnalyses::all();   // metadata only
  }
};

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);   // registers the NVPTX callbacks (NVVMReflect, ...)
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.registerVectorizerStartEPCallback([](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) {
    fpm.addPass(RuntimeUnrollHint());
  });
  llvm::OptimizationLevel level = opt <= 0 ? llvm::OptimizationLevel::O0
                                  : opt == 1 ? llvm::OptimizationLevel::O1
                                  : opt == 2 ? llvm::OptimizationLevel::O2
                                             : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = opt <= 0 ? pb.buildO0DefaultPipeline(level)
                                         : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

// NVPTX numbers its call sequences in comments ("{ // callseq 7, 0") from
// a process-wide counter: the same module would print differently on each
// compile. The comments go, so that the PTX is a function of the module.
std::string withoutCallSequenceNumbers(const std::string& ptx) {
  static const std::string tag = "// callseq";
  std::string out;
  out.reserve(ptx.size());
  size_t at = 0;
  while (true) {
    size_t hit = ptx.find(tag, at);
    if (hit == std::string::npos) break;
    size_t end = ptx.find('\n', hit);
    if (end == std::string::npos) end = ptx.size();
    size_t keep = hit;
    while (keep > at && ptx[keep - 1] == ' ') --keep;   // the spaces before the comment
    out.append(ptx, at, keep - at);
    at = end;
  }
  out.append(ptx, at, std::string::npos);
  return out;
}

std::string emitPtx(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Failure("LLVM's NVPTX target cannot emit PTX");
  codegen.run(m);
  return withoutCallSequenceNumbers(std::string(ptx.str()));
}

enum class Output { Ptx, OptimizedIr };

std::string compile(const char* ir, size_t size, const CjLlvmOptions& o, Output output) {
  initializeOnce();
  llvm::LLVMContext context;
  Diagnostics diagnostics;
  context.setDiagnosticHandlerCallBack(Diagnostics::handle, &diagnostics);
  llvm::SMDiagnostic parse_error;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(llvm::StringRef(ir, size), parse_error, context);
  if (!m) {
    throw Failure("LLVM could not parse the module: line " + std::to_string(parse_error.getLineNo()) + ":" +
                  std::to_string(parse_error.getColumnNo() + 1) + ": " + parse_error.getMessage().str() +
                  "\n  " + parse_error.getLineContents().str());
  }
  std::string broken;
  llvm::raw_string_ostream verifier(broken);
  if (llvm::verifyModule(*m, &verifier)) throw Failure("the module is not valid LLVM IR:\n" + verifier.str());

  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(o);
  m->setTargetTriple(kTriple);
  m->setDataLayout(tm->createDataLayout());
  if (output == Output::Ptx && callsLibdevice(*m)) {
    if (!o.libdevice || !*o.libdevice) throw Failure("the module calls libdevice, and no libdevice was given");
    linkLibdevice(*m, o.libdevice);
    answerPrecSqrt(*m, o.fastmath != 0);
  }
  if (o.fastmath) applyFastMath(*m);
  optimize(*m, *tm, o.opt);
  if (output == Output::OptimizedIr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    m->print(os, nullptr);
    if (!diagnostics.errors.empty()) throw Failure(diagnostics.errors);
    return os.str();
  }
  std::string ptx = emitPtx(*m, *tm);
  if (!diagnostics.errors.empty()) throw Failure(diagnostics.errors);
  return ptx;
}

char* copyOut(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

int run(const char* ir, size_t ir_size, const CjLlvmOptions* options, Output output, char** out, char** log) {
  *out = nullptr;
  *log = nullptr;
  try {
    *out = copyOut(compile(ir, ir_size, *options, output));
    return *out ? 0 : 1;
  } catch (const std::exception& e) {
    *log = copyOut(e.what());
  } catch (...) {
    *log = copyOut("LLVM failed with an unknown exception");
  }
  return 1;
}

}  // namespace

extern "C" {

// LLVM's Support library (built against glibc 2.36) calls arc4random; a
// definition here keeps the plugin loadable on older systems (glibc 2.34,
// Ubuntu 22.04). Hidden: it serves the plugin's own references only.
__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value = 0;
  if (getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    static std::atomic<uint32_t> counter{0x9e3779b9u};
    value = counter.fetch_add(0x9e3779b9u) ^ static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&value));
  }
  return value;
}

__attribute__((visibility("default"))) int cj_llvm_abi_version(void) { return CJ_LLVM_PLUGIN_ABI; }

__attribute__((visibility("default"))) const char* cj_llvm_version(void) {
  static const std::string version =
      "LLVM " LLVM_VERSION_STRING + (userFlags().empty() ? std::string() : " flags " + userFlags());
  return version.c_str();
}

__attribute__((visibility("default"))) int cj_llvm_compile(const char* ir, size_t ir_size,
                                                          const CjLlvmOptions* options, char** ptx,
                                                          char** log) {
  return run(ir, ir_size, options, Output::Ptx, ptx, log);
}

__attribute__((visibility("default"))) int cj_llvm_optimize(const char* ir, size_t ir_size,
                                                           const CjLlvmOptions* options, char** optimized,
                                                           char** log) {
  return run(ir, ir_size, options, Output::OptimizedIr, optimized, log);
}

__attribute__((visibility("default"))) void cj_llvm_free(char* text) { std::free(text); }

}  // extern "C"
