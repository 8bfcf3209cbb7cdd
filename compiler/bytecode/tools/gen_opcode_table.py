"""Regenerates compiler/bytecode/opcodes_3XX.def from the running interpreter's
`opcode` module (opcode numbers and inline-cache sizes are facts of CPython;
the normalised meaning of each opcode is the MEANING table below).

    python3.10 compiler/bytecode/tools/gen_opcode_table.py > compiler/bytecode/opcodes_310.def
    python3.11 compiler/bytecode/tools/gen_opcode_table.py > compiler/bytecode/opcodes_311.def
    python3.12 compiler/bytecode/tools/gen_opcode_table.py > compiler/bytecode/opcodes_312.def
    python3.13 compiler/bytecode/tools/gen_opcode_table.py > compiler/bytecode/opcodes_313.def

Adding support for a new CPython version starts here: run it under that
version, then read the diff against the previous table.
"""
import opcode
import sys

V = sys.version_info[:2]

# opcode name -> (normalised op, argument decoding, jump direction[, implied argument])
#   arg: PLAIN, LOWBIT (name = arg >> 1, flag = arg & 1), FLAG (flag = 1),
#        SHIFT4 (arg >> 4), SHIFT5 (arg >> 5), PAIR4 (two instructions in
#        one: arg >> 4 for the first, arg & 15 for the second), IMPLIED (the
#        fourth element: 3.10's BINARY_ADD is BINARY_OP 0, ROT_TWO is ROT 2)
#   jump: NOJ, FWD (next + arg), BACK (next - arg), ABS (arg: 3.10's absolute
#         jumps, counted in code units)
#
# 3.13 pushes a call's callable first and then self or NULL, where 3.11 and
# 3.12 push NULL (or the method) first: LOAD_GLOBAL and LOAD_ATTR, whose flag
# adds that NULL, have a normalised op per order. CALL itself reads both.
MEANING = {
    "CACHE": ("Cache", "PLAIN", "NOJ"),
    "EXTENDED_ARG": ("ExtendedArg", "PLAIN", "NOJ"),
    "NOP": ("Nop", "PLAIN", "NOJ"),
    "RESUME": ("Nop", "PLAIN", "NOJ"),
    "PRECALL": ("Nop", "PLAIN", "NOJ"),
    "COPY_FREE_VARS": ("Nop", "PLAIN", "NOJ"),
    "POP_TOP": ("PopTop", "PLAIN", "NOJ"),
    "PUSH_NULL": ("PushNull", "PLAIN", "NOJ"),
    "LOAD_CONST": ("LoadConst", "PLAIN", "NOJ"),
    "RETURN_CONST": ("ReturnConst", "PLAIN", "NOJ"),
    "RETURN_VALUE": ("ReturnValue", "PLAIN", "NOJ"),
    "LOAD_FAST": ("LoadFast", "PLAIN", "NOJ"),
    "LOAD_FAST_CHECK": ("LoadFast", "PLAIN", "NOJ"),
    "LOAD_FAST_AND_CLEAR": ("LoadFastAndClear", "PLAIN", "NOJ"),
    "STORE_FAST": ("StoreFast", "PLAIN", "NOJ"),
    # 3.13's superinstructions: the code reader splits each into its two parts.
    "LOAD_FAST_LOAD_FAST": ("LoadFastLoadFast", "PAIR4", "NOJ"),
    "STORE_FAST_STORE_FAST": ("StoreFastStoreFast", "PAIR4", "NOJ"),
    "STORE_FAST_LOAD_FAST": ("StoreFastLoadFast", "PAIR4", "NOJ"),
    "LOAD_GLOBAL": ("LoadGlobalNullAfter" if V >= (3, 13) else "LoadGlobal",
                    "LOWBIT" if V >= (3, 11) else "PLAIN", "NOJ"),
    "LOAD_ATTR": ("LoadAttrNullAfter" if V >= (3, 13) else "LoadAttr",
                  "LOWBIT" if V >= (3, 12) else "PLAIN", "NOJ"),
    "LOAD_METHOD": ("LoadAttr", "FLAG", "NOJ"),
    "LOAD_DEREF": ("LoadDeref", "PLAIN", "NOJ"),
    "BINARY_OP": ("BinaryOp", "PLAIN", "NOJ"),
    # 3.13: op << 5, bit 16 asks for a bool result (what TO_BOOL would give):
    # dropped, as TO_BOOL is.
    "COMPARE_OP": ("CompareOp", "SHIFT5" if V >= (3, 13) else "SHIFT4" if V >= (3, 12) else "PLAIN",
                   "NOJ"),
    # TO_BOOL (3.13) only ever feeds a POP_JUMP_IF_* or UNARY_NOT, which test
    # the truth of the value themselves (as they do in 3.11 and 3.12).
    "TO_BOOL": ("Nop", "PLAIN", "NOJ"),
    "IS_OP": ("IsOp", "PLAIN", "NOJ"),
    "UNARY_NEGATIVE": ("UnaryNeg", "PLAIN", "NOJ"),
    "UNARY_POSITIVE": ("UnaryPos", "PLAIN", "NOJ"),
    "UNARY_NOT": ("UnaryNot", "PLAIN", "NOJ"),
    "UNARY_INVERT": ("UnaryInvert", "PLAIN", "NOJ"),
    "CALL_INTRINSIC_1": ("CallIntrinsic1", "PLAIN", "NOJ"),
    "BINARY_SUBSCR": ("BinarySubscr", "PLAIN", "NOJ"),
    "BUILD_SLICE": ("BuildSlice", "PLAIN", "NOJ"),
    "BINARY_SLICE": ("BinarySlice", "PLAIN", "NOJ"),
    "STORE_SUBSCR": ("StoreSubscr", "PLAIN", "NOJ"),
    "STORE_ATTR": ("StoreAttr", "PLAIN", "NOJ"),   # records: r.x = v (typed by type inference)
    "BUILD_TUPLE": ("BuildTuple", "PLAIN", "NOJ"),
    "UNPACK_SEQUENCE": ("UnpackSequence", "PLAIN", "NOJ"),
    "COPY": ("Copy", "PLAIN", "NOJ"),
    "SWAP": ("Swap", "PLAIN", "NOJ"),
    "CALL": ("Call", "PLAIN", "NOJ"),
    "KW_NAMES": ("KwNames", "PLAIN", "NOJ"),
    # 3.13: the keyword names are the LOAD_CONST just before (the code reader
    # makes that pair KW_NAMES + CALL).
    "CALL_KW": ("CallKw", "PLAIN", "NOJ"),
    "JUMP_FORWARD": ("Jump", "PLAIN", "FWD"),
    "JUMP_BACKWARD": ("Jump", "PLAIN", "BACK"),
    "JUMP_BACKWARD_NO_INTERRUPT": ("Jump", "PLAIN", "BACK"),
    "POP_JUMP_IF_FALSE": ("PopJumpIfFalse", "PLAIN", "FWD"),
    "POP_JUMP_IF_TRUE": ("PopJumpIfTrue", "PLAIN", "FWD"),
    "POP_JUMP_IF_NONE": ("PopJumpIfNone", "PLAIN", "FWD"),
    "POP_JUMP_IF_NOT_NONE": ("PopJumpIfNotNone", "PLAIN", "FWD"),
    "POP_JUMP_FORWARD_IF_FALSE": ("PopJumpIfFalse", "PLAIN", "FWD"),
    "POP_JUMP_FORWARD_IF_TRUE": ("PopJumpIfTrue", "PLAIN", "FWD"),
    "POP_JUMP_FORWARD_IF_NONE": ("PopJumpIfNone", "PLAIN", "FWD"),
    "POP_JUMP_FORWARD_IF_NOT_NONE": ("PopJumpIfNotNone", "PLAIN", "FWD"),
    "POP_JUMP_BACKWARD_IF_FALSE": ("PopJumpIfFalse", "PLAIN", "BACK"),
    "POP_JUMP_BACKWARD_IF_TRUE": ("PopJumpIfTrue", "PLAIN", "BACK"),
    "POP_JUMP_BACKWARD_IF_NONE": ("PopJumpIfNone", "PLAIN", "BACK"),
    "POP_JUMP_BACKWARD_IF_NOT_NONE": ("PopJumpIfNotNone", "PLAIN", "BACK"),
    "JUMP_IF_FALSE_OR_POP": ("JumpIfFalseOrPop", "PLAIN", "FWD"),
    "JUMP_IF_TRUE_OR_POP": ("JumpIfTrueOrPop", "PLAIN", "FWD"),
    "GET_ITER": ("GetIter", "PLAIN", "NOJ"),
    "FOR_ITER": ("ForIter", "PLAIN", "FWD"),
    # 3.12's END_FOR pops the value and the iterator; 3.13's pops the value
    # and a POP_TOP follows for the iterator.
    "END_FOR": ("EndForValue" if V >= (3, 13) else "EndFor", "PLAIN", "NOJ"),
    "RAISE_VARARGS": ("RaiseVarargs", "PLAIN", "NOJ"),
    "LOAD_ASSERTION_ERROR": ("LoadAssertionError", "PLAIN", "NOJ"),
    # f-strings (print's arguments in tile code): FORMAT_VALUE's argument is
    # the conversion (& 3) and whether a format spec is on the stack (& 4);
    # 3.13 splits it into FORMAT_SIMPLE, FORMAT_WITH_SPEC and CONVERT_VALUE.
    "FORMAT_VALUE": ("FormatValue", "PLAIN", "NOJ"),
    "FORMAT_SIMPLE": ("FormatValue", "IMPLIED", "NOJ", 0),
    "FORMAT_WITH_SPEC": ("FormatValue", "IMPLIED", "NOJ", 4),
    "CONVERT_VALUE": ("ConvertValue", "PLAIN", "NOJ"),
    "BUILD_STRING": ("BuildString", "PLAIN", "NOJ"),
}

