#pragma once
// The graph pane: the graph after the selected pass, laid out by Graphviz on a worker thread and
// drawn in a QGraphicsView, with zoom, pan, fit, a minimap for large graphs, find (Ctrl+F) and the
// fusion / layout / shape overlays. Layouts are cached per (snapshot, pass), so stepping through
// passes that were already shown only redraws.
//
// Placement: a graph is never shown smaller than kMinReadableScale (labels stay legible); a new
// graph or pass shows the selected node, else the graph's top, centred, and the view follows the
// pane's size until the user zooms or pans. Fit Graph fits up to natural size, and scrolls where
// the whole graph would be unreadable. The minimap (large graphs) sits in a margin the scene is
// padded with, so no node has to stay under it.
//
// Nested graphs: a node with bodies (If's branches, Loop's and Scan's body) is drawn with a double
// border; double-clicking it, or "Open body" in its context menu, shows the body in the same view,
// and a breadcrumb above it ("main › Loop_0 · body") with a Back button returns. Bodies are small
// and laid out at once; a new snapshot or pass returns to the top.
//
// The pane writes the clicked node to the shared Selection; it never talks to other panes. Its
// actions (fit, find, toggles, export) are exposed for the window's menus and command palette.
#include <QFutureWatcher>
#include <QWidget>
#include <map>

#include "views/common/selection.h"
#include "views/common/snapshot.h"
#include "views/graph/device_crossings.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_layout.h"

class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QLineEdit;
class QAction;

namespace tessel::views {

class GraphView;
class Minimap;

class GraphPane final : public QWidget {
 public:
  explicit GraphPane(Selection* selection, QWidget* parent = nullptr);
  ~GraphPane() override;

  void show_snapshot(StudioSnapshotPtr snapshot);  // shows selection->pass()
  void show_pass(int pass);
  void select_node(const QString& name);  // highlights and centres it; empty clears
  void refresh_colors();                  // after a theme change
  // Host↔device edges of the last run or profile on a device target (device_crossings.h): drawn
  // with their own pen, a "host↔device" label and the direction and bytes in the tooltip. Empty:
  // none (a CPU target, or a new compile).
  void set_device_crossings(std::vector<DeviceCrossing> crossings);

  // Find: nodes whose name or op contains `text` (case-insensitive). Returns the match count and
  // selects the first.
  int find(const QString& text);
  void find_next();
  void find_previous();
  QStringList matches() const;

  void set_edge_labels_visible(bool on);
  void set_fusion_visible(bool on);
  void set_layouts_visible(bool on);
  void fit();

  // Opens `body` (an attribute name; empty: the node's first) of node `node` of the graph shown.
  // False when the node has no such body.
  bool open_body(const QString& node, const QString& body = {});
  void close_body();              // back to the enclosing graph
  QStringList body_path() const;  // "Loop_0 · body", ... from the outermost; empty at the top

  static constexpr double kMinReadableScale = 0.55;

  // Throw Error when the file cannot be written.
  void export_svg(const QString& path);
  void export_png(const QString& path);
  void export_dot(const QString& path);

  QList<QAction*> pane_actions() const { return actions_; }
  bool wait_for_layout(int timeout_ms);  // tests: processes events until the pending layout is drawn
  int shown_pass() const { return pass_; }
  const DisplayGraph* display_graph() const { return shown_ ? shown_->display.get() : nullptr; }
  QString edge_tooltip(const QString& value_name) const;  // "" when no such edge is drawn
  QStringList host_device_edges() const;                  // "from→to" node names of the marked edges
  QString status_text() const;
  QGraphicsScene* scene() const { return scene_; }
  QGraphicsView* view() const;
  QWidget* minimap() const;

 private:
  struct Shown {
    std::shared_ptr<const DisplayGraph> display;
    GraphLayoutPtr layout;
  };
  void request_layout();
  void draw(const Shown& shown);
  // Places the view: `keep_scale` keeps the user's zoom (when readable); the selected node if it is
  // drawn, else the graph's top, centred in the part of the view the minimap leaves free.
  void place(bool keep_scale, bool follow_selection = true);
  void place_minimap();
  void add_edge_labels();
  void mark_device_crossings(const DisplayGraph& g, const std::vector<EdgeItem*>& edges);
  void add_group_labels(const DisplayGraph& g, const GraphLayout& l);
  QString edge_tip(const DisplayEdge& e) const;
  void update_status();
  void on_scene_selection();
  void focus_match();
  const Graph* shown_graph() const;  // the top graph at the pass, or the innermost open body
  void show_body();
  void update_breadcrumb();
  void node_context_menu(const QPoint& global_pos, const QPointF& scene_pos);
  QAction* add_action(const QString& text, const QKeySequence& key, std::function<void()> fn, bool checkable = false,
                      bool checked = false);

  Selection* selection_;
  StudioSnapshotPtr snapshot_;
  int pass_ = -1;
  std::map<int, Shown> cache_;  // per pass of snapshot_
  std::optional<Shown> shown_;
  QFutureWatcher<Shown>* watcher_ = nullptr;
  int pending_pass_ = -2;
  GraphColors colors_;
  QGraphicsScene* scene_;
  GraphView* view_;
  Minimap* minimap_;
  QWidget* find_bar_;
  QLineEdit* find_edit_;
  QLabel* find_count_;
  QLabel* status_;
  QList<QAction*> actions_;
  struct OpenBody {
    std::string node, field;
    GraphPtr graph;
  };
  std::vector<OpenBody> bodies_;  // the open bodies, outermost first
  QWidget* breadcrumb_;
  QLabel* breadcrumb_label_;
  bool edge_labels_ = true, fusion_ = true, layouts_ = true;
  std::vector<DeviceCrossing> crossings_;
  QStringList matches_;
  int match_index_ = -1;
  bool syncing_selection_ = false;
  QRectF content_;               // the drawn graph, without the minimap's margin
  bool new_snapshot_ = true;     // the next draw is of another model or compile
  bool user_placed_ = false;     // the user zoomed or panned since the last draw
  bool minimap_wanted_ = false;  // a graph large enough to need one
};

}  // namespace tessel::views
