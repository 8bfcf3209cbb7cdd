// ct.printf(format, *args), ct.print(*args, sep, end), and print(...) with a
// tile argument: device output once per block, a tile printed whole as cuTile
// prints it ("[0, 1, 2]", "[[0, 1], [2, 3]]"). Typed here into `tile.print`,
// whose template (Instr::ints) is printf text with a slot per operand:
//
//   c >= 0          a character of the format (printf-escaped: % as %%)
//   kTilePrintSlot  an operand, then the length n of its conversion and n
//                   characters: flags, width, precision and the conversion
//                   letter (n = 0: %d for integers and bools, %f for floats)
//
// The tile pipeline (passes/tile_lower_print.cpp) gathers each tile in shared
// memory and has one thread print (ir/intrinsics.def, tile.print).
#include "typeinfer/rules.h"
#include "typeinfer/tile_rules.h"

namespace cj::typeinfer::rules {

void appendPrintText(std::vector<int64_t>& out, std::string_view text) {
  for (unsigned char c : text) {
    if (c == '%') out.push_back('%');   // printf's escape
    out.push_back(c);
  }
}

void appendPrintSlot(std::vector<int64_t>& out, std::string_view spec) {
  out.push_back(ir::kTilePrintSlot);
  out.push_back(static_cast<int64_t>(spec.size()));
  for (unsigned char c : spec) out.push_back(c);
}

namespace {

// Elements one call may print: every element is unrolled into the printing
// thread's code (vprintf takes 32 values a call).
constexpr int64_t kMaxPrintedElements = 4096;

bool isPrintf(const Site& s) { return s.arg == "printf"; }
std::string opName(const Site& s) { return isPrintf(s) ? "ct.printf" : s.arg == "print" ? "ct.print" : "print"; }

[[noreturn]] void failPrint(const Site& s, const std::string& message, const std::string& hint = {}) {
  s.fail(opName(s) + ": " + message, hint);
}

// The format's text and conversions: printf's %[flags][width][.precision]
// [length]conversion, the length dropped (the lowering passes every integer
// as 64 bits, every float as a double).
struct Format {
  std::vector<int64_t> tmpl;   // slots without operands yet: kTilePrintSlot, n, spec
  size_t slots = 0;
};

Format parseFormat(const Site& s, const std::string& f) {
  Format out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      appendPrintText(out.tmpl, std::string_view(&f[i], 1));
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      appendPrintText(out.tmpl, "%");
      ++i;
      continue;
    }
    size_t j = i + 1;
    std::string spec;
    while (j < f.size() && std::string_view("-+ #0").find(f[j]) != std::string_view::npos) spec += f[j++];
    while (j < f.size() && std::isdigit(static_cast<unsigned char>(f[j]))) spec += f[j++];
    if (j < f.size() && f[j] == '.') {
      spec += f[j++];
      while (j < f.size() && std::isdigit(static_cast<unsigned char>(f[j]))) spec += f[j++];
    }
    if (j < f.size() && f[j] == '*') failPrint(s, "a width or precision of '*' is not supported");
    while (j < f.size() && std::string_view("hlLqjzt").find(f[j]) != std::string_view::npos) ++j;
    if (j >= f.size()) failPrint(s, "the format ends inside a conversion: '" + f.substr(i) + "'");
    if (std::string_view("diuoxXeEfFgGaA").find(f[j]) == std::string_view::npos)
      failPrint(s, std::string("conversion %") + f[j] + " is not supported", "integer and float conversions only: diuoxXeEfFgGaA");
    spec += f[j];
    appendPrintSlot(out.tmpl, spec);
    ++out.slots;
    i = j;
  }
  return out;
}

// A value printed: a tile or a number (a 0-d tile).
void checkValue(const Site& s, const Type* t) {
  if (t->isTile() || (t->isScalar() && !t->isComplex())) return;
  failPrint(s, "cannot print " + typeToString(t), "print tiles, numbers and constant strings");
}

int64_t elementsOf(const Type* t) { return t->isTile() ? tileElements(t) : 1; }

