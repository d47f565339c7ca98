#pragma once
// "Why did this node fuse, or not?" answered from a FusionResult: for every data edge into or out
// of one node, whether both ends are in one kernel, and for an edge between kernels the rule that
// kept it there (fuse_ops.h), in words, with the op kinds on both sides:
//
//   node 'relu1' (Relu) is in kernel fused_conv2d_add_relu_1 (3 nodes: conv1, add1, relu1)
//     in   add1_out  from 'add1' (Add)          fused: same kernel
//     out  relu1_out to 'pool1' (MaxPool)       not fused [two_complex_groups]: both sides hold ...
//
// `tessel passes MODEL --why NODE` prints it; the values are plain data for the studio.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/passes/fusion_result.h"

namespace tessel {

struct EdgeExplanation {
  bool incoming = true;  // the value feeds the node (else the node produces it)
  ValueId value = kNoValue;
  NodeId other = -1;                // the node at the far end; -1: a graph input, a constant or a graph output
  bool fused = false;               // both ends are members of one kernel
  std::optional<FusionBlock> rule;  // for an edge between kernels: the rule fusion recorded
  std::string sentence;             // "fused: same kernel", "not fused [rule]: reason (Conv 'a' -> Relu 'b')", ...
};

struct NodeFusionExplanation {
  NodeId node = -1;
  std::string kernel;                  // its kernel's name
  std::vector<NodeId> kernel_nodes;    // the kernel's members in order
  std::vector<EdgeExplanation> edges;  // inputs in order, then each output's uses
};

// Throws Error when `node` is not a node of `g` or `fusion` was made for another graph.
NodeFusionExplanation explain_node_fusion(const Graph& g, const FusionResult& fusion, NodeId node);

// The node named `name`, or the one node a pass made of it and named after it ("X_winograd_out");
// throws Error naming them when there are several, "no node named 'X' (nodes: a, b, ... N in all)"
// when there is none.
NodeId find_node_named(const Graph& g, std::string_view name);

// The explanation as the table above, one edge a line.
std::string fusion_explanation_text(const Graph& g, const NodeFusionExplanation& e);

}  // namespace tessel
