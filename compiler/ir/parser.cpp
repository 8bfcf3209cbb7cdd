// The IR text form back into a Module: parseModule(print(m)) == m, so passes
// are tested from IR text to IR text (tests/ir/*.txt).
//
// Grammar (one construct per line; blank lines and lines starting with `#`
// are skipped, so golden files may carry comments):
//
//   module   := function*
//   function := "func" NAME "(" [param ("," param)*] ")" "->" TYPE ["kernel"]
//               ["py=" PYNAME] ["@" FILE ":" LINE] NEWLINE block+
//   block    := "bb" N ["(" param ("," param)* ")"] ["(preds" ... ")"] ":"
//   param    := VALUE ":" TYPE [VAR]
//   instr    := [VALUE ":" TYPE "="] OP BODY ["@" LINE [":" COL]] ["[" VAR "]"]
//   EDGE     := "bb" N ["(" [VALUE ("," VALUE)*] ")"]
//
// BODY per op is what printer.cpp writes (see parseBody). bb0's parameters are
// the function's arguments and are listed in the header only; "(preds ...)"
// is derived from the edges, so it is recomputed, not read.
//
// Value references may point forward (a loop's back edge passes values defined
// later in the text); they are resolved when the function ends. Ids and block
// numbers are kept as written, so printing the result reproduces the input.
#include <cstdio>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace cj::ir {
namespace {

struct ParseFailure {
  std::string message;
};

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

// A cursor over one line of text.
class Line {
 public:
  Line(std::string_view text, int number) : s_(text), n_(number) {}

  int number() const { return n_; }
  bool atEnd() { skipSpace(); return pos_ >= s_.size(); }
  char peek() { skipSpace(); return pos_ < s_.size() ? s_[pos_] : '\0'; }
  char peekRaw() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  size_t pos() const { return pos_; }
  void setPos(size_t p) { pos_ = p; }
  std::string_view rest() const { return s_.substr(pos_); }

  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool accept(char c) {
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  bool accept(std::string_view word) {
    skipSpace();
    if (s_.substr(pos_, word.size()) != word) return false;
    // A keyword must not run into an identifier ("func" vs "funcs").
    if (!word.empty() && isIdentChar(word.back()) && pos_ + word.size() < s_.size() &&
        isIdentChar(s_[pos_ + word.size()]))
      return false;
    pos_ += word.size();
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) fail(what);
  }
  [[noreturn]] void fail(std::string_view expected) {
    throw ParseFailure{"line " + std::to_string(n_) + ": expected " + std::string(expected) +
                       ", found " + found()};
  }
  [[noreturn]] void error(const std::string& message) {
    throw ParseFailure{"line " + std::to_string(n_) + ": " + message};
  }
  // The next token, for error messages.
  std::string found() {
    skipSpace();
    if (pos_ >= s_.size()) return "end of line";
    size_t end = pos_;
    if (isIdentChar(s_[end]) || s_[end] == '-')
      while (end < s_.size() && (isIdentChar(s_[end]) || s_[end] == '-')) ++end;
    else
      ++end;
    return "'" + std::string(s_.substr(pos_, end - pos_)) + "'";
  }

