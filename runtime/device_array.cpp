#include "runtime/device_array.h"

#include "runtime/errors.h"

namespace cj::rt {

int64_t elementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ArgumentValueError("negative dimension " + std::to_string(d) + " in a shape");
    if (d != 0 && n > INT64_MAX / d) throw ArgumentValueError("array shape too large");
    n *= d;
  }
  return n;
}

std::vector<int64_t> cStrides(const std::vector<int64_t>& shape, int itemsize) {
  std::vector<int64_t> s(shape.size());
  int64_t step = itemsize;
  for (size_t k = shape.size(); k-- > 0;) {
    s[k] = step;
    step *= shape[k] > 0 ? shape[k] : 1;
  }
  return s;
}

std::vector<int64_t> fStrides(const std::vector<int64_t>& shape, int itemsize) {
  std::vector<int64_t> s(shape.size());
  int64_t step = itemsize;
  for (size_t k = 0; k < shape.size(); ++k) {
    s[k] = step;
    step *= shape[k] > 0 ? shape[k] : 1;
  }
  return s;
}

namespace {
// True when each dimension of extent > 1 has the stride a dense layout in
// `order` would give it (numpy's definition of contiguity).
bool denseIn(const int64_t* shape, const int64_t* strides, size_t n, int itemsize, bool c_order) {
  int64_t step = itemsize;
  for (size_t j = 0; j < n; ++j) {
    size_t k = c_order ? n - 1 - j : j;
    if (shape[k] == 0) return true;   // an empty array is contiguous either way
    if (shape[k] != 1 && strides[k] != step) return false;
    step *= shape[k];
  }
  return true;
}
}  // namespace

bool isContiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                  int itemsize, bool c_order) {
  return denseIn(shape.data(), strides.data(), shape.size(), itemsize, c_order);
}

Layout layoutOf(const int64_t* shape, const int64_t* strides, int ndim, int itemsize) {
  const size_t n = static_cast<size_t>(ndim);
  if (denseIn(shape, strides, n, itemsize, /*c_order=*/true)) return Layout::C;
  if (denseIn(shape, strides, n, itemsize, /*c_order=*/false)) return Layout::F;
  return Layout::A;
}

Layout layoutOf(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                int itemsize) {
  return layoutOf(shape.data(), strides.data(), static_cast<int>(shape.size()), itemsize);
}

DeviceArray DeviceArray::allocate(std::vector<int64_t> shape, Scalar dtype, bool fortran, const Type* record) {
  DeviceArray a;
  a.dtype = dtype;
  a.record = record;
  const int64_t count = elementCount(shape);
  a.strides = fortran ? fStrides(shape, a.itemsize()) : cStrides(shape, a.itemsize());
  a.shape = std::move(shape);
  a.owner = DeviceBuffer::allocate(static_cast<size_t>(count) * a.itemsize());
  a.data = a.owner->ptr();
  return a;
}

int64_t DeviceArray::size() const { return elementCount(shape); }

const Type* DeviceArray::type() const {
  return record ? recordArrayTy(record, ndim(), layout()) : arrayTy(dtype, ndim(), layout());
}

}  // namespace cj::rt

namespace cj::rt {

bool scalarFromNumpy(char kind, int itemsize, Scalar* out) {
  // One row per scalar type: the numpy kind and byte size that spell it.
  static const struct { char kind; int size; Scalar s; } table[] = {
      {'b', 1, Scalar::Bool},      {'i', 1, Scalar::Int8},      {'i', 2, Scalar::Int16},
      {'i', 4, Scalar::Int32},     {'i', 8, Scalar::Int64},     {'u', 1, Scalar::UInt8},
      {'u', 2, Scalar::UInt16},    {'u', 4, Scalar::UInt32},    {'u', 8, Scalar::UInt64},
      {'f', 2, Scalar::Float16},   {'f', 4, Scalar::Float32},   {'f', 8, Scalar::Float64},
      {'c', 8, Scalar::Complex64}, {'c', 16, Scalar::Complex128},
  };
  for (const auto& row : table)
    if (row.kind == kind && row.size == itemsize) {
      *out = row.s;
      return true;
    }
  return false;
}

char numpyKind(Scalar s) {
  switch (scalarKind(s)) {
    case ScalarKind::Bool: return 'b';
    case ScalarKind::Int: return scalarSigned(s) ? 'i' : 'u';
    case ScalarKind::Float: return 'f';
    case ScalarKind::Complex: return 'c';
  }
  return '?';
}

std::string numpyTypestr(Scalar s) {
  const int size = scalarByteSize(s);
  // Byte order is meaningless for one-byte types; numpy spells them '|'.
  return std::string(1, size == 1 ? '|' : '<') + numpyKind(s) + std::to_string(size);
}

bool scalarFromTypestr(std::string_view t, Scalar* out) {
  if (t.size() < 3) return false;
  const char order = t[0];
  if (order != '<' && order != '=' && order != '|') return false;   // cudajit runs little-endian only
  int size = 0;
  for (char c : t.substr(2)) {
    if (c < '0' || c > '9') return false;
    size = size * 10 + (c - '0');
  }
  return scalarFromNumpy(t[1], size, out);
}

}  // namespace cj::rt

