// SHA-256 (FIPS 180-4): cache keys and the checksum every cache entry
// carries (support/disk_cache.h). Small and dependency-free; hashing a
// kernel's IR text takes microseconds, nothing next to a compile.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cj {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // finishes; the object is spent afterwards

 private:
  void compress(const uint8_t* block);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::array<uint8_t, 32> sha256(std::string_view data);
std::string toHex(const uint8_t* data, size_t size);
std::string sha256Hex(std::string_view data);

}  // namespace cj
