// forEachInParallel (parallel.h): a thread pool per call, job slots per process.
#include "libcalls/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cj::libcalls {
namespace {

class JobSlots {
 public:
  JobSlots() {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    if (const char* env = std::getenv("CUDAJIT_CUB_JOBS"); env && std::atoi(env) > 0)
      n = static_cast<unsigned>(std::atoi(env));
    free_ = n;
  }
  void acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned free_ = 1;
};

JobSlots& jobSlots() {
  static JobSlots slots;
  return slots;
}

}  // namespace

void forEachInParallel(size_t n, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        jobSlots().acquire();
        struct Release {
          ~Release() { jobSlots().release(); }
        } release;
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace cj::libcalls
