#pragma once
// Targets on the command line: loads the backend plugins (reporting broken ones on stderr once)
// and turns --target SPEC into a Target. Without --target, `llvm` when its plugin is loaded,
// else `ref` (the reference executor, always there).
#include <optional>
#include <string>

#include "core/target/target.h"

namespace tessel::cli {

void load_plugins();
Target resolve_target(const std::optional<std::string>& spec);

}  // namespace tessel::cli
