#pragma once
// What graph passes may read besides the graph: the target, the pipeline's options, and the
// analyses earlier passes produced (fusion groups, memory plan). Passes read target behaviour only
// through Target options.
#include <set>
#include <string>

#include "core/graph/passes/fusion_result.h"
#include "core/graph/passes/memory_plan.h"
#include "core/target/target.h"

namespace tessel {

struct PipelineOptions {
  bool fold_constants = true;
  bool simplify = true;
  bool transform_layout = true;
  bool fuse = true;
  bool plan_memory = true;
  int max_fusion_depth = 256;            // TVM's default max_fuse_depth
  int max_kernel_arguments = 64;         // inputs + outputs of one fused kernel
  int64_t max_folded_bytes = int64_t{64} << 20;  // constant folding skips results larger than this
  int64_t memory_alignment = 64;
#ifdef NDEBUG
  bool verify = false;                   // re-check types after every pass: tests set it; on in debug builds
#else
  bool verify = true;
#endif
  std::set<std::string> disabled_passes; // by name: "fuse_ops", ...
};

struct PassContext {
  const Target& target;
  PipelineOptions options;
  FusionResultPtr fusion;     // set by fuse_ops
  MemoryPlanPtr memory_plan;  // set by plan_memory
};

}  // namespace tessel
