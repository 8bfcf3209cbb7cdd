#include "ir/intrinsics.h"

namespace cj::ir {
namespace {

constexpr IntrinsicInfo kIntrinsics[] = {
#define X(E, name, arity, f32, f64) {Intrinsic::E, name, arity, f32, f64},
#include "ir/intrinsics.def"
#undef X
};

}  // namespace

const IntrinsicInfo* findIntrinsic(std::string_view name) {
  for (const auto& info : kIntrinsics)
    if (info.name == name) return &info;
  return nullptr;
}

const IntrinsicInfo& intrinsicInfo(Intrinsic id) { return kIntrinsics[static_cast<int>(id)]; }

}  // namespace cj::ir
