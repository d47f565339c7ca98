#include "core/graph/passes/fusion_explain.h"

#include <algorithm>

#include "core/support/error.h"

namespace tessel {

namespace {

std::string describe(const Graph& g, NodeId n) { return g.nodes[n].op->name + " '" + g.nodes[n].name + "'"; }

// The rule fusion recorded for producer -> consumer over `value`, if any.
std::optional<FusionBlock> recorded_rule(const FusionResult& f, NodeId producer, NodeId consumer, ValueId value) {
  for (const UnfusedEdge& e : f.unfused_edges)
    if (e.producer == producer && e.consumer == consumer && e.value == value) return e.rule;
  for (const UnfusedEdge& e : f.unfused_edges)  // recorded for another output of the same producer
    if (e.producer == producer && e.consumer == consumer) return e.rule;
  return std::nullopt;
}

EdgeExplanation between_nodes(const Graph& g, const FusionResult& f, NodeId producer, NodeId consumer, ValueId value,
                              bool incoming) {
  EdgeExplanation e;
  e.incoming = incoming;
  e.value = value;
  e.other = incoming ? producer : consumer;
  e.fused = f.group_of_node[producer] == f.group_of_node[consumer];
  if (e.fused) {
    e.sentence = "fused: same kernel";
    return e;
  }
  const std::string ends = "(" + describe(g, producer) + " -> " + describe(g, consumer) + ")";
  e.rule = recorded_rule(f, producer, consumer, value);
  if (e.rule)
    e.sentence = "not fused [" + std::string(fusion_block_name(*e.rule)) +
                 "]: " + std::string(fusion_block_reason(*e.rule)) + " " + ends;
  else  // fusion records the edge it refused; the two ends joined other kernels first
    e.sentence = "not fused: the two ends joined different kernels " + ends + " (" + f.group_of(producer).kernel_name +
                 ", " + f.group_of(consumer).kernel_name + ")";
  return e;
}

}  // namespace

NodeId find_node_named(const Graph& g, std::string_view name) {
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (g.nodes[n].name == name) return static_cast<NodeId>(n);
  // A pass that rewrites a node names what it makes after it ("conv_winograd_in", "x_NCHW16c").
  std::vector<std::string> derived;
  for (const Node& n : g.nodes)
    if (n.name.size() > name.size() && n.name.starts_with(name) && n.name[name.size()] == '_')
      derived.push_back(n.name);
  if (derived.size() == 1) return find_node_named(g, derived.front());
  if (!derived.empty()) {
    std::string list;
    for (const std::string& d : derived) list += (list.empty() ? "" : ", ") + d;
    throw Error("node '" + std::string(name) + "' was rewritten by the graph passes into " + list +
                ": name one of them");
  }
  std::string names;
  constexpr size_t kListed = 12;
  for (size_t n = 0; n < g.nodes.size() && n < kListed; ++n) names += (n ? ", " : "") + g.nodes[n].name;
  if (g.nodes.size() > kListed) names += ", ... " + std::to_string(g.nodes.size()) + " in all";
  throw Error("no node named '" + std::string(name) + "' in the optimized graph (nodes: " + names + ")");
}

NodeFusionExplanation explain_node_fusion(const Graph& g, const FusionResult& f, NodeId node) {
  if (node < 0 || static_cast<size_t>(node) >= g.nodes.size())
    throw Error("explain_node_fusion: node " + std::to_string(node) + " is not in the graph");
  if (f.group_of_node.size() != g.nodes.size())
    throw Error("explain_node_fusion: the fusion result was made for another graph");
  NodeFusionExplanation out;
  out.node = node;
  out.kernel = f.group_of(node).kernel_name;
  out.kernel_nodes = f.group_of(node).nodes;
  const Node& n = g.nodes[node];
  for (ValueId v : n.inputs) {
    if (v == kNoValue) continue;
    const NodeId producer = g.values[v].producer;
    if (producer >= 0) {
      out.edges.push_back(between_nodes(g, f, producer, node, v, true));
      continue;
    }
    EdgeExplanation e;
    e.value = v;
    e.sentence = g.is_constant(v) ? "a constant: read by the kernel as a parameter" : "a graph input";
    out.edges.push_back(e);
  }
  const std::vector<std::vector<NodeId>> consumers = g.consumers();
  for (ValueId v : n.outputs) {
    std::vector<NodeId> users;  // a node reading the value twice is one edge
    for (NodeId c : consumers[v])
      if (std::find(users.begin(), users.end(), c) == users.end()) users.push_back(c);
    for (NodeId c : users) out.edges.push_back(between_nodes(g, f, node, c, v, false));
    if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end()) {
      EdgeExplanation e;
      e.incoming = false;
      e.value = v;
      e.sentence = "a graph output: stored by the kernel";
      out.edges.push_back(e);
    }
  }
  return out;
}

std::string fusion_explanation_text(const Graph& g, const NodeFusionExplanation& e) {
  std::string members;
  for (NodeId m : e.kernel_nodes) members += (members.empty() ? "" : ", ") + g.nodes[m].name;
  std::string text = "node '" + g.nodes[e.node].name + "' (" + g.nodes[e.node].op->name + ") is in kernel " + e.kernel +
                     " (" + std::to_string(e.kernel_nodes.size()) + " node" + (e.kernel_nodes.size() == 1 ? "" : "s") +
                     ": " + members + ")\n";
  for (const EdgeExplanation& edge : e.edges) {
    std::string far = edge.other < 0 ? std::string{}
                                     : std::string(edge.incoming ? "from " : "to ") + "'" + g.nodes[edge.other].name +
                                           "' (" + g.nodes[edge.other].op->name + ")";
    auto padded = [](std::string s, size_t width) {
      return s.size() < width ? s + std::string(width - s.size(), ' ') : s;
    };
    text += "  " + padded(edge.incoming ? "in" : "out", 5) + padded(g.values[edge.value].name, 24) + " " +
            padded(far, 36) + " " + edge.sentence + "\n";
  }
  return text;
}

}  // namespace tessel
