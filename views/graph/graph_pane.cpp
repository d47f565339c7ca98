#include "views/graph/graph_pane.h"

#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include "core/support/error.h"

namespace tessel::views {

// Wheel zooms around the cursor, drag pans.
class GraphView final : public QGraphicsView {
 public:
  using QGraphicsView::QGraphicsView;
  std::function<void()> on_view_changed = [] {};
  std::function<void()> on_user_moved = [] {};  // wheel or drag: stop re-placing the graph
  std::function<void()> on_resized = [] {};
  std::function<void(QPointF)> on_double_clicked = [](QPointF) {};
  std::function<void(QPoint, QPointF)> on_context_menu = [](QPoint, QPointF) {};

 protected:
  void wheelEvent(QWheelEvent* e) override {
    double factor = std::pow(1.0015, e->angleDelta().y());
    setTransformationAnchor(AnchorUnderMouse);
    scale(factor, factor);
    on_user_moved();
    on_view_changed();
  }
  void mousePressEvent(QMouseEvent* e) override {
    on_user_moved();
    QGraphicsView::mousePressEvent(e);
  }
  void mouseDoubleClickEvent(QMouseEvent* e) override { on_double_clicked(mapToScene(e->pos())); }
  void contextMenuEvent(QContextMenuEvent* e) override { on_context_menu(e->globalPos(), mapToScene(e->pos())); }
  void scrollContentsBy(int dx, int dy) override {
    QGraphicsView::scrollContentsBy(dx, dy);
    on_view_changed();
  }
  void resizeEvent(QResizeEvent* e) override {
    QGraphicsView::resizeEvent(e);
    on_resized();
    on_view_changed();
  }
};

// The whole graph, small, with the main view's visible area outlined; click or drag to move there.
// It is fitted whenever its viewport changes size: a view fitted while hidden measures a viewport
// that is not laid out yet, and showed the graph as a dot in an empty box.
class Minimap final : public QGraphicsView {
 public:
  Minimap(QGraphicsScene* scene, GraphView* main, QWidget* parent) : QGraphicsView(scene, parent), main_(main) {
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setFrameShape(QFrame::Box);
    setRenderHint(QPainter::Antialiasing);
    setFixedSize(160, 120);
  }
  void set_content(const QRectF& content) {
    content_ = content;
    refit();
  }

 protected:
  void resizeEvent(QResizeEvent* e) override {
    QGraphicsView::resizeEvent(e);
    refit();
  }
  void showEvent(QShowEvent* e) override {
    QGraphicsView::showEvent(e);
    refit();
  }
  void drawForeground(QPainter* p, const QRectF&) override {
    QRectF visible = main_->mapToScene(main_->viewport()->rect()).boundingRect();
    p->setPen(QPen(palette().color(QPalette::Highlight), 0));
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(40);
    p->setBrush(fill);
    p->drawRect(visible);
  }
  void mousePressEvent(QMouseEvent* e) override { main_->centerOn(mapToScene(e->pos())); }
  void mouseMoveEvent(QMouseEvent* e) override {
    if (e->buttons() & Qt::LeftButton) main_->centerOn(mapToScene(e->pos()));
  }

