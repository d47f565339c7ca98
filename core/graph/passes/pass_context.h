#pragma once
// What graph passes may read besides the graph: the target, the pipeline's options, and the
// analyses earlier passes produced (fusion groups, memory plan). Passes read what the target is
// through its traits (core/target/target_traits.h: device class, vector lanes, the accelerator's
// core), never by looking for an option's name.
#include <set>
#include <string>

#include "core/graph/passes/fusion_result.h"
#include "core/graph/passes/memory_plan.h"
#include "core/target/target.h"
#include "core/target/target_traits.h"

namespace tessel {

struct PipelineOptions {
  // false: transform_layout still gives every value its layout, but blocks no conv chain (NCHW stays).
  bool transform_layout = true;
  int max_fusion_depth = 256;            // TVM's default max_fuse_depth
  int max_kernel_arguments = 64;         // inputs + outputs of one fused kernel
  int64_t max_folded_bytes = int64_t{64} << 20;  // constant folding skips results larger than this
  int64_t memory_alignment = 64;
#ifdef NDEBUG
  bool verify = false;                   // re-check types after every pass: tests set it; on in debug builds
#else
  bool verify = true;
#endif
  // The one way to leave passes out: by name ("fold_constants", "fuse_ops", ...).
  std::set<std::string> disabled_passes;
  bool runs(const std::string& pass) const { return disabled_passes.count(pass) == 0; }
};

struct PassContext {
  const Target& target;
  PipelineOptions options;
  FusionResultPtr fusion;     // set by fuse_ops
  MemoryPlanPtr memory_plan;  // set by plan_memory
  TargetTraits traits() const { return target_traits(target); }
};

}  // namespace tessel
