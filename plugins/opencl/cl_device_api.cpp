#include "plugins/opencl/cl_device_api.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/support/error.h"
#include "core/support/isolated_call.h"

namespace tessel::opencl {

namespace {

cl_mem mem(DataSpace d) { return static_cast<cl_mem>(d); }

std::string device_info_string(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <class T>
DeviceAttrValue device_info_int(cl_device_id d, cl_device_info what, int64_t scale = 1) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS || v == 0) return {};
  return static_cast<int64_t>(v) * scale;
}

DeviceAttrValue text_or_none(std::string s) { return s.empty() ? DeviceAttrValue{} : DeviceAttrValue{std::move(s)}; }

// An OpenCL implementation may end the whole process when it cannot start: PoCL without /sys
// prints "Not enough memory to run on this device." and calls abort(). So the platforms are first
// listed in a child process (core/support/isolated_call.h); only when that child comes back
// healthy does this process load them. Returns "" (go ahead) or why not, with the child's last line.
std::string probe_platforms_in_a_child() {
  const IsolatedCall call = call_isolated(
      [] {
        cl_uint n = 0;
        if (clGetPlatformIDs(0, nullptr, &n) == CL_SUCCESS && n > 0) {
          std::vector<cl_platform_id> platforms(n);
          if (clGetPlatformIDs(n, platforms.data(), nullptr) == CL_SUCCESS)
            for (cl_platform_id p : platforms) {
              cl_uint count = 0;
              clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
            }
        }
        return std::string();
      },
      {.time_limit = std::chrono::seconds(30), .capture_stderr = true});
  if (call.ok()) return {};
  if (call.outcome == IsolatedCall::Outcome::not_started) return {};  // cannot probe: go ahead as before
  if (call.outcome == IsolatedCall::Outcome::timed_out)
    return "the OpenCL platform did not finish starting within 30 s (in a probe process)";
  const std::string last = call.last_err_line();
  return "the OpenCL platform crashed while starting (" + call.how + (last.empty() ? "" : ": " + last) + ")";
}

}  // namespace

void OpenClDeviceAPI::enumerate() const {
  std::call_once(enumerated_, [this] {
    if (std::string crash = probe_platforms_in_a_child(); !crash.empty()) {
      why_no_device_ = crash;
      return;
    }
    cl_uint platform_count = 0;
    cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
    if (status != CL_SUCCESS || platform_count == 0) {
      why_no_device_ = status == CL_SUCCESS ? "no OpenCL platform (the ICD loader found none)"
                                            : std::string("no OpenCL platform: clGetPlatformIDs returned ") +
                                                  cl_error_name(status) + " (" + std::to_string(status) + ")";
      return;
    }
    std::vector<cl_platform_id> platforms(platform_count);
    if (clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) {
      why_no_device_ = "no OpenCL platform: clGetPlatformIDs failed listing them";
      return;
    }
    for (cl_platform_id p : platforms) {
      cl_uint count = 0;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
      std::vector<cl_device_id> ids(count);
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
      for (cl_device_id id : ids) devices_.push_back(DeviceState{id, nullptr, nullptr, nullptr});
    }
    if (devices_.empty()) why_no_device_ = std::to_string(platform_count) + " OpenCL platform(s), no device";
  });
}

int OpenClDeviceAPI::device_count() const {
  enumerate();
  return static_cast<int>(devices_.size());
}

std::string OpenClDeviceAPI::why_no_device() const {
  enumerate();
  return why_no_device_;
}

OpenClDeviceAPI::DeviceState& OpenClDeviceAPI::state(int device_id) const {
  enumerate();
  if (device_id < 0 || device_id >= static_cast<int>(devices_.size()))
    throw Error(
        "opencl:" + std::to_string(device_id) + " does not exist (" +
        (devices_.empty() ? why_no_device_ : "devices: opencl:0 .. opencl:" + std::to_string(devices_.size() - 1)) +
        ")");
  DeviceState& s = devices_[static_cast<size_t>(device_id)];
  std::lock_guard<std::mutex> lock(mutex_);
  if (!s.context) {
    cl_int status = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &s.id, nullptr, nullptr, &status);
    cl_check(status, "clCreateContext", "opencl:" + std::to_string(device_id));
    // Profiling on: each kernel's events carry the device's queued/submit/start/end times.
    cl_command_queue queue = clCreateCommandQueue(context, s.id, CL_QUEUE_PROFILING_ENABLE, &status);
    if (status != CL_SUCCESS) clReleaseContext(context);
    cl_check(status, "clCreateCommandQueue", "opencl:" + std::to_string(device_id));
    s.context = context;
    s.default_queue = queue;
  }
  return s;
}

