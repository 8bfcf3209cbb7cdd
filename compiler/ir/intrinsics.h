// The typed-IR intrinsic table (intrinsics.def) as C++: an enum id per row
// (stored on the instruction, Instr::intrinsic) and the row's columns.
// Names are only for the text form, its parser and messages.
#pragma once
#include <cstdint>
#include <string_view>

namespace cj::ir {

enum class Intrinsic : uint16_t {
#define X(E, name, arity, family, access, f32, f64) E,
#include "ir/intrinsics.def"
#undef X
  Count   // not an intrinsic: the number of rows (and "none" on non-intrinsic instructions)
};

// The group an intrinsic belongs to (the .def's family column).
enum class IntrinsicFamily : uint8_t {
  Sreg,      // special registers: () -> i32
  Sync,      // barriers, fences, syncwarp, nanosleep
  Memory,    // shared / local array allocation
  Atomic,    // element accesses: (arr, indices..., values...) -> old value
  Cub,       // cooperative block / warp algorithms (LTO-IR library calls)
  Mathdx,    // MathDx device routines (LTO-IR library calls)
  Foreign,   // device functions the user links (cuda.declare_device)
  Libdevice, // cudajit.libdevice.*: any libdevice function (ir/libdevice.def)
  Math,      // math.* on floats (libdevice where the columns name one)
  Complex,   // complex parts, construction, abs
  Print,     // vprintf
  Warp,      // masks, shuffles, votes, match
  Bits,      // popc, brev, clz, ffs
  Cmath,     // cmath.* on complex numbers
  Round,     // round() with and without ndigits
  Global,    // loads and stores by address (what tiles lower to)
  Hint,      // cache-hinted element loads and stores (cuda.ldcg, cuda.stcs, ...)
  Mma,       // tensor-core instructions (what tile.dot lowers to)
  Tile,      // tile operations (removed by the tile pipeline before codegen)
};

struct IntrinsicInfo {
  Intrinsic id;
  std::string_view name;
  int arity;
  IntrinsicFamily family;
  int access;                       // value operands after the indices of an element access; 0: none
  std::string_view libdevice_f32;   // "" unless a uniform libdevice call
  std::string_view libdevice_f64;
};

// The parser's and the tests' name lookup (hashed); nullptr if the name is not in the table.
const IntrinsicInfo* findIntrinsic(std::string_view name);
const IntrinsicInfo& intrinsicInfo(Intrinsic id);
inline std::string_view intrinsicName(Intrinsic id) { return intrinsicInfo(id).name; }
inline IntrinsicFamily intrinsicFamily(Intrinsic id) { return intrinsicInfo(id).family; }
// Element accesses (atomics): operands array, indices, `access` values.
inline bool isElementAccess(Intrinsic id) { return intrinsicInfo(id).access > 0; }
// A uniform libdevice call (every operand and the result share one float type).
inline bool isLibdeviceCall(Intrinsic id) { return !intrinsicInfo(id).libdevice_f32.empty(); }

// Intrinsics without side effects that dead-code elimination may remove
// (the op `intrinsic` is SIDE as a whole): the tile operations but stores,
// and array_address.
inline bool isPureIntrinsic(Intrinsic id) {
  return (intrinsicFamily(id) == IntrinsicFamily::Tile && id != Intrinsic::TileStore && id != Intrinsic::TileScatter &&
          id != Intrinsic::TileAtomic && id != Intrinsic::TilePrint && id != Intrinsic::TileAssert) ||
         id == Intrinsic::ArrayAddress;
}

// The attributes of tile intrinsics (Instr::ints[0] of tile.load: the padding;
// of tile.reduce / argreduce / scan: the combining operation). Values are
// part of the IR text: append only.
enum class TilePadding : int64_t { Undetermined, Zero, NegZero, Nan, PosInf, NegInf };
enum class TileReduceKind : int64_t { Sum, Prod, Max, Min, And, Or, Xor };
enum class TileAtomicKind : int64_t { Add, Max, Min, And, Or, Xor, Xchg, Cas };
// An atomic's memory order and scope (tile.atomic ints[2..3], global.atomic_if ints[1..2]).
enum class TileMemoryOrder : int64_t { Relaxed, Acquire, Release, AcqRel };
enum class TileMemoryScope : int64_t { Block, Cluster, Device, System };
// In the template of print and tile.print (Instr::ints), where an operand goes:
// then the length n of its printf conversion and n characters (flags, width,
// precision, the conversion letter); n = 0: the default for its type.
constexpr int64_t kTilePrintSlot = -1;

}  // namespace cj::ir
