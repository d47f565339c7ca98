// How each op compiles, as the op table states it: every op names its tensor-expression builder
// (or says why it has none), what a partial builder declines is written down, and a declined node
// reports the builder's reason instead of compiling silently wrong or silently not at all.
#include <QtTest>

#include "core/graph/graph.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/te/te_from_graph.h"

using namespace tessel;

namespace {

// A one-node group over a graph input of type `in`.
struct OneNode {
  Graph g;
  FusionGroup group;
  OneNode(const std::string& op, TensorType in) {
    ValueId x = g.add_input("x", in);
    ValueId y = g.add_node1("n", get_op(op), get_op(op).parse_attrs(op, {}), {x});
    g.outputs = {y};
    infer_types(g);
    group.kernel_name = "k";
    group.nodes = {0};
    group.inputs = {x};
    group.outputs = {y};
  }
};

}  // namespace

class TestOpCompilation : public QObject {
  Q_OBJECT
 private slots:
  void every_op_states_how_it_compiles() {
    for (const OpDef& op : all_ops()) {
      const OpCompilation& c = op.compilation;
      const std::string why = c.why;
      switch (c.compiles) {
        case Compiles::kYes:
          QVERIFY2(c.builder && why.empty(), op.name.c_str());
          break;
        case Compiles::kPartial:
          QVERIFY2(c.builder && !why.empty(), op.name.c_str());  // what it declines is written down
          break;
        case Compiles::kNo:
          QVERIFY2(!c.builder && !why.empty(), op.name.c_str());  // and why there is no builder
          break;
      }
      QCOMPARE(ops::has_te_builder(op.name), c.builder != nullptr);
    }
    QVERIFY(!ops::has_te_builder("relu"));  // names are exact
    QCOMPARE(std::string(compiles_name(Compiles::kPartial)), std::string("partial"));
  }

  void ops_sharing_a_formula_share_a_builder() {
    QVERIFY(get_op("Reshape").compilation.builder == get_op("Flatten").compilation.builder);
    QVERIFY(get_op("Reshape").compilation.builder != get_op("Transpose").compilation.builder);
  }

  void a_supported_node_builds() {
    OneNode n("Relu", TensorType{DataType::kFloat32, {2, 3}});
    std::string why;
    auto dag = ops::build_group_dag(n.g, n.group, &why);
    QVERIFY2(dag.has_value(), why.c_str());
    QCOMPARE(dag->outputs.size(), size_t{1});
  }

  void a_declined_node_says_why() {
    // Relu is "partial: f32/f64 only": an int32 Relu runs its reference kernel, and says so.
    QCOMPARE(get_op("Relu").compilation.compiles, Compiles::kPartial);
    OneNode n("Relu", TensorType{DataType::kInt32, {2, 3}});
    std::string why;
    QVERIFY(!ops::build_group_dag(n.g, n.group, &why).has_value());
    QVERIFY2(why.find("Relu: ") == 0 && why.find(" inputs") != std::string::npos, why.c_str());
  }
};

QTEST_APPLESS_MAIN(TestOpCompilation)
#include "test_op_compilation.moc"
