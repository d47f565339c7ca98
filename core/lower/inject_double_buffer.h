#pragma once
// Double buffering as a prefetch pipeline. A stage that double_buffer(P) marks is computed at a
// serial loop k; its storage has two halves, P[k % 2] (build_loops). This pass software-pipelines
// the loop so the fetch of tile k+1 overlaps the compute on tile k:
//
//   for k in 0..N {                       P[0 % 2] = fetch(0)                 prologue
//     P[k % 2] = fetch(k)         ->      for k in 0..N-1 {
//     compute(P[k % 2], k)                  P[(k + 1) % 2] = fetch(k + 1)     into the other half
//   }                                       compute(P[k % 2], k)
//                                           barrier(shared)                   (shared scope only)
//                                         }
//                                         compute(P[(N-1) % 2], N-1)          epilogue
//
//   halves   iteration:  pro   0     1     2   ...  epi
//   P[0]                 W0    R0    W2    R2
//   P[1]                       W1    R1    W3
//
// One barrier per iteration suffices for a shared buffer: iteration k writes the half that
// iteration k-1 read, and reads the half that iteration k-1 wrote; the barrier at the end of
// k-1 orders both. (insert_barriers leaves a sequence that already holds a barrier alone, and adds
// the one between the prologue and the loop.) The loop is marked by build_loops with the pragma
// double_buffer:P; only serial (or unrolled) loops can be pipelined.
#include <string>

#include "core/loopir/ir.h"

namespace tessel::lower {

inline std::string double_buffer_pragma_prefix() { return "double_buffer:"; }

loopir::Func inject_double_buffer(const loopir::Func& f);

}  // namespace tessel::lower
