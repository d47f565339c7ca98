#pragma once
// DeviceAPI: the narrow interface every device type implements (TVM's device_api.h is the model).
//
//   host Tensor ──copy_host_to_device──▶ DataSpace (opaque handle) ──kernel──▶ DataSpace
//               ──copy_device_to_host──▶ host
//
// Data space is an opaque handle, not necessarily an address. Copies are issued on a stream; a
// host buffer may not be assumed valid after the call returns, so implementations must finish
// reading it (or copy it) before returning. Devices with a single queue return no streams
// (nullptr) and treat every stream argument as that queue.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/runtime/device.h"

namespace tessel {

enum class DeviceAttr {
  kExist,
  kName,
  kMaxThreadsPerBlock,
  kWarpSize,
  kMaxSharedMemoryPerBlock,
  kComputeVersion,
  kClockRateKHz,
  kMultiProcessorCount,
  kMaxThreadDimensions,
  kL2CacheBytes,
  kTotalMemoryBytes,
  kAvailableMemoryBytes,
  kApiVersion,
  kDriverVersion,
};
std::string_view device_attr_name(DeviceAttr a);
std::vector<DeviceAttr> all_device_attrs();

// An attribute value; std::monostate means "does not apply to this device" — never a made-up number.
using DeviceAttrValue = std::variant<std::monostate, int64_t, std::string, std::vector<int64_t>>;
std::string device_attr_value_str(const DeviceAttrValue& v);  // "none" for monostate

using DataSpace = void*;  // opaque
using Stream = void*;     // opaque; nullptr is the default queue

class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  virtual DeviceType type() const = 0;
  virtual int device_count() const = 0;
  // When device_count() is 0: why ("no OpenCL platform: ..."), for `tessel targets`; else "".
  virtual std::string why_no_device() const { return {}; }
  virtual DeviceAttrValue attribute(int device_id, DeviceAttr attr) const = 0;
  virtual void set_device(int device_id) = 0;

  virtual DataSpace alloc_data_space(int device_id, size_t nbytes, size_t alignment) = 0;
  virtual void free_data_space(int device_id, DataSpace data) = 0;
  // Workspace defaults to data space; devices with a faster scratch allocator override.
  virtual DataSpace alloc_workspace(int device_id, size_t nbytes) { return alloc_data_space(device_id, nbytes, 64); }
  virtual void free_workspace(int device_id, DataSpace data) { free_data_space(device_id, data); }

  virtual void copy_host_to_device(const void* host, DataSpace dst, size_t dst_offset, size_t nbytes, Device dev,
                                   Stream stream) = 0;
  virtual void copy_device_to_host(DataSpace src, size_t src_offset, void* host, size_t nbytes, Device dev,
                                   Stream stream) = 0;
  virtual void copy_device_to_device(DataSpace src, size_t src_offset, DataSpace dst, size_t dst_offset, size_t nbytes,
                                     Device dev, Stream stream) = 0;

  virtual Stream create_stream(int /*device_id*/) { return nullptr; }
  virtual void free_stream(int /*device_id*/, Stream /*stream*/) {}
  virtual void set_stream(int /*device_id*/, Stream /*stream*/) {}
  virtual void stream_sync(int device_id, Stream stream) = 0;
  // Makes `waiter` wait for all work issued so far on `event_source`.
  virtual void sync_stream_from_to(int /*device_id*/, Stream /*event_source*/, Stream /*waiter*/) {}
};

// Typed registry: one DeviceAPI per device type. The CPU's is built in; plugins add others.
class DeviceAPIRegistry {
 public:
  static DeviceAPIRegistry& global();
  void add(std::unique_ptr<DeviceAPI> api, const std::string& provider);  // throws Error if the type is taken
  DeviceAPI* find(DeviceType t) const;
  DeviceAPI& get(DeviceType t) const;  // throws Error naming the type and the registered ones
  std::vector<DeviceAPI*> all() const;
  std::string provider(DeviceType t) const;
  // Removes the APIs a plugin added (used when a plugin's registration fails halfway).
  void remove_provider(const std::string& provider);

 private:
  DeviceAPIRegistry();
  struct Entry {
    std::unique_ptr<DeviceAPI> api;
    std::string provider;
  };
  std::vector<Entry> entries_;
};

}  // namespace tessel
