// Tuning logs (core/tune/records.h) as `run --records` and the studio read them: shared between
// machines and people, so every byte is untrusted. An input is the whole log file. Properties:
// every accepted record prints to a line that parses back to the same record, and appending a
// record to any log (a torn last line included) adds exactly that one record: nothing is glued.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/tune/records.h"
#include "tests/fuzz/fuzz_common.h"

using namespace tessel;

namespace {

std::string g_log;  // in a private folder made once

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char folder[] = "/tmp/tessel-fuzz-records-XXXXXX";
  if (!::mkdtemp(folder)) std::abort();
  g_log = std::string(folder) + "/log.jsonl";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  { std::ofstream(g_log, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), size); }
  fuzz::expect_refusal_only([&] {
    const tune::RecordLog read = tune::read_record_log(g_log);
    for (const tune::TuningRecord& r : read.records) {
      const std::string line = tune::record_line(r);
      fuzz::must_accept("a printed record is refused", line, [&] {
        fuzz::fuzz_check(tune::parse_record_line(line, "printed") == r, "parse(record_line(r)) differs", line);
      });
    }
    const tune::BestRecords best(read.records);
    fuzz::fuzz_check(best.size() <= read.records.size(), "more best records than records");

    tune::TuningRecord appended{"00000000fuzzfuzz", "k", "llvm", "split(C.i, 4)\n", 0.5, 0.5, "", {}, false};
    tune::append_record(g_log, appended);
    const tune::RecordLog after = tune::read_record_log(g_log);
    fuzz::fuzz_check(after.records.size() == read.records.size() + 1, "appending a record did not add exactly one");
    fuzz::fuzz_check(after.records.back() == appended, "the appended record reads back changed");
  });
  return 0;
}
