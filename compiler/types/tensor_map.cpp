#include "types/tensor_map.h"

#include <cstdlib>

namespace cj {

std::string tensorMapsToString(const std::vector<TensorMapSpec>& maps) {
  std::string out;
  for (const TensorMapSpec& m : maps) {
    if (!out.empty()) out += ';';
    out += std::to_string(m.arg) + ":" + std::string(scalarShortName(m.dtype)) + ":" + std::to_string(m.box_rows) +
           "x" + std::to_string(m.box_cols);
  }
  return out;
}

namespace {

bool parseCount(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 9) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

bool parseOne(std::string_view s, TensorMapSpec* m) {
  size_t a = s.find(':'), b = a == std::string_view::npos ? a : s.find(':', a + 1);
  if (b == std::string_view::npos) return false;
  std::string_view box = s.substr(b + 1);
  size_t x = box.find('x');
  int64_t arg = 0;
  if (x == std::string_view::npos || !parseCount(s.substr(0, a), &arg) || !parseCount(box.substr(0, x), &m->box_rows) ||
      !parseCount(box.substr(x + 1), &m->box_cols) || !parseScalar(s.substr(a + 1, b - a - 1), &m->dtype))
    return false;
  m->arg = static_cast<int>(arg);
  return m->box_rows > 0 && m->box_cols > 0;
}

}  // namespace

bool parseTensorMaps(std::string_view text, std::vector<TensorMapSpec>* out) {
  std::vector<TensorMapSpec> maps;
  while (!text.empty()) {
    size_t end = text.find(';');
    TensorMapSpec m;
    if (!parseOne(text.substr(0, end), &m)) return false;
    maps.push_back(m);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  *out = std::move(maps);
  return true;
}

}  // namespace cj
