#pragma once
// Runs a graph node by node with the op table's reference kernels: the correctness oracle that
// every compiled path is checked against. Intermediate values are released after their last use.
//
// Values are RuntimeValues (core/graph/runtime_value.h): tensors, and the sequences and optionals
// that only this executor runs. The tensor-only entry points serve the compiled path, whose graphs
// hold tensors alone.
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

// `inputs` follow g.inputs in order; returns g.outputs in order. Throws Error naming the node when
// an input does not match its declared type or a kernel fails.
std::vector<RuntimeValue> run_reference_values(const Graph& g, const std::vector<RuntimeValue>& inputs);
// The same for a graph whose inputs and outputs are tensors.
std::vector<Tensor> run_reference(const Graph& g, const std::vector<Tensor>& inputs);

// The value table a graph run starts from: `inputs` (checked against g.inputs' declared types, in
// order) and every constant's value at their value ids; every other slot is empty. Throws Error
// naming the input that does not match.
std::vector<Tensor> bind_graph_inputs(const Graph& g, const std::vector<Tensor>& inputs);

// Whether `value` has `type` (kind, dtype, and the shape where the type knows it); when not, why:
// "expects seq(f32[2]), got f32[2] {1, 2}".
std::string runtime_type_mismatch(const TensorType& type, const RuntimeValue& value);

// One node with its reference kernel: `inputs` follow n.inputs (null for an absent optional input);
// returns fresh outputs of the node's declared types. Throws Error naming the node.
std::vector<RuntimeValue> run_node_reference(const Graph& g, const Node& n,
                                             const std::vector<const RuntimeValue*>& inputs);
// The same for a node whose inputs and outputs are tensors.
std::vector<Tensor> run_node_reference(const Graph& g, const Node& n, const std::vector<const Tensor*>& inputs);

}  // namespace tessel
