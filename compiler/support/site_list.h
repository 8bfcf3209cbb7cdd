// The site-packages directories a library search looks into for NVIDIA's pip
// wheels (nvidia/cu13/lib, ...): handed over from Python's sys.path, kept in
// order without repeats, read from any thread. One per search (libNVVM and
// nvJitLink, NVRTC and CCCL, libmathdx).
#pragma once
#include <mutex>
#include <string>
#include <vector>

namespace cj {

class SiteList {
 public:
  void add(const std::vector<std::string>& dirs) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& d : dirs) {
      if (d.empty()) continue;
      bool seen = false;
      for (const auto& e : dirs_) seen = seen || e == d;
      if (!seen) dirs_.push_back(d);
    }
  }
  std::vector<std::string> get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return dirs_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> dirs_;
};

}  // namespace cj
