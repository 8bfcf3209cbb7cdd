// The cudajit IR: one SSA form for the whole compiler.
//
// The decoder builds it untyped (every type is `?`, Python-level ops such as
// getattr/call/getitem present); type inference fills in types and rewrites
// the Python-level ops into typed ones in place; passes and codegen read the
// typed form. Blocks take parameters instead of phis: a branch passes one
// argument per parameter of its target (Instr::succs[i].args).
//
// Ownership: a Module owns Functions, a Function owns Blocks, a Block owns its
// Instrs (parameters included). Operands are plain pointers into that tree,
// read-only outside Instr: its setters keep every value's use list exact
// (Instr::uses; the verifier checks them; docs/internals.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/intrinsics.h"
#include "types/signature.h"
#include "types/types.h"
#include "types/tensor_map.h"

namespace cj::ir {

enum IrFlag : uint32_t { PURE = 1, SIDE = 2, TERM = 4, PY = 8 };

// Facts a pass proved about one instruction (Instr::facts), for codegen to
// exploit; 0 means nothing is known. The "range" pass (passes/range.h) sets
// them; text form: words after the op name.
enum Fact : uint32_t {
  kFactNsw = 1u << 0,      // add/sub/mul/lshift: no signed overflow ("nsw");
                           // iter_next: nor has the iterator's cur + step
  kFactNuw = 1u << 1,      // the same for unsigned overflow ("nuw")
  kFactNonNeg = 1u << 2,   // floordiv/mod: dividend >= 0 and divisor > 0;
                           // cast int -> int: the operand is >= 0;
                           // iter_valid: the range's step is > 0 ("nonneg")
};
// load/store/atomic_*: index k is >= 0, so it needs no wraparound ("nonneg[0, 1]").
constexpr int kFactIndexShift = 8;
constexpr int kFactMaxIndices = 24;
inline uint32_t indexNonNegFact(int k) {
  return k >= 0 && k < kFactMaxIndices ? 1u << (kFactIndexShift + k) : 0u;
}

enum class Op : uint16_t {
#define X(E, text, arity, flags) E,
#include "ir/ops.def"
#undef X
};
constexpr int kNumOps = 0
#define X(E, text, arity, flags) +1
#include "ir/ops.def"
#undef X
    ;

std::string_view opName(Op op);   // the text column
int opArity(Op op);               // -1: variadic
uint32_t opFlags(Op op);
bool parseOp(std::string_view text, Op* out);
inline bool isTerminator(Op op) { return opFlags(op) & TERM; }

// Where an instruction came from in the Python source. line 0: unknown.
struct Loc {
  int line = 0;
  int col = 0;        // 1-based; 0 when CPython did not record it
};

// A compile-time constant value.
struct Const {
  enum class Kind : uint8_t { None, Bool, Int, Float, Complex, Str, Symbol, Tuple, Array };
  Kind kind = Kind::None;
  int64_t i = 0;               // Bool (0/1), Int (two's complement; unsigned values bit-cast); Array: its Scalar
  double f = 0, f_imag = 0;    // Float, Complex
  std::string s;               // Str contents, Symbol qualified name; Array: the elements' bytes, C order
  std::vector<Const> elems;    // Tuple; Array: the shape (Int constants)
  const Type* record = nullptr;   // Array of records (a structured dtype): its record; `i` unused
  // Array captured by pointer (a global device array: numba-cuda captures
  // those by their address, not their contents): the data address, the
  // strides in bytes, whether kernels may write it. `s` is empty then.
  uint64_t address = 0;
  std::vector<int64_t> strides;
  bool writable = false;

