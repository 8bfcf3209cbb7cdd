// A fake libcuda for CI machines without a GPU (tests only; not part of the
// cudajit build). Device memory is host memory, modules are accepted as they
// are, and cuLaunchKernel calls a hook the test installs (through ctypes) with
// the packed parameters, so a test can play the kernel in Python and check
// everything the runtime does around it: argument classification, ABI
// packing, host-array staging, copies, __cuda_array_interface__.
//
// Build: g++ -std=c++17 -shared -fPIC mock_libcuda.cpp -o libcuda_mock.so
// Use:   CUDAJIT_CUDA_DRIVER=/path/libcuda_mock.so python ...
//        CJMOCK_DEVICES=2 makes it report two GPUs (one primary context each;
//        allocations remember their device, cuPointerGetAttribute tells it).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

using CUresult = int;
constexpr CUresult kOk = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidHandle = 400,
                   kNotFound = 500, kNotReady = 600, kAlreadyRegistered = 712,
                   kNotRegistered = 713;

struct Module {
  std::string image_head;   // first bytes of the image (tests may check it is an ELF cubin)
  size_t image_probe = 0;
};
struct Function {
  std::string name;
  Module* module;
};

struct Allocation {
  size_t bytes;
  int device;
  bool managed = false;
};
std::map<uintptr_t, Allocation> g_allocations;
thread_local void* t_current = nullptr;
constexpr int kMaxDevices = 8;
int g_ctx_tokens[kMaxDevices] = {};   // their addresses are the primary context handles

int deviceCount() {
  const char* env = std::getenv("CJMOCK_DEVICES");
  int n = env ? std::atoi(env) : 1;
  return n < 1 ? 1 : n > kMaxDevices ? kMaxDevices : n;
}

// The device whose primary context is current (-1: none).
int currentDevice() {
  for (int d = 0; d < kMaxDevices; ++d)
    if (t_current == &g_ctx_tokens[d]) return d;
  return -1;
}
int g_live_modules = 0;
int g_launches = 0;
int g_cooperative_launches = 0;

// Host API state: events, page-locked memory, counters the tests read.
struct Event {
  bool timing;
  bool recorded = false;
  double ms = 0;   // when recorded (steady clock)
  uintptr_t stream = 0;
};
std::set<Event*> g_events;
struct HostBlock {
  size_t bytes;
  unsigned flags;
};
std::map<uintptr_t, HostBlock> g_host_allocs;      // cuMemHostAlloc
std::map<uintptr_t, HostBlock> g_registrations;    // cuMemHostRegister
bool g_pending = false;          // queries answer CUDA_ERROR_NOT_READY while set
int g_stream_syncs = 0, g_ctx_syncs = 0, g_stream_waits = 0, g_profiler_runs = 0;
uintptr_t g_last_copy_stream = ~uintptr_t{0};   // stream of the last async copy
int g_async_copies = 0;

// The block of `blocks` holding [p, p + 1), or end().
std::map<uintptr_t, HostBlock>::iterator blockOf(std::map<uintptr_t, HostBlock>& blocks, uintptr_t p) {
  auto it = blocks.upper_bound(p);
  if (it == blocks.begin()) return blocks.end();
  --it;
  return p < it->first + it->second.bytes ? it : blocks.end();
}
double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

using LaunchHook = void (*)(const char* name, const unsigned* grid, const unsigned* block,
                            unsigned shared_bytes, uintptr_t stream, void** params);
LaunchHook g_hook = nullptr;

constexpr CUresult kUnsupportedPtxVersion = 222;
CUresult g_link_result = kUnsupportedPtxVersion;
int g_links = 0, g_live_link_states = 0;
std::string g_last_link_options;
struct LinkState {
  std::string cubin;
};

}  // namespace

std::string g_last_image_head;

int ccOf() {
  const char* cc = std::getenv("CJMOCK_CC");
  return cc && *cc ? std::atoi(cc) : 90;
}

