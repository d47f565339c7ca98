#pragma once
// The tuner's Measurer: each batch runs in `tessel-measure`, the sandboxed measuring process
// (core/measure/protocol.h), so a schedule that crashes or hangs kills that process, never the
// tuner. `tessel tune` and the studio's Tuning pane (views/tune) both measure through it.
//
//   batch of schedules ─▶ requests, one line each, in a temporary file ─▶ tessel-measure < file
//        replies by id ◀── stdout                                            │ crashed or timed out
//        the first unanswered request is that schedule's fault: recorded as its error,
//        the rest of the batch runs again in a new process
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/measure/protocol.h"
#include "core/tune/search.h"

namespace tessel::tune {

class ProcessMeasurer : public Measurer {
 public:
  // `program`: the tessel-measure executable. Every request measures `kernel` of `model`, in the
  // cache condition `cache` (measure/cache_condition.h).
  ProcessMeasurer(std::filesystem::path program, measure::ModelRef model, std::string kernel, double min_time_ms,
                  measure::CacheCondition cache = measure::CacheCondition::kWarm);
  std::vector<Measurement> measure(const std::vector<std::string>& schedules) override;

  // $TESSEL_MEASURE, else tessel-measure next to this executable (installed) or in the build tree.
  static std::filesystem::path default_program();

  // Sees every kernel the process measured, with its schedule's index in the batch, before
  // measure() returns (the studio plots FLOP/s and intensity from it; the Measurement keeps times).
  std::function<void(size_t index, const measure::KernelMeasured& reply)> on_measured;

 private:
  std::filesystem::path program_;
  measure::ModelRef model_;
  std::string kernel_;
  double min_time_ms_;
  measure::CacheCondition cache_;
};

}  // namespace tessel::tune