  static Const none() { return {}; }
  static Const boolean(bool b) { Const c; c.kind = Kind::Bool; c.i = b; return c; }
  static Const integer(int64_t v) { Const c; c.kind = Kind::Int; c.i = v; return c; }
  static Const real(double v) { Const c; c.kind = Kind::Float; c.f = v; return c; }
  static Const complex(double re, double im) { Const c; c.kind = Kind::Complex; c.f = re; c.f_imag = im; return c; }
  static Const str(std::string v) { Const c; c.kind = Kind::Str; c.s = std::move(v); return c; }
  static Const symbol(std::string v) { Const c; c.kind = Kind::Symbol; c.s = std::move(v); return c; }
  static Const tuple(std::vector<Const> v) { Const c; c.kind = Kind::Tuple; c.elems = std::move(v); return c; }
  // A frozen global numpy array (numba makes them constant arrays): dtype,
  // shape and the C-order bytes of its elements (bool: one byte, 0/1).
  static Const array(Scalar dtype, const std::vector<int64_t>& shape, std::string bytes) {
    Const c;
    c.kind = Kind::Array;
    c.i = static_cast<int64_t>(dtype);
    for (int64_t d : shape) c.elems.push_back(integer(d));
    c.s = std::move(bytes);
    return c;
  }
  // A frozen global numpy array of a structured dtype (numba: constant
  // memory too): the items' record, the shape, the C-order bytes.
  static Const recordArray(const Type* rec, const std::vector<int64_t>& shape, std::string bytes) {
    Const c = array(Scalar::UInt8, shape, std::move(bytes));
    c.record = rec;
    return c;
  }
  // A global device array (CuPy, PyTorch, cudajit's DeviceNDArray): its
  // dtype (or record), shape, strides (bytes) and data address.
  static Const deviceArray(Scalar dtype, const Type* rec, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& strides, uint64_t address, bool writable) {
    Const c = array(dtype, shape, {});
    c.record = rec;
    c.strides = strides;
    c.address = address;
    c.writable = writable;
    return c;
  }
  bool isDeviceArray() const { return kind == Kind::Array && address != 0; }
  Scalar arrayDtype() const { return static_cast<Scalar>(i); }
  bool operator==(const Const& o) const;
  bool operator!=(const Const& o) const { return !(*this == o); }
};
// Text form: none, true, false, 42, 1.5 (round-trip exact: %.17g, inf, nan),
// (1.0+2.0j), "str" (C-escaped), sym(math.sqrt), (1, 2.0, sym(x)),
// array(f64, (2, 3), "<hex of the bytes>"), array(record{...}, (4,), "<hex>"),
// device_array(f32, (4, 5), (20, 4), 0x7f0000200000, rw) (strides in bytes; rw or ro).
std::string constToString(const Const& c);
// The value a tile load pads with (tile.load's padding, ct.PaddingMode) for
// elements of `dtype`: floats by the mode, integers 0, bools false.
Const tilePaddingConst(TilePadding mode, Scalar dtype);
// The type a constant has before any context: Int -> i64, Float -> f64,
// Complex -> c128, Bool -> b1, Tuple -> tuple of element types, Symbol -> sym,
// Array -> array(dtype, nd, C, const, readonly); a device array ->
// array(dtype, nd, C or A by its strides, global, readonly unless writable).
const Type* constType(const Const& c);

struct Block;
struct Function;
struct Instr;

// One use of a value: operand `index` of `user` (succ == kOperandUse), or
// argument `index` of the edge user->succs[succ]. Every value keeps the list
// of its uses (Instr::uses()), so "who uses v" and replaceAllUses cost time
// proportional to the uses, not to the function.
struct Use {
  static constexpr int32_t kOperandUse = -1;
  Instr* user;
  int32_t succ;
  uint32_t index;
  bool operator==(const Use& o) const { return user == o.user && succ == o.succ && index == o.index; }
};

// A read-only list of values: an instruction's operands or an edge's
// arguments. Reading is a plain vector read; writing goes through Instr's
// setters (setOperand, setEdgeArg, ...), which keep the use lists right.
class ValueList {
 public:
  using const_iterator = std::vector<Instr*>::const_iterator;
  ValueList() = default;
  ValueList(ValueList&&) = default;
  ValueList& operator=(ValueList&&) = default;

