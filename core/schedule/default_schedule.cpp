#include "core/schedule/default_schedule.h"

#include <algorithm>

namespace tessel::schedule {

namespace {

std::string ax(const Stage& s, const std::string& axis) { return s.name + "." + axis; }

// Appends a step and applies it, so later decisions see the resulting axes.
void add(ScheduleState& st, Schedule& out, ScheduleStep step) {
  apply_step(st, step);
  out.steps.push_back(std::move(step));
}

void schedule_reduction_output(ScheduleState& st, Schedule& out, const std::string& name, int64_t lanes) {
  Stage* s = st.find(name);
  auto& op = s->op;
  size_t rank = op->axes.size();
  std::vector<std::string> outer, inner;
  if (rank >= 2) {
    const auto& y = op->axes[rank - 2];
    const auto& x = op->axes[rank - 1];
    int64_t fy = std::min<int64_t>(lanes, y.extent), fx = std::min<int64_t>(lanes, x.extent);
    if (fy > 1 && fx > 1) {
      add(st, out, step("tile", {arg(ax(*s, y.var->name)), arg(ax(*s, x.var->name)), arg(fy), arg(fx)}));
      outer = {y.var->name + ".outer", x.var->name + ".outer"};
      inner = {y.var->name + ".inner", x.var->name + ".inner"};
    }
  }
  s = st.find(name);
  const auto* red = op->reduction();
  std::string k = red->axes[0].var->name;
  std::vector<std::string> order;
  if (red->axes[0].extent >= 8) {
    add(st, out, step("split", {arg(ax(*s, k)), arg(int64_t{4})}));
    s = st.find(name);
  }
  if (!inner.empty()) {
    // leaf: [batch axes..., y.outer, x.outer, y.inner, x.inner, reduce...]  ->
    //       [batch axes..., y.outer, x.outer, reduce..., y.inner, x.inner]
    for (int a : s->leaf)
      if (s->axes[a].is_reduce) order.push_back(s->axes[a].name);
    std::vector<StepArg> args;
    for (auto& o : outer) args.push_back(arg(ax(*s, o)));
    for (auto& r : order) args.push_back(arg(ax(*s, r)));
    for (auto& i : inner) args.push_back(arg(ax(*s, i)));
    add(st, out, step("reorder", args));
    s = st.find(name);
    add(st, out, step("vectorize", {arg(ax(*s, inner[1]))}));
  }
  s = st.find(name);
  add(st, out, step("parallel", {arg(ax(*s, s->axes[s->leaf[0]].name))}));
}

void schedule_injective(ScheduleState& st, Schedule& out, const std::string& name, int64_t lanes) {
  Stage* s = st.find(name);
  const auto& last = s->op->axes.back();
  if (last.extent > lanes && s->op->axes.size() > 1) {
    add(st, out, step("split", {arg(ax(*s, last.var->name)), arg(lanes)}));
    s = st.find(name);
    add(st, out, step("vectorize", {arg(ax(*s, last.var->name + ".inner"))}));
  } else if (s->op->axes.size() > 1 && last.extent > 1) {
    add(st, out, step("vectorize", {arg(ax(*s, last.var->name))}));
  }
  s = st.find(name);
  add(st, out, step("parallel", {arg(ax(*s, s->axes[s->leaf[0]].name))}));
}

}  // namespace

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t lanes) {
  Schedule out;
  ScheduleState st = initial_state(dag);
  std::vector<std::string> names;
  for (auto& s : st.stages) names.push_back(s.name);
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output && !s->op->reduction() && !st.consumers(n).empty()) add(st, out, step("compute_inline", {arg(n)}));
  }
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output) continue;
    if (s->op->reduction()) {
      schedule_reduction_output(st, out, n, lanes);
      continue;
    }
    schedule_injective(st, out, n, lanes);
    // A reduction feeding only this output, with the same shape: compute it per outer iteration.
    for (auto& m : names) {
      Stage* r = st.find(m);
      if (r->is_output || !r->op->reduction() || r->attach != Attach::kRoot || r->op->shape != s->op->shape) continue;
      auto readers = st.effective_consumers(m);
      Stage* o = st.find(n);
      if (readers.size() == 1 && readers[0] == o) add(st, out, step("compute_at", {arg(m), arg(ax(*o, o->axes[o->leaf[0]].name))}));
    }
  }
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->attach != Attach::kRoot || !s->op->reduction()) continue;
    add(st, out, step("parallel", {arg(ax(*s, s->axes[s->leaf[0]].name))}));
  }
  return out;
}

}  // namespace tessel::schedule
