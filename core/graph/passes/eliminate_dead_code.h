#pragma once
// Dead code elimination: drops nodes none of whose outputs reach a graph output, and constants
// nothing reads.
//
//   %a = Relu(%x)                      %b = Sigmoid(%x)
//   %b = Sigmoid(%x)          →        return %b
//   return %b
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool eliminate_dead_code(Graph& g, PassContext& ctx);

}  // namespace tessel