extern "C" {

// ---- test controls (ctypes) -------------------------------------------------
void cjmock_set_launch_hook(LaunchHook hook) { g_hook = hook; }
int cjmock_launch_count() { return g_launches; }
int cjmock_cooperative_launch_count() { return g_cooperative_launches; }
int cjmock_live_allocations() { return static_cast<int>(g_allocations.size()); }
// The device current on the calling thread (during a launch hook: the
// device the kernel was launched on).
int cjmock_current_device() { return currentDevice(); }
int cjmock_live_modules() { return g_live_modules; }
// The first bytes of the last image cuModuleLoadData took ("\x7fELF" for a cubin, "//" for PTX).
const char* cjmock_last_image_head() { return g_last_image_head.c_str(); }
int cjmock_live_events() { return static_cast<int>(g_events.size()); }
int cjmock_live_host_allocations() { return static_cast<int>(g_host_allocs.size()); }
int cjmock_live_registrations() { return static_cast<int>(g_registrations.size()); }
void cjmock_set_pending(int pending) { g_pending = pending != 0; }
int cjmock_stream_syncs() { return g_stream_syncs; }
int cjmock_ctx_syncs() { return g_ctx_syncs; }
int cjmock_stream_waits() { return g_stream_waits; }
int cjmock_profiler_runs() { return g_profiler_runs; }
int cjmock_async_copies() { return g_async_copies; }
uintptr_t cjmock_last_copy_stream() { return g_last_copy_stream; }
// The driver's JIT compiler (cuLink*): by default it refuses PTX (as a
// driver older than the PTX does), so kernels are assembled by nvJitLink;
// cjmock_set_link_result(0) makes it accept PTX and return a fake cubin.
void cjmock_set_link_result(int result) { g_link_result = result; }
int cjmock_links() { return g_links; }
// "option=value,..." of the last cuLinkCreate.
const char* cjmock_last_link_options() { return g_last_link_options.c_str(); }
int cjmock_live_link_states() { return g_live_link_states; }

// ---- the driver API subset cudajit resolves ----------------------------------
CUresult cuInit(unsigned) { return kOk; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return kOk; }
// NVRTC, loaded into a process where this mock is libcuda.so.1 (the nvmath
// examples' mock runs), calls cuInit and then this undocumented entry point;
// without it NVRTC jumped to a null pointer. No table: NVRTC goes on without one.
CUresult cuGetExportTable(const void** table, const void*) {
  if (table) *table = nullptr;
  return kNotFound;
}
CUresult cuGetErrorName(CUresult e, const char** name) {
  switch (e) {
    case kOk: *name = "CUDA_SUCCESS"; return kOk;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kOk;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kOk;
    case kInvalidHandle: *name = "CUDA_ERROR_INVALID_HANDLE"; return kOk;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return kOk;
  }
  *name = nullptr;
  return kInvalidValue;
}
CUresult cuGetErrorString(CUresult e, const char** text) {
  *text = e == kOutOfMemory ? "out of memory" : e == kInvalidValue ? "invalid argument" : "mock error";
  return kOk;
}
CUresult cuDeviceGetCount(int* n) { *n = deviceCount(); return kOk; }
CUresult cuDeviceGet(int* d, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount()) return kInvalidValue;
  *d = ordinal;
  return kOk;
}
CUresult cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "cudajit mock GPU", len);
  return kOk;
}
CUresult cuDeviceGetAttribute(int* v, int attribute, int) {
  switch (attribute) {
    case 1: *v = 1024; break;           // max threads per block
    case 10: *v = 32; break;            // warp size
    case 16: *v = 132; break;           // SMs
    case 33: *v = 7; break;             // PCI bus
    case 75: *v = ccOf() / 10; break;   // cc major (CJMOCK_CC=100: a 10.0 GPU; default 9.0)
    case 76: *v = ccOf() % 10; break;   // cc minor
    case 97: *v = 227 * 1024; break;    // opt-in shared memory
    default: *v = 0;
  }
  return kOk;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, int) { *bytes = size_t{80} << 30; return kOk; }
