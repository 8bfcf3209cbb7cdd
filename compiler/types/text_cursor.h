// A cursor over the small type texts compiler/types parses itself (tile
// types, tile layouts): blanks, characters, words, identifiers and extents
// joined by 'x' ("16x64"). Each parser holds one and adds its grammar.
#pragma once
#include <cctype>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cj {

struct TextCursor {
  std::string_view s;
  size_t pos = 0;

  void skipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  }
  bool eat(char c) {
    skipSpace();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool eatWord(std::string_view w) {
    skipSpace();
    if (s.substr(pos, w.size()) != w) return false;
    pos += w.size();
    return true;
  }
  std::string_view ident() {
    skipSpace();
    size_t start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) ++pos;
    return s.substr(start, pos - start);
  }
  // "4x1x2": decimal extents (no sign) joined by 'x', blanks allowed before
  // the first only. False where a digit is missing or an extent has more than
  // `max_digits` digits (so that it fits the caller's integer).
  bool xList(std::vector<int64_t>* out, size_t max_digits) {
    skipSpace();
    for (;;) {
      size_t start = pos;
      int64_t v = 0;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (pos - start == max_digits) return false;
        v = v * 10 + (s[pos++] - '0');
      }
      if (pos == start) return false;
      out->push_back(v);
      if (pos == s.size() || s[pos] != 'x') return true;
      ++pos;
    }
  }
  // Nothing but blanks left.
  bool atEnd() {
    skipSpace();
    return pos == s.size();
  }
};

}  // namespace cj
