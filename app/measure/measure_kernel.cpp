#include "app/measure/measure_kernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>

#include "core/compile/kernel_compiler.h"
#include "core/measure/cache_condition.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/schedule.h"
#include "core/support/timing.h"
#include "core/target/target_traits.h"

namespace tessel::measure {

namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

KernelMeasured measure_kernel(const GraphPipelineResult& pipeline, const Target& target,
                              const MeasureKernelRequest& request,
                              const std::optional<analysis::MachineCeilings>& ceilings) {
  const Graph& g = *pipeline.graph;
  const FusionGroup& group = compile::find_kernel(*pipeline.fusion, request.kernel);
  KernelMeasured r;
  r.kernel = request.kernel;
  r.target = target.str();

  // Compile this kernel alone.
  const auto compile_start = Clock::now();
  const te::ComputeDag dag = compile::kernel_dag(g, group);
  schedule::Schedule s;
  try {
    s = schedule::parse_schedule(request.schedule);
  } catch (const Error& e) {
    rethrow_with_context(e, "kernel '" + request.kernel + "': schedule");
  }
  // The default schedule is measured where `tessel run` runs it: an accelerator's kernel that the
  // placement puts on the host is compiled for the host (compile::default_lowering), not refused by
  // the accelerator's code generator. Any other schedule is the user's, compiled for the target.
  // (On other targets the default and the same schedule given by hand compile alike.)
  std::optional<compile::LoweredKernel> placed;
  if (target_traits(target).is_accelerator()) placed = compile::lower_kernel(group, dag, target);
  compile::LoweredKernel kernel =
      placed && placed->schedule == s ? std::move(*placed) : compile::lower_kernel(group, dag, target, s);
  const Target& compiled_for = kernel.host ? *kernel.host : target;
  r.target = compiled_for.str();
  const std::vector<ValueId>& params = kernel.params;
  std::unique_ptr<Module> module = build_module({kernel.func}, compiled_for);  // errors name the kernel and stage
  r.compile_ms = ms_since(compile_start);
  if (request.artifacts)
    for (const auto& [name, text] : module->artifacts()) r.artifacts.emplace_back(name, text);

  // Verify: reference and compiled kernel on the same inputs. Outputs start as NaN so an element
  // the kernel never writes cannot pass by accident.
  std::map<ValueId, Tensor> reference = group_inputs(g, group, request.seed);
  std::map<ValueId, Tensor> compiled = reference;
  compile::run_group_reference(g, group, [&](ValueId v) -> Tensor& { return reference[v]; });
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
  ThreadPool::set_global_threads(target_threads(compiled_for));
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

  // Cold (cache_condition.h): the weights, the group's constant inputs, are evicted before every
  // call, outside the timed span; the activations stay as the previous call left them.
  std::vector<std::span<const std::byte>> weights;
  if (request.cache == CacheCondition::kCold)
    for (ValueId v : params)
      if (g.value(v).value.defined()) weights.emplace_back(compiled.at(v).raw_data(), compiled.at(v).nbytes());
  auto prepare = [&] {
    for (std::span<const std::byte> w : weights) evict_from_caches(w);
  };

  // Time: two warm-up calls, then repeat until min_time_ms has passed (at least 5, at most 500).
  // A device module reports the kernel's own time (its device events, or a simulator's cycles at
  // the machine model's clock): the wall clock around call_host would count the host<->device
  // copies it makes, or how long this computer took to simulate the kernel.
  for (int w = 0; w < 2; ++w) prepare(), module->call_host(request.kernel, args);
  std::vector<double> times;
  double total = 0;  // wall clock: bounds how long measuring takes
  while (times.size() < 5 || (total < request.min_time_ms && times.size() < 500)) {
    prepare();
    auto start = Clock::now();
    module->call_host(request.kernel, args);
    const double wall = ms_since(start);
    const std::optional<LaunchTimes> device = module->last_launch_times();
    times.push_back(device ? device->run_ms() : wall);
    total += wall;
  }
  r.repeats = static_cast<int>(times.size());
  r.ms_min = *std::min_element(times.begin(), times.end());
  r.ms_median = analysis::time_quantile(times, 0.5);
  r.ms_q1 = analysis::time_quantile(times, 0.25);
  r.ms_q3 = analysis::time_quantile(times, 0.75);

  r.flops = compile::kernel_flops(g, group);
  r.bytes = compile::kernel_bytes(g, group);
  const double seconds = std::max(r.ms_min, 1e-6) / 1e3;
  r.gflops = static_cast<double>(r.flops) / seconds / 1e9;
  r.gbps = static_cast<double>(r.bytes) / seconds / 1e9;
  r.intensity = r.bytes > 0 ? static_cast<double>(r.flops) / static_cast<double>(r.bytes) : 0;
  if (ceilings) r.attainable_gflops = ceilings->attainable(r.intensity, &r.bound);
  return r;
}

}  // namespace tessel::measure