CUresult cuDevicePrimaryCtxRetain(void** ctx, int device) {
  if (device < 0 || device >= deviceCount()) return kInvalidValue;
  *ctx = &g_ctx_tokens[device];
  return kOk;
}
CUresult cuCtxGetCurrent(void** ctx) { *ctx = t_current; return kOk; }
CUresult cuCtxSetCurrent(void* ctx) { t_current = ctx; return kOk; }
CUresult cuCtxSynchronize() {
  ++g_ctx_syncs;
  return t_current ? kOk : kInvalidValue;
}

CUresult cuModuleLoadData(void** module, const void* image) {
  if (!t_current) return kInvalidValue;
  auto* m = new Module();
  m->image_head.assign(static_cast<const char*>(image), 4);
  g_last_image_head = m->image_head;
  *module = m;
  ++g_live_modules;
  return kOk;
}
CUresult cuModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  --g_live_modules;
  return kOk;
}
CUresult cuModuleGetFunction(void** fn, void* module, const char* name) {
  auto* f = new Function{name, static_cast<Module*>(module)};   // leaked: handles live as long as modules
  *fn = f;
  return kOk;
}
// The last value set per attribute (any function), for the tests.
std::map<int, int> g_func_attributes;
int g_func_attribute_sets = 0;
CUresult cuFuncSetAttribute(void* fn, int attribute, int value) {
  if (!fn) return kInvalidHandle;
  if (attribute == 9 && (value < -1 || value > 100)) return kInvalidValue;   // the carveout's range
  g_func_attributes[attribute] = value;
  ++g_func_attribute_sets;
  return kOk;
}
// The last value cuFuncSetAttribute set for `attribute`; -999 if never set.
int cjmock_func_attribute(int attribute) {
  auto it = g_func_attributes.find(attribute);
  return it == g_func_attributes.end() ? -999 : it->second;
}
int cjmock_func_attribute_sets() { return g_func_attribute_sets; }
// Recognisable values: 1024 threads, 512 B static shared, 64 B constant,
// 16 B local, 40 registers.
CUresult cuFuncGetAttribute(int* value, int attribute, void* fn) {
  if (!fn) return kInvalidValue;
  switch (attribute) {
    case 0: *value = 1024; return kOk;
    case 1: *value = 512; return kOk;
    case 2: *value = 64; return kOk;
    case 3: *value = 16; return kOk;
    case 4: *value = 40; return kOk;
    default: return kInvalidValue;
  }
}
CUresult cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  if (!t_current || !fn || extra) return kInvalidValue;
  if (static_cast<unsigned long long>(bx) * by * bz > 1024) return kInvalidValue;
  ++g_launches;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  if (g_hook)
    g_hook(static_cast<Function*>(fn)->name.c_str(), grid, block, shared,
           reinterpret_cast<uintptr_t>(stream), params);
  return kOk;
}

CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  *free_bytes = size_t{79} << 30;
  *total = size_t{80} << 30;
  return kOk;
}
CUresult cuMemAlloc_v2(unsigned long long* ptr, size_t bytes) {
  if (!t_current) return kInvalidValue;
  if (bytes == 0) return kInvalidValue;
  if (bytes > (size_t{1} << 36)) return kOutOfMemory;
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) return kOutOfMemory;
  std::memset(p, 0xAB, bytes);   // uninitialised device memory is garbage, not zeros
  *ptr = reinterpret_cast<uintptr_t>(p);
  g_allocations[*ptr] = Allocation{bytes, currentDevice()};
  return kOk;
}
CUresult cuMemFree_v2(unsigned long long ptr) {
  auto it = g_allocations.find(ptr);
  if (it == g_allocations.end()) return kInvalidValue;
  std::free(reinterpret_cast<void*>(ptr));
  g_allocations.erase(it);
  return kOk;
}
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t n) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return kOk;
}
CUresult cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return kOk;
}
CUresult cuMemcpyDtoD_v2(unsigned long long dst, unsigned long long src, size_t n) {
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return kOk;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void* src, size_t n, void* stream) {
  ++g_async_copies;
  g_last_copy_stream = reinterpret_cast<uintptr_t>(stream);
  return cuMemcpyHtoD_v2(dst, src, n);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, unsigned long long src, size_t n, void* stream) {
  ++g_async_copies;
  g_last_copy_stream = reinterpret_cast<uintptr_t>(stream);
  return cuMemcpyDtoH_v2(dst, src, n);
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src, size_t n, void* stream) {
  ++g_async_copies;
  g_last_copy_stream = reinterpret_cast<uintptr_t>(stream);
  return cuMemcpyDtoD_v2(dst, src, n);
}
CUresult cuMemsetD8_v2(unsigned long long dst, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void*>(dst), v, n);
  return kOk;
}
int g_async_memsets = 0;
CUresult cuMemsetD32Async(unsigned long long dst, unsigned v, size_t n, void*) {
  ++g_async_memsets;
  auto* p = reinterpret_cast<unsigned*>(dst);
  std::fill(p, p + n, v);
  return kOk;
}
int cjmock_async_memsets() { return g_async_memsets; }
CUresult cuStreamSynchronize(void*) {
  ++g_stream_syncs;
  return t_current ? kOk : kInvalidValue;
}
// Work is synchronous here, so a callback is due at once; it runs on a
// thread of its own, as the driver's do (CJMOCK_CALLBACK_STATUS: the status
// it gets, to play a failed stream).
CUresult cuStreamAddCallback(void* stream, void (*callback)(void*, CUresult, void*), void* user, unsigned flags) {
  if (!t_current) return kInvalidValue;
  if (!callback || flags != 0) return kInvalidValue;
  const char* s = std::getenv("CJMOCK_CALLBACK_STATUS");
  const CUresult status = s ? std::atoi(s) : kOk;
  std::thread([=] { callback(stream, status, user); }).detach();
  return kOk;
}
CUresult cuPointerGetAttribute(void* data, int attribute, unsigned long long ptr) {
  if (attribute != 9) return kInvalidValue;   // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL only
  auto it = g_allocations.upper_bound(ptr);
  if (it == g_allocations.begin()) return kInvalidValue;
  --it;
  if (ptr >= it->first + it->second.bytes) return kInvalidValue;
  *static_cast<int*>(data) = it->second.device;
  return kOk;
}

}  // extern "C"

extern "C" {
// Streams: distinct fake handles; work is synchronous in the mock.
CUresult cuStreamCreate(void** stream, unsigned) {
  static uintptr_t next = 0x5000;
  *stream = reinterpret_cast<void*>(next += 0x10);
  return kOk;
}
CUresult cuStreamDestroy_v2(void*) { return kOk; }
CUresult cuStreamQuery(void*) { return g_pending ? kNotReady : kOk; }

// Events: recording takes the time; all work is already done in the mock.
CUresult cuEventCreate(void** event, unsigned flags) {
  if (!t_current) return kInvalidValue;
  auto* e = new Event{(flags & 2u) == 0};
  g_events.insert(e);
  *event = e;
  return kOk;
}
CUresult cuEventDestroy_v2(void* event) {
  auto* e = static_cast<Event*>(event);
  if (!g_events.erase(e)) return kInvalidHandle;
  delete e;
  return kOk;
}
CUresult cuEventRecord(void* event, void* stream) {
  auto* e = static_cast<Event*>(event);
  if (!g_events.count(e)) return kInvalidHandle;
  e->recorded = true;
  e->ms = nowMs();
  e->stream = reinterpret_cast<uintptr_t>(stream);
  return kOk;
}
CUresult cuEventQuery(void* event) {
  if (!g_events.count(static_cast<Event*>(event))) return kInvalidHandle;
  return g_pending ? kNotReady : kOk;
}
CUresult cuEventSynchronize(void* event) {
  return g_events.count(static_cast<Event*>(event)) ? kOk : kInvalidHandle;
}
CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
  auto* a = static_cast<Event*>(start);
  auto* b = static_cast<Event*>(end);
  if (!g_events.count(a) || !g_events.count(b)) return kInvalidHandle;
  if (!a->timing || !b->timing || !a->recorded || !b->recorded) return kInvalidHandle;
  if (g_pending) return kNotReady;
  *ms = static_cast<float>(b->ms - a->ms);
  return kOk;
}
CUresult cuStreamWaitEvent(void*, void* event, unsigned) {
  if (!g_events.count(static_cast<Event*>(event))) return kInvalidHandle;
  ++g_stream_waits;
  return kOk;
}

