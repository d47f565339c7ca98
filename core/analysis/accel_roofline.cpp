#include "core/analysis/accel_roofline.h"

#include <random>

#include "core/compile/kernel_compiler.h"
#include "core/lower/pipeline.h"
#include "core/runtime/codegen.h"
#include "core/schedule/target_default.h"
#include "core/support/error.h"
#include "core/target/target_traits.h"

namespace tessel::analysis {

namespace {

Tensor random_tensor(const loopir::BufferNode& b, uint64_t seed) {
  Tensor t(b.dtype, b.shape);
  if (b.dtype != DataType::kInt8) return t;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return t;
}

double counter(const std::vector<std::pair<std::string, double>>& counters, const std::string& name) {
  for (const auto& [key, value] : counters)
    if (key == name) return value;
  return 0;
}

}  // namespace

schedule::Schedule accel_schedule_with_vthreads(const te::ComputeDag& dag, const Target& target, int64_t vthreads) {
  schedule::AccelKnobs knobs = schedule::accel_knobs_of(target_traits(target));
  knobs.vthreads = vthreads;
  return schedule::default_accel_schedule(dag, knobs);
}

AcceleratorRun run_on_accelerator(const te::ComputeDag& dag, const Target& target, int64_t vthreads,
                                  const std::vector<Tensor*>& args) {
  const loopir::Func f = lower::lower(dag, accel_schedule_with_vthreads(dag, target, vthreads)).func;
  const std::unique_ptr<Module> module = build_module({f}, target);
  std::vector<Tensor> own;
  std::vector<Tensor*> call_args = args;
  if (call_args.empty()) {
    own.reserve(f.params.size());
    for (size_t k = 0; k < f.params.size(); ++k) own.push_back(random_tensor(*f.params[k], k + 1));
    for (Tensor& t : own) call_args.push_back(&t);
  }
  module->call_host(f.name, call_args);
  const std::vector<std::pair<std::string, double>> c = module->last_call_counters();
  AcceleratorRun r;
  r.vthreads = vthreads;
  r.cycles = counter(c, "cycles");
  r.load_utilization = counter(c, "load_utilization");
  r.compute_utilization = counter(c, "compute_utilization");
  r.store_utilization = counter(c, "store_utilization");
  r.dram_bytes = counter(c, "dram_read_bytes") + counter(c, "dram_write_bytes");
  r.macs = counter(c, "macs");
  if (r.cycles <= 0) throw Error("kernel '" + f.name + "': the target '" + target.kind() + "' counted no cycles");
  return r;
}

MachineCeilings AccelRoofline::ceilings() const {
  MachineCeilings c;
  c.machine = "accel-sim machine model";
  c.target = target;
  const std::string n = std::to_string(gemm);
  c.compute = {{"gemm " + n + "x" + n, compute_gops}};
  c.bandwidth = {{"dram", memory_gbps}};
  return c;
}

AccelRoofline accel_roofs(const Target& target) {
  if (!target_traits(target).is_accelerator())
    throw Error("the accelerator roofline needs an accelerator target (a kind of the accelerator device class), not '" +
                target.str() + "'");
  AccelRoofline r;
  r.target = target.str();
  r.gemm = target.get_int("gemm");
  r.clock_mhz = static_cast<double>(target.get_int("clock_mhz"));
  // The core multiplies one 1×n row by an n×n block per cycle: n² MACs.
  r.compute_gops = static_cast<double>(r.gemm * r.gemm) * 2 * r.clock_mhz / 1e3;
  r.memory_gbps = static_cast<double>(target.get_int("dram_bytes_per_cycle")) * r.clock_mhz / 1e3;
  return r;
}

AccelRoofline accel_roofline(const Graph& graph, const FusionResult& fusion, const Target& target) {
  AccelRoofline r = accel_roofs(target);
  for (const FusionGroup& group : fusion.groups) {
    std::string why;
    const std::optional<te::ComputeDag> dag = compile::kernel_dag(graph, group, &why);
    if (!dag) {
      r.on_host.push_back(group.kernel_name + ": " + why);
      continue;
    }
    // The compile driver's placement (default_lowering): a kernel it puts on the host is not on
    // the accelerator's roofline. The offloaded ones are simulated with 1 and 2 virtual threads.
    try {
      const compile::LoweredKernel placed = compile::default_lowering(group.kernel_name, *dag, target);
      if (placed.host) {
        r.on_host.push_back(group.kernel_name + ": " + placed.host_reason);
        continue;
      }
      AccelRooflineLayer layer{group.kernel_name, run_on_accelerator(*dag, target, 1),
                               run_on_accelerator(*dag, target, 2)};
      r.layers.push_back(std::move(layer));
    } catch (const Error& e) {
      r.on_host.push_back(group.kernel_name + ": " + e.what());
    }
  }
  return r;
}

}  // namespace tessel::analysis
