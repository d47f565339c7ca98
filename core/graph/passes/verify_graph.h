#pragma once
// The graph's verifier: well-formedness and types, checked after every graph pass that changed
// the graph when PipelineOptions::verify is on (in tests and debug builds).
#include "core/graph/graph.h"
#include "core/pass/instrument.h"

namespace tessel {

// Checks `g` is well formed (inputs defined before use, ids in range, outputs produced) and that
// re-inferred types match the recorded ones; throws Error with the first problem.
void verify_graph(const Graph& g);

// An instrument that runs verify_graph on a copy of every graph a pass produces and compares each
// value's dtype and shape with what the pass left there; a mismatch rejects the pass with an Error
// naming the pass and the value. Catches passes that rewrite nodes without keeping types right.
Verifier graph_verifier();

}  // namespace tessel
