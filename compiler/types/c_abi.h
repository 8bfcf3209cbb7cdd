// The C ABI of an extern "C" device function in cudajit's scalar types:
// what a library's entry point takes and returns (libcalls/library_call.h).
// Code generators turn it into their own declaration syntax
// (codegen::nvvmDeclaration); no LLVM text lives here.
#pragma once
#include <cstdint>
#include <vector>

#include "types/types.h"

namespace cj {

struct CType {
  enum class Kind : uint8_t {
    Void,          // return type only
    Value,         // a `scalar` by value
    Pointer,       // a generic pointer to `scalar`s
    VoidPointer,   // void* (temp storage)
  };
  Kind kind = Kind::Void;
  Scalar scalar = Scalar::Int8;   // Value / Pointer

  static CType voidType() { return {}; }
  static CType value(Scalar s) { return {Kind::Value, s}; }
  static CType pointer(Scalar s) { return {Kind::Pointer, s}; }
  static CType voidPointer() { return {Kind::VoidPointer, Scalar::Int8}; }
  bool operator==(const CType& o) const {
    return kind == o.kind && (kind == Kind::Void || kind == Kind::VoidPointer || scalar == o.scalar);
  }
};

struct CSignature {
  CType ret;
  std::vector<CType> params;
};

}  // namespace cj
