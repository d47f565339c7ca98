// What the graph pane draws: the display graph of a pass (added nodes, removed ones ghosted,
// fusion clusters, blocked edges), a deterministic Graphviz layout, find, and export.
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QSvgRenderer>
#include <QtTest>

#include "studio_fixtures.h"
#include "views/graph/display_graph.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_pane.h"

using namespace tessel;
using namespace tessel::views;

class GraphPaneTest : public QObject {
  Q_OBJECT

 private:
  StudioSnapshotPtr snap_;

  static int count(const DisplayGraph& g, DisplayNode::Change change, const std::string& op = {}) {
    int n = 0;
    for (const DisplayNode& node : g.nodes) n += node.change == change && (op.empty() || node.op == op);
    return n;
  }

 private Q_SLOTS:
  void initTestCase() {
    snap_ = test::compile_now(test::sample_model());
    QVERIFY(snap_ && !snap_->has_errors());
  }

  void imported_graph_has_every_op_input_and_output() {
    DisplayGraph g = make_display_graph(*snap_, -1);
    int ops = 0, inputs = 0, outputs = 0;
    for (const DisplayNode& n : g.nodes) {
      ops += n.kind == DisplayNode::Kind::kOp;
      inputs += n.kind == DisplayNode::Kind::kInput;
      outputs += n.kind == DisplayNode::Kind::kOutput;
      QCOMPARE(n.change, DisplayNode::Change::kSame);
    }
    QCOMPARE(ops, 11);
    QCOMPARE(inputs, 1);
    QCOMPARE(outputs, 1);
    // The residual: the graph input feeds the first conv and the add.
    int from_input = 0;
    for (const DisplayEdge& e : g.edges) from_input += e.value == "input";
    QCOMPARE(from_input, 2);
    for (const DisplayEdge& e : g.edges) QVERIFY(!e.type.empty());
    QVERIFY(g.clusters.empty());  // fusion belongs to the optimized graph only
  }

  void batch_norm_folding_ghosts_the_removed_nodes() {
    int simplify = test::pass_index(*snap_, "simplify_inference");
    QVERIFY(simplify >= 0);
    QVERIFY(snap_->passes[static_cast<size_t>(simplify)]->changed);
    DisplayGraph g = make_display_graph(*snap_, simplify);
    // Both BatchNormalization nodes were folded into their convs: still drawn, as removed.
    QCOMPARE(count(g, DisplayNode::Change::kRemoved, "BatchNormalization"), 2);
    QCOMPARE(count(g, DisplayNode::Change::kSame, "BatchNormalization"), 0);
    for (const DisplayEdge& e : g.edges) {
      bool touches_removed = g.nodes[static_cast<size_t>(e.from)].change == DisplayNode::Change::kRemoved ||
                             g.nodes[static_cast<size_t>(e.to)].change == DisplayNode::Change::kRemoved;
      QCOMPARE(e.ghost, touches_removed);
    }
    // The layout pass inserts layout_transform nodes: drawn as added.
    int layout_pass = test::pass_index(*snap_, "transform_layout");
    QVERIFY(layout_pass >= 0);
    QVERIFY(snap_->passes[static_cast<size_t>(layout_pass)]->changed);
    DisplayGraph with_transforms = make_display_graph(*snap_, layout_pass);
    QVERIFY(count(with_transforms, DisplayNode::Change::kAdded, "layout_transform") >= 1);
    for (const DisplayNode& n : with_transforms.nodes)
      if (n.op == "layout_transform") QVERIFY(n.layout_transform);
    // A pass that changed nothing shows nothing added or removed.
    int unchanged = -1;
    for (size_t i = 0; i < snap_->passes.size(); ++i)
      if (!snap_->passes[i]->changed) unchanged = static_cast<int>(i);
    QVERIFY(unchanged >= 0);
    DisplayGraph same = make_display_graph(*snap_, unchanged);
    QCOMPARE(count(same, DisplayNode::Change::kAdded) + count(same, DisplayNode::Change::kRemoved), 0);
  }

