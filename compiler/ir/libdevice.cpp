#include "ir/libdevice.h"

#include <string>

namespace cj::ir {
namespace {

Scalar scalarOf(std::string_view name) {
  Scalar s = Scalar::Int32;
  parseScalar(name, &s);   // the table holds f32 f64 i32 i64 u32 u64 only
  return s;
}

std::vector<LibdeviceFunction> build() {
  struct Row {
    std::string_view name, result, params;
  };
  static constexpr Row kRows[] = {
#define LIBDEVICE(name, result, params) {#name, result, params},
#include "ir/libdevice.def"
#undef LIBDEVICE
  };
  std::vector<LibdeviceFunction> out;
  for (const Row& r : kRows) {
    LibdeviceFunction f;
    f.name = r.name;
    f.returns_void = r.result == "void";
    if (!f.returns_void) f.result = scalarOf(r.result);
    std::string_view p = r.params;
    while (!p.empty()) {
      size_t end = p.find(' ');
      std::string_view item = p.substr(0, end);
      bool output = !item.empty() && item[0] == '*';
      (output ? f.outputs : f.inputs).push_back(scalarOf(output ? item.substr(1) : item));
      f.param_is_output.push_back(output);
      p = end == std::string_view::npos ? std::string_view() : p.substr(end + 1);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

const std::vector<LibdeviceFunction>& libdeviceFunctions() {
  static const std::vector<LibdeviceFunction> table = build();
  return table;
}

const LibdeviceFunction* findLibdeviceFunction(std::string_view name) {
  for (const LibdeviceFunction& f : libdeviceFunctions())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace cj::ir
