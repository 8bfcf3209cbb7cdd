// The IR text form back into a Module: parseModule(print(m)) == m, so passes
// are tested from IR text to IR text (tests/ir/*.txt).
//
// Grammar (one construct per line; blank lines and lines starting with `#`
// are skipped):
//
//   module   := function*
//   function := ("func" | "kernel") NAME "(" [param ("," param)*] ")" "->" TYPE
//               ["#" FILE ":" LINE] NEWLINE block+
//   block    := "bb" N ["(" [param ("," param)*] ")"] ["(" "preds" ... ")"] ":"
//   param    := VALUE ":" TYPE [VAR]
//   instr    := [VALUE ":" TYPE [VAR] "="] OP item* [LOC]
//   item     := VALUE | EDGE | attribute, separated by "," or spaces
//   EDGE     := "bb" N ["(" [VALUE ("," VALUE)*] ")"]
//   LOC      := "@" LINE [":" COL]
//
// Attributes are read by what they look like, not by their position, so the
// parser does not depend on the order the printer writes them in:
//   const LITERAL                      (the rest of the line up to LOC)
//   "string" or dotted.name            -> Instr::name (getattr, intrinsic, call_func, raise)
//   integer                            -> Instr::index (tuple_get, array_dim, ...)
//                                         or Instr::ints (intrinsic)
//   [1, 2] / (1, 2)                    -> Instr::ints
//   key=value with key in {name, index, ints, shape, names, kw}
//
// Value references may point forward (a loop's back edge passes values defined
// later in the text); they are resolved when the function ends. Ids and block
// numbers are kept as written, so printing the result reproduces the input.
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