  Instr* operator[](size_t i) const { return v_[i]; }
  Instr* at(size_t i) const { return v_.at(i); }
  Instr* front() const { return v_.front(); }
  Instr* back() const { return v_.back(); }
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const_iterator begin() const { return v_.begin(); }
  const_iterator end() const { return v_.end(); }
  const std::vector<Instr*>& vec() const { return v_; }
  operator const std::vector<Instr*>&() const { return v_; }

 private:
  friend struct Instr;
  ValueList(const ValueList&) = default;   // copying would duplicate uses untracked
  ValueList& operator=(const ValueList&) = default;
  std::vector<Instr*> v_;
};

struct Edge {
  Block* target = nullptr;
  ValueList args;              // one per parameter of target (Instr::setEdgeArg, ...)
};

// The successors of a terminator, read-only (Instr::addSucc, setSuccTarget, ...).
class EdgeList {
 public:
  using const_iterator = std::vector<Edge>::const_iterator;
  const Edge& operator[](size_t i) const { return v_[i]; }
  const Edge& at(size_t i) const { return v_.at(i); }
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const_iterator begin() const { return v_.begin(); }
  const_iterator end() const { return v_.end(); }

 private:
  friend struct Instr;
  std::vector<Edge> v_;
};

struct Instr {
  Op op;
  const Type* type = nullptr;   // result type; voidTy() for no result; unknownTy() untyped
  ValueList operands;           // read-only: setOperand / addOperand / removeOperand / setOperands
  EdgeList succs;               // terminators only; read-only: addSucc / setSuccTarget / setEdgeArg ...
  Loc loc;
  int id = -1;                  // unique in its Function; printed as v<id>
  Block* parent = nullptr;

  // Attributes (which op reads which: see ops.def). cloneFunction copies
  // them one by one (copyAttributesFrom): add a new one there too.
  int64_t index = 0;            // Param, TupleGet, ArrayDim, ArrayStride
  Const cval;                   // Const
  Intrinsic intrinsic = Intrinsic::Count;   // Intrinsic: which one (its name: intrinsicInfo(id).name)
  std::string name;             // GetAttr attr, CallFunc callee, Raise message
  std::vector<std::string> names;   // Call keyword names
  std::vector<int64_t> ints;    // Intrinsic integer attributes (shapes of shared/local arrays, ...)
  std::string var;              // the Python variable this value was stored to, if any (for messages and the text form)
  uint32_t facts = 0;           // proven facts (enum Fact); only the passes that prove them set them

  Instr() = default;
  Instr(const Instr&) = delete;
  Instr& operator=(const Instr&) = delete;

  bool hasResult() const { return type != voidTy(); }
  bool is(Op o) const { return op == o; }
  bool isIntrinsic(Intrinsic id) const { return op == Op::Intrinsic && intrinsic == id; }
  // The intrinsic's text-form name (for messages); the kept spelling of an
  // unknown one (parsed text the verifier will reject).
  std::string intrinsicName() const {
    return intrinsic == Intrinsic::Count ? name : std::string(ir::intrinsicName(intrinsic));
  }

  // ---- operands and edge arguments: the only way to change them ----------------
  // Each setter updates the use lists of the values it unlinks and links.
  // Values may be nullptr (the parser's placeholders); null is not tracked.
  void setOperand(size_t i, Instr* v);
  void addOperand(Instr* v);
  void removeOperand(size_t i);              // later operands move down one slot
  void setOperands(std::vector<Instr*> vs);
  void addSucc(Block* target, std::vector<Instr*> args = {});
  void setSuccTarget(size_t s, Block* target) { succs.v_[s].target = target; }
  void setEdgeArg(size_t s, size_t i, Instr* v);
  void addEdgeArg(size_t s, Instr* v);
  void removeEdgeArg(size_t s, size_t i);    // later arguments move down one slot
  void setEdgeArgs(size_t s, std::vector<Instr*> vs);
  void removeSucc(size_t s);                 // later successors move down one slot
  // Unlinks every operand and successor (their uses go). Call it before an
  // instruction is destroyed; a destroyed value must have no uses left.
  void dropAllReferences();
  // Copies the attributes (not operands, successors, parent or uses).
  void copyAttributesFrom(const Instr& o);

