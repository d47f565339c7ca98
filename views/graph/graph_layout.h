#pragma once
// Positions for a DisplayGraph, computed by Graphviz `dot` (top to bottom).
//
// Every node gets a size we choose (fixedsize, no labels passed to Graphviz), so the layout does
// not depend on the fonts installed and is identical on every machine; Qt draws the text later.
// Graphviz is not thread-safe even with one context per thread: every call into libgvc/cgraph in
// the process holds tessel::graphviz_mutex() (core/graph/export_dot.h), shared with the core.
#include <memory>
#include <vector>

#include "views/graph/display_graph.h"

namespace tessel::views {

struct LayoutPoint {
  double x = 0, y = 0;
};
struct LayoutRect {
  double x = 0, y = 0, width = 0, height = 0;  // top-left origin, y down (Qt's convention)
};

struct GraphLayout {
  std::vector<LayoutRect> nodes;  // index = DisplayGraph node index
  // Per edge: a cubic B-spline as Graphviz gives it: p0, then (c1, c2, p) triples.
  std::vector<std::vector<LayoutPoint>> edges;
  std::vector<LayoutRect> clusters;
  double width = 0, height = 0;
  double layout_ms = 0;
};
using GraphLayoutPtr = std::shared_ptr<const GraphLayout>;

// The size each kind of node is drawn at, in points (1/72 inch, Graphviz's unit = scene units).
LayoutRect node_box_size(const DisplayNode& n);

// Runs dot. Thread-safe (serialized); throws Error when Graphviz fails.
GraphLayoutPtr layout_graph(const DisplayGraph& g);

// The graph in DOT text with the same fixed sizes and readable labels (Export → DOT).
std::string display_graph_to_dot(const DisplayGraph& g);

}  // namespace tessel::views
