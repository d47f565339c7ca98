// tessel tune MODEL --records LOG [--kernel NAME]... [--target SPEC] [--trials N] [--time-budget S]
//                   [--cache cold|warm|auto] [--batch N] [--seed N] [--min-time-ms MS] [--shape NAME=DIMS]...
//                   [--worker-timeout S]
// Searches schedules for the model's kernels (core/tune/search.h), measuring each candidate in
// tessel-measure, and appends every measurement to LOG; `run/build/profile --records LOG` then
// use the best. A whole model's trials go where its time is (core/tune/task_scheduler.h); kernels
// named with --kernel get --trials each. Candidates are timed in the cache condition the model runs
// them in (core/measure/cache_condition.h, decided by cache_condition_for below). Ctrl-C stops after
// the batch being measured; everything measured is in LOG.
// Under `mpirun -np N`, rank 0 searches and ranks 1..N-1 measure (app/cli/mpi_tune.h).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <span>

#include "app/cli/cli_args.h"
#include "app/cli/cli_target.h"
#include "app/cli/mpi_tune.h"
#include "core/compile/kernel_compiler.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pipeline.h"
#include "core/target/cpu_caches.h"
#include "core/tune/process_measurer.h"
#include "core/tune/records.h"
#include "core/tune/search.h"
#include "core/tune/task_scheduler.h"
#include "core/tune/verify.h"

