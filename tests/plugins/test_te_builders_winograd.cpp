// Winograd convolutions compiled (core/graph/passes/winograd_convs.h, the builders in
// core/graph/ops/te/builders_winograd.cpp, the transforms' loop order in the default schedule):
// a 3x3 conv graph compiled for llvm (the backend that plans vectors, so blocked layouts) becomes input transform, batched MatMul and
// output transform kernels, with no reference fallback, and matches the reference executor's
// direct convolution. Tiles of 4 (8x8), of 4 with partial tiles at the edge (15x15: 16x16 of
// tiles), and of 2 (6x6); bias, ReLU and a residual Add fused into the output transform.
#include <QtTest>

#include "core/compile/compiled_model.h"
#include "core/graph/text_format.h"
#include "core/plugin/plugin_manager.h"
#include "core/schedule/schedule.h"
#include "tests/plugins/compiled_vs_reference.h"
#include "tests/random_graph_inputs.h"

using namespace tessel;

namespace {

struct Case {
  const char* name;
  const char* graph;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"f4_bias_relu",
       "graph g(%x: f32[1,32,8,8]) {\n"
       "  %w = constant f32[32,32,3,3] random(1)\n"
       "  %b = constant f32[32] random(2)\n"
       "  %c = Conv(%x, %w, %b) {pads=[1,1,1,1]}\n"
       "  %r = Relu(%c)\n"
       "  return %r\n"
       "}\n"},
      {"f4_partial_tiles_residual",
       "graph g(%x: f32[1,16,15,15]) {\n"
       "  %w = constant f32[16,16,3,3] random(3)\n"
       "  %c = Conv(%x, %w) {pads=[1,1,1,1]}\n"
       "  %a = Add(%c, %x)\n"
       "  %r = Relu(%a)\n"
       "  return %r\n"
       "}\n"},
      {"f2_two_images",
       "graph g(%x: f32[2,16,6,6]) {\n"
       "  %w = constant f32[32,16,3,3] random(4)\n"
       "  %c = Conv(%x, %w) {pads=[1,1,1,1]}\n"
       "  return %c\n"
       "}\n"},
  };
  return all;
}

// F(4, 3) scales a tile by up to 8 in its transforms and back: float32 results differ from the
// direct sum by a few units in the last place of the output's scale (here about 10), not of each
// element, so the absolute part of the tolerance is wider than kFloat32Rounding's.
constexpr testing::Tolerance kWinogradRounding{1e-4, 1e-4};

}  // namespace

class TestTeBuildersWinograd : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void compiles_and_matches_the_direct_conv_data() {
    // llvm only: the c and interp targets plan no vectors, so their convs stay NCHW and direct.
    QTest::addColumn<int>("index");
    QTest::addColumn<QString>("target");
    for (size_t i = 0; i < cases().size(); ++i)
      QTest::newRow((std::string(cases()[i].name) + "@llvm").c_str()) << static_cast<int>(i) << QString("llvm");
  }
  void compiles_and_matches_the_direct_conv() {
    QFETCH(int, index);
    QFETCH(QString, target);
    const Case& k = cases()[static_cast<size_t>(index)];
    const Graph g = parse_graph(k.graph);
    const std::vector<Tensor> inputs = testing::random_graph_inputs(g, 7);
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    int transforms = 0;
    for (const compile::CompiledKernel& kernel : compiled->kernels())
      transforms += kernel.name.find("winograd") != std::string::npos;
    QVERIFY2(transforms == 2, qPrintable(QString("%1 on %2: %3 Winograd kernels").arg(k.name, target).arg(transforms)));
    const QString failure = testing::compiled_vs_reference(g, inputs, target, kWinogradRounding);
    QVERIFY2(failure.isEmpty(), qPrintable(QString("%1 on %2: %3").arg(k.name, target, failure)));
  }

  // The default schedule orders the transforms' loops for reuse (order_for_reuse): the input
  // transform runs its tiles outermost and unrolls the 36 coefficient positions inside, so no
  // coefficient is computed at run time; the output transform splits rows and columns by the tile
  // side and unrolls the position in the tile, so `y % 4` is gone from its program.
  void transforms_unroll_their_coefficients() {
    const Graph g = parse_graph(cases()[0].graph);
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"));
    int checked = 0;
    for (const compile::CompiledKernel& kernel : compiled->kernels()) {
      const QString program = QString::fromStdString(kernel.loop_program);
      const QString steps = QString::fromStdString(schedule::to_text(kernel.schedule));
      if (kernel.name.find("winograd_input") != std::string::npos) {
        QVERIFY2(steps.contains(QRegularExpression(R"(unroll\([a-z_0-9]+\.e\))")), qPrintable(steps));
        QVERIFY2(!program.contains("e / 6") && !program.contains("e % 6"), qPrintable(program));
        ++checked;
      }
      if (kernel.name.find("winograd_output") != std::string::npos) {
        QVERIFY2(steps.count(QRegularExpression(R"(unroll\([a-z_0-9.]+\.inner\))")) == 2, qPrintable(steps));
        QVERIFY2(!program.contains("% 4"), qPrintable(program));
        ++checked;
      }
    }
    QCOMPARE(checked, 2);
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersWinograd)
#include "test_te_builders_winograd.moc"
