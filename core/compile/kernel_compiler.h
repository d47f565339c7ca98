#pragma once
// One way to compile a kernel. CompiledModel (every kernel of a model), tessel-measure (one kernel,
// verified and timed), the studio's edit loop and `tessel lower` all go through these functions,
// so they find the same group, build the same tensor expression, take the same default schedule
// for a target and lower it the same way.
//
//   fused Graph + FusionResult
//        │ find_kernel(fusion, "K")            an unknown name: Error listing the kernels
//        ▼
//   FusionGroup ──kernel_dag──▶ te::ComputeDag  a member op without a builder: why, or Error
//        │ the given schedule, or default_lowering(kernel, dag, target): placement + default
//        ▼
//   lower_kernel ──▶ LoweredKernel { loopir::Func named K, graph values of its parameters }
//        │           (record_lowering instead: the program after every step and every pass)
//        ▼
//   build_module: the code generator of target.kind() (a plugin) ──▶ runtime Module
//
// The target policy lives here too, asked of the registries and of the target's traits
// (core/target/target_traits.h), never of a kind's name, except for the one default: which target
// a command takes when none is given, whether a target generates code (`ref` does not: its kernels
// run with the reference kernels), and where a kernel runs with which default schedule.
//
// Usage (tessel-measure):
//   const FusionGroup& group = find_kernel(*pipeline.fusion, "fused_conv2d_relu_1");
//   LoweredKernel k = lower_kernel(group, kernel_dag(*pipeline.graph, group), target, hand_schedule);
//   std::unique_ptr<Module> module = build_module({k.func}, target);
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/passes/fusion_result.h"
#include "core/loopir/ir.h"
#include "core/lower/step_views.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/support/tensor.h"
#include "core/target/target.h"
#include "core/te/tensor.h"

