#pragma once
// The compile driver: a model becomes an executable.
//
//   Graph ──run_graph_pipeline──▶ fused Graph + groups + memory plan
//     each group ──kernel_compiler.h (DAG, schedule: given or the target's default, lower)──▶ loopir::Func
//   all Funcs ──CodeGen of target.kind() (a plugin)──▶ runtime Module
//   run(): one arena of plan.peak_bytes; kernels in plan order, each reading and writing its
//          tensors at their planned offsets; outputs copied out. On a device that is not the CPU
//          the plan's blocks live in device memory instead (core/compile/device_run.h).
//
// Partitioning. On an accelerator (a kind of DeviceClass::kAccelerator: accel-sim) a kernel is
// offloaded when its schedule tensorizes onto the GEMM core and the accelerator's code generator
// accepts it (compile::default_lowering asks it, kernel by kernel); every other kernel is compiled
// for the host (llvm, else c, else the reference kernels) and runs there, its operands copied
// through the DeviceAPI (device_run.h, RunTimes::copies):
//
//   kernel ──default_accel_schedule──▶ lowers ──accel codegen──▶ accelerator module   (offloaded)
//             │ does not tensorize       │ fails    │ refuses the kernel
//             └───────────────────────────┴──────────┴──▶ default CPU schedule ──▶ host module  (on_host)
//
// A group whose ops have no tensor-expression builder (or whose lowering fails) runs with the
// reference kernels instead, through the same executor; so does every group when the target has
// no code generator (`ref`). A plan that needs more memory than CompileOptions::memory_limit is
// refused before code generation, naming its largest tensor. Every such kernel is listed with the reason
// (`fallback_reason`), so `tessel run`/`profile` can say what was not compiled.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/compile/kernel_compiler.h"
#include "core/graph/passes/pipeline.h"
#include "core/runtime/module.h"
#include "core/schedule/schedule.h"

namespace tessel::compile {

struct CompiledKernel {
  std::string name;             // the fusion group's kernel name
  int group = -1;               // index into fusion->groups
  bool compiled = false;        // false: runs with the reference kernels
  std::string fallback_reason;  // why not compiled
  bool on_host = false;         // an accelerator target's kernel that runs on the host (partitioning)
  std::string host_reason;      // why it was not offloaded
  std::vector<ValueId> params;  // graph values bound to the kernel's parameters, in order
  schedule::Schedule schedule;  // the schedule it was lowered with
  // Where that schedule came from: a hand schedule, a tuning record (CompileOptions::tuned_schedule),
  // the target's default, or plain loops; and why it is not the one asked for (plain loops: why the
  // default did not apply; a tuning record that did not lower: why it was passed over).
  ScheduleSource schedule_source = ScheduleSource::kDefault;
  std::string schedule_note;
  std::string record_passed_over;  // a tuning record offered that did not lower: why; else empty
  std::string tensor_expression;  // te::to_string of its DAG
  std::string loop_program;       // the lowered program
  int64_t flops = 0;
  int64_t bytes = 0;      // bytes of its inputs and outputs (what it must move at least once)
  double compile_ms = 0;  // build + schedule + lower
};

struct CompileOptions {
  PipelineOptions pipeline;
  // Hand schedules by kernel name (replace the default schedule).
  std::map<std::string, schedule::Schedule> schedules;
  // Tuned schedules (`--records LOG`, core/tune/records.h), asked with each kernel's tensor
  // expression when it has no hand schedule. One that no longer lowers (a log from another
  // version) is passed over for the default schedule.
  std::function<std::optional<schedule::Schedule>(const te::ComputeDag&)> tuned_schedule;
  // The most memory a run may plan to use (arena + constants + inputs + outputs), in bytes; 0: the
  // default, 3/4 of the memory available (core/support/memory_budget.h). The CLI's --memory-limit.
  int64_t memory_limit = 0;
};

// What a run of the planned graph holds at once: the memory plan's arena, the constants, the
// inputs and the outputs (copied out of the arena), and the largest single tensor among them.
struct MemoryNeed {
  int64_t arena = 0, constants = 0, inputs_outputs = 0;
  ValueId largest = kNoValue;
  int64_t largest_bytes = 0;
  int64_t total() const { return arena + constants + inputs_outputs; }
};
MemoryNeed memory_need(const Graph& g, const MemoryPlan& plan);
// Throws Error before anything is allocated when the need exceeds `limit` bytes (0: the default),
// naming the model, the planned bytes, the largest tensor, the limit and how to raise it.
// With `scratch`, the need also counts the largest scratch of the compiled kernels (kernels run one
// after another, so only one kernel's scratch is alive at a time), named in the message.
struct KernelScratch {
  std::string kernel;
  loopir::ScratchNeed need;
};
void check_memory_limit(const Graph& g, const MemoryPlan& plan, int64_t limit, const KernelScratch* scratch = nullptr);

// Times of one run, one entry per kernel in execution order.
struct RunTimes {
  std::vector<double> kernel_ms;
  std::vector<std::pair<double, double>> kernel_spans_ms;  // start, end from the run's start
  // What each pool thread did inside the kernels' parallel loops: one span per chunk.
  struct ThreadSpan {
    int kernel = 0;  // index into kernel_ms
    int thread = 0;  // 0: the calling thread (the one running the kernels); k: pool worker k
    double begin_ms = 0, end_ms = 0;
  };
  std::vector<ThreadSpan> thread_spans;
  // Data crossing between host and device memory (a device target only, core/compile/device_run.h):
  // graph inputs in, outputs out, and the inputs and outputs of kernels that run on the host.
  struct Copy {
    int kernel = -1;    // index into kernel_ms of the kernel it was made for; -1: the run's inputs or outputs
    std::string value;  // the graph value's name
    bool to_device = true;
    int64_t bytes = 0;
    double begin_ms = 0, end_ms = 0;
  };
  std::vector<Copy> copies;
  // Kernels timed by the device's own events (opencl): the time it ran there, and where that lies
  // on this run's clock (placed at the host's launch time plus the device's queued→start delay).
  struct DeviceSpan {
    int kernel = 0;  // index into kernel_ms
    double begin_ms = 0, end_ms = 0;
  };
  std::vector<DeviceSpan> device_spans;
  // What a simulated device counted in each kernel it ran (accel-sim: cycles, each unit's busy
  // cycles and utilization, DRAM bytes, MACs; Module::last_call_counters).
  struct DeviceCounters {
    int kernel = 0;  // index into kernel_ms
    std::vector<std::pair<std::string, double>> values;
  };
  std::vector<DeviceCounters> device_counters;
  // What each unit of a simulated device did in each kernel it ran, on the device's clock
  // (accel-sim: load, compute and store lanes; Module::last_call_lanes). Shared, never edited.
  struct DeviceLaneSet {
    int kernel = 0;  // index into kernel_ms
    std::shared_ptr<const DeviceLanes> lanes;
  };
  std::vector<DeviceLaneSet> device_lanes;
  double total_ms = 0;
};

// Where a target's kernels run: its kind's device type, and the `device` option's index if it has one.
Device target_device(const Target& target);

class DeviceConstants;  // core/compile/device_run.h

class CompiledModel {
 public:
  ~CompiledModel();
  // Throws Error naming the kernel and the stage when code generation fails, or a hand schedule
  // does not lower ("kernel 'K': schedule: ..."); naming the node when constant indices are out of
  // range; and (check_memory_limit) when the plan needs more than options.memory_limit.
  static std::shared_ptr<const CompiledModel> compile(GraphPtr graph, const Target& target,
                                                      const CompileOptions& options = {});

