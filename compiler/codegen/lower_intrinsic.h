// The intrinsic lowerings of codegen, one file per family of
// ir/intrinsics.def (IntrinsicFamily); lower_intrinsic.cpp dispatches on the
// instruction's family and id. Each function lowers every intrinsic of its
// family and fails (FunctionEmitter::fail) on one it does not know.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "codegen/emitter.h"

namespace cj::codegen {

// `call ret @fn(args)`, declaring fn; the result value, or "" when !value.
std::string declareCall(FunctionEmitter& fe, const std::string& ret, const std::string& fn,
                        const std::vector<std::pair<std::string, std::string>>& args, bool value = true);
inline std::string intOfWidth(int bits) { return "i" + std::to_string(bits); }

void lowerSyncIntrinsic(FunctionEmitter& fe, const ir::Instr& in);        // lower_sync.cpp
void lowerWarpIntrinsic(FunctionEmitter& fe, const ir::Instr& in);        // lower_warp.cpp
void lowerBitIntrinsic(FunctionEmitter& fe, const ir::Instr& in);         // lower_bits.cpp
void lowerFloatMathIntrinsic(FunctionEmitter& fe, const ir::Instr& in);   // lower_float_math.cpp
void lowerAtomicIntrinsic(FunctionEmitter& fe, const ir::Instr& in);      // lower_atomic.cpp
void lowerGlobalIntrinsic(FunctionEmitter& fe, const ir::Instr& in);      // lower_global.cpp
void lowerMmaIntrinsic(FunctionEmitter& fe, const ir::Instr& in);         // lower_mma.cpp

}  // namespace cj::codegen
