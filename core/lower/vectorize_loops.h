#pragma once
// Vectorization legality: a `vectorized` loop must have a constant extent and a straight-line
// body (no inner loops, branches or allocations) to become vector lanes in code generation.
// Loops that do not qualify are turned back into serial loops here, so that every backend sees
// only vectorizable `vectorized` loops (the interpreter runs lanes in order either way).
//
//   for j.inner in 0..8 vectorized { if (...) { ... } }   ->   for j.inner in 0..8 { if ... }
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func vectorize_loops(const loopir::Func& f);

}  // namespace tessel::lower
