#pragma once
// What a backend plugin sees. A plugin is a shared library plus a JSON description beside it:
//
//   llvm_cpu.json                     {"name": "llvm_cpu", "version": "0.1.0", "core_version": "0.1",
//   libtessel_llvm_cpu.so              "library": "libtessel_llvm_cpu.so",
//                                      "provides": {"target_kinds": ["llvm"], "codegens": ["llvm"],
//                                                   "device_types": []}}
//
// and exactly one entry point, `tessel_plugin_register`, which registers what the plugin provides
// through the PluginContext. Registrations are held back until the entry point returns 0 and they
// match the description's "provides"; a plugin that fails registers nothing.
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/codegen.h"
#include "core/runtime/device_api.h"
#include "core/target/target.h"

namespace tessel {

class PluginContext {
 public:
  explicit PluginContext(std::string plugin_name) : plugin_name_(std::move(plugin_name)) {}
  const std::string& plugin_name() const { return plugin_name_; }

  void add_device_api(std::unique_ptr<DeviceAPI> api) { device_apis_.push_back(std::move(api)); }
  void add_target_kind(TargetKind kind) { target_kinds_.push_back(std::move(kind)); }
  void add_codegen(std::string target_kind, CodeGenFn fn) { codegens_.emplace_back(std::move(target_kind), std::move(fn)); }
  // Why registration failed, for the loader's message (the entry point returns non-zero).
  void set_error(std::string message) { error_ = std::move(message); }

 private:
  friend class PluginManager;
  std::string plugin_name_;
  std::vector<std::unique_ptr<DeviceAPI>> device_apis_;
  std::vector<TargetKind> target_kinds_;
  std::vector<std::pair<std::string, CodeGenFn>> codegens_;
  std::string error_;
};

}  // namespace tessel

// The one entry point every plugin exports. Returns 0 on success.
#define TESSEL_PLUGIN_ENTRY extern "C" __attribute__((visibility("default"))) int tessel_plugin_register
using TesselPluginRegisterFn = int (*)(tessel::PluginContext*);
