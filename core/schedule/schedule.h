#pragma once
// A schedule: an ordered list of steps. Its text form is one step per line (blank lines and
// lines starting with '#' are ignored when parsing); print(parse(text)) == text for canonical text.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/schedule/schedule_state.h"
#include "core/schedule/step.h"

namespace tessel::schedule {

struct Schedule {
  std::vector<ScheduleStep> steps;
  bool operator==(const Schedule&) const = default;
};

std::string to_text(const Schedule& s);
// Errors name the line number; `step_lines`, when given, receives the line of each step.
Schedule parse_schedule(const std::string& text, std::vector<int>* step_lines = nullptr);
nlohmann::json to_json(const Schedule& s);
Schedule schedule_from_json(const nlohmann::json& j);

// Applies steps [0, count) to the DAG's initial state. An invalid step throws Error
// "step K TEXT: reason" (K counts from 1).
ScheduleState replay(const te::ComputeDag& dag, const Schedule& s, size_t count);
inline ScheduleState replay(const te::ComputeDag& dag, const Schedule& s) { return replay(dag, s, s.steps.size()); }

}  // namespace tessel::schedule
