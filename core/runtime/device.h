#pragma once
// Devices: a device type (one table maps names to types, with room for types that plugins add)
// and an id within that type.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

// Built-in device types keep fixed numbers (they appear in saved sessions and traces); plugins
// register further types with register_device_type(), which hands out numbers from kFirstExtension.
enum class DeviceType : int32_t {
  kCPU = 1,
  kCUDA = 2,
  kOpenCL = 4,
  kVulkan = 7,
  kMetal = 8,
  kAcceleratorSim = 12,
  kFirstExtension = 32,
};

struct Device {
  DeviceType type = DeviceType::kCPU;
  int32_t id = 0;
  bool operator==(const Device&) const = default;
};

std::string_view device_type_name(DeviceType t);      // "cpu", "cuda", ...; "ext32" for unnamed
DeviceType device_type_from_name(std::string_view n);  // throws Error listing the known names
// Adds a device type named `name` (or returns the existing one of that name).
DeviceType register_device_type(const std::string& name);
std::vector<std::pair<std::string, DeviceType>> device_types();
std::string device_str(Device d);  // "cpu:0"

}  // namespace tessel
