#include "app/cli/cli_records.h"

#include <cstdio>
#include <memory>

#include "core/tune/records.h"

namespace tessel::cli {

void use_tuning_records(const Args& args, const Target& target, compile::CompileOptions& options) {
  const std::optional<std::string> log = args.value("--records");
  if (!log) return;
  const tune::RecordLog read = tune::read_record_log(*log);
  // A damaged record costs only itself: each is named (file:line and why), then counted.
  constexpr size_t kNamed = 5;
  for (size_t i = 0; i < read.skipped.size() && i < kNamed; ++i)
    std::fprintf(stderr, "tessel: warning: skipped a tuning record: %s\n", read.skipped[i].c_str());
  if (read.skipped.size() > kNamed)
    std::fprintf(stderr, "tessel: warning: ... and %zu more damaged records skipped\n", read.skipped.size() - kNamed);
  if (!read.skipped.empty())
    std::fprintf(stderr, "tessel: %zu of %zu records of %s skipped as damaged\n", read.skipped.size(),
                 read.skipped.size() + read.records.size(), log->c_str());
  auto best = std::make_shared<const tune::BestRecords>(read.records);
  options.tuned_schedule = [best, spec = target.str()](const te::ComputeDag& dag) {
    return best->schedule_for(dag, spec);
  };
}

void report_tuned_kernels(const Args& args, const compile::CompiledModel& model) {
  const std::optional<std::string> log = args.value("--records");
  if (!log) return;
  int tuned = 0, compiled = 0;
  for (const compile::CompiledKernel& k : model.kernels()) {
    compiled += k.compiled;
    tuned += k.schedule_source == compile::ScheduleSource::kTuned;
    // A record that did not lower (past the schedule limits, or from another version) costs only
    // itself: the kernel takes its default schedule, and the user is told which and why.
    if (!k.record_passed_over.empty())
      std::fprintf(stderr,
                   "tessel: warning: kernel '%s': the tuning record from %s was passed over for the "
                   "default schedule: %s\n",
                   k.name.c_str(), log->c_str(), k.record_passed_over.c_str());
  }
  std::fprintf(stderr, "tessel: %d of %d compiled kernels use tuned schedules from %s\n", tuned, compiled,
               log->c_str());
}

}  // namespace tessel::cli
