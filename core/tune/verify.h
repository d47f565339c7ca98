#pragma once
// The last step of a model's tune: each kernel's best candidate against its default schedule,
// measured in alternation in one measuring-process run, so that both see the same moments of a
// noisy machine. The search compares a candidate's one measurement with the default's few; the
// best of many candidates is then often one measured in a quiet moment (ResNet-18's relu_20 at load
// 3: the search said 2.51 ms against 2.74, the model ran it in 2.57–2.66 against the default's
// 2.23–2.25):
//
//   batch:  candidate, default, candidate, default, candidate, default   (one process, in this order)
//   each side's time: the minimum of its measurements; the records say verified (records.h), and
//   `--records` then takes the faster side.
#include <string>
#include <vector>

#include "core/tune/search.h"

namespace tessel::tune {

struct RaceResult {
  double candidate_ms = 0, default_ms = 0;  // 0: every measurement of that side failed
  std::vector<Measurement> measurements;    // in the order measured: candidate, default, ...
  std::vector<std::string> schedules;       // the schedule of each measurement
};

RaceResult race(Measurer& measurer, const std::string& candidate, const std::string& default_schedule, int rounds = 3);

}  // namespace tessel::tune