  // identifier with dots: cudajit.grid.1, math.sqrt, axpy__helper
  std::optional<std::string> identifier() {
    skipSpace();
    if (pos_ >= s_.size() || !(isIdentStart(s_[pos_]))) return std::nullopt;
    size_t start = pos_;
    while (pos_ < s_.size() && isIdentChar(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  // `<prefix><digits>`, e.g. v12 or bb3. Does not consume on mismatch.
  std::optional<int> numbered(std::string_view prefix) {
    skipSpace();
    if (s_.substr(pos_, prefix.size()) != prefix) return std::nullopt;
    size_t p = pos_ + prefix.size();
    size_t start = p;
    while (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) ++p;
    if (p == start) return std::nullopt;
    if (p < s_.size() && isIdentChar(s_[p]) && s_[p] != '.') return std::nullopt;   // "v3x"
    int v = std::atoi(std::string(s_.substr(start, p - start)).c_str());
    pos_ = p;
    return v;
  }
  std::optional<int64_t> integer() {
    skipSpace();
    size_t p = pos_;
    if (p < s_.size() && s_[p] == '-') ++p;
    size_t digits = p;
    while (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) ++p;
    if (p == digits) return std::nullopt;
    if (p < s_.size() && (isIdentChar(s_[p]) || s_[p] == '.')) return std::nullopt;
    std::string text(s_.substr(pos_, p - pos_));
    pos_ = p;
    errno = 0;
    if (text[0] == '-') {
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) error("integer out of range: " + text);
      return static_cast<int64_t>(v);
    }
    unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);   // u64 constants print unsigned
    if (errno == ERANGE) error("integer out of range: " + text);
    return static_cast<int64_t>(v);
  }
  // A type runs to the first space, ',', ')' or '=' outside parentheses and braces
  // (a namedtuple's, "namedtuple Pt(x,y) (f64, f64)", to the end of its
  // second parenthesised group).
  const Type* type() {
    skipSpace();
    size_t start = pos_;
    int depth = 0;
    int groups = -1;   // namedtuple: the parenthesised groups still to pass
    if (s_.substr(pos_, 11) == "namedtuple ") {
      pos_ += 11;
      groups = 2;
    }
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (groups > 0) {
        if (c == '(') ++depth;
        else if (c == ')' && --depth == 0 && --groups == 0) { ++pos_; break; }
        ++pos_;
        continue;
      }
      if (c == '(' || c == '{') ++depth;   // a record's text nests braces
      else if (c == ')' || c == '}') { if (depth == 0) break; --depth; }
      else if (depth == 0 && (c == ' ' || c == '\t' || c == ',' || c == '=')) break;
      ++pos_;
    }
    std::string_view text = s_.substr(start, pos_ - start);
    const Type* t = text.empty() ? nullptr : parseType(text);
    if (!t) {
      pos_ = start;
      fail("a type");
    }
    return t;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  int n_;
};

// ---- constants ---------------------------------------------------------------

bool parseFloatText(Line& ln, double* out) {
  ln.skipSpace();
  std::string rest(ln.rest());
  const char* begin = rest.c_str();
  // strtod accepts hex and "infinity"; the printer writes %.17g, inf, nan.
  size_t n = 0;
  if (rest[n] == '-' || rest[n] == '+') ++n;
  if (rest.compare(n, 3, "inf") == 0 || rest.compare(n, 3, "nan") == 0) {
    double v = rest.compare(n, 3, "inf") == 0 ? HUGE_VAL : std::nan("");
    *out = rest[0] == '-' ? -v : v;
    ln.setPos(ln.pos() + n + 3);
    return true;
  }
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return false;
  *out = v;
  ln.setPos(ln.pos() + (end - begin));
  return true;
}

std::string parseStringLiteral(Line& ln) {
  ln.expect('"', "'\"'");
  std::string out;
  for (;;) {
    char c = ln.peekRaw();
    if (c == '\0') ln.error("unterminated string");
    ln.setPos(ln.pos() + 1);
    if (c == '"') return out;
    if (c != '\\') { out += c; continue; }
    char e = ln.peekRaw();
    ln.setPos(ln.pos() + 1);
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case '\'': out += '\''; break;
      case 'x': {
        std::string hex(ln.rest().substr(0, 2));
        if (hex.size() != 2 || !std::isxdigit(static_cast<unsigned char>(hex[0])) ||
            !std::isxdigit(static_cast<unsigned char>(hex[1])))
          ln.fail("two hex digits after \\x");
        out += static_cast<char>(std::strtol(hex.c_str(), nullptr, 16));
        ln.setPos(ln.pos() + 2);
        break;
      }
      default: ln.fail("a string escape");
    }
  }
}

Const parseConst(Line& ln);

// After '(' : a complex number "(re+imj)" or a tuple "(a, b)", "(a,)", "()".
Const parseParenConst(Line& ln) {
  size_t save = ln.pos();
  double re = 0, im = 0;
  if (parseFloatText(ln, &re)) {
    char sign = ln.peekRaw();
    if (sign == '+' || sign == '-') {
      if (sign == '+') ln.setPos(ln.pos() + 1);
      if (parseFloatText(ln, &im) && ln.peekRaw() == 'j') {
        ln.setPos(ln.pos() + 1);
        ln.expect(')', "')' after a complex constant");
        return Const::complex(re, im);
      }
    }
  }
  ln.setPos(save);
  std::vector<Const> elems;
  if (ln.accept(')')) return Const::tuple({});
  for (;;) {
    elems.push_back(parseConst(ln));
    if (ln.accept(')')) break;
    ln.expect(',', "',' or ')' in a tuple constant");
    if (ln.accept(')')) break;   // (a,)
  }
  return Const::tuple(std::move(elems));
}

Const parseConst(Line& ln) {
  char c = ln.peek();
  if (c == '"') return Const::str(parseStringLiteral(ln));
  if (ln.accept('(')) return parseParenConst(ln);
  if (ln.accept("none")) return Const::none();
  if (ln.accept("None")) return Const::none();
  if (ln.accept("true")) return Const::boolean(true);
  if (ln.accept("false")) return Const::boolean(false);
  const bool device = ln.accept("device_array");   // device_array(f32, (4,), (4,), 0x7f.., rw)
  if (device || ln.accept("array")) {   // array(f64, (2, 3), "<hex bytes>")
    ln.expect('(', "'(' after array");
    std::string dtype;
    int depth = 0;   // a record's text nests braces and holds commas
    while (ln.peekRaw() != '\0' && (depth > 0 || std::isalnum(static_cast<unsigned char>(ln.peekRaw())) ||
                                    ln.peekRaw() == '{')) {
      const char ch = ln.peekRaw();
      depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
      dtype += ch;
      ln.setPos(ln.pos() + 1);
    }
    Scalar sc = Scalar::UInt8;
    const Type* rec = dtype.rfind("record{", 0) == 0 ? parseType(dtype) : nullptr;
    if (!rec && !parseScalar(dtype, &sc)) ln.fail("an array constant's dtype");
    ln.expect(',', "',' after the dtype");
    ln.expect('(', "the shape tuple");
    Const shape = parseParenConst(ln);
    std::vector<int64_t> dims;
    for (const Const& d : shape.elems) {
      if (d.kind != Const::Kind::Int) ln.fail("integer dimensions");
      dims.push_back(d.i);
    }
    ln.expect(',', "',' after the shape");
    if (device) {
      ln.expect('(', "the strides tuple");
      std::vector<int64_t> strides;
      for (const Const& d : parseParenConst(ln).elems) {
        if (d.kind != Const::Kind::Int) ln.fail("integer strides");
        strides.push_back(d.i);
      }
      if (strides.size() != dims.size()) ln.fail("as many strides as dimensions");
      ln.expect(',', "',' after the strides");
      std::string digits;
      ln.peek();   // past the spaces
      while (std::isalnum(static_cast<unsigned char>(ln.peekRaw()))) {
        digits += ln.peekRaw();
        ln.setPos(ln.pos() + 1);
      }
      uint64_t address = 0;
      try {
        address = std::stoull(digits, nullptr, 0);
      } catch (const std::exception&) {
        ln.fail("a device array's address (0x...)");
      }
      if (address == 0) ln.fail("a non-zero device array address");
      ln.expect(',', "',' after the address");
      const bool writable = ln.accept("rw");
      if (!writable && !ln.accept("ro")) ln.fail("rw or ro");
      ln.expect(')', "')' after a device array constant");
      return Const::deviceArray(sc, rec, dims, strides, address, writable);
    }
    std::string hex = parseStringLiteral(ln);
    if (hex.size() % 2) ln.fail("an even number of hex digits");
    std::string bytes;
    for (size_t k = 0; k < hex.size(); k += 2) {
      if (!std::isxdigit(static_cast<unsigned char>(hex[k])) || !std::isxdigit(static_cast<unsigned char>(hex[k + 1])))
        ln.fail("hex digits");
      bytes += static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16));
    }
    ln.expect(')', "')' after an array constant");
    if (rec) return Const::recordArray(rec, dims, std::move(bytes));
    return Const::array(sc, dims, std::move(bytes));
  }
  if (ln.accept("sym")) {
    ln.expect('(', "'(' after sym");
    // The qualified name runs to the matching ')' ("fn:helper", "cudajit.threadIdx.x").
    std::string name;
    int depth = 0;
    for (;;) {
      char ch = ln.peekRaw();
      if (ch == '\0') ln.error("unterminated sym(...)");
      if (ch == '(') ++depth;
      if (ch == ')' && depth-- == 0) break;
      name += ch;
      ln.setPos(ln.pos() + 1);
    }
    ln.setPos(ln.pos() + 1);
    return Const::symbol(name);
  }
  // A number: an integer unless it has '.', an exponent, inf or nan.
  size_t save = ln.pos();
  if (auto i = ln.integer()) return Const::integer(*i);
  ln.setPos(save);
  double f = 0;
  if (parseFloatText(ln, &f)) return Const::real(f);
  ln.fail("a constant");
}

