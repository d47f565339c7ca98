#pragma once
// Profiling a compiled model: per-kernel times over warm-up + repeats (min and median), FLOPs and
// bytes from the graph, achieved GFLOP/s and GB/s, and — given machine ceilings — where each
// kernel sits on the roofline. Exports the `tessel profile --json` object and a Chrome trace
// (one track per thread, which Perfetto opens).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/calibrate.h"
#include "core/compile/compiled_model.h"
#include "core/runtime/device_lanes.h"

namespace tessel::analysis {

struct KernelProfile {
  std::string name;
  bool compiled = true;  // false: ran on the reference kernels
  double ms_min = 0, ms_median = 0;
  double ms_q1 = 0, ms_q3 = 0;  // first and third quartiles of the repeats (their spread)
  // The clock the times are from: the device's events (a kernel on an opencl device: its run
  // there, without launch and wait) or the host's (everything else).
  bool device_clock = false;
  int64_t flops = 0, bytes = 0;
  double gflops = 0, gbps = 0;   // at ms_min
  double intensity = 0;          // flops per byte
  std::string bound;             // "compute (avx512_fma)", "memory (dram)", or "" without ceilings
  double attainable_gflops = 0;  // the roofline at this intensity (0 without ceilings)
  // Where it ran ("accel-sim:0 (accel-sim)", "host (llvm)"; CompiledModel::placement) and, on a
  // simulated device, what the device counted in the last run (RunTimes::device_counters).
  std::string placement;
  // The schedule it ran and where, with the reason for any fallback (CompiledModel::schedule_report:
  // "default schedule, on cpu:0 (llvm)", "plain loops (no default schedule: ...), on ...").
  std::string schedule;
  std::vector<std::pair<std::string, double>> device_counters;
  std::shared_ptr<const DeviceLanes> device_lanes;  // and what each of its units did (compile::RunTimes::device_lanes)
};

struct Profile {
  std::string target;
  double total_ms = 0;  // median of whole runs
  std::vector<KernelProfile> kernels;
  compile::RunTimes last_run;  // spans of the last run, for the timeline
  int threads = 1;
  int repeats = 0;  // timed runs per kernel
};

Profile profile_model(const compile::CompiledModel& model, const std::vector<Tensor>& inputs, int warmup, int repeats,
                      const std::optional<MachineCeilings>& ceilings);

nlohmann::json profile_json(const Profile& p);
// A run's times as JSON and back (the measuring process sends the last run to the studio):
//   {"kernel_ms": [...], "spans": [[b, e], ...], "thread_spans": [[kernel, thread, b, e], ...],
//    "copies": [...], "device_spans": [...],
//    "device_counters": [[kernel, [["cycles", 1234], ...]], ...],
//    "device_lanes": [[kernel, <device_lanes_json>], ...], "total_ms": t}
nlohmann::json run_times_json(const compile::RunTimes& r);
compile::RunTimes run_times_from_json(const nlohmann::json& j);
// One kernel call's device lanes (bounded by make_device_lanes):
//   {"lanes": ["load", "compute", "store"], "kinds": ["LOAD inp", "GEMM", ...], "cycles": 5120,
//    "clock_mhz": 200, "instructions": 310, "note": "",
//    "summary": {"busy": [..per lane..], "utilization": [...], "overlap_cycles": 2900},
//    "intervals": [[lane, kind, start, end, busy, first, count, waits_on, notifies], ...]}
nlohmann::json device_lanes_json(const DeviceLanes& d);
DeviceLanes device_lanes_from_json(const nlohmann::json& j);
// Chrome trace-event JSON: one complete event ("ph": "X") per kernel of the last run on the calling
// thread's track, and one per parallel-loop chunk on the track of the pool thread that ran it.
// Kernels with device lanes (accel-sim) add a process for the device with one track per unit
// (load, compute, store), their intervals converted from cycles to µs at the device's clock and
// placed at the kernel's start on the device, so Perfetto shows the units overlapping.
std::string chrome_trace(const Profile& p);

// Deterministic inputs for the model's inputs (uniform in [-1, 1) for floats, small ints otherwise).
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed = 1);

// The value at fraction q (0: smallest, 0.5: the median profile_model reports, 1: largest) of
// `times` by nearest rank; 0 for none.
double time_quantile(std::vector<double> times, double q);

}  // namespace tessel::analysis
