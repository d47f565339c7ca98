// tessel tune MODEL --records LOG [--kernel NAME]... [--target SPEC] [--trials N] [--time-budget S]
//                   [--batch N] [--seed N] [--min-time-ms MS] [--shape NAME=DIMS]... [--worker-timeout S]
// Searches schedules for the model's kernels (core/tune/search.h), measuring each candidate in
// tessel-measure, and appends every measurement to LOG; `run/build/profile --records LOG` then
// use the best. Ctrl-C stops after the batch being measured; everything measured is in LOG.
// Under `mpirun -np N`, rank 0 searches and ranks 1..N-1 measure (app/cli/mpi_tune.h).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <span>

#include "app/cli/cli_args.h"
#include "app/cli/cli_target.h"
#include "app/cli/mpi_tune.h"
#include "core/compile/kernel_compiler.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pipeline.h"
#include "core/tune/process_measurer.h"
#include "core/tune/records.h"
#include "core/tune/search.h"

namespace tessel::cli {

namespace {

const ArgSpec kSpec{
    .usage =
        "tessel tune MODEL --records LOG [--kernel NAME]... [--target SPEC] [--trials N] [--time-budget S] "
        "[--batch N] [--seed N] [--min-time-ms MS] [--shape NAME=DIMS]... [--worker-timeout S]",
    .value_options = {"--records", "--target", "--trials", "--time-budget", "--batch", "--seed", "--min-time-ms",
                      "--worker-timeout"},
    .repeatable_options = {"--kernel", "--shape"},
    .flags = {},
    .min_positional = 1,
    .max_positional = 1,
};

constexpr const char* kDetails =
    "Searches each kernel's schedules: the default schedule's decisions for the target's kind over every\n"
    "value that fits the kernel, ranked by a cost model (gradient-boosted trees on loop-program\n"
    "features) trained on the measurements so far. On a CPU: the register tile, the reduction's split,\n"
    "unroll and loop order, cache panels, parallel loops, vector width; on a GPU (opencl, cuda): the\n"
    "thread-block tile and threads; on an accelerator (accel-sim): the virtual threads and the\n"
    "reduction tiles per load, for the kernels that run on its core. Each candidate is compiled,\n"
    "checked against the reference kernels and timed in tessel-measure (a device's own time: its\n"
    "events, or a simulator's cycles at its clock).\n\n"
    "  --records LOG         the tuning log (JSON lines), appended to; --records LOG on run, build and\n"
    "                        profile applies the fastest correct schedule of each kernel\n"
    "  --kernel NAME         tune only this kernel (repeatable; default: every compiled kernel)\n"
    "  --trials N            measurements per kernel, the default schedule's included (default 64)\n"
    "  --time-budget S       stop a kernel's search after S seconds (default: none)\n"
    "  --batch N             candidates measured per measuring-process run (default 8; under mpirun,\n"
    "                        at least twice the number of workers)\n"
    "  --min-time-ms MS      time each candidate for at least MS milliseconds (default 40)\n"
    "  --seed N              the search's random seed (default 1)\n"
    "  --shape NAME=DIMS     binds symbolic input dims, e.g. --shape input=1x3x224x224 (the measuring\n"
    "                        process imports the model with the same binding)\n"
    "  --worker-timeout S    under mpirun: a worker silent this long during a trial is taken for dead\n"
    "                        (default 10; workers send a heartbeat every second)\n"
    "Ctrl-C stops after the batch being measured; what was measured stays in LOG.\n\n"
    "Under `mpirun -np N` (N > 1) rank 0 searches and writes LOG, ranks 1..N-1 compile and measure the\n"
    "candidates, each in its own measuring process. The model path must be readable on every rank's\n"
    "machine. With `mpirun --enable-recovery`, a worker that dies is named, the trial it was measuring\n"
    "goes to another worker and the tune goes on; without it, mpirun ends the whole job.\n";

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

double number(const Args& args, const char* name, double fallback, double lo, double hi) {
  const auto v = args.value(name);
  if (!v) return fallback;
  try {
    size_t used = 0;
    const double x = std::stod(*v, &used);
    if (used == v->size() && x >= lo && x <= hi) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(name) + " expects a number from " + std::to_string(static_cast<int64_t>(lo)) + " to " +
                   std::to_string(static_cast<int64_t>(hi)) + ", got '" + *v + "'");
}

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, ms > 0 ? "%.4g ms" : "-", ms);
  return b;
}

}  // namespace

