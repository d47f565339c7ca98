#pragma once
// The first lowering pass: turns a scheduled computation into loop nests.
//
// For each stage, its loops are the schedule's leaf axes; the tensor's own indices are rebuilt
// from them through the split/fuse relations, and a guard keeps a split with a tail in bounds:
//
//   split(C.i, 8) on extent 100       for i.outer in 0..13 {
//                                       for i.inner in 0..8 {
//                                         if (i.outer*8 + i.inner < 100) { C[i.outer*8 + i.inner] = ... }
//
// Bound inference: a stage computed at a consumer's loop computes only the region that one
// iteration of that loop reads. The region of each dimension is the hull of the consumer's
// index expressions with the loops inside the attach point relaxed to their ranges:
//
//   C[i] = P[i] + P[i + 1],  compute_at(P, C.i.outer)
//   -> P's region per i.outer iteration: [i.outer*8, i.outer*8 + 8]  (extent 9)
//      P is allocated with that extent inside the i.outer loop and indexed relative to its start.
//
// A reduction is split into an init nest (data-parallel loops only) and an update nest, placed
// at the first loop that belongs to a reduction axis. Inlined stages are substituted first.
#include <string>

#include "core/loopir/ir.h"
#include "core/schedule/schedule_state.h"

namespace tessel::lower {

// The pragma key that marks a tensorized loop: "tensorize:" followed by the intrinsic's name.
inline std::string tensorize_pragma_prefix() { return "tensorize:"; }

// Throws Error when the schedule cannot be lowered (naming the stage and why).
loopir::Func build_loop_nests(const schedule::ScheduleState& state);

}  // namespace tessel::lower
