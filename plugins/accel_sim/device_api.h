#pragma once
// The accel-sim DeviceAPI: one simulated accelerator, accel-sim:0.
//
//   DataSpace  an address in the simulated DRAM (accel::Dram), never a host pointer
//   Stream     none: the accelerator has one command stream, and a kernel call runs its
//              instruction stream to the end before it returns, so copies and stream_sync
//              complete at once
//   attributes the machine model with its default options (a Target may choose others)
#include "core/runtime/device_api.h"
#include "plugins/accel_sim/simulator.h"

namespace tessel::accel {

class AccelSimDeviceAPI final : public DeviceAPI {
 public:
  DeviceType type() const override { return DeviceType::kAcceleratorSim; }
  int device_count() const override { return 1; }
  DeviceAttrValue attribute(int device_id, DeviceAttr attr) const override;
  void set_device(int device_id) override { check(device_id); }

  DataSpace alloc_data_space(int device_id, size_t nbytes, size_t alignment) override;
  void free_data_space(int device_id, DataSpace data) override;

  void copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes, Device dev,
                           Stream stream) override;
  void copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device dev,
                           Stream stream) override;
  void copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset, size_t nbytes,
                             Device dev, Stream stream) override;
  void stream_sync(int device_id, Stream /*stream*/) override { check(device_id); }

  Dram& dram() { return dram_; }
  static uint64_t address(DataSpace d) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(d)); }

  // The simulated DRAM's capacity (allocations beyond it are refused).
  static constexpr int64_t kDramBytes = int64_t{4} << 30;

 private:
  void check(int device_id) const;
  Dram dram_;
};

}  // namespace tessel::accel
