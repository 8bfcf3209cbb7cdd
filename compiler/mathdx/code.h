// What every libmathdx routine shares once its descriptor is set: a handle
// owner and the finalization of a descriptor into LTO-IR (stage-internal).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "mathdx/library.h"

namespace cj::mathdx {

// Owns a libmathdx handle (descriptor or code).
struct Handle {
  long long h = 0;
  int (*destroy)(long long);
  Handle(int (*d)(long long)) : destroy(d) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (h) destroy(h);
  }
};

// One operator a descriptor sets: one value or several.
struct Operator {
  int id;
  const char* name;
  std::vector<long long> values;
};

// The library's two setters (xxxSetOperatorInt64 / ...Int64s; `many` may be
// null for a library with one), named `library` ("cublasdx") in errors.
struct OperatorSetters {
  const char* library;
  int (*one)(long long handle, int op, long long value);
  int (*many)(long long handle, int op, size_t count, const long long* values);
};

// Sets each operator on the descriptor, checking each status; `spec` names
// the descriptor in errors ("cufftdxSetOperatorInt64(SIZE, 128) failed ...").
void setOperators(const Api& a, long long handle, const std::vector<Operator>& ops, const OperatorSetters& set,
                  const std::string& spec);

// A string trait (a symbol's name) through the library's size and string
// getters; `call` names the trait in errors ("cufftdxGetTraitStr(SYMBOL_NAME)").
using TraitStrSize = int (*)(long long handle, int trait, size_t* size);
using TraitStr = int (*)(long long handle, int trait, size_t size, char* value);
std::string traitString(const Api& a, long long handle, int trait, TraitStrSize size, TraitStr get,
                        const std::string& call, const std::string& spec);

// A commondx code handle for sm_<sm> LTO-IR, finalized by `finalize(code)`
// (cublasdxFinalizeCode / cufftdxFinalizeCode of the descriptor, its status
// checked as `finalize_call`); all its LTO-IR modules. `spec` names the
// descriptor in errors. `arch_specific`: for sm_<sm>a (what a pipeline's
// TMA code needs).
std::vector<std::vector<char>> finalizeLtoir(const Api& a, int sm, const std::function<int(long long)>& finalize,
                                             const std::string& finalize_call, const std::string& spec,
                                             bool arch_specific = false);

}  // namespace cj::mathdx
