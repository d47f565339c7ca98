#include "plugins/cuda/cuda_library.h"

#include <dlfcn.h>

#include <initializer_list>
#include <mutex>

#include "core/support/error.h"

namespace tessel::cuda {

namespace {

// Looks `fn` up under the first of `names` the library has (a newer entry point first, then the
// one an older driver exports with the same signature). Adds the missing name to `missing`.
template <class F>
void resolve(void* library, F& fn, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* name : names)
    if (void* symbol = dlsym(library, name)) {
      fn = reinterpret_cast<F>(symbol);
      return;
    }
  if (missing.empty()) missing = *names.begin();
}

void* open_first(std::initializer_list<const char*> paths, std::string& why) {
  for (const char* path : paths) {
    if (!*path) continue;
    if (void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return library;
    if (why.empty()) {
      const char* error = dlerror();
      why = error ? error : std::string(path) + ": cannot be opened";
    }
  }
  return nullptr;
}

std::string name_with(const Driver& d, CUresult r) {
  const char* name = nullptr;
  if (d.get_error_name && d.get_error_name(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(static_cast<int>(r));
}

struct LoadedDriver {
  Driver api;
  bool ok = false;
  std::string why;
};

LoadedDriver load_driver() {
  LoadedDriver d;
  // Only the driver's own soname: the toolkit's stub (lib64/stubs/libcuda.so) answers every call
  // with CUDA_ERROR_STUB_LIBRARY and must never be taken for a driver.
  void* library = open_first({"libcuda.so.1"}, d.why);
  if (!library) {
    d.why = "no CUDA driver (libcuda.so.1 cannot be opened: " + d.why + ")";
    return d;
  }
  std::string missing;
  Driver& a = d.api;
  resolve(library, a.init, {"cuInit"}, missing);
  resolve(library, a.driver_get_version, {"cuDriverGetVersion"}, missing);
  resolve(library, a.device_get_count, {"cuDeviceGetCount"}, missing);
  resolve(library, a.device_get, {"cuDeviceGet"}, missing);
  resolve(library, a.device_get_name, {"cuDeviceGetName"}, missing);
  resolve(library, a.device_get_attribute, {"cuDeviceGetAttribute"}, missing);
  resolve(library, a.device_total_mem, {"cuDeviceTotalMem_v2"}, missing);
  resolve(library, a.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"}, missing);
  resolve(library, a.ctx_set_current, {"cuCtxSetCurrent"}, missing);
  resolve(library, a.mem_get_info, {"cuMemGetInfo_v2"}, missing);
  resolve(library, a.mem_alloc, {"cuMemAlloc_v2"}, missing);
  resolve(library, a.mem_free, {"cuMemFree_v2"}, missing);
  resolve(library, a.memcpy_async, {"cuMemcpyAsync"}, missing);
  resolve(library, a.stream_create, {"cuStreamCreate"}, missing);
  resolve(library, a.stream_destroy, {"cuStreamDestroy_v2"}, missing);
  resolve(library, a.stream_synchronize, {"cuStreamSynchronize"}, missing);
  resolve(library, a.stream_wait_event, {"cuStreamWaitEvent"}, missing);
  resolve(library, a.event_create, {"cuEventCreate"}, missing);
  resolve(library, a.event_destroy, {"cuEventDestroy_v2"}, missing);
  resolve(library, a.event_record, {"cuEventRecord"}, missing);
  resolve(library, a.event_synchronize, {"cuEventSynchronize"}, missing);
  resolve(library, a.event_elapsed_time, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  resolve(library, a.module_load_data, {"cuModuleLoadData"}, missing);
  resolve(library, a.module_unload, {"cuModuleUnload"}, missing);
  resolve(library, a.module_get_function, {"cuModuleGetFunction"}, missing);
  resolve(library, a.launch_kernel, {"cuLaunchKernel"}, missing);
  resolve(library, a.get_error_name, {"cuGetErrorName"}, missing);
  if (!missing.empty()) {
    d.why = "the CUDA driver (libcuda.so.1) is too old: it has no " + missing;
    return d;
  }
  if (CUresult r = a.init(0); r != CUDA_SUCCESS) {
    d.why = "cuInit failed: " + name_with(a, r);
    return d;
  }
  d.ok = true;
  return d;
}

const LoadedDriver& loaded_driver() {
  static const LoadedDriver d = load_driver();
  return d;
}

struct LoadedNvrtc {
  Nvrtc api;
  bool ok = false;
  std::string why;
};

LoadedNvrtc load_nvrtc() {
  LoadedNvrtc n;
  // The toolkit this plugin was built with first, then whatever the loader finds by soname.
  void* library = open_first({TESSEL_NVRTC_LIBRARY, TESSEL_NVRTC_SONAME, "libnvrtc.so"}, n.why);
  if (!library) {
    n.why = "NVRTC cannot be opened (" + n.why + ")";
    return n;
  }
  std::string missing;
  Nvrtc& a = n.api;
  resolve(library, a.version, {"nvrtcVersion"}, missing);
  resolve(library, a.create_program, {"nvrtcCreateProgram"}, missing);
  resolve(library, a.compile_program, {"nvrtcCompileProgram"}, missing);
  resolve(library, a.get_ptx_size, {"nvrtcGetPTXSize"}, missing);
  resolve(library, a.get_ptx, {"nvrtcGetPTX"}, missing);
  resolve(library, a.get_program_log_size, {"nvrtcGetProgramLogSize"}, missing);
  resolve(library, a.get_program_log, {"nvrtcGetProgramLog"}, missing);
  resolve(library, a.destroy_program, {"nvrtcDestroyProgram"}, missing);
  resolve(library, a.get_error_string, {"nvrtcGetErrorString"}, missing);
  if (!missing.empty()) {
    n.why = "NVRTC has no " + missing;
    return n;
  }
  n.ok = true;
  return n;
}

}  // namespace

const Driver* driver(std::string* why) {
  const LoadedDriver& d = loaded_driver();
  if (why) *why = d.why;
  return d.ok ? &d.api : nullptr;
}

const Nvrtc* nvrtc(std::string* why) {
  static const LoadedNvrtc n = load_nvrtc();
  if (why) *why = n.why;
  return n.ok ? &n.api : nullptr;
}

std::string result_name(CUresult r) { return name_with(loaded_driver().api, r); }

void cu_check(CUresult r, const char* call, const std::string& context) {
  if (r == CUDA_SUCCESS) return;
  throw Error(std::string(call) + " failed: " + result_name(r) + (context.empty() ? "" : " (" + context + ")"));
}

}  // namespace tessel::cuda