  void final_graph_has_one_cluster_per_fusion_group() {
    DisplayGraph g = make_display_graph(*snap_, snap_->last_pass());
    QVERIFY(snap_->fusion);
    QCOMPARE(g.clusters.size(), snap_->fusion->groups.size());
    for (const DisplayNode& n : g.nodes)
      if (n.kind == DisplayNode::Kind::kOp) QVERIFY2(n.cluster >= 0, n.name.c_str());
    int blocked = 0;
    for (const DisplayEdge& e : g.edges) blocked += !e.blocked_rule.empty();
    QCOMPARE(blocked, static_cast<int>(snap_->fusion->unfused_edges.size()));
  }

  void layout_is_deterministic_top_down_and_uses_our_node_sizes() {
    DisplayGraph g = make_display_graph(*snap_, snap_->last_pass());
    GraphLayoutPtr a = layout_graph(g);
    // Other layouts in between move the allocator around: the result must not depend on it.
    for (int k = 0; k < 3; ++k) layout_graph(make_display_graph(*snap_, k - 1));
    std::vector<std::string> pad(100, std::string(64, 'x'));
    GraphLayoutPtr b = layout_graph(g);
    QCOMPARE(a->nodes.size(), g.nodes.size());
    QCOMPARE(a->edges.size(), g.edges.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      QCOMPARE(a->nodes[i].x, b->nodes[i].x);
      QCOMPARE(a->nodes[i].y, b->nodes[i].y);
      LayoutRect size = node_box_size(g.nodes[i]);
      QVERIFY(std::abs(a->nodes[i].width - size.width) < 0.5);
      QVERIFY(std::abs(a->nodes[i].height - size.height) < 0.5);
      for (size_t j = 0; j < i; ++j) {
        QRectF ri(a->nodes[i].x, a->nodes[i].y, a->nodes[i].width, a->nodes[i].height);
        QRectF rj(a->nodes[j].x, a->nodes[j].y, a->nodes[j].width, a->nodes[j].height);
        QVERIFY(!ri.intersects(rj));
      }
    }
    for (size_t e = 0; e < g.edges.size(); ++e) {
      QVERIFY(a->nodes[static_cast<size_t>(g.edges[e].from)].y < a->nodes[static_cast<size_t>(g.edges[e].to)].y);
      QVERIFY(a->edges[e].size() >= 4);  // p0 + at least one bezier segment
    }
    // Each cluster's box encloses its nodes.
    for (size_t c = 0; c < g.clusters.size(); ++c) {
      QRectF box(a->clusters[c].x, a->clusters[c].y, a->clusters[c].width, a->clusters[c].height);
      for (int n : g.clusters[c].nodes) {
        const LayoutRect& r = a->nodes[static_cast<size_t>(n)];
        QVERIFY(box.contains(QRectF(r.x, r.y, r.width, r.height)));
      }
    }
  }

  void pane_finds_nodes_and_steps_through_matches() {
    Selection selection;
    GraphPane pane(&selection);
    pane.resize(900, 700);
    selection.set_pass(snap_->last_pass());
    pane.show_snapshot(snap_);
    QVERIFY(pane.wait_for_layout(30000));
    QCOMPARE(pane.find("relu"), 2);  // /layer1/relu and /layer1/relu_1
    QCOMPARE(selection.node(), QString("/layer1/relu/Relu"));
    pane.find_next();
    QCOMPARE(selection.node(), QString("/layer1/relu_1/Relu"));
    pane.find_next();  // wraps
    QCOMPARE(selection.node(), QString("/layer1/relu/Relu"));
    pane.find_previous();
    QCOMPARE(selection.node(), QString("/layer1/relu_1/Relu"));
    int selected = 0;
    for (QGraphicsItem* item : pane.scene()->selectedItems()) {
      QCOMPARE(item->type(), static_cast<int>(NodeItem::kType));
      QCOMPARE(static_cast<NodeItem*>(item)->node().name, std::string("/layer1/relu_1/Relu"));
      ++selected;
    }
    QCOMPARE(selected, 1);
    QCOMPARE(pane.find("no-such-thing"), 0);
  }

