// tessel lower --op "matmul M=512 N=512 K=512" [--schedule FILE] [--steps] [--passes] [--diff]
//                                               [--dump-after all|changed|STEP] [--verify-each]
// tessel lower MODEL --kernel NAME [--target SPEC] [...]   (a fused kernel of a model; without
//                                                          --kernel, the model's kernels are listed):
// the kernel's tensor expression, its schedule, then the loop program — after every schedule
// step (--steps), after every lowering pass (--passes), or only the final one; --diff prints
// what each step or pass changed instead of the whole program. --dump-after prints the program
// after the chosen schedule steps and lowering passes through the instrumentation's TextDumper,
// the way `tessel passes --dump-after` prints graphs. --verify-each checks the program after
// build_loop_nests and after every lowering pass (core/loopir/verify.h) and fails naming the pass
// that left it malformed.
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>

#include "app/cli/cli_args.h"
#include "app/cli/cli_target.h"
#include "core/compile/kernel_compiler.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pipeline.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/lower/step_views.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/support/file_io.h"
#include "core/te/op_spec.h"

namespace tessel::cli {

namespace {

const ArgSpec kSpec{
    .usage =
        "tessel lower (--op \"OP KEY=VALUE ...\" | MODEL --kernel NAME [--target SPEC]) [--schedule FILE | --gpu] "
        "[--steps] [--passes] [--diff] [--dump-after all|changed|STEP] [--verify-each]",
    .value_options = {"--op", "--schedule", "--kernel", "--target", "--dump-after"},
    .flags = {"--steps", "--passes", "--diff", "--gpu", "--verify-each"},
    .max_positional = 1,
};

// The tensor expression of one fused kernel of MODEL (after the graph passes for the target);
// without a kernel name, lists the kernels and returns nullopt.
std::optional<te::ComputeDag> model_kernel_dag(const std::string& model, const std::optional<std::string>& kernel,
                                               const Target& target) {
  GraphPipelineResult r = run_graph_pipeline(std::make_shared<const Graph>(import_onnx(model)), target);
  if (!r.ok()) throw Error(model + ": " + r.error);
  if (!kernel) {
    for (const FusionGroup& g : r.fusion->groups)
      std::printf("%-40s %zu ops, %s\n", g.kernel_name.c_str(), g.nodes.size(),
                  std::string(pattern_name(g.pattern)).c_str());
    return std::nullopt;
  }
  try {
    return compile::kernel_dag(*r.graph, compile::find_kernel(*r.fusion, *kernel));
  } catch (const Error& e) {
    rethrow_with_context(e, model);
  }
}

std::string details() {
  std::string d =
      "Prints the kernel's tensor expression, its schedule, then the loop program. The schedule is\n"
      "FILE (one step per line, e.g. split(C.i, 8)), or the one `tessel run` compiles on the target (its\n"
      "default, on the host for an accelerator's kernel it does not take; '# default:' says why), or with\n"
      "--gpu the default GPU-style schedule. --steps prints the program after every step (step 0: unscheduled),\n"
      "--passes after every lowering pass, --diff only the lines each step or pass changed.\n"
      "--dump-after all|changed|STEP prints the program after every schedule step and lowering pass, those\n"
      "that changed it, or the named one: a lowering pass (loop_partition), 'initial' or a step ('step 2').\n"
      "--verify-each checks the loop program after build_loop_nests and after every lowering pass\n"
      "(scoping of loop variables and buffers, barriers, types) and fails naming the pass after which\n"
      "it is malformed (always on in debug builds and with TESSEL_VERIFY_LOOPIR=1).\n"
      "Ops and their attributes (with defaults):\n";
  for (auto& line : te::op_spec_help()) d += "  " + line + "\n";
  return d;
}

// The schedule in `path`, each step applied once to `dag` here so that a step that does not fit the
// kernel is reported with the file and line it came from, like a step that does not parse.
schedule::Schedule read_schedule_file(const std::string& path, const te::ComputeDag& dag) {
  std::vector<int> lines;
  schedule::Schedule sched;
  try {
    sched = schedule::parse_schedule(read_text_file(path, "schedule", size_t{1} << 20), &lines);
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
  schedule::ScheduleState state = schedule::initial_state(dag);
  for (size_t k = 0; k < sched.steps.size(); ++k) {
    try {
      schedule::apply_step(state, sched.steps[k]);
    } catch (const Error& e) {
      rethrow_with_context(e, path + ": schedule line " + std::to_string(lines[k]) + ": step " + std::to_string(k + 1) +
                                  " " + schedule::to_string(sched.steps[k]));
    }
  }
  return sched;
}

void print_view(const lower::ViewRecord& v, bool first, bool diff) {
  std::printf("# %s  (%s, %.2f ms)\n", v.record.name.c_str(), v.record.changed ? "changed" : "unchanged",
              v.record.wall_ms);
  if (diff && !first)
    std::fputs(v.diff.empty() ? "  (no change)\n" : v.diff.c_str(), stdout);
  else
    std::fputs(v.record.text().c_str(), stdout);
  std::fputs("\n", stdout);
}

// `which` for --dump-after must name something that runs: a lowering pass or a schedule step.
void check_dump_after(const std::string& which, const schedule::Schedule& sched) {
  if (which == "all" || which == "changed") return;
  std::vector<std::string> steps = lower::lowering_pass_names();
  steps.insert(steps.begin(), "initial");
  for (size_t k = 0; k < sched.steps.size(); ++k)
    steps.push_back("step " + std::to_string(k + 1) + " " + schedule::to_string(sched.steps[k]));
  std::string names;
  for (const std::string& step : steps) {
    if (TextDumper::selects(TextDumper::When::kNamed, which, step, false)) return;
    names += (names.empty() ? "" : ", ") + step;
  }
  throw UsageError("--dump-after: no schedule step or lowering pass named '" + which + "' (there are: " + names + ")");
}

}  // namespace

int run_lower_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, details().c_str()), 0;
  // The default schedule follows the target's traits (vector width, caches, device class), the
  // same one `tessel run` and the studio use.
  const Target target = resolve_target(args.value("--target"));
  std::optional<te::ComputeDag> model_dag;
  if (!args.positional().empty()) {
    if (args.value("--op")) throw UsageError("give either --op or a MODEL, not both");
    model_dag = model_kernel_dag(args.positional()[0], args.value("--kernel"), target);
    if (!model_dag) return 0;  // the kernels were listed
  }
  const te::ComputeDag dag = model_dag ? *model_dag : te::dag_from_spec(args.required("--op"));
  schedule::Schedule sched;
  std::string note;  // why the default is not the target's own (plain loops, or on the host)
  if (auto file = args.value("--schedule")) {
    sched = read_schedule_file(*file, dag);
  } else if (args.flag("--gpu")) {
    sched = schedule::default_gpu_schedule(dag);
  } else {
    // What `tessel run` compiles for this kernel on the target (compile::default_lowering):
    // placement and default schedule, with the reason for any fallback.
    compile::LoweredKernel d = compile::default_lowering(dag.name.empty() ? "kernel" : dag.name, dag, target);
    if (d.host) note = "runs on the host (" + d.host->kind() + "), not offloaded: " + d.host_reason;
    if (d.source == compile::ScheduleSource::kPlainLoops)
      note += std::string(note.empty() ? "" : "; ") + "plain loops: " + d.fallback_reason;
    sched = std::move(d.schedule);
  }
  const bool diff = args.flag("--diff");
  if (auto which = args.value("--dump-after")) check_dump_after(*which, sched);
  // --verify-each: the schedule is lowered with the verifier after every pass before anything is
  // printed, so a malformed program fails the command naming its pass; that lowering's program
  // is the one printed last.
  std::optional<lower::LowerResult> verified;
  if (args.flag("--verify-each")) {
    lower::ProgramVerifier verifier;
    verified = lower::lower(dag, sched, {&verifier});
  }
  std::printf("# tensor expression\n%s\n# schedule (%zu steps)\n%s\n", te::to_string(dag).c_str(), sched.steps.size(),
              schedule::to_text(sched).c_str());
  if (!note.empty()) std::printf("# default: %s\n", note.c_str());
  if (args.flag("--steps")) {
    auto views = lower::program_after_each_step(dag, sched);
    double total = 0;
    for (size_t k = 0; k < views.size(); ++k) {
      if (views[k].record.failed()) throw Error(views[k].record.error);
      print_view(views[k], k == 0, diff);
      total += views[k].record.wall_ms;
    }
    std::printf("# %zu programs, %.2f ms in all\n", views.size(), total);
  }
  if (args.flag("--passes")) {
    auto views = lower::program_after_each_pass(dag, sched);
    for (size_t k = 0; k < views.size(); ++k) print_view(views[k], k == 0, diff);
  }
  if (auto which = args.value("--dump-after")) {
    TextDumper dump = TextDumper::from_option(std::cout, *which);
    auto views = lower::program_after_each_step(dag, sched, {&dump});
    if (views.back().record.failed()) throw Error(views.back().record.error);
    lower::lower(dag, sched, {&dump});
  }
  if (!args.flag("--steps") && !args.flag("--passes") && !args.value("--dump-after")) {
    const lower::LowerResult r = verified ? *verified : lower::lower(dag, sched);
    std::printf("# program (lowered in %.2f ms)\n%s", r.total_ms, loopir::to_string(r.func).c_str());
  }
  return 0;
}

}  // namespace tessel::cli
