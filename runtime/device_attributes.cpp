#include "runtime/device_attributes.h"

#include <cstdio>

#include "runtime/context.h"
#include "runtime/driver.h"

namespace cj::rt {
namespace {

struct AttributeRow {
  const char* name;
  int code;
};

constexpr AttributeRow kAttributes[] = {
#define CJ_DEVICE_ATTRIBUTE(name, value) {#name, value},
#include "runtime/device_attributes.def"
#undef CJ_DEVICE_ATTRIBUTE
};

}  // namespace

bool deviceAttributeCode(std::string_view name, int* code) {
  for (const AttributeRow& row : kAttributes)
    if (name == row.name) {
      *code = row.code;
      return true;
    }
  return false;
}

std::vector<std::string> deviceAttributeNames() {
  std::vector<std::string> out;
  for (const AttributeRow& row : kAttributes) out.emplace_back(row.name);
  return out;
}

int deviceAttribute(int ordinal, int code) {
  const cu::CUdevice dev = deviceHandle(ordinal);
  int v = 0;
  CJ_CU(cuDeviceGetAttribute, &v, code, dev);
  return v;
}

std::string deviceUuid(int ordinal) {
  const cu::CUdevice dev = deviceHandle(ordinal);
  unsigned char b[16] = {};
  CJ_CU_OPT(cuDeviceGetUuid, reinterpret_cast<char*>(b), dev);
  char text[64];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

int maxPotentialBlockSize(cu::CUfunction fn, size_t shared_bytes, int block_limit) {
  int min_grid = 0, block = 0;
  CJ_CU_OPT(cuOccupancyMaxPotentialBlockSize, &min_grid, &block, fn, nullptr, shared_bytes,
            block_limit);
  return block;
}

void profilerStart() {
  ensureContext();
  CJ_CU_OPT(cuProfilerStart);
}

void profilerStop() {
  ensureContext();
  CJ_CU_OPT(cuProfilerStop);
}

}  // namespace cj::rt
