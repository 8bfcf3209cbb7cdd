#include "types/signature.h"

#include <cctype>
#include <string>

#include "support/error.h"

namespace cj {
namespace {

// Spellings numba accepts that scalars.def does not list.
struct Alias {
  std::string_view name;
  Scalar scalar;
};
constexpr Alias kAliases[] = {
    {"intp", Scalar::Int64},    {"uintp", Scalar::UInt64},  {"double", Scalar::Float64},
    {"f2", Scalar::Float16},    {"f4", Scalar::Float32},    {"f8", Scalar::Float64},
    {"i1", Scalar::Int8},       {"i2", Scalar::Int16},      {"i4", Scalar::Int32},
    {"u1", Scalar::UInt8},      {"u2", Scalar::UInt16},     {"u4", Scalar::UInt32},
    {"c8", Scalar::Complex64},  {"c16", Scalar::Complex128},
};

bool scalarByName(std::string_view name, Scalar* out) {
  for (const Alias& a : kAliases)
    if (a.name == name) { *out = a.scalar; return true; }
  // "i8"/"u8" are numba's 8-byte ints (int64/uint64), not the IR's 8-bit ones.
  if (name == "i8") { *out = Scalar::Int64; return true; }
  if (name == "u8") { *out = Scalar::UInt64; return true; }
  return parseScalar(name, out);
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view whole) : s_(text), whole_(whole) {}

  const Type* type() {
    skip();
    // The IR text form reads itself ("array(f32, 2d, C)", "tuple(i64, f32)").
    for (std::string_view ir_word : {"array(", "tuple(", "range(", "rangeiter(", "record{"}) {
      if (s_.substr(pos_, ir_word.size()) == ir_word) return irType();
    }
    std::string_view w = word();
    if (w.empty()) fail("expected a type");
    const Type* t = nullptr;
    if (w == "void" || w == "none") {
      t = noneTy();
    } else if (w == "UniTuple") {
      expect('(');
      const Type* e = type();
      expect(',');
      int n = integer();
      expect(')');
      t = tupleTy(std::vector<const Type*>(n, e));
    } else if (w == "Tuple") {
      // Tuple(a, b), and numba's own spelling Tuple((a, b)) / Tuple((a,)).
      expect('(');
      const bool numba_spelling = accept('(');
      std::vector<const Type*> elems;
      while (!accept(')')) {
        elems.push_back(type());
        if (!accept(',')) {
          expect(')');
          break;
        }
      }
      if (numba_spelling) expect(')');
      t = tupleTy(elems);
    } else {
      Scalar sc;
      if (!scalarByName(w, &sc)) fail("unknown type name '" + std::string(w) + "'");
      t = scalarTy(sc);
      if (accept('[')) t = arrayDims(sc);
    }
    return t;
  }

  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  bool accept(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  bool atEnd() { skip(); return pos_ >= s_.size(); }
  size_t pos() const { return pos_; }

  [[noreturn]] void fail(const std::string& why) const {
    throw CompileError("", 0, 0, "signature",
                       "cannot parse type signature '" + std::string(whole_) + "': " + why);
  }

 private:
  // `[:, ::1]` after the dtype: one entry per dimension, `::1` marks the
  // contiguous one (last: C, first: F).
  const Type* arrayDims(Scalar dtype) {
    std::vector<bool> contiguous;
    do {
      skip();
      if (!accept(':')) fail("expected ':' in array dimensions");
      bool c = false;
      if (accept(':')) {
        int step = integer();
        if (step != 1) fail("array step must be 1");
        c = true;
      }
      contiguous.push_back(c);
    } while (accept(','));
    expect(']');
    int nd = static_cast<int>(contiguous.size());
    int marked = 0;
    for (bool c : contiguous) marked += c;
    Layout layout = Layout::A;
    if (marked == 1 && contiguous.back()) layout = Layout::C;
    else if (marked == 1 && contiguous.front()) layout = Layout::F;
    else if (marked != 0) fail("'::1' may mark only the first or the last dimension");
    return arrayTy(dtype, nd, layout);
  }

  const Type* irType() {
    // Find the matching parenthesis and hand the text to parseType.
    size_t start = pos_, depth = 0;
    for (; pos_ < s_.size(); ++pos_) {   // a record's text nests braces
      if (s_[pos_] == '(' || s_[pos_] == '{') ++depth;
      if ((s_[pos_] == ')' || s_[pos_] == '}') && --depth == 0) { ++pos_; break; }
    }
    const Type* t = parseType(s_.substr(start, pos_ - start));
    if (!t) fail("bad type '" + std::string(s_.substr(start, pos_ - start)) + "'");
    return t;
  }

  std::string_view word() {
    skip();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  int integer() {
    std::string_view w = word();
    if (w.empty() || w.size() > 6) fail("expected an integer");
    int v = 0;
    for (char c : w) {
      if (!std::isdigit(static_cast<unsigned char>(c))) fail("expected an integer");
      v = v * 10 + (c - '0');
    }
    return v;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }

  std::string_view s_, whole_;
  size_t pos_ = 0;
};

}  // namespace

const Type* parseNumbaType(std::string_view text) {
  Parser p(text, text);
  const Type* t = p.type();
  if (!p.atEnd()) p.fail("unexpected text after the type");
  return t;
}

ParsedSignature parseSignature(std::string_view text) {
  ParsedSignature out;
  Parser p(text, text);
  if (!p.accept('(')) {
    out.return_type = p.type();
    p.expect('(');
  }
  if (!p.accept(')')) {
    do out.args.push_back(p.type()); while (p.accept(','));
    p.expect(')');
  }
  if (!p.atEnd()) p.fail("unexpected text after the signature");
  // An argument may be `none` (numba types a kernel argument passed None so).
  return out;
}

std::string numbaArgsString(const std::vector<const Type*>& args) {
  std::string out = "(";
  for (size_t k = 0; k < args.size(); ++k) {
    if (k) out += ", ";
    out += typeToNumbaString(args[k]);
  }
  return out + ")";
}

std::string signatureToString(const ParsedSignature& sig) {
  return (sig.return_type ? typeToNumbaString(sig.return_type) : std::string()) + numbaArgsString(sig.args);
}

}  // namespace cj
