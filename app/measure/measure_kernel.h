#pragma once
// One kernel of a model, compiled alone with a given schedule through the target's code generator,
// checked against the reference kernels and timed:
//
//   pipeline (cached) ─▶ fusion group K ─▶ ComputeDag ─▶ schedule text ─▶ lower ─▶ build_module({K})
//        inputs: the group's constants + seeded random values
//        reference: the group's nodes one by one (op reference kernels)  ─┐
//        compiled:  module.call_host(K, params)                          ─┴▶ max |Δ|, verdict
//        timing: warm-up, then repeats until enough time has passed (min, median)
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/calibrate.h"
#include "core/graph/passes/pipeline.h"
#include "core/target/target.h"

namespace tessel::measure {

struct KernelRequest {
  std::string kernel;
  std::string schedule_text;  // schedule::to_text form
  uint64_t seed = 1;
  double min_time_ms = 60;  // keep repeating until this much time has been measured
};

struct KernelResult {
  std::string kernel;
  bool correct = false;
  double max_abs_error = 0, tolerance = 0;
  double ms_min = 0, ms_median = 0;
  int repeats = 0;
  int64_t flops = 0, bytes = 0;
  double gflops = 0, gbps = 0, intensity = 0;
  double attainable_gflops = 0;
  std::string bound;
  double compile_ms = 0;  // build DAG + lower + codegen
  std::vector<std::pair<std::string, std::string>> artifacts;
};

// Throws Error naming the kernel and the stage ("kernel 'K': schedule: step 2 ...: ...").
KernelResult measure_kernel(const GraphPipelineResult& pipeline, const Target& target, const KernelRequest& request,
                            const std::optional<compile::MachineCeilings>& ceilings);

}  // namespace tessel::measure
