#include "core/schedule/gpu_schedule.h"

#include <algorithm>
#include <optional>

#include "core/loopir/functor.h"
#include "core/schedule/schedule_writer.h"
#include "core/support/error.h"

namespace tessel::schedule {

namespace {

using Loop = LoopHandle;

// Below this many elements per result, a block's threads reducing together would idle more than
// they work: such reductions keep one thread per result.
constexpr int64_t kMinElementsPerBlockReduction = 32;

int64_t reduction_extent(const Stage& s) {
  int64_t n = 1;
  for (const loopir::IterVar& k : s.op->reduction()->axes) n *= k.extent;
  return n;
}

std::vector<int64_t> without_ones(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (int64_t e : shape)
    if (e != 1) out.push_back(e);
  return out;
}

// Every load of the reduction's formula depends on every data-parallel axis of more than one
// element: no input element is read by two results (a matmul's A[i, k] is, by every j), so
// nothing is worth sharing between the threads of a block but the reduction itself.
bool reads_each_element_once(const Stage& s) {
  struct Loads : loopir::IRVisitor {
    std::vector<const loopir::Var*> spatial;
    bool reused = false;
    bool enter(const loopir::Load& load) override {
      for (const loopir::Var* v : spatial) {
        bool used = false;
        for (const loopir::Expr& i : load.indices)
          used = used || loopir::uses_var(i, [&](const loopir::Var* u) { return u == v; });
        reused = reused || !used;
      }
      return true;
    }
  } loads;
  for (const loopir::IterVar& a : s.op->axes)
    if (a.extent > 1) loads.spatial.push_back(a.var.get());
  loads.visit(s.op->reduction()->source);
  return !loads.reused;
}

// The stage's reduction loops fused into one, split by `threads`, the inner part (consecutive
// elements for consecutive threads) bound to threadIdx.x and moved outermost: the block's threads
// reduce together (core/lower/lower_thread_allreduce.h).
void reduce_across_threads(ScheduleWriter& w, const std::string& stage, int64_t threads) {
  const size_t axes = w.stage(stage).op->reduction()->axes.size();
  Loop k = w.reduce_root(stage, 0);
  for (size_t q = 1; q < axes; ++q) k = w.fuse(k, w.reduce_root(stage, q));
  auto [outer, inner] = w.split(k, threads);
  w.reorder({inner, outer});
  w.bind(inner, "threadIdx.x");
}

void gpu_reduction_output(ScheduleWriter& w, const std::string& name, int64_t tile) {
  const te::Tensor op = w.stage(name).op;
  std::vector<std::string> inputs;
  for (auto& in : op->inputs) {
    const Stage* producer = w.state().find(in->name);
    if (!producer || !producer->op->reduction()) inputs.push_back(in->name);
  }
  size_t rank = op->axes.size();
  if (rank < 2) return;
  int64_t fy = std::min<int64_t>(tile, op->axes[rank - 2].extent),
          fx = std::min<int64_t>(tile, op->axes[rank - 1].extent);
  std::vector<std::string> cached;
  for (auto& in : inputs) cached.push_back(w.cache_read(in, "shared", name));
  auto [y, x] = w.tile(w.root(name, rank - 2), w.root(name, rank - 1), fy, fx);
  Loop k = w.reduce_root(name, 0);
  if (op->reduction()->axes[0].extent >= 8) k = w.split(k, 4).first;
  // [lead..., y.outer, x.outer, y.inner, x.inner, reductions...] already; fuse the leading axes.
  std::optional<Loop> lead;
  for (size_t d = 0; d + 2 < rank; ++d) lead = lead ? w.fuse(*lead, w.root(name, d)) : w.root(name, d);
  if (lead) w.bind(*lead, "blockIdx.z");
  w.bind(y.first, "blockIdx.y");
  w.bind(x.first, "blockIdx.x");
  w.bind(y.second, "threadIdx.y");
  w.bind(x.second, "threadIdx.x");
  for (auto& c : cached) w.compute_at(c, k);
}

// Row reductions feeding an element-wise output (softmax, layernorm): one block per row, each
// reduction's T threads reducing together. Every thread keeps the result in its own register
// (scope local: the tree's lane 0, read after the last barrier), so no thread waits for another
// to store it.
//
//   for row bind(blockIdx.x) {
//     for t bind(threadIdx.x): max_red[t] = max(X[row, t], X[row, t + T], ...)     shared [T]
//     the tree over max_red (log2 T halving steps, a barrier after each)
//     max = max_red[0]                                                            local, each thread
//     for t bind(threadIdx.x): sum_red[t] = Σ exp(X[row, t + jT] - max)            shared [T]
//     the tree over sum_red
//     sum = sum_red[0]                                                            local
//     for j.outer: for t bind(threadIdx.x): out[row, j.outer·T + t] = exp(X[...] - max) / sum
//   }
//
// Applies when the output is element-wise of rank >= 2 and every other stage left (after inlining)
// is a reduction over one axis whose result is indexed by the output's leading axes (shape
// out[:-1], or out[:-1] + [1]); returns false and changes nothing otherwise or when a step is
// refused.
bool gpu_cooperative_rows(ScheduleState& st, Schedule& out, const std::string& output, int64_t threads) {
  const Stage& o = *st.find(output);
  const std::vector<int64_t>& shape = o.op->shape;
  if (o.op->reduction() || shape.size() < 2) return false;
  const std::vector<int64_t> rows(shape.begin(), shape.end() - 1);
  std::vector<int64_t> rows_kept = rows;
  rows_kept.push_back(1);
  std::vector<std::string> reductions;
  int64_t t = std::min(threads, shape.back());
  for (const Stage& s : st.stages) {
    if (s.name == output || s.attach == Attach::kInline) continue;
    const loopir::Reduce* red = s.op->reduction();
    if (!red || red->axes.size() != 1 || (s.op->shape != rows && s.op->shape != rows_kept)) return false;
    reductions.push_back(s.name);
    t = std::min(t, red->axes[0].extent);
  }
  if (reductions.empty() || t < 2) return false;
  ScheduleState trial = st;
  Schedule trial_out = out;
  ScheduleWriter w(trial, trial_out);
  try {
    for (const std::string& r : reductions) {
      reduce_across_threads(w, r, t);
      w.set_scope(r, "local");
    }
    Loop row = w.root(output, 0);
    for (size_t d = 1; d + 1 < shape.size(); ++d) row = w.fuse(row, w.root(output, d));
    w.bind(row, "blockIdx.x");
    w.bind(w.split(w.root(output, shape.size() - 1), t).second, "threadIdx.x");
    // Consumers first: a stage can only move to the row loop once all its readers are there.
    for (size_t i = reductions.size(); i-- > 0;) w.compute_at(reductions[i], row);
  } catch (const tessel::Error&) {
    return false;
  }
  st = std::move(trial);
  out = std::move(trial_out);
  return true;
}

// An output each element of which is a reduction's result (ReduceSum, ReduceMax), or an
// element-wise function of reductions of its shape (ReduceMean = sum / n, GlobalAveragePool,
// ArgMax's three reductions): one block per output element, whose T threads reduce together;
// the other reductions computed in the block (scope local: every thread has the result), thread 0
// storing the element (core/lower/store_from_thread_zero.h).
//
//   for e bind(blockIdx.x) {                           (all output axes fused)
//     for t bind(threadIdx.x): sum_red[t] = Σ_j X[e, j·T + t]     the tree; sum = sum_red[0]
//     for tx bind(threadIdx.x): if (tx == 0) Y[e] = sum / n
//   }
//
// Applies when each reduction reads every input element once (no operand shared between results:
// not a matmul or conv) and reduces at least kMinElementsPerBlockReduction elements per result;
// returns false and changes nothing otherwise or when a step is refused.
bool gpu_reduction_blocks(ScheduleState& st, Schedule& out, const std::string& output, int64_t threads) {
  const Stage& o = *st.find(output);
  std::vector<std::string> reductions;  // the stages other than the output, producers first
  int64_t t = threads;
  for (const Stage& s : st.stages) {
    if (s.attach == Attach::kInline) continue;
    if (!s.op->reduction()) {
      if (s.name != output) return false;
      continue;
    }
    if (without_ones(s.op->shape) != without_ones(o.op->shape) || !reads_each_element_once(s) ||
        reduction_extent(s) < kMinElementsPerBlockReduction)
      return false;
    t = std::min(t, reduction_extent(s));
    if (s.name != output) reductions.push_back(s.name);
  }
  // Other reductions are computed per output element: at the loop an output without axes lacks.
  if ((!o.op->reduction() && reductions.empty()) || (!reductions.empty() && o.op->axes.empty())) return false;
  ScheduleState trial = st;
  Schedule trial_out = out;
  ScheduleWriter w(trial, trial_out);
  try {
    std::optional<Loop> element;
    for (size_t d = 0; d < o.op->axes.size(); ++d)
      element = element ? w.fuse(*element, w.root(output, d)) : w.root(output, d);
    if (element) w.bind(*element, "blockIdx.x");
    if (o.op->reduction()) reduce_across_threads(w, output, t);
    for (size_t i = reductions.size(); i-- > 0;) {
      reduce_across_threads(w, reductions[i], t);
      w.set_scope(reductions[i], "local");
      w.compute_at(reductions[i], *element);
    }
  } catch (const tessel::Error&) {
    return false;
  }
  st = std::move(trial);
  out = std::move(trial_out);
  return true;
}

void gpu_injective(ScheduleWriter& w, const std::string& name, int64_t threads) {
  const size_t rank = w.stage(name).op->axes.size();
  if (rank == 0) return;  // a scalar: no loop to bind
  Loop fused = w.root(name, 0);
  for (size_t d = 1; d < rank; ++d) fused = w.fuse(fused, w.root(name, d));
  auto [outer, inner] = w.split(fused, threads);
  w.bind(outer, "blockIdx.x");
  w.bind(inner, "threadIdx.x");
}

}  // namespace

Schedule default_gpu_schedule(const te::ComputeDag& dag, int64_t tile, int64_t threads) {
  Schedule out;
  ScheduleState st = initial_state(dag);
  ScheduleWriter w(st, out);
  std::vector<std::string> names;
  for (auto& s : st.stages) names.push_back(s.name);
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output && !s->op->reduction() && !st.consumers(n).empty()) w.compute_inline(n);
  }
  // An output that reads row reductions: one block per row when that applies.
  for (auto& n : names)
    if (st.find(n)->is_output && gpu_cooperative_rows(st, out, n, threads)) return out;
  // An output of reductions: one block per element when that applies.
  if (dag.outputs.size() == 1 && gpu_reduction_blocks(st, out, dag.outputs[0]->name, threads)) return out;
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output) {
      if (s->op->reduction()) w.bind(w.leaf(n, 0), "blockIdx.x");
      continue;
    }
    if (s->op->reduction() && s->op->axes.size() >= 2)
      gpu_reduction_output(w, n, tile);
    else if (s->op->reduction())
      w.bind(w.leaf(n, 0), "blockIdx.x");
    else
      gpu_injective(w, n, threads);
  }
  return out;
}

}  // namespace tessel::schedule
