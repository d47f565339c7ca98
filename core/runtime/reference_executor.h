#pragma once
// Runs a graph node by node with the op table's reference kernels: the correctness oracle that
// every compiled path is checked against. Intermediate tensors are released after their last use.
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

// `inputs` follow g.inputs in order; returns g.outputs in order. Throws Error naming the node when
// an input does not match its declared type or a kernel fails.
std::vector<Tensor> run_reference(const Graph& g, const std::vector<Tensor>& inputs);

}  // namespace tessel
