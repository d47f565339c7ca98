#pragma once
// "The program after step k" for k = 0..n (the studio's most important pane): replay steps
// 1..k, lower, and keep the program, its line diff against step k-1 and the time that lowering
// took. Likewise the program after each lowering pass for one schedule. Each entry's record is the
// same StepRecord that graph passes produce, made by the same instrumentation.
#include <string>
#include <vector>

#include "core/pass/instrument.h"
#include "core/schedule/schedule.h"

namespace tessel::lower {

struct ViewRecord {
  StepRecord record;  // name: "step 3 split(C.i, 8)" (or the pass name); text(); changed; time
  std::string diff;   // line_diff against the previous view; empty for the first
};

// Entry 0 ("initial") is the unscheduled program. A step that fails stops the list with a record
// whose `error` says why (the studio shows it in red); the steps before it stay. `instruments` see
// every schedule step (kind kScheduleStep; a step whose program prints as before changed nothing).
std::vector<ViewRecord> program_after_each_step(const te::ComputeDag& dag, const schedule::Schedule& s,
                                                const std::vector<Instrument*>& instruments = {});
// One entry per lowering pass of the whole schedule. Throws Error when the schedule is invalid.
std::vector<ViewRecord> program_after_each_pass(const te::ComputeDag& dag, const schedule::Schedule& s);

}  // namespace tessel::lower
