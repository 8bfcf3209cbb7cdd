#include "driver/cub_link.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <cstring>
#include <functional>
#include <exception>
#include <set>
#include <thread>

#include "cub/cub.h"
#include "support/error.h"

namespace cj::driver {

namespace {

bool isCubCall(const ir::Instr& in) { return in.isIntrinsic(ir::Intrinsic::CubCall); }

// The normalized spec of a call of a block algorithm that uses the block's
// shared storage; false for other instructions.
bool storageUser(const ir::Instr& in, cub::Spec* spec) {
  if (!isCubCall(in)) return false;
  cub::Spec s;
  std::string error;
  if (!cub::parseSpec(in.cval.s, &s, &error) || !cub::tryNormalize(s, &s, &error)) return false;
  if (!cub::usesBlockTempStorage(s)) return false;
  if (spec) *spec = s;
  return true;
}

bool anyStorageUser(const ir::Block& b, size_t from, size_t to) {
  for (size_t k = from; k < to && k < b.instrs.size(); ++k)
    if (storageUser(*b.instrs[k], nullptr)) return true;
  return false;
}

// May another call that uses the storage (or the same one, in a loop) run
// after instruction `at` of block `b`?
bool storageUsedAfter(const ir::Block* b, size_t at) {
  if (anyStorageUser(*b, at + 1, b->instrs.size())) return true;
  std::set<const ir::Block*> seen;
  std::vector<const ir::Block*> stack;
  auto push = [&](const ir::Block* from) {
    if (const ir::Instr* t = from->terminator())
      for (const auto& e : t->succs) stack.push_back(e.target);
  };
  push(b);
  while (!stack.empty()) {
    const ir::Block* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (anyStorageUser(*x, 0, x->instrs.size())) return true;   // b itself again: a loop
    push(x);
  }
  return false;
}

}  // namespace

bool usesBlockAlgorithms(const ir::Module& untyped) {
  auto isCooperative = [](const std::string& sym) {
    for (const char* ns : {"cudajit.block", "cudajit.warp"}) {
      size_t n = std::strlen(ns);
      if (sym.compare(0, n, ns) == 0 && (sym.size() == n || sym[n] == '.')) return true;
    }
    return false;
  };
  std::function<bool(const ir::Const&)> refers = [&](const ir::Const& c) {
    if (c.kind == ir::Const::Kind::Symbol) return isCooperative(c.s);
    for (const auto& e : c.elems)
      if (refers(e)) return true;
    return false;
  };
  for (const auto& fn : untyped.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs) {
        if (in->op == ir::Op::Const && refers(in->cval)) return true;
        if (isCubCall(*in)) return true;   // typed IR given: the calls themselves
      }
  return false;
}

void dropUnneededCubBarriers(ir::Module& typed) {
  ir::Function* kernel = nullptr;
  for (auto& fn : typed.functions)
    if (fn->is_kernel && !kernel) kernel = fn.get();
  if (!kernel) return;
  // Device functions may run any number of times from anywhere: only when
  // every user of the storage is in the kernel itself.
  for (auto& fn : typed.functions) {
    if (fn.get() == kernel) continue;
    for (auto& b : fn->blocks)
      if (anyStorageUser(*b, 0, b->instrs.size())) return;
  }
  // Decide for every call first (the specs change below).
  std::vector<std::pair<ir::Instr*, cub::Spec>> last;
  for (auto& b : kernel->blocks)
    for (size_t k = 0; k < b->instrs.size(); ++k) {
      cub::Spec spec;
      if (!storageUser(*b->instrs[k], &spec) || !spec.sync) continue;
      if (spec.algorithm == cub::Algorithm::BlockHistogram) continue;
      if (!storageUsedAfter(b.get(), k)) last.push_back({b->instrs[k].get(), spec});
    }
  for (auto& [in, spec] : last) {
    spec.sync = false;
    in->cval = ir::Const::str(cub::toString(spec));
  }
}

std::vector<cub::Spec> cubSpecs(const ir::Module& typed) {
  std::vector<cub::Spec> out;
  std::set<std::string> seen;
  for (const auto& fn : typed.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs) {
        if (!in->isIntrinsic(ir::Intrinsic::CubCall)) continue;
        cub::Spec parsed, spec;
        std::string error;
        if (!cub::parseSpec(in->cval.s, &parsed, &error) || !cub::tryNormalize(parsed, &spec, &error))
          throw CompileError(fn->filename, in->loc.line, in->loc.col, "cub",
                             "internal error: bad CUB spec in typed IR: " + error);
        if (seen.insert(cub::entryName(spec) + "@" + std::to_string(spec.arch)).second)
          out.push_back(spec);
      }
  return out;
}

namespace {

// At most this many instantiations at a time in the whole process (each
// NVRTC run holds hundreds of MB): kernels compiled from several threads at
// once (warming) share the cores instead of multiplying the threads.
// $CUDAJIT_CUB_JOBS overrides the number of cores.
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

std::vector<link::LinkInput> cubLinkInputs(const std::vector<cub::Spec>& specs) {
  std::vector<link::LinkInput> inputs(specs.size());
  std::vector<std::exception_ptr> errors(specs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < specs.size();) {
      try {
        jobSlots().acquire();
        struct Release {
          ~Release() { jobSlots().release(); }
        } release;
        cub::Instance inst = cub::instantiate(specs[i]);
        inputs[i] = {link::LinkInput::Kind::LtoIr, *inst.ltoir, inst.entry.name + ".ltoir"};
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  size_t threads = std::min<size_t>(specs.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return inputs;
}

}  // namespace cj::driver
