// cuBLASDx's tensor API in kernels (nvmath.device.common: make_tensor, copy,
// copy_fragment, clear, copy_wait, axpby; a Matmul's layouts and its
// execute(a, b, c) on tensors). Stage-internal: rules_mathdx.cpp routes the
// calls here.
//
// Kernel values:
//   layout  sym(cudajit.mathdx.layout.<mm key>.<tensor type>[.<like>])  for
//           shared and register layouts, and for a Python-side global
//           layout object (its symbol may end in .ld<N>: a leading dimension);
//           a global layout made in the kernel is (that sym, i64 ld)
//   tensor  (sym(cudajit.mathdx.tensor.<mm key>.<tensor type>[.<like>]), array)
//           or, for global tensors, (sym, array, i64 ld): lowered by value as
//           libmathdx's struct {void* ptr} / {void* ptr; long long ld}
// Each call becomes `intrinsic mathdx "<key>"` of a TensorFunctionResult
// (mathdx/mathdx.h), instantiated during type inference.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "typeinfer/context.h"

namespace cj::typeinfer {

// The item type of a MathDx value type as libmathdx spells it: a numpy scalar
// ("float32", "complex64") or a vector ("complex32" is float16x2:
// vector_dtype_names.def). nullptr if neither. (rules_mathdx.cpp)
const Type* mathdxValueItemType(const std::string& name);
// "block=XxYxZ", the launch block a block-wide MathDx call's kernel carries
// (.reqntid): the launch's where it is known, else `built` (the
// descriptor's). Passed to codegen in the call's names. (rules_mathdx.cpp)
std::string mathdxLaunchBlockName(const Site& s, const std::array<int64_t, 3>& built);
// The launch block when the kernel is specialised for one and it is not
// `want` (a call that needs exactly its own block); nullopt else.
// (rules_mathdx.cpp)
std::optional<std::array<int64_t, 3>> mathdxOtherLaunchBlock(const Site& s, const std::array<int64_t, 3>& want);
// "(x, y, z)".
std::string mathdxDimText(const int64_t* d);

namespace mathdx_tensors {

constexpr std::string_view kLayoutPrefix = "cudajit.mathdx.layout.";
constexpr std::string_view kTensorPrefix = "cudajit.mathdx.tensor.";
constexpr std::string_view kApiPrefix = "cudajit.mathdx.tensor_api.";

// A symbol of this API as a value or callee (layouts, tensor markers, the functions).
bool isSymbol(std::string_view name);
// A Matmul method that makes a layout ("suggest_layout_smem_a", "get_layout_gmem_c", ...).
bool isLayoutMethod(std::string_view method);
// suggest_accumulator / get_accumulator: a new accumulator (its state in a
// local buffer, created and cleared), a register tensor with methods.
bool isAccumulatorMethod(std::string_view method);
// "method:mathdx.<name>": an accumulator's bound method (sites.cpp binds its call here).
bool isMethod(std::string_view name);
// layout.size / cosize / alignment / uid in a kernel (a constant); false
// when `layout` is not a layout's symbol.
bool layoutAttribute(const Site& s, const Type* layout, int64_t* value);
// A tensor value's type.
bool isTensor(const Type* t);
// A DevicePipeline argument's or a tile pipeline's type (rules_mathdx_pipelines.cpp).
bool isPipeline(const Type* t);
// A DevicePipeline's integer trait `name` (buffer_size, buffer_alignment,
// storage_bytes, storage_alignment, pipeline_depth): a constant even before
// its getattr is typed. False for other types and names.
bool pipelineConstant(const Type* t, const std::string& name, int64_t* value);
// fragment[i]: the item type of a register fragment indexed by an integer
// (its buffer's item; fails for other tensors and indices).
const Type* itemType(const FunctionContext& ctx, const ir::Instr* at, const Type* tensor, const Type* index);

// The call sites: a function of the API, a Matmul's layout or accumulator
// method (`method` its name), MM.execute on tensors, or an accumulator's
// method (s.name "method:mathdx.<name>", s.receiver the bound method).
const Type* type(const Site& s, std::string_view mm_key, std::string_view method);
ir::Instr* lower(const Site& s, Emitter& e, std::string_view mm_key, std::string_view method);

}  // namespace mathdx_tensors
}  // namespace cj::typeinfer