  void pane_explains_unfused_edges_and_live_ranges_on_hover() {
    Selection selection;
    GraphPane pane(&selection);
    selection.set_pass(snap_->last_pass());
    pane.show_snapshot(snap_);
    QVERIFY(pane.wait_for_layout(30000));
    QVERIFY(!snap_->fusion->unfused_edges.empty());
    const UnfusedEdge& u = snap_->fusion->unfused_edges.front();
    QString value = QString::fromStdString(snap_->optimized->value(u.value).name);
    QString tip = pane.edge_tooltip(value);
    QVERIFY2(tip.contains("not fused") && tip.contains(QString::fromStdString(std::string(fusion_block_name(u.rule)))),
             qPrintable(tip));
    if (snap_->memory_plan && snap_->memory_plan->find(u.value)) QVERIFY2(tip.contains("lives steps"), qPrintable(tip));
  }

  void clicking_a_node_selects_it_and_its_kernel() {
    Selection selection;
    GraphPane pane(&selection);
    selection.set_pass(snap_->last_pass());
    pane.show_snapshot(snap_);
    QVERIFY(pane.wait_for_layout(30000));
    for (QGraphicsItem* item : pane.scene()->items()) {
      if (item->type() != NodeItem::kType || static_cast<NodeItem*>(item)->node().op != "Add") continue;
      item->setSelected(true);
      break;
    }
    QCOMPARE(selection.node(), QString("/layer1/Add"));
    const Graph& g = *snap_->optimized;
    for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n)
      if (g.nodes[static_cast<size_t>(n)].name == "/layer1/Add")
        QCOMPARE(selection.kernel(), QString::fromStdString(snap_->fusion->group_of(n).kernel_name));
  }

  void clicking_a_cluster_selects_its_kernel() {
    Selection selection;
    GraphPane pane(&selection);
    selection.set_pass(snap_->last_pass());
    pane.show_snapshot(snap_);
    QVERIFY(pane.wait_for_layout(30000));
    selection.set_node("/layer1/Add");
    for (QGraphicsItem* item : pane.scene()->items())
      if (item->data(2).toString() == "cluster" &&
          item->data(0).toString().toStdString() == snap_->fusion->groups.back().kernel_name) {
        item->setSelected(true);
        break;
      }
    QCOMPARE(selection.kernel(), QString::fromStdString(snap_->fusion->groups.back().kernel_name));
    QVERIFY(selection.node().isEmpty());
  }

  void exports_svg_png_and_dot() {
    Selection selection;
    GraphPane pane(&selection);
    selection.set_pass(snap_->last_pass());
    pane.show_snapshot(snap_);
    QVERIFY(pane.wait_for_layout(30000));
    QTemporaryDir dir;
    pane.export_svg(dir.filePath("g.svg"));
    pane.export_png(dir.filePath("g.png"));
    pane.export_dot(dir.filePath("g.dot"));
    QSvgRenderer svg(dir.filePath("g.svg"));
    QVERIFY(svg.isValid());
    QImage png(dir.filePath("g.png"));
    QCOMPARE(png.size(), (pane.scene()->sceneRect().size() * 2).toSize());
    QVERIFY(test::distinct_colors(png) > 8);
    QFile dot(dir.filePath("g.dot"));
    QVERIFY(dot.open(QIODevice::ReadOnly));
    QString text = dot.readAll();
    QVERIFY(text.startsWith("digraph"));
    for (const FusionGroup& group : snap_->fusion->groups)
      QVERIFY(text.contains(QString::fromStdString(group.kernel_name)));
    QCOMPARE(text.count("subgraph cluster_"), static_cast<int>(snap_->fusion->groups.size()));
    QVERIFY_THROWS_EXCEPTION(Error, pane.export_png("/nonexistent-dir/x.png"));
  }
};

QTEST_MAIN(GraphPaneTest)
#include "test_graph_pane.moc"