std::string constantText(const ir::Const& c) {
  switch (c.kind) {
    case ir::Const::Kind::Str: return c.s;
    case ir::Const::Kind::Int: return std::to_string(c.i);
    case ir::Const::Kind::Bool: return c.i ? "True" : "False";
    case ir::Const::Kind::None: return "None";
    case ir::Const::Kind::Float: {   // Python's repr: the shortest text that reads back
      char buf[64];
      for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, c.f);
        if (std::strtod(buf, nullptr) == c.f) break;
      }
      std::string text = buf;
      if (text.find_first_of(".eninf") == std::string::npos) text += ".0";
      return text;
    }
    default: return "";
  }
}

// print's items: constants as text, strings verbatim, the rest a slot each.
struct Printed {
  std::vector<int64_t> tmpl;
  std::vector<ir::Instr*> values;
};

std::string keywordText(const Site& s, const char* name, const char* fallback) {
  for (size_t k = 0; k < s.kw_names.size(); ++k) {
    if (s.kw_names[k] != name) continue;
    auto c = constantOf(s.kw_args[k]);
    if (!c || (c->kind != ir::Const::Kind::Str && c->kind != ir::Const::Kind::None))
      failPrint(s, std::string(name) + "= must be a constant string");
    return c->kind == ir::Const::Kind::None ? fallback : c->s;
  }
  return fallback;
}

Printed printed(const Site& s, Emitter* e) {
  for (const std::string& k : s.kw_names)
    if (k != "sep" && k != "end") failPrint(s, "keyword '" + k + "' is not supported");
  std::string sep = keywordText(s, "sep", " "), end = keywordText(s, "end", "\n");
  Printed p;
  int64_t elements = 0;
  for (size_t i = 0; i < s.args.size(); ++i) {
    if (i) appendPrintText(p.tmpl, sep);
    ir::Instr* a = s.args[i];
    auto c = constantOf(a);
    if (a->type->is(TypeKind::String) || a->type->is(TypeKind::None) ||
        (c && !a->type->isTile() && c->kind != ir::Const::Kind::Symbol && !constantText(*c).empty())) {
      appendPrintText(p.tmpl, c ? constantText(*c) : std::string("<str>"));
      continue;
    }
    if (isFString(a->type)) {   // its text, and its values under their specs
      size_t k = 1;
      for (const FStringPart& part : fstringParts(s, a->type)) {
        if (!part.slot) {
          appendPrintText(p.tmpl, part.text);
          continue;
        }
        checkValue(s, a->type->elems[k]);
        elements += elementsOf(a->type->elems[k]);
        appendPrintSlot(p.tmpl, part.spec);
        p.values.push_back(e ? e->element(a, static_cast<int>(k)) : a);
        ++k;
      }
      continue;
    }
    checkValue(s, a->type);
    elements += elementsOf(a->type);
    appendPrintSlot(p.tmpl, "");
    p.values.push_back(a);
  }
  appendPrintText(p.tmpl, end);
  if (elements > kMaxPrintedElements)
    failPrint(s, "prints at most " + std::to_string(kMaxPrintedElements) + " elements a call, this call " +
                     std::to_string(elements), "print a part of the tile (ct.extract, a smaller load)");
  return p;
}

Printed formatted(const Site& s) {
  if (!s.kw_names.empty()) failPrint(s, "takes no keyword arguments");
  if (s.args.empty()) failPrint(s, "missing the format string");
  auto f = constantOf(s.args[0]);
  if (!f || f->kind != ir::Const::Kind::Str) failPrint(s, "the format must be a constant string");
  Format format = parseFormat(s, f->s);
  if (format.slots != s.args.size() - 1)
    failPrint(s, "the format has " + std::to_string(format.slots) + " conversion(s) for " +
                     std::to_string(s.args.size() - 1) + " value(s)");
  Printed p;
  p.tmpl = std::move(format.tmpl);
  int64_t elements = 0;
  for (size_t i = 1; i < s.args.size(); ++i) {
    checkValue(s, s.args[i]->type);
    elements += elementsOf(s.args[i]->type);
    p.values.push_back(s.args[i]);
  }
  if (elements > kMaxPrintedElements)
    failPrint(s, "prints at most " + std::to_string(kMaxPrintedElements) + " elements a call, this call " +
                     std::to_string(elements), "print a part of the tile (ct.extract, a smaller load)");
  return p;
}

