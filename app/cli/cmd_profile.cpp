// tessel profile MODEL [--target SPEC] [--repeat N] [--warmup N] [--inputs DIR] [--trace FILE]
//                [--json] [--roofline] [--shape NAME=DIMS]...
// Compiles MODEL, runs it warm-up + N times on the given (or deterministic random) inputs, and
// prints each kernel's min/median time, GFLOP/s, GB/s, arithmetic intensity, and with --roofline
// the ceiling that bounds it (from `tessel calibrate`'s cache, measured now if missing). On a
// simulated accelerator (accel-sim) each offloaded kernel also gets the device's counters and its
// units' lanes: --json has them per kernel ("device", "device_lanes"), --trace draws one track per
// unit under the device's process.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>

#include "app/cli/cli_args.h"
#include "app/cli/cli_inputs.h"
#include "app/cli/cli_records.h"
#include "app/cli/cli_target.h"
#include "core/analysis/profile.h"
#include "core/frontend/onnx_import.h"
#include "core/support/memory_budget.h"

namespace tessel::cli {

namespace {
const ArgSpec kSpec{
    .usage =
        "tessel profile MODEL [--target SPEC] [--repeat N] [--warmup N] [--inputs DIR] [--trace FILE] [--json] "
        "[--roofline] [--shape NAME=DIMS]... [--memory-limit SIZE] [--records LOG] [--max-loop-iterations N]",
    .value_options = {"--target", "--repeat", "--warmup", "--inputs", "--trace", "--memory-limit", "--records",
                      "--max-loop-iterations"},
    .repeatable_options = {"--shape"},
    .flags = {"--json", "--roofline"},
    .min_positional = 1,
    .max_positional = 1,
};

int positive(const Args& args, const char* name, int fallback) {
  auto v = args.value(name);
  if (!v) return fallback;
  try {
    int n = std::stoi(*v);
    if (n >= 0 && n <= 100000) return n;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(name) + " expects a count, got '" + *v + "'");
}
}  // namespace

int run_profile_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help())
    return print_usage(
               kSpec,
               "Profiles every kernel of a compiled model.\n\n"
               "  --memory-limit SIZE   refuse a model whose memory plan (arena, constants, inputs, outputs) needs\n"
               "                        more than SIZE, e.g. 32G or 512M (default: 3/4 of the memory available)\n"
               "  --records LOG         use the fastest schedule `tessel tune` logged in LOG for each kernel it\n"
               "                        tuned on this target (the others keep their default schedules)\n"
               "  --max-loop-iterations N  stop a Loop node that would run more than N iterations, with an error\n"
               "                        (default 1000000: a model's trip count is untrusted input)\n"),
           0;
  const std::string model = args.positional()[0];
  Target target = resolve_code_generating_target(args.value("--target"), "profile");
  OnnxModelFile file(model);
  compile::CompileOptions compile_options;
  compile_options.memory_limit = memory_limit_option(args);
  apply_loop_limit_option(args);
  use_tuning_records(args, target, compile_options);
  ImportOptions options;
  options.input_shapes = parse_shape_options(args.values("--shape"));
  std::optional<InputFiles> given;
  if (auto dir = args.value("--inputs")) given = read_input_files(*dir, model, file, options);
  std::shared_ptr<const compile::CompiledModel> compiled;
  try {
    compiled =
        compile::CompiledModel::compile(std::make_shared<const Graph>(file.import(options)), target, compile_options);
  } catch (const Error& e) {
    rethrow_with_context(e, model);
  }
  report_tuned_kernels(args, *compiled);
  if (given) check_input_types(compiled->graph(), *given, model);
  const std::vector<Tensor> inputs = given ? given->tensors : analysis::random_inputs(compiled->graph());
  std::optional<analysis::MachineCeilings> ceilings;
  if (args.flag("--roofline")) {
    ceilings = analysis::load_cached_ceilings(target);
    if (!ceilings) {
      std::fprintf(stderr,
                   "tessel: no cached ceilings for this machine and target; measuring them (tessel calibrate)...\n");
      ceilings = analysis::calibrate(target, {});
      analysis::save_cached_ceilings(*ceilings);
    }
  }
  analysis::Profile p = analysis::profile_model(*compiled, inputs, positive(args, "--warmup", 2),
                                                std::max(1, positive(args, "--repeat", 10)), ceilings);
  if (auto trace = args.value("--trace")) {
    std::ofstream out(*trace);
    if (!out) throw Error(*trace + ": cannot write the trace");
    out << analysis::chrome_trace(p);
  }
  if (args.flag("--json")) {
    std::printf("%s\n", analysis::profile_json(p).dump(2).c_str());
    return 0;
  }
  std::printf("%s on %s: %d kernels (%d compiled), median run %.3f ms\n\n", model.c_str(), p.target.c_str(),
              static_cast<int>(p.kernels.size()), compiled->compiled_count(), p.total_ms);
  std::printf("%-40s %10s %10s %6s %9s %9s %8s %s\n", "kernel", "ms_min", "ms_median", "%", "GFLOP/s", "GB/s", "FLOP/B",
              ceilings ? "bound" : "");
  double sum = 0;
  for (const auto& k : p.kernels) sum += k.ms_median;
  for (const auto& k : p.kernels) {
    // Kernels without arithmetic (layout transforms, reshapes) are judged by bandwidth alone.
    std::string bound;
    if (ceilings && k.flops == 0)
      bound = "memory (dram), " +
              std::to_string(static_cast<int>(100 * k.gbps / std::max(ceilings->dram_gbps(), 1e-9))) + "% of its GB/s";
    else if (ceilings)
      bound = k.bound + ", " + std::to_string(static_cast<int>(100 * k.gflops / std::max(k.attainable_gflops, 1e-9))) +
              "% of " + std::to_string(static_cast<int>(k.attainable_gflops)) + " GFLOP/s";
    std::printf("%-40s %10.4f %10.4f %6.1f %9.2f %9.2f %8.2f %s%s\n", k.name.substr(0, 40).c_str(), k.ms_min,
                k.ms_median, sum > 0 ? 100 * k.ms_median / sum : 0, k.gflops, k.gbps, k.intensity, bound.c_str(),
                k.compiled ? "" : " [reference]");
  }
  // Which schedule each kernel ran and where, with the reason for any fallback.
  std::printf("\n%-40s %s\n", "kernel", "schedule, where it ran");
  for (const auto& k : p.kernels) std::printf("%-40s %s\n", k.name.substr(0, 40).c_str(), k.schedule.c_str());
  const bool device_clock =
      std::any_of(p.kernels.begin(), p.kernels.end(), [](const analysis::KernelProfile& k) { return k.device_clock; });
  if (device_clock)
    std::printf("\nkernel times: the device's events (start to end), [reference] kernels: the host's\n");
  // A simulated device's own counts (accel-sim): cycles, how busy each unit was, DRAM traffic.
  bool counted = false;
  for (const auto& k : p.kernels) {
    if (k.device_counters.empty()) continue;
    if (!counted) std::printf("\n%-40s %s\n", "on the device", "counters of the last run");
    counted = true;
    std::string line;
    for (const auto& [name, value] : k.device_counters) {
      char text[64];
      std::snprintf(text, sizeof text, name.ends_with("_utilization") ? " %s %.2f" : " %s %.0f", name.c_str(), value);
      line += text;
    }
    // How much the units overlapped (the pipeline's lanes, --trace has them one by one).
    if (k.device_lanes) line += " overlap " + std::to_string(k.device_lanes->summary.overlap_cycles);
    std::printf("%-40s%s\n", k.name.substr(0, 40).c_str(), line.c_str());
  }
  if (!p.last_run.copies.empty()) {
    double ms = 0;
    int64_t bytes = 0;
    for (const compile::RunTimes::Copy& c : p.last_run.copies) ms += c.end_ms - c.begin_ms, bytes += c.bytes;
    std::printf("host<->device copies (last run): %zu, %s, %.3f ms\n", p.last_run.copies.size(),
                byte_size_text(bytes).c_str(), ms);
  }
  if (ceilings) {
    std::printf("\nceilings (%s, %d threads):", ceilings->machine.c_str(), ceilings->threads);
    for (const auto& c : ceilings->compute) std::printf(" %s %.1f GFLOP/s;", c.name.c_str(), c.value);
    for (const auto& c : ceilings->bandwidth) std::printf(" %s %.1f GB/s;", c.name.c_str(), c.value);
    std::printf("\n");
  }
  return 0;
}

}  // namespace tessel::cli
