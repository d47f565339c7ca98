#pragma once
// What tessel-measure keeps between requests: imported models (by path) and their graph pipelines
// (by path + target + pass options), so an edit of one kernel recompiles that kernel only.
//
//   request {model, target, pass_options} ──▶ imported graph (cached by path and file time)
//                                           └─▶ GraphPipelineResult (cached by all three)
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/graph/passes/pipeline.h"
#include "core/target/target.h"

namespace tessel::measure {

// The studio's pass options ({"fuse": false, "max_fusion_depth": 1, ...}) as PipelineOptions;
// unknown keys or wrong types throw Error naming the key.
PipelineOptions pipeline_options_from_json(const nlohmann::json& j);

// `.onnx` through the ONNX frontend, anything else as Tessel's graph text format (the lessons'
// small models are written in it). Errors name the file.
Graph load_model_file(const std::string& path);

class ModelCache {
 public:
  GraphPtr imported(const std::string& path);
  // The fused, planned graph for this target and options (fuse and plan_memory forced on, as
  // CompiledModel does). Throws Error naming the model when a pass fails.
  std::shared_ptr<const GraphPipelineResult> pipeline(const std::string& path, const Target& target,
                                                      const nlohmann::json& pass_options);

 private:
  struct Imported {
    GraphPtr graph;
    int64_t mtime = 0;
  };
  std::map<std::string, Imported> imported_;
  std::map<std::string, std::shared_ptr<const GraphPipelineResult>> pipelines_;
};

}  // namespace tessel::measure
