#pragma once
// Barrier insertion for shared buffers: the threads of a group fill a shared buffer
// cooperatively, so a barrier must separate the writes from the reads that follow (and, inside a
// loop, the reads of one iteration from the writes of the next).
//
//   allocate A_shared: f32[64] shared           allocate A_shared ...
//   for k.outer ... {                           for k.outer ... {
//     A_shared[...] = A[...]              ->       barrier(shared)    // previous reads done
//     C[...] = C[...] + A_shared[...]              A_shared[...] = A[...]
//                                                  barrier(shared)    // writes visible
//                                                  C[...] = ...
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func insert_barriers(const loopir::Func& f);

}  // namespace tessel::lower
