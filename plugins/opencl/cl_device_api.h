#pragma once
// The OpenCL DeviceAPI: every device of every OpenCL platform, in platform order, as opencl:0..N-1.
//
//   DataSpace  a cl_mem (never a host pointer: offsets go to the enqueue calls)
//   Stream     a cl_command_queue (in order); nullptr is the device's default queue
//   copies     host→device blocking (the caller may free the host memory at once); device→host
//              and device→device enqueued, finished by stream_sync; sync_stream_from_to puts a
//              marker on one queue and a barrier waiting for it on the other
//
// Platforms are enumerated on first use, so loading the plugin loads no OpenCL driver. No
// platform, or no device, is not an error: device_count() is 0 and why_no_device() says why.
// Each device gets one context, created on first use; kernels run on the queue set_stream chose.
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime/device_api.h"
#include "plugins/opencl/cl_errors.h"

namespace tessel::opencl {

class OpenClDeviceAPI final : public DeviceAPI {
 public:
  OpenClDeviceAPI() = default;
  // The contexts and queues are left to the driver at exit: an OpenCL driver may already have
  // torn its state down when the registry that owns this object is destroyed.
  ~OpenClDeviceAPI() override = default;

  DeviceType type() const override { return DeviceType::kOpenCL; }
  int device_count() const override;
  DeviceAttrValue attribute(int device_id, DeviceAttr attr) const override;
  void set_device(int device_id) override;

  DataSpace alloc_data_space(int device_id, size_t nbytes, size_t alignment) override;
  void free_data_space(int device_id, DataSpace data) override;

  void copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes, Device dev,
                           Stream stream) override;
  void copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device dev,
                           Stream stream) override;
  void copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset, size_t nbytes,
                             Device dev, Stream stream) override;

  Stream create_stream(int device_id) override;
  void free_stream(int device_id, Stream stream) override;
  void set_stream(int device_id, Stream stream) override;
  void stream_sync(int device_id, Stream stream) override;
  void sync_stream_from_to(int device_id, Stream event_source, Stream waiter) override;

  // For the module: the device's handles (context and default queue created on first use).
  cl_device_id device(int device_id) const;
  cl_context context(int device_id) const;
  cl_command_queue queue(int device_id, Stream stream) const;  // nullptr: the default queue
  cl_command_queue kernel_queue(int device_id) const;          // the queue set_stream chose
  // Why there is no device ("no OpenCL platform: clGetPlatformIDs ..."); "" when there is one.
  std::string why_no_device() const override;

 private:
  struct DeviceState {
    cl_device_id id = nullptr;
    cl_context context = nullptr;
    cl_command_queue default_queue = nullptr;
    cl_command_queue kernel_queue = nullptr;  // nullptr: the default queue
  };
  void enumerate() const;
  DeviceState& state(int device_id) const;  // throws Error for an id that does not exist

  mutable std::once_flag enumerated_;
  mutable std::mutex mutex_;  // guards the lazily created contexts and queues
  mutable std::vector<DeviceState> devices_;
  mutable std::string why_no_device_;
};

}  // namespace tessel::opencl