 private:
  void refit() {
    if (content_.isEmpty() || !isVisible()) return;
    fitInView(content_, Qt::KeepAspectRatio);
    viewport()->update();
  }
  GraphView* main_;
  QRectF content_;
};

namespace {

constexpr int kMinimapNodeThreshold = 25;  // below this the whole graph fits on screen anyway

QString format_bytes(int64_t b) {
  if (b >= (int64_t{1} << 20)) return QString::number(static_cast<double>(b) / (1 << 20), 'f', 2) + " MiB";
  if (b >= 1024) return QString::number(static_cast<double>(b) / 1024, 'f', 1) + " KiB";
  return QString::number(b) + " B";
}

}  // namespace

GraphPane::GraphPane(Selection* selection, QWidget* parent)
    : QWidget(parent), selection_(selection), colors_(GraphColors::from_palette(QApplication::palette())) {
  setObjectName("graph");
  scene_ = new QGraphicsScene(this);
  view_ = new GraphView(scene_, this);
  view_->setDragMode(QGraphicsView::ScrollHandDrag);
  view_->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  view_->setBackgroundBrush(colors_.background);
  minimap_ = new Minimap(scene_, view_, view_);
  minimap_->setBackgroundBrush(colors_.background);
  minimap_->hide();
  view_->on_view_changed = [this] { place_minimap(); };
  view_->on_user_moved = [this] { user_placed_ = true; };
  // Until the user moves it, the graph follows the view's size (the pane is often laid out, or
  // shown, only after the first graph is drawn: placing it once would leave it off-centre).
  view_->on_resized = [this] {
    if (shown_ && !user_placed_) place(false);
  };

  find_bar_ = new QWidget(this);
  auto* find_layout = new QHBoxLayout(find_bar_);
  find_layout->setContentsMargins(4, 2, 4, 2);
  find_edit_ = new QLineEdit(find_bar_);
  find_edit_->setPlaceholderText(tr("Find node by name or op"));
  find_edit_->setClearButtonEnabled(true);
  find_count_ = new QLabel(find_bar_);
  find_layout->addWidget(new QLabel(tr("Find:"), find_bar_));
  find_layout->addWidget(find_edit_, 1);
  find_layout->addWidget(find_count_);
  find_bar_->hide();
  connect(find_edit_, &QLineEdit::textChanged, this, [this](const QString& t) { find(t); });
  connect(find_edit_, &QLineEdit::returnPressed, this, [this] { find_next(); });

  breadcrumb_ = new QWidget(this);
  auto* crumb_layout = new QHBoxLayout(breadcrumb_);
  crumb_layout->setContentsMargins(4, 2, 4, 2);
  auto* back = new QToolButton(breadcrumb_);
  back->setObjectName("body_back");
  back->setText(tr("Back"));
  back->setToolTip(tr("Return to the enclosing graph"));
  breadcrumb_label_ = new QLabel(breadcrumb_);
  crumb_layout->addWidget(back);
  crumb_layout->addWidget(breadcrumb_label_, 1);
  breadcrumb_->hide();
  connect(back, &QToolButton::clicked, this, [this] { close_body(); });
  view_->on_double_clicked = [this](QPointF at) {
    for (QGraphicsItem* item : scene_->items(at))
      if (item->type() == NodeItem::kType && !static_cast<NodeItem*>(item)->node().bodies.empty()) {
        open_body(QString::fromStdString(static_cast<NodeItem*>(item)->node().name));
        return;
      }
  };
  view_->on_context_menu = [this](QPoint global, QPointF at) { node_context_menu(global, at); };

  status_ = new QLabel(this);
  status_->setContentsMargins(6, 2, 6, 2);
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long status never widens the window
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(find_bar_);
  layout->addWidget(breadcrumb_);
  layout->addWidget(view_, 1);
  layout->addWidget(status_);

  connect(scene_, &QGraphicsScene::selectionChanged, this, [this] { on_scene_selection(); });

  add_action(tr("Fit Graph"), QKeySequence(Qt::CTRL | Qt::Key_0), [this] { fit(); });
  add_action(tr("Zoom In"), QKeySequence::ZoomIn, [this] { view_->scale(1.25, 1.25); });
  add_action(tr("Zoom Out"), QKeySequence::ZoomOut, [this] { view_->scale(0.8, 0.8); });
  add_action(tr("Find Node…"), QKeySequence::Find, [this] {
    find_bar_->show();
    find_edit_->setFocus();
    find_edit_->selectAll();
  });
  add_action(tr("Find Next"), QKeySequence::FindNext, [this] { find_next(); });
  add_action(tr("Find Previous"), QKeySequence::FindPrevious, [this] { find_previous(); });
  add_action(
      tr("Show Shapes on Edges"), QKeySequence(Qt::CTRL | Qt::Key_E),
      [this] { set_edge_labels_visible(!edge_labels_); }, true, true);
  add_action(
      tr("Show Fusion Groups"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G),
      [this] { set_fusion_visible(!fusion_); }, true, true);
  add_action(
      tr("Show Data Layouts"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L),
      [this] { set_layouts_visible(!layouts_); }, true, true);
  auto* escape = new QAction(this);
  escape->setShortcut(Qt::Key_Escape);
  escape->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(escape, &QAction::triggered, find_bar_, &QWidget::hide);
  find_bar_->addAction(escape);
  update_status();
}

GraphPane::~GraphPane() {
  if (watcher_) watcher_->waitForFinished();
}

QAction* GraphPane::add_action(const QString& text, const QKeySequence& key, std::function<void()> fn, bool checkable,
                               bool checked) {
  auto* a = new QAction(text, this);
  a->setShortcut(key);
  a->setCheckable(checkable);
  a->setChecked(checked);
  connect(a, &QAction::triggered, this, [fn = std::move(fn)] { fn(); });
  actions_.push_back(a);
  return a;
}

void GraphPane::show_snapshot(StudioSnapshotPtr snapshot) {
  snapshot_ = std::move(snapshot);
  bodies_.clear();
  update_breadcrumb();
  new_snapshot_ = true;
  cache_.clear();
  shown_.reset();
  pass_ = -2;
  show_pass(selection_->pass());
}

void GraphPane::show_pass(int pass) {
  if (!snapshot_) return;
  pass = std::clamp(pass, -1, snapshot_->last_pass());
  if (pass == pass_ && shown_) return;
  pass_ = pass;
  bodies_.clear();
  update_breadcrumb();
  auto it = cache_.find(pass);
  if (it != cache_.end()) {
    draw(it->second);
    return;
  }
  request_layout();
}

void GraphPane::request_layout() {
  if (pending_pass_ == pass_) return;
  pending_pass_ = pass_;
  if (watcher_) {  // its result is stale: let it finish on its own, then go
    watcher_->disconnect(this);
    connect(watcher_, &QFutureWatcherBase::finished, watcher_, &QObject::deleteLater);
  }
  watcher_ = new QFutureWatcher<Shown>(this);
  StudioSnapshotPtr snap = snapshot_;
  int pass = pass_;
  status_->setText(tr("Laying out…"));
  connect(watcher_, &QFutureWatcherBase::finished, this, [this, w = watcher_, snap, pass] {
    w->deleteLater();
    if (w != watcher_) return;
    watcher_ = nullptr;
    pending_pass_ = -2;
    if (snap != snapshot_) return;
    try {
      Shown shown = w->result();
      cache_[pass] = shown;
      if (pass == pass_ && bodies_.empty()) draw(shown);
    } catch (const std::exception& e) {
      status_->setText(tr("Layout failed: %1").arg(QString::fromUtf8(e.what())));
    }
  });
  watcher_->setFuture(QtConcurrent::run([snap, pass] {
    auto display = std::make_shared<const DisplayGraph>(make_display_graph(*snap, pass));
    return Shown{display, layout_graph(*display)};
  }));
}

void GraphPane::draw(const Shown& shown) {
  shown_ = shown;
  syncing_selection_ = true;
  scene_->clear();
  syncing_selection_ = false;
  const DisplayGraph& g = *shown.display;
  const GraphLayout& l = *shown.layout;
  if (fusion_) {
    for (size_t c = 0; c < g.clusters.size() && c < l.clusters.size(); ++c) {
      const LayoutRect& r = l.clusters[c];
      QColor color = GraphColors::cluster_color(static_cast<int>(c), colors_.dark);
      auto* rect = scene_->addRect(QRectF(r.x, r.y, r.width, r.height), QPen(color.darker(130), 1.2), color);
      rect->setZValue(0);
      rect->setToolTip(QString::fromStdString(g.clusters[c].kernel_name + " (" + g.clusters[c].pattern + ")"));
      // Clicking the cluster's background selects the kernel (the inspector shows the group).
      rect->setFlag(QGraphicsItem::ItemIsSelectable);
      rect->setData(0, QString::fromStdString(g.clusters[c].kernel_name));
      rect->setData(2, QStringLiteral("cluster"));
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    DisplayNode node = g.nodes[i];
    if (!layouts_) node.layout_transform = false;
    auto* item = new NodeItem(node, l.nodes[i], &colors_);
    item->setData(0, QString::fromStdString(node.name));
    scene_->addItem(item);
  }
  std::vector<EdgeItem*> edges;
  for (size_t i = 0; i < g.edges.size(); ++i) {
    auto* item = new EdgeItem(g.edges[i], l.edges[i], &colors_);
    item->setToolTip(edge_tip(g.edges[i]));
    scene_->addItem(item);
    edges.push_back(item);
  }
  if (edge_labels_) add_edge_labels();
  mark_device_crossings(g, edges);
  if (fusion_) add_group_labels(g, l);
  content_ = QRectF(-20, -20, l.width + 40, l.height + 40);
  const bool with_minimap = g.nodes.size() > kMinimapNodeThreshold;
  minimap_wanted_ = with_minimap;
  // The minimap's corner is margin the view can scroll into, so no node has to stay beneath it.
  const double pad_x = with_minimap ? (minimap_->width() + 40) / kMinReadableScale : 0;
  const double pad_y = with_minimap ? (minimap_->height() + 40) / kMinReadableScale : 0;
  scene_->setSceneRect(content_.adjusted(0, 0, pad_x, pad_y));
  minimap_->set_content(content_);
  if (!selection_->node().isEmpty()) select_node(selection_->node());
  place(!new_snapshot_);
  new_snapshot_ = false;
  user_placed_ = false;
  if (!find_edit_->text().isEmpty()) find(find_edit_->text());
  update_status();
}

void GraphPane::place(bool keep_scale, bool follow_selection) {
  if (content_.isEmpty()) return;
  const QRect port = view_->viewport()->rect();
  if (port.width() < 50 || port.height() < 50) return;  // not laid out yet: placed again on resize
  const double fit_scale = std::min(port.width() / content_.width(), port.height() / content_.height());
  double scale = std::clamp(fit_scale, kMinReadableScale, 1.0);
  const double current = view_->transform().m11();
  if (keep_scale && current >= kMinReadableScale) scale = current;
  view_->setTransform(QTransform::fromScale(scale, scale));
  // Centred in the width the minimap leaves free, when the graph fits there.
  double free_width = port.width();
  if (minimap_wanted_ && content_.width() * scale <= port.width() - minimap_->width() - 40)
    free_width = port.width() - minimap_->width() - 40;
  const double shift = (port.width() - free_width) / (2 * scale);
  // The selected node stays where the user's attention is; else the top of the graph.
  const double half_height = port.height() / (2 * scale);
  double x = content_.center().x() + shift;
  double y = content_.height() <= 2 * half_height ? content_.center().y() : content_.top() + half_height;
  for (QGraphicsItem* item : follow_selection ? scene_->selectedItems() : QList<QGraphicsItem*>{})
    if (item->type() == NodeItem::kType) {
      x = item->sceneBoundingRect().center().x() + shift;
      y = item->sceneBoundingRect().center().y();
      break;
    }
  view_->centerOn(x, y);
  view_->on_view_changed();
}

void GraphPane::add_edge_labels() {
  QFont f = font();
  f.setPointSizeF(7);
  for (QGraphicsItem* item : scene_->items()) {
    if (item->type() != EdgeItem::kType) continue;
    auto* edge = static_cast<EdgeItem*>(item);
    std::string text = edge->edge().type;
    if (layouts_ && !edge->edge().layout.empty()) text += " {" + edge->edge().layout + "}";
    auto* label = scene_->addSimpleText(QString::fromStdString(text), f);
    label->setBrush(edge->edge().layout.empty() || !layouts_ ? colors_.muted : colors_.layout_transform.darker(120));
    label->setPos(edge->label_anchor() + QPointF(4, -6));
    label->setZValue(1.5);
    label->setData(1, QStringLiteral("edge-label"));
  }
}

// A group's kernel name goes in the first corner of its box that no edge label covers (edges
// enter a group at the top and leave at the bottom, near the middle, so a corner is usually
// free). Where every corner is taken, the edge labels in the way move beside the group label.
void GraphPane::add_group_labels(const DisplayGraph& g, const GraphLayout& l) {
  std::vector<QGraphicsItem*> edge_labels;
  for (QGraphicsItem* item : scene_->items())
    if (item->data(1).toString() == QLatin1String("edge-label")) edge_labels.push_back(item);
  auto covered = [&](const QRectF& box) {
    for (QGraphicsItem* e : edge_labels)
      if (e->sceneBoundingRect().intersects(box)) return true;
    return false;
  };
  std::vector<QRectF> group_boxes;
  for (size_t c = 0; c < g.clusters.size() && c < l.clusters.size(); ++c) {
    const QRectF r(l.clusters[c].x, l.clusters[c].y, l.clusters[c].width, l.clusters[c].height);
    auto* label = scene_->addSimpleText(QString::fromStdString(g.clusters[c].kernel_name));
    QFont f = label->font();
    f.setPointSizeF(7.5);
    f.setItalic(true);
    label->setFont(f);
    label->setBrush(colors_.text);
    label->setZValue(0.5);
    label->setData(1, QStringLiteral("group-label"));
    const QSizeF size = label->boundingRect().size();
    const std::vector<QPointF> corners = {{r.left() + 4, r.top() + 1},
                                          {r.right() - size.width() - 4, r.top() + 1},
                                          {r.left() + 4, r.bottom() - size.height() - 1},
                                          {r.right() - size.width() - 4, r.bottom() - size.height() - 1}};
    QPointF at = corners.front();
    for (const QPointF& corner : corners)
      if (!covered(QRectF(corner, size))) {
        at = corner;
        break;
      }
    label->setPos(at);
    group_boxes.emplace_back(at, size);
  }
  for (QGraphicsItem* e : edge_labels)
    for (bool moved = true; moved;) {
      moved = false;
      for (const QRectF& box : group_boxes)
        if (e->sceneBoundingRect().intersects(box)) {
          e->setPos(box.right() + 3, e->pos().y());  // right only: this ends
          moved = true;
        }
    }
}

void GraphPane::set_device_crossings(std::vector<DeviceCrossing> crossings) {
  if (crossings.empty() && crossings_.empty()) return;
  crossings_ = std::move(crossings);
  if (shown_) draw(*shown_);
}

// A distinct pen (dash-dot, a colour no other overlay uses), a label under the edge's own, and one
// tooltip line per copy: direction, bytes, the kernel it was made for.
void GraphPane::mark_device_crossings(const DisplayGraph& g, const std::vector<EdgeItem*>& edges) {
  if (crossings_.empty()) return;
  const QColor color = colors_.dark ? QColor(200, 150, 255) : QColor(120, 50, 170);
  QFont f = font();
  f.setPointSizeF(7);
  f.setBold(true);
  for (const auto& [index, on_edge] : crossing_edges(g, crossings_)) {
    EdgeItem* item = edges[static_cast<size_t>(index)];
    item->setPen(QPen(color, 2.4, Qt::DashDotLine));
    item->setZValue(1.2);
    item->setData(3, QStringLiteral("host-device"));
    QString tip = item->toolTip();
    for (const DeviceCrossing& c : on_edge) tip += "\n" + tr("host↔device: %1").arg(QString::fromStdString(c.text()));
    item->setToolTip(tip);
    auto* label = scene_->addSimpleText(tr("host↔device"), f);
    label->setBrush(color);
    label->setPos(item->label_anchor() + QPointF(4, 6));
    label->setZValue(1.5);
    label->setData(1, QStringLiteral("host-device-label"));
  }
}

QStringList GraphPane::host_device_edges() const {
  QStringList out;
  const DisplayGraph* g = display_graph();
  for (QGraphicsItem* item : scene_->items())
    if (item->type() == EdgeItem::kType && item->data(3).toString() == QLatin1String("host-device") && g) {
      const DisplayEdge& e = static_cast<EdgeItem*>(item)->edge();
      out << QString::fromStdString(g->nodes[static_cast<size_t>(e.from)].name + "→" +
                                    g->nodes[static_cast<size_t>(e.to)].name);
    }
  out.sort();
  return out;
}

QString GraphPane::edge_tip(const DisplayEdge& e) const {
  QString tip = QString::fromStdString(e.value + ": " + e.type);
  if (!e.layout.empty()) tip += QString::fromStdString(" layout " + e.layout);
  if (!e.blocked_rule.empty()) tip += "\n" + tr("not fused — %1").arg(QString::fromStdString(e.blocked_rule));
  // Memory overlay: the value's live range from the plan (ids refer to the optimized graph).
  if (snapshot_ && snapshot_->memory_plan && snapshot_->graph_at(pass_) == snapshot_->optimized) {
    const Graph& g = *snapshot_->optimized;
    for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
      if (g.value(v).name != e.value) continue;
      if (const PlannedTensor* t = snapshot_->memory_plan->find(v))
        tip += "\n" + tr("lives steps %1–%2 in storage %3 (%4)")
                          .arg(t->first_step)
                          .arg(t->last_step)
                          .arg(t->storage_id)
                          .arg(format_bytes(t->size_bytes));
      break;
    }
  }
  return tip;
}

QString GraphPane::edge_tooltip(const QString& value_name) const {
  for (QGraphicsItem* item : scene_->items())
    if (item->type() == EdgeItem::kType && static_cast<EdgeItem*>(item)->edge().value == value_name.toStdString())
      return item->toolTip();
  return {};
}

void GraphPane::update_status() {
  if (!snapshot_ || !shown_) {
    status_->setText(snapshot_ ? tr("Laying out…") : tr("No model open"));
    return;
  }
  QString pass = pass_ < 0 ? tr("imported graph")
                           : tr("after pass %1 (%2)")
                                 .arg(pass_ + 1)
                                 .arg(QString::fromStdString(snapshot_->passes[static_cast<size_t>(pass_)]->name));
  const DisplayGraph& g = *shown_->display;
  int ops = 0, added = 0, removed = 0;
  for (const DisplayNode& n : g.nodes) {
    if (n.kind != DisplayNode::Kind::kOp) continue;
    if (n.change == DisplayNode::Change::kRemoved)
      ++removed;
    else
      ++ops;
    if (n.change == DisplayNode::Change::kAdded) ++added;
  }
  if (!bodies_.empty()) pass = tr("body '%1'").arg(QString::fromStdString(bodies_.back().graph->name));
  QString text = tr("%1 · %2 ops").arg(pass).arg(ops);
  if (added || removed) text += tr(" · %1 added, %2 removed").arg(added).arg(removed);
  if (!g.clusters.empty()) text += tr(" · %1 kernels").arg(g.clusters.size());
  text += tr(" · layout %1 ms").arg(shown_->layout->layout_ms, 0, 'f', 1);
  status_->setText(text);
}

QString GraphPane::status_text() const { return status_->text(); }

const Graph* GraphPane::shown_graph() const {
  if (!bodies_.empty()) return bodies_.back().graph.get();
  return snapshot_ ? snapshot_->graph_at(pass_).get() : nullptr;
}

bool GraphPane::open_body(const QString& node, const QString& body) {
  const Graph* g = shown_graph();
  if (!g) return false;
  for (const Node& n : g->nodes) {
    if (n.name != node.toStdString()) continue;
    for (const auto& [field, graph] : node_subgraphs(n)) {
      if (!body.isEmpty() && field != body.toStdString()) continue;
      bodies_.push_back({n.name, field, graph});
      show_body();
      return true;
    }
  }
  return false;
}

void GraphPane::close_body() {
  if (bodies_.empty()) return;
  bodies_.pop_back();
  if (!bodies_.empty()) return show_body();
  update_breadcrumb();
  new_snapshot_ = true;  // place the outer graph afresh
  auto it = cache_.find(pass_);
  if (it != cache_.end())
    draw(it->second);
  else
    request_layout();
}

void GraphPane::show_body() {
  update_breadcrumb();
  auto display = std::make_shared<const DisplayGraph>(make_body_display_graph(bodies_.back().graph));
  new_snapshot_ = true;
  draw(Shown{display, layout_graph(*display)});
}

QStringList GraphPane::body_path() const {
  QStringList path;
  for (const OpenBody& b : bodies_) path << QString::fromStdString(b.node + " · " + b.field);
  return path;
}

void GraphPane::update_breadcrumb() {
  breadcrumb_->setVisible(!bodies_.empty());
  QString text = snapshot_ && snapshot_->imported ? QString::fromStdString(snapshot_->imported->name) : tr("graph");
  for (const QString& step : body_path()) text += QStringLiteral(" › ") + step;
  breadcrumb_label_->setText(text);
}

void GraphPane::node_context_menu(const QPoint& global_pos, const QPointF& scene_pos) {
  for (QGraphicsItem* item : scene_->items(scene_pos)) {
    if (item->type() != NodeItem::kType) continue;
    const DisplayNode& n = static_cast<NodeItem*>(item)->node();
    if (n.bodies.empty() && bodies_.empty()) return;
    QMenu menu(this);
    for (const std::string& field : n.bodies) {
      const QString node = QString::fromStdString(n.name), body = QString::fromStdString(field);
      menu.addAction(tr("Open %1").arg(body), this, [this, node, body] { open_body(node, body); });
    }
    if (!bodies_.empty()) menu.addAction(tr("Back to Enclosing Graph"), this, [this] { close_body(); });
    menu.exec(global_pos);
    return;
  }
  if (!bodies_.empty()) {
    QMenu menu(this);
    menu.addAction(tr("Back to Enclosing Graph"), this, [this] { close_body(); });
    menu.exec(global_pos);
  }
}

void GraphPane::on_scene_selection() {
  // Inside a body the shared selection (names of the model's graph) is left alone.
  if (syncing_selection_ || !bodies_.empty()) return;
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (item->data(2).toString() == QLatin1String("cluster")) {
      selection_->set_node({});
      selection_->set_kernel(item->data(0).toString());
      return;
    }
    if (item->type() != NodeItem::kType) continue;
    const DisplayNode& n = static_cast<NodeItem*>(item)->node();
    selection_->set_node(QString::fromStdString(n.name));
    const DisplayGraph* g = display_graph();
    if (g && n.cluster >= 0)
      selection_->set_kernel(QString::fromStdString(g->clusters[static_cast<size_t>(n.cluster)].kernel_name));
    return;
  }
}

