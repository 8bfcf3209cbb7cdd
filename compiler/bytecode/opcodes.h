// CPython opcodes of 3.10 to 3.13, normalised into one instruction form.
//
// The per-version tables (opcodes_310.def ... opcodes_313.def)
// map each opcode number to a normalised op, how its argument is decoded,
// whether and which way it jumps, and how many inline-cache code units follow
// it. The decoder only ever sees the normalised form.
#pragma once
#include <cstdint>

namespace cj::bytecode {

// What an instruction does, independent of the interpreter version.
enum class NOp : uint8_t {
  Cache,             // inline cache entry (skipped)
  ExtendedArg,       // prefix (folded into the next instruction's argument)
  Nop,               // NOP, RESUME, PRECALL, COPY_FREE_VARS, TO_BOOL (3.13)
  PopTop,
  PushNull,
  LoadConst,
  ReturnConst,       // 3.12
  ReturnValue,
  LoadFast,          // LOAD_FAST, LOAD_FAST_CHECK
  LoadFastAndClear,  // 3.12 (inlined comprehensions)
  StoreFast,
  // 3.13's superinstructions (PAIR4): the code reader splits each into its
  // two parts, so the decoder never sees them.
  LoadFastLoadFast,
  StoreFastStoreFast,
  StoreFastLoadFast,
  // A call's NULL slot: 3.11 and 3.12 push it before the callable, 3.13
  // after (CALL reads both orders).
  LoadGlobal,           // flag: push NULL, then the global (3.11, 3.12; 3.10 has no flag)
  LoadGlobalNullAfter,  // flag: push the global, then NULL (3.13)
  LoadAttr,             // flag: method form: NULL, then the bound callable (3.10's LOAD_METHOD, 3.11, 3.12)
  LoadAttrNullAfter,    // flag: method form: the bound callable, then NULL (3.13)
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
  StoreAttr,         // obj.name = value (records); arg: the co_names index
  BuildSlice,        // arg 2 or 3: slice(start, stop[, step])
  BinarySlice,       // 3.12: obj[start:stop]
  BuildTuple,
  UnpackSequence,
  FormatValue,       // f-string part: arg & 3 the conversion, arg & 4 a format spec on the stack
  ConvertValue,      // 3.13: arg the conversion (1 !s, 2 !r, 3 !a)
  BuildString,       // arg parts of an f-string
  Copy,
  Swap,
  Rot,               // 3.10's ROT_TWO/THREE/FOUR/N: the top value moves down to slot arg
  DupTopTwo,         // 3.10: the code reader makes it two COPY 2
  Call,              // [NULL or method, callable or self, args] (3.10's CALL_METHOD, 3.11, 3.12),
                     // [callable, self or NULL, args] (3.13)
  KwNames,
  CallKw,            // 3.13: the code reader makes it and the LOAD_CONST of its
                     // keyword names KwNames + Call
  CallFunction,      // 3.10's CALL_FUNCTION: [callable, args], no NULL slot
  CallFunctionKw,    // 3.10: the code reader makes it and the LOAD_CONST of its
                     // keyword names KwNames + CallFunction
  Jump,
  PopJumpIfFalse,
  PopJumpIfTrue,
  PopJumpIfNone,
  PopJumpIfNotNone,
  JumpIfFalseOrPop,  // 3.10, 3.11
  JumpIfTrueOrPop,   // 3.10, 3.11
  GetIter,
  ForIter,
  EndFor,            // 3.12: pops the value and the iterator
  EndForValue,       // 3.13: pops the value (the POP_TOP after it, the iterator)
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
  SHIFT5,  // arg = oparg >> 5 (3.13's COMPARE_OP: bit 16, "as bool", is dropped as TO_BOOL is)
  PAIR4,   // two instructions in one: arg = oparg >> 4 for the first, oparg & 15 for the second
  IMPLIED, // arg = the table's implied argument (3.10's BINARY_ADD is BINARY_OP 0, ROT_TWO is ROT 2)
};

// Jumps: relative ones count code units from after the instruction's caches;
// ABS (3.10) names the target code unit itself.
enum class JumpKind : uint8_t { NOJ, FWD, BACK, ABS };

struct OpcodeInfo {
  const char* name = nullptr;   // CPython's name; nullptr: not an opcode of this version
  NOp op = NOp::Unsupported;
  ArgMode arg = ArgMode::PLAIN;
  JumpKind jump = JumpKind::NOJ;
  int caches = 0;
  const char* construct = "";   // Unsupported: the construct named in errors
  int implied = 0;              // ArgMode::IMPLIED: the argument
};

// The 256-entry table of an interpreter version (minor = 10 to 13); nullptr
// for any other version.
const OpcodeInfo* opcodeTable(int minor_version);

}  // namespace cj::bytecode
