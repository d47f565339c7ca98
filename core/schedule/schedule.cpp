#include "core/schedule/schedule.h"

#include <sstream>

#include "core/support/error.h"

namespace tessel::schedule {

std::string to_text(const Schedule& s) {
  std::string out;
  for (auto& st : s.steps) out += to_string(st) + "\n";
  return out;
}

Schedule parse_schedule(const std::string& text, std::vector<int>* step_lines) {
  Schedule s;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    try {
      s.steps.push_back(parse_step(line));
      if (step_lines) step_lines->push_back(number);
    } catch (const Error& e) {
      rethrow_with_context(e, "schedule line " + std::to_string(number));
    }
  }
  return s;
}

nlohmann::json to_json(const Schedule& s) {
  nlohmann::json steps = nlohmann::json::array();
  for (auto& st : s.steps) steps.push_back(to_json(st));
  return nlohmann::json{{"steps", steps}};
}

Schedule schedule_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("steps") || !j["steps"].is_array())
    throw Error("schedule JSON: expected {\"steps\": [...]}");
  Schedule s;
  int k = 0;
  for (auto& st : j["steps"]) {
    ++k;
    try {
      s.steps.push_back(step_from_json(st));
    } catch (const Error& e) {
      rethrow_with_context(e, "schedule JSON step " + std::to_string(k));
    }
  }
  return s;
}

ScheduleState replay(const te::ComputeDag& dag, const Schedule& s, size_t count) {
  ScheduleState st = initial_state(dag);
  for (size_t k = 0; k < count && k < s.steps.size(); ++k) {
    try {
      apply_step(st, s.steps[k]);
    } catch (const Error& e) {
      rethrow_with_context(e, "step " + std::to_string(k + 1) + " " + to_string(s.steps[k]));
    }
  }
  return st;
}

}  // namespace tessel::schedule