// Page-locked host memory: plain host memory here; mapped memory has the
// same address on the device (unified addressing, as on every 64-bit GPU).
CUresult cuMemHostAlloc(void** ptr, size_t bytes, unsigned flags) {
  if (!t_current) return kInvalidValue;
  if (bytes == 0) return kInvalidValue;
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) return kOutOfMemory;
  std::memset(p, 0xCD, bytes);
  *ptr = p;
  g_host_allocs[reinterpret_cast<uintptr_t>(p)] = HostBlock{bytes, flags};
  return kOk;
}
CUresult cuMemFreeHost(void* ptr) {
  auto it = g_host_allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_host_allocs.end()) return kInvalidValue;
  std::free(ptr);
  g_host_allocs.erase(it);
  return kOk;
}
CUresult cuMemHostRegister_v2(void* ptr, size_t bytes, unsigned flags) {
  if (!t_current || !ptr || bytes == 0) return kInvalidValue;
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  if (blockOf(g_registrations, p) != g_registrations.end() ||
      blockOf(g_registrations, p + bytes - 1) != g_registrations.end())
    return kAlreadyRegistered;
  g_registrations[p] = HostBlock{bytes, flags};
  return kOk;
}
CUresult cuMemHostUnregister(void* ptr) {
  auto it = g_registrations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_registrations.end()) return kNotRegistered;
  g_registrations.erase(it);
  return kOk;
}
CUresult cuMemHostGetDevicePointer_v2(unsigned long long* dptr, void* ptr, unsigned) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  for (auto* blocks : {&g_host_allocs, &g_registrations}) {
    auto it = blockOf(*blocks, p);
    if (it != blocks->end()) {
      if (!(it->second.flags & 2u)) return kInvalidValue;   // not DEVICEMAP
      *dptr = p;
      return kOk;
    }
  }
  return kInvalidValue;
}
CUresult cuMemAllocManaged(unsigned long long* ptr, size_t bytes, unsigned flags) {
  if (flags != 1 && flags != 2) return kInvalidValue;
  const CUresult r = cuMemAlloc_v2(ptr, bytes);
  if (r == kOk) g_allocations[*ptr].managed = true;
  return r;
}

// 2048 threads an SM, at most 32 blocks; a cooperative grid may hold 132 SMs' worth.
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void* fn, int threads, size_t) {
  if (!fn || !t_current || threads < 1 || threads > 1024) return kInvalidValue;
  *blocks = std::min(32, 2048 / threads);
  return kOk;
}
CUresult cuLaunchCooperativeKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, void* stream, void** params) {
  int per_sm = 0;
  const CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, static_cast<int>(bx * by * bz), shared);
  if (r != kOk) return r;
  if (static_cast<unsigned long long>(gx) * gy * gz > 132ull * per_sm) return 720;   // COOPERATIVE_LAUNCH_TOO_LARGE
  ++g_cooperative_launches;
  return cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr);
}
CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block, void* fn, void*, size_t smem,
                                          int limit) {
  if (!fn || !t_current) return kInvalidValue;
  // A recognisable answer: 768 threads (fewer with a lot of shared memory).
  int b = smem > 64 * 1024 ? 256 : 768;
  if (limit > 0 && b > limit) b = limit;
  *block = b;
  *min_grid = 132 * (2048 / b);
  return kOk;
}
CUresult cuDeviceGetUuid_v2(char* uuid, int device) {
  for (int k = 0; k < 16; ++k) uuid[k] = static_cast<char>(0x10 * (k % 16) + device);
  return kOk;
}
CUresult cuProfilerStart() {
  ++g_profiler_runs;
  return kOk;
}
CUresult cuProfilerStop() { return kOk; }
}

