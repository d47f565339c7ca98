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
//        │ the given schedule, or default_schedule(dag, target)
//        ▼
//   lower_kernel ──▶ LoweredKernel { loopir::Func named K, graph values of its parameters }
//        │           (record_lowering instead: the program after every step and every pass)
//        ▼
//   build_module: the code generator of target.kind() (a plugin) ──▶ runtime Module
//
// The target policy lives here too, asked of the registries and never of a kind's name, except
// for the one default: which target a command takes when none is given, whether a target
// generates code (`ref` does not: its kernels run with the reference kernels), and how wide the
// default schedule's vectors are.
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
// The default CPU schedule of `dag`, its vectors target_vector_floats(target) lanes wide, or for a
// kind whose device is not the CPU (opencl) the default GPU schedule; plain loops (the empty
// schedule) for a DAG the default schedule cannot be built for.
schedule::Schedule default_schedule(const te::ComputeDag& dag, const Target& target);
schedule::Schedule default_schedule(const te::ComputeDag& dag, int64_t vector_lanes);
// An accelerator: a kind whose device computes with a GEMM core (it has the `gemm` option:
// accel-sim). Its default schedule is schedule::default_accel_schedule, and it runs only the
// kernels that tensorize onto the core; CompiledModel compiles the others for host_target_of().
bool is_accelerator(const Target& target);
schedule::AccelKnobs accel_knobs(const Target& target);
// Where an accelerator's other kernels run: the best CPU code generator loaded (default_target()).
Target host_target_of(const Target& target);
// The vector lanes of a target given as a spec (the studio holds targets as text): a spec whose
// kind is not registered in this process (its plugin is not loaded here) gets the host CPU's
// width, as the `ref` kind describes it.
int64_t vector_lanes_of_spec(const std::string& target_spec);

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
};

// Lowers the group's DAG with `given`, or without one with default_schedule(dag, target), and when
// that does not lower, with plain loops (the empty schedule always lowers). Throws Error
// "kernel 'K': schedule: ..." when the given schedule does not lower, "kernel 'K': lowering: ..."
// when not even plain loops do.
LoweredKernel lower_kernel(const FusionGroup& group, const te::ComputeDag& dag, const Target& target,
                           const std::optional<schedule::Schedule>& given = std::nullopt);

// For an accelerator, whose code generator accepts only some programs: lowers `s` and generates
// its code; when that fails, throws Error naming the step that made it fail, the one after which
// no longer prefix of `s` compiles ("kernel 'K': step 14 parallel(C.i.outer.inner): accel-sim
// codegen: ..."), so every step kind is either accepted or refused by name.
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
