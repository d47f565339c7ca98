#include "core/graph/passes/graph_rewrite.h"

#include <queue>

namespace tessel {

void replace_uses(Graph& g, ValueId from, ValueId to) {
  if (from == to) return;
  for (Node& n : g.nodes)
    for (ValueId& v : n.inputs)
      if (v == from) v = to;
  bool was_output = false;
  for (ValueId& v : g.outputs)
    if (v == from) {
      v = to;
      was_output = true;
    }
  if (was_output && g.value(to).producer >= 0 && !g.is_input(to)) {
    bool to_is_other_output = false;
    int count = 0;
    for (ValueId v : g.outputs) count += v == to;
    to_is_other_output = count > 1;
    if (!to_is_other_output) {
      std::string name = g.value(from).name;
      g.value(from).name = g.unique_name(name + "_replaced");
      g.value(to).name = name;
    }
  }
}

void make_constant(Graph& g, ValueId v, Tensor value) {
  Value& val = g.value(v);
  val.type = TensorType{value.dtype(), value.shape()};
  val.value = std::move(value);
  val.producer = -1;
  val.output_index = 0;
}

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue) ++uses[v];
  for (ValueId v : g.outputs) ++uses[v];
  return uses;
}

void compact(Graph& g, const std::vector<bool>& dead) {
  const size_t n_nodes = g.nodes.size(), n_values = g.values.size();
  auto is_dead = [&](size_t n) { return n < dead.size() && dead[n]; };

  // Which node produces each value right now (producer fields may be stale for values that were
  // turned into constants: those have producer -1 and are no longer outputs of anything live).
  std::vector<NodeId> producer(n_values, -1);
  for (size_t n = 0; n < n_nodes; ++n)
    if (!is_dead(n))
      for (ValueId v : g.nodes[n].outputs)
        if (g.values[v].producer == static_cast<NodeId>(n)) producer[v] = static_cast<NodeId>(n);

  // Stable topological order (Kahn with a min-heap on the old index).
  std::vector<int> pending(n_nodes, 0);
  std::vector<std::vector<NodeId>> readers(n_nodes);
  for (size_t n = 0; n < n_nodes; ++n) {
    if (is_dead(n)) continue;
    for (ValueId v : g.nodes[n].inputs) {
      if (v == kNoValue) continue;
      if (v < 0 || static_cast<size_t>(v) >= n_values)
        throw Error("node '" + g.nodes[n].name + "' reads an invalid value id " + std::to_string(v));
      if (producer[v] >= 0) {
        ++pending[n];
        readers[producer[v]].push_back(static_cast<NodeId>(n));
      } else if (g.values[v].producer >= 0) {
        throw Error("node '" + g.nodes[n].name + "' reads '" + g.values[v].name + "' whose producer was removed");
      }
    }
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t n = 0; n < n_nodes; ++n)
    if (!is_dead(n) && pending[n] == 0) ready.push(static_cast<NodeId>(n));
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (NodeId r : readers[n])
      if (--pending[r] == 0) ready.push(r);
  }
  size_t live_nodes = 0;
  for (size_t n = 0; n < n_nodes; ++n) live_nodes += !is_dead(n);
  if (order.size() != live_nodes) throw Error("the graph has a cycle after rewriting");

  // Live values: graph inputs and outputs, and what live nodes read or write.
  std::vector<bool> live(n_values, false);
  for (ValueId v : g.inputs) live[v] = true;
  for (ValueId v : g.outputs) live[v] = true;
  for (NodeId n : order) {
    for (ValueId v : g.nodes[n].inputs)
      if (v != kNoValue) live[v] = true;
    for (ValueId v : g.nodes[n].outputs) live[v] = true;
  }
  for (size_t v = 0; v < n_values; ++v)
    if (live[v] && g.values[v].producer >= 0 && producer[v] < 0)
      throw Error("value '" + g.values[v].name + "' is still used but its producer was removed");
  std::vector<ValueId> remap(n_values, kNoValue);
  std::vector<Value> values;
  values.reserve(n_values);
  for (size_t v = 0; v < n_values; ++v)
    if (live[v]) {
      remap[v] = static_cast<ValueId>(values.size());
      values.push_back(std::move(g.values[v]));
      values.back().producer = -1;  // set again below from the live nodes
    }
  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (NodeId old : order) {
    Node n = std::move(g.nodes[old]);
    for (ValueId& v : n.inputs)
      if (v != kNoValue) v = remap[v];
    const NodeId id = static_cast<NodeId>(nodes.size());
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      n.outputs[k] = remap[n.outputs[k]];
      values[n.outputs[k]].producer = id;
      values[n.outputs[k]].output_index = static_cast<int>(k);
    }
    nodes.push_back(std::move(n));
  }
  for (ValueId& v : g.inputs) v = remap[v];
  for (ValueId& v : g.outputs) v = remap[v];
  g.values = std::move(values);
  g.nodes = std::move(nodes);
}

}  // namespace tessel
