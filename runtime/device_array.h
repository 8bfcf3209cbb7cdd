// DeviceArray: an n-d view of device memory (cudajit.DeviceNDArray).
//
// It owns (shares) the allocation it views, so slices keep their parent's
// memory alive. Strides are in bytes, as numpy and __cuda_array_interface__
// give them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/memory.h"
#include "types/types.h"

namespace cj::rt {

// Contiguity of a strided layout, numpy's rules (extent-1 dimensions do not
// count; C wins when an array is both, as for 1-d).
Layout layoutOf(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                int itemsize);
Layout layoutOf(const int64_t* shape, const int64_t* strides, int ndim, int itemsize);
// numpy's C_CONTIGUOUS / F_CONTIGUOUS flags.
bool isContiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                  int itemsize, bool c_order);
std::vector<int64_t> cStrides(const std::vector<int64_t>& shape, int itemsize);
std::vector<int64_t> fStrides(const std::vector<int64_t>& shape, int itemsize);
// Product of the shape; throws ArgumentValueError on a negative extent or overflow.
int64_t elementCount(const std::vector<int64_t>& shape);

struct DeviceArray {
  std::shared_ptr<DeviceBuffer> owner;
  cu::CUdeviceptr data = 0;        // first element (may be inside owner)
  Scalar dtype = Scalar::Float64;
  // An array of records (a numpy structured dtype): its record type; `dtype`
  // is then meaningless. The binding keeps the numpy dtype object (runtime_py).
  const Type* record = nullptr;
  // numba's DeviceRecord: the one record of to_device(a numpy.void), a 0-d
  // array that kernels receive as the record itself (not a 0-d array).
  bool record_scalar = false;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;    // bytes
  // The stream bound with bind(stream) / created with stream= (numba's
  // DeviceNDArray.stream): the default of this array's copies. `bound` keeps
  // the stream's Python object alive; null means no stream (numba's 0).
  cu::CUstream stream = nullptr;
  std::shared_ptr<void> bound;

  // A fresh allocation (C order unless `fortran`).
  static DeviceArray allocate(std::vector<int64_t> shape, Scalar dtype, bool fortran = false,
                              const Type* record = nullptr);
  // A fresh allocation with explicit (non-negative) byte strides: as many
  // bytes as the strides reach.
  static DeviceArray allocateStrided(std::vector<int64_t> shape, std::vector<int64_t> strides,
                                     Scalar dtype, const Type* record = nullptr);

  int ndim() const { return static_cast<int>(shape.size()); }
  int itemsize() const { return record ? static_cast<int>(record->size) : scalarByteSize(dtype); }
  int64_t size() const;
  int64_t nbytes() const { return size() * itemsize(); }
  Layout layout() const { return layoutOf(shape, strides, itemsize()); }
  bool contiguous() const { return layout() != Layout::A; }
  // The array's type as a kernel argument: array(dtype, ndim, layout) (of records: its record).
  const Type* type() const;
  // Byte range [lo, hi) the view touches, relative to `data` (lo <= 0).
  void span(int64_t* lo, int64_t* hi) const;
};

// numpy's reshape without a copy: the strides of `a` viewed with `shape`
// (one entry may be -1) read in `order` ('C', 'F', or 'A': F when `a` is
// F-contiguous only). False when only a copy could give that shape; throws
// ArgumentValueError when the sizes differ.
bool reshapedStrides(const DeviceArray& a, std::vector<int64_t>* shape, char order,
                     std::vector<int64_t>* strides);

}  // namespace cj::rt

namespace cj::rt {

// numpy dtype (kind char, itemsize) <-> Scalar: ('f', 4) -> Float32,
// ('b', 1) -> Bool. False for kinds cudajit has no type for.
bool scalarFromNumpy(char kind, int itemsize, Scalar* out);
char numpyKind(Scalar s);   // 'b', 'i', 'u', 'f', 'c'
// The __cuda_array_interface__ typestr: "<f4", "|b1", "|u1".
std::string numpyTypestr(Scalar s);
// Parses a typestr ("<f4", "=i8", "|b1"); false if not native-endian or unknown.
bool scalarFromTypestr(std::string_view typestr, Scalar* out);

}  // namespace cj::rt