// ---- functions -----------------------------------------------------------------

struct Fixup {
  Instr* user;
  int edge;       // -1: operands[index]; else succs[edge].args[index]
  size_t index;
  int id;
  int line;
};

class Parser {
 public:
  explicit Parser(Module* m) : module_(m) {}

  void parse(std::string_view text) {
    std::vector<std::pair<std::string_view, int>> lines;
    int n = 0;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++n;
      std::string_view l = text.substr(start, end - start);
      size_t first = l.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && l[first] != '#') lines.emplace_back(l, n);
      start = end + 1;
    }
    for (auto& [l, number] : lines) {
      Line ln(l, number);
      bool indented = l[0] == ' ' || l[0] == '\t';
      if (!indented && ln.accept("func")) {
        finishFunction();
        Line header(l, number);
        startFunction(header);
      } else if (!indented && ln.numbered("bb")) {
        if (!fn_) ln.error("block outside a function");
        Line header(l, number);
        startBlock(header);
      } else {
        if (!fn_) ln.fail("'func'");
        if (!block_) ln.fail(entry_pending_ ? "a block label 'bb0:'" : "a block label 'bbN:'");
        Line body(l, number);
        parseInstr(body);
      }
    }
    finishFunction();
    if (module_->functions.empty()) throw ParseFailure{"line 1: expected 'func', found end of input"};
  }

 private:
  void startFunction(Line& ln) {
    if (!ln.accept("func")) ln.fail("'func'");
    // IR names are identifiers ("axpy", "helper__f32_i64"); anything up to '('.
    ln.skipSpace();
    std::string name(ln.rest().substr(0, ln.rest().find('(')));
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.empty() || name.find(' ') != std::string::npos) ln.fail("a function name");
    ln.setPos(ln.pos() + ln.rest().find('('));
    if (module_->find(name)) ln.error("function '" + name + "' defined twice");
    module_->functions.push_back(std::make_unique<Function>());
    fn_ = module_->functions.back().get();
    fn_->name = name;
    fn_->py_name = name;   // printed only when it differs
    line_ = ln.number();
    // The entry block is created here: the header lists its parameters.
    Block* entry = blockFor(0);
    fn_->blocks.push_back(takeBlock(entry));
    defined_blocks_[0] = ln.number();
    ln.expect('(', "'('");
    parseParams(ln, entry);
    for (auto& p : entry->params) fn_->arg_names.push_back(p->var);
    ln.expect('-', "'->'");
    ln.expect('>', "'->'");
    fn_->return_type = ln.type();
    if (ln.accept("kernel")) fn_->is_kernel = true;
    if (ln.accept("num_warps=")) {
      auto n = ln.integer();
      if (!n || *n < 1 || *n > 32) ln.fail("a warp count from 1 to 32 after num_warps=");
      fn_->num_warps = static_cast<int>(*n);
    }
    if (ln.accept("occupancy=")) {
      auto n = ln.integer();
      if (!n || *n < 1 || *n > 32) ln.fail("blocks per SM from 1 to 32 after occupancy=");
      fn_->occupancy = static_cast<int>(*n);
    }
    if (ln.accept("maxntid=")) {
      auto n = ln.integer();
      if (!n || *n < 1 || *n > 1024) ln.fail("threads from 1 to 1024 after maxntid=");
      fn_->max_threads = static_cast<int>(*n);
    }
    if (ln.accept("maxclusterrank=")) {
      auto n = ln.integer();
      if (!n || *n < 1 || *n > 16) ln.fail("blocks from 1 to 16 after maxclusterrank=");
      fn_->max_cluster_rank = static_cast<int>(*n);
    }
    if (ln.accept("sm=")) {
      auto n = ln.integer();
      if (!n || *n < 50 || *n > 1000) ln.fail("a GPU generation such as 90 after sm=");
      fn_->target_sm = static_cast<int>(*n);
    }
    if (ln.accept("simt_block=")) {
      const std::string shape = word(ln, "a block shape after simt_block=");
      int x = 0, y = 0, z = 0, used = 0;
      if (std::sscanf(shape.c_str(), "%dx%dx%d%n", &x, &y, &z, &used) != 3 ||
          used != static_cast<int>(shape.size()) || x < 1 || y < 1 || z < 1 || x * y * z > 1024)
        ln.fail("a block shape such as 64x2x1 after simt_block=");
      fn_->simt_block[0] = x;
      fn_->simt_block[1] = y;
      fn_->simt_block[2] = z;
    }
    if (ln.accept("tmaps=")) {
      if (!parseTensorMaps(word(ln, "tensor maps after tmaps="), &fn_->tensor_maps))
        ln.fail("tensor maps such as 0:f16:128x64 after tmaps=");
    }
    if (ln.accept("sigs=[")) {
      std::string_view rest = ln.rest();
      size_t close = 0;   // the ']' that closes the list (array types hold brackets too)
      for (int depth = 1; close < rest.size(); ++close) {
        depth += rest[close] == '[' ? 1 : rest[close] == ']' ? -1 : 0;
        if (depth == 0) break;
      }
      if (close == rest.size()) ln.fail("']' closing sigs=[");
      std::string_view list = rest.substr(0, close);
      try {
        for (size_t at = 0; at <= list.size();) {
          size_t semi = list.find(';', at);
          if (semi == std::string_view::npos) semi = list.size();
          fn_->declared.push_back(parseSignature(list.substr(at, semi - at)));
          at = semi + 1;
        }
      } catch (const std::exception&) {
        ln.fail("signatures such as float32(float32) after sigs=[");
      }
      ln.setPos(ln.pos() + close + 1);
    }
    if (ln.accept("py=")) fn_->py_name = word(ln, "a Python name after 'py='");
    if (ln.accept('@')) {
      // "@file.py:3": the line is after the last ':'.
      std::string rest(ln.rest());
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.pop_back();
      size_t colon = rest.rfind(':');
      if (colon == std::string::npos || colon + 1 == rest.size() ||
          rest.find_first_not_of("0123456789", colon + 1) != std::string::npos)
        ln.fail("'@file:line'");
      fn_->filename = rest.substr(0, colon);
      fn_->first_line = std::atoi(rest.c_str() + colon + 1);
      ln.setPos(ln.pos() + ln.rest().size());
    }
    if (!ln.atEnd()) ln.fail("end of line after the function header");
    block_ = nullptr;
    entry_pending_ = true;
  }

  // A run of characters up to a space (Python qualified names: "f.<locals>.g").
  static std::string word(Line& ln, std::string_view what) {
    ln.skipSpace();
    std::string_view r = ln.rest();
    size_t n = 0;
    while (n < r.size() && r[n] != ' ' && r[n] != '\t') ++n;
    if (n == 0) ln.fail(what);
    ln.setPos(ln.pos() + n);
    return std::string(r.substr(0, n));
  }

  // "(v0:f64 a, v1:i64)" after '(' has been read; fills block params.
  void parseParams(Line& ln, Block* b) {
    if (ln.accept(')')) return;
    for (;;) {
      auto id = ln.numbered("v");
      if (!id) ln.fail("a parameter 'vN:type'");
      ln.expect(':', "':' after the value name");
      const Type* t = ln.type();
      auto p = std::make_unique<Instr>();
      p->op = Op::Param;
      p->type = t;
      p->id = *id;
      p->parent = b;
      p->index = static_cast<int64_t>(b->params.size());
      p->loc = {};
      // The variable name runs to ',' or ')': any spelling the decoder gives
      // a local (".0" for a comprehension's argument) reads back.
      ln.skipSpace();
      std::string_view r = ln.rest();
      size_t n = 0;
      while (n < r.size() && r[n] != ',' && r[n] != ')' && r[n] != ' ') ++n;
      p->var = std::string(r.substr(0, n));
      ln.setPos(ln.pos() + n);
      define(p.get(), ln);
      b->params.push_back(std::move(p));
      if (ln.accept(')')) return;
      ln.expect(',', "',' or ')' in a parameter list");
    }
  }

  void startBlock(Line& ln) {
    auto id = ln.numbered("bb");
    Block* b = blockFor(*id);
    if (defined_blocks_.count(*id) && !(*id == 0 && entry_pending_))
      ln.error("block bb" + std::to_string(*id) + " defined twice");
    if (*id == 0) {
      if (!entry_pending_) ln.error("block bb0 defined twice");
    } else {
      if (entry_pending_) ln.fail("'bb0:' as the first block");
      fn_->blocks.push_back(takeBlock(b));
    }
    entry_pending_ = false;
    defined_blocks_[*id] = ln.number();
    // Optional parameter list, then optional "(preds ...)" which is derived
    // from the edges and so is not read back.
    while (ln.accept('(')) {
      if (ln.accept("preds")) {
        while (!ln.atEnd() && ln.peek() != ')') ln.setPos(ln.pos() + 1);
        ln.expect(')', "')' after preds");
      } else {
        if (*id == 0) ln.error("bb0's parameters are the function's arguments, listed in its header");
        parseParams(ln, b);
      }
    }
    ln.expect(':', "':' after the block label");
    if (!ln.atEnd()) ln.fail("end of line after the block label");
    block_ = b;
  }

  void parseInstr(Line& ln) {
    if (entry_pending_) ln.fail("a block label 'bb0:'");
    auto in = std::make_unique<Instr>();
    in->parent = block_;
    in->type = voidTy();
    size_t save = ln.pos();
    std::optional<int> result = ln.numbered("v");
    if (result && ln.accept(':')) {
      in->type = ln.type();
      ln.expect('=', "'=' after the result type");
      in->id = *result;
    } else {
      ln.setPos(save);
      result.reset();
    }
    auto opname = ln.identifier();
    Op op;
    if (!opname || !parseOp(*opname, &op)) {
      if (opname) ln.setPos(ln.pos() - opname->size());
      ln.fail("an operation");
    }
    in->op = op;
    if (result && in->type == voidTy()) ln.error("a result of type void");
    parseBody(ln, in.get());
    parseLoc(ln, in.get());
    if (ln.accept('[')) {
      // The Python variable: everything up to the closing ']'.
      std::string_view r = ln.rest();
      size_t close = r.find(']');
      if (close == std::string_view::npos || close == 0) ln.fail("a variable name and ']'");
      in->var = std::string(r.substr(0, close));
      ln.setPos(ln.pos() + close + 1);
    }
    if (!ln.atEnd()) ln.fail("end of line");
    if (result) define(in.get(), ln);
    block_->instrs.push_back(std::move(in));
  }

  // The op's operands and attributes, in the shapes printer.cpp writes:
  //   const 42 | getattr v1 .size | tuple_get v3 [1] | array_dim v1 [0]
  //   intrinsic math.sqrt(v4) | intrinsic shared_array[128, 4]() | call_func helper(v4, v5)
  //   call v1(v2, v3, dtype=v4) | raise "message" | br bb1(v2) | cbr v5, bb1, bb2(v3)
  //   add v1, v2 | ret | ret v4
  void parseBody(Line& ln, Instr* in) {
    switch (in->op) {
      case Op::Param: ln.error("'param' is written in a block's parameter list");
      case Op::Const: in->cval = parseConst(ln); return;
      case Op::GetAttr:
      case Op::SetAttr:
      case Op::RecordGet:
      case Op::RecordSet:
        operand(ln, in);
        if (in->op == Op::SetAttr || in->op == Op::RecordSet) {
          ln.expect(',', "','");
          operand(ln, in);
        }
        if (!ln.accept('.')) ln.fail("'.attribute'");
        if (ln.peekRaw() == ' ' || ln.peekRaw() == '\0') ln.fail("an attribute name");
        in->name = *ln.identifier();
        return;
      case Op::TupleGet:
      case Op::ArrayDim:
      case Op::ArrayStride: {
        operand(ln, in);
        ln.expect('[', "'[index]'");
        auto i = ln.integer();
        if (!i) ln.fail("an index");
        in->index = *i;
        ln.expect(']', "']'");
        return;
      }
      case Op::Intrinsic: {
        parseFacts(ln, in);   // intrinsic nonneg[0] atomic_add(...)
        auto name = ln.identifier();
        if (!name) ln.fail("an intrinsic name");
        // An unknown name keeps its spelling (id Count) so that the verifier
        // reports it with the function and value, as for any invalid IR.
        if (const IntrinsicInfo* info = findIntrinsic(*name)) in->intrinsic = info->id;
        else in->name = *name;
        if (ln.peek() == '"') in->cval = Const::str(parseStringLiteral(ln));   // intrinsic cub "spec"
        if (ln.peekRaw() == '[') {
          ln.accept('[');
          in->ints = parseIntList(ln, ']');
        }
        parseArgs(ln, in, false);
        return;
      }
      case Op::CallFunc: {
        auto name = ln.identifier();
        if (!name) ln.fail("a function name");
        in->name = *name;
        parseArgs(ln, in, false);
        return;
      }
      case Op::Call:
        operand(ln, in);
        parseArgs(ln, in, true);
        return;
      case Op::Raise:
        if (ln.peek() != '"') ln.fail("a message string");
        in->name = parseStringLiteral(ln);
        return;
      case Op::Br: edgeItem(ln, in); return;
      case Op::CondBr:
        operand(ln, in);
        ln.expect(',', "','");
        edgeItem(ln, in);
        ln.expect(',', "','");
        edgeItem(ln, in);
        return;
      default:
        parseFacts(ln, in);
        if (ln.peek() != 'v') return;   // no operands ("ret", "undef")
        for (;;) {
          operand(ln, in);
          if (!ln.accept(',')) return;
        }
    }
  }

  // Proven facts after the op name: nsw, nuw, nonneg, nonneg[0, 1].
  void parseFacts(Line& ln, Instr* in) {
    for (;;) {
      size_t save = ln.pos();
      auto word = ln.identifier();
      if (!word) return;
      if (*word == "nsw") {
        in->facts |= kFactNsw;
      } else if (*word == "nuw") {
        in->facts |= kFactNuw;
      } else if (*word == "nonneg" && ln.peekRaw() == '[') {
        ln.accept('[');
        for (int64_t k : parseIntList(ln, ']')) {
          if (k < 0 || k >= kFactMaxIndices) ln.error("index fact nonneg[" + std::to_string(k) + "] out of range");
          in->facts |= indexNonNegFact(static_cast<int>(k));
        }
      } else if (*word == "nonneg") {
        in->facts |= kFactNonNeg;
      } else {
        ln.setPos(save);
        return;
      }
    }
  }

  // One value reference, resolved when the function ends.
  void operand(Line& ln, Instr* in) {
    auto v = ln.numbered("v");
    if (!v) ln.fail("a value 'vN'");
    in->addOperand(nullptr);
    fixups_.push_back({in, -1, in->operands.size() - 1, *v, ln.number()});
  }

  // "(v1, v2)" or, for `call`, "(v1, name=v2)": keywords come last.
  void parseArgs(Line& ln, Instr* in, bool keywords) {
    if (ln.peekRaw() != '(') ln.fail("'('");
    ln.accept('(');
    if (ln.accept(')')) return;
    for (;;) {
      size_t save = ln.pos();
      if (keywords) {
        auto word = ln.identifier();
        if (word && ln.accept('=')) in->names.push_back(*word);
        else if (!in->names.empty()) { ln.setPos(save); ln.fail("a keyword argument 'name=vN'"); }
        else ln.setPos(save);
      }
      operand(ln, in);
      if (ln.accept(')')) return;
      ln.expect(',', "',' or ')'");
    }
  }

  // "bbN" or "bbN(v1, v2)".
  void edgeItem(Line& ln, Instr* in) {
    auto b = ln.numbered("bb");
    if (!b) ln.fail("a block 'bbN'");
    in->addSucc(blockFor(*b));
    referenced_blocks_.emplace(*b, ln.number());
    int edge = static_cast<int>(in->succs.size()) - 1;
    if (ln.peekRaw() != '(') return;
    ln.accept('(');
    if (ln.accept(')')) return;
    for (;;) {
      auto a = ln.numbered("v");
      if (!a) ln.fail("an edge argument 'vN'");
      in->addEdgeArg(static_cast<size_t>(edge), nullptr);
      fixups_.push_back({in, edge, in->succs[edge].args.size() - 1, *a, ln.number()});
      if (ln.accept(')')) return;
      ln.expect(',', "',' or ')' in edge arguments");
    }
  }

  std::vector<int64_t> parseIntList(Line& ln, char close) {
    std::vector<int64_t> out;
    if (ln.accept(close)) return out;
    for (;;) {
      auto i = ln.integer();
      if (!i) ln.fail("an integer");
      out.push_back(*i);
      if (ln.accept(close)) return out;
      ln.expect(',', "',' in an integer list");
    }
  }

  void parseLoc(Line& ln, Instr* in) {
    if (!ln.accept('@')) return;
    auto line = ln.integer();
    if (!line) ln.fail("a source line after '@'");
    in->loc.line = static_cast<int>(*line);
    if (ln.peekRaw() == ':') {
      ln.accept(':');
      auto col = ln.integer();
      if (!col) ln.fail("a column after ':'");
      in->loc.col = static_cast<int>(*col);
    }
  }

  void define(Instr* in, Line& ln) {
    auto [it, fresh] = values_.emplace(in->id, in);
    if (!fresh) ln.error("value v" + std::to_string(in->id) + " defined twice");
  }

  // Blocks are created on first mention (edges may point forward) and moved
  // into the function in the order their labels appear.
  Block* blockFor(int id) {
    auto it = blocks_.find(id);
    if (it != blocks_.end()) return it->second.raw;
    auto b = std::make_unique<Block>();
    b->id = id;
    b->parent = fn_;
    Block* raw = b.get();
    blocks_[id] = {raw, std::move(b)};
    return raw;
  }
  std::unique_ptr<Block> takeBlock(Block* b) { return std::move(blocks_[b->id].owned); }

  void finishFunction() {
    if (!fn_) return;
    if (entry_pending_)
      throw ParseFailure{"line " + std::to_string(line_) + ": expected a block 'bb0:', found end of function"};
    for (auto& [id, line] : referenced_blocks_)
      if (!defined_blocks_.count(id))
        throw ParseFailure{"line " + std::to_string(line) + ": block bb" + std::to_string(id) +
                           " is not defined"};
    for (const Fixup& f : fixups_) {
      auto it = values_.find(f.id);
      if (it == values_.end())
        throw ParseFailure{"line " + std::to_string(f.line) + ": value v" + std::to_string(f.id) +
                           " is not defined"};
      if (f.edge < 0) f.user->setOperand(f.index, it->second);
      else f.user->setEdgeArg(static_cast<size_t>(f.edge), f.index, it->second);
    }
    // Instructions without a result print no id; give them fresh ones so
    // that ids stay unique in the function.
    int next = 0;
    for (auto& [id, in] : values_) next = std::max(next, id + 1);
    for (auto& b : fn_->blocks)
      for (auto& in : b->instrs)
        if (!in->hasResult()) in->id = next++;
    fn_->next_id = next;
    fn_->computePreds();
    fn_ = nullptr;
    block_ = nullptr;
    values_.clear();
    blocks_.clear();
    defined_blocks_.clear();
    referenced_blocks_.clear();
    fixups_.clear();
  }

  struct BlockSlot {
    Block* raw = nullptr;
    std::unique_ptr<Block> owned;
  };

  Module* module_;
  Function* fn_ = nullptr;
  Block* block_ = nullptr;
  bool entry_pending_ = false;
  int line_ = 0;
  std::map<int, Instr*> values_;
  std::map<int, BlockSlot> blocks_;
  std::map<int, int> defined_blocks_;      // id -> line
  std::map<int, int> referenced_blocks_;   // id -> first line that names it
  std::vector<Fixup> fixups_;
};

}  // namespace

bool parseModule(std::string_view text, Module* out, std::string* error) {
  Module m;
  try {
    Parser(&m).parse(text);
  } catch (const ParseFailure& f) {
    if (error) *error = f.message;
    return false;
  }
  out->functions = std::move(m.functions);
  return true;
}

}  // namespace cj::ir
