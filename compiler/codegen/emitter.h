// Internal to codegen: the module and function emitters that write NVVM IR
// text, and the lowering functions (one file per family of ops) they call.
//
//   module_emitter.cpp    module skeleton: header, globals, declarations,
//                         helper functions, functions, metadata
//   function_emitter.cpp  function skeleton: kernel ABI, blocks in reverse
//                         post-order, block params -> phis, terminators,
//                         constants, the op -> lowering table
//   lower_scalar.cpp      arithmetic, comparisons, casts, truth, select
//   lower_array.cpp       array views, load/store, dim/stride/size
//   lower_aggregate.cpp   tuples, range and its iterator, call_func
//   lower_intrinsic.cpp   intrinsics.def: sregs, barriers, shared/local
//                         arrays, atomics, libdevice math
//   lower_cub.cpp         intrinsic cub: calls of CUB block/warp algorithms
//   helpers.cpp           NVVM IR helper functions (Python floor division,
//                         integer power) defined once per module
//   debug_info.cpp        DIFile/DISubprogram/DILocation for lineinfo
#pragma once
#include <map>
#include <memory>
#include <set>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/abi.h"
#include "codegen/llvm_types.h"
#include "codegen/nvvm_emitter.h"
#include "ir/ir.h"

namespace cj::codegen {

// Numbered metadata nodes (!0, !1, ...), deduplicated by their text.
class Metadata {
 public:
  // Returns the node's number; `distinct` nodes are never shared.
  int add(const std::string& body, bool distinct = false);
  std::string text() const;   // "!0 = ...\n!1 = ...\n"

 private:
  std::vector<std::string> nodes_;
  std::map<std::string, int> index_;
};

class DebugInfo;

// Helper functions written in NVVM IR, defined on first use (helpers.cpp).
enum class Helper {
  DivMod,        // {q, r} = Python divmod of two integers (numba: x // 0 == 0)
  // The same and {q, r} of unsigned integers with a non-zero divisor, both
  // without a 64-bit hardware division (see ModuleEmitter::divisionInline).
  DivModInline, UDivRemInline,
  FloatDivMod,   // {q, r} = Python divmod of two floats (numpy model for / 0)
  IntPow,        // a ** b for integers by repeated squaring (numba semantics)
  FloatIntPow,   // float ** integer exponent (i64) by repeated squaring, as numba
  // lower_cmath.cpp (numba-cuda's algorithms; Scalar = the complex part type)
  ComplexExp, ComplexLog, ComplexSqrt, ComplexSinh, ComplexCosh, ComplexTanh,
  ComplexRect,   // (r, phi) -> complex
  ComplexPow,    // complex ** complex
  RoundNdigits,  // round(x: f64, ndigits: i64) -> f64
};

class ModuleEmitter {
 public:
  ModuleEmitter(const ir::Module& m, const CodegenOptions& options,
                const libcalls::ResolvedCalls& calls);
  ~ModuleEmitter();
  std::string run();

  const ir::Module& irModule() const { return module_; }
  const CodegenOptions& options() const { return options_; }
  // The library calls' symbols, signatures and temp storage (lower_cub.cpp).
  const libcalls::ResolvedCalls& libraryCalls() const { return calls_; }
  // Adds a declaration line ("declare float @__nv_sqrtf(float)") once.
  void declare(const std::string& declaration);
  // Adds a global "@<unique name> = <definition>"; returns "@<unique name>".
  std::string addGlobal(const std::string& hint, const std::string& definition);
  // Like addGlobal, but a second call with the same name returns the first.
  std::string addGlobalOnce(const std::string& name, const std::string& definition);
  // Adds a function definition (its whole text) once per name: C-ABI
  // symbols that other link inputs call (CUB user ops, lower_cub.cpp).
  void define(const std::string& name, const std::string& text);
  // The kernel runs only with this block shape (block algorithms specialise
  // it): the kernels get reqntid annotations, so ptxas fits the registers.
  void requireBlock(const int dims[3]);
  // Defines the helper for scalar type `s` once; returns its "@name".
  std::string helper(Helper h, Scalar s);
  // Whether 64-bit integer division is written out in the module's own code:
  // ptxas implements it as a subroutine, which relocatable compilation (how
  // nvJitLink and the driver's linker assemble PTX) leaves an extern call,
  // and an extern call in a function serializes all its wgmma instructions.
  bool divisionInline() const { return division_inline_; }
  // "@name" of an IR function of this module (the kernel: kernelSymbol).
  std::string functionName(const ir::Function& fn) const;
  Metadata& metadata() { return metadata_; }
  DebugInfo* debug() { return debug_.get(); }   // null without lineinfo