extern "C" {
// The driver's JIT compiler: a "cubin" that is an ELF header and the PTX.
CUresult cuLinkCreate_v2(unsigned n, int* options, void** values, void** state) {
  if (!t_current) return kInvalidValue;
  g_last_link_options.clear();
  for (unsigned k = 0; k < n; ++k)
    g_last_link_options += (k ? "," : "") + std::to_string(options[k]) + "=" +
                           std::to_string(reinterpret_cast<intptr_t>(values[k]));
  *state = new LinkState();
  ++g_live_link_states;
  return kOk;
}
CUresult cuLinkAddData_v2(void* state, int type, void* data, size_t bytes, const char*, unsigned, int*,
                          void**) {
  if (g_link_result != kOk) return g_link_result;
  const char* text = static_cast<const char*>(data);
  if (type != 1 || bytes == 0 || text[bytes - 1] != '\0') return kInvalidValue;   // NUL-terminated PTX
  static_cast<LinkState*>(state)->cubin = std::string("\x7f" "ELF mock driver JIT\n") + text;
  return kOk;
}
CUresult cuLinkComplete(void* state, void** cubin, size_t* bytes) {
  auto* s = static_cast<LinkState*>(state);
  if (s->cubin.empty()) return kInvalidValue;
  *cubin = s->cubin.data();
  *bytes = s->cubin.size();
  ++g_links;
  return kOk;
}
CUresult cuLinkDestroy(void* state) {
  delete static_cast<LinkState*>(state);
  --g_live_link_states;
  return kOk;
}
}  // extern "C"

// CUDA IPC. A handle names an allocation of this process (a magic word, the
// pid, the base address); opening it maps nothing new: the mock returns the
// same address (a real driver refuses to open a handle in the process that
// made it), so CPU tests run the export / open / close path of cudajit.
namespace {
struct MockIpcHandle {
  char reserved[64];
};
constexpr char kIpcMagic[8] = {'c', 'j', 'm', 'o', 'c', 'k', 'i', 'p'};
std::map<uintptr_t, int> g_ipc_open;   // opened base -> how many times
int g_ipc_opens = 0, g_ipc_closes = 0;
}  // namespace

extern "C" {
CUresult cuMemGetAddressRange_v2(unsigned long long* base, size_t* bytes, unsigned long long ptr) {
  auto it = g_allocations.upper_bound(ptr);
  if (it == g_allocations.begin()) return kNotFound;
  --it;
  if (ptr >= it->first + it->second.bytes) return kNotFound;
  if (base) *base = it->first;
  if (bytes) *bytes = it->second.bytes;
  return kOk;
}
CUresult cuIpcGetMemHandle(MockIpcHandle* handle, unsigned long long ptr) {
  if (!t_current) return kInvalidValue;
  auto it = g_allocations.find(ptr);
  if (it == g_allocations.end() || it->second.managed) return kInvalidValue;   // bases of cuMemAlloc blocks only
  std::memset(handle->reserved, 0, sizeof handle->reserved);
  std::memcpy(handle->reserved, kIpcMagic, 8);
  const long long pid = static_cast<long long>(getpid());
  std::memcpy(handle->reserved + 8, &pid, 8);
  std::memcpy(handle->reserved + 16, &ptr, 8);
  return kOk;
}
CUresult cuIpcOpenMemHandle_v2(unsigned long long* ptr, MockIpcHandle handle, unsigned flags) {
  if (!t_current || flags != 1) return kInvalidValue;
  if (std::memcmp(handle.reserved, kIpcMagic, 8) != 0) return kInvalidValue;
  long long pid = 0;
  unsigned long long base = 0;
  std::memcpy(&pid, handle.reserved + 8, 8);
  std::memcpy(&base, handle.reserved + 16, 8);
  if (pid != static_cast<long long>(getpid()) || !g_allocations.count(base)) return kInvalidValue;
  ++g_ipc_open[base];
  ++g_ipc_opens;
  *ptr = base;
  return kOk;
}
CUresult cuIpcCloseMemHandle(unsigned long long ptr) {
  auto it = g_ipc_open.find(ptr);
  if (it == g_ipc_open.end()) return kInvalidValue;
  if (--it->second == 0) g_ipc_open.erase(it);
  ++g_ipc_closes;
  return kOk;
}
int cjmock_ipc_opens() { return g_ipc_opens; }
int cjmock_ipc_closes() { return g_ipc_closes; }
}  // extern "C"

