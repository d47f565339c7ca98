// quantize_qdq: DequantizeLinear → Conv/MatMul [→ Relu] → QuantizeLinear chains become QLinearConv
// and QLinearMatMul when that is exact, and are left alone otherwise.
#include <QtTest>
#include <cstdio>
#include <random>

#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pass_context.h"
#include "core/graph/passes/quantize_qdq.h"
#include "core/graph/text_format.h"
#include "core/runtime/reference_executor.h"
#include "tests/random_graph_inputs.h"

using namespace tessel;

namespace {

const Target& ref_target() {
  static const Target t = Target::parse("ref");
  return t;
}

bool run_pass(Graph& g) {
  PassContext ctx{ref_target(), PipelineOptions{}, nullptr, nullptr};
  return quantize_qdq(g, ctx);
}

int count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op->name == op;
  return n;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string ints(int n, unsigned seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(dist(rng));
  return s + "]";
}

// What the conv chain looks like; the defaults give a chain the pass rewrites.
struct ConvChain {
  double bias_scale_factor = 1.0;  // the bias scale over x_scale·w_scale
  bool relu = true;
  int y_zero_point = 0;
  bool conv_read_elsewhere = false;  // the float Conv result is also a graph output
  bool x_read_elsewhere = false;     // the input's DequantizeLinear also feeds a graph output
};

std::string conv_chain(const ConvChain& c) {
  const float sx = 0.02f, sw[3] = {0.01f, 0.02f, 0.015f};
  std::string sb;
  for (int k = 0; k < 3; ++k) sb += (k ? ", " : "") + number(static_cast<double>(sx * sw[k]) * c.bias_scale_factor);
  std::string t =
      "graph q(%x: f32[1,2,5,5]) {\n"
      "  %sx = constant f32[] [0.02]\n"
      "  %zx = constant u8[] [128]\n"
      "  %xq = QuantizeLinear(%x, %sx, %zx)\n"
      "  %xd = DequantizeLinear(%xq, %sx, %zx)\n"
      "  %wq = constant i8[3,2,3,3] " +
      ints(54, 1, -127, 127) +
      "\n"
      "  %sw = constant f32[3] [0.01, 0.02, 0.015]\n"
      "  %zw = constant i8[3] [0, 0, 0]\n"
      "  %wd = DequantizeLinear(%wq, %sw, %zw) {axis=0}\n"
      "  %bq = constant i32[3] [100, -50, 7]\n"
      "  %sb = constant f32[3] [" +
      sb +
      "]\n"
      "  %bd = DequantizeLinear(%bq, %sb) {axis=0}\n"
      "  %c = Conv(%xd, %wd, %bd) {pads=[1,1,1,1]}\n";
  std::string last = "%c";
  if (c.relu) {
    t += "  %r = Relu(%c)\n";
    last = "%r";
  }
  t += "  %sy = constant f32[] [0.03]\n"
       "  %zy = constant u8[] [" +
       std::to_string(c.y_zero_point) +
       "]\n"
       "  %y = QuantizeLinear(" +
       last + ", %sy, %zy)\n";
  std::string outputs = "%y";
  if (c.conv_read_elsewhere) outputs += ", %c";
  if (c.x_read_elsewhere) {
    t += "  %e = Neg(%xd)\n";
    outputs += ", %e";
  }
  return t + "  return " + outputs + "\n}\n";
}

// Whether the outputs agree: quantized ones within one step (the float result may have sat on a
// rounding tie), float ones within float32 rounding.
bool agree(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t k = 0; k < a.size(); ++k)
    for (int64_t i = 0; i < a[k].numel(); ++i) {
      const double x = a[k].get_double(i), y = b[k].get_double(i);
      const bool floating = a[k].dtype() == DataType::kFloat32;
      if (floating ? std::abs(x - y) > 1e-5 * (1 + std::abs(y)) : std::abs(x - y) > 1) return false;
    }
  return true;
}

}  // namespace

class TestPassQuantizeQdq : public QObject {
  Q_OBJECT

 private slots:
  void conv_relu_becomes_qlinear_conv() {
    const Graph before = parse_graph(conv_chain({}));
    Graph g = before;
    QVERIFY(run_pass(g));
    QCOMPARE(count(g, "QLinearConv"), 1);
    QCOMPARE(count(g, "Conv"), 0);
    QCOMPARE(count(g, "Relu"), 0);
    QCOMPARE(count(g, "DequantizeLinear"), 0);
    QCOMPARE(count(g, "QuantizeLinear"), 1);  // the input's
    QCOMPARE(QString::fromStdString(g.value(g.outputs[0]).name), QString("y"));
    for (unsigned seed : {1u, 2u, 3u}) {
      const auto in = testing::random_graph_inputs(before, seed, 2.0);
      QVERIFY(agree(run_reference(before, in), run_reference(g, in)));
    }
  }

  void conv_without_relu_becomes_qlinear_conv() {
    ConvChain c;
    c.relu = false;
    c.y_zero_point = 128;
    Graph g = parse_graph(conv_chain(c));
    const Graph before = g;
    QVERIFY(run_pass(g));
    QCOMPARE(count(g, "QLinearConv"), 1);
    const auto in = testing::random_graph_inputs(before, 4, 2.0);
    QVERIFY(agree(run_reference(before, in), run_reference(g, in)));
  }

