// Kernel arguments as the launch path sees them once the Python objects are
// classified: a type per argument (the signature) and the values to pack.
// Packing follows compiler/codegen/abi.h's slots, so the runtime and codegen
// can never disagree on the parameter layout.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "codegen/abi.h"
#include "runtime/arg_types.h"
#include "runtime/cuda_api.h"
#include "types/types.h"

namespace cj::rt {

// A number with the type it had in Python (bool -> b1, int -> i64 or u64,
// float -> f64, numpy scalars -> their dtype). Exact for every source type:
// integers are kept as integers, floats as double.
struct ScalarValue {
  Scalar type = Scalar::Int64;
  int64_t i = 0;     // Bool, signed ints; unsigned ints bit-cast
  double f = 0;      // Float; Complex: the real part
  double f_imag = 0; // Complex: the imaginary part
};

// Inline storage: classifying an array allocates nothing.
struct ArrayValue {
  cu::CUdeviceptr data = 0;
  int ndim = 0;
  int64_t shape[kMaxArrayDims];
  int64_t strides[kMaxArrayDims];   // bytes
};

struct ArgValue {
  const Type* type = nullptr;        // what the signature sees
  ScalarValue scalar;                // Scalar arguments
  std::vector<ScalarValue> elems;    // Tuple arguments, flattened in order
  ArrayValue array;                  // Array arguments
};

// Converts `v` to `target` with numba's cast semantics (float -> int
// truncates, int -> float rounds, anything -> bool tests != 0) and writes its
// bytes (scalarByteSize(target)) to `dst`.
void writeScalar(void* dst, Scalar target, const ScalarValue& v);

// The parameter block of launches of one overload: storage for every slot
// and the void* array cuLaunchKernel reads. Sized once (reset), refilled by
// each launch (pack): cuLaunchKernel copies the values, so one block serves
// every launch of the overload.
class PackedParams {
 public:
  void reset(size_t slots);
  // Scalar slots convert each value to the slot's type (the values may have
  // other, convertible types when an explicit signature was chosen). Tensor
  // map slots encode `maps` for the arrays (cuTensorMapEncodeTiled, again
  // only when an array's address, shape or strides changed); the flag after
  // them says whether every one could be.
  void pack(const std::vector<abi::Slot>& slots, const ArgValue* args, size_t nargs,
            const std::vector<TensorMapSpec>& maps = {});
  void** pointers() { return pointers_.data(); }
  size_t count() const { return pointers_.size(); }

 private:
  std::vector<std::array<uint64_t, 2>> storage_;   // 16 bytes: the widest slot (complex128)
  std::vector<void*> pointers_;
  struct alignas(64) EncodedMap {
    uint64_t bytes[16];
    ArrayValue array;   // what it was encoded for
    bool valid = false;
    bool encoded = false;
  };
  std::vector<EncodedMap> maps_;
  bool encodeMap(const TensorMapSpec& spec, const ArrayValue& a, EncodedMap* out);
};

}  // namespace cj::rt
