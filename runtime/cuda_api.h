// The slice of the CUDA Driver API that cudajit uses, declared here so that
// nothing needs the toolkit's cuda.h at build time and nothing links against
// libcuda: the functions are resolved with dlsym from libcuda.so.1 at first
// use (driver.cpp).
//
// CJ_CUDA_FUNCTIONS(X) lists every function once:
//   X(name, exported symbol, (parameter list))
// The exported symbol is the ABI version the driver exports (cuMemAlloc is
// "cuMemAlloc_v2" since CUDA 3.2; cuda.h maps the names with macros).
#pragma once
#include <cstddef>
#include <cstdint>

namespace cj::rt::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUlinkState_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUlinkState = CUlinkState_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
constexpr CUresult CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;

constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
// cuMemHostAlloc / cuMemHostRegister flags (same bits for both).
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;
constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 2;
constexpr unsigned CU_MEMHOSTALLOC_WRITECOMBINED = 4;
// cuMemAllocManaged flags.
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
constexpr unsigned CU_MEM_ATTACH_HOST = 2;

// CUdevice_attribute values used here.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUpointer_attribute values used here.
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;

// CUfunction_attribute values used here.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9;

// CUjit_option values and the CUjitInputType of PTX (the driver's own JIT
// compiler: cuLinkCreate / cuLinkAddData).
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
constexpr int CU_JIT_GENERATE_DEBUG_INFO = 11;
constexpr int CU_JIT_GENERATE_LINE_INFO = 13;
constexpr int CU_JIT_INPUT_PTX = 1;

// cuIpcGetMemHandle's handle: 64 opaque bytes, passed by value to cuIpcOpenMemHandle.
constexpr size_t CU_IPC_HANDLE_SIZE = 64;
struct CUipcMemHandle {
  char reserved[CU_IPC_HANDLE_SIZE];
};
constexpr unsigned CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1;

// Special stream handles (cuda.h: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD).
// Called on a driver thread once the stream's earlier work is done (or
// failed: status is the error).
using CUstreamCallback = void (*)(CUstream stream, CUresult status, void* user);

inline CUstream legacyStream() { return reinterpret_cast<CUstream>(uintptr_t{1}); }
inline CUstream perThreadStream() { return reinterpret_cast<CUstream>(uintptr_t{2}); }

#define CJ_CUDA_FUNCTIONS(X)                                                                   \
  X(cuInit, "cuInit", (unsigned int flags))                                                    \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int* version))                                  \
  X(cuGetErrorName, "cuGetErrorName", (CUresult error, const char** name))                     \
  X(cuGetErrorString, "cuGetErrorString", (CUresult error, const char** text))                 \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int* count))                                        \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                              \
  X(cuDeviceGetName, "cuDeviceGetName", (char* name, int len, CUdevice device))                \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int* value, int attribute, CUdevice device)) \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice device))                \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice device))  \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * ctx))                                     \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                       \
  X(cuCtxSynchronize, "cuCtxSynchronize", ())                                                  \
  X(cuModuleLoadData, "cuModuleLoadData", (CUmodule * module, const void* image))              \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule module))                                       \
  X(cuModuleGetFunction, "cuModuleGetFunction",                                                \
    (CUfunction * fn, CUmodule module, const char* name))                                      \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction fn, int attribute, int value))       \
  X(cuLaunchKernel, "cuLaunchKernel",                                                          \
    (CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,       \
     unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream,               \
     void** params, void** extra))                                                             \
  X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t * free_bytes, size_t * total_bytes))              \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t bytes))                            \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr ptr))                                              \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void* src, size_t bytes))         \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void* dst, CUdeviceptr src, size_t bytes))               \
  X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", (CUdeviceptr dst, CUdeviceptr src, size_t bytes))         \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                 \
    (CUdeviceptr dst, const void* src, size_t bytes, CUstream stream))                         \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                                 \
    (void* dst, CUdeviceptr src, size_t bytes, CUstream stream))                               \
  X(cuMemsetD8, "cuMemsetD8_v2", (CUdeviceptr dst, unsigned char value, size_t count))         \
  X(cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned int flags))                 \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                  \
  X(cuStreamQuery, "cuStreamQuery", (CUstream stream))                                         \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                            \
  X(cuPointerGetAttribute, "cuPointerGetAttribute", (void* data, int attribute, CUdeviceptr ptr))

