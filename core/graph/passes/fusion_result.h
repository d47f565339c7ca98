#pragma once
// The outcome of operator fusion (fuse_ops.h) as plain data: which nodes form one kernel, and for
// every data edge that stayed between kernels, the rule that kept it there. The studio draws the
// groups as clusters and answers "why did this not fuse?" from `unfused_edges`.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

// Why an edge producer → consumer was not fused (the rules are in fuse_ops.h).
enum class FusionBlock {
  kOpaqueProducer,        // the producer is opaque
  kOpaqueConsumer,        // the consumer is opaque
  kExternalOutput,        // the producer's result is also a graph output (read from outside)
  kNoPostDominator,       // the producer's outputs do not meet again in one node
  kNotPostDominator,      // the consumer is not the producer's immediate post-dominator
  kComplexEdgeNotElemWise,  // conv/dense output reaches its post-dominator through a non-element-wise edge
  kPathTooComplex,        // some node between producer and post-dominator is too complex to join
  kReductionSource,       // a reduction never fuses forward into its consumers
  kTwoComplexGroups,      // both groups are above broadcast (two anchors never share a kernel)
  kMaxDepth,              // the merged group would exceed the maximum group depth
  kMaxArguments,          // the merged group would exceed the maximum kernel argument count
  kTupleIntoTuple,        // two intermediate tuples never fuse
};
std::string_view fusion_block_name(FusionBlock b);   // "opaque_producer", ...
std::string_view fusion_block_reason(FusionBlock b);  // a sentence for the studio and the CLI

struct FusionGroup {
  int id = 0;
  std::string kernel_name;     // "fused_conv2d_add_relu_3": member ops in order, then the id
  std::vector<NodeId> nodes;   // members in topological order
  NodeId anchor = -1;          // the most complex member (the conv of conv+bias+relu); last member if all equal
  PatternKind pattern = PatternKind::kElemWise;  // max over members
  std::vector<ValueId> inputs;   // values read from outside the group (constants included)
  std::vector<ValueId> outputs;  // values used outside the group (or graph outputs)
};

struct UnfusedEdge {
  NodeId producer = -1;
  NodeId consumer = -1;
  ValueId value = kNoValue;
  FusionBlock rule = FusionBlock::kOpaqueProducer;
};

struct FusionResult {
  std::vector<FusionGroup> groups;     // in topological order of their anchors' execution
  std::vector<int> group_of_node;      // index = NodeId
  std::vector<UnfusedEdge> unfused_edges;
  int max_depth = 0;                   // the limit the fusion ran with

  const FusionGroup& group_of(NodeId n) const { return groups.at(static_cast<size_t>(group_of_node.at(n))); }
};
using FusionResultPtr = std::shared_ptr<const FusionResult>;

struct DotCluster;  // core/graph/export_dot.h
// One cluster per kernel, labelled with its name, for graph_to_dot; none when `fusion` is null or
// was made for another graph than `g` (a pass's snapshot before fusion ran).
std::vector<DotCluster> fusion_clusters(const Graph& g, const FusionResult* fusion);

}  // namespace tessel