void GraphPane::select_node(const QString& name) {
  syncing_selection_ = true;
  scene_->clearSelection();
  for (QGraphicsItem* item : scene_->items()) {
    if (item->type() == NodeItem::kType && item->data(0).toString() == name) {
      item->setSelected(true);
      view_->centerOn(item);
      break;
    }
  }
  syncing_selection_ = false;
}

void GraphPane::refresh_colors() {
  // The application palette, not ours: a theme switch reaches child widgets only later.
  colors_ = GraphColors::from_palette(QApplication::palette());
  view_->setBackgroundBrush(colors_.background);
  minimap_->setBackgroundBrush(colors_.background);
  if (shown_) draw(*shown_);
}

int GraphPane::find(const QString& text) {
  matches_.clear();
  match_index_ = -1;
  for (QGraphicsItem* item : scene_->items(Qt::AscendingOrder)) {
    if (item->type() != NodeItem::kType) continue;
    auto* node = static_cast<NodeItem*>(item);
    bool hit = !text.isEmpty() && (QString::fromStdString(node->node().name).contains(text, Qt::CaseInsensitive) ||
                                   QString::fromStdString(node->node().op).contains(text, Qt::CaseInsensitive));
    node->set_match(hit);
  }
  // Matches in drawing (topological) order, so next/previous walk the graph from top to bottom.
  if (shown_ && !text.isEmpty())
    for (const DisplayNode& n : shown_->display->nodes)
      if (QString::fromStdString(n.name).contains(text, Qt::CaseInsensitive) ||
          QString::fromStdString(n.op).contains(text, Qt::CaseInsensitive))
        matches_.push_back(QString::fromStdString(n.name));
  find_count_->setText(text.isEmpty() ? QString() : tr("%1 found").arg(matches_.size()));
  if (!matches_.isEmpty()) {
    match_index_ = 0;
    focus_match();
  }
  return static_cast<int>(matches_.size());
}

