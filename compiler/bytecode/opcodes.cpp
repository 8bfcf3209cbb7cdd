#include "bytecode/opcodes.h"

#include <array>

namespace cj::bytecode {
namespace {

using Table = std::array<OpcodeInfo, 256>;

// One table per CPython version, from its generated rows.
#define X(num, NAME, nop, argmode, jump, caches, construct, implied) \
  t[num] = OpcodeInfo{#NAME, NOp::nop, ArgMode::argmode, JumpKind::jump, caches, construct, implied};

Table build310() {
  Table t{};
#include "bytecode/opcodes_310.def"
  return t;
}

Table build311() {
  Table t{};
#include "bytecode/opcodes_311.def"
  return t;
}

Table build312() {
  Table t{};
#include "bytecode/opcodes_312.def"
  return t;
}

Table build313() {
  Table t{};
#include "bytecode/opcodes_313.def"
  return t;
}

#undef X

}  // namespace

const OpcodeInfo* opcodeTable(int minor_version) {
  static const Table t310 = build310();
  static const Table t311 = build311();
  static const Table t312 = build312();
  static const Table t313 = build313();
  switch (minor_version) {
    case 10: return t310.data();
    case 11: return t311.data();
    case 12: return t312.data();
    case 13: return t313.data();
    default: return nullptr;
  }
}

}  // namespace cj::bytecode
