// Spelling <-> value of libmathdx's enumerations (the tables in enums.def).
#pragma once
#include <string>

namespace cj::mathdx {

enum class EnumKind {
  Precision, DataType, Arrangement, Transpose, Execution, Function,
  FftType, Direction, ComplexLayout, RealMode,
  Generator, Distribution, GenerateMethod, NormalMethod,
};

// The enum value of a spelling; throws CompileError naming the valid ones.
int parseEnum(EnumKind kind, const std::string& spelling);
// The spelling of a value, or "" for one not in the table.
std::string enumName(EnumKind kind, int value);

struct ValueType {
  const char* name;
  int value;
  int size;
  int align;
};
// The row of a commondxValueType, or null; by its name ("float32"), or null.
const ValueType* findValueType(int value);
const ValueType* findValueType(const std::string& name);

}  // namespace cj::mathdx
