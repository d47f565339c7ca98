#pragma once
// The values the kernel edit loop hands the panes (schedule editor, program, roofline, profile).
// Each is built once off the UI thread and published as shared_ptr<const ...>, never edited.
//
//   user edits a schedule ──▶ KernelEditLoop ──(worker thread: lower every step)──▶ KernelLowering
//                                    │
//                                    └──(measuring process: codegen, verify, time)──▶ KernelMeasurement
//   "Profile model" ──▶ measuring process ──▶ ModelProfile (per-kernel table + last-run timeline)
//
// `generation` counts edits of one kernel: a pane drops a result whose generation is older than
// the one it shows (stale work is cancelled, but a result may already be on its way).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/calibrate.h"
#include "core/analysis/profile.h"
#include "core/lower/step_views.h"
#include "core/schedule/schedule.h"

namespace tessel::views {

// One kernel's tensor expression, its schedule and the program after every step and pass.
struct KernelLowering {
  std::string kernel;                          // fusion-group kernel name
  int64_t generation = 0;
  std::string tensor_expression;               // te::to_string of the kernel's DAG
  schedule::Schedule schedule;                 // the schedule that was lowered
  bool is_default_schedule = true;
  // The default's own fallbacks, as `tessel run --report` says them: "plain loops: no default
  // schedule: ..." or "runs on the host (llvm), not offloaded: accel: ..."; empty otherwise.
  std::string schedule_note;
  std::vector<lower::ViewRecord> steps;        // entry 0: unscheduled; entry k: after step k
  std::vector<lower::ViewRecord> passes;       // lowering passes of the whole schedule (empty on error)
  std::string error;                           // first failing step: "step 3 split(C.x, 0): factor must be ≥ 1"
  int error_step = -1;                         // index into schedule.steps of the failing step, -1: none
  double lower_ms = 0;                         // whole per-step list
};
using KernelLoweringPtr = std::shared_ptr<const KernelLowering>;

// One kernel compiled by the target's plugin in the measuring process, checked and timed.
struct KernelMeasurement {
  std::string kernel;
  int64_t generation = 0;
  std::string target;                          // Target::str()
  enum class Verdict { kPending, kCorrect, kWrong, kFailed } verdict = Verdict::kPending;
  std::string error;                           // kFailed: "measuring process crashed (signal 11) on kernel ..."
  double max_abs_error = 0;                    // against the reference kernels on random inputs
  double ms_min = 0, ms_median = 0;
  double ms_q1 = 0, ms_q3 = 0;                 // quartiles of the repeats
  int repeats = 0;
  int64_t flops = 0, bytes = 0;
  double gflops = 0, gbps = 0, intensity = 0;  // as the measuring process sent them (at ms_min);
                                               // panes show kernel_time() (views/common/kernel_time.h)
  double attainable_gflops = 0;                // roofline at this intensity (0 without ceilings)
  std::string bound;                           // "compute (fma_512)" / "memory (dram)"
  double compile_ms = 0;                       // lower + codegen + JIT in the measuring process
  // Artifacts the plugin returned, by name ("llvm_ir", "asm", "c_source"), in the plugin's order.
  std::vector<std::pair<std::string, std::string>> artifacts;
};
using KernelMeasurementPtr = std::shared_ptr<const KernelMeasurement>;

// A whole-model profile from the measuring process.
struct ModelProfile {
  analysis::Profile profile;
  std::optional<analysis::MachineCeilings> ceilings;
  std::string error;
};
using ModelProfilePtr = std::shared_ptr<const ModelProfile>;

}  // namespace tessel::views