 private:
  const ir::Module& module_;
  CodegenOptions options_;
  const libcalls::ResolvedCalls& calls_;
  Metadata metadata_;
  std::unique_ptr<DebugInfo> debug_;
  std::vector<std::string> declarations_;
  std::set<std::string> declared_;
  std::vector<std::string> globals_;
  std::set<std::string> global_names_;
  std::map<std::string, std::string> once_globals_;
  std::map<std::pair<int, int>, std::string> helpers_;   // (Helper, Scalar) -> @name
  std::vector<std::string> helper_defs_;
  int required_block_[3] = {0, 0, 0};
  bool division_inline_ = false;
};

class FunctionEmitter {
 public:
  FunctionEmitter(ModuleEmitter& mod, const ir::Function& fn, bool is_kernel);
  // The whole "define ... { ... }" text.
  std::string run();
  // After run(): the LLVM parameter types, comma-separated.
  std::string paramTypeList() const;
  // After run(): the 1-based positions of the grid_constant parameters (the
  // tensor maps, whose address the kernel takes).
  const std::vector<int>& gridConstantParams() const { return grid_constant_; }
  // A tile kernel's tensor map `k` (Function::tensor_maps): its parameter's
  // name, and the i32 parameter saying whether the launch encoded them all.
  const std::string& tensorMapParam(size_t k) const { return tensor_map_params_.at(k); }
  const std::string& tensorMapsValidParam() const { return tensor_maps_valid_; }

  ModuleEmitter& mod() { return mod_; }
  const ir::Function& function() const { return fn_; }
  const CodegenOptions& options() const { return mod_.options(); }
  bool isKernel() const { return is_kernel_; }
  // The instruction being lowered (for error locations); null in the entry.
  const ir::Instr* current() const { return current_; }

  // ---- values ----------------------------------------------------------
  // The spelling of an operand: a constant literal or an SSA name.
  std::string val(const ir::Instr* v);
  // "<llvm type> <value>".
  std::string tval(const ir::Instr* v);
  // The result of `in` is `value` (an existing name or a constant).
  void bind(const ir::Instr& in, const std::string& value);
  // Emits "%<fresh> = <rhs>" and returns the fresh name.
  std::string emit(const std::string& rhs);
  // Emits "%<name of in> = <rhs>" and binds it.
  void emitResult(const ir::Instr& in, const std::string& rhs);
  // Emits an instruction without a result.
  void emitLine(const std::string& text);
  // A constant of type `t` as a literal.
  std::string constant(const ir::Const& c, const Type* t, const ir::Instr* at);

  // ---- control flow inside one IR block ----------------------------------
  std::string freshLabel(const std::string& hint);
  void startBlock(const std::string& label);
  // Run-time checks: continues in a new block if `ok` (i1) holds; else runs
  // `report` (a message printed before the trap), when given, and traps.
  void trapUnless(const std::string& ok, const std::function<void()>& report = nullptr);

  // Builds a struct value of type `type` from (field type, value) pairs.
  std::string makeStruct(const std::string& type,
                         const std::vector<std::pair<std::string, std::string>>& fields);

  // An alloca placed in the entry block (so mem2reg/SROA can clean it up).
  std::string entryAlloca(const std::string& type, int align);
  // The function's one entry alloca named `name`: every local array that
  // names the slot shares it (a tile pipeline's state, which every call on
  // it in the kernel reads, wherever the tile was made).
  std::string namedEntryAlloca(const std::string& name, const std::string& type, int align);

