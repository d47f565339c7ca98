#pragma once
// `tessel tune` measures in `tessel-measure`, the sandboxed measuring process the studio uses
// (core/measure/protocol.h): a schedule that crashes or hangs kills that process, never the tuner.
//
//   batch of schedules ─▶ requests, one line each, in a temporary file ─▶ tessel-measure < file
//        replies by id ◀── stdout                                            │ crashed or timed out
//        the first unanswered request is that schedule's fault: recorded as its error,
//        the rest of the batch runs again in a new process
#include <filesystem>
#include <string>
#include <vector>

#include "core/measure/protocol.h"
#include "core/tune/search.h"

namespace tessel::cli {

class TuneMeasurer : public tune::Measurer {
 public:
  // `program`: the tessel-measure executable. Every request measures `kernel` of `model`.
  TuneMeasurer(std::filesystem::path program, measure::ModelRef model, std::string kernel, double min_time_ms);
  std::vector<tune::Measurement> measure(const std::vector<std::string>& schedules) override;

  // $TESSEL_MEASURE, else tessel-measure next to this executable (installed) or in the build tree.
  static std::filesystem::path default_program();

 private:
  std::filesystem::path program_;
  measure::ModelRef model_;
  std::string kernel_;
  double min_time_ms_;
};

}  // namespace tessel::cli
