#pragma once
// What the graph pane draws, derived from one snapshot and one pass: boxes and arrows with their
// labels and overlay facts, independent of Qt and of Graphviz (so it is easy to test and to lay
// out on a worker thread).
//
//   graph after pass k  ──┐
//   graph after pass k-1 ─┼─▶ DisplayGraph: nodes (op, name, key attrs, added/removed/same,
//   fusion result, plan  ─┘                 fusion cluster), edges (shape+dtype, layout,
//                                           why it was not fused), clusters (kernel names)
//
// Removed nodes are kept as ghosts wired to the values they used to read, so a pass's deletions are
// visible in place. Constants are not drawn as nodes (they would double a ResNet's node count);
// the inspector lists them as inputs.
#include <string>
#include <vector>

#include "views/common/snapshot.h"

namespace tessel::views {

struct DisplayNode {
  enum class Kind { kOp, kInput, kOutput };
  enum class Change { kSame, kAdded, kRemoved };
  Kind kind = Kind::kOp;
  Change change = Change::kSame;
  std::string key;     // unique: "node:conv1", "input:x", "output:y"
  std::string name;    // node or value name (what find and selection use)
  std::string op;      // op name; "input"/"output" for those
  std::string detail;  // key attributes: "strides=[2,2], group=32" (shortened)
  int cluster = -1;    // index into DisplayGraph::clusters
  bool layout_transform = false;
  bool opaque = false;              // an op Tessel cannot run (core/graph/opaque_op.h); op reads "Einsum (opaque)"
  std::vector<std::string> bodies;  // the node's sub-graphs by attribute ("body"): the pane opens them
};

struct DisplayEdge {
  int from = 0, to = 0;      // node indices
  std::string value;         // value name
  std::string type;          // "f32[1,64,56,56]"
  std::string layout;        // "NCHW16c"; empty when no layout assigned
  std::string blocked_rule;  // why fusion kept this edge between kernels; empty otherwise
  bool ghost = false;        // touches a removed node
};

struct DisplayCluster {
  std::string kernel_name;
  std::string pattern;
  std::vector<int> nodes;
};

struct DisplayGraph {
  std::vector<DisplayNode> nodes;
  std::vector<DisplayEdge> edges;
  std::vector<DisplayCluster> clusters;
  int find(const std::string& name) const;  // node index by name, -1 when absent
};

// The graph after pass `pass` (-1: imported) compared with the one before it. Fusion clusters and
// blocked edges are attached when the shown graph is the snapshot's optimized graph.
DisplayGraph make_display_graph(const StudioSnapshot& snap, int pass);

// A node's body (a Loop's "body", an If's "then_branch"), drawn as a graph of its own: its inputs
// (the captured ones included) and outputs, no passes, no fusion.
DisplayGraph make_body_display_graph(const GraphPtr& body);

// "strides=[2,2], pads=[1,1,1,1]" cut to about `max_chars` on a field boundary.
std::string key_attributes(const Node& n, size_t max_chars = 34);

}  // namespace tessel::views
