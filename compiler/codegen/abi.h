// The kernel parameter ABI: how Python-level argument types become the flat
// list of kernel parameters that cuLaunchKernel receives. Codegen emits the
// kernel signature from it; the runtime packs arguments by it.
//
//   scalar of type T        -> one parameter of T's size (bool: 1 byte, 0/1)
//   array(dtype, nd, ...)   -> data pointer (8 bytes), then nd shape values
//                              (i64), then nd strides in bytes (i64)
//   tuple(T0, T1, ...)      -> the parameters of T0, then of T1, ...
#pragma once
#include <cstdint>
#include <vector>

#include "types/types.h"

namespace cj::abi {

enum class SlotKind : uint8_t { Scalar, DataPtr, Shape, Stride };

struct Slot {
  SlotKind kind;
  int arg;         // Python argument index
  int sub;         // Shape/Stride: dimension; Scalar in a tuple: flattened element index
  int size;        // bytes
  Scalar scalar;   // Scalar slots: its type
};

// Flattened parameter slots for the argument types, in order.
std::vector<Slot> kernelSlots(const std::vector<const Type*>& arg_types);

}  // namespace cj::abi
