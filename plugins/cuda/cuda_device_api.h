#pragma once
// The CUDA DeviceAPI: the driver's devices as cuda:0..N-1, each through its primary context.
//
//   DataSpace  a CUdeviceptr (a device address; offsets are added to it, never dereferenced here)
//   Stream     a CUstream; nullptr is the device's own non-blocking stream (not CUDA's legacy
//              default stream, which would serialize with every other stream)
//   copies     all with cuMemcpyAsync (unified addressing tells host from device); host→device
//              waits for its stream before returning (the caller may free the host memory at
//              once); device→host and device→device are finished by stream_sync
//   cross-stream sync_stream_from_to records an event on one stream and makes the other wait on it
//
// The driver is opened on first use (plugins/cuda/cuda_library.h), so loading the plugin needs
// no GPU: without a driver or a device, device_count() is 0 and why_no_device() says why.
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime/device_api.h"
#include "plugins/cuda/cuda_library.h"

namespace tessel::cuda {

class CudaDeviceAPI final : public DeviceAPI {
 public:
  CudaDeviceAPI() = default;
  // Primary contexts and streams are left to the driver at exit (it may have torn them down
  // before the registry that owns this object is destroyed).
  ~CudaDeviceAPI() override = default;

  DeviceType type() const override { return DeviceType::kCUDA; }
  int device_count() const override;
  std::string why_no_device() const override;
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

  // For the module: makes the device's context current on this thread and returns the driver.
  const Driver& bind(int device_id) const;
  CUstream stream(int device_id, Stream s) const;  // nullptr: the device's own stream
  CUstream kernel_stream(int device_id) const;     // the stream set_stream chose

  static CUdeviceptr address(DataSpace d) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(d)); }
  static DataSpace space(CUdeviceptr p) { return reinterpret_cast<DataSpace>(static_cast<uintptr_t>(p)); }

 private:
  struct DeviceState {
    CUdevice device = 0;
    CUcontext context = nullptr;        // the primary context, retained on first use
    CUstream default_stream = nullptr;  // created with the context
    CUstream kernel_stream = nullptr;   // nullptr: the default stream
  };
  void enumerate() const;
  DeviceState& state(int device_id) const;  // throws Error for an id that does not exist
  std::string where(int device_id) const { return "cuda:" + std::to_string(device_id); }

  mutable std::once_flag enumerated_;
  mutable std::mutex mutex_;  // guards the lazily retained contexts and the kernel streams
  mutable std::vector<DeviceState> devices_;
  mutable std::string why_no_device_;
  mutable const Driver* driver_ = nullptr;
};

}  // namespace tessel::cuda
