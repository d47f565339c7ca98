#include "plugins/accel_sim/device_api.h"

#include "core/support/error.h"

namespace tessel::accel {

void AccelSimDeviceAPI::check(int device_id) const {
  if (device_id != 0)
    throw Error("accel-sim:" + std::to_string(device_id) +
                " does not exist (the simulator has one device, accel-sim:0)");
}

DeviceAttrValue AccelSimDeviceAPI::attribute(int device_id, DeviceAttr attr) const {
  if (device_id != 0) return attr == DeviceAttr::kExist ? DeviceAttrValue{int64_t{0}} : DeviceAttrValue{};
  MachineConfig m;
  switch (attr) {
    case DeviceAttr::kExist:
      return int64_t{1};
    case DeviceAttr::kName:
      return "accel-sim: " + m.str();
    case DeviceAttr::kClockRateKHz:
      return m.clock_mhz * 1000;
    case DeviceAttr::kMaxSharedMemoryPerBlock:
      return m.inp_bytes + m.wgt_bytes + m.acc_bytes;  // the scratchpads
    case DeviceAttr::kTotalMemoryBytes:
      return kDramBytes;
    case DeviceAttr::kAvailableMemoryBytes:
      return kDramBytes - static_cast<int64_t>(dram_.allocated_bytes());
    case DeviceAttr::kMultiProcessorCount:
      return int64_t{1};
    case DeviceAttr::kComputeVersion:
      return "gemm " + std::to_string(m.gemm) + "x" + std::to_string(m.gemm) + " int8";
    default:
      return {};
  }
}

DataSpace AccelSimDeviceAPI::alloc_data_space(int device_id, size_t nbytes, size_t alignment) {
  check(device_id);
  if (static_cast<int64_t>(dram_.allocated_bytes() + nbytes) > kDramBytes)
    throw Error("accel-sim:0: out of simulated DRAM: " + std::to_string(nbytes) + " bytes requested, " +
                std::to_string(dram_.allocated_bytes()) + " of " + std::to_string(kDramBytes) + " in use");
  return reinterpret_cast<DataSpace>(static_cast<uintptr_t>(dram_.alloc(nbytes, alignment)));
}

void AccelSimDeviceAPI::free_data_space(int device_id, DataSpace data) {
  check(device_id);
  if (data) dram_.free(address(data));
}

void AccelSimDeviceAPI::copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes,
                                            Device dev, Stream) {
  check(dev.id);
  dram_.write(address(dst) + dst_offset, host, nbytes);
}

void AccelSimDeviceAPI::copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device dev,
                                            Stream) {
  check(dev.id);
  dram_.read(address(src) + src_offset, host, nbytes);
}

void AccelSimDeviceAPI::copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset,
                                              size_t nbytes, Device dev, Stream) {
  check(dev.id);
  dram_.copy(address(src) + src_offset, address(dst) + dst_offset, nbytes);
}

}  // namespace tessel::accel
