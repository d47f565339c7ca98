#pragma once
// Targets on the command line: loads the backend plugins (reporting broken ones on stderr once)
// and turns --target SPEC into a Target. Without --target, compile::default_target(): the best code
// generator loaded (`llvm`, else `c`, else `interp`), else `ref` (the reference kernels, always there).
#include <optional>
#include <string>

#include "core/target/target.h"

namespace tessel::cli {

void load_plugins();
Target resolve_target(const std::optional<std::string>& spec);
// The same, refusing a target without a code generator: "COMMAND needs a code generator; the
// target 'ref' has none (targets with one: llvm, c, ...)", every kind whose plugin registered one.
Target resolve_code_generating_target(const std::optional<std::string>& spec, const std::string& command);

}  // namespace tessel::cli
