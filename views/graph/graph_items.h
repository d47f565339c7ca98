#pragma once
// The scene items the graph pane draws: op boxes, edges with their labels, fusion clusters. Colours
// come from GraphColors so light and dark themes share one drawing code.
#include <QColor>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QPalette>

#include "views/graph/display_graph.h"
#include "views/graph/graph_layout.h"

namespace tessel::views {

struct GraphColors {
  QColor background, text, muted, node_fill, node_border, input_fill, added, removed, layout_transform, selected, edge,
      blocked_edge, match;
  static GraphColors from_palette(const QPalette& palette);
  static QColor cluster_color(int index, bool dark);  // distinct hues, stable per cluster index
  bool dark = false;
};

class NodeItem final : public QGraphicsItem {
 public:
  NodeItem(const DisplayNode& node, const LayoutRect& box, const GraphColors* colors);
  QRectF boundingRect() const override { return rect_.adjusted(-3, -3, 3, 3); }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const DisplayNode& node() const { return node_; }
  void set_match(bool match) {
    match_ = match;
    update();
  }
  static constexpr int kType = UserType + 1;
  int type() const override { return kType; }

 private:
  DisplayNode node_;
  QRectF rect_;
  const GraphColors* colors_;
  bool match_ = false;
};

class EdgeItem final : public QGraphicsPathItem {
 public:
  EdgeItem(const DisplayEdge& edge, const std::vector<LayoutPoint>& spline, const GraphColors* colors);
  QPainterPath shape() const override;  // wider than the stroke, so hovering is easy
  const DisplayEdge& edge() const { return edge_; }
  QPointF label_anchor() const { return label_anchor_; }
  static constexpr int kType = UserType + 2;
  int type() const override { return kType; }

 private:
  DisplayEdge edge_;
  QPointF label_anchor_;
};

}  // namespace tessel::views
