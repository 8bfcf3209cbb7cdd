#include "codegen/abi.h"

namespace cj::abi {
namespace {

// Appends the slots of one value of type `t` (argument `arg`). `flat` counts
// the scalar elements of a tuple argument seen so far.
void appendSlots(const Type* t, int arg, int* flat, std::vector<Slot>* out) {
  switch (t->kind) {
    case TypeKind::Scalar:
      out->push_back({SlotKind::Scalar, arg, (*flat)++, scalarByteSize(t->scalar), t->scalar});
      return;
    case TypeKind::Array:
      out->push_back({SlotKind::DataPtr, arg, 0, 8, t->scalar});
      for (int d = 0; d < t->ndim; ++d) out->push_back({SlotKind::Shape, arg, d, 8, Scalar::Int64});
      for (int d = 0; d < t->ndim; ++d) out->push_back({SlotKind::Stride, arg, d, 8, Scalar::Int64});
      return;
    case TypeKind::Record:   // a record scalar: the device address of its bytes
      out->push_back({SlotKind::DataPtr, arg, 0, 8, Scalar::UInt8});
      return;
    case TypeKind::Tuple:
      for (const Type* e : t->elems) appendSlots(e, arg, flat, out);
      return;
    default:
      // none, symbols, strings, functions: compile-time only, no parameter.
      return;
  }
}

}  // namespace

std::vector<Slot> kernelSlots(const std::vector<const Type*>& arg_types) {
  std::vector<Slot> slots;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    int flat = 0;
    appendSlots(arg_types[i], static_cast<int>(i), &flat, &slots);
  }
  return slots;
}

void appendTensorMapSlots(const std::vector<TensorMapSpec>& maps, std::vector<Slot>* slots) {
  if (maps.empty()) return;
  for (size_t k = 0; k < maps.size(); ++k)
    slots->push_back({SlotKind::TensorMap, maps[k].arg, static_cast<int>(k), 128, maps[k].dtype});
  slots->push_back({SlotKind::TensorMapsValid, 0, 0, 4, Scalar::Int32});
}

}  // namespace cj::abi
