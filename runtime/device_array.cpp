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

DeviceArray DeviceArray::allocate(std::vector<int64_t> shape, Scalar dtype, bool fortran) {
  DeviceArray a;
  a.dtype = dtype;
  const int64_t count = elementCount(shape);
  a.strides = fortran ? fStrides(shape, a.itemsize()) : cStrides(shape, a.itemsize());
  a.shape = std::move(shape);
  a.owner = DeviceBuffer::allocate(static_cast<size_t>(count) * a.itemsize());
  a.data = a.owner->ptr();
  return a;
}

int64_t DeviceArray::size() const { return elementCount(shape); }

const Type* DeviceArray::type() const { return arrayTy(dtype, ndim(), layout()); }

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
