// The entry points of libNVVM (nvvm.h) and nvJitLink (nvJitLink.h) that
// cudajit calls, declared from NVIDIA's documentation so that no toolkit
// header is needed at build time. Loaded once per process, on first use,
// under a mutex; loading failures throw ToolchainError (and are retried on
// the next call, in case the environment changed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "link/library_finder.h"

namespace cj::link {

// ---- libNVVM ---------------------------------------------------------------
using NvvmResult = int;                       // nvvmResult; 0 is NVVM_SUCCESS
using NvvmProgram = struct NvvmProgramImpl*;  // nvvmProgram (opaque)

struct NvvmApi {
  std::unique_ptr<SharedLibrary> lib;
  std::string libdevice_path;
  std::string libdevice;                       // libdevice.10.bc, read once

  const char* (*GetErrorString)(NvvmResult) = nullptr;
  NvvmResult (*Version)(int* major, int* minor) = nullptr;
  NvvmResult (*IRVersion)(int* ir_major, int* ir_minor, int* dbg_major, int* dbg_minor) = nullptr;
  NvvmResult (*CreateProgram)(NvvmProgram* prog) = nullptr;
  NvvmResult (*DestroyProgram)(NvvmProgram* prog) = nullptr;
  NvvmResult (*AddModuleToProgram)(NvvmProgram, const char* buf, size_t size, const char* name) = nullptr;
  NvvmResult (*LazyAddModuleToProgram)(NvvmProgram, const char* buf, size_t size, const char* name) = nullptr;
  NvvmResult (*CompileProgram)(NvvmProgram, int num_options, const char** options) = nullptr;
  NvvmResult (*GetCompiledResultSize)(NvvmProgram, size_t* size) = nullptr;
  NvvmResult (*GetCompiledResult)(NvvmProgram, char* buf) = nullptr;
  NvvmResult (*GetProgramLogSize)(NvvmProgram, size_t* size) = nullptr;
  NvvmResult (*GetProgramLog)(NvvmProgram, char* buf) = nullptr;
};
const NvvmApi& nvvmApi();

// ---- nvJitLink -----------------------------------------------------------------
using JitLinkResult = int;                         // nvJitLinkResult; 0 is NVJITLINK_SUCCESS
using JitLinkHandle = struct JitLinkHandleImpl*;   // nvJitLinkHandle (opaque)
enum JitLinkInputType : int {
  kInputCubin = 1, kInputPtx = 2, kInputLtoIr = 3, kInputFatbin = 4, kInputObject = 5, kInputLibrary = 6
};

struct JitLinkApi {
  std::unique_ptr<SharedLibrary> lib;

  JitLinkResult (*Create)(JitLinkHandle* handle, uint32_t num_options, const char** options) = nullptr;
  JitLinkResult (*Destroy)(JitLinkHandle* handle) = nullptr;
  JitLinkResult (*AddData)(JitLinkHandle, int input_type, const void* data, size_t size,
                           const char* name) = nullptr;
  JitLinkResult (*Complete)(JitLinkHandle) = nullptr;
  JitLinkResult (*GetLinkedCubinSize)(JitLinkHandle, size_t* size) = nullptr;
  JitLinkResult (*GetLinkedCubin)(JitLinkHandle, void* cubin) = nullptr;
  JitLinkResult (*GetLinkedPtxSize)(JitLinkHandle, size_t* size) = nullptr;
  JitLinkResult (*GetLinkedPtx)(JitLinkHandle, char* ptx) = nullptr;
  JitLinkResult (*GetErrorLogSize)(JitLinkHandle, size_t* size) = nullptr;
  JitLinkResult (*GetErrorLog)(JitLinkHandle, char* log) = nullptr;
  JitLinkResult (*GetInfoLogSize)(JitLinkHandle, size_t* size) = nullptr;
  JitLinkResult (*GetInfoLog)(JitLinkHandle, char* log) = nullptr;
  JitLinkResult (*Version)(unsigned* major, unsigned* minor) = nullptr;   // optional (12.3+)
};
const JitLinkApi& jitLinkApi();

// Names of result codes for messages ("NVJITLINK_ERROR_PTX_COMPILE").
const char* jitLinkResultName(JitLinkResult r);

}  // namespace cj::link
