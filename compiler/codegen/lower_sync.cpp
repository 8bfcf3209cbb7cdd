// Lowering of the synchronisation intrinsics (family Sync of ir/intrinsics.def):
//
//   syncthreads, threadfence[_block]   llvm.nvvm.barrier0 / membar.gl / membar.cta
//   syncthreads_count/and/or           llvm.nvvm.barrier0.popc/and/or
//   threadfence_system                 llvm.nvvm.membar.sys
//   syncwarp, nanosleep                llvm.nvvm.bar.warp.sync, inline PTX nanosleep.u32
//   griddep.wait / .launch_dependents  griddepcontrol (sm_90+; nothing before)
//   grid_sync                          a grid barrier on the cooperative launch's
//                                      workspace (lowerGridSync)
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

std::string readSreg(FunctionEmitter& fe, const std::string& reg) {
  fe.mod().declare("declare i32 @llvm.nvvm.read.ptx.sreg." + reg + "() nounwind readnone");
  return fe.emit("call i32 @llvm.nvvm.read.ptx.sreg." + reg + "()");
}

// A grid barrier. A cooperative launch gives the grid a workspace whose
// address the driver passes in %envreg1 (high half) and %envreg2 (low half);
// its second word is the barrier. After a block barrier, thread 0 of each
// block adds 1 to it (block 0 adds 0x80000000 - (blocks - 1)), so that the
// top bit flips once every block has arrived; it waits for the flip with
// acquire loads, and a block barrier releases the rest of the block. The
// release/acquire pair at gpu scope orders every thread's earlier writes
// before every thread's later reads across the grid.
void lowerGridSync(FunctionEmitter& fe) {
  fe.mod().declare("declare void @llvm.nvvm.barrier0()");
  fe.emitLine("call void @llvm.nvvm.barrier0()");
  std::string tid = fe.emit("or i32 " + readSreg(fe, "tid.x") + ", " + readSreg(fe, "tid.y"));
  tid = fe.emit("or i32 " + tid + ", " + readSreg(fe, "tid.z"));
  std::string arrive = fe.freshLabel("gridsync.arrive");
  std::string wait = fe.freshLabel("gridsync.wait");
  std::string done = fe.freshLabel("gridsync.done");
  fe.emitLine("br i1 " + fe.emit("icmp eq i32 " + tid + ", 0") + ", label %" + arrive + ", label %" + done);

  fe.startBlock(arrive);
  auto envreg = [&](int k) {
    std::string r = fe.emit("call i32 asm sideeffect \"mov.u32 $0, %envreg" + std::to_string(k) + ";\", \"=r\"()");
    return fe.emit("zext i32 " + r + " to i64");
  };
  std::string hi = envreg(1), lo = envreg(2);
  std::string base = fe.emit("or i64 " + fe.emit("shl i64 " + hi + ", 32") + ", " + lo);
  std::string barrier = fe.emit("add i64 " + base + ", 4");
  std::string blocks = fe.emit("mul i32 " + readSreg(fe, "nctaid.x") + ", " + readSreg(fe, "nctaid.y"));
  blocks = fe.emit("mul i32 " + blocks + ", " + readSreg(fe, "nctaid.z"));
  std::string bid = fe.emit("or i32 " + readSreg(fe, "ctaid.x") + ", " + readSreg(fe, "ctaid.y"));
  bid = fe.emit("or i32 " + bid + ", " + readSreg(fe, "ctaid.z"));
  std::string first = fe.emit("icmp eq i32 " + bid + ", 0");
  std::string lead = fe.emit("sub i32 -2147483648, " + fe.emit("sub i32 " + blocks + ", 1"));
  std::string add = fe.emit("select i1 " + first + ", i32 " + lead + ", i32 1");
  std::string old = fe.emit("call i32 asm sideeffect \"atom.add.release.gpu.u32 $0, [$1], $2;\", "
                            "\"=r,l,r,~{memory}\"(i64 " + barrier + ", i32 " + add + ")");
  fe.emitLine("br label %" + wait);

  fe.startBlock(wait);
  std::string now = fe.emit("call i32 asm sideeffect \"ld.acquire.gpu.u32 $0, [$1];\", \"=r,l,~{memory}\"(i64 " +
                            barrier + ")");
  std::string flipped = fe.emit("and i32 " + fe.emit("xor i32 " + old + ", " + now) + ", -2147483648");
  fe.emitLine("br i1 " + fe.emit("icmp ne i32 " + flipped + ", 0") + ", label %" + done + ", label %" + wait);

  fe.startBlock(done);
  fe.emitLine("call void @llvm.nvvm.barrier0()");
}

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
    case Intrinsic::GridSync:
      lowerGridSync(fe);
      return;
    case Intrinsic::GridDepWait:
    case Intrinsic::GridDepLaunch:
      if (fe.function().target_sm >= 90)
        fe.emitLine(std::string("call void asm sideeffect \"griddepcontrol.") +
                    (id == Intrinsic::GridDepWait ? "wait" : "launch_dependents") + ";\", \"~{memory}\"()");
      return;
    case Intrinsic::NanoSleep:
      fe.emitLine("call void asm sideeffect \"nanosleep.u32 $0;\", \"r\"(i32 " + fe.val(in.operands[0]) + ")");
      return;
    default:
      fe.fail(in, in.intrinsicName(), "codegen has no lowering for intrinsic '" + in.intrinsicName() + "'");
  }
}

}  // namespace cj::codegen
