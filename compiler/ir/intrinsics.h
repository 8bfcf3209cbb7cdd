// The typed-IR intrinsic table (intrinsics.def) as C++.
#pragma once
#include <cstdint>
#include <string_view>

namespace cj::ir {

enum class Intrinsic : uint16_t {
#define X(E, name, arity, f32, f64) E,
#include "ir/intrinsics.def"
#undef X
};

struct IntrinsicInfo {
  Intrinsic id;
  std::string_view name;
  int arity;
  std::string_view libdevice_f32;
  std::string_view libdevice_f64;
};

// nullptr if the name is not in the table.
const IntrinsicInfo* findIntrinsic(std::string_view name);
const IntrinsicInfo& intrinsicInfo(Intrinsic id);

}  // namespace cj::ir
