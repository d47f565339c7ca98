#pragma once
// What tessel-measure keeps between requests: imported models (by path) and their graph pipelines
// (by path + target + pass options), so an edit of one kernel recompiles that kernel only.
//
//   request {model, input_shapes, target, pass_options}
//      ──▶ imported graph (cached by path, bound shapes and file time)
//      └─▶ GraphPipelineResult (cached by all four)
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/frontend/load_model.h"
#include "core/graph/passes/pipeline.h"
#include "core/graph/passes/pipeline_options_json.h"
#include "core/measure/protocol.h"
#include "core/target/target.h"

namespace tessel::measure {

class ModelCache {
 public:
  GraphPtr imported(const ModelRef& model);
  // The fused, planned graph for this target and options (fuse and plan_memory forced on, as
  // CompiledModel does). Throws Error naming the model when a pass fails.
  std::shared_ptr<const GraphPipelineResult> pipeline(const ModelRef& model, const Target& target);

 private:
  struct Imported {
    GraphPtr graph;
    int64_t mtime = 0;
  };
  std::map<std::string, Imported> imported_;
  std::map<std::string, std::shared_ptr<const GraphPipelineResult>> pipelines_;
};

}  // namespace tessel::measure