const Type* tilePrintType(const Site& s) {
  if (isPrintf(s)) formatted(s);
  else printed(s, nullptr);
  return noneTy();
}

ir::Instr* tilePrintLower(const Site& s, Emitter& e) {
  Printed p = isPrintf(s) ? formatted(s) : printed(s, &e);
  e.intrinsic(ir::Intrinsic::TilePrint, voidTy(), p.values, p.tmpl);
  return nullptr;
}

}  // namespace

bool printsTiles(const Site& s) {
  for (const ir::Instr* a : s.args) {
    if (a->type->isTile()) return true;
    if (isFString(a->type))
      for (size_t k = 1; k < a->type->elems.size(); ++k)
        if (a->type->elems[k]->isTile()) return true;
  }
  return false;
}

// ---- f-strings ----------------------------------------------------------------------

namespace {

constexpr std::string_view kFValue = "cudajit.fstring.value:";
constexpr std::string_view kFString = "cudajit.fstring:";
constexpr char kSlotMark = '\x01', kSlotEnd = '\x02';

[[noreturn]] void failFString(const Site& s, const std::string& message) { s.fail("f-string: " + message); }

bool startsWith(const std::string& name, std::string_view prefix) { return name.rfind(prefix, 0) == 0; }

// Python's format spec [[fill]align][sign][#][0][width][.precision][type] as
// printf's flags, width, precision and conversion letter.
std::string printfSpec(const Site& s, const std::string& py, const Type* value) {
  if (py.empty()) return "";
  size_t i = 0;
  std::string flags;
  auto align = [](char c) { return std::string_view("<>^=").find(c) != std::string_view::npos; };
  if (py.size() > 1 && align(py[1])) {
    if (py[0] != ' ') failFString(s, "a fill character in the format spec '" + py + "' is not supported");
    i = 1;
  }
  if (i < py.size() && align(py[i])) {
    if (py[i] == '^' || py[i] == '=') failFString(s, "alignment '" + std::string(1, py[i]) + "' is not supported");
    if (py[i] == '<') flags += '-';
    ++i;
  }
  if (i < py.size() && (py[i] == '+' || py[i] == ' ' || py[i] == '-')) {
    if (py[i] != '-') flags += py[i];
    ++i;
  }
  if (i < py.size() && py[i] == '#') flags += py[i++];
  if (i < py.size() && py[i] == '0') flags += py[i++];
  std::string rest;
  while (i < py.size() && std::isdigit(static_cast<unsigned char>(py[i]))) rest += py[i++];
  if (i < py.size() && py[i] == '.') {
    rest += py[i++];
    while (i < py.size() && std::isdigit(static_cast<unsigned char>(py[i]))) rest += py[i++];
  }
  char letter = 0;
  if (i < py.size()) letter = py[i++];
  if (i != py.size() || (letter && std::string_view("dxXoeEfFgG").find(letter) == std::string_view::npos))
    failFString(s, "the format spec '" + py + "' is not supported (width, precision, flags and d x X o e E f F g G)");
  bool is_float = (value->isTile() ? scalarKind(value->scalar) == ScalarKind::Float : value->isFloat());
  if (!letter) letter = is_float ? 'g' : 'd';
  return flags + rest + letter;
}

// Where an f-string goes: print's arguments only (its tuple has no other meaning).
void expectPrinted(const Site& s) {
  for (const ir::Use& u : s.instr->uses()) {
    const ir::Instr* user = u.user;
    bool ok = u.succ == ir::Use::kOperandUse && u.index > 0 && user->op == ir::Op::Call;
    auto callee = ok ? constantOf(user->operands[0]) : std::nullopt;
    ok = callee && callee->kind == ir::Const::Kind::Symbol &&
         (callee->s == "builtins.print" || callee->s == "cudajit.tile.print" || callee->s == "cudajit.fstring" ||
          callee->s == "cudajit.fstring.value");   // a computed format spec: refused by its value
    if (!ok) failFString(s, "f-strings are supported as arguments of print() and ct.print() only");
  }
}

const Type* fstringValueType(const Site& s) {
  s.expectArgs(2, 2);
  expectPrinted(s);
  auto spec = constantOf(s.args[1]);
  if (!spec || (spec->kind != ir::Const::Kind::Str && spec->kind != ir::Const::Kind::None))
    failFString(s, "the format spec must be a constant");
  std::string text = spec->kind == ir::Const::Kind::Str ? spec->s : std::string();
  if (text.find(kSlotMark) != std::string::npos || text.find(kSlotEnd) != std::string::npos)
    failFString(s, "control characters in a format spec");
  return tupleTy({symbolTy(std::string(kFValue) + text), s.args[0]->type});
}
ir::Instr* fstringValueLower(const Site& s, Emitter& e) {
  const Type* t = s.instr->type;
  return e.emit(ir::Op::TupleMake, t, {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), s.args[0]});
}

