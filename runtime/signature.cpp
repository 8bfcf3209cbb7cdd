#include "runtime/signature.h"

#include <cctype>

#include "support/error.h"

namespace cj::rt {
namespace {

// numba's short and C-style aliases, which differ from the IR's short names
// ("i8" is int64 in numba, int8 in cudajit's IR text): checked first.
const struct { std::string_view name; Scalar s; } kNumbaAliases[] = {
    {"b1", Scalar::Bool},      {"bool_", Scalar::Bool},       {"boolean", Scalar::Bool},
    {"bool", Scalar::Bool},    {"i1", Scalar::Int8},          {"i2", Scalar::Int16},
    {"i4", Scalar::Int32},     {"i8", Scalar::Int64},         {"u1", Scalar::UInt8},
    {"u2", Scalar::UInt16},    {"u4", Scalar::UInt32},        {"u8", Scalar::UInt64},
    {"f2", Scalar::Float16},   {"f4", Scalar::Float32},       {"f8", Scalar::Float64},
    {"c8", Scalar::Complex64}, {"c16", Scalar::Complex128},   {"intp", Scalar::Int64},
    {"uintp", Scalar::UInt64}, {"int_", Scalar::Int64},       {"intc", Scalar::Int32},
    {"uintc", Scalar::UInt32}, {"float_", Scalar::Float32},   {"double", Scalar::Float64},
    {"half", Scalar::Float16}, {"byte", Scalar::UInt8},       {"ssize_t", Scalar::Int64},
    {"size_t", Scalar::UInt64},
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ParsedSignature signature() {
    ParsedSignature sig;
    skipSpace();
    if (peek() != '(') {
      std::string_view name = peekIdent();
      if (name == "void" || name == "none") {
        pos_ += name.size();
        sig.return_type = noneTy();
      } else {
        sig.return_type = type();
      }
      skipSpace();
    }
    expect('(');
    skipSpace();
    while (peek() != ')') {
      sig.args.push_back(type());
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        skipSpace();
      } else if (peek() != ')') {
        fail("expected ',' or ')'");
      }
    }
    ++pos_;
    end();
    return sig;
  }

  const Type* wholeType() {
    const Type* t = type();
    end();
    return t;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string_view peekIdent() const {
    size_t e = pos_;
    while (e < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[e])) || text_[e] == '_'))
      ++e;
    return text_.substr(pos_, e - pos_);
  }
  std::string_view ident() {
    skipSpace();
    std::string_view id = peekIdent();
    if (id.empty()) fail("expected a type name");
    pos_ += id.size();
    return id;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void end() {
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected text");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw CompileError("", 0, 0, "signature",
                       "cannot parse the signature '" + std::string(text_) + "': " + what +
                           " at position " + std::to_string(pos_),
                       "write numba's spelling, e.g. \"void(float32, float32[:])\" or "
                       "\"float64[:, ::1]\"");
  }
  int64_t integer() {
    skipSpace();
    size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    if (start == pos_) fail("expected a number");
    return std::stoll(std::string(text_.substr(start, pos_ - start)));
  }

  Scalar scalar(std::string_view name) {
    for (const auto& a : kNumbaAliases)
      if (a.name == name) return a.s;
    Scalar s;
    if (parseScalar(name, &s)) return s;
    fail("unknown type '" + std::string(name) + "'");
  }

  const Type* type() {
    std::string_view name = ident();
    const Type* t = nullptr;
    if (name == "UniTuple") {
      expect('(');
      const Type* elem = type();
      expect(',');
      int64_t n = integer();
      expect(')');
      t = tupleTy(std::vector<const Type*>(static_cast<size_t>(n), elem));
    } else if (name == "Tuple") {
      expect('(');
      std::vector<const Type*> elems;
      skipSpace();
      while (peek() != ')') {
        elems.push_back(type());
        skipSpace();
        if (peek() == ',') ++pos_;
        skipSpace();
      }
      ++pos_;
      t = tupleTy(elems);
    } else if (name == "array" || name == "Array") {
      t = arrayLiteral();
    } else {
      t = scalarTy(scalar(name));
    }
    skipSpace();
    if (peek() == '[') {
      if (!t->isScalar()) fail("only scalar types take an array suffix");
      t = arraySuffix(t->scalar);
    }
    return t;
  }

  // numba's str() of an array type: array(float32, 2d, C[, readonly])
  const Type* arrayLiteral() {
    expect('(');
    Scalar dtype = scalar(ident());
    expect(',');
    skipSpace();
    int64_t nd = integer();
    if (peek() != 'd') fail("expected '<n>d'");
    ++pos_;
    expect(',');
    std::string_view lay = ident();
    Layout layout = lay == "C" ? Layout::C : lay == "F" ? Layout::F : lay == "A" ? Layout::A
                                                                                 : (fail("layout must be C, F or A"), Layout::A);
    skipSpace();
    while (peek() == ',') {   // "readonly", "aligned" qualifiers: accepted, not modelled
      ++pos_;
      ident();
      skipSpace();
    }
    expect(')');
    return arrayTy(dtype, static_cast<int>(nd), layout);
  }

  // [:], [::1], [:, ::1], [::1, :]
  const Type* arraySuffix(Scalar dtype) {
    expect('[');
    std::vector<bool> unit;   // per dimension: "::1"
    for (;;) {
      skipSpace();
      if (text_.substr(pos_, 3) == "::1") {
        unit.push_back(true);
        pos_ += 3;
      } else if (peek() == ':') {
        unit.push_back(false);
        ++pos_;
      } else {
        fail("expected ':' or '::1'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      break;
    }
    const size_t nd = unit.size();
    int units = 0;
    for (bool u : unit) units += u;
    Layout layout = Layout::A;
    if (units == 1 && unit.back()) layout = Layout::C;
    else if (units == 1 && unit.front()) layout = Layout::F;
    else if (units != 0) fail("'::1' may mark only the first (F) or the last (C) dimension");
    return arrayTy(dtype, static_cast<int>(nd), layout);
  }
};

}  // namespace

ParsedSignature parseSignature(std::string_view text) { return Parser(text).signature(); }

const Type* parseNumbaType(std::string_view text) { return Parser(text).wholeType(); }

std::string numbaArgsString(const std::vector<const Type*>& args) {
  std::string out = "(";
  for (size_t k = 0; k < args.size(); ++k) {
    if (k) out += ", ";
    out += typeToNumbaString(args[k]);
  }
  return out + ")";
}

}  // namespace cj::rt
