#include "app/cli/cli_records.h"

#include <cstdio>
#include <memory>

#include "core/tune/records.h"

namespace tessel::cli {

void use_tuning_records(const Args& args, const Target& target, compile::CompileOptions& options) {
  const std::optional<std::string> log = args.value("--records");
  if (!log) return;
  auto best = std::make_shared<const tune::BestRecords>(tune::BestRecords::from_log(*log));
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
  }
  std::fprintf(stderr, "tessel: %d of %d compiled kernels use tuned schedules from %s\n", tuned, compiled,
               log->c_str());
}

}  // namespace tessel::cli
