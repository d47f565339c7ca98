#pragma once
// Shape and type inference as a pass: re-infers every value's dtype and shape (and the small
// values known at compile time) after passes that rewrote nodes.
//
//   %y = Relu(%x) : ?            →   %y = Relu(%x) : f32[1,8]
#include "core/graph/passes/pass_context.h"

namespace tessel {

// Returns true when any type or known value changed.
bool infer_shapes(Graph& g, PassContext& ctx);

}  // namespace tessel
