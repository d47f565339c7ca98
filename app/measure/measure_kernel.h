#pragma once
// One kernel of a model, compiled alone with a given schedule through the target's code generator,
// checked against the reference kernels and timed:
//
//   pipeline (cached) ─▶ fusion group K ─▶ ComputeDag ─▶ schedule text ─▶ lower ─▶ build_module({K})
//        (find_kernel, kernel_dag and lower_kernel of core/compile/kernel_compiler.h, as CompiledModel)
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
#include "core/measure/protocol.h"
#include "core/target/target.h"

namespace tessel::measure {

// Throws Error naming the kernel and the stage ("kernel 'K': schedule: step 2 ...: ...").
KernelMeasured measure_kernel(const GraphPipelineResult& pipeline, const Target& target,
                              const MeasureKernelRequest& request,
                              const std::optional<analysis::MachineCeilings>& ceilings);

}  // namespace tessel::measure
