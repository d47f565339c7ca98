#include "app/cli/cli_target.h"

#include <cstdio>

#include "core/compile/kernel_compiler.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"

namespace tessel::cli {

void load_plugins() {
  static bool loaded = false;
  if (loaded) return;
  loaded = true;
  for (const PluginStatus& p : PluginManager::global().load_all())
    if (!p.loaded)
      std::fprintf(stderr, "tessel: warning: plugin %s skipped: %s\n", p.description_path.c_str(), p.error.c_str());
}

Target resolve_target(const std::optional<std::string>& spec) {
  load_plugins();
  if (spec) return Target::parse(*spec);
  return compile::default_target();
}

Target resolve_code_generating_target(const std::optional<std::string>& spec, const std::string& command) {
  return compile::require_code_generator(resolve_target(spec), command);
}

}  // namespace tessel::cli
