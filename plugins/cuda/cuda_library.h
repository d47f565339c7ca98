#pragma once
// The CUDA driver (libcuda.so.1) and NVRTC (libnvrtc.so.N), opened with dlopen on first use.
//
//   plugin loads ──▶ nothing CUDA is opened (the plugin links neither library)
//   first DeviceAPI question ──▶ dlopen("libcuda.so.1") ─▶ cuInit ─▶ device count
//                                  └ missing or failing: 0 devices, why_no_device() says why
//   first code generation ──▶ dlopen(NVRTC) ─▶ CUDA C → PTX (needs no driver and no GPU)
//
// The driver ships with the GPU's kernel module, not with the toolkit: a machine with the toolkit
// and no GPU has only the link-time stub (lib64/stubs/libcuda.so, never opened here), so linking
// the driver would keep the plugin from loading at all. NVRTC comes with the toolkit; opening it
// the same way lets a machine without it still list the target and report why it cannot compile.
// The function types come from the toolkit's own headers (cuda.h maps cuMemAlloc to
// cuMemAlloc_v2 and so on), and each entry point is looked up by the name that header maps to.
#include <cuda.h>
#include <nvrtc.h>

#include <string>

namespace tessel::cuda {

struct Driver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceTotalMem) device_total_mem = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemcpyAsync) memcpy_async = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
};

struct Nvrtc {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) get_ptx = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
};

// The driver with cuInit done, or nullptr; `why` then says why ("libcuda.so.1 not found: ...",
// "cuInit: CUDA_ERROR_NO_DEVICE"). Opened once per process.
const Driver* driver(std::string* why = nullptr);
// NVRTC, or nullptr with `why`. Opened once per process.
const Nvrtc* nvrtc(std::string* why = nullptr);

// "CUDA_ERROR_OUT_OF_MEMORY" for a driver result (the number when the driver cannot name it).
std::string result_name(CUresult r);
// Throws Error "<call> failed: <CUDA_ERROR_...>[ (<context>)]" unless r is CUDA_SUCCESS.
void cu_check(CUresult r, const char* call, const std::string& context = "");

}  // namespace tessel::cuda