  // ---- uses ---------------------------------------------------------------------
  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }

 private:
  friend struct UseListTesting;
  void link(Instr* v, int32_t succ, uint32_t index);
  void unlink(Instr* v, int32_t succ, uint32_t index);
  void renumberSlots(const ValueList& list, int32_t succ, size_t from, size_t old_shift);
  std::vector<Use> uses_;       // unordered; kept exact by the setters above
};

// Test hooks (python/src binding): break a use list so tests can show that
// the verifier notices.
struct UseListTesting {
  static void dropOneUse(Instr* v) { if (!v->uses_.empty()) v->uses_.pop_back(); }
};

struct Block {
  int id = -1;                  // printed as bb<id>
  Function* parent = nullptr;
  std::vector<std::unique_ptr<Instr>> params;   // op Param
  std::vector<std::unique_ptr<Instr>> instrs;   // the last one is a terminator
  std::vector<Block*> preds;    // filled by Function::computePreds()

  Instr* terminator() const { return instrs.empty() ? nullptr : instrs.back().get(); }
  // Appends a parameter (op Param, index = position) of the given type.
  Instr* addParam(const Type* type, std::string var = {});
};

struct Function {
  std::string name;             // IR name, unique in the module ("axpy", "helper__f32_i64")
  std::string py_name;          // Python __qualname__
  std::string filename;         // source file of the Python function
  int first_line = 0;
  std::vector<std::string> arg_names;
  std::vector<std::unique_ptr<Block>> blocks;   // blocks[0] is the entry; its params are the arguments
  const Type* return_type = nullptr;            // unknownTy() until inferred
  bool is_kernel = false;
  int num_warps = 0;            // tile kernels: the block's warps (text: "num_warps=4"); 0: not a tile kernel
  int target_sm = 0;            // tile kernels: the GPU generation the passes may use (text: "sm=90"); 0: unknown
  // Tile kernels: the blocks per SM ptxas fits the registers to (cuTile's
  // occupancy hint, or tile-assign-layouts' choice; text: "occupancy=4"); 0: ptxas's.
  int occupancy = 0;
  // A kernel's launch bounds (jit(launch_bounds=...)): the most threads a
  // launch may have (text: "maxntid=256") and blocks a cluster may hold
  // ("maxclusterrank=2"); 0: none.
  int max_threads = 0;
  int max_cluster_rank = 0;
  // Device functions declared with signatures (@jit("float32(float32)",
  // device=True)): calls pick one and convert to it, as numba's do (text:
  // "sigs=[float32(float32); float64(float64)]"). Empty: typed per call.
  std::vector<ParsedSignature> declared;
  // SIMT kernels with tile operations: the launch block shape they are
  // compiled for (text: "simt_block=64x2x1"); tiles number the block's threads
  // linearly over it. {0,0,0}: a tile kernel or no tiles.
  int simt_block[3] = {0, 0, 0};
  // Tile kernels: the TMA tensor maps the launch passes after the arguments
  // (text: "tmaps=0:f16:128x64;1:f16:64x64").
  std::vector<TensorMapSpec> tensor_maps;
  int next_id = 0;

  Block* entry() const { return blocks.front().get(); }
  Block* addBlock();
  // Creates an instruction, not yet inserted anywhere.
  std::unique_ptr<Instr> make(Op op, const Type* type, std::vector<Instr*> operands, Loc loc);
  void computePreds();
  // Renumbers blocks 0..n-1 in order and values in order of appearance.
  void renumber();
};

struct Module {
  std::vector<std::unique_ptr<Function>> functions;   // functions[0] is the kernel (or the entry)
  Function* find(std::string_view name) const;
  Function* addFunction(std::string name);
};

// Appends instructions at the end of a block.
class Builder {
 public:
  Builder(Function* fn, Block* block) : fn_(fn), block_(block) {}
  void setBlock(Block* b) { block_ = b; }
  Block* block() const { return block_; }
  void setLoc(Loc loc) { loc_ = loc; }
  Loc loc() const { return loc_; }

