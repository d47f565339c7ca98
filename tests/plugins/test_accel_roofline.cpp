// The accelerator's roofline (core/analysis/accel_roofline.h) on a real model: the roofs are the
// machine model's (GEMM core and DRAM bandwidth from the target's options), every offloaded layer
// has a point with 1 and with 2 virtual threads doing the same work, each under the roof, and the
// second virtual thread never makes a layer slower. Run on the simulator, so the cycles do not
// depend on the host.
#include <QtTest>
#include <fstream>
#include <sstream>

#include "core/analysis/accel_roofline.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pipeline.h"
#include "core/graph/text_format.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"

using namespace tessel;

namespace {

Graph load_model(const std::string& path) {
  if (path.ends_with(".onnx")) return import_onnx(path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_graph(text.str());
}

}  // namespace

class TestAccelRoofline : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("accel-sim"), "the accel_sim plugin did not load");
  }

  void roofs_come_from_the_target_options() {
    // 16×16 core: 256 MACs, 512 ops a cycle; at 200 MHz 102.4 GOP/s. 8 B/cycle at 200 MHz: 1.6 GB/s.
    analysis::AccelRoofline r = analysis::accel_roofs(Target::parse("accel-sim"));
    QCOMPARE(r.compute_gops, 102.4);
    QCOMPARE(r.memory_gbps, 1.6);
    r = analysis::accel_roofs(Target::parse("accel-sim -gemm=8 -dram_bytes_per_cycle=32 -clock_mhz=1000"));
    QCOMPARE(r.compute_gops, 128.0);
    QCOMPARE(r.memory_gbps, 32.0);
    const analysis::MachineCeilings c = r.ceilings();
    QCOMPARE(c.peak_gflops(), 128.0);
    QCOMPARE(c.dram_gbps(), 32.0);
    QCOMPARE(c.compute.front().name, std::string("gemm 8x8"));
    QVERIFY_THROWS_EXCEPTION(Error, analysis::accel_roofs(Target::parse("ref")));
  }

  void every_offloaded_layer_has_two_points_under_the_roof_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<double>("least_speedup");
    // resnet_block's convolutions are small (few GEMMs per output tile, so its int32 stores are a
    // larger share of the one DRAM channel's traffic: lower intensity): a second thread gains
    // little (1.04x, its classifier 1.00x).
    QTest::newRow("resnet_block") << TESSEL_SOURCE_DIR "/resources/models/resnet_block.onnx" << 0.95;
    // The lesson's 64->64 3x3 convolutions, like ResNet-18's layer1: ~1.21x (bench_accel).
    QTest::newRow("conv_64 (the lesson's)") << TESSEL_SOURCE_DIR "/resources/lessons/conv_64.graph" << 1.15;
  }
  void every_offloaded_layer_has_two_points_under_the_roof() {
    QFETCH(QString, model);
    QFETCH(double, least_speedup);
    const Target target = Target::parse("accel-sim");
    auto graph = std::make_shared<const Graph>(load_model(model.toStdString()));
    const GraphPipelineResult p = run_graph_pipeline(graph, target);
    QVERIFY2(p.ok(), p.error.c_str());
    const analysis::AccelRoofline r = analysis::accel_roofline(*p.graph, *p.fusion, target);
    QVERIFY(!r.layers.empty());
    QVERIFY(!r.on_host.empty());  // the quantizers, im2col, requantization
    for (const analysis::AccelRooflineLayer& l : r.layers) {
      const QByteArray name = QByteArray::fromStdString(l.kernel);
      QCOMPARE(l.one.vthreads, int64_t{1});
      QCOMPARE(l.two.vthreads, int64_t{2});
      // The same work and the same traffic: only its order changes.
      QCOMPARE(l.one.macs, l.two.macs);
      QVERIFY2(l.one.macs > 0 && l.one.dram_bytes > 0, name.constData());
      QVERIFY2(l.speedup() >= least_speedup, name.constData());
      for (const analysis::AcceleratorRun* run : {&l.one, &l.two}) {
        const double roof = std::min(r.compute_gops, run->intensity() * r.memory_gbps);
        QVERIFY2(run->gops(r.clock_mhz) <= roof * (1 + 1e-9), name.constData());
        QVERIFY2(run->gops(r.clock_mhz) > 0.3 * roof, name.constData());
      }
      qInfo("%-40s %.2f op/B  %.2f -> %.2f GOP/s  (%.2fx; roof %.2f)", l.kernel.c_str(), l.one.intensity(),
            l.one.gops(r.clock_mhz), l.two.gops(r.clock_mhz), l.speedup(),
            std::min(r.compute_gops, l.two.intensity() * r.memory_gbps));
    }
  }
};

QTEST_MAIN(TestAccelRoofline)
#include "test_accel_roofline.moc"
