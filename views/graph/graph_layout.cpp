#include "views/graph/graph_layout.h"

#include <graphviz/gvc.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "core/graph/export_dot.h"  // graphviz_mutex(): the one lock shared with the core's DOT export
#include "core/support/error.h"

namespace tessel::views {

LayoutRect node_box_size(const DisplayNode& n) {
  if (n.kind != DisplayNode::Kind::kOp) return {0, 0, 150, 36};
  return {0, 0, 170, n.detail.empty() ? 40.0 : 54.0};
}

namespace {

// Graphviz 2.42 takes char*, never writes through it; these keep the casts in one place.
char* cs(const char* s) { return const_cast<char*>(s); }

void set(void* obj, const char* name, const std::string& value) { agsafeset(obj, cs(name), cs(value.c_str()), cs("")); }

std::string inches(double points) { return std::to_string(points / 72.0); }

// Cluster ids in creation order.
//
// cgraph's default id for a named object is the address of its interned name, and dot walks
// subgraphs in id order — so clusters were laid out in heap-address order, and two layouts of one
// graph could differ. Our discipline gives "cluster_<k>" the k-th slot of one buffer instead:
// still a pointer to the name (agnameof works), but ascending with k. Nodes and edges are
// anonymous (ids from a counter, also ascending). Guarded by graphviz_mutex() like all of this.
struct ClusterNames {
  static constexpr size_t kSlot = 32;
  std::vector<char> buffer;
  void reset(size_t count) {
    buffer.assign(count * kSlot, '\0');
    for (size_t k = 0; k < count; ++k) std::snprintf(&buffer[k * kSlot], kSlot, "cluster_%zu", k);
  }
  bool owns(IDTYPE id) const {
    auto p = reinterpret_cast<uintptr_t>(buffer.data());
    return id >= p && id < p + buffer.size();
  }
};
ClusterNames& cluster_names() {
  static ClusterNames names;
  return names;
}

long map_id(void* state, int objtype, char* str, IDTYPE* id, int createflag) {
  const ClusterNames& names = cluster_names();
  if (str && objtype == AGRAPH && std::strncmp(str, "cluster_", 8) == 0) {
    size_t k = std::strtoul(str + 8, nullptr, 10);
    if ((k + 1) * ClusterNames::kSlot <= names.buffer.size()) {
      *id = reinterpret_cast<uintptr_t>(&names.buffer[k * ClusterNames::kSlot]);
      return 1;
    }
  }
  return AgIdDisc.map(state, objtype, str, id, createflag);
}
void free_id(void* state, int objtype, IDTYPE id) {
  if (!cluster_names().owns(id)) AgIdDisc.free(state, objtype, id);
}
Agiddisc_t ordered_id_disc() {
  Agiddisc_t d = AgIdDisc;
  d.map = map_id;
  d.free = free_id;
  return d;
}

// Owns what Graphviz allocates, released in the documented order even when layout throws.
struct GraphvizSession {
  GVC_t* gvc = gvContext();
  Agraph_t* graph = nullptr;
  bool laid_out = false;
  ~GraphvizSession() {
    if (graph && laid_out) gvFreeLayout(gvc, graph);
    if (graph) agclose(graph);
    gvFreeContext(gvc);
  }
};

}  // namespace

GraphLayoutPtr layout_graph(const DisplayGraph& dg) {
  auto start = std::chrono::steady_clock::now();
  auto out = std::make_shared<GraphLayout>();
  std::lock_guard<std::mutex> lock(tessel::graphviz_mutex());
  GraphvizSession s;
  cluster_names().reset(dg.clusters.size());
  static Agiddisc_t id_disc = ordered_id_disc();
  static Agdisc_t disc = {&AgMemDisc, &id_disc, &AgIoDisc};
  Agdesc_t directed = Agdirected;
  s.graph = agopen(cs("g"), directed, &disc);
  if (!s.graph) throw Error("graphviz: cannot create a graph");
  set(s.graph, "rankdir", "TB");
  set(s.graph, "nodesep", "0.35");
  set(s.graph, "ranksep", "0.45");
  set(s.graph, "splines", "spline");

  std::vector<Agraph_t*> clusters;
  for (size_t c = 0; c < dg.clusters.size(); ++c) {
    std::string name = "cluster_" + std::to_string(c);
    Agraph_t* sub = agsubg(s.graph, cs(name.c_str()), 1);
    set(sub, "margin", "12");
    clusters.push_back(sub);
  }
  std::vector<Agnode_t*> nodes;
  for (size_t i = 0; i < dg.nodes.size(); ++i) {
    const DisplayNode& dn = dg.nodes[i];
    Agraph_t* owner = dn.cluster >= 0 ? clusters[static_cast<size_t>(dn.cluster)] : s.graph;
    // Anonymous: cgraph numbers those in creation order, whereas a named object's id is the
    // address of its interned name, and dot breaks some ties by id — named nodes made layouts
    // differ from run to run.
    Agnode_t* n = agnode(owner, nullptr, 1);
    LayoutRect size = node_box_size(dn);
    set(n, "shape", "box");
    set(n, "fixedsize", "true");
    set(n, "label", "");
    set(n, "width", inches(size.width));
    set(n, "height", inches(size.height));
    nodes.push_back(n);
  }
  std::vector<Agedge_t*> edges;
  for (size_t i = 0; i < dg.edges.size(); ++i) {
    const DisplayEdge& de = dg.edges[i];
    edges.push_back(
        agedge(s.graph, nodes[static_cast<size_t>(de.from)], nodes[static_cast<size_t>(de.to)], nullptr, 1));
  }

  if (gvLayout(s.gvc, s.graph, "dot") != 0) throw Error("graphviz: dot layout failed");
  s.laid_out = true;

  // Graphviz's y axis points up; flip against the bounding box so the scene reads top-down.
  const boxf bb = GD_bb(s.graph);
  const double top = bb.UR.y;
  auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, top - p.y}; };
  out->width = bb.UR.x - bb.LL.x;
  out->height = bb.UR.y - bb.LL.y;
  for (Agnode_t* n : nodes) {
    LayoutPoint c = flip(ND_coord(n));
    double w = ND_width(n) * 72.0, h = ND_height(n) * 72.0;
    out->nodes.push_back({c.x - w / 2, c.y - h / 2, w, h});
  }
  for (Agedge_t* e : edges) {
    std::vector<LayoutPoint> points;
    if (ED_spl(e) && ED_spl(e)->size > 0) {
      const bezier& bz = ED_spl(e)->list[0];
      for (int k = 0; k < bz.size; ++k) points.push_back(flip(bz.list[k]));
      if (bz.eflag) points.push_back(flip(bz.ep));  // the arrow tip
    }
    out->edges.push_back(std::move(points));
  }
  for (Agraph_t* sub : clusters) {
    boxf b = GD_bb(sub);
    LayoutPoint tl = flip({b.LL.x, b.UR.y});
    out->clusters.push_back({tl.x, tl.y, b.UR.x - b.LL.x, b.UR.y - b.LL.y});
  }
  out->layout_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

