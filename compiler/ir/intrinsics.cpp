#include "ir/intrinsics.h"

#include <string_view>
#include <unordered_map>

namespace cj::ir {
namespace {

constexpr IntrinsicInfo kIntrinsics[] = {
#define X(E, name, arity, family, access, f32, f64) \
  {Intrinsic::E, name, arity, IntrinsicFamily::family, access, f32, f64},
#include "ir/intrinsics.def"
#undef X
};
static_assert(sizeof kIntrinsics / sizeof kIntrinsics[0] == static_cast<size_t>(Intrinsic::Count),
              "one row per enum id");

}  // namespace

const IntrinsicInfo* findIntrinsic(std::string_view name) {
  // Built once; the names are string literals, so views into them stay valid.
  static const std::unordered_map<std::string_view, const IntrinsicInfo*> kByName = [] {
    std::unordered_map<std::string_view, const IntrinsicInfo*> m;
    for (const auto& info : kIntrinsics) m.emplace(info.name, &info);
    return m;
  }();
  auto it = kByName.find(name);
  return it == kByName.end() ? nullptr : it->second;
}

const IntrinsicInfo& intrinsicInfo(Intrinsic id) { return kIntrinsics[static_cast<int>(id)]; }

}  // namespace cj::ir
