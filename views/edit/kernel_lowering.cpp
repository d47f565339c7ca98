#include "views/edit/kernel_lowering.h"

#include <chrono>

#include "core/graph/ops/te/te_from_graph.h"
#include "core/schedule/default_schedule.h"

namespace tessel::views {

std::optional<te::ComputeDag> kernel_dag(const StudioSnapshot& snapshot, const std::string& kernel, std::string* why) {
  if (!snapshot.optimized || !snapshot.fusion) {
    *why = "the model has no fusion groups (the graph pipeline did not reach fuse_ops)";
    return std::nullopt;
  }
  std::string names;
  for (const FusionGroup& group : snapshot.fusion->groups) {
    if (group.kernel_name != kernel) {
      names += (names.empty() ? "" : ", ") + group.kernel_name;
      continue;
    }
    std::string reason;
    std::optional<te::ComputeDag> dag = compile::build_group_dag(*snapshot.optimized, group, &reason);
    if (!dag) *why = "kernel '" + kernel + "' has no tensor expression: " + reason;
    return dag;
  }
  *why = "kernel '" + kernel + "' is not in the model (kernels: " + names + ")";
  return std::nullopt;
}

KernelLoweringPtr lower_schedule(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s,
                                 bool is_default_schedule, int64_t generation) {
  const auto start = std::chrono::steady_clock::now();
  auto result = std::make_shared<KernelLowering>();
  result->kernel = kernel;
  result->generation = generation;
  result->is_default_schedule = is_default_schedule;
  result->tensor_expression = te::to_string(dag);
  result->schedule = s;
  try {
    result->steps = lower::program_after_each_step(dag, s);
    // A failing step ends the list; entry k is the program after step k, so step k-1 (0-based) failed.
    if (!result->steps.empty() && result->steps.back().record.failed()) {
      result->error = "kernel '" + kernel + "': " + result->steps.back().record.error;
      result->error_step = static_cast<int>(result->steps.size()) - 2;
    } else {
      result->passes = lower::program_after_each_pass(dag, s);
    }
  } catch (const std::exception& e) {
    result->error = "kernel '" + kernel + "': " + e.what();
  }
  result->lower_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

KernelLoweringPtr lower_kernel(const StudioSnapshotPtr& snapshot, const std::string& kernel,
                               const std::optional<schedule::Schedule>& hand, int64_t vector_lanes,
                               int64_t generation) {
  std::string why = "no compiled model";
  std::optional<te::ComputeDag> dag = snapshot ? kernel_dag(*snapshot, kernel, &why) : std::nullopt;
  if (!dag) {
    auto result = std::make_shared<KernelLowering>();
    result->kernel = kernel;
    result->generation = generation;
    result->is_default_schedule = !hand.has_value();
    result->error = why;
    return result;
  }
  try {
    return lower_schedule(kernel, *dag, hand ? *hand : schedule::default_cpu_schedule(*dag, vector_lanes),
                          !hand.has_value(), generation);
  } catch (const std::exception& e) {  // the default schedule itself failed
    auto result = std::make_shared<KernelLowering>();
    result->kernel = kernel;
    result->generation = generation;
    result->error = "kernel '" + kernel + "': " + e.what();
    return result;
  }
}

}  // namespace tessel::views
