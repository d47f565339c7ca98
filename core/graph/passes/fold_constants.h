#pragma once
// Constant folding: every node whose inputs are all known at compile time (constants, values
// type inference already computed, bound inputs) is evaluated with the op's reference kernel and
// its outputs become constants; so does every node whose outputs type inference already knows
// (Shape of a tensor with a static shape). Chains fold in one sweep because results are known to the nodes
// after them: the Shape → Gather → Concat → Reshape chains and Pad/Slice bound computations
// exporters emit reduce to constant operands.
//
//   %s = Shape(%x) : i64[4]                       %c = constant i64[2] [1, 768]
//   %g = Gather(%s, %zero) : i64[]        →       %y = Reshape(%x, %c)
//   %c = Concat(%g1, %minus1) {axis=0}
//   %y = Reshape(%x, %c)
//
// Results larger than PipelineOptions::max_folded_bytes are left to run time, so a huge weight is
// never held twice (once as the input, once folded). Ops with random results are never folded.
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool fold_constants(Graph& g, PassContext& ctx);

}  // namespace tessel
