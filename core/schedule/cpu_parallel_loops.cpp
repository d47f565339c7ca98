// Which loops of a default CPU schedule run in parallel: the outermost loop with more than one
// iteration (a register tile's loops included), and a loop of few iterations fused with the loop
// inside it until the threads have enough to share. Whether a kernel runs in parallel at all is
// parallel_work.h's decision (the writer allows parallel loops or not).
#include <algorithm>

#include "core/schedule/cpu_schedule_parts.h"

namespace tessel::schedule::cpu {

// The outermost loop worth running in parallel: the first root loop with more than one iteration.
Loop parallel_loop(const Stage& s) {
  // A loop already vectorized (an injective stage whose only long axis is its last) stays so:
  // the outermost serial loop is parallelized instead, even a trivial one.
  for (int a : s.leaf)
    if (a < static_cast<int>(s.op->axes.size()) && s.op->axes[a].extent > 1 &&
        s.axes[a].kind == loopir::ForKind::kSerial)
      return {s.name, a};
  return {s.name, s.leaf[0]};
}

// The number of iterations of loop `a` of a stage, from its root axis through the splits and fuses
// that made it.
int64_t loop_extent(const Stage& s, int a) {
  const size_t data_axes = s.op->axes.size();
  if (a < static_cast<int>(data_axes)) return s.op->axes[static_cast<size_t>(a)].extent;
  const loopir::Reduce* red = s.op->reduction();
  if (red && a < static_cast<int>(data_axes + red->axes.size()))
    return red->axes[static_cast<size_t>(a) - data_axes].extent;
  for (const Relation& r : s.relations) {
    if (r.kind == Relation::Kind::kFuse && r.fused == a) return loop_extent(s, r.outer) * loop_extent(s, r.inner);
    if (r.kind != Relation::Kind::kSplit || (r.outer != a && r.inner != a)) continue;
    const int64_t parent = loop_extent(s, r.parent), parts = (parent + r.factor - 1) / r.factor;
    return (r.outer == a) != r.by_nparts ? parts : r.factor;
  }
  return 1;
}

// The outermost data-parallel loop of a register-blocked reduction with more than one iteration,
// a tile loop included: a (1, 128, 768) matmul output has only its tile loops to share, and its
// leading batch axis of extent 1 would leave every thread but one idle.
Loop parallel_tile_loop(const Stage& s) {
  for (int a : s.leaf)
    if (!s.axes[a].is_reduce && s.axes[a].kind == loopir::ForKind::kSerial && loop_extent(s, a) > 1) return {s.name, a};
  return parallel_loop(s);
}

namespace {

bool from_split_with_tail(const Stage& s, int a) {
  for (const Relation& r : s.relations)
    if (r.kind == Relation::Kind::kSplit && (r.outer == a || r.inner == a)) {
      const int64_t parent = loop_extent(s, r.parent);
      return r.factor > 0 && parent % r.factor != 0;
    }
  return false;
}

// A parallel loop of few iterations, fused with the loops inside it until it has enough for the
// threads to share evenly. Two threads sharing 2 iterations (a conv's two 32-channel blocks) each
// take one, and whichever starts late makes the other wait; sharing 112 they claim small chunks,
// and a late thread takes fewer. The inner loop (the rows) goes outside the fused pair, so that
// consecutive kernels give each thread the same band of rows (rows_before_blocks in
// cpu_operand_caching.cpp has the why); a conv whose weights would not stay in cache keeps its
// blocks outside (next_outside = false):
//
//   for fo in 0..2 parallel { for y in 0..56 { ... } }   ->   for y.fo.fused in 0..112 parallel { ... }
//
// The next loop joins only when it is data-parallel and serial, when no stage is computed at the
// outer loop (its code between the two loops would be split apart), and when neither loop comes
// from a split with a tail: loop_partition peels a tail off the last iteration of its outer loop,
// which a fused loop no longer has (BERT's 128 rows in tiles of 5: every iteration would run the
// micro-kernel with the tail's guards in it).
Loop widened_for_threads(Writer& w, Loop l, bool next_outside = true) {
  while (w.parallel_allowed()) {
    const Stage& s = w.stage(l.stage);
    if (loop_extent(s, l.axis) >= kEnoughParallelIterations) return l;
    auto at = std::find(s.leaf.begin(), s.leaf.end(), l.axis);
    if (at == s.leaf.end() || at + 1 == s.leaf.end()) return l;
    const int next = *(at + 1);
    const AxisState& n = s.axes[next];
    if (n.is_reduce || n.kind != loopir::ForKind::kSerial || loop_extent(s, next) <= 1) return l;
    if (from_split_with_tail(s, l.axis) || from_split_with_tail(s, next)) return l;
    for (const Stage& other : w.state().stages)
      if (other.attach == Attach::kAt && other.attach_stage == l.stage && other.attach_axis == l.axis) return l;
    if (next_outside) {
      const Loop n_loop{l.stage, next};
      w.reorder({n_loop, l});
      l = w.fuse(n_loop, l);
    } else {
      l = w.fuse(l, {l.stage, next});
    }
  }
  return l;
}

}  // namespace

// Runs the outermost loop(s) of a stage in parallel: one loop, or with knobs.parallel_loops == 2
// the two outermost fused into one (more iterations to share among threads) when both are
// data-parallel serial loops; a loop of few iterations is widened (widened_for_threads).
void parallelize(Writer& w, const std::string& name, const CpuKnobs& knobs, bool tiles, bool next_outside) {
  const Stage& s = w.stage(name);
  if (knobs.parallel_loops.value_or(1) == 2 && s.leaf.size() >= 3) {
    const AxisState &a = s.axes[s.leaf[0]], &b = s.axes[s.leaf[1]];
    if (!a.is_reduce && !b.is_reduce && a.kind == loopir::ForKind::kSerial && b.kind == loopir::ForKind::kSerial) {
      w.parallel(w.fuse(w.leaf(name, 0), w.leaf(name, 1)));
      return;
    }
  }
  w.parallel(widened_for_threads(w, tiles ? parallel_tile_loop(s) : parallel_loop(s), next_outside));
}

// Parallelizes the outermost loop of `name` when it is data-parallel (a scalar reduction has none).
void parallel_outermost(Writer& w, const std::string& name) {
  const Stage& s = w.stage(name);
  if (s.leaf.empty() || s.axes[s.leaf[0]].is_reduce) return;
  w.parallel(widened_for_threads(w, parallel_loop(s)));
}

}  // namespace tessel::schedule::cpu
