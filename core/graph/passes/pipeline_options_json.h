#pragma once
// The graph pipeline's options as JSON, the form sessions, lessons and the measuring process use:
//
//   {"fuse": true, "max_fusion_depth": 1, "disabled_passes": ["fold_constants"]}
//
// Every PipelineOptions field has its key; "fold_constants", "simplify", "fuse" and "plan_memory"
// set to false add fold_constants, simplify_inference, fuse_ops, plan_memory to disabled_passes. A value of the wrong type throws Error naming the key;
// keys the pipeline does not know are listed in `unknown` (the studio warns about them) or ignored.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph/passes/pass_context.h"

namespace tessel {

PipelineOptions pipeline_options_from_json(const nlohmann::json& j, std::vector<std::string>* unknown = nullptr);

}  // namespace tessel
