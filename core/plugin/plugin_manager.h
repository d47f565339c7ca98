#pragma once
// Finds, checks and loads backend plugins. Search order: every folder in TESSEL_PLUGIN_PATH
// (colon-separated), then the build tree's plugins/ folder, then the install's lib/tessel/plugins.
// A missing, incompatible or broken plugin (bad JSON, missing library or entry point, failing
// registration, a name already taken) is reported and skipped; the others still load. So is one
// whose library lies outside its folder, or whose registration crashes or hangs in a probe process
// (plugin_probe.h).
#include <string>
#include <vector>

namespace tessel {

struct PluginStatus {
  std::string name;         // from the JSON (or the file name when the JSON is unreadable)
  std::string version;
  std::string description_path;
  std::string library_path;
  std::vector<std::string> target_kinds, codegens, device_types;
  bool loaded = false;
  std::string error;        // one line, when not loaded
};

class PluginManager {
 public:
  static PluginManager& global();
  // Loads every plugin found in `dirs` (default: plugin_search_dirs()) once; later calls load only
  // plugins not seen before. Returns the status of all plugins seen so far.
  const std::vector<PluginStatus>& load_all(const std::vector<std::string>& dirs = plugin_search_dirs());
  const std::vector<PluginStatus>& plugins() const { return plugins_; }
  static std::vector<std::string> plugin_search_dirs();

 private:
  PluginStatus load_one(const std::string& description_path);
  std::vector<PluginStatus> plugins_;
};

// The core's version as plugins check it ("major.minor.patch"); a plugin whose core_version has
// another major, or a higher minor, is incompatible.
std::string core_version();
bool core_version_compatible(const std::string& required, std::string* why);

}  // namespace tessel
