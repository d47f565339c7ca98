// The graph text format: printing, parsing, round trips and parse errors.
#include <QtTest>
#include <cmath>

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
  // A float constant's negative zero prints as "-0" and must come back as -0, not 0 (found by
  // fuzz_graph_text: print(parse(print(g))) differed); an integer constant's -0 is 0.
  void negative_zero_round_trips() {
    const std::string text = "graph g() {\n  %c = constant f32[3] [-0, 0, -1.5]\n  return %c\n}\n";
    Graph g = parse_graph(text);
    QVERIFY(std::signbit(g.value(g.outputs[0]).value.get_double(0)));
    QVERIFY(!std::signbit(g.value(g.outputs[0]).value.get_double(1)));
    QCOMPARE(QString::fromStdString(print_graph(g)), QString::fromStdString(text));
    Graph i = parse_graph("graph g() {\n  %c = constant i64[1] [-0]\n  return %c\n}\n");
    QCOMPARE(i.value(i.outputs[0]).value.get_double(0), 0.0);
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
    QVERIFY(error_of("graph g(%x: f32[2]) {\n  %y = Relu(%z)\n  return %y\n}")
                .startsWith("line 2: value '%z' is used before"));
    QString unknown = error_of("graph g(%x: f32[2]) {\n  %y = relu(%x)\n  return %y\n}");
    QVERIFY2(unknown.contains("line 2: unknown op 'relu'") && unknown.contains("Relu"), qPrintable(unknown));
    QVERIFY(error_of("graph g(%x: q32[2]) {\n return %x\n}").contains("unknown data type 'q32'"));
    QVERIFY(error_of("graph g() {\n  %w = constant f32[3] [1, 2]\n  return %w\n}").contains("needs 3 values, got 2"));
    QVERIFY(error_of("graph g(%x: f32[2]) {\n  %x = Relu(%x)\n  return %x\n}").contains("defined twice"));
    QVERIFY(error_of("graph g(%x: f32[2]) {\n  %y = Relu(%x) {alpha=1}\n  return %y\n}")
                .contains("unknown attribute(s): alpha"));
    QVERIFY(!error_of("graph g(%x: f32[2]) {\n  %y = Relu(%x)\n").isEmpty());
  }
  // Found by tests/fuzz (graph_text): each used to reach an undefined conversion or an exception
  // other than tessel::Error.
  void hostile_numbers_are_refused() {
    QString e = error_of("graph g(%x: f32[2,nan]) {\n  return %x\n}");
    QVERIFY2(e.contains("line 1: a dimension must be an integer"), qPrintable(e));
    QVERIFY(error_of("graph g(%x: f32[1e300]) {\n  return %x\n}").contains("a dimension must be an integer"));
    e = error_of("graph g() {\n  %c = constant i64[2] [inf, 4]\n  return %c\n}");
    QVERIFY2(e.contains("line 2: value inf does not fit constant of type i64[2]"), qPrintable(e));
    QVERIFY(error_of("graph g() {\n  %c = constant i8[1] [300]\n  return %c\n}").contains("does not fit"));
    QVERIFY(error_of("graph g() {\n  %c = constant u8[1] [-1]\n  return %c\n}").contains("does not fit"));
    e = error_of("graph g() {\n  %c = constant f32[2] random(ab)\n  return %c\n}");
    QVERIFY2(e.contains("expected a decimal 64-bit seed in random(...), got 'ab'"), qPrintable(e));
    QVERIFY(error_of("graph g() {\n  %c = constant f32[2] random(99999999999999999999)\n  return %c\n}")
                .contains("64-bit seed"));
    // The largest int64 attribute keeps its exact value (it went through a double before).
    e = error_of("graph g(%x: f32[4]) {\n  %y = Softmax(%x) {axis=9223372036854775807}\n  return %y\n}");
    QVERIFY2(e.contains("axis 9223372036854775807 is out of range"), qPrintable(e));
    e = error_of("graph g(%x: f32[4]) {\n  %y = Transpose(%x) {perm=[9223372036854775807]}\n  return %y\n}");
    QVERIFY2(!e.isEmpty(), qPrintable(e));
    // Random u8 constants are drawn in [0, 8) (a negative double does not convert to u8).
    Tensor u = parse_graph("graph g() {\n  %c = constant u8[64] random(5)\n  return %c\n}").values[0].value;
    for (int64_t i = 0; i < u.numel(); ++i) QVERIFY(u.get_double(i) >= 0 && u.get_double(i) < 8);
  }
};

QTEST_APPLESS_MAIN(TestTextFormat)
#include "test_text_format.moc"