# 3.10: no inline caches, no NULL slot, one opcode per binary operator, ROT_*
# and DUP_* instead of SWAP and COPY, absolute conditional jumps.
if V < (3, 11):
    # BINARY_OP's argument for each operator (3.11's NB_* order), in place + 13.
    NB_OPS = ["ADD", "AND", "FLOOR_DIVIDE", "LSHIFT", "MATRIX_MULTIPLY", "MULTIPLY",
              "MODULO", "OR", "POWER", "RSHIFT", "SUBTRACT", "TRUE_DIVIDE", "XOR"]
    for k, name in enumerate(NB_OPS):
        MEANING["BINARY_" + name] = ("BinaryOp", "IMPLIED", "NOJ", k)
        MEANING["INPLACE_" + name] = ("BinaryOp", "IMPLIED", "NOJ", k + len(NB_OPS))
    MEANING.update({
        "ROT_TWO": ("Rot", "IMPLIED", "NOJ", 2),
        "ROT_THREE": ("Rot", "IMPLIED", "NOJ", 3),
        "ROT_FOUR": ("Rot", "IMPLIED", "NOJ", 4),
        "ROT_N": ("Rot", "PLAIN", "NOJ"),
        "DUP_TOP": ("Copy", "IMPLIED", "NOJ", 1),
        # [a, b] -> [a, b, a, b]: the code reader makes it two COPY 2.
        "DUP_TOP_TWO": ("DupTopTwo", "PLAIN", "NOJ"),
        "JUMP_ABSOLUTE": ("Jump", "PLAIN", "ABS"),
        "POP_JUMP_IF_FALSE": ("PopJumpIfFalse", "PLAIN", "ABS"),
        "POP_JUMP_IF_TRUE": ("PopJumpIfTrue", "PLAIN", "ABS"),
        "JUMP_IF_FALSE_OR_POP": ("JumpIfFalseOrPop", "PLAIN", "ABS"),
        "JUMP_IF_TRUE_OR_POP": ("JumpIfTrueOrPop", "PLAIN", "ABS"),
        # CALL_METHOD reads [method or NULL, self or callable, args] as 3.11's
        # CALL does; CALL_FUNCTION has no NULL slot; CALL_FUNCTION_KW's names
        # are the LOAD_CONST just before it (made KW_NAMES by the code reader).
        "CALL_METHOD": ("Call", "PLAIN", "NOJ"),
        "CALL_FUNCTION": ("CallFunction", "PLAIN", "NOJ"),
        "CALL_FUNCTION_KW": ("CallFunctionKw", "PLAIN", "NOJ"),
    })