namespace {

std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '\n') {
      out += "\\n";  // DOT's centred line break
      continue;
    }
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string display_graph_to_dot(const DisplayGraph& g) {
  std::ostringstream out;
  out << "digraph tessel {\n  rankdir=TB;\n  node [shape=box, fixedsize=true, fontname=\"DejaVu Sans\", "
         "fontsize=10];\n";
  auto node_line = [&](size_t i) {
    const DisplayNode& n = g.nodes[i];
    LayoutRect size = node_box_size(n);
    std::string label = n.op + "\n" + n.name + (n.detail.empty() ? "" : "\n" + n.detail);
    out << "    n" << i << " [label=" << dot_quote(label) << ", width=" << inches(size.width)
        << ", height=" << inches(size.height);
    if (n.change == DisplayNode::Change::kRemoved) out << ", style=dashed";
    out << "];\n";
  };
  for (size_t c = 0; c < g.clusters.size(); ++c) {
    out << "  subgraph cluster_" << c << " {\n    label=" << dot_quote(g.clusters[c].kernel_name) << ";\n";
    for (int i : g.clusters[c].nodes) node_line(static_cast<size_t>(i));
    out << "  }\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].cluster < 0) node_line(i);
  for (const DisplayEdge& e : g.edges) {
    std::string label = e.type + (e.layout.empty() ? "" : " " + e.layout);
    out << "  n" << e.from << " -> n" << e.to << " [label=" << dot_quote(label);
    if (!e.blocked_rule.empty()) out << ", tooltip=" << dot_quote(e.blocked_rule);
    out << "];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace tessel::views
