// kernel[grid, block, stream, shared_bytes]: the launch configuration, parsed
// from the subscript in C++, and remembered per kernel so that the loop
//     for ...: kernel[blocks, threads](x, y)
// parses its subscript once.
#pragma once
#include <Python.h>

#include <array>

#include "runtime/cuda_api.h"

namespace cj::rt {

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  cu::CUstream stream = nullptr;
  // False: no stream was given; the launch picks one from its arguments
  // (PyTorch's or CuPy's current stream, else the default stream).
  bool stream_given = false;
  unsigned shared_bytes = 0;
};

// Parses kernel[...]'s key: (grid, block[, stream[, shared_bytes]]), each
// dimension an int, a tuple of 1-3 ints or an object with x, y, z; the
// stream as streamFromPython (args.h) reads it. Throws ArgumentTypeError /
// ArgumentValueError (TypeError / ValueError in Python).
LaunchConfig parseLaunchConfig(PyObject* key);

// The last few configurations of one kernel, keyed by the subscript object:
// the same tuple (a constant of the caller's code) by identity, else an
// equal one (ints compared by value, anything else by identity). Only keys
// made of ints, tuples of ints and None are kept, so that a stream object
// is never held alive here.
class LaunchConfigCache {
 public:
  LaunchConfigCache() = default;
  ~LaunchConfigCache();   // needs the GIL (releases the keys)
  LaunchConfigCache(const LaunchConfigCache&) = delete;
  LaunchConfigCache& operator=(const LaunchConfigCache&) = delete;

  const LaunchConfig* find(PyObject* key);
  void insert(PyObject* key, const LaunchConfig& config);
  void clear();

 private:
  struct Entry {
    PyObject* key = nullptr;   // strong reference
    LaunchConfig config;
  };
  std::array<Entry, 8> entries_{};
  unsigned next_ = 0;
  unsigned last_hit_ = 0;
};

}  // namespace cj::rt
