// Row reductions and the element-wise output over the same rows that reads them (softmax, layer
// norm, log-softmax): one row at a time, every pass over the row inside the row loop while the row
// stays in L1, the reductions vectorized through partial results.
#include "core/loopir/functor.h"
#include "core/schedule/cpu_schedule_parts.h"

namespace tessel::schedule::cpu {

// Row reductions feeding an element-wise output over the same rows (softmax, layer norm,
// log-softmax): every reduction reduces the output's last axis (kept as an extent-1 axis, as
// ONNX's keepdims does, or dropped).
//
//   max[r, 0] = max(x[r, k], k)   sum[r, 0] = sum(exp(x[r, k] - max[r, 0]), k)   out[r, j] = ...
//
// The reductions of the kernel when it has that shape (and at least one), else empty.
std::vector<std::string> row_reductions(const ScheduleState& st, const Stage& out) {
  const Shape& shape = out.op->shape;
  if (out.op->reduction() || shape.size() < 2 || shape.back() < 2) return {};
  std::vector<std::string> reductions;
  for (const Stage& s : st.stages) {
    if (&s == &out) continue;
    if (s.is_output) return {};
    const loopir::Reduce* red = s.op->reduction();
    if (!red) continue;
    Shape rows(shape.begin(), shape.end() - 1), kept = shape;  // the row axes, or with a kept extent-1 axis
    kept.back() = 1;
    if ((s.op->shape != rows && s.op->shape != kept) || red->axes.size() != 1 || red->axes[0].extent != shape.back())
      return {};
    reductions.push_back(s.name);
  }
  return reductions;
}

// Whether a formula calls a function (exp, tanh, ...): worth computing once and storing.
bool calls_a_function(const loopir::Expr& e) {
  struct Finder : loopir::IRVisitor {
    bool found = false;
    bool enter(const loopir::Call&) override { return !(found = true); }
  } finder;
  finder.visit(e);
  return finder.found;
}

// One row at a time, everything about the row inside the row loop, vectorized:
//
//   for rows... (the outermost parallel; 4 rows per iteration, unrolled, so that the rows'
//               dependent chains of vector operations overlap)
//     max_rf[16] = -inf;  for k.outer: max_rf[0..16] = max(max_rf[0..16], x[row, k.outer*16 + 0..16])
//     max_rf_1[0..4] = max over q of max_rf[q*4 + 0..4];  max = max(max_rf_1[0..4])
//                                                       (rfactor twice: partial results, a tree)
//     e[0..128] = exp(x[row, ..] - max)                 (a row-local buffer: exp once per element)
//     sum_rf[16] = 0;     for k.outer: sum_rf[0..16] += e[k.outer*16 + 0..16]
//     sum = sum(sum_rf[0..16])
//     for j.outer: out[row, j.outer*16 + 0..16] = e[..] / sum
//
// The row stays in L1 between the passes. `stages` are the row reductions and the injective
// intermediates kept in row-local buffers (read twice and calling a function), in stage order.
void schedule_row_chain(Writer& w, const std::string& out, const std::vector<std::string>& stages, int64_t lanes) {
  const size_t rank = w.stage(out).op->axes.size();
  const int64_t row_length = w.stage(out).op->shape.back();
  auto vectorize_last = [&](const std::string& name) {
    Loop last = w.root(name, rank - 1);
    w.vectorize(row_length > lanes ? w.split(last, lanes).second : last);
  };
  vectorize_last(out);
  // Rows in groups, unrolled: each row's reductions are chains of dependent vector operations
  // (latency-bound); interleaving independent rows fills the pipeline.
  Loop row = w.root(out, rank - 2);
  const int64_t rows = w.stage(out).op->shape[rank - 2];
  const int64_t group = rows % 4 == 0 ? 4 : rows % 2 == 0 ? 2 : 1;
  if (group > 1) {
    auto [outer, inner] = w.split(row, group);
    w.unroll(inner);
    row = inner;
  }
  w.parallel(parallel_loop(w.stage(out)));
  // Last to first: compute_at wants a stage's other readers already inside the row loop.
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const std::string& name = *it;
    if (!w.stage(name).op->reduction()) {
      w.compute_at(name, row);
      vectorize_last(name);
      continue;
    }
    // A row shorter than two vectors gains nothing from partial results.
    if (row_length < 2 * lanes) {
      w.compute_at(name, row);
      continue;
    }
    // partial[k.inner, rows...] = reduce(.., k.outer): k.outer outside, k.inner the vector.
    const size_t red_rank = w.stage(name).op->axes.size();
    auto vector_partials = [&](const std::string& partial) {
      std::vector<Loop> order;
      for (size_t d = 1; d <= red_rank; ++d) order.push_back(w.root(partial, d));
      order.push_back(w.reduce_root(partial, 0));
      order.push_back(w.root(partial, 0));
      w.reorder(order);
      w.vectorize(w.root(partial, 0));
    };
    std::string partial = w.rfactor(w.split(w.reduce_root(name, 0), lanes).second);
    vector_partials(partial);
    // The vector of partial results folded to 4, then to 1: two short dependent chains instead
    // of one as long as the vector.
    std::string quarter;
    if (lanes % 4 == 0 && lanes >= 8) {
      quarter = w.rfactor(w.split(w.reduce_root(name, 0), 4).second);
      vector_partials(quarter);
    }
    // Each inside its reader's innermost data-parallel loop (a partial stage's data-parallel axes
    // come after the factored one).
    w.compute_at(name, row);
    if (!quarter.empty()) w.compute_at(quarter, w.root(name, red_rank - 1));
    w.compute_at(partial, quarter.empty() ? w.root(name, red_rank - 1) : w.root(quarter, red_rank));
  }
}

}  // namespace tessel::schedule::cpu
