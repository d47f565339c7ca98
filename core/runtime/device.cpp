#include "core/runtime/device.h"

#include <mutex>

#include "core/support/error.h"

namespace tessel {

namespace {
struct TypeTable {
  std::mutex mutex;
  std::vector<std::pair<std::string, DeviceType>> entries = {
      {"cpu", DeviceType::kCPU},       {"cuda", DeviceType::kCUDA},   {"opencl", DeviceType::kOpenCL},
      {"vulkan", DeviceType::kVulkan}, {"metal", DeviceType::kMetal}, {"accel-sim", DeviceType::kAcceleratorSim},
  };
  int32_t next = static_cast<int32_t>(DeviceType::kFirstExtension);
};
TypeTable& table() {
  static TypeTable t;
  return t;
}
}  // namespace

std::string_view device_type_name(DeviceType t) {
  TypeTable& tt = table();
  std::lock_guard lock(tt.mutex);
  for (const auto& [name, type] : tt.entries)
    if (type == t) return name;  // entries are never removed, so the view stays valid
  return "unknown";
}

DeviceType device_type_from_name(std::string_view n) {
  TypeTable& tt = table();
  std::lock_guard lock(tt.mutex);
  std::string known;
  for (const auto& [name, type] : tt.entries) {
    if (name == n) return type;
    known += (known.empty() ? "" : ", ") + name;
  }
  throw Error("unknown device type '" + std::string(n) + "' (known: " + known + ")");
}

DeviceType register_device_type(const std::string& name) {
  TypeTable& tt = table();
  std::lock_guard lock(tt.mutex);
  for (const auto& [existing, type] : tt.entries)
    if (existing == name) return type;
  DeviceType t = static_cast<DeviceType>(tt.next++);
  tt.entries.emplace_back(name, t);
  return t;
}

std::vector<std::pair<std::string, DeviceType>> device_types() {
  TypeTable& tt = table();
  std::lock_guard lock(tt.mutex);
  return tt.entries;
}

std::string device_str(Device d) { return std::string(device_type_name(d.type)) + ":" + std::to_string(d.id); }

}  // namespace tessel
