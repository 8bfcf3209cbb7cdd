// A TMA tensor map a tile kernel receives beside its arguments: the launch
// encodes one per spec (cuTensorMapEncodeTiled) for the array argument `arg`,
// a box of box_rows x box_cols elements (columns contiguous in memory) that
// lands in shared memory 128-byte swizzled (docs/tiles.md, "Matmul"). The
// kernel also receives one flag: whether every map could be encoded (the
// array's base and row stride 16-byte aligned, its last stride one element);
// where not, it takes its cp.async route.
//
// Text form (IR function headers, the kernel cache): "arg:dtype:rowsxcols",
// e.g. "0:f16:128x64"; a list joins them with ';'.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "types/types.h"

namespace cj {

struct TensorMapSpec {
  int arg = 0;
  Scalar dtype = Scalar::Float16;
  int64_t box_rows = 0, box_cols = 0;
  bool operator==(const TensorMapSpec& o) const {
    return arg == o.arg && dtype == o.dtype && box_rows == o.box_rows && box_cols == o.box_cols;
  }
};

std::string tensorMapsToString(const std::vector<TensorMapSpec>& maps);
// False (and *out untouched) for text that is not such a list.
bool parseTensorMaps(std::string_view text, std::vector<TensorMapSpec>* out);

}  // namespace cj