  // The input's DequantizeLinear stays for its other reader; the conv still reads the uint8 input.
  void dequantized_input_read_elsewhere_stays() {
    ConvChain c;
    c.x_read_elsewhere = true;
    Graph g = parse_graph(conv_chain(c));
    const Graph before = g;
    QVERIFY(run_pass(g));
    QCOMPARE(count(g, "QLinearConv"), 1);
    QCOMPARE(count(g, "DequantizeLinear"), 1);
    const auto in = testing::random_graph_inputs(before, 5, 2.0);
    QVERIFY(agree(run_reference(before, in), run_reference(g, in)));
  }

  // Without a quantizer to fold, the conv still accumulates in integers: ConvInteger, then a
  // float multiply by x_scale·w_scale per channel.
  void unquantized_conv_becomes_conv_integer_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("float conv result read elsewhere") << 0;
    QTest::newRow("relu with a zero point above the type's minimum") << 1;
  }
  void unquantized_conv_becomes_conv_integer() {
    QFETCH(int, which);
    ConvChain c;
    if (which == 0) c.conv_read_elsewhere = true;
    if (which == 1) c.y_zero_point = 10;
    Graph g = parse_graph(conv_chain(c));
    const Graph before = g;
    QVERIFY(run_pass(g));
    QCOMPARE(count(g, "QLinearConv"), 0);
    QCOMPARE(count(g, "ConvInteger"), 1);
    QCOMPARE(count(g, "Conv"), 0);
    const auto in = testing::random_graph_inputs(before, 6, 2.0);
    QVERIFY(agree(run_reference(before, in), run_reference(g, in)));
  }

  // A bias dequantized with another scale than x_scale·w_scale cannot be added to the integer
  // accumulator: the conv stays float.
  void bias_with_another_scale_is_left_alone() {
    ConvChain c;
    c.bias_scale_factor = 1.01;
    Graph g = parse_graph(conv_chain(c));
    const std::string before = print_graph(g);
    QVERIFY(!run_pass(g));
    QCOMPARE(QString::fromStdString(print_graph(g)), QString::fromStdString(before));
  }

  void matmul_becomes_qlinear_matmul() {
    const std::string text =
        "graph m(%a: f32[2,3,4]) {\n"
        "  %sa = constant f32[] [0.05]\n"
        "  %za = constant i8[] [3]\n"
        "  %aq = QuantizeLinear(%a, %sa, %za)\n"
        "  %ad = DequantizeLinear(%aq, %sa, %za)\n"
        "  %bq = constant i8[4,5] " +
        ints(20, 2, -127, 127) +
        "\n"
        "  %sb = constant f32[5] [0.01, 0.02, 0.03, 0.04, 0.05]\n"
        "  %bd = DequantizeLinear(%bq, %sb) {axis=1}\n"
        "  %m = MatMul(%ad, %bd)\n"
        "  %sy = constant f32[] [0.04]\n"
        "  %zy = constant u8[] [100]\n"
        "  %y = QuantizeLinear(%m, %sy, %zy)\n"
        "  return %y\n}\n";
    const Graph before = parse_graph(text);
    Graph g = before;
    QVERIFY(run_pass(g));
    QCOMPARE(count(g, "QLinearMatMul"), 1);
    QCOMPARE(count(g, "MatMul"), 0);
    QCOMPARE(count(g, "DequantizeLinear"), 0);
    for (unsigned seed : {1u, 2u}) {
      const auto in = testing::random_graph_inputs(before, seed, 2.0);
      QVERIFY(agree(run_reference(before, in), run_reference(g, in)));
    }
  }

  // resources/models/qdq_resnet: the three convolutions whose result is quantized (through a Relu)
  // become QLinearConv; the three that feed a float residual Add have no QuantizeLinear of their
  // own to take a scale from: they become ConvInteger with a float rescale. No float Conv is left,
  // and the output still matches the generator's (the tolerance of test_te_builders_quant).
  void qdq_resnet_sample() {
    const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/qdq_resnet";
    const Graph before = import_onnx(dir + ".onnx");
    QCOMPARE(count(before, "Conv"), 6);
    Graph g = before;
    QVERIFY(run_pass(g));
    QCOMPARE(count(g, "QLinearConv"), 3);
    QCOMPARE(count(g, "ConvInteger"), 3);
    QCOMPARE(count(g, "Conv"), 0);
    QCOMPARE(count(g, "Relu"), 2);  // after the residual Adds
    // DequantizeLinear left: the stem's output (read by block1's residual Add), block2's output
    // (read by the pooling) and the classifier's weight (fold_constants folds it).
    QCOMPARE(count(g, "DequantizeLinear"), 3);
    const Tensor got = run_reference(g, {read_tensor_pb(dir + "/input_0.pb")})[0];
    const Tensor want = read_tensor_pb(dir + "/output_0.pb");
    QCOMPARE(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) QVERIFY(std::abs(got.get_double(i) - want.get_double(i)) <= 1e-2);
  }
};

QTEST_APPLESS_MAIN(TestPassQuantizeQdq)
#include "test_pass_quantize_qdq.moc"
