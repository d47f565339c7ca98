#include "core/runtime/cpu_device_api.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "core/support/error.h"

namespace tessel {

namespace {

void check_device(int device_id) {
  if (device_id != 0) throw Error("cpu:" + std::to_string(device_id) + " does not exist (the host is cpu:0)");
}

// "model name" from /proc/cpuinfo; the kernel's text, not a guess.
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "cpu";
}

DeviceAttrValue meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  int64_t kb;
  std::string unit;
  while (in >> name >> kb >> unit)
    if (name == key + ":") return kb * 1024;
  return {};
}

DeviceAttrValue clock_rate_khz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return static_cast<int64_t>(std::stod(line.substr(colon + 1)) * 1000);
    }
  }
  return {};
}

}  // namespace

DeviceAttrValue CpuDeviceAPI::attribute(int device_id, DeviceAttr attr) const {
  if (attr == DeviceAttr::kExist) return int64_t{device_id == 0};
  if (device_id != 0) return {};
  switch (attr) {
    case DeviceAttr::kName: return cpu_model_name();
    case DeviceAttr::kMultiProcessorCount: return static_cast<int64_t>(std::thread::hardware_concurrency());
    case DeviceAttr::kClockRateKHz: return clock_rate_khz();
    case DeviceAttr::kL2CacheBytes: {
      long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
      return l2 > 0 ? DeviceAttrValue{static_cast<int64_t>(l2)} : DeviceAttrValue{};
    }
    case DeviceAttr::kTotalMemoryBytes: return meminfo_bytes("MemTotal");
    case DeviceAttr::kAvailableMemoryBytes: return meminfo_bytes("MemAvailable");
    default: return {};  // thread blocks, warps, shared memory, compute/API/driver versions: not a CPU's
  }
}

void CpuDeviceAPI::set_device(int device_id) { check_device(device_id); }

DataSpace CpuDeviceAPI::alloc_data_space(int device_id, size_t nbytes, size_t alignment) {
  check_device(device_id);
  alignment = std::max<size_t>(alignment, alignof(std::max_align_t));
  size_t rounded = (std::max<size_t>(nbytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw Error("cpu: could not allocate " + std::to_string(nbytes) + " bytes");
  return p;
}

void CpuDeviceAPI::free_data_space(int, DataSpace data) { std::free(data); }

void CpuDeviceAPI::copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes, Device,
                                       Stream) {
  std::memcpy(static_cast<char*>(dst) + dst_offset, host, nbytes);
}

void CpuDeviceAPI::copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device, Stream) {
  std::memcpy(host, static_cast<const char*>(src) + src_offset, nbytes);
}

void CpuDeviceAPI::copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset,
                                         size_t nbytes, Device, Stream) {
  std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset, nbytes);
}

void CpuDeviceAPI::stream_sync(int device_id, Stream) { check_device(device_id); }

}  // namespace tessel
