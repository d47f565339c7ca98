// The graph pipeline, in order. This is the file to read to learn what Tessel does to a model
// before it becomes kernels; each pass has a short header in this folder with an example.
#include "core/graph/passes/pipeline.h"

#include "core/graph/passes/eliminate_common_subexpressions.h"
#include "core/graph/passes/eliminate_dead_code.h"
#include "core/graph/passes/fold_constants.h"
#include "core/graph/passes/fuse_ops.h"
#include "core/graph/passes/infer_shapes.h"
#include "core/graph/passes/plan_memory.h"
#include "core/graph/passes/quantize_for_accelerator.h"
#include "core/graph/passes/quantize_qdq.h"
#include "core/graph/passes/simplify_inference.h"
#include "core/graph/passes/transform_layout.h"
#include "core/graph/passes/verify_graph.h"
#include "core/graph/passes/winograd_convs.h"

namespace tessel {

std::vector<GraphPass> graph_pipeline_passes(const PipelineOptions& o) {
  std::vector<GraphPass> all = {
      {"infer_shapes", infer_shapes},                  // dtypes and shapes of every value
      {"quantize_qdq", quantize_qdq},                  // DequantizeLinear → Conv/MatMul → QuantizeLinear → QLinear ops
      {"fold_constants", fold_constants},              // shape chains, constant subgraphs → constants
      {"simplify_inference", simplify_inference},      // batch norm into conv weights, no dropout/identity
      {"eliminate_common_subexpressions", eliminate_common_subexpressions},
      {"eliminate_dead_code", eliminate_dead_code},    // what no output needs
      {"quantize_for_accelerator", quantize_for_accelerator},  // GEMM-core targets: conv/dense → int8 GEMMs
      {"transform_layout", transform_layout},          // NCHW → NCHW16c for conv chains; every value gets a layout
      {"winograd_convs", winograd_convs},              // 3x3 stride-1 convs → input transform, 36 products, output transform
      {"eliminate_dead_code", eliminate_dead_code},    // plain weights replaced by blocked ones
      {"fuse_ops", fuse_ops},                          // groups of nodes → one kernel each
      {"plan_memory", plan_memory},                    // storage of every intermediate tensor
  };
  std::vector<GraphPass> enabled;
  for (GraphPass& p : all) {
    if (o.runs(p.name)) enabled.push_back(std::move(p));
  }
  return enabled;
}

GraphPipelineResult run_graph_pipeline(GraphPtr graph, const Target& target, const PipelineOptions& options,
                                       const std::vector<Instrument*>& instruments) {
  PassManager pm(graph_pipeline_passes(options));
  Verifier verifier = graph_verifier();
  StepRecorder recorder;
  if (options.verify) pm.add_instrument(&verifier);  // first: it may reject a pass's result
  pm.add_instrument(&recorder);
  for (Instrument* i : instruments) pm.add_instrument(i);

  PassContext ctx{target, options, nullptr, nullptr};
  GraphPipelineResult result;
  result.error = blockers_message(*graph);  // opaque nodes or unknown types: no pass can work on it
  // Passes, fusion and memory planning take tensors of static shapes only (runtime_value.h).
  if (const std::string why = non_tensor_values_reason(*graph); result.error.empty() && !why.empty())
    result.error = "graph passes take tensors only: " + why + "; the graph runs on the reference executor as a whole";
  if (!result.error.empty()) {
    result.graph = graph;
    return result;
  }
  try {
    result.graph = pm.run(graph, ctx);
  } catch (const PassFailure& failure) {
    result.graph = failure.last_good_graph();
    result.error = failure.what();
  }
  result.records = recorder.records();
  // Analyses describe the final graph only when no pass changed it after they ran.
  result.fusion = ctx.fusion;
  result.memory_plan = ctx.memory_plan;
  return result;
}

}  // namespace tessel