  // `inputs` follow graph->inputs; returns the graph outputs. `times`, when given, gets per-kernel times.
  // An index out of range in the inputs throws Error "kernel 'K': node 'N' (Gather): index 7 out of
  // range [-5, 5) on axis 0".
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunTimes* times = nullptr) const;

  const Target& target() const { return target_; }
  const GraphPipelineResult& pipeline() const { return pipeline_; }
  const Graph& graph() const { return *pipeline_.graph; }
  const std::vector<CompiledKernel>& kernels() const { return kernels_; }
  const Module* module() const { return module_.get(); }
  // An accelerator target's host side: the target and module of the kernels that run on the host.
  const std::optional<Target>& host_target() const { return host_target_; }
  const Module* host_module() const { return host_module_.get(); }
  // Where kernel k runs, for reports: "accel-sim:0 (accel-sim)", "host (llvm)", "host (reference kernels)".
  std::string placement(const CompiledKernel& k) const;
  // Which schedule kernel k runs and where, with every fallback's reason, for `tessel run --report`,
  // `tessel profile` and the studio: "default schedule, on cpu:0 (llvm)", "plain loops (no default
  // schedule: ...), on cpu:0 (llvm)", "reference kernels (no tensor expression: ...), on host",
  // "default schedule, on host (llvm) (not offloaded: accel: ...)".
  std::string schedule_report(const CompiledKernel& k) const;
  Device device() const { return device_; }
  int compiled_count() const;
  double codegen_ms() const { return codegen_ms_; }

 private:
  explicit CompiledModel(const Target& target);
  Target target_;
  Device device_;                                      // where the kernels run: the target kind's device
  std::unique_ptr<DeviceConstants> device_constants_;  // its weights there (not the CPU)
  GraphPipelineResult pipeline_;
  std::vector<CompiledKernel> kernels_;
  std::unique_ptr<Module> module_;
  std::optional<Target> host_target_;
  std::unique_ptr<Module> host_module_;
  double codegen_ms_ = 0;
};

}  // namespace tessel::compile
