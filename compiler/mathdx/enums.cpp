#include "mathdx/enums.h"

#include "support/error.h"

namespace cj::mathdx {
namespace {

struct Named {
  const char* name;
  int value;
};

struct Table {
  const char* what;   // for messages
  const Named* rows;
  size_t count;
};

#define ROW(spelling, value) {spelling, value},
const Named kPrecision[] = {
#define CJ_MATHDX_PRECISION ROW
#include "mathdx/enums.def"
};
const Named kDataType[] = {
#define CJ_MATHDX_DATA_TYPE ROW
#include "mathdx/enums.def"
};
const Named kArrangement[] = {
#define CJ_MATHDX_ARRANGEMENT ROW
#include "mathdx/enums.def"
};
const Named kTranspose[] = {
#define CJ_MATHDX_TRANSPOSE ROW
#include "mathdx/enums.def"
};
const Named kExecution[] = {
#define CJ_MATHDX_EXECUTION ROW
#include "mathdx/enums.def"
};
const Named kFunction[] = {
#define CJ_MATHDX_FUNCTION ROW
#include "mathdx/enums.def"
};
const Named kFftType[] = {
#define CJ_MATHDX_FFT_TYPE ROW
#include "mathdx/enums.def"
};
const Named kDirection[] = {
#define CJ_MATHDX_DIRECTION ROW
#include "mathdx/enums.def"
};
const Named kComplexLayout[] = {
#define CJ_MATHDX_COMPLEX_LAYOUT ROW
#include "mathdx/enums.def"
};
const Named kRealMode[] = {
#define CJ_MATHDX_REAL_MODE ROW
#include "mathdx/enums.def"
};
const Named kGenerator[] = {
#define CJ_MATHDX_GENERATOR ROW
#include "mathdx/enums.def"
};
const Named kDistribution[] = {
#define CJ_MATHDX_DISTRIBUTION ROW
#include "mathdx/enums.def"
};
const Named kGenerateMethod[] = {
#define CJ_MATHDX_GENERATE_METHOD ROW
#include "mathdx/enums.def"
};
const Named kNormalMethod[] = {
#define CJ_MATHDX_NORMAL_METHOD ROW
#include "mathdx/enums.def"
};
#undef ROW

const ValueType kValueTypes[] = {
#define CJ_MATHDX_VALUE_TYPE(name, value, size, align) {name, value, size, align},
#include "mathdx/enums.def"
};

#define TABLE(what, rows) Table{what, rows, sizeof rows / sizeof rows[0]}
// Indexed by EnumKind.
const Table kTables[] = {
    TABLE("precision", kPrecision),     TABLE("data_type", kDataType),
    TABLE("arrangement", kArrangement), TABLE("transpose_mode", kTranspose),
    TABLE("execution", kExecution),     TABLE("function", kFunction),
    TABLE("fft_type", kFftType),        TABLE("direction", kDirection),
    TABLE("complex_layout", kComplexLayout), TABLE("real_mode", kRealMode),
    TABLE("generator", kGenerator),     TABLE("distribution", kDistribution),
    TABLE("method", kGenerateMethod),   TABLE("normal_method", kNormalMethod),
};
#undef TABLE

}  // namespace

int parseEnum(EnumKind kind, const std::string& spelling) {
  const Table& t = kTables[static_cast<int>(kind)];
  std::string valid;
  for (size_t i = 0; i < t.count; ++i) {
    if (spelling == t.rows[i].name) return t.rows[i].value;
    valid += std::string(i ? ", " : "") + "'" + t.rows[i].name + "'";
  }
  throw CompileError("", 0, 0, std::string("mathdx ") + t.what,
                     "unknown " + std::string(t.what) + " '" + spelling + "' (expected one of " + valid + ")");
}

std::string enumName(EnumKind kind, int value) {
  const Table& t = kTables[static_cast<int>(kind)];
  for (size_t i = 0; i < t.count; ++i)
    if (t.rows[i].value == value) return t.rows[i].name;
  return {};
}

const ValueType* findValueType(int value) {
  for (const ValueType& v : kValueTypes)
    if (v.value == value) return &v;
  return nullptr;
}

const ValueType* findValueType(const std::string& name) {
  for (const ValueType& v : kValueTypes)
    if (name == v.name) return &v;
  return nullptr;
}

}  // namespace cj::mathdx
