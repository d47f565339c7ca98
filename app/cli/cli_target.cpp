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
    if (!p.loaded) std::fprintf(stderr, "tessel: warning: plugin %s skipped: %s\n", p.description_path.c_str(), p.error.c_str());
}

Target resolve_target(const std::optional<std::string>& spec) {
  load_plugins();
  if (spec) return Target::parse(*spec);
  return compile::default_target();
}

Target resolve_code_generating_target(const std::optional<std::string>& spec, const std::string& command) {
  Target target = resolve_target(spec);
  if (compile::generates_code(target)) return target;
  std::string kinds;
  for (const std::string& kind : CodeGenRegistry::global().kinds()) kinds += (kinds.empty() ? "" : ", ") + kind;
  throw Error(command + " needs a code generator; the target '" + target.kind() +
              "' has none (targets with one: " + (kinds.empty() ? "none loaded" : kinds) + ")");
}

}  // namespace tessel::cli
