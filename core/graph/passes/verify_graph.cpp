#include "core/graph/passes/verify_graph.h"

#include <string>
#include <vector>

namespace tessel {

namespace {

// Ids in range, values defined before use, outputs produced; the same for every sub-graph, whose
// types the node that runs it settles (so only their structure is checked here).
void verify_structure(const Graph& g) {
  const auto n_values = static_cast<ValueId>(g.values.size());
  std::vector<bool> defined(g.values.size(), false);
  for (ValueId v : g.inputs) {
    if (v < 0 || v >= n_values) throw Error("graph input id " + std::to_string(v) + " is out of range");
    defined[v] = true;
  }
  for (ValueId v = 0; v < n_values; ++v)
    if (g.is_constant(v)) defined[v] = true;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n) {
    const Node& node = g.nodes[n];
    if (!node.op) throw Error("node '" + node.name + "' has no op");
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      if (v < 0 || v >= n_values)
        throw Error("node '" + node.name + "' reads value id " + std::to_string(v) + ", out of range");
      if (!defined[v]) throw Error("node '" + node.name + "' reads '" + g.value(v).name + "' before it is produced");
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueId v = node.outputs[k];
      if (v < 0 || v >= n_values)
        throw Error("node '" + node.name + "' writes value id " + std::to_string(v) + ", out of range");
      if (g.value(v).producer != n || g.value(v).output_index != static_cast<int>(k))
        throw Error("value '" + g.value(v).name + "' does not name node '" + node.name + "' as its producer");
      defined[v] = true;
    }
    for (const auto& [field, body] : node_subgraphs(node)) {
      try {
        if (body->captured_inputs < 0 || body->captured_inputs > static_cast<int>(body->inputs.size()))
          throw Error("captures " + std::to_string(body->captured_inputs) + " of its " +
                      std::to_string(body->inputs.size()) + " inputs");
        verify_structure(*body);
      } catch (const Error& e) {
        rethrow_with_context(e, "node '" + node.name + "', " + field + " '" + body->name + "'");
      }
    }
  }
  for (ValueId v : g.outputs)
    if (v < 0 || v >= n_values || !defined[v])
      throw Error("graph output id " + std::to_string(v) + " is not produced by any node, input or constant");
}

}  // namespace

void verify_graph(const Graph& g) {
  verify_structure(g);
  const auto n_values = static_cast<ValueId>(g.values.size());
  Graph reinferred = g;
  infer_types(reinferred);
  for (ValueId v = 0; v < n_values; ++v)
    if (!(reinferred.values[v].type == g.values[v].type))
      throw Error("value '" + g.values[v].name + "' is recorded as " + type_str(g.values[v].type) + " but infers to " +
                  type_str(reinferred.values[v].type));
}

Verifier graph_verifier() {
  return Verifier([](const IrSnapshot& after) {
    auto* graph = dynamic_cast<const Snapshot<Graph>*>(&after);
    if (!graph) throw Error("the graph verifier was given a program that is not a graph");
    verify_graph(*graph->ir());
  });
}

}  // namespace tessel
