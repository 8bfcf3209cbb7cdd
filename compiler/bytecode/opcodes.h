// CPython opcodes of 3.11 and 3.12, normalised into one instruction form.
//
// The per-version tables (opcodes_311.def, opcodes_312.def) map each opcode
// number to a normalised op, how its argument is decoded, whether and which
// way it jumps, and how many inline-cache code units follow it. The decoder
// only ever sees the normalised form.
#pragma once
#include <cstdint>

namespace cj::bytecode {

// What an instruction does, independent of the interpreter version.
enum class NOp : uint8_t {
  Cache,             // inline cache entry (skipped)
  ExtendedArg,       // prefix (folded into the next instruction's argument)
  Nop,               // NOP, RESUME, PRECALL, COPY_FREE_VARS
  PopTop,
  PushNull,
  LoadConst,
  ReturnConst,       // 3.12
  ReturnValue,
  LoadFast,          // LOAD_FAST, LOAD_FAST_CHECK
  LoadFastAndClear,  // 3.12 (inlined comprehensions)
  StoreFast,
  LoadGlobal,        // flag: push NULL first
  LoadAttr,          // flag: method form (pushes NULL/self pair for CALL)
  LoadDeref,
  BinaryOp,
  CompareOp,
  IsOp,
  UnaryNeg,
  UnaryPos,
  UnaryNot,
  UnaryInvert,
  CallIntrinsic1,    // 3.12
  BinarySubscr,
  StoreSubscr,
  BuildSlice,        // arg 2 or 3: slice(start, stop[, step])
  BinarySlice,       // 3.12: obj[start:stop]
  BuildTuple,
  UnpackSequence,
  Copy,
  Swap,
  Call,
  KwNames,
  Jump,
  PopJumpIfFalse,
  PopJumpIfTrue,
  PopJumpIfNone,
  PopJumpIfNotNone,
  JumpIfFalseOrPop,  // 3.11
  JumpIfTrueOrPop,   // 3.11
  GetIter,
  ForIter,
  EndFor,            // 3.12
  RaiseVarargs,
  LoadAssertionError,
  Unsupported,       // construct names the feature in the CompileError
};

// How the raw oparg becomes (arg, flag).
enum class ArgMode : uint8_t {
  PLAIN,   // arg = oparg
  LOWBIT,  // arg = oparg >> 1, flag = oparg & 1
  FLAG,    // arg = oparg, flag = 1
  SHIFT4,  // arg = oparg >> 4
};

// Relative jump direction; targets count code units after the instruction's caches.
enum class JumpKind : uint8_t { NOJ, FWD, BACK };

struct OpcodeInfo {
  const char* name = nullptr;   // CPython's name; nullptr: not an opcode of this version
  NOp op = NOp::Unsupported;
  ArgMode arg = ArgMode::PLAIN;
  JumpKind jump = JumpKind::NOJ;
  int caches = 0;
  const char* construct = "";   // Unsupported: the construct named in errors
};

// The 256-entry table of an interpreter version (minor = 11 or 12); nullptr
// for any other version.
const OpcodeInfo* opcodeTable(int minor_version);

}  // namespace cj::bytecode