namespace tessel::cli {

namespace {

const ArgSpec kSpec{
    .usage =
        "tessel tune MODEL --records LOG [--kernel NAME]... [--target SPEC] [--trials N] [--time-budget S] "
        "[--cache cold|warm|auto] [--batch N] [--seed N] [--min-time-ms MS] [--shape NAME=DIMS]... "
        "[--worker-timeout S]",
    .value_options = {"--records", "--target", "--trials", "--time-budget", "--cache", "--batch", "--seed",
                      "--min-time-ms", "--worker-timeout"},
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
    "A whole model (no --kernel) is tuned as one budget of N trials per kernel on average: kernels\n"
    "with the same computation are one task, every task first measures its default schedule, then\n"
    "each batch goes to the task with the largest expected saving of the model's time (its time x its\n"
    "count in the model, and how much its last batch gained); each batch also measures the task's\n"
    "default schedule again, so that its time, the one to beat, is the best of as many moments as the\n"
    "candidates had. At the end each kernel's best candidate races its default: both measured in\n"
    "alternation, three times each, in one run of the measuring process; those records are marked\n"
    "verified and --records prefers them (the search's best may have had a quiet moment). The\n"
    "progress line shows the task, its share of the model and the model's estimated time; the table\n"
    "shows the trials each task got and the race's times.\n\n"
    "  --records LOG         the tuning log (JSON lines), appended to; --records LOG on run, build and\n"
    "                        profile applies the fastest correct schedule of each kernel\n"
    "  --kernel NAME         tune only this kernel, for --trials trials (repeatable; default: the\n"
    "                        whole model, its trials spread by time)\n"
    "  --trials N            measurements per kernel, the default schedule's included (default 64);\n"
    "                        for a whole model N x its kernels in all\n"
    "  --time-budget S       seconds per kernel (default: none); for a whole model S x its kernels\n"
    "  --cache MODE          the caches each candidate is timed with (default auto):\n"
    "                          cold  the kernel's weights are evicted from every cache before each\n"
    "                                repeat (untimed), as in a model whose data outgrow the caches\n"
    "                          warm  repeat after repeat, the weights stay cached (a kernel alone)\n"
    "                          auto  cold on a CPU when one run of the model touches more bytes\n"
    "                                (weights and activations) than the L2 caches of the threads it\n"
    "                                runs on (the shared last level is not counted on: other cores\n"
    "                                use it too); else warm. Each record says which.\n"
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

std::string mb_text(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

// The bytes one run of the model touches in its compiled kernels: every value a kernel reads or
// writes (weights and activations), each once.
double model_footprint_bytes(const Graph& graph, const FusionResult& fusion) {
  std::set<ValueId> values;
  for (const FusionGroup& group : fusion.groups) {
    values.insert(group.inputs.begin(), group.inputs.end());
    values.insert(group.outputs.begin(), group.outputs.end());
  }
  double bytes = 0;
  for (ValueId v : values) {
    const auto& type = graph.value(v).type;
    if (std::any_of(type.shape.begin(), type.shape.end(), [](int64_t d) { return d < 0; })) continue;  // unbound
    bytes += static_cast<double>(shape_numel(type.shape)) * static_cast<double>(dtype_size(type.dtype));
  }
  return bytes;
}

// --cache: cold or warm, and why (a line for the output). `auto` asks whether a kernel's weights can
// still be cached when the model comes back to it: one run of the model passes all its bytes
// through the caches between two runs of the kernel, so each kernel's share of the caches is their
// size × its bytes / the model's bytes, which is smaller than its bytes as soon as the model's bytes
// exceed the caches. The caches counted are the L2 of the threads it runs on: the last level is
// shared with the other cores (on a virtual machine, with other tenants) and cannot be counted on.
std::pair<measure::CacheCondition, std::string> cache_condition_for(const std::optional<std::string>& option,
                                                                    const Target& target,
                                                                    const TargetTraits& traits,
                                                                    double footprint_bytes) {
  const std::string mode = option.value_or("auto");
  const bool cpu = traits.is_cpu();
  if (mode == "warm") return {measure::CacheCondition::kWarm, "warm (--cache warm)"};
  if (mode == "cold") {
    if (!cpu)
      throw UsageError("--cache cold evicts the host's caches; target '" + target.str() +
                       "' runs its kernels on a device");
    return {measure::CacheCondition::kCold, "cold (--cache cold)"};
  }
  if (mode != "auto") throw UsageError("--cache expects cold, warm or auto, got '" + mode + "'");
  if (!cpu) return {measure::CacheCondition::kWarm, "warm (a device target: the host's caches do not matter)"};
  const double caches = static_cast<double>(traits.l2_bytes) * traits.threads;
  const std::string sizes = "one run of the model touches " + mb_text(footprint_bytes) + ", the L2 of its " +
                            std::to_string(traits.threads) + " thread(s) holds " + mb_text(caches);
  if (footprint_bytes > caches)
    return {measure::CacheCondition::kCold, "cold (" + sizes + "; --cache warm to time with the weights cached)"};
  return {measure::CacheCondition::kWarm, "warm (" + sizes + "; --cache cold to evict the weights)"};
}

// A kernel to tune: its space and the fusion groups (kernels) of the model that compute it.
struct KernelTask {
  std::string key;
  std::vector<std::string> kernels;
  std::unique_ptr<tune::SearchSpace> space;
};

void print_header() {
  std::printf("%-44s %5s %8s %12s %12s %8s\n", "kernel", "count", "trials", "default", "tuned", "speedup");
}

void print_row(const KernelTask& task, size_t trials, double default_ms, double best_ms) {
  std::printf("%-44s %5zu %8zu %12s %12s %7.2fx\n", task.kernels.front().c_str(), task.kernels.size(), trials,
              ms_text(default_ms).c_str(), ms_text(best_ms).c_str(),
              best_ms > 0 && default_ms > 0 ? default_ms / best_ms : 0.0);
}

double best_ms(const tune::SearchResult& r) {
  return r.best >= 0 ? r.trials[static_cast<size_t>(r.best)].result.ms_min : 0;
}

// Everything a tune needs to measure one kernel: the local measuring process and, under mpirun,
// the measurer that spreads over the workers.
class KernelMeasurers {
 public:
  KernelMeasurers(const std::filesystem::path& program, const measure::ModelRef& ref, double min_time_ms,
                  measure::CacheCondition cache, MpiTuneSession* mpi)
      : program_(program), ref_(ref), min_time_ms_(min_time_ms), cache_(cache), mpi_(mpi) {}

  tune::Measurer& for_kernel(const std::string& kernel) {
    local_.push_back(std::make_unique<tune::ProcessMeasurer>(program_, ref_, kernel, min_time_ms_, cache_));
    if (!mpi_) return *local_.back();
    spread_.push_back(mpi_->measurer(ref_, kernel, min_time_ms_, cache_, *local_.back()));
    return *spread_.back();
  }

 private:
  std::filesystem::path program_;
  measure::ModelRef ref_;
  double min_time_ms_;
  measure::CacheCondition cache_;
  MpiTuneSession* mpi_;
  std::vector<std::unique_ptr<tune::ProcessMeasurer>> local_;
  std::vector<std::unique_ptr<tune::Measurer>> spread_;
};

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
  const TargetTraits traits = target_traits(target);
  if (const auto mode = args.value("--cache"); mode && *mode != "cold" && *mode != "warm" && *mode != "auto")
    throw UsageError("--cache expects cold, warm or auto, got '" + *mode + "'");
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
  const std::vector<std::string> wanted = args.values("--kernel");
  for (const std::string& k : wanted) (void)compile::find_kernel(*pipeline.fusion, k);  // unknown: Error listing them
  const std::pair<measure::CacheCondition, std::string> condition =
      cache_condition_for(args.value("--cache"), target, traits, model_footprint_bytes(graph, *pipeline.fusion));
  const measure::CacheCondition cache = condition.first;

  // Before anything is measured: a log whose last line a killed tune cut off is ended with a newline,
  // so the first new record is not glued to the fragment (which stays a skipped line of its own).
  if (tune::repair_torn_tail(log))
    std::fprintf(stderr, "tessel: %s: its last line was cut off (a tune killed while writing it); "
                         "it is kept on a line of its own and skipped when the log is read\n", log.c_str());

  std::signal(SIGINT, on_interrupt);
  options.stop = [] { return g_interrupted.load(); };
  const measure::ModelRef ref{model, target.str(), nlohmann::json::object(), import.input_shapes};
  KernelMeasurers measurers(tune::ProcessMeasurer::default_program(), ref, min_time_ms, cache, mpi.get());
  const bool interactive = ::isatty(STDERR_FILENO) != 0;
  std::printf("cache: %s\n", condition.second.c_str());
  auto interrupted = [&] {
    std::fprintf(stderr, "tessel: interrupted; every measurement so far is in %s\n", log.c_str());
    return mpi ? mpi->finish(130) : 130;
  };

  // The kernels to tune; a whole model's kernels with the same computation are one task.
  std::vector<KernelTask> tasks;
  std::map<std::string, size_t> task_of_key;
  for (const FusionGroup& group : pipeline.fusion->groups) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), group.kernel_name) == wanted.end()) continue;
    std::string why;
    std::optional<te::ComputeDag> dag = compile::kernel_dag(graph, group, &why);
    if (!dag) continue;  // runs with the reference kernels: nothing to schedule
    const std::string key = tune::kernel_key(*dag);
    if (auto it = task_of_key.find(key); it != task_of_key.end() && wanted.empty()) {
      tasks[it->second].kernels.push_back(group.kernel_name);
      continue;
    }
    auto space = std::make_unique<tune::SearchSpace>(*dag, traits);
    if (!space->unsupported().empty()) {
      std::printf("%-44s %5s %8s   not tuned: %s\n", group.kernel_name.c_str(), "", "-", space->unsupported().c_str());
      continue;
    }
    task_of_key[key] = tasks.size();
    tasks.push_back({key, {group.kernel_name}, std::move(space)});
  }
  auto record = [&](const KernelTask& task, const std::string& schedule, const tune::Measurement& m, bool verified) {
    tune::append_record(
        log, {task.key, task.kernels.front(), target.str(), schedule, m.ms_min, m.ms_median, m.error, cache, verified});
  };
  auto record_trial = [&](const KernelTask& task, const tune::Trial& t) { record(task, t.schedule, t.result, false); };

  if (!wanted.empty()) {  // each named kernel alone, for its own --trials
    print_header();
    for (const KernelTask& task : tasks) {
      auto on_progress = [&](const tune::SearchProgress& p) {
        if (!interactive) return;  // a log file gets the table below, not a line redrawn with \r
        // Time left: the trial budget at the pace so far, or the time budget if that ends sooner.
        double left = p.trials > 0 ? p.elapsed_s / p.trials * (p.budget - p.trials) : 0;
        if (options.time_budget_s > 0) left = std::min(left, std::max(0.0, options.time_budget_s - p.elapsed_s));
        std::fprintf(stderr, "\r%-40s %4d/%-4d best %s (default %s) %6.0f s, about %.0f s left",
                     task.kernels.front().c_str(), p.trials, p.budget, ms_text(p.best_ms).c_str(),
                     ms_text(p.default_ms).c_str(), p.elapsed_s, left);
        std::fflush(stderr);
      };
      const tune::SearchResult r = tune::search(
          *task.space, measurers.for_kernel(task.kernels.front()), options,
          [&](const tune::Trial& t) { record_trial(task, t); }, on_progress);
      if (interactive) std::fprintf(stderr, "\r\033[K");
      print_row(task, r.trials.size(), r.default_ms, best_ms(r));
      std::fflush(stdout);
      if (r.stopped) return interrupted();
    }
    return mpi ? mpi->finish(0) : 0;
  }

  // The whole model: one budget, spread by the task scheduler.
  size_t kernels = 0;
  std::vector<tune::TuningTask> scheduled;
  for (const KernelTask& task : tasks) {
    kernels += task.kernels.size();
    scheduled.push_back({task.kernels.front(), static_cast<int>(task.kernels.size()), task.space.get(),
                         &measurers.for_kernel(task.kernels.front())});
  }
  tune::SchedulerOptions plan;
  plan.trials = options.trials * static_cast<int>(std::max<size_t>(kernels, 1));
  plan.time_budget_s = options.time_budget_s * static_cast<double>(kernels);
  plan.search = options;
  plan.search.remeasure_default = true;  // see SearchOptions: a model's estimate must not gain by luck
  plan.stop = options.stop;
  std::printf("%zu kernels, %zu distinct: %d trials in all\n", kernels, tasks.size(), plan.trials);
  std::fflush(stdout);
  auto on_progress = [&](const tune::SchedulerProgress& p) {
    if (!interactive || p.task < 0) return;
    const tune::TaskStatus& t = p.tasks[static_cast<size_t>(p.task)];
    const KernelTask& task = tasks[static_cast<size_t>(p.task)];
    const double share = p.best_model_ms > 0 ? 100 * task.kernels.size() * t.best_ms / p.best_model_ms : 0;
    double left = p.trials > 0 ? p.elapsed_s / p.trials * (p.budget - p.trials) : 0;
    if (plan.time_budget_s > 0) left = std::min(left, std::max(0.0, plan.time_budget_s - p.elapsed_s));
    std::fprintf(stderr,
                 "\r\033[K%d/%d trials  %s x%zu (%.0f%% of the model) %d trials, best %s (default %s)  "
                 "model %s (default %s)  %.0f s, about %.0f s left",
                 p.trials, p.budget, task.kernels.front().c_str(), task.kernels.size(), share, t.trials,
                 ms_text(t.best_ms).c_str(), ms_text(t.default_ms).c_str(), ms_text(p.best_model_ms).c_str(),
                 ms_text(p.default_model_ms).c_str(), p.elapsed_s, left);
    std::fflush(stderr);
  };
  const tune::SchedulerResult result = tune::tune_tasks(
      scheduled, plan, [&](int task, const tune::Trial& t) { record_trial(tasks[static_cast<size_t>(task)], t); },
      on_progress);
  // The race (verify.h): each best candidate against its default, in alternation; the table and
  // `--records` then go by the race's times.
  std::vector<std::pair<double, double>> verdicts;  // (default, tuned) per task
  size_t trials_run = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const tune::SearchResult& r = result.tasks[i];
    verdicts.emplace_back(r.default_ms, best_ms(r));
    const std::optional<schedule::Schedule> plain = tasks[i].space->schedule_of(tasks[i].space->default_candidate());
    if (result.stopped || g_interrupted || r.best < 0 || r.default_ms <= 0 || !plain) continue;
    const std::string default_text = schedule::to_text(*plain);
    const std::string& best_text = r.trials[static_cast<size_t>(r.best)].schedule;
    if (best_text == default_text) continue;
    if (interactive)
      std::fprintf(stderr, "\r\033[Kverifying %s: its best against its default, in alternation",
                   tasks[i].kernels.front().c_str());
    const tune::RaceResult race = tune::race(*scheduled[i].measurer, best_text, default_text);
    for (size_t k = 0; k < race.measurements.size(); ++k)
      record(tasks[i], race.schedules[k], race.measurements[k], true);
    trials_run += race.measurements.size();
    if (race.default_ms > 0)
      verdicts.back() = {race.default_ms,
                         std::min(race.default_ms, race.candidate_ms > 0 ? race.candidate_ms : race.default_ms)};
  }
  if (interactive) std::fprintf(stderr, "\r\033[K");
  print_header();
  double default_model = 0, tuned_model = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto [default_ms, tuned_ms] = verdicts[i];
    print_row(tasks[i], result.tasks[i].trials.size(), default_ms, tuned_ms);
    if (default_ms > 0 && tuned_ms > 0) {
      default_model += default_ms * static_cast<double>(tasks[i].kernels.size());
      tuned_model += tuned_ms * static_cast<double>(tasks[i].kernels.size());
    }
  }
  if (trials_run > 0)
    std::printf(
        "(default and tuned of the kernels whose best was not the default: %zu more measurements, the best\n"
        " against the default in alternation; `--records` takes the faster)\n",
        trials_run);
  std::printf("%-44s %5zu %8s %12s %12s %7.2fx   (sum of time x count, %s)\n", "model", kernels, "",
              ms_text(default_model).c_str(), ms_text(tuned_model).c_str(),
              tuned_model > 0 ? default_model / tuned_model : 0.0,
              std::string(measure::cache_condition_name(cache)).c_str());
  std::fflush(stdout);
  if (result.stopped) return interrupted();
  return mpi ? mpi->finish(0) : 0;
}

}  // namespace tessel::cli
