#include "core/tune/process_measurer.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/support/error.h"
#include "core/support/subprocess.h"

namespace tessel::tune {

namespace fs = std::filesystem;

ProcessMeasurer::ProcessMeasurer(fs::path program, measure::ModelRef model, std::string kernel, double min_time_ms,
                                 measure::CacheCondition cache)
    : program_(std::move(program)),
      model_(std::move(model)),
      kernel_(std::move(kernel)),
      min_time_ms_(min_time_ms),
      cache_(cache) {}

fs::path ProcessMeasurer::default_program() {
  if (const char* env = std::getenv("TESSEL_MEASURE"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& candidate :
         {self.parent_path() / "tessel-measure", self.parent_path() / "../measure/tessel-measure"})
      if (::access(candidate.c_str(), X_OK) == 0) return fs::weakly_canonical(candidate, ec);
  return "tessel-measure";
}

std::vector<Measurement> ProcessMeasurer::measure(const std::vector<std::string>& schedules) {
  std::vector<Measurement> out(schedules.size());
  size_t next = 0;  // the first schedule not answered yet
  while (next < schedules.size()) {
    TempDir dir("tessel-tune");
    const fs::path requests = dir.path() / "requests.jsonl";
    {
      std::ofstream file(requests);
      for (size_t i = next; i < schedules.size(); ++i) {
        measure::MeasureKernelRequest m;
        m.model = model_;
        m.kernel = kernel_;
        m.schedule = schedules[i];
        m.min_time_ms = min_time_ms_;
        m.artifacts = false;
        m.cache = cache_;
        file << measure::encode_line(measure::Request{static_cast<int64_t>(i) + 1, "", m});
      }
      if (!file) throw Error(requests.string() + ": cannot write the measuring requests");
    }
    // Compiling and timing one candidate takes well under a minute; a hung kernel costs this much.
    const auto timeout = std::chrono::seconds(60 + 30 * static_cast<int>(schedules.size() - next));
    const ProgramRun run = run_program({program_.string()}, {.timeout = timeout, .stdin_file = requests});
    if (!run.started) throw Error("tune: cannot start the measuring process: " + run.error);
    std::map<size_t, Measurement> answered;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      measure::Reply reply;
      try {
        reply = measure::decode_reply_line(line);
      } catch (const Error&) {
        continue;  // a line cut off by the crash
      }
      if (reply.id < 1 || static_cast<size_t>(reply.id) > schedules.size()) continue;
      Measurement m;
      if (const measure::Failed* f = reply.failed()) {
        m.error = f->error;
      } else if (const auto* k = std::get_if<measure::KernelMeasured>(&reply.body)) {
        m.ms_min = k->ms_min, m.ms_median = k->ms_median;
        if (on_measured) on_measured(static_cast<size_t>(reply.id) - 1, *k);
        if (!k->correct)
          m.error = "wrong result: max |error| " + std::to_string(k->max_abs_error) + " above the tolerance " +
                    std::to_string(k->tolerance);
      }
      answered[static_cast<size_t>(reply.id) - 1] = m;
    }
    while (next < schedules.size() && answered.count(next)) out[next] = answered[next], ++next;
    if (next < schedules.size()) {
      // The process ended before answering this one: it crashed or hung on this schedule.
      out[next].error = "the measuring process died on this schedule (" + run.failure() + ")";
      ++next;
    }
  }
  return out;
}

}  // namespace tessel::tune
