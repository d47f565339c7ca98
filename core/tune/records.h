#pragma once
// Tuning records: every candidate schedule `tessel tune` measured, one JSON object per line of a
// log, appended as it is measured (so Ctrl-C or a crash keeps everything measured so far):
//
//   {"kernel_key": "9f2c…", "kernel": "fused_mat_mul_0", "target": "llvm", "schedule": "split(…)\n…",
//    "ms_min": 0.412, "ms_median": 0.430, "error": "", "cache": "cold"}
//
// A kernel is recognised by its key, a hash of its tensor expression (te::to_string), not by its
// name: the same computation in another model, or the same model on another machine, finds its
// records, and a log only ever applies to a kernel whose stages and axes the schedule names.
// `run/build/profile --records LOG` use the fastest correct record per (key, target). "cache" says
// which condition the times were taken in (measure/cache_condition.h; a log written before it had
// the field is warm); times of the two conditions do not compare, so where a kernel has both, only
// the cold ones count: they were measured as the model runs the kernel. "verified": true marks the
// final race of a tune (the best candidate against the default, measured in alternation,
// verify.h); where a kernel has verified records, only they count: the search's own best time may
// be a lucky moment of a noisy machine.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/measure/cache_condition.h"
#include "core/schedule/schedule.h"
#include "core/te/tensor.h"

namespace tessel::tune {

struct TuningRecord {
  std::string kernel_key;  // kernel_key(dag)
  std::string kernel;      // the kernel's name where it was tuned (for people; not matched)
  std::string target;      // Target::str() of the target it was measured on
  std::string schedule;    // schedule::to_text
  double ms_min = 0, ms_median = 0;
  std::string error;  // why the candidate failed (did not lower, wrong result, crashed); "" when it ran
  measure::CacheCondition cache = measure::CacheCondition::kWarm;  // what the times were measured in
  bool verified = false;  // measured in the final race against the default (verify.h)
  bool ok() const { return error.empty(); }
  bool operator==(const TuningRecord&) const = default;
};

// 16 hex digits of a 64-bit FNV-1a hash of te::to_string(dag).
std::string kernel_key(const te::ComputeDag& dag);

// One line without its newline.
std::string record_line(const TuningRecord& r);
// Throws Error "WHERE: field 'ms_min': expected a number, got \"x\"" (WHERE names file and line).
TuningRecord parse_record_line(const std::string& line, const std::string& where);

// Appends one whole line with a single write to the end of the file (O_APPEND), so a line is never
// interleaved with another writer's. A log whose last line was cut off (a tune killed while writing)
// gets a newline first: the fragment stays a damaged line of its own, and the new record is whole.
// Throws Error naming the file when it cannot.
void append_record(const std::filesystem::path& log, const TuningRecord& r);
// Ends a torn last line with a newline (see append_record). Returns true when it did; false when the
// log is missing, empty or whole. Throws Error naming the file when it is not a regular file.
bool repair_torn_tail(const std::filesystem::path& log);

// A log as `run/build/profile --records` read it: logs are shared between machines and people, so a
// damaged line costs only itself. Every line is a record or skipped with "LOG:LINE: why" (bad JSON,
// a missing field, a schedule that does not parse, a cut-off last line).
struct RecordLog {
  std::vector<TuningRecord> records;
  std::vector<std::string> skipped;
};
// Throws Error naming the path when it is not a regular file ("LOG: is a FIFO, not a tuning log
// file"; nothing is read that could block or never end, core/support/file_io.h) or cannot be read.
RecordLog read_record_log(const std::filesystem::path& log);
// Every record of the log; a damaged line is an Error naming the file and line: the strict reading,
// for logs this process wrote (tests, the studio's own tune). Blank lines are skipped.
std::vector<TuningRecord> read_records(const std::filesystem::path& log);

// The fastest correct record per (kernel key, target), of the cold records where there are any, and
// of those, of the verified ones where there are any.
class BestRecords {
 public:
  BestRecords() = default;
  explicit BestRecords(const std::vector<TuningRecord>& records);

  const TuningRecord* best(const std::string& kernel_key, const std::string& target) const;
  // The best record's schedule for the DAG on `target`, parsed; nullopt when there is none.
  std::optional<schedule::Schedule> schedule_for(const te::ComputeDag& dag, const std::string& target) const;
  size_t size() const { return best_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, TuningRecord> best_;
};

}  // namespace tessel::tune