# Unsupported opcodes: the construct named in the CompileError.
CONSTRUCT = {}
for names, what in [
    ("IMPORT_NAME IMPORT_FROM IMPORT_STAR", "import"),
    ("BUILD_LIST LIST_EXTEND LIST_TO_TUPLE", "list"),
    ("BUILD_MAP BUILD_CONST_KEY_MAP DICT_UPDATE DICT_MERGE", "dict"),
    ("BUILD_SET SET_UPDATE", "set"),
    ("LIST_APPEND SET_ADD MAP_ADD", "comprehension"),
    ("MAKE_FUNCTION SET_FUNCTION_ATTRIBUTE", "nested function"),
    ("LOAD_CLOSURE MAKE_CELL LOAD_CLASSDEREF LOAD_FROM_DICT_OR_DEREF",
     "closure created inside kernel"),
    ("STORE_DEREF", "nonlocal assignment"),
    ("BEFORE_WITH WITH_EXCEPT_START BEFORE_ASYNC_WITH SETUP_WITH SETUP_ASYNC_WITH", "with"),
    ("PUSH_EXC_INFO POP_EXCEPT CHECK_EXC_MATCH CHECK_EG_MATCH RERAISE "
     "PREP_RERAISE_STAR SETUP_FINALLY POP_BLOCK JUMP_IF_NOT_EXC_MATCH", "try/except"),
    ("YIELD_VALUE RETURN_GENERATOR SEND GET_YIELD_FROM_ITER END_SEND "
     "CLEANUP_THROW ASYNC_GEN_WRAP GEN_START YIELD_FROM", "generator"),
    ("GET_AWAITABLE GET_AITER GET_ANEXT END_ASYNC_FOR", "async"),
    ("CALL_FUNCTION_EX", "*args/**kwargs call"),
    ("UNPACK_EX", "starred assignment"),
    ("CONTAINS_OP", "in operator"),
    ("DELETE_FAST DELETE_SUBSCR DELETE_ATTR DELETE_NAME DELETE_GLOBAL DELETE_DEREF", "del"),
    ("STORE_SLICE", "slice assignment"),
    ("MATCH_CLASS MATCH_MAPPING MATCH_SEQUENCE MATCH_KEYS GET_LEN COPY_DICT_WITHOUT_KEYS",
     "match statement"),
    ("LOAD_NAME STORE_NAME LOAD_BUILD_CLASS SETUP_ANNOTATIONS LOAD_LOCALS "
     "LOAD_FROM_DICT_OR_GLOBALS", "module or class body"),
    ("LOAD_SUPER_ATTR", "super()"),
    ("PRINT_EXPR", "interactive statement"),
    ("STORE_GLOBAL", "STORE_GLOBAL"),
]:
    for n in names.split():
        CONSTRUCT[n] = what


