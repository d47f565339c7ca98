// The default CPU schedule (default_schedule.h): which of the families in cpu_schedule_parts.h
// each stage of a kernel takes. Intermediates are inlined unless they are padding worth its own
// buffer or the row-local buffers of a row chain; each output is register blocked (a reduction,
// or an epilogue of one), scheduled row by row (softmax, layer norm) or as an element-wise stage;
// the reductions left at the root run their outermost loop in parallel.
#include <algorithm>

#include "core/schedule/cpu_schedule_parts.h"
#include "core/schedule/parallel_work.h"

namespace tessel::schedule {

using namespace cpu;  // the parts this file assembles

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t lanes) { return default_cpu_schedule(dag, lanes, {}); }

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t lanes, const CpuKnobs& knobs,
                              const CpuCaches& caches) {
  Schedule out;
  ScheduleState st = initial_state(dag);
  Writer w(st, out);
  w.allow_parallel(worth_parallel(dag));
  std::vector<std::string> names;
  for (auto& s : st.stages) names.push_back(s.name);
  // A kernel of row reductions (softmax, layer norm): its reductions, and the intermediates
  // worth a row-local buffer.
  std::string row_output;
  std::vector<std::string> row_stages;
  for (auto& s : st.stages)
    if (s.is_output && !(row_stages = row_reductions(st, s)).empty()) row_output = s.name;
  if (!row_output.empty()) {
    row_stages.clear();
    for (auto& s : st.stages) {
      if (s.is_output) continue;
      bool row_local = !s.op->reduction() && s.op->shape == st.find(row_output)->op->shape &&
                       st.consumers(s.name).size() >= 2 && calls_a_function(s.op->body);
      if (s.op->reduction() || row_local) row_stages.push_back(s.name);
    }
  }
  std::vector<std::string> materialized, per_plane;
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->op->reduction() || st.consumers(n).empty()) continue;
    if (std::find(row_stages.begin(), row_stages.end(), n) != row_stages.end()) continue;
    if (is_padding_for_reduction(st, *s)) {
      materialized.push_back(n);
      continue;
    }
    if (!cheap_masked_loads(lanes) && dag.outputs.size() == 1 && border_varies_across_lanes(*s) &&
        is_padding_for_reduction(st, *s, /*reads_worth_a_copy=*/1)) {
      per_plane.push_back(n);
      continue;
    }
    w.compute_inline(n);
  }
  for (auto& n : materialized) schedule_injective(w, n, lanes);
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output) continue;
    if (s->op->reduction()) {
      schedule_reduction_output(w, n, lanes, knobs, caches);
      continue;
    }
    if (n == row_output) {
      schedule_row_chain(w, n, row_stages, lanes);
      continue;
    }
    // A reduction feeding only this output, with the same shape (conv + bias + relu): register
    // blocked like a reduction output, the epilogue applied as the tile is stored.
    std::string fused_reduction;
    int candidates = 0;
    for (auto& m : names) {
      Stage* r = st.find(m);
      if (r->is_output || !r->op->reduction() || r->attach != Attach::kRoot || r->op->shape != s->op->shape) continue;
      auto readers = st.effective_consumers(m);
      ++candidates;
      if (readers.size() == 1 && readers[0] == s) fused_reduction = m;
    }
    if (candidates == 1 && !fused_reduction.empty()) {
      RegisterTile t = register_tile_for(*s, *st.find(fused_reduction), lanes, knobs);
      if (t.usable) {
        // K blocked, the product is a whole tensor and the epilogue a pass over it (a dense layer's
        // bias); otherwise the epilogue is applied as each register tile is stored.
        if (k_blocked(w, fused_reduction, t, knobs, caches))
          schedule_injective(w, n, lanes, knobs);
        else
          register_blocked(w, n, fused_reduction, t, knobs, caches);
        continue;
      }
    }
    schedule_injective(w, n, lanes, knobs);
    // Otherwise such a reduction is computed per outer iteration.
    for (auto& m : names) {
      Stage* r = st.find(m);
      if (r->is_output || !r->op->reduction() || r->attach != Attach::kRoot || r->op->shape != s->op->shape) continue;
      auto readers = st.effective_consumers(m);
      Stage* o = st.find(n);
      // One row of the output per iteration: the loop just outside the innermost (vector) loop.
      size_t at = o->leaf.size() >= 2 ? o->leaf.size() - 2 : 0;
      if (readers.size() == 1 && readers[0] == o && !o->leaf.empty()) w.compute_at(m, w.leaf(n, at));
    }
  }
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->attach != Attach::kRoot || !s->op->reduction()) continue;
    // A K-blocked product has its parallel loop already (k_blocked_gemm).
    if (std::any_of(s->axes.begin(), s->axes.end(),
                    [](const AxisState& a) { return a.kind == loopir::ForKind::kParallel; }))
      continue;
    parallel_outermost(w, n);
  }
  for (auto& n : per_plane) pad_per_parallel_iteration(w, n, dag.outputs[0]->name, lanes);
  return out;
}

}  // namespace tessel::schedule