int run_tune_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, kDetails), 0;
  const std::string model = std::filesystem::absolute(args.positional()[0]).string();
  const std::string log = args.required("--records");
  const Target target = resolve_code_generating_target(args.value("--target"), "tune");
  tune::SearchOptions options;
  options.trials = static_cast<int>(number(args, "--trials", 64, 1, 100000));
  options.time_budget_s = number(args, "--time-budget", 0, 0, 1e7);
  options.batch = static_cast<int>(number(args, "--batch", 8, 1, 256));
  options.seed = static_cast<uint64_t>(number(args, "--seed", 1, 0, 1e15));
  const double min_time_ms = number(args, "--min-time-ms", 40, 1, 60000);
  const double worker_timeout_s = number(args, "--worker-timeout", 10, 2, 1e6);
  // Workers need nothing of the model: they measure what rank 0 sends.
  const std::unique_ptr<MpiTuneSession> mpi = MpiTuneSession::start_if_launched(worker_timeout_s);
  if (mpi && mpi->rank() != 0) return mpi->serve(tune::ProcessMeasurer::default_program());
  if (mpi && !args.value("--batch")) options.batch = std::max(options.batch, 2 * mpi->workers());
  options.explore = std::max(1, options.batch / 4);
  ImportOptions import;
  import.input_shapes = parse_shape_options(args.values("--shape"));

  OnnxModelFile file(model);
  GraphPipelineResult pipeline = run_graph_pipeline(std::make_shared<const Graph>(file.import(import)), target);
  if (!pipeline.ok()) throw Error(model + ": " + pipeline.error);
  const Graph& graph = *pipeline.graph;
  std::vector<std::string> wanted = args.values("--kernel");
  for (const std::string& k : wanted) (void)compile::find_kernel(*pipeline.fusion, k);  // unknown: Error listing them

  std::signal(SIGINT, on_interrupt);
  options.stop = [] { return g_interrupted.load(); };
  const tune::SpaceTarget space_target = tune::space_target_of(target);
  const std::filesystem::path program = tune::ProcessMeasurer::default_program();
  const bool interactive = ::isatty(STDERR_FILENO) != 0;
  std::printf("%-44s %8s %12s %12s %8s\n", "kernel", "trials", "default", "tuned", "speedup");
  for (const FusionGroup& group : pipeline.fusion->groups) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), group.kernel_name) == wanted.end()) continue;
    std::string why;
    std::optional<te::ComputeDag> dag = compile::kernel_dag(graph, group, &why);
    if (!dag) continue;  // runs with the reference kernels: nothing to schedule
    tune::SearchSpace space(*dag, space_target);
    if (!space.unsupported().empty()) {
      std::printf("%-44s %8s   not tuned: %s\n", group.kernel_name.c_str(), "-", space.unsupported().c_str());
      continue;
    }
    const measure::ModelRef ref{model, target.str(), nlohmann::json::object(), import.input_shapes};
    tune::ProcessMeasurer local(program, ref, group.kernel_name, min_time_ms);
    const std::unique_ptr<tune::Measurer> spread =
        mpi ? mpi->measurer(ref, group.kernel_name, min_time_ms, local) : nullptr;
    tune::Measurer& measurer = spread ? *spread : local;
    const std::string key = tune::kernel_key(*dag);
    auto on_trial = [&](const tune::Trial& t) {
      tune::append_record(
          log, {key, group.kernel_name, target.str(), t.schedule, t.result.ms_min, t.result.ms_median, t.result.error});
    };
    auto on_progress = [&](const tune::SearchProgress& p) {
      if (!interactive) return;  // a log file gets the table below, not a line redrawn with \r
      // Time left: the trial budget at the pace so far, or the time budget if that ends sooner.
      double left = p.trials > 0 ? p.elapsed_s / p.trials * (p.budget - p.trials) : 0;
      if (options.time_budget_s > 0) left = std::min(left, std::max(0.0, options.time_budget_s - p.elapsed_s));
      std::fprintf(stderr, "\r%-40s %4d/%-4d best %s (default %s) %6.0f s, about %.0f s left",
                   group.kernel_name.c_str(), p.trials, p.budget, ms_text(p.best_ms).c_str(),
                   ms_text(p.default_ms).c_str(), p.elapsed_s, left);
      std::fflush(stderr);
    };
    const tune::SearchResult r = tune::search(space, measurer, options, on_trial, on_progress);
    if (interactive) std::fprintf(stderr, "\r\033[K");
    const double best = r.best >= 0 ? r.trials[static_cast<size_t>(r.best)].result.ms_min : 0;
    std::printf("%-44s %8zu %12s %12s %7.2fx\n", group.kernel_name.c_str(), r.trials.size(),
                ms_text(r.default_ms).c_str(), ms_text(best).c_str(),
                best > 0 && r.default_ms > 0 ? r.default_ms / best : 0.0);
    std::fflush(stdout);
    if (r.stopped) {
      std::fprintf(stderr, "tessel: interrupted; every measurement so far is in %s\n", log.c_str());
      return mpi ? mpi->finish(130) : 130;
    }
  }
  return mpi ? mpi->finish(0) : 0;
}

}  // namespace tessel::cli