def main():
    v = sys.version_info
    print(f"// Generated by tools/gen_opcode_table.py under CPython {v.major}.{v.minor}.{v.micro}:")
    print("// opcode numbers and inline-cache sizes are CPython's; the normalised op,")
    print("// argument decoding and jump direction are cudajit's (tools/ MEANING).")
    print("//")
    print("//   X(number, NAME, normalised op, arg decoding, jump, cache entries, construct, implied arg)")
    caches = getattr(opcode, "_inline_cache_entries", {})   # 3.10: none
    for num, name in enumerate(opcode.opname):
        if name.startswith("<") or num > 255:
            continue
        ncache = caches.get(name, 0) if isinstance(caches, dict) else caches[num]
        implied = 0
        if name in MEANING:
            op, arg, jump, *rest = MEANING[name]
            implied = rest[0] if rest else 0
            construct = ""
        else:
            op, arg, jump = "Unsupported", "PLAIN", "NOJ"
            if name.startswith("INSTRUMENTED_"):
                construct = "instrumented bytecode (sys.monitoring)"
            else:
                construct = CONSTRUCT.get(name, name)
        print(f'X({num:3d}, {name + ",":30s} {op + ",":20s} {arg + ",":7s} {jump + ",":5s} {ncache}, "{construct}", {implied})')


main()
