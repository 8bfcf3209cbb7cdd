#include "runtime/kernel_args.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>

#include "runtime/driver.h"
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

namespace {

bool sameArray(const ArrayValue& a, const ArrayValue& b) {
  if (a.data != b.data || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
  return true;
}

// CUtensorMapDataType of a dtype the tile lowering maps (16-bit operands,
// float32 read as tfloat32).
int tensorMapDtype(Scalar s) {
  switch (s) {
    case Scalar::Float16: return 6;    // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    case Scalar::BFloat16: return 9;   // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    case Scalar::Float32: return 7;    // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    case Scalar::Int16: case Scalar::UInt16: return 1;
    default: return -1;
  }
}

}  // namespace

bool PackedParams::encodeMap(const TensorMapSpec& spec, const ArrayValue& a, EncodedMap* out) {
  if (out->encoded && sameArray(out->array, a)) return out->valid;
  out->array = a;
  out->encoded = true;
  out->valid = false;
  std::memset(out->bytes, 0, sizeof(out->bytes));
  const int eb = scalarByteSize(spec.dtype);
  const int dtype = tensorMapDtype(spec.dtype);
  // What TMA needs: a 2-d array, 16-byte aligned base and row stride, unit
  // last stride, non-empty; else the kernel takes its cp.async route.
  if (dtype < 0 || a.ndim != 2 || a.data % 16 || a.strides[1] != eb || a.strides[0] % 16 || a.strides[0] <= 0 ||
      a.shape[0] <= 0 || a.shape[1] <= 0 || a.shape[0] > (int64_t{1} << 32) || a.shape[1] > (int64_t{1} << 32) ||
      a.strides[0] >= (int64_t{1} << 40))
    return false;
  // CUDAJIT_TMA=0: every launch takes the cp.async route (to compare them).
  static const bool enabled = [] {
    const char* e = std::getenv("CUDAJIT_TMA");
    return !(e && std::string(e) == "0");
  }();
  const cu::PFN_cuTensorMapEncodeTiled encode = driver().cuTensorMapEncodeTiled;
  if (!encode || !enabled) return false;   // an older driver: no TMA
  const uint64_t dims[2] = {static_cast<uint64_t>(a.shape[1]), static_cast<uint64_t>(a.shape[0])};
  const uint64_t strides[1] = {static_cast<uint64_t>(a.strides[0])};
  const unsigned box[2] = {static_cast<unsigned>(spec.box_cols), static_cast<unsigned>(spec.box_rows)};
  const unsigned element_strides[2] = {1, 1};
  // No interleave, 128-byte swizzle, L2 promotion of 256 bytes, zero fill.
  const cu::CUresult r = encode(out->bytes, dtype, 2, reinterpret_cast<void*>(a.data), dims, strides, box,
                                element_strides, 0, 3, 3, 0);
  out->valid = r == cu::CUDA_SUCCESS;
  if (!out->valid) std::memset(out->bytes, 0, sizeof(out->bytes));
  return out->valid;
}

void PackedParams::pack(const std::vector<abi::Slot>& slots, const ArgValue* args, size_t nargs,
                        const std::vector<TensorMapSpec>& maps) {
  if (storage_.size() != slots.size()) reset(slots.size());
  if (maps_.size() != maps.size()) maps_.assign(maps.size(), EncodedMap{});
  bool maps_valid = true;
  for (size_t k = 0; k < slots.size(); ++k) {
    const abi::Slot& slot = slots[k];
    void* dst = storage_[k].data();
    if (slot.kind == abi::SlotKind::TensorMapsValid) {
      put<int32_t>(dst, maps_valid ? 1 : 0);
      continue;
    }
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
      case abi::SlotKind::TensorMap: {
        if (static_cast<size_t>(slot.sub) >= maps.size())
          throw ArgumentValueError("internal: tensor map slot " + std::to_string(slot.sub) + " without its spec");
        EncodedMap& m = maps_[slot.sub];
        maps_valid = encodeMap(maps[slot.sub], a.array, &m) && maps_valid;
        pointers_[k] = m.bytes;
        break;
      }
      case abi::SlotKind::TensorMapsValid: break;
    }
  }
}

}  // namespace cj::rt