  // Throws CompileError at `in`'s location.
  [[noreturn]] void fail(const ir::Instr& in, const std::string& construct,
                         const std::string& message) const;

 private:
  struct Incoming {
    std::string from;                       // LLVM label of the predecessor
    std::vector<std::string> args;          // one value per parameter of the target
  };

  void computeOrder();
  void emitEntry();
  std::string kernelArgument(const Type* t, const std::vector<abi::Slot>& slots, size_t* next);
  void emitBlock(const ir::Block& b);
  void emitInstr(const ir::Instr& in);
  void emitTerminator(const ir::Instr& in);
  void addEdge(const ir::Edge& e, const std::string& from);
  std::string blockLabel(const ir::Block* b) const;
  std::string nameOf(const ir::Instr& in);
  std::string dbg() const;
  std::string assemble();

  ModuleEmitter& mod_;
  const ir::Function& fn_;
  bool is_kernel_;
  std::string llvm_name_;
  int subprogram_ = -1;                     // debug info scope
  const ir::Instr* current_ = nullptr;      // the instruction being lowered

  std::vector<const ir::Block*> order_;     // reachable blocks, reverse post-order
  std::map<const ir::Block*, int> npreds_;  // reachable predecessor edges
  std::map<const ir::Block*, std::vector<Incoming>> incoming_;
  std::map<const ir::Block*, std::string> bodies_;
  std::unordered_map<const ir::Instr*, std::string> values_;
  std::vector<std::pair<std::string, std::string>> params_;   // (type, [attributes] %name) of the LLVM function
  std::vector<std::string> tensor_map_params_;
  std::string tensor_maps_valid_;
  std::vector<int> grid_constant_;
  std::string entry_allocas_, entry_body_;
  std::map<std::string, std::string> named_allocas_;   // namedEntryAlloca
  std::string* out_ = nullptr;              // where emitLine writes
  std::string label_;                       // the LLVM block being written
  std::string block_label_;                 // the IR block being written
  bool labels_by_id_ = true;
  int temps_ = 0;
  int labels_ = 0;
};

// ---- lowerings ------------------------------------------------------------
using Lowering = void (*)(FunctionEmitter&, const ir::Instr&);

void lowerBinary(FunctionEmitter& fe, const ir::Instr& in);    // add..xor, pow, floordiv, mod
void lowerCompare(FunctionEmitter& fe, const ir::Instr& in);   // lt..ge, is, isnot
void lowerUnary(FunctionEmitter& fe, const ir::Instr& in);     // neg, pos, invert, not
void lowerCast(FunctionEmitter& fe, const ir::Instr& in);      // cast, truth
void lowerSelect(FunctionEmitter& fe, const ir::Instr& in);
void lowerArrayOp(FunctionEmitter& fe, const ir::Instr& in);   // array_dim/stride/size, load, store
void lowerTupleOp(FunctionEmitter& fe, const ir::Instr& in);   // tuple, tuple_get
void lowerRangeOp(FunctionEmitter& fe, const ir::Instr& in);   // range, getiter, iter_valid, iter_next
void lowerCallFunc(FunctionEmitter& fe, const ir::Instr& in);
void lowerIntrinsic(FunctionEmitter& fe, const ir::Instr& in);
void lowerCubCall(FunctionEmitter& fe, const ir::Instr& in);     // intrinsic cub (lower_cub.cpp)
void lowerMathdxCall(FunctionEmitter& fe, const ir::Instr& in);  // intrinsic mathdx (lower_mathdx.cpp)
void lowerCacheHint(FunctionEmitter& fe, const ir::Instr& in);   // ld.cg / st.cs ... (lower_cache_hint.cpp)
void lowerForeignCall(FunctionEmitter& fe, const ir::Instr& in);  // intrinsic foreign (lower_foreign.cpp)
void lowerLibdeviceCall(FunctionEmitter& fe, const ir::Instr& in);  // intrinsic libdevice (lower_libdevice.cpp)
// complex.* intrinsics (lower_complex.cpp); false if `in` is not one.
bool lowerComplexIntrinsic(FunctionEmitter& fe, const ir::Instr& in);
// cmath.* and round intrinsics (lower_cmath.cpp); false if `in` is not one.
bool lowerCmathIntrinsic(FunctionEmitter& fe, const ir::Instr& in);
// complex ** complex (lower_cmath.cpp).
void lowerComplexPow(FunctionEmitter& fe, const ir::Instr& in);
// print -> vprintf (lower_print.cpp).
void lowerPrint(FunctionEmitter& fe, const ir::Instr& in);
// array_view (lower_view.cpp).
void lowerArrayView(FunctionEmitter& fe, const ir::Instr& in);
// record_get, record_set, record_copy (lower_record.cpp).
void lowerRecordOp(FunctionEmitter& fe, const ir::Instr& in);
// vprintf(format, {(type, value)...}) (lower_print.cpp).
void callVprintf(FunctionEmitter& fe, const std::string& format,
                 const std::vector<std::pair<std::string, std::string>>& fields);
// Debug bounds check: unless `ok`, prints the kernel, source line, index and
// size (as an IndexError line) and traps.
void boundsCheck(FunctionEmitter& fe, const std::string& ok, const std::string& index, int axis,
                 const std::string& size);

// ---- shared pieces of the lowerings ------------------------------------------
// Converts a scalar value between scalar types with numba semantics.
std::string convertScalar(FunctionEmitter& fe, const std::string& v, Scalar from, Scalar to);
// Pointer to the element arr[idx...] (indices i64; wraps negatives unless
// `facts` (the instruction's Instr::facts) proves them non-negative, bounds
// checks under debug).
std::string elementPointer(FunctionEmitter& fe, const ir::Instr* arr,
                           const std::vector<const ir::Instr*>& idx, uint32_t facts);
// Loads/stores an element through a pointer (bool stored as i8).
std::string loadElement(FunctionEmitter& fe, Scalar dtype, const std::string& ptr);
void storeElement(FunctionEmitter& fe, Scalar dtype, const std::string& ptr, const std::string& v);
// A view value for an array type from its parts.
std::string makeView(FunctionEmitter& fe, const Type* array, const std::string& data,
                     const std::vector<std::string>& shape, const std::vector<std::string>& strides);
// A frozen global numpy array (lower_const_array.cpp): its data as an
// addrspace(4) module global (constant memory, one per distinct array) and
// the view of it as a constant struct literal.
std::string constArrayView(FunctionEmitter& fe, const ir::Const& c, const Type* t, const ir::Instr& at);
// Strides (bytes) of a contiguous array with constant shape.
std::vector<int64_t> contiguousStrides(const Type* array, const std::vector<int64_t>& shape);
// Calls a libdevice function on float arguments of type `s`; declares it.
std::string callLibdevice(FunctionEmitter& fe, const std::string& name, Scalar s,
                          const std::vector<std::string>& args);
// Fast-math flags for float instructions ("fast " or "").
std::string fmf(FunctionEmitter& fe);

// `part` (0: quotient, 1: remainder) of unsigned a / b (b != 0) of LLVM
// type `t`: udiv/urem, or the inline helper where the module asks for it.
std::string unsignedDivide(FunctionEmitter& fe, const std::string& t, const std::string& a, const std::string& b,
                           int part);

// Helper function text (helpers.cpp): the definition of `h` for `s` named `name`,
// and the declarations it needs.
std::string helperDefinition(Helper h, Scalar s, const std::string& name,
                             std::vector<std::string>* declarations);
std::string helperBaseName(Helper h);
// The helpers of lower_cmath.cpp.
bool isCmathHelper(Helper h);
std::string cmathHelperDefinition(Helper h, Scalar s, const std::string& name,
                                  std::vector<std::string>* declarations);
std::string cmathHelperBaseName(Helper h);

}  // namespace cj::codegen
