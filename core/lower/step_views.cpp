#include "core/lower/step_views.h"

#include <chrono>

#include "core/loopir/printer.h"
#include "core/lower/line_diff.h"
#include "core/lower/pipeline.h"
#include "core/support/error.h"

namespace tessel::lower {

std::vector<ViewRecord> program_after_each_step(const te::ComputeDag& dag, const schedule::Schedule& s) {
  std::vector<ViewRecord> views;
  schedule::ScheduleState state = schedule::initial_state(dag);
  std::string previous;
  for (size_t k = 0; k <= s.steps.size(); ++k) {
    ViewRecord v;
    v.record.name = k == 0 ? "initial" : "step " + std::to_string(k) + " " + schedule::to_string(s.steps[k - 1]);
    auto t0 = std::chrono::steady_clock::now();
    try {
      if (k > 0) schedule::apply_step(state, s.steps[k - 1]);
      LowerResult r = lower(state);
      v.record.program = std::make_shared<const loopir::Func>(r.func);
      v.record.text = loopir::to_string(r.func);
    } catch (const Error& e) {
      v.record.error = k == 0 ? std::string(e.what()) : v.record.name + ": " + e.what();
      v.record.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      views.push_back(std::move(v));
      break;
    }
    v.record.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    v.record.changed = k == 0 || v.record.text != previous;
    if (k > 0) v.diff = line_diff(previous, v.record.text);
    previous = v.record.text;
    views.push_back(std::move(v));
  }
  return views;
}

std::vector<ViewRecord> program_after_each_pass(const te::ComputeDag& dag, const schedule::Schedule& s) {
  LowerOptions opt;
  opt.record_text = true;
  LowerResult r = lower(dag, s, opt);
  std::vector<ViewRecord> views;
  std::string previous;
  for (auto& p : r.passes) {
    ViewRecord v;
    v.record = *p;
    if (!views.empty()) v.diff = line_diff(previous, p->text);
    previous = p->text;
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace tessel::lower
