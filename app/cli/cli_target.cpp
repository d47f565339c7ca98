#include "app/cli/cli_target.h"

#include <cstdio>

#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"

namespace tessel::cli {

void load_plugins() {
  static bool loaded = false;
  if (loaded) return;
  loaded = true;
  for (const PluginStatus& p : PluginManager::global().load_all())
    if (!p.loaded) std::fprintf(stderr, "tessel: warning: plugin %s skipped: %s\n", p.description_path.c_str(), p.error.c_str());
}

Target resolve_target(const std::optional<std::string>& spec) {
  load_plugins();
  if (spec) return Target::parse(*spec);
  return Target::parse(CodeGenRegistry::global().has("llvm") ? "llvm" : "ref");
}

}  // namespace tessel::cli
