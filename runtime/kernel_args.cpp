#include "runtime/kernel_args.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/errors.h"

namespace cj::rt {
namespace {

// bfloat16 (the top half of a float32) from a double, round to nearest even.
uint16_t toBFloat16(double d) {
  float f = static_cast<float>(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);   // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// IEEE binary16 from a double, round to nearest even (no hardware half on the host).
uint16_t toHalf(double d) {
  float f = static_cast<float>(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u);   // inf/nan
  if (absx >= 0x477ff000u) return sign | 0x7c00u;   // rounds past 65504: inf
  if (absx < 0x38800000u) {                          // subnormal half (or zero)
    if (absx < 0x33000000u) return sign;             // below half the smallest subnormal
    const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(absx >> 23);   // 14..24
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return sign | h;
  }
  uint32_t h = ((absx >> 13) - (112u << 10));   // rebias exponent 127 -> 15
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return sign | h;
}

bool isUnsigned(Scalar s) { return scalarKind(s) == ScalarKind::Int && !scalarSigned(s); }

template <typename T>
void put(void* dst, T v) { std::memcpy(dst, &v, sizeof(T)); }

// Float -> integer as numba casts it (fptosi / fptoui): truncation; values out
// of range are undefined there, here they saturate instead of invoking UB.
template <typename T>
T fromDouble(double d) {
  if (std::isnan(d)) return 0;
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (d <= lo) return std::numeric_limits<T>::lowest();
  if (d >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

}  // namespace

void writeScalar(void* dst, Scalar target, const ScalarValue& v) {
  const ScalarKind from = scalarKind(v.type);
  const bool from_float = from == ScalarKind::Float || from == ScalarKind::Complex;
  const double as_double = from_float ? v.f
                           : isUnsigned(v.type) ? static_cast<double>(static_cast<uint64_t>(v.i))
                                                : static_cast<double>(v.i);
  switch (target) {
    case Scalar::Bool: put<uint8_t>(dst, from_float ? v.f != 0 : v.i != 0); return;
#define CJ_INT_TARGET(E, T) \
    case Scalar::E: put<T>(dst, from_float ? fromDouble<T>(v.f) : static_cast<T>(v.i)); return;
    CJ_INT_TARGET(Int8, int8_t)
    CJ_INT_TARGET(Int16, int16_t)
    CJ_INT_TARGET(Int32, int32_t)
    CJ_INT_TARGET(Int64, int64_t)
    CJ_INT_TARGET(UInt8, uint8_t)
    CJ_INT_TARGET(UInt16, uint16_t)
    CJ_INT_TARGET(UInt32, uint32_t)
    CJ_INT_TARGET(UInt64, uint64_t)
#undef CJ_INT_TARGET
    case Scalar::Float16: put<uint16_t>(dst, toHalf(as_double)); return;
    case Scalar::BFloat16: put<uint16_t>(dst, toBFloat16(as_double)); return;
    case Scalar::Float32:
    case Scalar::TFloat32: put<float>(dst, static_cast<float>(as_double)); return;
    case Scalar::Float64: put<double>(dst, as_double); return;
    case Scalar::Complex64: put<float>(dst, static_cast<float>(as_double)); put<float>(static_cast<char*>(dst) + 4, static_cast<float>(v.f_imag)); return;
    case Scalar::Complex128: put<double>(dst, as_double); put<double>(static_cast<char*>(dst) + 8, v.f_imag); return;
  }
}

void PackedParams::reset(size_t slots) {
  storage_.assign(slots, {0, 0});
  pointers_.resize(slots);
  for (size_t k = 0; k < slots; ++k) pointers_[k] = storage_[k].data();
}

void PackedParams::pack(const std::vector<abi::Slot>& slots, const ArgValue* args, size_t nargs) {
  if (storage_.size() != slots.size()) reset(slots.size());
  for (size_t k = 0; k < slots.size(); ++k) {
    const abi::Slot& slot = slots[k];
    void* dst = storage_[k].data();
    if (slot.arg < 0 || static_cast<size_t>(slot.arg) >= nargs)
      throw ArgumentValueError("internal: ABI slot refers to argument " + std::to_string(slot.arg));
    const ArgValue& a = args[slot.arg];
    switch (slot.kind) {
      case abi::SlotKind::Scalar: {
        const ScalarValue& v = a.type->is(TypeKind::Tuple) ? a.elems.at(slot.sub) : a.scalar;
        writeScalar(dst, slot.scalar, v);
        break;
      }
      case abi::SlotKind::DataPtr: put<uint64_t>(dst, a.array.data); break;
      case abi::SlotKind::Shape: put<int64_t>(dst, a.array.shape[slot.sub]); break;
      case abi::SlotKind::Stride: put<int64_t>(dst, a.array.strides[slot.sub]); break;
    }
  }
}

}  // namespace cj::rt
