#pragma once
// The graph pipeline's results as JSON: what `tessel passes --format json` prints and what tools
// (and tests) read. Node and value references are by name.
//
//   {"passes": [{"name": "fold_constants", "changed": true, "ms": 0.4, "nodes_before": 9, ...}],
//    "fusion": {"groups": [{"kernel": "fused_conv2d_add_relu_0", "nodes": [...], "anchor": ...}],
//               "unfused_edges": [{"producer": ..., "consumer": ..., "rule": ..., "reason": ...}]},
//    "edges": [{"value": ..., "producer": ..., "consumer": ..., "type": ..., "layout": ...}],
//    "memory_plan": {"peak_bytes": ..., "naive_bytes": ..., "tensors": [...]}}
#include <nlohmann/json.hpp>

#include "core/graph/passes/pipeline.h"

namespace tessel {

nlohmann::json pass_records_to_json(const std::vector<StepRecordPtr>& records);
nlohmann::json fusion_to_json(const Graph& g, const FusionResult& fusion);
nlohmann::json edges_to_json(const Graph& g);  // every data edge with its type and layout
nlohmann::json memory_plan_to_json(const Graph& g, const MemoryPlan& plan);
// All of the above for a finished pipeline (analyses only when present).
nlohmann::json pipeline_result_to_json(const GraphPipelineResult& r);

// The summary table: pass, changed, ms, nodes before → after (one line per pass, then the total).
std::string pass_summary_table(const std::vector<StepRecordPtr>& records);

}  // namespace tessel
