#include "runtime/arg_types.h"

#include <atomic>

namespace cj::rt {
namespace {

constexpr int kScalars = 0
#define X(E, short_name, numba_name, kind, bits, is_signed, nvvm, np) +1
#include "types/scalars.def"
#undef X
    ;
constexpr int kLayouts = 3;

std::atomic<const Type*> g_scalars[kScalars];
std::atomic<const Type*> g_arrays[kScalars][kMaxArrayDims + 1][kLayouts];

}  // namespace

const Type* scalarArgType(Scalar s) {
  std::atomic<const Type*>& slot = g_scalars[static_cast<int>(s)];
  const Type* t = slot.load(std::memory_order_acquire);
  if (!t) {
    t = scalarTy(s);   // interned: every thread stores the same pointer
    slot.store(t, std::memory_order_release);
  }
  return t;
}

const Type* arrayArgType(Scalar dtype, int ndim, Layout layout) {
  std::atomic<const Type*>& slot = g_arrays[static_cast<int>(dtype)][ndim][static_cast<int>(layout)];
  const Type* t = slot.load(std::memory_order_acquire);
  if (!t) {
    t = arrayTy(dtype, ndim, layout);
    slot.store(t, std::memory_order_release);
  }
  return t;
}

}  // namespace cj::rt
