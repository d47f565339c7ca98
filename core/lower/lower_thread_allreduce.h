#pragma once
// Cross-thread reductions: the threads of a block reduce together (TVM's allreduce).
//
// A reduction whose outermost reduction loop is bound to threadIdx (the schedule binds the inner
// part of a split reduction axis: bind(C.k.inner, threadIdx.x)) is built by build_loop_nests as
// each thread's partial result in a shared buffer of T lanes, then their combination written as
// the serial loop it means, marked with a pragma, then the result read from lane 0:
//
//   for k.inner in 0..T bind(threadIdx.x) {          partial = identity; for k.outer: partial ⊕= X[..]
//     C_red[k.inner] = partial                      (each thread's partial, in shared memory)
//   }
//   for k.inner in 1..T pragma(thread_allreduce:threadIdx.x=T) {
//     C_red[0] = C_red[0] ⊕ C_red[k.inner]          (the meaning: lane 0 combines every lane)
//   }
//   C[i] = C_red[0]
//
// This pass turns the marked loop into a tree: the lanes are halved log2(T) times, the lower half
// combining the upper half into itself, with a barrier after every step so the next step reads
// what this one wrote. T need not be a power of two: with P the largest power of two <= T, a
// first step folds lanes [P, T) onto [0, T - P).
//
//   lanes   0 1 2 3 4 5 6 | 7 8 9          T = 10, P = 8
//   fold    0 1 ← 8 9                       t < 2:  C_red[t] ⊕= C_red[t + 8]    barrier
//   halve   0 1 2 3 ← 4 5 6 7               t < 4:  C_red[t] ⊕= C_red[t + 4]    barrier
//   halve   0 1 ← 2 3                       t < 2:  C_red[t] ⊕= C_red[t + 2]    barrier
//   halve   0 ← 1                           t < 1:  C_red[t] ⊕= C_red[t + 1]    barrier
//
// Every step is a loop bound to the same threadIdx over all T threads, each guarded by t < offset,
// with the barrier outside the loops: every thread reaches every barrier. The offsets are
// constants (the steps are unrolled here, T being known), so a step's guard is one compare. A
// step reads only lanes no thread writes in that step, so running the thread loops one after
// another (the interpreter, a CPU) computes what the block computes.
//
// Why a pass over the loop program rather than a code-generator feature: the tree is ordinary
// loop IR (thread loops, guards, barriers), so every backend runs it, the interpreter checks it,
// insert_barriers and the launch analysis see its barriers, and the program after
// build_loop_nests still reads as what it means (the serial combine).
#include <string>

#include "core/loopir/ir.h"

namespace tessel::lower {

// The pragma key of a combine loop: this prefix, then the thread tag ("threadIdx.x"); its value
// is the number of threads (lanes).
inline std::string thread_allreduce_pragma_prefix() { return "thread_allreduce:"; }

// Throws Error when a marked loop is not of the form above.
loopir::Func lower_thread_allreduce(const loopir::Func& f);

}  // namespace tessel::lower
