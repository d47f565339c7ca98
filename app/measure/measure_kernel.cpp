#include "app/measure/measure_kernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/graph/ops/te/te_from_graph.h"
#include "core/lower/pipeline.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/schedule.h"

namespace tessel::measure {

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

const FusionGroup& find_group(const FusionResult& fusion, const std::string& kernel) {
  std::string names;
  for (const FusionGroup& g : fusion.groups) {
    if (g.kernel_name == kernel) return g;
    names += (names.empty() ? "" : ", ") + g.kernel_name;
  }
  throw Error("kernel '" + kernel + "' is not in the compiled model (kernels: " + names + ")");
}

int64_t value_bytes(const Graph& g, ValueId v) {
  const TensorType& t = g.value(v).type;
  return shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
}

// The group's inputs: weights keep their values (a kernel may depend on them, e.g. folded batch
// norm), everything else is seeded uniform noise in [-1, 1) (small integers for integer types).
std::map<ValueId, Tensor> group_inputs(const Graph& g, const FusionGroup& group, uint64_t seed) {
  std::map<ValueId, Tensor> env;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (ValueId v : group.inputs) {
    const Value& value = g.value(v);
    if (value.value.defined()) {
      env[v] = value.value;
      continue;
    }
    Tensor t(value.type.dtype, value.type.shape);
    const bool is_float = dtype_is_float(value.type.dtype);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, is_float ? dist(rng) : std::floor((dist(rng) + 1) * 2));
    env[v] = t;
  }
  return env;
}

// The group computed node by node with the op table's reference kernels: the oracle.
void run_reference(const Graph& g, const FusionGroup& group, std::map<ValueId, Tensor>& env) {
  for (NodeId id : group.nodes) {
    const Node& n = g.nodes[id];
    std::vector<const Tensor*> args;
    for (ValueId v : n.inputs) args.push_back(v == kNoValue ? nullptr : &env.at(v));
    std::vector<Tensor> outs = run_node_reference(g, n, args);
    for (size_t o = 0; o < outs.size(); ++o) env[n.outputs[o]] = std::move(outs[o]);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

KernelResult measure_kernel(const GraphPipelineResult& pipeline, const Target& target, const KernelRequest& request,
                            const std::optional<compile::MachineCeilings>& ceilings) {
  const Graph& g = *pipeline.graph;
  const FusionGroup& group = find_group(*pipeline.fusion, request.kernel);
  const std::string where = "kernel '" + request.kernel + "'";
  KernelResult r;
  r.kernel = request.kernel;

  // Compile this kernel alone.
  const auto compile_start = Clock::now();
  std::string why;
  std::optional<te::ComputeDag> dag = compile::build_group_dag(g, group, &why);
  if (!dag) throw Error(where + ": no tensor expression: " + why);
  schedule::Schedule s;
  loopir::Func func;
  try {
    s = schedule::parse_schedule(request.schedule_text);
  } catch (const Error& e) {
    rethrow_with_context(e, where + ": schedule");
  }
  try {
    func = lower::lower(*dag, s).func;
  } catch (const Error& e) {
    rethrow_with_context(e, where + ": lowering");
  }
  func.name = request.kernel;
  std::vector<ValueId> params;
  try {
    params = compile::bind_kernel_params(func, group, *dag);
  } catch (const Error& e) {
    rethrow_with_context(e, where);
  }
  std::unique_ptr<Module> module = build_module({func}, target);  // errors name the kernel and stage
  r.compile_ms = ms_between(compile_start, Clock::now());
  for (const auto& [name, text] : module->artifacts()) r.artifacts.emplace_back(name, text);

  // Verify: reference and compiled kernel on the same inputs. Outputs start as NaN so an element
  // the kernel never writes cannot pass by accident.
  std::map<ValueId, Tensor> reference = group_inputs(g, group, request.seed);
  std::map<ValueId, Tensor> compiled = reference;
  run_reference(g, group, reference);
  std::vector<Tensor*> args;
  for (ValueId v : params) {
    if (!compiled.count(v)) {
      Tensor t(g.value(v).type.dtype, g.value(v).type.shape);
      if (dtype_is_float(t.dtype()))
        for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, std::numeric_limits<double>::quiet_NaN());
      compiled[v] = t;
    }
    args.push_back(&compiled.at(v));
  }
  const int threads =
      target.kind_info().find_option("num_threads") ? static_cast<int>(target.get_int("num_threads")) : 1;
  ThreadPool::set_global_threads(threads);
  module->call_host(request.kernel, args);
  double max_ref = 0;
  for (ValueId v : group.outputs) {
    const Tensor& want = reference.at(v);
    const Tensor& got = compiled.at(v);
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double a = want.get_double(i), b = got.get_double(i);
      max_ref = std::max(max_ref, std::isfinite(a) ? std::fabs(a) : 0.0);
      const double d = std::isnan(a) != std::isnan(b) ? std::numeric_limits<double>::infinity()
                       : std::isnan(a)                ? 0.0
                                                      : std::fabs(a - b);
      r.max_abs_error = std::max(r.max_abs_error, d);
    }
  }
  // Reordered fp32 sums differ from the reference's order by a few ulps per term.
  r.tolerance = 1e-3 * std::max(1.0, max_ref);
  r.correct = r.max_abs_error <= r.tolerance;

  // Time: two warm-up calls, then repeat until min_time_ms has passed (at least 5, at most 500).
  for (int w = 0; w < 2; ++w) module->call_host(request.kernel, args);
  std::vector<double> times;
  double total = 0;
  while (times.size() < 5 || (total < request.min_time_ms && times.size() < 500)) {
    auto start = Clock::now();
    module->call_host(request.kernel, args);
    times.push_back(ms_between(start, Clock::now()));
    total += times.back();
  }
  r.repeats = static_cast<int>(times.size());
  r.ms_min = *std::min_element(times.begin(), times.end());
  r.ms_median = median(times);

  for (NodeId n : group.nodes) r.flops += node_flops(g, g.nodes[n]);
  for (ValueId v : group.inputs) r.bytes += value_bytes(g, v);
  for (ValueId v : group.outputs) r.bytes += value_bytes(g, v);
  const double seconds = std::max(r.ms_min, 1e-6) / 1e3;
  r.gflops = static_cast<double>(r.flops) / seconds / 1e9;
  r.gbps = static_cast<double>(r.bytes) / seconds / 1e9;
  r.intensity = r.bytes > 0 ? static_cast<double>(r.flops) / static_cast<double>(r.bytes) : 0;
  if (ceilings) r.attainable_gflops = ceilings->attainable(r.intensity, &r.bound);
  return r;
}

}  // namespace tessel::measure