cl_device_id OpenClDeviceAPI::device(int device_id) const { return state(device_id).id; }
cl_context OpenClDeviceAPI::context(int device_id) const { return state(device_id).context; }

cl_command_queue OpenClDeviceAPI::queue(int device_id, Stream stream) const {
  DeviceState& s = state(device_id);
  return stream ? static_cast<cl_command_queue>(stream) : s.default_queue;
}

cl_command_queue OpenClDeviceAPI::kernel_queue(int device_id) const {
  DeviceState& s = state(device_id);
  std::lock_guard<std::mutex> lock(mutex_);
  return s.kernel_queue ? s.kernel_queue : s.default_queue;
}

DeviceAttrValue OpenClDeviceAPI::attribute(int device_id, DeviceAttr attr) const {
  enumerate();
  const bool exists = device_id >= 0 && device_id < static_cast<int>(devices_.size());
  if (attr == DeviceAttr::kExist) return int64_t{exists};
  if (!exists) return {};
  const cl_device_id d = devices_[static_cast<size_t>(device_id)].id;
  switch (attr) {
    case DeviceAttr::kName:
      return text_or_none(device_info_string(d, CL_DEVICE_NAME));
    case DeviceAttr::kMaxThreadsPerBlock:
      return device_info_int<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    case DeviceAttr::kMaxSharedMemoryPerBlock:
      return device_info_int<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
    // The OpenCL C version the compiler accepts ("OpenCL C 1.2 PoCL"): OpenCL's compute version.
    case DeviceAttr::kComputeVersion:
      return text_or_none(device_info_string(d, CL_DEVICE_OPENCL_C_VERSION));
    case DeviceAttr::kClockRateKHz:
      return device_info_int<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, 1000);
    case DeviceAttr::kMultiProcessorCount:
      return device_info_int<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    case DeviceAttr::kMaxThreadDimensions: {
      cl_uint dims = 0;
      if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, nullptr) != CL_SUCCESS || !dims)
        return {};
      std::vector<size_t> sizes(dims);
      if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims, sizes.data(), nullptr) != CL_SUCCESS)
        return {};
      return std::vector<int64_t>(sizes.begin(), sizes.end());
    }
    // The cache in front of global memory: a GPU's L2 (on a CPU device, the driver's choice of level).
    case DeviceAttr::kL2CacheBytes:
      return device_info_int<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    case DeviceAttr::kTotalMemoryBytes:
      return device_info_int<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    case DeviceAttr::kApiVersion:
      return text_or_none(device_info_string(d, CL_DEVICE_VERSION));
    case DeviceAttr::kDriverVersion:
      return text_or_none(device_info_string(d, CL_DRIVER_VERSION));
    // OpenCL 1.2 cannot tell the sub-group width (a kernel query of 2.1) nor the free memory.
    default:
      return {};
  }
}

void OpenClDeviceAPI::set_device(int device_id) { state(device_id); }

DataSpace OpenClDeviceAPI::alloc_data_space(int device_id, size_t nbytes, size_t /*alignment*/) {
  // cl_mem objects are aligned by the driver (CL_DEVICE_MEM_BASE_ADDR_ALIGN), whatever is asked.
  DeviceState& s = state(device_id);
  cl_int status = CL_SUCCESS;
  cl_mem m = clCreateBuffer(s.context, CL_MEM_READ_WRITE, std::max<size_t>(nbytes, 1), nullptr, &status);
  cl_check(status, "clCreateBuffer",
           "opencl:" + std::to_string(device_id) + ": cannot allocate " + std::to_string(nbytes) + " bytes");
  return m;
}

void OpenClDeviceAPI::free_data_space(int /*device_id*/, DataSpace data) {
  if (data) clReleaseMemObject(mem(data));
}