namespace tessel::compile {

// ── Target policy ───────────────────────────────────────────────────────────────────────────

// The target when none is given: the best code generator loaded (`llvm`, else `c`, else `interp`),
// else `ref`.
Target default_target();
// Whether the target's kind has a code generator (asks CodeGenRegistry).
bool generates_code(const Target& target);
// `target` when it generates code; otherwise Error "WHAT needs a code generator; the target 'K'
// has none (targets with one: ...)". For commands that compile and time kernels.
Target require_code_generator(Target target, const std::string& what);
// Where an accelerator's other kernels run: the best CPU code generator loaded (default_target()).
Target host_target_of(const Target& target);

// Where a kernel's schedule came from, as `tessel run --report`, `tessel profile` and the studio
// say it: "default", "hand", "tuned record", "plain loops".
enum class ScheduleSource { kDefault, kHand, kTuned, kPlainLoops };
std::string_view schedule_source_name(ScheduleSource source);

// The kernel a target compiles when nobody wrote or tuned a schedule for it: where it runs and
// with which schedule. The one placement and default policy; CompiledModel (tessel run, build,
// profile), `tessel lower`, tessel-measure, the studio's edit loop and the tuner's candidate 0
// (schedule::default_schedule_for, which this asks) all agree because they all come here.
//
//   target_traits(target).device_class
//     cpu, gpu      default_schedule_for(dag) ──lower──▶ the kernel
//                     │ the default does not apply, or does not lower
//                     └──▶ plain loops, source kPlainLoops, fallback_reason says why
//     accelerator   default_schedule_for(dag) ──lower──▶ the accelerator's code generator
//                     │ accepts: the kernel runs on the accelerator
//                     └ the schedule does not apply, does not lower, or the code generator
//                       refuses it ──▶ the host's default (host_target_of), on_host, host_reason
//
// The result is lowered (func, named `kernel`; params are left to the caller, which has the
// group): a caller that compiles does not lower it again. Throws Error only when not even plain
// loops lower ("kernel 'K': lowering: ...").
struct LoweredKernel;
LoweredKernel default_lowering(const std::string& kernel, const te::ComputeDag& dag, const Target& target);
// Its schedule alone (the studio's default, `tessel lower`).
schedule::Schedule default_schedule(const te::ComputeDag& dag, const Target& target);

// ── The group of a kernel ───────────────────────────────────────────────────────────────────

// Throws Error "kernel 'K' is not in the model (kernels: a, b, ...)".
const FusionGroup& find_kernel(const FusionResult& fusion, std::string_view kernel);
bool has_kernel(const FusionResult& fusion, std::string_view kernel);
// The group's tensor expression; nullopt with `why` ("no tensor expression: Pad: mode reflect is
// not supported") when a member op has no builder for its attributes or types. Throws Error for
// a node no backend can run ("node 'g' (Gather): index 9 out of range [-5, 5) on axis 0 (the
// indices are a constant)").
std::optional<te::ComputeDag> kernel_dag(const Graph& graph, const FusionGroup& group, std::string* why);
// The same, throwing Error "kernel 'K' has no tensor expression: ..." instead.
te::ComputeDag kernel_dag(const Graph& graph, const FusionGroup& group);

// FLOPs of the group's ops, and the bytes of its inputs and outputs (what it must move at least once).
int64_t kernel_flops(const Graph& graph, const FusionGroup& group);
int64_t kernel_bytes(const Graph& graph, const FusionGroup& group);

// ── Lowering ────────────────────────────────────────────────────────────────────────────────

struct LoweredKernel {
  schedule::Schedule schedule;  // what was lowered: the given one, the default, or plain loops
  loopir::Func func;            // named after the kernel
  std::vector<ValueId> params;  // the graph values bound to func's parameters, in order
  ScheduleSource source = ScheduleSource::kDefault;
  // Why the kernel is not compiled as asked: kPlainLoops, why the default did not apply or lower;
  // kDefault after a tuning record was passed over, why that record did not lower.
  std::string fallback_reason;
  // A tuning record was offered and did not lower: why (also in fallback_reason); empty otherwise.
  std::string record_passed_over;
  // An accelerator's kernel that runs on the host instead: the target `func` is lowered for, and why
  // the accelerator does not take it.
  std::optional<Target> host;
  std::string host_reason;
};

// Lowers the group's DAG with `given` (source kHand), or without one as default_lowering decides.
// Throws Error "kernel 'K': schedule: ..." when the given schedule does not lower,
// "kernel 'K': lowering: ..." when not even plain loops do.
LoweredKernel lower_kernel(const FusionGroup& group, const te::ComputeDag& dag, const Target& target,
                           const std::optional<schedule::Schedule>& given = std::nullopt);

// For an accelerator, whose code generator takes only some programs: lowers `s` and asks it
// (codegen_refusal, core/runtime/codegen.h); when it refuses, throws Error naming the step after
// which no longer prefix of `s` compiles ("kernel 'K': step 14 parallel(C.i.outer.inner):
// accel-sim codegen: ..."), so every step kind is either accepted or refused by name.
loopir::Func lower_for_accelerator(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s,
                                   const Target& target);

// The program after every step and after every lowering pass of `s` (the studio's program pane,
// `tessel lower --steps/--passes`). Never throws: a failure lands in `error`.
struct LoweringRecords {
  std::vector<lower::ViewRecord> steps;   // entry 0: unscheduled; entry k: after step k
  std::vector<lower::ViewRecord> passes;  // after every lowering pass; empty when a step failed
  std::string error;                      // "kernel 'K': step 3 split(C.x, 0): factor must be ≥ 1"
  int error_step = -1;                    // index into s.steps of the failing step; -1: none
};
LoweringRecords record_lowering(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s);

// ── Running a group without compiling it ────────────────────────────────────────────────────

// Runs the group's nodes in order with the op table's reference kernels: the oracle that compiled
// kernels are checked against, and what runs a kernel that was not compiled. `slot(v)` is the
// tensor of graph value v; an output slot that already holds storage (a view into the memory
// plan's arena) is written in place, an empty one is filled.
using ValueSlot = std::function<Tensor&(ValueId)>;
void run_group_reference(const Graph& graph, const FusionGroup& group, const ValueSlot& slot);

}  // namespace tessel::compile
