#pragma once
// Software prefetch (the schedule step prefetch(AXIS, TENSOR, AHEAD, OFFSET)): in every iteration of
// the loop AXIS, a hint to bring into cache the lines of TENSOR that this iteration reads, as they
// will be read OFFSET iterations of the loop AHEAD later (AXIS itself: a stream read ahead, or a
// loop around it: the next block). The hint never faults and
// changes no value; it only lets memory work while the core computes.
//
// Why: a conv whose weights do not fit the L2 cache reads each output-channel block's weights
// once from far away (L3 or DRAM: ResNet-18's layer4 takes 9.4 MB per conv) and then again from L2
// for each further output row. Nothing fetches the next block while the rows compute, so the
// first row of every block waits on memory. Prefetching block o+1 from inside the reduction loop
// spreads the fetch over the rows of block o:
//
//   for o in 0..16 {                                 (AHEAD: output-channel blocks)
//     for y in 0..7 {
//       for c in 0..256 {                            (AXIS: one step of the reduction)
//         prefetch(&W[o + 1, c, 0..64])              <- inserted: each line this iteration reads,
//         acc[..] += in[y, c] * W[o, c, 0..64]          at o + 1 instead of o
//       }
//     }
//   }
//
// The lines are found by evaluating each access of TENSOR in the loop body at every value of the
// loops inside AXIS (unrolled and vector loops: a few dozen values) and keeping one address per
// distinct cache line; an access whose offset from the first is not a constant is left out. The
// address is clamped into the buffer (the last block has no next one), so the generated code never
// forms a pointer outside it. build_loops marks AXIS with the pragma prefetch:TENSOR:AHEAD=OFFSET;
// this pass (after storage_flatten, so indices are one offset) replaces it with the hints:
//
//   prefetch(address_of(W[min(max(index at o + OFFSET, 0), size - 1)]))
//
// Backends: the llvm backend emits llvm.prefetch (to L2: the data is needed a whole block later,
// and the L1 cache is busy with the current block), C emits __builtin_prefetch, the rest ignore it.
#include <string>

#include "core/loopir/ir.h"

namespace tessel::lower {

inline std::string prefetch_pragma_prefix() { return "prefetch:"; }
// "prefetch:W:o" for prefetching W one or more iterations of loop `o` ahead.
std::string prefetch_pragma(const std::string& tensor, const std::string& ahead_loop);

loopir::Func inject_prefetch(const loopir::Func& f);

}  // namespace tessel::lower
