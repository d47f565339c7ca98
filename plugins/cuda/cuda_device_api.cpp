#include "plugins/cuda/cuda_device_api.h"

#include <algorithm>
#include <optional>

#include "core/support/error.h"

namespace tessel::cuda {

void CudaDeviceAPI::enumerate() const {
  std::call_once(enumerated_, [this] {
    std::string why;
    driver_ = driver(&why);
    if (!driver_) {
      why_no_device_ = why;
      return;
    }
    int count = 0;
    if (CUresult r = driver_->device_get_count(&count); r != CUDA_SUCCESS) {
      why_no_device_ = "cuDeviceGetCount failed: " + result_name(r);
      return;
    }
    for (int k = 0; k < count; ++k) {
      CUdevice d = 0;
      if (driver_->device_get(&d, k) == CUDA_SUCCESS) devices_.push_back(DeviceState{d, nullptr, nullptr, nullptr});
    }
    if (devices_.empty()) why_no_device_ = "the CUDA driver lists no device";
  });
}

int CudaDeviceAPI::device_count() const {
  enumerate();
  return static_cast<int>(devices_.size());
}

std::string CudaDeviceAPI::why_no_device() const {
  enumerate();
  return why_no_device_;
}

CudaDeviceAPI::DeviceState& CudaDeviceAPI::state(int device_id) const {
  enumerate();
  if (device_id < 0 || device_id >= static_cast<int>(devices_.size()))
    throw Error(where(device_id) + " does not exist (" +
                (devices_.empty() ? why_no_device_ : "devices: cuda:0 .. cuda:" + std::to_string(devices_.size() - 1)) +
                ")");
  DeviceState& s = devices_[static_cast<size_t>(device_id)];
  std::lock_guard<std::mutex> lock(mutex_);
  if (!s.context) {
    CUcontext context = nullptr;
    cu_check(driver_->primary_ctx_retain(&context, s.device), "cuDevicePrimaryCtxRetain", where(device_id));
    cu_check(driver_->ctx_set_current(context), "cuCtxSetCurrent", where(device_id));
    CUstream stream = nullptr;
    cu_check(driver_->stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", where(device_id));
    s.context = context;
    s.default_stream = stream;
  }
  return s;
}

const Driver& CudaDeviceAPI::bind(int device_id) const {
  DeviceState& s = state(device_id);
  cu_check(driver_->ctx_set_current(s.context), "cuCtxSetCurrent", where(device_id));
  return *driver_;
}

CUstream CudaDeviceAPI::stream(int device_id, Stream s) const {
  return s ? static_cast<CUstream>(s) : state(device_id).default_stream;
}

CUstream CudaDeviceAPI::kernel_stream(int device_id) const {
  DeviceState& s = state(device_id);
  std::lock_guard<std::mutex> lock(mutex_);
  return s.kernel_stream ? s.kernel_stream : s.default_stream;
}

DeviceAttrValue CudaDeviceAPI::attribute(int device_id, DeviceAttr attr) const {
  enumerate();
  const bool exists = device_id >= 0 && device_id < static_cast<int>(devices_.size());
  if (attr == DeviceAttr::kExist) return int64_t{exists};
  if (!exists) return {};
  const CUdevice d = devices_[static_cast<size_t>(device_id)].device;
  auto get = [&](CUdevice_attribute a) -> std::optional<int64_t> {
    int v = 0;
    if (driver_->device_get_attribute(&v, a, d) != CUDA_SUCCESS) return std::nullopt;
    return v;
  };
  auto positive = [&](CUdevice_attribute a) -> DeviceAttrValue {
    auto v = get(a);
    return v && *v > 0 ? DeviceAttrValue{*v} : DeviceAttrValue{};
  };
  switch (attr) {
    case DeviceAttr::kName: {
      char name[256] = {};
      if (driver_->device_get_name(name, sizeof name - 1, d) != CUDA_SUCCESS || !name[0]) return {};
      return std::string(name);
    }
    case DeviceAttr::kMaxThreadsPerBlock:
      return positive(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    case DeviceAttr::kWarpSize:
      return positive(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    // What a block gets without opting in (static __shared__ arrays, which the code generator writes).
    case DeviceAttr::kMaxSharedMemoryPerBlock:
      return positive(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    case DeviceAttr::kComputeVersion: {
      auto major = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
      auto minor = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
      if (!major || !minor) return {};
      return std::to_string(*major) + "." + std::to_string(*minor);
    }
    case DeviceAttr::kClockRateKHz:
      return positive(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    case DeviceAttr::kMultiProcessorCount:
      return positive(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    case DeviceAttr::kMaxThreadDimensions: {
      auto x = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), y = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
           z = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
      if (!x || !y || !z) return {};
      return std::vector<int64_t>{*x, *y, *z};
    }
    case DeviceAttr::kL2CacheBytes:
      return positive(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    case DeviceAttr::kTotalMemoryBytes: {
      size_t bytes = 0;
      if (driver_->device_total_mem(&bytes, d) != CUDA_SUCCESS || bytes == 0) return {};
      return static_cast<int64_t>(bytes);
    }
    // Free memory is a question to the device's context (retained here if it was not yet).
    case DeviceAttr::kAvailableMemoryBytes: {
      size_t free = 0, total = 0;
      try {
        bind(device_id);
      } catch (const Error&) {
        return {};
      }
      if (driver_->mem_get_info(&free, &total) != CUDA_SUCCESS) return {};
      return static_cast<int64_t>(free);
    }
    // The driver API this plugin was built against, and the one the installed driver provides.
    case DeviceAttr::kApiVersion:
      return "CUDA " + std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
    case DeviceAttr::kDriverVersion: {
      int v = 0;
      if (driver_->driver_get_version(&v) != CUDA_SUCCESS || v == 0) return {};
      return "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    }
    default:
      return {};
  }
}

void CudaDeviceAPI::set_device(int device_id) { bind(device_id); }

DataSpace CudaDeviceAPI::alloc_data_space(int device_id, size_t nbytes, size_t alignment) {
  // cuMemAlloc returns addresses aligned to at least 256 bytes.
  if (alignment > 256)
    throw Error(where(device_id) + ": alignment " + std::to_string(alignment) + " exceeds cuMemAlloc's 256 bytes");
  const Driver& d = bind(device_id);
  CUdeviceptr p = 0;
  cu_check(d.mem_alloc(&p, std::max<size_t>(nbytes, 1)), "cuMemAlloc",
           where(device_id) + ": cannot allocate " + std::to_string(nbytes) + " bytes");
  return space(p);
}

void CudaDeviceAPI::free_data_space(int device_id, DataSpace data) {
  if (!data) return;
  const Driver& d = bind(device_id);
  cu_check(d.mem_free(address(data)), "cuMemFree", where(device_id));
}

void CudaDeviceAPI::copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes, Device dev,
                                        Stream s) {
  if (nbytes == 0) return;
  const Driver& d = bind(dev.id);
  CUstream q = stream(dev.id, s);
  cu_check(d.memcpy_async(address(dst) + dst_offset, reinterpret_cast<CUdeviceptr>(host), nbytes, q), "cuMemcpyAsync",
           std::to_string(nbytes) + " bytes to " + where(dev.id));
  // The host memory must have been read before this returns, as the interface requires.
  cu_check(d.stream_synchronize(q), "cuStreamSynchronize", where(dev.id));
}

void CudaDeviceAPI::copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device dev,
                                        Stream s) {
  if (nbytes == 0) return;
  const Driver& d = bind(dev.id);
  cu_check(d.memcpy_async(reinterpret_cast<CUdeviceptr>(host), address(src) + src_offset, nbytes, stream(dev.id, s)),
           "cuMemcpyAsync", std::to_string(nbytes) + " bytes from " + where(dev.id));
}

void CudaDeviceAPI::copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset,
                                          size_t nbytes, Device dev, Stream s) {
  if (nbytes == 0) return;
  const Driver& d = bind(dev.id);
  CUstream q = stream(dev.id, s);
  const CUdeviceptr from = address(src) + src_offset, to = address(dst) + dst_offset;
  const bool overlap = from < to + nbytes && to < from + nbytes;
  if (!overlap) {
    cu_check(d.memcpy_async(to, from, nbytes, q), "cuMemcpyAsync",
             std::to_string(nbytes) + " bytes on " + where(dev.id));
    return;
  }
  // cuMemcpy leaves overlapping regions undefined: copy through a temporary.
  DataSpace tmp = alloc_data_space(dev.id, nbytes, 256);
  CUresult r = d.memcpy_async(address(tmp), from, nbytes, q);
  if (r == CUDA_SUCCESS) r = d.memcpy_async(to, address(tmp), nbytes, q);
  if (r == CUDA_SUCCESS) r = d.stream_synchronize(q);  // before the temporary is freed
  free_data_space(dev.id, tmp);
  cu_check(r, "cuMemcpyAsync", std::to_string(nbytes) + " overlapping bytes on " + where(dev.id));
}

Stream CudaDeviceAPI::create_stream(int device_id) {
  const Driver& d = bind(device_id);
  CUstream s = nullptr;
  cu_check(d.stream_create(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate", where(device_id));
  return s;
}

void CudaDeviceAPI::free_stream(int device_id, Stream s) {
  if (!s) return;
  DeviceState& state_of = state(device_id);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_of.kernel_stream == s) state_of.kernel_stream = nullptr;
  }
  const Driver& d = bind(device_id);
  d.stream_synchronize(static_cast<CUstream>(s));
  cu_check(d.stream_destroy(static_cast<CUstream>(s)), "cuStreamDestroy", where(device_id));
}

void CudaDeviceAPI::set_stream(int device_id, Stream s) {
  DeviceState& state_of = state(device_id);
  std::lock_guard<std::mutex> lock(mutex_);
  state_of.kernel_stream = static_cast<CUstream>(s);
}

void CudaDeviceAPI::stream_sync(int device_id, Stream s) {
  const Driver& d = bind(device_id);
  cu_check(d.stream_synchronize(stream(device_id, s)), "cuStreamSynchronize", where(device_id));
}

void CudaDeviceAPI::sync_stream_from_to(int device_id, Stream event_source, Stream waiter) {
  const Driver& d = bind(device_id);
  CUstream from = stream(device_id, event_source), to = stream(device_id, waiter);
  if (from == to) return;  // one stream: already in order
  CUevent event = nullptr;
  cu_check(d.event_create(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate", where(device_id));
  CUresult r = d.event_record(event, from);
  if (r == CUDA_SUCCESS) r = d.stream_wait_event(to, event, 0);
  d.event_destroy(event);  // the wait keeps what it needs of the event
  cu_check(r, "cuStreamWaitEvent", where(device_id));
}

}  // namespace tessel::cuda