const Type* fstringType(const Site& s) {
  expectPrinted(s);
  std::string tmpl(kFString);
  std::vector<const Type*> elems = {nullptr};
  for (ir::Instr* part : s.args) {
    const Type* t = part->type;
    if (t->is(TypeKind::Tuple) && !t->elems.empty() && t->elems[0]->is(TypeKind::Symbol) &&
        startsWith(t->elems[0]->name, kFValue)) {
      tmpl += kSlotMark + t->elems[0]->name.substr(kFValue.size()) + kSlotEnd;
      elems.push_back(t->elems[1]);
      continue;
    }
    auto c = constantOf(part);
    if (!c || c->kind != ir::Const::Kind::Str) failFString(s, "internal: a part that is neither text nor a value");
    if (c->s.find(kSlotMark) != std::string::npos || c->s.find(kSlotEnd) != std::string::npos)
      failFString(s, "control characters in the text");
    tmpl += c->s;
  }
  elems[0] = symbolTy(tmpl);
  return tupleTy(elems);
}
ir::Instr* fstringLower(const Site& s, Emitter& e) {
  const Type* t = s.instr->type;
  std::vector<ir::Instr*> ops = {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0])};
  for (ir::Instr* part : s.args)
    if (part->type->is(TypeKind::Tuple)) ops.push_back(e.element(part, 1));
  return e.emit(ir::Op::TupleMake, t, ops);
}

}  // namespace

bool isFString(const Type* t) {
  return t->is(TypeKind::Tuple) && !t->elems.empty() && t->elems[0]->is(TypeKind::Symbol) &&
         (startsWith(t->elems[0]->name, kFString) || startsWith(t->elems[0]->name, kFValue));
}

std::vector<FStringPart> fstringParts(const Site& s, const Type* t) {
  const std::string& name = t->elems[0]->name;
  std::string tmpl = startsWith(name, kFValue) ? kSlotMark + name.substr(kFValue.size()) + kSlotEnd
                                               : name.substr(kFString.size());
  std::vector<FStringPart> out;
  size_t k = 1;
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl[i] != kSlotMark) {
      size_t next = tmpl.find(kSlotMark, i);
      out.push_back({tmpl.substr(i, next == std::string::npos ? std::string::npos : next - i), false, ""});
      i = next == std::string::npos ? tmpl.size() : next;
      continue;
    }
    size_t end = tmpl.find(kSlotEnd, i);
    out.push_back({"", true, printfSpec(s, tmpl.substr(i + 1, end - i - 1), t->elems[k++])});
    i = end + 1;
  }
  return out;
}

const Rule fstringValue{fstringValueType, fstringValueLower};
const Rule fstring{fstringType, fstringLower};

const Rule tilePrint{tilePrintType, tilePrintLower};