  Instr* emit(Op op, const Type* type, std::vector<Instr*> operands);
  Instr* constant(Const c, const Type* type = nullptr);   // type defaults to unknownTy() in untyped IR
  Instr* br(Block* target, std::vector<Instr*> args);
  Instr* condBr(Instr* cond, Block* t, std::vector<Instr*> targs, Block* f, std::vector<Instr*> fargs);
  Instr* ret(Instr* value);   // value may be nullptr

 private:
  Function* fn_;
  Block* block_;
  Loc loc_;
};

// The array-index operands of an element access (load, store and the
// atomic_* intrinsics): operands 1 .. n; 0 for every other instruction.
int elementIndexCount(const Instr& in);

// Inserts `in` into `block` before position `pos` (index into instrs).
Instr* insertBefore(Block* block, size_t pos, std::unique_ptr<Instr> in);
// Replaces every use of `from` (operands and edge args) with `to`; time
// proportional to from's uses (its use list), not to the function.
void replaceAllUses(Instr* from, Instr* to);
// The same; `fn` is not needed any more (kept so that callers written before
// use lists still compile).
void replaceAllUses(Function* fn, Instr* from, Instr* to);
// Makes parameter `index` of the entry block read `value`: a `const` (type
// unknown, for type inference) at the top of the entry takes its uses; the
// parameter stays, so calls pass it as before. A tile kernel's Constant
// parameters and a tile helper's compile-time arguments.
Instr* bindParamToConstant(Function& fn, size_t index, const Const& value);
// Removes the instructions of `block` for which `dead` returns true: drops
// their references first, so their operands' use lists stay exact. The
// removed values themselves must have no uses left outside the removed set.
template <class Pred>
void eraseInstrsIf(Block* block, Pred dead);
// Drops every reference held by the instructions of `blocks` (operands and
// edge args), then nothing in them is a user any more: call it before
// erasing blocks whose values may use one another.
void dropBlockReferences(Block* block);

// Deep copy of a function (for specialising a device function per signature).
std::unique_ptr<Function> cloneFunction(const Function& fn, std::string new_name);

// ---- text form -------------------------------------------------------------
// func axpy(v0:f64 a, v1:array(f32, 1d, C) x) -> none  # file.py:3
// bb0:
//   v3:i64 = intrinsic cudajit.grid.1  @4:9
//   v5:b1 = lt v3, v4  @5
//   cbr v5, bb1, bb2(v3)  @5
// bb1 (preds bb0):
//   ...
std::string printFunction(const Function& fn);
std::string printModule(const Module& m);

// Parses the text form back (round trip). Errors: "line N: message".
bool parseModule(std::string_view text, Module* out, std::string* error);

// ---- verifier ----------------------------------------------------------------
// Checks structure (terminators, edge arity, operands defined in a dominating
// position, preds) and, when `typed`, types (no PY ops, no ? types, operand
// types as each op requires). Returns false and fills `error` with
// "func:bbN:vM: message" on the first problem.
bool verifyFunction(const Function& fn, bool typed, std::string* error);
bool verifyModule(const Module& m, bool typed, std::string* error);

template <class Pred>
void eraseInstrsIf(Block* block, Pred dead) {
  auto& v = block->instrs;
  // Decide first, then unlink: dropping one instruction's references changes
  // its operands' uses, which `dead` may be reading.
  std::vector<char> doomed(v.size());
  bool any = false;
  for (size_t i = 0; i < v.size(); ++i) any |= (doomed[i] = dead(v[i]) ? 1 : 0) != 0;
  if (!any) return;
  for (size_t i = 0; i < v.size(); ++i)
    if (doomed[i]) v[i]->dropAllReferences();
  size_t k = 0;
  for (size_t i = 0; i < v.size(); ++i)
    if (!doomed[i]) v[k++] = std::move(v[i]);
  v.resize(k);
}

}  // namespace cj::ir
