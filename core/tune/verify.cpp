#include "core/tune/verify.h"

#include <algorithm>

namespace tessel::tune {

RaceResult race(Measurer& measurer, const std::string& candidate, const std::string& default_schedule, int rounds) {
  RaceResult r;
  for (int i = 0; i < rounds; ++i) {
    r.schedules.push_back(candidate);
    r.schedules.push_back(default_schedule);
  }
  r.measurements = measurer.measure(r.schedules);
  r.measurements.resize(r.schedules.size(), Measurement{0, 0, "not measured"});
  for (size_t i = 0; i < r.schedules.size(); ++i) {
    const Measurement& m = r.measurements[i];
    if (!m.error.empty() || m.ms_min <= 0) continue;
    double& side = i % 2 == 0 ? r.candidate_ms : r.default_ms;
    side = side == 0 ? m.ms_min : std::min(side, m.ms_min);
  }
  return r;
}

}  // namespace tessel::tune