namespace {

// ct.assert_(cond, message=None): every element of a bool tile (or a bool
// scalar) true, else the block prints "AssertionError: message in 'kernel'
// at file.py:line" once and traps (the launch then fails with the driver's
// error, the context unusable, as a failed numba assert).
std::vector<int64_t> assertMessage(const Site& s, const std::vector<ir::Instr*>& a) {
  std::vector<int64_t> text;
  if (!a[1]) return text;
  auto c = constantOf(a[1]);
  if (!c || (c->kind != ir::Const::Kind::Str && c->kind != ir::Const::Kind::None))
    s.fail("ct.assert_: message must be a constant string (f-strings and formatting are not supported)");
  if (c->kind == ir::Const::Kind::Str)
    for (char ch : c->s) text.push_back(static_cast<unsigned char>(ch));
  return text;
}
const Type* tileAssertType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"cond", "message"}, 1);
  const Type* t = a[0]->type;
  bool boolean = t->isTile() ? t->scalar == Scalar::Bool : t->isBool();
  if (!boolean) s.fail("ct.assert_: cond must be a tile of bools or a bool, got " + typeToString(t));
  assertMessage(s, a);
  return noneTy();
}
ir::Instr* tileAssertLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"cond", "message"}, 1);
  ir::Instr* cond = a[0]->type->isTile() ? a[0] : toTile(e, a[0], Scalar::Bool, {});
  e.intrinsic(ir::Intrinsic::TileAssert, voidTy(), {cond}, assertMessage(s, a));
  return nullptr;
}

// ct.static_assert(condition, message=None): checked while the kernel is
// compiled: the condition must be a constant (Constant parameters, shapes
// and dtypes, their arithmetic and comparisons); false fails the compile
// with the message. No code. cuTile evaluates both as Python expressions
// over proxies (static_eval); here they are the kernel's own values, and
// the message a constant (cuTile raises TileStaticAssertionError, cudajit
// a CompileError at the line).
// Checked as the call is lowered, when the condition's operands are typed
// values (a tile's .shape is its constants only then).
const Type* tileStaticAssertType(const Site& s) {
  s.bind({"condition", "message"}, 1);
  return noneTy();
}
ir::Instr* tileStaticAssertLower(const Site& s, Emitter&) {
  std::vector<ir::Instr*> a = s.bind({"condition", "message"}, 1);
  auto c = constantOf(a[0]);
  if (!c || (c->kind != ir::Const::Kind::Bool && c->kind != ir::Const::Kind::Int))
    s.fail("ct.static_assert: the condition is not a compile-time constant bool (got " + typeToString(a[0]->type) + ")",
           "build it from Constant parameters, shapes and dtypes; ct.assert_ checks values at run time");
  std::string message;
  if (a[1]) {
    auto m = constantOf(a[1]);
    if (!m || (m->kind != ir::Const::Kind::Str && m->kind != ir::Const::Kind::None))
      s.fail("ct.static_assert: message must be a constant string");
    if (m->kind == ir::Const::Kind::Str) message = m->s;
  }
  if (c->i == 0) s.fail("Static assertion failed" + (message.empty() ? std::string() : ": " + message));
  return nullptr;
}

// ct.ensure_constant(value): the value itself, where it is a compile-time
// constant; a CompileError otherwise.
const Type* tileEnsureConstantType(const Site& s) { return s.bind({"value"}, 1)[0]->type; }
ir::Instr* tileEnsureConstantLower(const Site& s, Emitter&) {
  ir::Instr* v = s.bind({"value"}, 1)[0];
  if (!constantOf(v))
    s.fail("ct.ensure_constant: the argument is not a compile-time constant (got " + typeToString(v->type) + ")");
  return v;
}

}  // namespace

const Rule tileAssert{tileAssertType, tileAssertLower};
const Rule tileStaticAssert{tileStaticAssertType, tileStaticAssertLower};
const Rule tileEnsureConstant{tileEnsureConstantType, tileEnsureConstantLower};

}  // namespace cj::typeinfer::rules