namespace cj::rt {

DeviceArray DeviceArray::allocateStrided(std::vector<int64_t> shape, std::vector<int64_t> strides,
                                         Scalar dtype, const Type* record) {
  if (strides.size() != shape.size())
    throw ArgumentValueError("strides must have one entry per dimension (" +
                             std::to_string(shape.size()) + "), not " +
                             std::to_string(strides.size()));
  for (int64_t s : strides)
    if (s < 0) throw ArgumentValueError("device_array: negative strides are not supported");
  DeviceArray a;
  a.dtype = dtype;
  a.record = record;
  const int64_t count = elementCount(shape);
  a.shape = std::move(shape);
  a.strides = std::move(strides);
  int64_t lo = 0, hi = 0;
  a.span(&lo, &hi);
  a.owner = DeviceBuffer::allocate(count ? static_cast<size_t>(hi) : 0);
  a.data = a.owner->ptr();
  return a;
}

void DeviceArray::span(int64_t* lo, int64_t* hi) const {
  *lo = 0;
  *hi = itemsize();
  if (size() == 0) {
    *hi = 0;
    return;
  }
  for (int k = 0; k < ndim(); ++k) {
    const int64_t reach = (shape[k] - 1) * strides[k];
    if (reach < 0) *lo += reach; else *hi += reach;
  }
}

namespace {

// Reshapes without a copy by matching groups of old and new axes whose
// extents multiply to the same number: inside a group the old axes must be
// laid out as one contiguous run (in C order: each stride is the next
// axis's stride times its extent), and then the new axes of the group get
// strides continuing that run. Works on axes in C order; F order is the
// same walk on reversed axes.
bool regroup(const std::vector<int64_t>& old_shape, const std::vector<int64_t>& old_strides,
             const std::vector<int64_t>& new_shape, std::vector<int64_t>* new_strides) {
  // Extent-1 axes carry no layout: drop them from the old side.
  std::vector<int64_t> os, ost;
  for (size_t k = 0; k < old_shape.size(); ++k)
    if (old_shape[k] != 1) {
      os.push_back(old_shape[k]);
      ost.push_back(old_strides[k]);
    }
  new_strides->assign(new_shape.size(), 0);
  size_t oi = 0, ni = 0;
  const size_t on = os.size(), nn = new_shape.size();
  while (oi < on && ni < nn) {
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = os[oi], np_ = new_shape[ni];
    while (op != np_) {
      if (op < np_) {
        if (oj >= on) return false;
        op *= os[oj++];
      } else {
        if (nj >= nn) return false;
        np_ *= new_shape[nj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)   // the old group is one contiguous run
      if (ost[k] != ost[k + 1] * os[k + 1]) return false;
    int64_t step = ost[oj - 1];   // the innermost old axis's stride
    for (size_t k = nj; k-- > ni;) {
      (*new_strides)[k] = step;
      step *= new_shape[k];
    }
    oi = oj;
    ni = nj;
  }
  // Trailing new axes of extent 1 (or everything, for a size-1 array).
  for (; ni < nn; ++ni) (*new_strides)[ni] = ni > 0 ? (*new_strides)[ni - 1] : 0;
  return oi == on;
}

}  // namespace

bool reshapedStrides(const DeviceArray& a, std::vector<int64_t>* shape, char order,
                     std::vector<int64_t>* strides) {
  if (order != 'C' && order != 'F' && order != 'A')
    throw ArgumentValueError("order must be 'C', 'F' or 'A'");
  const int64_t size = a.size();
  int unknown = -1;
  int64_t known = 1;
  for (size_t k = 0; k < shape->size(); ++k) {
    const int64_t d = (*shape)[k];
    if (d < 0) {
      if (d != -1 || unknown >= 0)
        throw ArgumentValueError("can only specify one unknown dimension (as -1)");
      unknown = static_cast<int>(k);
    } else {
      known *= d;
    }
  }
  if (unknown >= 0) {
    if (known == 0 || size % known != 0)
      throw ArgumentValueError("cannot reshape an array of size " + std::to_string(size) +
                               " into that shape");
    (*shape)[unknown] = size / known;
  } else if (known != size) {
    throw ArgumentValueError("cannot reshape an array of size " + std::to_string(size) +
                             " into a shape of size " + std::to_string(known));
  }
  if (order == 'A')
    order = isContiguous(a.shape, a.strides, a.itemsize(), false) &&
                    !isContiguous(a.shape, a.strides, a.itemsize(), true)
                ? 'F' : 'C';
  if (size == 0) {   // any strides do for an empty array
    *strides = order == 'F' ? fStrides(*shape, a.itemsize()) : cStrides(*shape, a.itemsize());
    return true;
  }
  if (order == 'C') return regroup(a.shape, a.strides, *shape, strides);
  std::vector<int64_t> os(a.shape.rbegin(), a.shape.rend()), ost(a.strides.rbegin(), a.strides.rend());
  std::vector<int64_t> ns(shape->rbegin(), shape->rend()), nst;
  if (!regroup(os, ost, ns, &nst)) return false;
  strides->assign(nst.rbegin(), nst.rend());
  return true;
}

}  // namespace cj::rt