// Functions of the host API (events, page-locked and managed memory,
// occupancy, profiling): resolved when present; a driver or a test double
// without one of them still loads, and only the feature that needs it fails
// (CJ_CU_OPT: CudaSupportError naming the missing function).
#define CJ_CUDA_OPTIONAL_FUNCTIONS(X)                                                          \
  X(cuEventCreate, "cuEventCreate", (CUevent * event, unsigned int flags))                     \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                      \
  X(cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                          \
  X(cuEventQuery, "cuEventQuery", (CUevent event))                                             \
  X(cuEventSynchronize, "cuEventSynchronize", (CUevent event))                                 \
  X(cuEventElapsedTime, "cuEventElapsedTime", (float* ms, CUevent start, CUevent end))         \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream stream, CUevent event, unsigned flags))  \
  X(cuMemHostAlloc, "cuMemHostAlloc", (void** ptr, size_t bytes, unsigned int flags))          \
  X(cuMemFreeHost, "cuMemFreeHost", (void* ptr))                                               \
  X(cuMemHostRegister, "cuMemHostRegister_v2", (void* ptr, size_t bytes, unsigned int flags))  \
  X(cuMemHostUnregister, "cuMemHostUnregister", (void* ptr))                                   \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",                                 \
    (CUdeviceptr * dptr, void* ptr, unsigned int flags))                                       \
  X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr * ptr, size_t bytes, unsigned flags)) \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                 \
    (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                         \
  X(cuMemsetD32Async, "cuMemsetD32Async",                                                      \
    (CUdeviceptr dst, unsigned int value, size_t count, CUstream stream))                      \
  X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel",                                    \
    (CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,       \
     unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params)) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", \
    (int* blocks, CUfunction fn, int block_threads, size_t shared_bytes))                      \
  X(cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize",                      \
    (int* min_grid, int* block, CUfunction fn, void* smem_of_block, size_t smem, int limit))   \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", (char* uuid16, CUdevice device))                    \
  X(cuProfilerStart, "cuProfilerStart", ())                                                    \
  X(cuLinkCreate, "cuLinkCreate_v2",                                                           \
    (unsigned n_options, int* options, void** values, CUlinkState* state))                     \
  X(cuLinkAddData, "cuLinkAddData_v2",                                                         \
    (CUlinkState state, int type, void* data, size_t bytes, const char* name,                  \
     unsigned n_options, int* options, void** values))                                         \
  X(cuLinkComplete, "cuLinkComplete", (CUlinkState state, void** cubin, size_t* bytes))         \
  X(cuLinkDestroy, "cuLinkDestroy", (CUlinkState state))                                       \
  X(cuProfilerStop, "cuProfilerStop", ())                                                      \
  X(cuStreamAddCallback, "cuStreamAddCallback",                                                \
    (CUstream stream, CUstreamCallback callback, void* user, unsigned flags))                  \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", (int* value, int attribute, CUfunction fn))     \
  X(cuMemGetAddressRange, "cuMemGetAddressRange_v2",                                          \
    (CUdeviceptr * base, size_t * bytes, CUdeviceptr ptr))                                     \
  X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle * handle, CUdeviceptr ptr))        \
  X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2",                                               \
    (CUdeviceptr * ptr, CUipcMemHandle handle, unsigned flags))                                \
  X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr ptr))                             \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled",                                          \
    (void* map, int dtype, unsigned rank, void* address, const uint64_t* dims,                 \
     const uint64_t* strides, const unsigned* box, const unsigned* element_strides,            \
     int interleave, int swizzle, int l2_promotion, int oob_fill))

// One function-pointer type per entry: cu::PFN_cuInit, ...
#define CJ_CUDA_PFN(name, symbol, params) using PFN_##name = CUresult (*) params;
CJ_CUDA_FUNCTIONS(CJ_CUDA_PFN)
CJ_CUDA_OPTIONAL_FUNCTIONS(CJ_CUDA_PFN)
#undef CJ_CUDA_PFN

}  // namespace cj::rt::cu
