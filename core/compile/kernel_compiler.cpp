#include "core/compile/kernel_compiler.h"

#include <algorithm>
#include <cstring>

#include "core/graph/ops/te/te_from_graph.h"
#include "core/lower/pipeline.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/schedule/target_default.h"
#include "core/target/target_traits.h"

namespace tessel::compile {

Target default_target() {
  for (const char* kind : {"llvm", "c", "interp"})  // fastest code first
    if (CodeGenRegistry::global().has(kind)) return Target::parse(kind);
  return Target::parse("ref");
}

bool generates_code(const Target& target) { return CodeGenRegistry::global().has(target.kind()); }

Target require_code_generator(Target target, const std::string& what) {
  if (generates_code(target)) return target;
  std::string kinds;
  for (const std::string& kind : CodeGenRegistry::global().kinds()) kinds += (kinds.empty() ? "" : ", ") + kind;
  throw Error(what + " needs a code generator; the target '" + target.kind() +
              "' has none (targets with one: " + (kinds.empty() ? "none loaded" : kinds) + ")");
}

Target host_target_of(const Target& /*target*/) { return default_target(); }

std::string_view schedule_source_name(ScheduleSource source) {
  switch (source) {
    case ScheduleSource::kDefault: return "default";
    case ScheduleSource::kHand: return "hand";
    case ScheduleSource::kTuned: return "tuned record";
    case ScheduleSource::kPlainLoops: return "plain loops";
  }
  return "?";
}

const FusionGroup& find_kernel(const FusionResult& fusion, std::string_view kernel) {
  std::string names;
  for (const FusionGroup& group : fusion.groups) {
    if (group.kernel_name == kernel) return group;
    names += (names.empty() ? "" : ", ") + group.kernel_name;
  }
  throw Error("kernel '" + std::string(kernel) + "' is not in the model (kernels: " + (names.empty() ? "none" : names) +
              ")");
}

bool has_kernel(const FusionResult& fusion, std::string_view kernel) {
  return std::any_of(fusion.groups.begin(), fusion.groups.end(),
                     [&](const FusionGroup& group) { return group.kernel_name == kernel; });
}

std::optional<te::ComputeDag> kernel_dag(const Graph& graph, const FusionGroup& group, std::string* why) {
  std::string reason;
  std::optional<te::ComputeDag> dag = ops::build_group_dag(graph, group, &reason);
  if (!dag) *why = "no tensor expression: " + reason;
  return dag;
}

te::ComputeDag kernel_dag(const Graph& graph, const FusionGroup& group) {
  std::string why;
  std::optional<te::ComputeDag> dag = kernel_dag(graph, group, &why);
  if (!dag) throw Error("kernel '" + group.kernel_name + "' has " + why);
  return std::move(*dag);
}

int64_t kernel_flops(const Graph& graph, const FusionGroup& group) {
  int64_t flops = 0;
  for (NodeId n : group.nodes) flops += node_flops(graph, graph.nodes[n]);
  return flops;
}

int64_t kernel_bytes(const Graph& graph, const FusionGroup& group) {
  auto bytes_of = [&](ValueId v) {
    const TensorType& t = graph.value(v).type;
    return shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
  };
  int64_t bytes = 0;
  for (ValueId v : group.inputs) bytes += bytes_of(v);
  for (ValueId v : group.outputs) bytes += bytes_of(v);
  return bytes;
}

namespace {

loopir::Func lowered_func(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s) {
  loopir::Func f = lower::lower(dag, s).func;
  f.name = kernel;
  return f;
}

// The default of a CPU or GPU kernel: the device class's default schedule, or plain loops with why.
LoweredKernel default_on_device(const std::string& kernel, const te::ComputeDag& dag, const TargetTraits& traits) {
  LoweredKernel k;
  schedule::DefaultSchedule d = schedule::default_schedule_for(dag, traits);
  if (d.applies()) {
    try {
      k.func = lowered_func(kernel, dag, d.schedule);
      k.schedule = std::move(d.schedule);
      return k;
    } catch (const Error& e) {
      d.not_applied = std::string("the default schedule does not lower: ") + e.what();
    }
  } else {
    d.not_applied = "no default schedule: " + d.not_applied;
  }
  k.source = ScheduleSource::kPlainLoops;
  k.fallback_reason = std::move(d.not_applied);
  try {
    k.func = lowered_func(kernel, dag, {});
  } catch (const Error& e) {
    rethrow_with_context(e, "kernel '" + kernel + "': lowering");
  }
  return k;
}

}  // namespace

LoweredKernel default_lowering(const std::string& kernel, const te::ComputeDag& dag, const Target& target) {
  const TargetTraits traits = target_traits(target);
  if (!traits.is_accelerator()) return default_on_device(kernel, dag, traits);
  // An accelerator takes a kernel when its default tensorizes, lowers and its code generator
  // accepts the program; the code generator is asked here, kernel by kernel (codegen_refusal), so a
  // refusal is known with the kernel it concerns and never read back out of a whole module's error.
  std::string why;
  schedule::DefaultSchedule d = schedule::default_schedule_for(dag, traits);
  if (d.applies()) {
    try {
      LoweredKernel k;
      k.func = lowered_func(kernel, dag, d.schedule);
      why = codegen_refusal(k.func, target);
      if (why.empty()) {
        k.schedule = std::move(d.schedule);
        return k;
      }
    } catch (const Error& e) {
      why = e.what();
    }
    const std::string prefix = "kernel '" + kernel + "': ";
    if (why.starts_with(prefix)) why.erase(0, prefix.size());  // the caller names the kernel
  } else {
    why = std::move(d.not_applied);
  }
  const Target host = host_target_of(target);
  LoweredKernel k = default_on_device(kernel, dag, target_traits(host));
  k.host = host;
  k.host_reason = std::move(why);
  return k;
}

schedule::Schedule default_schedule(const te::ComputeDag& dag, const Target& target) {
  return default_lowering(dag.name.empty() ? "kernel" : dag.name, dag, target).schedule;
}

LoweredKernel lower_kernel(const FusionGroup& group, const te::ComputeDag& dag, const Target& target,
                           const std::optional<schedule::Schedule>& given) {
  LoweredKernel k;
  if (given) {
    try {
      k.func = lowered_func(group.kernel_name, dag, *given);
    } catch (const Error& e) {
      rethrow_with_context(e, "kernel '" + group.kernel_name + "': schedule");
    }
    k.schedule = *given;
    k.source = ScheduleSource::kHand;
  } else {
    k = default_lowering(group.kernel_name, dag, target);
  }
  k.params = ops::bind_kernel_params(k.func, group, dag);
  return k;
}

loopir::Func lower_for_accelerator(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s,
                                   const Target& target) {
  te::ComputeDag named = dag;
  named.name = kernel;
  // The first `count` steps, lowered and generated: the function, or why not.
  auto attempt = [&](size_t count, std::string* why) -> std::optional<loopir::Func> {
    schedule::Schedule prefix = s;
    prefix.steps.resize(count);
    try {
      loopir::Func f = lower::lower(named, prefix).func;
      *why = codegen_refusal(f, target);
      if (why->empty()) return f;
    } catch (const Error& e) {
      *why = e.what();
    }
    return std::nullopt;
  };
  std::string why;
  if (std::optional<loopir::Func> f = attempt(s.steps.size(), &why)) return *f;
  size_t culprit = s.steps.size();  // 1-based: the step after which nothing compiles again
  std::string ignored;
  while (culprit > 1 && !attempt(culprit - 1, &ignored)) --culprit;
  const std::string prefix = "kernel '" + kernel + "': ";
  if (why.starts_with(prefix)) why.erase(0, prefix.size());
  throw Error(prefix + "step " + std::to_string(culprit) + " " + schedule::to_string(s.steps.at(culprit - 1)) + ": " +
              why);
}

LoweringRecords record_lowering(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s) {
  LoweringRecords r;
  try {
    r.steps = lower::program_after_each_step(dag, s);
    // A failing step ends the list; entry k is the program after step k, so step k-1 (0-based) failed.
    if (!r.steps.empty() && r.steps.back().record.failed()) {
      r.error = "kernel '" + kernel + "': " + r.steps.back().record.error;
      r.error_step = static_cast<int>(r.steps.size()) - 2;
    } else {
      r.passes = lower::program_after_each_pass(dag, s);
    }
  } catch (const std::exception& e) {
    r.error = "kernel '" + kernel + "': " + e.what();
  }
  return r;
}

void run_group_reference(const Graph& graph, const FusionGroup& group, const ValueSlot& slot) {
  for (NodeId id : group.nodes) {
    const Node& n = graph.nodes[id];
    std::vector<const Tensor*> args;
    for (ValueId v : n.inputs) args.push_back(v == kNoValue ? nullptr : &slot(v));
    std::vector<Tensor> outs = run_node_reference(graph, n, args);
    for (size_t o = 0; o < outs.size(); ++o) {
      Tensor& dst = slot(n.outputs[o]);
      if (dst.defined() && dst.raw_data() != outs[o].raw_data())
        std::memcpy(dst.raw_data(), outs[o].raw_data(), outs[o].nbytes());
      else
        dst = std::move(outs[o]);
    }
  }
}

}  // namespace tessel::compile
