#pragma once
// The graph pipeline: every graph pass in order (listed in pipeline.cpp, the file to read first),
// each one recorded. What `tessel passes`, `tessel run` and the studio's SessionController call.
//
//   Target target = Target::parse("ref -vector_bits=512");
//   GraphPipelineResult r = run_graph_pipeline(std::make_shared<const Graph>(imported), target);
//   r.records      one StepRecord per pass
//   r.graph        the optimized graph (runs on the reference executor)
//   r.fusion       the fusion groups and blocked edges
//   r.memory_plan  storage of every intermediate tensor
#include <memory>
#include <vector>

#include "core/graph/passes/pass_context.h"
#include "core/graph/passes/pass_manager.h"

namespace tessel {

struct GraphPipelineResult {
  std::vector<StepRecordPtr> records;
  GraphPtr graph;             // the last good graph (the input's snapshot if the first pass failed)
  FusionResultPtr fusion;     // null when fusion is disabled or did not run
  MemoryPlanPtr memory_plan;  // null when planning is disabled or did not run
  std::string error;          // empty on success; "pass 'X' failed: reason" otherwise
  bool ok() const { return error.empty(); }
};
using GraphPipelineResultPtr = std::shared_ptr<const GraphPipelineResult>;

// The passes the pipeline runs, in order, after applying `options` (disabled passes left out).
std::vector<GraphPass> graph_pipeline_passes(const PipelineOptions& options);

// Runs the pipeline. A failing pass does not throw: the result carries the last good graph, the
// records up to and including the failed one, and the error text. `instruments` are called in
// addition to the internal recorder (and the verifier when options.verify).
GraphPipelineResult run_graph_pipeline(GraphPtr graph, const Target& target, const PipelineOptions& options = {},
                                       const std::vector<Instrument*>& instruments = {});

}  // namespace tessel
