// print(...) -> vprintf, as numba-cuda formats it: the template (Instr::ints,
// character codes, 1 where a value goes) becomes a constant format string;
// ints are passed as i64 (%lld) / u64 (%llu), floats as double (%f), bools as
// the strings True / False (%s), packed in a local struct vprintf reads.
#include <cstdio>

#include "codegen/emitter.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

// A constant C string in the constant address space; returns a generic i8*.
std::string stringConstant(FunctionEmitter& fe, const std::string& text) {
  std::string bytes;
  for (unsigned char c : text) {
    if (c >= 32 && c < 127 && c != '"' && c != '\\') {
      bytes += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "\\%02X", c);
      bytes += buf;
    }
  }
  bytes += "\\00";
  std::string at = "[" + std::to_string(text.size() + 1) + " x i8]";
  std::string g = fe.mod().addGlobal("__cj_str", "internal addrspace(4) constant " + at + " c\"" + bytes + "\", align 1");
  std::string p4 = fe.emit("getelementptr inbounds " + at + ", " + at + " addrspace(4)* " + g + ", i64 0, i64 0");
  return fe.emit("addrspacecast i8 addrspace(4)* " + p4 + " to i8*");
}

std::string escapePercent(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

}  // namespace

void callVprintf(FunctionEmitter& fe, const std::string& format,
                 const std::vector<std::pair<std::string, std::string>>& fields) {
  fe.mod().declare("declare i32 @vprintf(i8*, i8*)");
  std::string fmt = stringConstant(fe, format);
  std::string args = "null";
  if (!fields.empty()) {
    std::string st = "{";
    for (size_t k = 0; k < fields.size(); ++k) st += (k ? ", " : "") + fields[k].first;
    st += "}";
    std::string buf = fe.entryAlloca(st, 8);
    for (size_t k = 0; k < fields.size(); ++k) {
      std::string p = fe.emit("getelementptr inbounds " + st + ", " + st + "* " + buf + ", i32 0, i32 " +
                              std::to_string(k));
      fe.emitLine("store " + fields[k].first + " " + fields[k].second + ", " + fields[k].first + "* " + p);
    }
    args = fe.emit("bitcast " + st + "* " + buf + " to i8*");
  }
  fe.emitLine("call i32 @vprintf(i8* " + fmt + ", i8* " + args + ")");
}

// Where a run-time check failed, for its message (escaped for the format):
// "'kernel' at file.py:12" (the function's first line when `line` is 0).
std::string placeOf(FunctionEmitter& fe, int line) {
  const ir::Function& fn = fe.function();
  return "'" + escapePercent(fn.py_name.empty() ? fn.name : fn.py_name) + "' at " + escapePercent(fn.filename) +
         ":" + std::to_string(line ? line : fn.first_line);
}

void boundsCheck(FunctionEmitter& fe, const std::string& ok, const std::string& index, int axis,
                 const std::string& size) {
  const int line = fe.current() ? fe.current()->loc.line : 0;
  fe.trapUnless(ok, [&] {
    callVprintf(fe, "IndexError: index %lld is out of bounds for axis " + std::to_string(axis) +
                        " with size %lld in " + placeOf(fe, line) + "\n",
                {{"i64", index}, {"i64", size}});
  });
}

// An Optional used as a number: numba raises TypeError for None; a kernel
// prints it, with the place, and traps.
void lowerNoneCheck(FunctionEmitter& fe, const ir::Instr& in) {
  fe.trapUnless(fe.val(in.operands[0]), [&] {
    callVprintf(fe, "TypeError: expected " + typeToNumbaString(in.operands[1]->type) + ", got None in " +
                        placeOf(fe, in.loc.line) + "\n",
                {});
  });
}

// ct.assert_: the reporting threads print, then every thread traps.
void lowerAssertTrap(FunctionEmitter& fe, const ir::Instr& in) {
  std::string message;
  for (int64_t c : in.ints) message += static_cast<char>(c);
  std::string text = "AssertionError";
  if (!message.empty()) text += ": " + escapePercent(message);
  fe.trapUnless(fe.val(in.operands[0]), [&] {
    std::string print = fe.freshLabel("assert_print");
    std::string done = fe.freshLabel("assert_trap");
    fe.emitLine("br i1 " + fe.val(in.operands[1]) + ", label %" + print + ", label %" + done);
    fe.startBlock(print);
    callVprintf(fe, text + " in " + placeOf(fe, in.loc.line) + "\n", {});
    fe.emitLine("br label %" + done);
    fe.startBlock(done);
  });
}