void GraphPane::find_next() {
  if (matches_.isEmpty()) return;
  match_index_ = (match_index_ + 1) % static_cast<int>(matches_.size());
  focus_match();
}

void GraphPane::find_previous() {
  if (matches_.isEmpty()) return;
  match_index_ = (match_index_ + static_cast<int>(matches_.size()) - 1) % static_cast<int>(matches_.size());
  focus_match();
}

void GraphPane::focus_match() {
  find_count_->setText(tr("%1 of %2").arg(match_index_ + 1).arg(matches_.size()));
  selection_->set_node(matches_[match_index_]);
  select_node(matches_[match_index_]);
}

QStringList GraphPane::matches() const { return matches_; }

void GraphPane::set_edge_labels_visible(bool on) {
  edge_labels_ = on;
  actions_[6]->setChecked(on);
  if (shown_) draw(*shown_);
}

void GraphPane::set_fusion_visible(bool on) {
  fusion_ = on;
  actions_[7]->setChecked(on);
  if (shown_) draw(*shown_);
}

void GraphPane::set_layouts_visible(bool on) {
  layouts_ = on;
  actions_[8]->setChecked(on);
  if (shown_) draw(*shown_);
}

void GraphPane::fit() {
  if (scene_->items().isEmpty()) return;
  // The whole graph up to natural size; a graph that would be unreadable whole is shown at the
  // smallest readable scale from its top (scroll, or use the minimap, for the rest).
  place(false, false);
}

