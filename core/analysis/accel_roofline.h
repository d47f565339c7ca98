#pragma once
// The roofline of an accelerator (accel-sim) from its machine model, with one point per offloaded
// layer measured by the simulator with 1 and with 2 virtual threads: the TVM paper's Figure 10.
//
//   GOP/s (log)
//      ▲                      ________________ compute roof: gemm² MACs/cycle × 2 ops × clock
//      │                 ____/
//      │            ____/  ● 2 virtual threads       latency hidden behind the other thread's
//      │       ____/       ▲                         loads: the point moves up toward the roof
//      │  ____/ memory     ○ 1 virtual thread
//      │ /      roof: DRAM bytes/cycle × clock
//      └──────────────────────────────▶ op/byte (log)    ops and DRAM bytes: the simulator's counters
//
// Nothing is measured on the host: the roofs come from the target's options, the points from the
// simulator's cycles at the target's clock, so the figures do not depend on the host's load.
//
// Usage:
//   AccelRoofline r = accel_roofline(*pipeline.graph, *pipeline.fusion, target);
//   for (const AccelRooflineLayer& l : r.layers) plot(l.one.intensity(), l.one.gops(r.clock_mhz), ...);
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/calibrate.h"
#include "core/graph/passes/fusion_result.h"
#include "core/schedule/schedule.h"
#include "core/support/tensor.h"
#include "core/target/target.h"
#include "core/te/tensor.h"

namespace tessel::analysis {

// What the simulator counted in one call of a kernel (Module::last_call_counters).
struct AcceleratorRun {
  int64_t vthreads = 1;
  double cycles = 0;
  double load_utilization = 0, compute_utilization = 0, store_utilization = 0;  // busy ÷ cycles
  double dram_bytes = 0;                                                        // read + written
  double macs = 0;
  double ops() const { return 2 * macs; }                                       // a MAC is a multiply and an add
  double intensity() const { return dram_bytes > 0 ? ops() / dram_bytes : 0; }  // op/byte
  double gops(double clock_mhz) const { return cycles > 0 ? ops() * clock_mhz / (cycles * 1e3) : 0; }
};

// The accelerator's default schedule of `dag` (schedule::default_accel_schedule with the target's
// knobs) with `vthreads` virtual threads instead of the default two. Throws Error when the kernel
// does not tensorize onto the GEMM core.
schedule::Schedule accel_schedule_with_vthreads(const te::ComputeDag& dag, const Target& target, int64_t vthreads);

// Lowers `dag` with that schedule, generates the accelerator's code and runs it once on `args`
// (its parameters, inputs then outputs; empty: random int8 inputs, zeroed outputs, which give the
// same cycles: nothing in the simulator depends on the data). Throws Error when the code generator
// refuses the kernel. tests/bench/bench_accel and accel_roofline both measure with this.
AcceleratorRun run_on_accelerator(const te::ComputeDag& dag, const Target& target, int64_t vthreads,
                                  const std::vector<Tensor*>& args = {});

struct AccelRooflineLayer {
  std::string kernel;       // the fusion group's kernel name
  AcceleratorRun one, two;  // 1 and 2 virtual threads
  double speedup() const { return two.cycles > 0 ? one.cycles / two.cycles : 0; }
};

struct AccelRoofline {
  std::string target;  // Target::str()
  int64_t gemm = 0;
  double clock_mhz = 0;
  double compute_gops = 0;                 // gemm² MACs/cycle × 2 ops × clock
  double memory_gbps = 0;                  // DRAM bytes/cycle × clock
  std::vector<AccelRooflineLayer> layers;  // the offloaded kernels, in the fusion's order
  std::vector<std::string> on_host;        // "kernel: why it is not offloaded"
  // The two roofs as roofline ceilings: compute "gemm NxN", bandwidth "dram".
  MachineCeilings ceilings() const;
};
using AccelRooflinePtr = std::shared_ptr<const AccelRoofline>;

// The roofs alone (no layers): what the target's options say.
AccelRoofline accel_roofs(const Target& target);

// Every kernel of the fused graph that the accelerator takes (its default schedule tensorizes and
// the code generator accepts it) compiled with 1 and 2 virtual threads and run on the simulator.
// `target` must be an accelerator (is_accelerator), else Error.
AccelRoofline accel_roofline(const Graph& graph, const FusionResult& fusion, const Target& target);

}  // namespace tessel::analysis
