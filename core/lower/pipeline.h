#pragma once
// Lowering: a scheduled tensor computation -> a loop program, through the passes listed in
// pipeline.cpp (read it top to bottom to see what the compiler does to a kernel).
#include <vector>

#include "core/lower/lower_record.h"
#include "core/schedule/schedule.h"

namespace tessel::lower {

struct LowerOptions {
  bool record_text = false;  // print the program after every pass (the studio's pass view)
};

struct LowerResult {
  loopir::Func func;
  std::vector<LowerRecordPtr> passes;  // one per pass, in order (text only with record_text)
  double total_ms = 0.0;
};

// Throws Error when the schedule cannot be lowered.
LowerResult lower(const schedule::ScheduleState& state, const LowerOptions& options = {});
// Replays the whole schedule on the DAG, then lowers.
LowerResult lower(const te::ComputeDag& dag, const schedule::Schedule& s, const LowerOptions& options = {});

// The names of the lowering passes, in order.
std::vector<std::string> lowering_pass_names();

}  // namespace tessel::lower
