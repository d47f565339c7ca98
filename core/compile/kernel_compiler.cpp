#include "core/compile/kernel_compiler.h"

#include <algorithm>
#include <cstring>

#include "core/graph/ops/te/te_from_graph.h"
#include "core/lower/pipeline.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/int8_vnni_schedule.h"
#include "core/target/cpu_caches.h"

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

bool is_accelerator(const Target& target) { return target.kind_info().find_option("gemm") != nullptr; }

schedule::AccelKnobs accel_knobs(const Target& target) {
  return {.gemm = target.get_int("gemm"), .vthreads = 2, .wgt_bytes = target.get_int("wgt_bytes")};
}

Target host_target_of(const Target& /*target*/) { return default_target(); }

schedule::Schedule default_schedule(const te::ComputeDag& dag, const Target& target) {
  if (is_accelerator(target)) {
    try {
      return schedule::default_accel_schedule(dag, accel_knobs(target));
    } catch (const Error&) {
      return {};  // plain loops, which its code generator refuses: the kernel runs on the host
    }
  }
  // A kind whose code runs on another device than the host CPU gets the GPU-style default
  // (thread blocks, shared tiles, barriers); its code generator decides how to launch it.
  if (target.kind_info().device != "cpu") {
    try {
      return schedule::default_gpu_schedule(dag);
    } catch (const Error&) {
      return {};
    }
  }
  // An int8 product in the VNNI form (core/te/int8_dot_product.h): on the dot step where the
  // target has it, otherwise its vector form over the same packed tiles.
  const bool vnni = target.kind_info().find_option("vnni") && target.get_bool("vnni");
  if (std::optional<schedule::Schedule> s = schedule::int8_vnni_schedule(dag, vnni)) return *s;
  try {
    return schedule::default_cpu_schedule(
        dag, target_vector_floats(target), {},
        {.l1_bytes = target_cache_bytes(target, 1), .l2_bytes = target_cache_bytes(target, 2)});
  } catch (const Error&) {
    return {};
  }
}

schedule::Schedule default_schedule(const te::ComputeDag& dag, int64_t vector_lanes) {
  if (std::optional<schedule::Schedule> s = schedule::int8_vnni_schedule(dag, false)) return *s;
  try {
    return schedule::default_cpu_schedule(dag, vector_lanes);
  } catch (const Error&) {
    return {};
  }
}

int64_t vector_lanes_of_spec(const std::string& target_spec) {
  try {
    return target_vector_floats(Target::parse(target_spec));
  } catch (const Error&) {
    return target_vector_floats(Target::of_kind("ref"));
  }
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

LoweredKernel lower_with(const FusionGroup& group, const te::ComputeDag& dag, schedule::Schedule s) {
  LoweredKernel k;
  k.func = lower::lower(dag, s).func;
  k.func.name = group.kernel_name;
  k.params = ops::bind_kernel_params(k.func, group, dag);
  k.schedule = std::move(s);
  return k;
}

}  // namespace

LoweredKernel lower_kernel(const FusionGroup& group, const te::ComputeDag& dag, const Target& target,
                           const std::optional<schedule::Schedule>& given) {
  const std::string where = "kernel '" + group.kernel_name + "'";
  if (given) {
    try {
      return lower_with(group, dag, *given);
    } catch (const Error& e) {
      rethrow_with_context(e, where + ": schedule");
    }
  }
  try {
    return lower_with(group, dag, default_schedule(dag, target));
  } catch (const Error&) {
    // The default schedule did not lower: plain loops always should.
  }
  try {
    return lower_with(group, dag, {});
  } catch (const Error& e) {
    rethrow_with_context(e, where + ": lowering");
  }
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
      build_module({f}, target);
      return f;
    } catch (const Error& e) {
      *why = e.what();
      return std::nullopt;
    }
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
