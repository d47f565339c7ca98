#pragma once
// Unrolling: an `unrolled` loop with a constant extent (at most 256 iterations) becomes one copy
// of its body per iteration; under pragma(auto_unroll_max_step=N), every innermost serial loop of
// at most N iterations is unrolled too.
//
//   for k.inner in 0..2 unrolled { C[i] = C[i] + A[k.outer*2 + k.inner] }
//   ->  C[i] = C[i] + A[k.outer*2]
//       C[i] = C[i] + A[k.outer*2 + 1]
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func unroll_loops(const loopir::Func& f);

}  // namespace tessel::lower