// Does `op` read the given attribute (see ops.def)?
bool readsIndex(Op op) {
  return op == Op::Param || op == Op::TupleGet || op == Op::ArrayDim || op == Op::ArrayStride;
}
bool readsName(Op op) {
  return op == Op::GetAttr || op == Op::Intrinsic || op == Op::CallFunc || op == Op::Raise;
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
  // A type runs to the first space, ',', ')' or '=' outside parentheses.
  const Type* type() {
    skipSpace();
    size_t start = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '(') ++depth;
      else if (c == ')') { if (depth == 0) break; --depth; }
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
      if (!indented && (ln.accept("func") || ln.accept("kernel"))) {
        finishFunction();
        Line header(l, number);
        startFunction(header);
      } else if (!indented && ln.numbered("bb")) {
        if (!fn_) ln.error("block outside a function");
        Line header(l, number);
        startBlock(header);
      } else {
        if (!fn_) ln.fail("'func'");
        if (!block_) ln.fail("a block label 'bbN:'");
        Line body(l, number);
        parseInstr(body);
      }
    }
    finishFunction();
    if (module_->functions.empty()) throw ParseFailure{"line 1: expected 'func', found end of input"};
  }

 private:
  void startFunction(Line& ln) {
    bool kernel = false;
    if (ln.accept("kernel")) kernel = true;
    else if (!ln.accept("func")) ln.fail("'func'");
    auto name = ln.identifier();
    if (!name) ln.fail("a function name");
    if (module_->find(*name)) ln.error("function '" + *name + "' defined twice");
    module_->functions.push_back(std::make_unique<Function>());
    fn_ = module_->functions.back().get();
    fn_->name = *name;
    fn_->py_name = *name;
    fn_->is_kernel = kernel;
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
    if (ln.accept('#')) {
      // "# file.py:3": the file name may itself hold ':'; the line is after the last one.
      std::string rest(ln.rest());
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.pop_back();
      size_t first = rest.find_first_not_of(' ');
      rest = first == std::string::npos ? "" : rest.substr(first);
      size_t colon = rest.rfind(':');
      if (colon != std::string::npos &&
          rest.find_first_not_of("0123456789", colon + 1) == std::string::npos && colon + 1 < rest.size()) {
        fn_->filename = rest.substr(0, colon);
        fn_->first_line = std::atoi(rest.c_str() + colon + 1);
      } else {
        fn_->filename = rest;
      }
      ln.setPos(ln.pos() + ln.rest().size());
    }
    if (!ln.atEnd()) ln.fail("end of line after the function header");
    block_ = nullptr;
    entry_pending_ = true;
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
      if (auto var = ln.identifier()) p->var = *var;
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
      if (auto var = ln.identifier()) in->var = *var;
      ln.expect('=', "'=' after the result");
      in->id = *result;
    } else {
      ln.setPos(save);
      result.reset();
    }
    auto opname = ln.identifier();
    Op op;
    if (!opname || !parseOp(*opname, &op)) {
      ln.setPos(save);
      if (result) { ln.numbered("v"); ln.accept(':'); ln.type(); ln.identifier(); ln.accept('='); }
      ln.fail("an operation");
    }
    in->op = op;
    if (op == Op::Param) ln.error("'param' is written in a block's parameter list");
    if (op == Op::Const) {
      in->cval = parseConst(ln);
    }
    parseItems(ln, in.get());
    parseLoc(ln, in.get());
    if (!ln.atEnd()) ln.fail("end of line");
    if (result) define(in.get(), ln);
    block_->instrs.push_back(std::move(in));
  }

  // Operands, edges and attributes, up to '@' or the end of the line.
  void parseItems(Line& ln, Instr* in) {
    bool have_name = false;
    for (;;) {
      ln.accept(',');
      char c = ln.peek();
      if (c == '\0' || c == '@') return;
      size_t save = ln.pos();
      if (auto v = ln.numbered("v")) {
        in->operands.push_back(nullptr);
        fixups_.push_back({in, -1, in->operands.size() - 1, *v, ln.number()});
        continue;
      }
      if (auto b = ln.numbered("bb")) {
        Edge e;
        e.target = blockFor(*b);
        referenced_blocks_.emplace(*b, ln.number());
        in->succs.push_back(std::move(e));
        int edge = static_cast<int>(in->succs.size()) - 1;
        if (ln.peekRaw() == '(' && ln.accept('(') && !ln.accept(')')) {
          for (;;) {
            auto a = ln.numbered("v");
            if (!a) ln.fail("an edge argument 'vN'");
            in->succs[edge].args.push_back(nullptr);
            fixups_.push_back({in, edge, in->succs[edge].args.size() - 1, *a, ln.number()});
            if (ln.accept(')')) break;
            ln.expect(',', "',' or ')' in edge arguments");
          }
        }
        continue;
      }
      if (c == '"') {
        std::string s = parseStringLiteral(ln);
        if (!readsName(in->op) || have_name) ln.setPos(save), ln.fail("an operand");
        in->name = std::move(s);
        have_name = true;
        continue;
      }
      if (c == '[' || (c == '(' && in->op == Op::Intrinsic)) {
        ln.accept(c);
        in->ints = parseIntList(ln, c == '[' ? ']' : ')');
        continue;
      }
      if (auto i = ln.integer()) {
        if (readsIndex(in->op)) in->index = *i;
        else if (in->op == Op::Intrinsic) in->ints.push_back(*i);
        else ln.setPos(save), ln.fail("an operand");
        continue;
      }
      if (auto word = ln.identifier()) {
        if (ln.peekRaw() == '=' ) {
          ln.accept('=');
          parseKeyAttr(ln, in, *word);
          if (*word == "name") have_name = true;
          continue;
        }
        if (readsName(in->op) && !have_name) {
          in->name = *word;
          have_name = true;
          continue;
        }
        ln.setPos(save);
      }
      ln.fail("an operand");
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
      if (ln.accept(close)) return out;
    }
  }

  void parseKeyAttr(Line& ln, Instr* in, const std::string& key) {
    if (key == "name") {
      if (ln.peek() == '"') in->name = parseStringLiteral(ln);
      else if (auto w = ln.identifier()) in->name = *w;
      else ln.fail("a name");
    } else if (key == "index") {
      auto i = ln.integer();
      if (!i) ln.fail("an integer");
      in->index = *i;
    } else if (key == "ints" || key == "shape") {
      char open = ln.peek();
      if (open != '[' && open != '(') ln.fail("'[' or '('");
      ln.accept(open);
      in->ints = parseIntList(ln, open == '[' ? ']' : ')');
    } else if (key == "names" || key == "kw" || key == "kwnames") {
      char open = ln.peek();
      if (open != '[' && open != '(') ln.fail("'[' or '('");
      ln.accept(open);
      char close = open == '[' ? ']' : ')';
      if (ln.accept(close)) return;
      for (;;) {
        if (ln.peek() == '"') in->names.push_back(parseStringLiteral(ln));
        else if (auto w = ln.identifier()) in->names.push_back(*w);
        else ln.fail("a keyword name");
        if (ln.accept(close)) return;
        ln.expect(',', "',' in a name list");
        if (ln.accept(close)) return;
      }
    } else {
      ln.error("unknown attribute '" + key + "'");
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
      if (f.edge < 0) f.user->operands[f.index] = it->second;
      else f.user->succs[f.edge].args[f.index] = it->second;
    }
    int next = 0;
    for (auto& [id, in] : values_) next = std::max(next, id + 1);
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
