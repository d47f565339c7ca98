// tessel targets [--json]: the plugins found (and why any was skipped), every target kind with its
// options, and every device with its attributes ("none" where one does not apply).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <span>

#include "app/cli/cli_args.h"
#include "app/cli/cli_target.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/device_api.h"

namespace tessel::cli {

namespace {
const ArgSpec kSpec{.usage = "tessel targets [--json]", .flags = {"--json"}};

std::string option_default(const Target& t, const TargetOptionSpec& o) {
  switch (o.type) {
    case TargetOptionSpec::Type::kInt:
      return std::to_string(t.get_int(o.name));
    case TargetOptionSpec::Type::kBool:
      return t.get_bool(o.name) ? "true" : "false";
    case TargetOptionSpec::Type::kString:
      return "\"" + t.get_string(o.name) + "\"";
  }
  return "";
}
}  // namespace

int run_targets_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, "Lists plugins, target kinds and devices.\n"), 0;
  load_plugins();
  nlohmann::json j{{"plugins", nlohmann::json::array()},
                   {"target_kinds", nlohmann::json::array()},
                   {"devices", nlohmann::json::array()}};
  for (const PluginStatus& p : PluginManager::global().plugins())
    j["plugins"].push_back({{"name", p.name},
                            {"version", p.version},
                            {"path", p.description_path},
                            {"loaded", p.loaded},
                            {"error", p.error}});
  for (const std::string& name : TargetKindRegistry::global().names()) {
    const TargetKind& k = TargetKindRegistry::global().get(name);
    Target defaults = Target::of_kind(name);
    nlohmann::json kind{{"name", name},
                        {"device", k.device},
                        {"doc", k.doc},
                        {"codegen", CodeGenRegistry::global().has(name)},
                        {"options", nlohmann::json::array()}};
    for (const TargetOptionSpec& o : k.options)
      kind["options"].push_back({{"name", o.name},
                                 {"type", std::string(target_option_type_name(o.type))},
                                 {"default", option_default(defaults, o)},
                                 {"doc", o.doc}});
    j["target_kinds"].push_back(kind);
  }
  j["no_devices"] = nlohmann::json::array();  // device types whose API found none, with why
  for (DeviceAPI* api : DeviceAPIRegistry::global().all()) {
    if (api->device_count() == 0)
      j["no_devices"].push_back({{"type", std::string(device_type_name(api->type()))},
                                 {"provider", DeviceAPIRegistry::global().provider(api->type())},
                                 {"why", api->why_no_device()}});
    for (int id = 0; id < api->device_count(); ++id) {
      nlohmann::json d{{"device", device_str(Device{api->type(), id})},
                       {"provider", DeviceAPIRegistry::global().provider(api->type())}};
      for (DeviceAttr a : all_device_attrs())
        d["attributes"][std::string(device_attr_name(a))] = device_attr_value_str(api->attribute(id, a));
      j["devices"].push_back(d);
    }
  }
  if (args.flag("--json")) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("plugins:\n");
  for (const auto& p : j["plugins"])
    std::printf("  %-10s %-8s %s%s\n", p["name"].get<std::string>().c_str(), p["version"].get<std::string>().c_str(),
                p["loaded"].get<bool>() ? "loaded" : "SKIPPED: ", p["error"].get<std::string>().c_str());
  std::printf("\ntarget kinds:\n");
  for (const auto& k : j["target_kinds"]) {
    std::printf("  %-8s on %-4s %s%s\n", k["name"].get<std::string>().c_str(), k["device"].get<std::string>().c_str(),
                k["doc"].get<std::string>().c_str(),
                k["codegen"].get<bool>() ? "" : " (no code generator: runs the reference kernels)");
    for (const auto& o : k["options"])
      std::printf("      -%-12s %-6s default %-10s %s\n", o["name"].get<std::string>().c_str(),
                  o["type"].get<std::string>().c_str(), o["default"].get<std::string>().c_str(),
                  o["doc"].get<std::string>().c_str());
  }
  std::printf("\ndevices:\n");
  for (const auto& d : j["devices"]) {
    std::printf("  %s (from %s)\n", d["device"].get<std::string>().c_str(), d["provider"].get<std::string>().c_str());
    for (const auto& [name, value] : d["attributes"].items())
      std::printf("      %-28s %s\n", name.c_str(), value.get<std::string>().c_str());
  }
  for (const auto& d : j["no_devices"]) {
    const std::string why = d["why"].get<std::string>();
    std::printf("  %s: no device (from %s)%s\n", d["type"].get<std::string>().c_str(),
                d["provider"].get<std::string>().c_str(), why.empty() ? "" : (": " + why).c_str());
  }
  return 0;
}

}  // namespace tessel::cli
