#pragma once
// The lowering half of the edit loop, Qt-free so it runs on a worker thread (and in tests and
// benchmarks without a window): one kernel of a snapshot, its DAG, its schedule (the hand one or the
// default), the program after every step and after every lowering pass.
//
//   snapshot.optimized + fusion group K ──find_kernel, kernel_dag──▶ DAG ──(hand | default_lowering)──▶
//   record_lowering: the program after each step (entry 0: unscheduled) and each pass ──▶ KernelLowering
//   (the functions of core/compile/kernel_compiler.h that CompiledModel and tessel-measure use too)
//
// Usage:
//   KernelLoweringPtr l = lower_kernel(snapshot, "fused_conv2d_nchwc_relu_1", std::nullopt, "llvm", 1);
//   if (!l->error.empty()) show(l->error, l->error_step);
#include <optional>
#include <string>

#include "core/te/tensor.h"
#include "views/common/kernel_results.h"
#include "views/common/snapshot.h"

namespace tessel::views {

// The kernel's DAG; nullopt with `why` ("kernel 'X' is not in the model (kernels: ...)", or
// "kernel 'X' has no tensor expression: ...").
std::optional<te::ComputeDag> kernel_dag(const StudioSnapshot& snapshot, const std::string& kernel, std::string* why);

// The program after every step and every pass of `s` on `dag`. Never throws: every failure lands in
// `error` (and `error_step` when a step is to blame).
KernelLoweringPtr lower_schedule(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s,
                                 bool is_default_schedule, int64_t generation);

// The kernel of the snapshot with its hand schedule, or the one `tessel run` gives it on the target
// `target_spec` (compile::default_lowering: placement and default schedule). Never throws: a
// target whose kind is not loaded in this process is an error in the result.
KernelLoweringPtr lower_kernel(const StudioSnapshotPtr& snapshot, const std::string& kernel,
                               const std::optional<schedule::Schedule>& hand, const std::string& target_spec,
                               int64_t generation);

// The schedule `tessel run` gives the kernel by default on `target_spec`, and its fallback note
// (KernelLowering::schedule_note); throws Error when the target does not parse here.
std::pair<schedule::Schedule, std::string> default_kernel_schedule(const std::string& kernel,
                                                                   const te::ComputeDag& dag,
                                                                   const std::string& target_spec);

}  // namespace tessel::views
