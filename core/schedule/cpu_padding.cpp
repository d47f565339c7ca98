// A padding stage (a select: the input inside the border, a constant outside) read by a reduction:
// inlined into its reader, its loads guarded by the border test; copied once into its own buffer,
// so that a conv's inner loop loads unguarded; or, on a target whose masked vector loads are slow,
// copied one channel plane at a time inside the reader's parallel loop.
#include <algorithm>

#include "core/loopir/functor.h"
#include "core/schedule/cpu_schedule_parts.h"

namespace tessel::schedule::cpu {

// A padding stage (its value is a select: inside the border the input, outside a constant) read by
// a reduction. Inlined, every multiply-add of a conv would test the border and guard its load;
// computed once into its own buffer, the conv's inner loop reads it unconditionally. The copy costs
// a write and a read of every padded element, small beside a conv's work, which reads each one
// once per output channel and window position. A pooling reads each about twice (a 3x3 window at
// stride 2: 9 reads per output, 4 inputs per output), so for it the copy is most of the work
// (tests/bench/RESULTS.md, session 10). It stays inlined there, its loads guarded by the border
// test (the codegen reads a safe address where the test fails). kReadsWorthACopy, the reads per
// padded element, draws the line between the two (cpu_schedule_parts.h).
bool is_padding_for_reduction(const ScheduleState& st, const Stage& s, int64_t reads_worth_a_copy) {
  if (!loopir::as<loopir::Select>(s.op->body)) return false;
  const int64_t padded = shape_numel(s.op->shape);
  for (const Stage* c : st.consumers(s.name)) {
    const loopir::Reduce* red = c->op->reduction();
    if (!red) continue;
    int64_t reads = shape_numel(c->op->shape);  // one per output and reduce iteration
    for (const auto& axis : red->axes) reads *= axis.extent;
    if (reads >= reads_worth_a_copy * padded) return true;
  }
  return false;
}

// Whether masked vector loads are cheap on a target with vectors of `lanes` floats. With
// AVX-512's mask registers they are; AVX2's vmaskmovps is not: a depthwise conv in NCHW whose
// padding is inlined, so that every vector load along x is masked by the border test, ran several
// times slower than with the padding copied per channel plane (tests/bench/RESULTS.md, sessions
// 12-13).
bool cheap_masked_loads(int64_t lanes) { return lanes >= 16; }

// Whether padding stage `pad`'s border test varies along its last axis, the one its readers
// vectorize: inlined, each of their vector loads is then a masked load. (In a blocked layout,
// NCHW16c, the test depends on the pixel only, and a vector of channels is loaded whole or not.)
bool border_varies_across_lanes(const Stage& pad) {
  const auto* select = loopir::as<loopir::Select>(pad.op->body);
  if (pad.op->axes.empty()) return false;  // a scalar select (DynamicQuantizeLinear's clamps)
  const loopir::Var* last = pad.op->axes.back().var.get();
  return select && loopir::uses_var(select->cond, [last](const loopir::Var* v) { return v == last; });
}

// A padding stage copied only because masked loads are slow (not for reuse: a depthwise conv or a
// pooling reads each element a few times) is computed per iteration of the kernel output's
// parallel loop, one channel plane with its border (58x58 floats for a 56x56 map: in L1, where the
// reads that follow find it), vectorized along its rows; at the root when the output has no
// parallel loop.
//
//   for c in 0..C parallel {  pad_plane = copy of X[c] with its zero border
//                             for y, x tiles: out += pad_plane[...] * W[c, ...]  (plain loads) }
void pad_per_parallel_iteration(Writer& w, const std::string& pad, const std::string& out, int64_t lanes) {
  const Stage& o = w.stage(out);
  auto parallel = std::find_if(o.leaf.begin(), o.leaf.end(),
                               [&](int axis) { return o.axes[axis].kind == loopir::ForKind::kParallel; });
  if (parallel == o.leaf.end()) return schedule_injective(w, pad, lanes);
  w.compute_at(pad, LoopHandle{out, *parallel});
  const size_t rank = w.stage(pad).op->axes.size();
  const int64_t row = w.stage(pad).op->axes.back().extent;
  if (row > lanes) w.vectorize(w.split(w.root(pad, rank - 1), lanes).second);
}

}  // namespace tessel::schedule::cpu
