#pragma once
// The host CPU as a device. Data space is aligned host memory; every copy is a memcpy that has
// finished when the call returns; there is one queue, so no streams.
#include "core/runtime/device_api.h"

namespace tessel {

class CpuDeviceAPI final : public DeviceAPI {
 public:
  DeviceType type() const override { return DeviceType::kCPU; }
  int device_count() const override { return 1; }
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
  void stream_sync(int device_id, Stream stream) override;
};

}  // namespace tessel
