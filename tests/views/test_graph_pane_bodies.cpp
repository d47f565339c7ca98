// Nested graphs in the graph pane: a Loop node is drawn as holding a body, double-clicking it shows
// the body (its inputs, the value it reads from outside, its nodes), the breadcrumb says where one
// is, Back returns to the model's graph; the inspector lists the body's inputs and outputs.
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QLabel>
#include <QToolButton>
#include <QtTest>

#include "core/graph/op_table.h"
#include "views/graph/display_graph.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_pane.h"
#include "views/inspector/inspector_model.h"

using namespace tessel;
using namespace tessel::views;

namespace {

Attrs attrs_of(const std::string& op, const AttrMap& map) { return get_op(op).parse_attrs(op, map); }

// main: y = Loop(M = 3, cond absent, acc) with body (iter, cond, acc; reads scale) ->
// (cond, acc * scale); `scale` is a graph input of main.
StudioSnapshotPtr loop_snapshot() {
  Graph body;
  body.name = "scale_body";
  body.add_input("iter", {DataType::kInt64, {}});
  const ValueId cond = body.add_input("cond", {DataType::kBool, {}});
  const ValueId acc = body.add_input("acc", {DataType::kFloat32, {2}});
  const ValueId scale = body.add_input("scale", {DataType::kFloat32, {2}});
  body.captured_inputs = 1;
  body.outputs = {cond, body.add_node1("times", get_op("Mul"), attrs_of("Mul", {}), {acc, scale})};
  infer_types(body);

  auto g = std::make_shared<Graph>();
  g->name = "main";
  const ValueId m = g->add_constant("M", Tensor::scalar<int64_t>(3));
  const ValueId x = g->add_input("x", {DataType::kFloat32, {2}});
  const ValueId s = g->add_input("scale", {DataType::kFloat32, {2}});
  g->outputs = g->add_node("loop", get_op("Loop"), attrs_of("Loop", {{"body", std::make_shared<const Graph>(body)}}),
                           {m, kNoValue, x, s}, 1, {"y"});
  infer_types(*g);
  auto snap = std::make_shared<StudioSnapshot>();
  snap->model_path = "loop.onnx";
  snap->imported = g;
  return snap;
}

bool draws_node(const GraphPane& pane, const std::string& name) {
  const DisplayGraph* g = pane.display_graph();
  return g && g->find(name) >= 0;
}

}  // namespace

class GraphPaneBodiesTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void loop_node_is_marked_as_holding_a_body() {
    const DisplayGraph g = make_display_graph(*loop_snapshot(), -1);
    const int loop = g.find("loop");
    QVERIFY(loop >= 0);
    QVERIFY(g.nodes[static_cast<size_t>(loop)].bodies == std::vector<std::string>{"body"});
  }

  void double_click_opens_the_body_and_back_returns() {
    Selection selection;
    GraphPane pane(&selection);
    pane.resize(900, 700);
    pane.show();
    pane.show_snapshot(loop_snapshot());
    QVERIFY(pane.wait_for_layout(30000));
    QVERIFY(draws_node(pane, "loop"));
    auto* breadcrumb = pane.findChild<QToolButton*>("body_back");
    QVERIFY(breadcrumb && !breadcrumb->isVisible());

    // Double-click the Loop node where the view draws it.
    QGraphicsItem* loop_item = nullptr;
    for (QGraphicsItem* item : pane.scene()->items())
      if (item->type() == NodeItem::kType && static_cast<NodeItem*>(item)->node().name == "loop") loop_item = item;
    QVERIFY(loop_item);
    pane.view()->centerOn(loop_item);
    const QPoint at = pane.view()->mapFromScene(loop_item->sceneBoundingRect().center());
    QTest::mouseDClick(pane.view()->viewport(), Qt::LeftButton, {}, at);

    QCOMPARE(pane.body_path(), QStringList{"loop · body"});
    QVERIFY(breadcrumb->isVisible());
    QVERIFY(draws_node(pane, "times"));
    QVERIFY(draws_node(pane, "scale"));  // the captured outer value is one of the body's inputs
    QVERIFY(!draws_node(pane, "loop"));
    QVERIFY2(pane.status_text().contains("body 'scale_body'"), qPrintable(pane.status_text()));

    QTest::mouseClick(breadcrumb, Qt::LeftButton);
    QVERIFY(pane.body_path().isEmpty());
    QVERIFY(pane.wait_for_layout(30000));
    QVERIFY(draws_node(pane, "loop"));
    QVERIFY(!breadcrumb->isVisible());

    QVERIFY(!pane.open_body("loop", "then_branch"));  // a Loop has no such body
    QVERIFY(pane.open_body("loop"));
    pane.show_pass(-1);  // the same pass: the body stays open
    QCOMPARE(pane.body_path().size(), 1);
  }

  void inspector_lists_the_body_inputs_and_outputs() {
    InspectorModel model;
    model.show_node(loop_snapshot(), -1, "loop");
    const QString section = "Body body (scale_body)";
    QCOMPARE(model.value_of("input 2", section), QString("f32[2]"));
    QCOMPARE(model.value_of("reads", section), QString("f32[2]"));
    QCOMPARE(model.value_of("output 1", section), QString("f32[2]"));
    QCOMPARE(model.value_of("nodes", section), QString("1"));
  }
};

QTEST_MAIN(GraphPaneBodiesTest)
#include "test_graph_pane_bodies.moc"
