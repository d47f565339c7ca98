#include "core/lower/step_views.h"

#include "core/lower/line_diff.h"
#include "core/lower/pipeline.h"

namespace tessel::lower {

std::vector<ViewRecord> program_after_each_step(const te::ComputeDag& dag, const schedule::Schedule& s,
                                                const std::vector<Instrument*>& instruments) {
  const Instrumentation steps(instruments);
  std::vector<ViewRecord> views;
  schedule::ScheduleState state = schedule::initial_state(dag);
  IrSnapshotPtr program;
  for (size_t k = 0; k <= s.steps.size(); ++k) {
    const std::string name =
        k == 0 ? "initial" : "step " + std::to_string(k) + " " + schedule::to_string(s.steps[k - 1]);
    ViewRecord v;
    try {
      StepRecordPtr r = steps.run(StepKind::kScheduleStep, name, program, [&]() -> IrSnapshotPtr {
        if (k > 0) schedule::apply_step(state, s.steps[k - 1]);
        IrSnapshotPtr next = program_snapshot(lower(state).func);
        // Steps such as storage_align may leave the program as it was: keep the earlier snapshot.
        return program && next->text() == program->text() ? program : next;
      });
      v.record = *r;
    } catch (const StepFailure& failure) {
      v.record = failure.record();
      if (k == 0) v.record.error = failure.reason();  // the unscheduled program: no step to name
      views.push_back(std::move(v));
      break;
    }
    if (k > 0) v.diff = line_diff(program->text(), v.record.text());
    program = v.record.after;
    views.push_back(std::move(v));
  }
  return views;
}

std::vector<ViewRecord> program_after_each_pass(const te::ComputeDag& dag, const schedule::Schedule& s) {
  LowerResult r = lower(dag, s);
  std::vector<ViewRecord> views;
  for (const StepRecordPtr& p : r.passes) {
    ViewRecord v;
    v.record = *p;
    if (!views.empty()) v.diff = line_diff(views.back().record.text(), p->text());
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace tessel::lower
