// The graph text format: printing, parsing, round trips and parse errors.
#include <QtTest>

#include "core/graph/op_table.h"
#include "core/graph/text_format.h"
#include "core/runtime/reference_executor.h"

using namespace tessel;

namespace {
QString error_of(const std::string& text) {
  try {
    parse_graph(text);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}
}  // namespace

class TestTextFormat : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parse_then_print_is_identity() {
    const std::string text =
        "graph g(%x: f32[2,3]) {\n"
        "  %c = constant f32[3] [1, -2, 3.5]\n"
        "  %\"my value\" = Relu(%x) : f32[2,3] @relu_node\n"
        "  %y = Relu(%\"my value\") : f32[2,3]\n"
        "  return %y, %c\n"
        "}\n";
    Graph g = parse_graph(text);
    QCOMPARE(g.nodes.size(), size_t{2});
    QCOMPARE(QString::fromStdString(g.nodes[0].name), QString("relu_node"));
    QCOMPARE(QString::fromStdString(print_graph(g)), QString::fromStdString(text));
  }
  void types_are_inferred_and_checked() {
    QString e = error_of("graph g(%x: f32[2]) {\n  %y = Relu(%x) : f32[3]\n  return %y\n}\n");
    QVERIFY2(e.contains("written as f32[3] but infers to f32[2]"), qPrintable(e));
  }
  void parsed_graph_runs() {
    Graph g = parse_graph("graph g(%x: f32[4]) {\n  %y = Relu(%x)\n  return %y\n}\n");
    auto out = run_reference(g, {Tensor::from_values<float>({4}, std::vector<float>{-1, 2, -3, 4})});
    QCOMPARE(out[0].values<float>()[0], 0.0f);
    QCOMPARE(out[0].values<float>()[1], 2.0f);
    QCOMPARE(out[0].values<float>()[3], 4.0f);
  }
  void large_constants_are_elided_and_random_is_deterministic() {
    Graph a = parse_graph("graph g() {\n  %w = constant f32[4,8] random(7)\n  return %w\n}\n");
    Graph b = parse_graph("graph g() {\n  %w = constant f32[4,8] random(7)\n  return %w\n}\n");
    QCOMPARE(print_graph(a), print_graph(b));
    QVERIFY(QString::fromStdString(print_graph(a)).contains("elided("));
    Graph c = parse_graph("graph g() {\n  %w = constant f32[4,8] random(8)\n  return %w\n}\n");
    QVERIFY(print_graph(a) != print_graph(c));
  }
  void layouts_round_trip() {
    const std::string text = "graph g(%x: f32[1,2]{NC}) {\n  %y = Relu(%x) : f32[1,2]{NC}\n  return %y\n}\n";
    QCOMPARE(QString::fromStdString(print_graph(parse_graph(text))), QString::fromStdString(text));
  }
  void errors_name_the_line() {
    QVERIFY(error_of("graph g(%x: f32[2]) {\n  %y = Relu(%z)\n  return %y\n}").startsWith("line 2: value '%z' is used before"));
    QString unknown = error_of("graph g(%x: f32[2]) {\n  %y = relu(%x)\n  return %y\n}");
    QVERIFY2(unknown.contains("line 2: unknown op 'relu'") && unknown.contains("Relu"), qPrintable(unknown));
    QVERIFY(error_of("graph g(%x: q32[2]) {\n return %x\n}").contains("unknown data type 'q32'"));
    QVERIFY(error_of("graph g() {\n  %w = constant f32[3] [1, 2]\n  return %w\n}").contains("needs 3 values, got 2"));
    QVERIFY(error_of("graph g(%x: f32[2]) {\n  %x = Relu(%x)\n  return %x\n}").contains("defined twice"));
    QVERIFY(error_of("graph g(%x: f32[2]) {\n  %y = Relu(%x) {alpha=1}\n  return %y\n}").contains("unknown attribute(s): alpha"));
    QVERIFY(!error_of("graph g(%x: f32[2]) {\n  %y = Relu(%x)\n").isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestTextFormat)
#include "test_text_format.moc"
