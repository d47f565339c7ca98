#include "views/graph/display_graph.h"

#include <unordered_map>
#include <unordered_set>

namespace tessel::views {

int DisplayGraph::find(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string key_attributes(const Node& n, size_t max_chars) {
  if (!n.attrs) return {};
  std::string text = n.attrs->print_non_default();
  if (text.size() <= max_chars) return text;
  // Cut at the last field separator that fits, so no half value is shown.
  size_t cut = text.rfind(", ", max_chars);
  if (cut == std::string::npos || cut == 0) cut = max_chars;
  return text.substr(0, cut) + ", …";
}

namespace {

std::string value_type(const Value& v) { return v.type_known() ? type_str(v.type) : "?"; }

DisplayNode make_node(DisplayNode::Kind kind, const char* key_prefix, const std::string& name, std::string op) {
  DisplayNode n;
  n.kind = kind;
  n.key = key_prefix + name;
  n.name = name;
  n.op = std::move(op);
  return n;
}

DisplayEdge make_edge(int from, int to, const Value& v) {
  DisplayEdge e;
  e.from = from;
  e.to = to;
  e.value = v.name;
  e.type = value_type(v);
  e.layout = v.layout;
  return e;
}

class Builder {
 public:
  explicit Builder(DisplayGraph& out) : out_(out) {}

  int add_node(DisplayNode n) {
    out_.nodes.push_back(std::move(n));
    return static_cast<int>(out_.nodes.size()) - 1;
  }
  void add_graph(const Graph& g, DisplayNode::Change change, const std::unordered_set<std::string>* only) {
    if (!only) {
      for (ValueId in : g.inputs) {
        const Value& v = g.value(in);
        DisplayNode n = make_node(DisplayNode::Kind::kInput, "input:", v.name, "input");
        n.detail = value_type(v);
        source_[v.name] = add_node(std::move(n));
      }
    }
    for (NodeId id = 0; id < static_cast<NodeId>(g.nodes.size()); ++id) {
      const Node& node = g.nodes[static_cast<size_t>(id)];
      if (only && !only->count(node.name)) continue;
      DisplayNode n = make_node(DisplayNode::Kind::kOp, "node:", node.name, op_label(node));
      n.opaque = is_opaque(node);
      for (const auto& [field, body] : node_subgraphs(node)) n.bodies.push_back(field);
      n.change = change;
      n.detail = key_attributes(node);
      n.layout_transform = n.op == "layout_transform";
      int index = add_node(std::move(n));
      node_index_[&g][id] = index;
      for (ValueId in : node.inputs) {
        if (in == kNoValue || g.is_constant(in)) continue;
        const Value& v = g.value(in);
        auto it = source_.find(v.name);
        if (it == source_.end()) continue;
        DisplayEdge e = make_edge(it->second, index, v);
        e.ghost = change == DisplayNode::Change::kRemoved ||
                  out_.nodes[static_cast<size_t>(it->second)].change == DisplayNode::Change::kRemoved;
        out_.edges.push_back(std::move(e));
      }
      for (ValueId o : node.outputs) source_.try_emplace(g.value(o).name, index);
    }
    if (!only) {
      for (ValueId o : g.outputs) {
        const Value& v = g.value(o);
        auto it = source_.find(v.name);
        DisplayNode n = make_node(DisplayNode::Kind::kOutput, "output:", v.name, "output");
        n.detail = value_type(v);
        int index = add_node(std::move(n));
        if (it != source_.end()) out_.edges.push_back(make_edge(it->second, index, v));
      }
    }
  }
  int index_of(const Graph* g, NodeId id) const {
    auto git = node_index_.find(g);
    if (git == node_index_.end()) return -1;
    auto it = git->second.find(id);
    return it == git->second.end() ? -1 : it->second;
  }

 private:
  DisplayGraph& out_;
  std::unordered_map<std::string, int> source_;  // value name → producing display node
  std::unordered_map<const Graph*, std::unordered_map<NodeId, int>> node_index_;
};

}  // namespace

DisplayGraph make_display_graph(const StudioSnapshot& snap, int pass) {
  DisplayGraph out;
  GraphPtr after = snap.graph_at(pass);
  if (!after) return out;
  GraphPtr before;
  if (pass >= 0 && snap.passes.at(static_cast<size_t>(pass))->changed) before = snap.graph_at(pass - 1);

  std::unordered_set<std::string> before_names, after_names;
  if (before)
    for (const Node& n : before->nodes) before_names.insert(n.name);
  for (const Node& n : after->nodes) after_names.insert(n.name);

  Builder builder(out);
  builder.add_graph(*after, DisplayNode::Change::kSame, nullptr);
  if (before) {
    for (DisplayNode& n : out.nodes)
      if (n.kind == DisplayNode::Kind::kOp && !before_names.count(n.name)) n.change = DisplayNode::Change::kAdded;
    std::unordered_set<std::string> removed;
    for (const std::string& name : before_names)
      if (!after_names.count(name)) removed.insert(name);
    if (!removed.empty()) builder.add_graph(*before, DisplayNode::Change::kRemoved, &removed);
  }

  // Fusion facts belong to the optimized graph only (node ids refer to it).
  if (snap.fusion && after == snap.optimized) {
    for (const FusionGroup& g : snap.fusion->groups) {
      DisplayCluster c;
      c.kernel_name = g.kernel_name;
      c.pattern = std::string(pattern_name(g.pattern));
      int cluster = static_cast<int>(out.clusters.size());
      for (NodeId id : g.nodes) {
        int index = builder.index_of(after.get(), id);
        if (index < 0) continue;
        c.nodes.push_back(index);
        out.nodes[static_cast<size_t>(index)].cluster = cluster;
      }
      out.clusters.push_back(std::move(c));
    }
    for (const UnfusedEdge& u : snap.fusion->unfused_edges) {
      int from = builder.index_of(after.get(), u.producer), to = builder.index_of(after.get(), u.consumer);
      std::string value = u.value == kNoValue ? "" : after->value(u.value).name;
      for (DisplayEdge& e : out.edges)
        if (e.from == from && e.to == to && (value.empty() || e.value == value))
          e.blocked_rule = std::string(fusion_block_name(u.rule)) + ": " + std::string(fusion_block_reason(u.rule));
    }
  }
  return out;
}

DisplayGraph make_body_display_graph(const GraphPtr& body) {
  DisplayGraph out;
  if (body) Builder(out).add_graph(*body, DisplayNode::Change::kSame, nullptr);
  return out;
}

}  // namespace tessel::views
