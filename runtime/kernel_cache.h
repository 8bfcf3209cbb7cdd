// The on-disk cache of compiled kernels (@jit(cache=True), `python -m
// cudajit warm`).
//
// Key: SHA-256 of a text naming everything that changes the code (keyText):
//   - the untyped IR of the decoded module: the kernel's bytecode as IR, the
//     values of the globals and closure cells it froze, and every device
//     function it calls (decoded into the same module);
//   - the argument types, the target architecture, the compile options
//     (fastmath, debug, lineinfo, opt, device) and the back end (with the
//     plugin's LLVM version for backend="llvm");
//   - cudajit's version and build (toolkit_identity.h: cudajitIdentity);
//   - the toolkit: libNVVM, nvJitLink and libdevice versions and files.
// The CUDA driver is not part of it: it does not change the cubin (nvJitLink
// makes it), and leaving it out lets a machine without a GPU warm the cache.
// A cubin the driver cannot load is recompiled (Dispatcher).
//
// Files: <cache root>/kernels/<key>.cjk (support/disk_cache.h framing: a
// checksum over the whole entry, atomic temp-file + rename writes). The body
// repeats the key text, so a stale or colliding entry reads as a miss.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver/compile.h"
#include "support/disk_cache.h"

namespace cj::rt {

struct KernelKey {
  std::string text;   // the key material
  std::string hash;   // sha256 hex of text: the file name
};

struct KernelKeyParts {
  const std::string* untyped_ir = nullptr;
  const std::vector<const Type*>* args = nullptr;
  int arch = 0;
  const driver::CompileOptions* options = nullptr;
};
KernelKey kernelKey(const KernelKeyParts& parts);

// One entry: the compiled kernel and what `cache list` shows about it.
struct CachedKernel {
  std::string key_text;
  std::string qualname, filename, signature;   // "axpy", "/src/k.py", "(float32, float32[::1])"
  int arch = 0;
  int64_t created = 0;                         // unix time
  double compile_seconds = 0;
  driver::CompiledKernel compiled;             // symbol, return type, IR texts, PTX, cubin
};

std::string kernelCacheDir();   // <userCacheRoot()>/kernels
DiskCache kernelDiskCache();

std::string serializeKernel(const CachedKernel& k);
bool deserializeKernel(const std::string& body, CachedKernel* out);

// Hit only when the entry is whole, its checksum holds and it was written
// for exactly `key.text`.
CacheLoad loadKernel(const KernelKey& key, CachedKernel* out);
bool storeKernel(const KernelKey& key, const CachedKernel& k);
// The entry in the file at `path` (one of kernelDiskCache().entries()): true
// when it is whole, its checksum holds and it parses. *file_bytes: the
// file's size (0 if unreadable).
bool readKernelEntry(const std::string& path, CachedKernel* out, size_t* file_bytes = nullptr);

// What identity a key text was made under: its cudajit line and its toolkit
// lines, in order (as cudajitIdentity() / toolkitIdentity() give them).
struct KeyIdentity {
  std::string cudajit, toolkit;
};
KeyIdentity keyIdentity(const std::string& key_text);

// One miss, and why it missed: the parts of the identity in which the
// closest entry for the same kernel (qualname, signature, arch) differs, e.g.
// "no entry for this kernel, signature and arch" or "an entry for this
// kernel, signature and arch differs in: toolkit (nvjitlink), options". The
// reason reads every entry of the directory, so it is worked out when first
// asked for (kernel.stats, cache.info()), never on the compile path.
class CacheMiss {
 public:
  CacheMiss(KernelKey key, std::string qualname, std::string signature, int arch)
      : key_(std::move(key)), qualname_(std::move(qualname)), signature_(std::move(signature)), arch_(arch) {}
  explicit CacheMiss(std::string reason) : reason_(std::move(reason)), known_(true) {}
  const std::string& reason();
  std::string label() const { return qualname_ + signature_ + " sm_" + std::to_string(arch_); }

 private:
  KernelKey key_;
  std::string qualname_, signature_;
  int arch_ = 0;
  std::string reason_;
  bool known_ = false;
};

// This process's lookups in the kernel cache (what `cudajit.cache.info()`
// reports as hits and misses), the last misses (at most 64).
struct CacheCounters {
  int64_t hits = 0, misses = 0, corrupt = 0;
  std::vector<std::shared_ptr<CacheMiss>> last_misses;
};
CacheCounters cacheCounters();
void countCacheLookup(CacheLoad result, std::shared_ptr<CacheMiss> miss = nullptr);

}  // namespace cj::rt
