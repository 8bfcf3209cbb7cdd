// The kernel parameter ABI: how Python-level argument types become the flat
// list of kernel parameters that cuLaunchKernel receives. Codegen emits the
// kernel signature from it; the runtime packs arguments by it.
//
//   scalar of type T        -> one parameter of T's size (bool: 1 byte, 0/1)
//   array(dtype, nd, ...)   -> data pointer (8 bytes), then nd shape values
//                              (i64), then nd strides in bytes (i64)
//   tuple(T0, T1, ...)      -> the parameters of T0, then of T1, ...
//
// Tile kernels with TMA then take their tensor maps (128 bytes each, by
// value, types/tensor_map.h) and one i32: whether the launch encoded them all.
#pragma once
#include <cstdint>
#include <vector>

#include "types/tensor_map.h"
#include "types/types.h"

namespace cj::abi {

enum class SlotKind : uint8_t { Scalar, DataPtr, Shape, Stride, TensorMap, TensorMapsValid };

struct Slot {
  SlotKind kind;
  int arg;         // Python argument index
  int sub;         // Shape/Stride: dimension; Scalar in a tuple: flattened element index; TensorMap: its index
  int size;        // bytes
  Scalar scalar;   // Scalar slots: its type
};

// Flattened parameter slots for the argument types, in order.
std::vector<Slot> kernelSlots(const std::vector<const Type*>& arg_types);
// The slots of a tile kernel's tensor maps and their flag, after the arguments'.
void appendTensorMapSlots(const std::vector<TensorMapSpec>& maps, std::vector<Slot>* slots);

}  // namespace cj::abi
