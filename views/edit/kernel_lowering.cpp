#include "views/edit/kernel_lowering.h"

#include "core/compile/kernel_compiler.h"
#include "core/support/timing.h"

namespace tessel::views {

std::optional<te::ComputeDag> kernel_dag(const StudioSnapshot& snapshot, const std::string& kernel, std::string* why) {
  if (!snapshot.optimized || !snapshot.fusion) {
    *why = "the model has no fusion groups (the graph pipeline did not reach fuse_ops)";
    return std::nullopt;
  }
  try {
    return compile::kernel_dag(*snapshot.optimized, compile::find_kernel(*snapshot.fusion, kernel));
  } catch (const Error& e) {
    *why = e.what();
    return std::nullopt;
  }
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
  compile::LoweringRecords records = compile::record_lowering(kernel, dag, s);
  result->steps = std::move(records.steps);
  result->passes = std::move(records.passes);
  result->error = std::move(records.error);
  result->error_step = records.error_step;
  result->lower_ms = ms_since(start);
  return result;
}

std::pair<schedule::Schedule, std::string> default_kernel_schedule(const std::string& kernel,
                                                                   const te::ComputeDag& dag,
                                                                   const std::string& target_spec) {
  compile::LoweredKernel k = compile::default_lowering(kernel, dag, Target::parse(target_spec));
  std::string note;
  if (k.host) note = "runs on the host (" + k.host->kind() + "), not offloaded: " + k.host_reason;
  if (k.source == compile::ScheduleSource::kPlainLoops)
    note += std::string(note.empty() ? "" : "; ") + "plain loops: " + k.fallback_reason;
  return {std::move(k.schedule), std::move(note)};
}

KernelLoweringPtr lower_kernel(const StudioSnapshotPtr& snapshot, const std::string& kernel,
                               const std::optional<schedule::Schedule>& hand, const std::string& target_spec,
                               int64_t generation) {
  auto failed = [&](std::string why) {
    auto result = std::make_shared<KernelLowering>();
    result->kernel = kernel;
    result->generation = generation;
    result->is_default_schedule = !hand.has_value();
    result->error = std::move(why);
    return result;
  };
  std::string why = "no compiled model";
  std::optional<te::ComputeDag> dag = snapshot ? kernel_dag(*snapshot, kernel, &why) : std::nullopt;
  if (!dag) return failed(why);
  if (hand) return lower_schedule(kernel, *dag, *hand, false, generation);
  std::pair<schedule::Schedule, std::string> d;
  try {
    d = default_kernel_schedule(kernel, *dag, target_spec);
  } catch (const Error& e) {
    return failed("target '" + target_spec + "': " + e.what());
  }
  KernelLoweringPtr lowered = lower_schedule(kernel, *dag, d.first, true, generation);
  auto noted = std::make_shared<KernelLowering>(*lowered);
  noted->schedule_note = std::move(d.second);
  return noted;
}

}  // namespace tessel::views
