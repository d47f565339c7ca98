#include "views/graph/graph_items.h"

#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

namespace tessel::views {

GraphColors GraphColors::from_palette(const QPalette& palette) {
  GraphColors c;
  c.background = palette.color(QPalette::Base);
  c.dark = c.background.lightness() < 128;
  c.text = palette.color(QPalette::Text);
  c.muted = c.dark ? QColor(150, 150, 160) : QColor(110, 110, 120);
  c.node_fill = c.dark ? QColor(52, 58, 70) : QColor(246, 248, 252);
  c.node_border = c.dark ? QColor(120, 130, 150) : QColor(90, 100, 120);
  c.input_fill = c.dark ? QColor(40, 70, 60) : QColor(226, 244, 234);
  c.added = QColor(46, 160, 67);
  c.removed = c.dark ? QColor(120, 120, 120) : QColor(170, 170, 170);
  c.layout_transform = QColor(230, 140, 20);
  c.selected = palette.color(QPalette::Highlight);
  c.edge = c.dark ? QColor(150, 160, 180) : QColor(95, 105, 125);
  c.blocked_edge = QColor(210, 60, 60);
  c.match = QColor(240, 200, 40);
  return c;
}

QColor GraphColors::cluster_color(int index, bool dark) {
  // Golden-angle hue steps: neighbouring clusters never get similar colours.
  int hue = (index * 137) % 360;
  return QColor::fromHsv(hue, dark ? 120 : 70, dark ? 90 : 250, dark ? 150 : 170);
}

NodeItem::NodeItem(const DisplayNode& node, const LayoutRect& box, const GraphColors* colors)
    : node_(node), rect_(box.x, box.y, box.width, box.height), colors_(colors) {
  setFlag(ItemIsSelectable);
  setAcceptHoverEvents(true);
  setZValue(2);
  QString tip = QString::fromStdString(node_.op + " " + node_.name);
  if (!node_.detail.empty()) tip += "\n" + QString::fromStdString(node_.detail);
  if (node_.opaque) tip += "\nopaque: Tessel cannot compile or run this node";
  for (const std::string& body : node_.bodies)
    tip += "\nholds a graph (" + QString::fromStdString(body) + "): double-click to open it";
  if (node_.change == DisplayNode::Change::kAdded) tip += "\nadded by this pass";
  if (node_.change == DisplayNode::Change::kRemoved) tip += "\nremoved by this pass";
  setToolTip(tip);
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const GraphColors& c = *colors_;
  QColor fill = node_.kind == DisplayNode::Kind::kOp ? c.node_fill : c.input_fill;
  QColor border = c.node_border;
  Qt::PenStyle style = Qt::SolidLine;
  double width = 1.2;
  if (node_.layout_transform) border = c.layout_transform, width = 2.5;
  if (node_.opaque) border = c.removed, style = Qt::DashDotLine, width = 2.5;
  if (node_.change == DisplayNode::Change::kAdded) border = c.added, width = 3;
  if (node_.change == DisplayNode::Change::kRemoved) border = c.removed, style = Qt::DashLine, p->setOpacity(0.55);
  if (match_) fill = c.match.lighter(c.dark ? 60 : 160);
  if (isSelected()) border = c.selected, width = 3.5;
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(QPen(border, width, style));
  p->setBrush(fill);
  double radius = node_.kind == DisplayNode::Kind::kOp ? 6 : rect_.height() / 2;
  p->drawRoundedRect(rect_, radius, radius);
  if (!node_.bodies.empty()) {  // a node that holds graphs: a second outline inside the first
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(rect_.adjusted(3, 3, -3, -3), radius - 2, radius - 2);
  }

  QRectF text = rect_.adjusted(6, 3, -6, -3);
  QFont font = p->font();
  font.setPointSizeF(9);
  font.setBold(true);
  p->setFont(font);
  p->setPen(node_.change == DisplayNode::Change::kRemoved ? c.muted : c.text);
  QFontMetricsF fm(font);
  auto elide = [&](const std::string& s) {
    return fm.elidedText(QString::fromStdString(s), Qt::ElideMiddle, text.width());
  };
  double line = fm.height();
  p->drawText(QRectF(text.x(), text.y(), text.width(), line), Qt::AlignHCenter, elide(node_.op));
  font.setBold(false);
  font.setPointSizeF(8);
  p->setFont(font);
  QFontMetricsF small(font);
  auto elide_small = [&](const std::string& s) {
    return small.elidedText(QString::fromStdString(s), Qt::ElideMiddle, text.width());
  };
  p->setPen(c.muted);
  p->drawText(QRectF(text.x(), text.y() + line, text.width(), small.height()), Qt::AlignHCenter,
              elide_small(node_.name));
  if (!node_.detail.empty())
    p->drawText(QRectF(text.x(), text.y() + line + small.height(), text.width(), small.height()), Qt::AlignHCenter,
                elide_small(node_.detail));
}

namespace {

QPainterPath spline_path(const std::vector<LayoutPoint>& pts) {
  QPainterPath path;
  if (pts.empty()) return path;
  path.moveTo(pts[0].x, pts[0].y);
  size_t k = 1;
  for (; k + 2 < pts.size(); k += 3)
    path.cubicTo(pts[k].x, pts[k].y, pts[k + 1].x, pts[k + 1].y, pts[k + 2].x, pts[k + 2].y);
  for (; k < pts.size(); ++k) path.lineTo(pts[k].x, pts[k].y);  // the arrow tip, if any
  return path;
}

}  // namespace

EdgeItem::EdgeItem(const DisplayEdge& edge, const std::vector<LayoutPoint>& spline, const GraphColors* colors)
    : edge_(edge) {
  QPainterPath path = spline_path(spline);
  // Arrowhead at the end, pointing along the last segment.
  if (spline.size() >= 2) {
    QPointF tip(spline.back().x, spline.back().y);
    QPointF from(spline[spline.size() - 2].x, spline[spline.size() - 2].y);
    QLineF dir(tip, from);
    if (dir.length() > 0.1) {
      dir.setLength(8);
      QLineF left = dir, right = dir;
      left.setAngle(dir.angle() + 25);
      right.setAngle(dir.angle() - 25);
      path.moveTo(left.p2());
      path.lineTo(tip);
      path.lineTo(right.p2());
    }
  }
  setPath(path);
  label_anchor_ = path.pointAtPercent(0.5);
  QColor color = edge.blocked_rule.empty() ? colors->edge : colors->blocked_edge;
  setPen(QPen(color, edge.blocked_rule.empty() ? 1.3 : 2.0, edge.ghost ? Qt::DashLine : Qt::SolidLine));
  if (edge.ghost) setOpacity(0.5);
  setZValue(1);
  setAcceptHoverEvents(true);
}

QPainterPath EdgeItem::shape() const {
  QPainterPathStroker stroker;
  stroker.setWidth(8);
  return stroker.createStroke(path());
}

}  // namespace tessel::views
