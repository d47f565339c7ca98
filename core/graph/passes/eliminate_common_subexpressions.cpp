#include "core/graph/passes/eliminate_common_subexpressions.h"

#include <cstring>
#include <unordered_map>

#include "core/graph/passes/graph_rewrite.h"

namespace tessel {

namespace {

constexpr int64_t kMaxMergedConstantElements = 64;

size_t combine(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

size_t node_hash(const Node& n) {
  size_t h = std::hash<const void*>()(n.op);
  h = combine(h, n.attrs ? n.attrs->hash() : 0);
  for (ValueId v : n.inputs) h = combine(h, std::hash<int>()(v));
  return combine(h, n.outputs.size());
}

bool same_node(const Node& a, const Node& b) {
  if (a.op != b.op || a.inputs != b.inputs || a.outputs.size() != b.outputs.size()) return false;
  if (!a.attrs || !b.attrs) return a.attrs == b.attrs;
  return a.attrs->equals(*b.attrs);
}

// Merges equal small constants; returns true when any use was redirected.
bool merge_small_constants(Graph& g) {
  bool changed = false;
  std::unordered_map<size_t, std::vector<ValueId>> seen;
  std::vector<ValueId> canonical(g.values.size(), kNoValue);
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
    if (!g.is_constant(v) || g.value(v).value.numel() > kMaxMergedConstantElements) continue;
    const Tensor& t = g.value(v).value;
    size_t h = std::hash<std::string_view>()(
        std::string_view(reinterpret_cast<const char*>(t.raw_data()), t.nbytes()));
    h = combine(h, static_cast<size_t>(t.dtype()));
    for (int64_t d : t.shape()) h = combine(h, static_cast<size_t>(d));
    auto& bucket = seen[h];
    for (ValueId other : bucket)
      if (same_tensor(g.value(other).value, t)) {
        canonical[v] = other;
        break;
      }
    if (canonical[v] == kNoValue) bucket.push_back(v);
  }
  for (Node& n : g.nodes)
    for (ValueId& v : n.inputs)
      if (v != kNoValue && canonical[v] != kNoValue) {
        v = canonical[v];
        changed = true;
      }
  return changed;
}

}  // namespace

bool eliminate_common_subexpressions(Graph& g, PassContext&) {
  bool changed = merge_small_constants(g);
  std::unordered_map<size_t, std::vector<NodeId>> seen;
  std::vector<bool> dead(g.nodes.size(), false);
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n) {
    Node& node = g.nodes[n];
    auto& bucket = seen[node_hash(node)];
    NodeId match = -1;
    for (NodeId other : bucket)
      if (same_node(g.nodes[other], node)) {
        match = other;
        break;
      }
    if (match < 0) {
      bucket.push_back(n);
      continue;
    }
    // Redirecting uses changes the inputs of later nodes, so later nodes hash with the merged ids.
    for (size_t k = 0; k < node.outputs.size(); ++k) replace_uses(g, node.outputs[k], g.nodes[match].outputs[k]);
    dead[n] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace tessel
