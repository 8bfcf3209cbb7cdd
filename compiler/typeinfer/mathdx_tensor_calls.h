// The values and calls the tensor API's rules share (stage-internal to
// typeinfer: rules_mathdx_tensors.cpp and rules_mathdx_accumulators.cpp).
// mathdx_tensors.h says what layouts and tensors are in kernels.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mathdx/mathdx.h"
#include "typeinfer/context.h"
#include "typeinfer/mathdx_tensors.h"

namespace cj::typeinfer::mathdx_tensors {

// Tensor type names (cublasdxTensorType's, lower case): what memory they are in.
bool isGlobal(const std::string& tensor);
bool isAccumulator(const std::string& tensor);
bool isRegister(const std::string& tensor);   // a fragment or an accumulator (its opaque state)
bool isShared(const std::string& tensor);
char matrixOf(const std::string& tensor);     // 'a', 'b' or 'c'
std::string fragmentOf(const std::string& accumulator);   // the fragment its results take

// A layout or tensor as its symbol names it: <mm key>.<tensor>[.<like>][.ld<N>].
struct Ref {
  std::string mm_key, tensor, like;
  std::optional<int64_t> ld;   // a global layout's leading dimension fixed on the host
};
bool parse(std::string_view name, std::string_view prefix, Ref* out);
std::string refText(const Ref& r);
// A layout value (its symbol, or (symbol, ld)) / a tensor value.
bool layoutOf(const Type* t, Ref* out);
bool tensorOf(const Type* t, Ref* out);
std::string tensorName(const Ref& r);
const Type* tensorType(const Ref& r, const Type* array);
mathdx::TensorRef tensorRef(const Ref& r);

[[noreturn]] void fail(const Site& s, const std::string& construct, const std::string& message,
                       const std::string& hint = {});
std::shared_ptr<const mathdx::MatmulResult> matmulOf(const Site& s, const std::string& construct, const Ref& r);
// The item type of a layout's tensors: its "like" type, else its matrix's.
const Type* itemOf(const Site& s, const std::string& construct, const Ref& r);
// Argument i as a tensor, or a failure naming what `construct` takes.
Ref tensorArg(const Site& s, const std::string& construct, size_t i, const std::string& what);

// What a call is: the function of libmathdx it becomes, its tensors and the
// operands in the order the device function takes them.
struct Call {
  std::string construct, function, mm_key;
  std::vector<mathdx::TensorRef> tensors;
  int64_t alignment = 0;
  std::vector<size_t> operands;   // argument positions
  std::vector<size_t> scales;     // of those, the positions converted to a tensor's item type (alpha, beta) ...
  std::vector<Ref> scale_of;      // ... and that tensor
  const Type* result = nullptr;   // a value the function writes through pointers (bool, (i32, i32)); null: none
  // A function of a DevicePipeline (its key) taking `pipelines` ("device",
  // "tile", "device,tile"); `block_wide`: its kernel runs with the
  // pipeline's block (not the host's one-thread create / destroy kernels).
  std::string pipeline_key, pipelines;
  bool block_wide = true;
};

// Planning: what typed sites will instantiate, made side by side before the
// first lowering (prefetch), so that a kernel's first compile waits for its
// slowest function, not their sum.
void plan(const Site& s, const Call& c);
void planTraits(const Ref& r);
void prefetch();

ir::Instr* marker(Emitter& e, const Ref& r);
// The call of a tensor function (instantiated now) on `operands`; its value
// when the function writes one (c.result).
ir::Instr* emitCall(const Site& s, Emitter& e, const Call& c, std::vector<ir::Instr*> operands);
mathdx::TensorTraits traitsOf(const Site& s, const std::string& construct, const Ref& r);
// The array type of a register buffer of `r`'s items.
const Type* bufferType(const Site& s, const std::string& construct, const Ref& r);
// A new register tensor of `r`: a local buffer of its cosize (libmathdx's
// storage bytes; an accumulator's opaque state too), aligned as nvmath's.
ir::Instr* newRegisterTensor(const Site& s, Emitter& e, const std::string& construct, const Ref& r);

// --- rules_mathdx_pipelines.cpp --------------------------------------------------
constexpr std::string_view kPipelinePrefix = "cudajit.mathdx.pipeline.";
constexpr std::string_view kTilePipelinePrefix = "cudajit.mathdx.tile_pipeline.";
// A DevicePipeline argument (sym, u64: its state's address) or a tile
// pipeline (sym, local uint8 array: its state); `key` the pipeline's.
bool pipelineOf(const Type* t, std::string* key, bool* tile);
const Type* pipelineAttributeType(const Site& s, const Type* receiver);
ir::Instr* pipelineAttributeLower(const Site& s, Emitter& e, ir::Instr* receiver);
// p.<method>(...) of a pipeline: s.receiver is the bound method (sym, p).
const Type* pipelineMethodType(const Site& s);
ir::Instr* pipelineMethodLower(const Site& s, Emitter& e);
void planPipelineSite(const Site& s);
// The DevicePipeline argument of the function a pipelined Matmul's
// (with_pipeline=True) accumulator works with: its key; "" for a Matmul
// without pipeline. Fails without such an argument, or with two.
std::string pipelineForMatmul(const Site& s, const std::string& construct, const std::string& mm_key);
// The tile pipeline of `key` in this function: (marker, its state), a local
// buffer every call on the tile shares (get_tile creates it there).
ir::Instr* tileState(const Site& s, Emitter& e, const std::string& key);

// --- rules_mathdx_accumulators.cpp ----------------------------------------------
constexpr std::string_view kMethodPrefix = "method:mathdx.";
// suggest_accumulator -> "suggested_accumulator_c", get_accumulator -> "accumulator_c"; "" else.
std::string_view accumulatorOfMethod(std::string_view method);
const Type* accumulatorType(const Site& s, std::string_view mm_key, std::string_view method);
ir::Instr* accumulatorLower(const Site& s, Emitter& e, std::string_view mm_key, std::string_view method);
// acc.<method>(...): s.receiver is the bound method (sym, acc).
const Type* methodType(const Site& s);
ir::Instr* methodLower(const Site& s, Emitter& e);
// make_fragment_like(tensor, dtype)
const Type* fragmentLikeType(const Site& s, Ref* f);
ir::Instr* fragmentLikeLower(const Site& s, Emitter& e);
// t.layout of a tensor, acc.<method> of an accumulator (the bound method).
const Type* attributeType(const Site& s, const Type* receiver);
ir::Instr* attributeLower(const Site& s, Emitter& e, ir::Instr* receiver);
// Plans an accumulator's creation, one of its methods, or make_fragment_like (`t` the site's type).
void planAccumulatorSite(const Site& s, std::string_view mm_key, std::string_view method, const Type* t);

}  // namespace cj::typeinfer::mathdx_tensors
