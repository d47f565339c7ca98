#include "core/runtime/device_api.h"

#include <algorithm>

#include "core/runtime/cpu_device_api.h"
#include "core/support/error.h"

namespace tessel {

std::string_view device_attr_name(DeviceAttr a) {
  switch (a) {
    case DeviceAttr::kExist: return "exist";
    case DeviceAttr::kName: return "name";
    case DeviceAttr::kMaxThreadsPerBlock: return "max_threads_per_block";
    case DeviceAttr::kWarpSize: return "warp_size";
    case DeviceAttr::kMaxSharedMemoryPerBlock: return "max_shared_memory_per_block";
    case DeviceAttr::kComputeVersion: return "compute_version";
    case DeviceAttr::kClockRateKHz: return "clock_rate_khz";
    case DeviceAttr::kMultiProcessorCount: return "multiprocessor_count";
    case DeviceAttr::kMaxThreadDimensions: return "max_thread_dimensions";
    case DeviceAttr::kL2CacheBytes: return "l2_cache_bytes";
    case DeviceAttr::kTotalMemoryBytes: return "total_memory_bytes";
    case DeviceAttr::kAvailableMemoryBytes: return "available_memory_bytes";
    case DeviceAttr::kApiVersion: return "api_version";
    case DeviceAttr::kDriverVersion: return "driver_version";
  }
  return "?";
}

std::vector<DeviceAttr> all_device_attrs() {
  std::vector<DeviceAttr> out;
  for (int a = static_cast<int>(DeviceAttr::kExist); a <= static_cast<int>(DeviceAttr::kDriverVersion); ++a)
    out.push_back(static_cast<DeviceAttr>(a));
  return out;
}

std::string device_attr_value_str(const DeviceAttrValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "none";
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  const auto& dims = std::get<std::vector<int64_t>>(v);
  std::string s = "[";
  for (size_t k = 0; k < dims.size(); ++k) s += (k ? "," : "") + std::to_string(dims[k]);
  return s + "]";
}

DeviceAPIRegistry::DeviceAPIRegistry() { entries_.push_back({std::make_unique<CpuDeviceAPI>(), "core"}); }

DeviceAPIRegistry& DeviceAPIRegistry::global() {
  static DeviceAPIRegistry r;
  return r;
}

void DeviceAPIRegistry::add(std::unique_ptr<DeviceAPI> api, const std::string& provider) {
  if (DeviceAPI* existing = find(api->type()))
    throw Error("device type '" + std::string(device_type_name(api->type())) + "' already has a DeviceAPI (from " +
                this->provider(existing->type()) + ")");
  entries_.push_back({std::move(api), provider});
}

DeviceAPI* DeviceAPIRegistry::find(DeviceType t) const {
  for (const Entry& e : entries_)
    if (e.api->type() == t) return e.api.get();
  return nullptr;
}

DeviceAPI& DeviceAPIRegistry::get(DeviceType t) const {
  if (DeviceAPI* api = find(t)) return *api;
  std::string known;
  for (const Entry& e : entries_) known += (known.empty() ? "" : ", ") + std::string(device_type_name(e.api->type()));
  throw Error("no DeviceAPI for device type '" + std::string(device_type_name(t)) + "' (registered: " + known + ")");
}

std::vector<DeviceAPI*> DeviceAPIRegistry::all() const {
  std::vector<DeviceAPI*> out;
  for (const Entry& e : entries_) out.push_back(e.api.get());
  return out;
}

std::string DeviceAPIRegistry::provider(DeviceType t) const {
  for (const Entry& e : entries_)
    if (e.api->type() == t) return e.provider;
  return "";
}

void DeviceAPIRegistry::remove_provider(const std::string& provider) {
  std::erase_if(entries_, [&](const Entry& e) { return e.provider == provider; });
}

}  // namespace tessel
