#pragma once
// Small editing tools the graph passes share. Passes edit a private copy of the graph in place:
// they redirect uses, mark nodes dead or append new nodes, then call `compact`, which drops what
// is no longer reachable, restores topological order and renumbers ids.
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

// Every read of `from` (node inputs and graph outputs) now reads `to`. When `from` is a graph
// output and `to` is an intermediate, `to` takes over `from`'s name so the graph's interface keeps
// its names.
void replace_uses(Graph& g, ValueId from, ValueId to);

// Removes the nodes marked in `dead` (index = NodeId; may be shorter than g.nodes) and every value
// nothing refers to any more (graph inputs always stay), puts the remaining nodes in topological
// order (stable: the current order where it is already valid) and renumbers ids.
// Throws Error when the remaining nodes form a cycle or read a removed value.
void compact(Graph& g, const std::vector<bool>& dead = {});

// Turns a node output into a constant holding `value` (the node is left for compact to drop once
// nothing else of it is used).
void make_constant(Graph& g, ValueId v, Tensor value);

// Number of readers of each value: node inputs (once per input slot) plus graph outputs.
std::vector<int> use_counts(const Graph& g);

}  // namespace tessel