// A value under a printf conversion (kTilePrintSlot: flags, width, precision
// and the letter; empty: %d for integers and bools, %f for floats): every
// integer passed as 64 bits, every float as a double, converted when the
// letter asks for the other kind.
void appendConverted(FunctionEmitter& fe, const ir::Instr& v, std::string spec, std::string& format,
                     std::vector<std::pair<std::string, std::string>>& fields) {
  Scalar s = v.type->scalar;
  if (spec.empty()) spec = v.type->isFloat() ? "f" : "d";
  char letter = spec.back();
  std::string flags = spec.substr(0, spec.size() - 1);
  if (std::string_view("eEfFgGaA").find(letter) != std::string_view::npos) {
    format += "%" + flags + letter;
    fields.push_back({"double", convertScalar(fe, fe.val(&v), s, Scalar::Float64)});
    return;
  }
  format += "%" + flags + "ll" + letter;
  if (letter == 'd' || letter == 'i') {
    fields.push_back({"i64", convertScalar(fe, fe.val(&v), s, Scalar::Int64)});
    return;
  }
  // u, o, x, X read an integer's own bits, as C's printf of its type does (-1 in int32: ffffffff).
  std::string bits = fe.val(&v);
  if (v.type->isInt() && scalarSigned(s) && scalarBits(s) < 64) {
    Scalar same = scalarBits(s) == 8 ? Scalar::UInt8 : scalarBits(s) == 16 ? Scalar::UInt16 : Scalar::UInt32;
    bits = convertScalar(fe, bits, s, same);
    s = same;
  }
  fields.push_back({"i64", convertScalar(fe, bits, s, Scalar::UInt64)});
}

void lowerPrint(FunctionEmitter& fe, const ir::Instr& in) {
  if (in.intrinsic == ir::Intrinsic::NoneCheck) return lowerNoneCheck(fe, in);
  if (in.intrinsic == ir::Intrinsic::AssertTrap) return lowerAssertTrap(fe, in);
  std::string format;
  std::vector<std::pair<std::string, std::string>> fields;   // (type, value)
  size_t next = 0;
  for (size_t i = 0; i < in.ints.size(); ++i) {
    int64_t c = in.ints[i];
    if (c == ir::kTilePrintSlot) {
      std::string spec;
      int64_t n = in.ints.at(i + 1);
      for (int64_t k = 0; k < n; ++k) spec += static_cast<char>(in.ints.at(i + 2 + k));
      i += 1 + n;
      const ir::Instr* v = in.operands.at(next++);
      if (!v->type->isScalar() || v->type->isComplex()) fe.fail(in, "print", "cannot print " + typeToString(v->type));
      appendConverted(fe, *v, spec, format, fields);
      continue;
    }
    if (c != 1) {
      format += static_cast<char>(c);
      continue;
    }
    const ir::Instr* v = in.operands.at(next++);
    const Type* t = v->type;
    if (!t->isScalar() || t->isComplex()) fe.fail(in, "print", "cannot print " + typeToString(t));
    Scalar s = t->scalar;
    if (t->isBool()) {
      std::string yes = stringConstant(fe, "True"), no = stringConstant(fe, "False");
      format += "%s";
      fields.push_back({"i8*", fe.emit("select i1 " + fe.val(v) + ", i8* " + yes + ", i8* " + no)});
    } else if (t->isFloat()) {
      format += "%f";
      fields.push_back({"double", convertScalar(fe, fe.val(v), s, Scalar::Float64)});
    } else if (t->isSigned()) {
      format += "%lld";
      fields.push_back({"i64", convertScalar(fe, fe.val(v), s, Scalar::Int64)});
    } else {
      format += "%llu";
      fields.push_back({"i64", convertScalar(fe, fe.val(v), s, Scalar::UInt64)});
    }
  }
  callVprintf(fe, format, fields);
}

}  // namespace cj::codegen
