#pragma once
// Virtual-thread injection: a `vthread` loop describes independent data-parallel work; lowering
// interleaves its iterations into one instruction stream, pushing the loop inward through loops,
// sequences and allocations that do not depend on it, then replicating the innermost statements
// once per virtual thread (so independent memory and compute operations sit side by side). An
// allocation inside gets one copy per virtual thread (its size times the thread count).
//
//   for vx in 0..2 vthread {            for k in 0..16 {
//     for k in 0..16 {          ->        C[0*8 + ...] = ...   // virtual thread 0
//       C[vx*8 + ...] = ...               C[1*8 + ...] = ...   // virtual thread 1
//
// Where the virtual threads drive an accelerator's decoupled queues (buffers in target-declared
// scopes such as accel.inp), each virtual thread's statements are first synchronized with
// dependence tokens, as in VTA: dep_push(from, to) / dep_pop(from, to) between the load (0),
// compute (1) and store (2) queues. See inject_virtual_thread.cpp for the token rules.
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func inject_virtual_threads(const loopir::Func& f);

// The queues dependence tokens connect (the arguments of dep_push/dep_pop).
enum class DepQueue : int64_t { kLoad = 0, kCompute = 1, kStore = 2 };

}  // namespace tessel::lower
