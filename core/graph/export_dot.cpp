#include "core/graph/export_dot.h"

#include <graphviz/gvc.h>

#include <memory>
#include <sstream>

#include "core/support/error.h"

namespace tessel {

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

namespace {

// Graphviz reports errors through a global callback; collected here (under graphviz_mutex) so
// they end up in the Error message instead of on stderr.
std::string* graphviz_errors = nullptr;
int collect_graphviz_error(char* message) {
  if (graphviz_errors && message) *graphviz_errors += message;
  return 0;
}

std::string dot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";  // a line break inside a DOT label
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string value_label(const Value& v) {
  return type_str(v.type) + (v.layout.empty() ? "" : " " + v.layout);
}

void write_node(std::ostringstream& out, const Graph& g, NodeId id, const std::string& indent) {
  const Node& n = g.nodes[id];
  int constants = 0;
  for (ValueId v : n.inputs) constants += v != kNoValue && g.is_constant(v);
  std::string label = n.op->name + "\n" + n.name;
  if (constants) label += "\n(+" + std::to_string(constants) + " const)";
  out << indent << "n" << id << " [label=" << dot_quoted(label);
  if (n.op->name == "layout_transform")
    out << ", style=\"filled,bold\", fillcolor=\"#ffd27f\", color=\"#d46b08\"";
  else if (n.op->pattern == PatternKind::kOutEWiseFusable)
    out << ", style=filled, fillcolor=\"#cfe2ff\"";
  out << "];\n";
}

}  // namespace

std::string graph_to_dot(const Graph& g, const std::vector<DotCluster>& clusters) {
  std::vector<bool> in_cluster(g.nodes.size(), false);
  for (const DotCluster& c : clusters)
    for (NodeId n : c.nodes) {
      if (n < 0 || n >= static_cast<NodeId>(g.nodes.size()))
        throw Error("graph_to_dot: cluster '" + c.label + "' names node " + std::to_string(n) + "; graph '" + g.name +
                    "' has " + std::to_string(g.nodes.size()));
      in_cluster[n] = true;
    }
  std::ostringstream out;
  out << "digraph " << dot_quoted(g.name) << " {\n"
      << "  rankdir=TB;\n  node [shape=box, fontname=\"DejaVu Sans\", fontsize=10];\n"
      << "  edge [fontname=\"DejaVu Sans\", fontsize=8];\n";
  for (size_t k = 0; k < g.inputs.size(); ++k)
    out << "  in" << k << " [shape=ellipse, label=" << dot_quoted(g.value(g.inputs[k]).name) << "];\n";
  for (size_t k = 0; k < clusters.size(); ++k) {
    out << "  subgraph cluster_" << k << " {\n    label=" << dot_quoted(clusters[k].label)
        << "; style=rounded; color=\"#5b8def\";\n";
    for (NodeId n : clusters[k].nodes) write_node(out, g, n, "    ");
    out << "  }\n";
  }
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n)
    if (!in_cluster[n]) write_node(out, g, n, "  ");
  for (size_t k = 0; k < g.outputs.size(); ++k)
    out << "  out" << k << " [shape=ellipse, label=" << dot_quoted(g.value(g.outputs[k]).name) << "];\n";

  auto source = [&](ValueId v) -> std::string {
    const NodeId p = g.value(v).producer;
    if (p >= 0) return "n" + std::to_string(p);
    for (size_t k = 0; k < g.inputs.size(); ++k)
      if (g.inputs[k] == v) return "in" + std::to_string(k);
    return {};  // a constant: not drawn
  };
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n)
    for (ValueId v : g.nodes[n].inputs) {
      if (v == kNoValue) continue;
      std::string from = source(v);
      if (from.empty()) continue;
      out << "  " << from << " -> n" << n << " [label=" << dot_quoted(value_label(g.value(v)));
      if (g.nodes[n].op->name == "layout_transform" ||
          (g.value(v).producer >= 0 && g.nodes[g.value(v).producer].op->name == "layout_transform"))
        out << ", color=\"#d46b08\", penwidth=2";
      out << "];\n";
    }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    std::string from = source(g.outputs[k]);
    if (!from.empty())
      out << "  " << from << " -> out" << k << " [label=" << dot_quoted(value_label(g.value(g.outputs[k]))) << "];\n";
  }
  out << "}\n";
  return out.str();
}

std::string render_svg(const std::string& dot) {
  std::lock_guard<std::mutex> lock(graphviz_mutex());
  std::string errors;
  graphviz_errors = &errors;
  agseterrf(collect_graphviz_error);
  struct Reset {
    ~Reset() { graphviz_errors = nullptr; }
  } reset;
  auto message = [&](const char* what) {
    std::string text = errors;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    for (char& c : text)
      if (c == '\n') c = ' ';
    return std::string("graphviz: ") + what + (text.empty() ? "" : ": " + text);
  };
  GVC_t* gvc = gvContext();
  if (!gvc) throw Error("graphviz: cannot create a context");
  Agraph_t* graph = agmemread(dot.c_str());
  if (!graph) {
    gvFreeContext(gvc);
    throw Error(message("the DOT text does not parse"));
  }
  std::string svg;
  bool ok = gvLayout(gvc, graph, const_cast<char*>("dot")) == 0;
  if (ok) {
    char* data = nullptr;
    unsigned int length = 0;
    ok = gvRenderData(gvc, graph, const_cast<char*>("svg"), &data, &length) == 0 && data;
    if (ok) svg.assign(data, length);
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, graph);
  }
  agclose(graph);
  gvFreeContext(gvc);
  if (!ok) throw Error(message("layout or SVG rendering failed"));
  return svg;
}

}  // namespace tessel