// The minimap never covers a node: it takes the bottom-right corner of the view, else the
// bottom-left one, whichever shows no node now; when both do, it steps aside until the view moves.
void GraphPane::place_minimap() {
  if (!minimap_wanted_) {
    minimap_->hide();
    return;
  }
  const QPoint offset = view_->viewport()->pos();
  const int w = minimap_->width(), h = minimap_->height();
  const int y = view_->viewport()->height() - h - 12;
  for (int x : {view_->viewport()->width() - w - 12, 12}) {
    const QRect corner(x, y, w, h);
    bool free = true;
    for (QGraphicsItem* item : view_->items(corner))
      if (item->type() == NodeItem::kType) free = false;
    if (free) {
      minimap_->move(corner.topLeft() + offset);
      minimap_->show();
      minimap_->viewport()->update();
      return;
    }
  }
  minimap_->hide();
}

QGraphicsView* GraphPane::view() const { return view_; }
QWidget* GraphPane::minimap() const { return minimap_; }

void GraphPane::export_svg(const QString& path) {
  QSvgGenerator svg;
  svg.setFileName(path);
  QRectF r = scene_->sceneRect();
  svg.setSize(r.size().toSize());
  svg.setViewBox(QRectF(QPointF(0, 0), r.size()));
  svg.setTitle(tr("Tessel graph"));
  QPainter p;
  if (!p.begin(&svg)) throw Error(path.toStdString() + ": cannot write the SVG file");
  scene_->render(&p, QRectF(QPointF(0, 0), r.size()), r);
  p.end();
}

void GraphPane::export_png(const QString& path) {
  QRectF r = scene_->sceneRect();
  QImage image((r.size() * 2).toSize(), QImage::Format_ARGB32);
  image.fill(colors_.background);
  QPainter p(&image);
  p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  scene_->render(&p, QRectF(QPointF(0, 0), r.size() * 2), r);
  p.end();
  if (!image.save(path, "PNG")) throw Error(path.toStdString() + ": cannot write the PNG file");
}

void GraphPane::export_dot(const QString& path) {
  if (!shown_) throw Error("no graph is shown");
  std::string dot = display_graph_to_dot(*shown_->display);
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(dot.data(), static_cast<qint64>(dot.size())) < 0 || !f.commit())
    throw Error(path.toStdString() + ": cannot write the DOT file");
}

bool GraphPane::wait_for_layout(int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while ((watcher_ || !shown_) && snapshot_ && t.elapsed() < timeout_ms)
    QApplication::processEvents(QEventLoop::AllEvents, 20);
  return shown_.has_value() && !watcher_;
}

}  // namespace tessel::views
