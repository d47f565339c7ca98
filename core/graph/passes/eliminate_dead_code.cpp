#include "core/graph/passes/eliminate_dead_code.h"

#include "core/graph/passes/graph_rewrite.h"

namespace tessel {

bool eliminate_dead_code(Graph& g, PassContext&) {
  std::vector<bool> needed(g.values.size(), false);
  for (ValueId v : g.outputs) needed[v] = true;
  std::vector<bool> dead(g.nodes.size(), true);
  for (size_t n = g.nodes.size(); n-- > 0;) {
    const Node& node = g.nodes[n];
    bool used = false;
    for (ValueId v : node.outputs) used = used || needed[v];
    if (!used) continue;
    dead[n] = false;
    for (ValueId v : node.inputs)
      if (v != kNoValue) needed[v] = true;
  }
  const size_t values_before = g.values.size(), nodes_before = g.nodes.size();
  compact(g, dead);
  return g.values.size() != values_before || g.nodes.size() != nodes_before;
}

}  // namespace tessel
