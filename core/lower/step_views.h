#pragma once
// "The program after step k" for k = 0..n (the studio's most important pane): replay steps
// 1..k, lower, and keep the printed program, its line diff against step k-1 and the time that
// lowering took. Likewise the program after each lowering pass for one schedule.
#include <string>
#include <vector>

#include "core/lower/lower_record.h"
#include "core/schedule/schedule.h"

namespace tessel::lower {

struct ViewRecord {
  LowerRecord record;  // name: "step 3 split(C.i, 8)" (or the pass name); text; changed; time
  std::string diff;    // line_diff against the previous view; empty for the first
};

// Entry 0 is the unscheduled program. A step that fails stops the list with a record whose
// `error` says why (the studio shows it in red); the steps before it stay.
std::vector<ViewRecord> program_after_each_step(const te::ComputeDag& dag, const schedule::Schedule& s);
// One entry per lowering pass of the whole schedule. Throws Error when the schedule is invalid.
std::vector<ViewRecord> program_after_each_pass(const te::ComputeDag& dag, const schedule::Schedule& s);

}  // namespace tessel::lower
