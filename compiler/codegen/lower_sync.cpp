// Lowering of the synchronisation intrinsics (family Sync of ir/intrinsics.def):
//
//   syncthreads, threadfence[_block]   llvm.nvvm.barrier0 / membar.gl / membar.cta
//   syncthreads_count/and/or           llvm.nvvm.barrier0.popc/and/or
//   threadfence_system                 llvm.nvvm.membar.sys
//   syncwarp, nanosleep                llvm.nvvm.bar.warp.sync, inline PTX nanosleep.u32
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

struct BarrierRow {
  Intrinsic id;
  const char* llvm;
};
constexpr BarrierRow kBarriers[] = {
    {Intrinsic::SyncThreads, "llvm.nvvm.barrier0"},
    {Intrinsic::ThreadFence, "llvm.nvvm.membar.gl"},
    {Intrinsic::ThreadFenceBlock, "llvm.nvvm.membar.cta"},
};

}  // namespace

void lowerSyncIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  Intrinsic id = in.intrinsic;
  for (const auto& row : kBarriers) {
    if (row.id == id) {
      fe.mod().declare(std::string("declare void @") + row.llvm + "()");
      fe.emitLine(std::string("call void @") + row.llvm + "()");
      return;
    }
  }
  switch (id) {
    case Intrinsic::SyncThreadsCount:
    case Intrinsic::SyncThreadsAnd:
    case Intrinsic::SyncThreadsOr: {
      const char* m = id == Intrinsic::SyncThreadsCount ? "popc" : id == Intrinsic::SyncThreadsAnd ? "and" : "or";
      fe.bind(in, declareCall(fe, "i32", std::string("llvm.nvvm.barrier0.") + m, {{"i32", fe.val(in.operands[0])}}));
      return;
    }
    case Intrinsic::ThreadFenceSystem:
      declareCall(fe, "void", "llvm.nvvm.membar.sys", {}, false);
      return;
    case Intrinsic::SyncWarp:
      declareCall(fe, "void", "llvm.nvvm.bar.warp.sync", {{"i32", fe.val(in.operands[0])}}, false);
      return;
    case Intrinsic::NanoSleep:
      fe.emitLine("call void asm sideeffect \"nanosleep.u32 $0;\", \"r\"(i32 " + fe.val(in.operands[0]) + ")");
      return;
    default:
      fe.fail(in, in.intrinsicName(), "codegen has no lowering for intrinsic '" + in.intrinsicName() + "'");
  }
}

}  // namespace cj::codegen
