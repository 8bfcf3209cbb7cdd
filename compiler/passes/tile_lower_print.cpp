// tile.print -> one thread's `print` intrinsics (codegen: vprintf). Each
// tile operand is written to shared memory in C order by the threads that
// hold it; after a barrier thread 0 reads every element back and prints the
// template with each tile slot expanded to cuTile's text, "[a, b]" nested
// per dimension ("[[a, b], [c, d]]"), the slot's conversion per element.
// vprintf takes at most 32 values a call: the expanded template is cut into
// calls at value boundaries (another block's output may fall between them).
//
// tile.assert -> every thread ANDs its elements, bar.red.and (syncthreads_and)
// joins the block, and assert_trap reports from thread 0 and traps everywhere.
#include "passes/tile_lowering.h"

namespace cj::passes::tile {
namespace {

constexpr size_t kValuesPerCall = 32;

struct Slot {
  std::vector<int64_t> spec;   // n, then n characters (the print template's slot tail)
};

// One print call's template and operands.
struct Call {
  std::vector<int64_t> tmpl;
  std::vector<ir::Instr*> values;
};

void appendText(std::vector<int64_t>& out, const char* text) {
  for (const char* c = text; *c; ++c) out.push_back(static_cast<unsigned char>(*c));
}

}  // namespace

void lowerTilePrint(Lowering& lw, ir::Instr* in) {
  // Tiles of more than one element go through shared memory.
  std::vector<ir::Instr*> buffers(in->operands.size(), nullptr);
  for (size_t k = 0; k < in->operands.size(); ++k) {
    const ir::Instr* v = in->operands[k];
    if (!v->type->isTile() || tileElements(v->type) == 1) continue;
    const LayoutInfo& l = lw.info(v->type);
    buffers[k] = lw.scratchArray(v->type->scalar, tileElements(v->type), static_cast<int>(k));
    const std::vector<ir::Instr*>& regs = lw.frag(v);
    for (int64_t r = 0; r < l.regs; ++r) lw.storeShared(buffers[k], lw.linear(l, r, cStrides(l.shape)), regs[r]);
  }
  bool shared = std::any_of(buffers.begin(), buffers.end(), [](ir::Instr* b) { return b != nullptr; });
  if (shared) lw.barrier();
  lw.emitIf(lw.isThreadZero(), [&] {
    std::vector<Call> calls(1);
    auto value = [&](ir::Instr* v, const std::vector<int64_t>& spec) {
      if (calls.back().values.size() == kValuesPerCall) calls.emplace_back();
      Call& c = calls.back();
      c.tmpl.push_back(ir::kTilePrintSlot);
      c.tmpl.insert(c.tmpl.end(), spec.begin(), spec.end());
      c.values.push_back(v);
    };
    const std::vector<int64_t>& t = in->ints;
    size_t next = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] != ir::kTilePrintSlot) {
        calls.back().tmpl.push_back(t[i]);
        continue;
      }
      std::vector<int64_t> spec(t.begin() + i + 1, t.begin() + i + 2 + t[i + 1]);
      i += 1 + t[i + 1];
      size_t k = next++;
      ir::Instr* v = in->operands[k];
      if (!v->type->isTile()) {
        value(v, spec);
        continue;
      }
      if (!buffers[k]) {   // one element: every thread holds it
        value(lw.frag(v)[0], spec);
        continue;
      }
      const std::vector<int64_t>& shape = v->type->shape;
      std::vector<int64_t> strides = cStrides(shape);
      int64_t n = tileElements(v->type);
      for (int64_t e = 0; e < n; ++e) {
        // Brackets open where this element starts a row of some dimension,
        // close where it ends one; ", " between elements.
        for (size_t d = 0; d < shape.size(); ++d)
          if (e % (strides[d] * shape[d]) == 0) appendText(calls.back().tmpl, "[");
        value(lw.loadShared(buffers[k], lw.i32(e)), spec);
        for (size_t d = shape.size(); d-- > 0;)
          if ((e + 1) % (strides[d] * shape[d]) == 0) appendText(calls.back().tmpl, "]");
        if (e + 1 < n) appendText(calls.back().tmpl, ", ");
      }
    }
    for (Call& c : calls)
      if (!c.tmpl.empty()) lw.intrinsic(ir::Intrinsic::Print, voidTy(), c.values, c.tmpl);
  });
  if (shared) lw.barrier();   // the buffers may be written again
}

void lowerTileAssert(Lowering& lw, ir::Instr* in) {
  ir::Instr* ok = nullptr;
  for (ir::Instr* r : lw.frag(in->operands[0])) ok = ok ? lw.andBool(ok, r) : r;
  ir::Instr* mine = lw.emit(ir::Op::Select, i32Ty(), {ok ? ok : lw.boolean(true), lw.i32(1), lw.i32(0)});
  ir::Instr* all = lw.intrinsic(ir::Intrinsic::SyncThreadsAnd, i32Ty(), {mine});
  ir::Instr* holds = lw.emit(ir::Op::Ne, boolTy(), {all, lw.i32(0)});
  lw.intrinsic(ir::Intrinsic::AssertTrap, voidTy(), {holds, lw.isThreadZero()}, in->ints);
}

}  // namespace cj::passes::tile
