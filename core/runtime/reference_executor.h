#pragma once
// Runs a graph node by node with the op table's reference kernels: the correctness oracle that
// every compiled path is checked against. Intermediate tensors are released after their last use.
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

// `inputs` follow g.inputs in order; returns g.outputs in order. Throws Error naming the node when
// an input does not match its declared type or a kernel fails.
std::vector<Tensor> run_reference(const Graph& g, const std::vector<Tensor>& inputs);

// The value table a graph run starts from: `inputs` (checked against g.inputs' declared types, in
// order) and every constant's value at their value ids; every other slot is empty. Throws Error
// naming the input that does not match.
std::vector<Tensor> bind_graph_inputs(const Graph& g, const std::vector<Tensor>& inputs);

// One node with its reference kernel: `inputs` follow n.inputs (null for an absent optional input);
// returns fresh output tensors of the node's declared types. Throws Error naming the node.
std::vector<Tensor> run_node_reference(const Graph& g, const Node& n, const std::vector<const Tensor*>& inputs);

}  // namespace tessel