void OpenClDeviceAPI::copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes, Device dev,
                                          Stream stream) {
  if (nbytes == 0) return;
  // Blocking: the host memory is read before the call returns, as the interface requires.
  cl_check(
      clEnqueueWriteBuffer(queue(dev.id, stream), mem(dst), CL_TRUE, dst_offset, nbytes, host, 0, nullptr, nullptr),
      "clEnqueueWriteBuffer", std::to_string(nbytes) + " bytes to opencl:" + std::to_string(dev.id));
}

void OpenClDeviceAPI::copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device dev,
                                          Stream stream) {
  if (nbytes == 0) return;
  cl_check(
      clEnqueueReadBuffer(queue(dev.id, stream), mem(src), CL_FALSE, src_offset, nbytes, host, 0, nullptr, nullptr),
      "clEnqueueReadBuffer", std::to_string(nbytes) + " bytes from opencl:" + std::to_string(dev.id));
}

void OpenClDeviceAPI::copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset,
                                            size_t nbytes, Device dev, Stream stream) {
  if (nbytes == 0) return;
  cl_command_queue q = queue(dev.id, stream);
  const bool overlap = src == dst && src_offset < dst_offset + nbytes && dst_offset < src_offset + nbytes;
  if (!overlap) {
    cl_check(clEnqueueCopyBuffer(q, mem(src), mem(dst), src_offset, dst_offset, nbytes, 0, nullptr, nullptr),
             "clEnqueueCopyBuffer", std::to_string(nbytes) + " bytes on opencl:" + std::to_string(dev.id));
    return;
  }
  // OpenCL refuses overlapping regions of one buffer (CL_MEM_COPY_OVERLAP): copy through a temporary.
  DataSpace tmp = alloc_data_space(dev.id, nbytes, 64);
  cl_int status = clEnqueueCopyBuffer(q, mem(src), mem(tmp), src_offset, 0, nbytes, 0, nullptr, nullptr);
  if (status == CL_SUCCESS)
    status = clEnqueueCopyBuffer(q, mem(tmp), mem(dst), 0, dst_offset, nbytes, 0, nullptr, nullptr);
  free_data_space(dev.id, tmp);  // released once the queued copies no longer need it
  cl_check(status, "clEnqueueCopyBuffer",
           std::to_string(nbytes) + " overlapping bytes on opencl:" + std::to_string(dev.id));
}

Stream OpenClDeviceAPI::create_stream(int device_id) {
  DeviceState& s = state(device_id);
  cl_int status = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(s.context, s.id, 0, &status);
  cl_check(status, "clCreateCommandQueue", "opencl:" + std::to_string(device_id));
  return q;
}

void OpenClDeviceAPI::free_stream(int device_id, Stream stream) {
  if (!stream) return;
  DeviceState& s = state(device_id);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (s.kernel_queue == stream) s.kernel_queue = nullptr;
  }
  clFinish(static_cast<cl_command_queue>(stream));
  clReleaseCommandQueue(static_cast<cl_command_queue>(stream));
}

void OpenClDeviceAPI::set_stream(int device_id, Stream stream) {
  DeviceState& s = state(device_id);
  std::lock_guard<std::mutex> lock(mutex_);
  s.kernel_queue = static_cast<cl_command_queue>(stream);
}

void OpenClDeviceAPI::stream_sync(int device_id, Stream stream) {
  cl_check(clFinish(queue(device_id, stream)), "clFinish", "opencl:" + std::to_string(device_id));
}

void OpenClDeviceAPI::sync_stream_from_to(int device_id, Stream event_source, Stream waiter) {
  cl_command_queue from = queue(device_id, event_source), to = queue(device_id, waiter);
  if (from == to) return;  // one in-order queue: already ordered
  cl_event marker = nullptr;
  cl_check(clEnqueueMarkerWithWaitList(from, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList",
           "opencl:" + std::to_string(device_id));
  // The marker must reach the device even if nothing else is ever enqueued on `from`.
  cl_int status = clFlush(from);
  if (status == CL_SUCCESS) status = clEnqueueBarrierWithWaitList(to, 1, &marker, nullptr);
  clReleaseEvent(marker);
  cl_check(status, "clEnqueueBarrierWithWaitList", "opencl:" + std::to_string(device_id));
}

}  // namespace tessel::opencl
