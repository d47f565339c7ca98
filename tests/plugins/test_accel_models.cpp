// Whole models on the accel-sim target: the compile driver quantizes the float convolutions and
// matrix products for the accelerator's int8 GEMM core (quantize_for_accelerator), offloads the
// kernels that tensorize and runs the rest on the host (partitioning, compiled_model.h), with the
// copies between them recorded. The output must stay close to the float reference: cosine
// similarity ≥ 0.99 and the same largest element (the top-1 class of a classifier).
#include <QtTest>
#include <cmath>

#include "core/compile/compiled_model.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/op_table.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"

using namespace tessel;

namespace {

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.get_double(i), y = b.get_double(i);
    ab += x * y, aa += x * x, bb += y * y;
  }
  return ab / std::sqrt(std::max(aa * bb, 1e-300));
}

int64_t argmax(const Tensor& t) {
  int64_t best = 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (t.get_double(i) > t.get_double(best)) best = i;
  return best;
}

}  // namespace

class TestAccelModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("accel-sim"), "the accel_sim plugin did not load");
  }

  // Both layouts of the offloaded products (quantize_for_accelerator): the tiled one the compiler
  // chooses, and the row-major one the target option gemm_layout=rows keeps.
  void float_model_runs_quantized_on_the_accelerator_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("target");
    for (const char* model : {"resnet_block", "qdq_resnet"}) {
      QTest::newRow(model) << model << "accel-sim";
      QTest::newRow((std::string(model) + ", rows").c_str()) << model << "accel-sim -gemm_layout=rows";
    }
  }
  void float_model_runs_quantized_on_the_accelerator() {
    QFETCH(QString, model);
    QFETCH(QString, target);
    const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/" + model.toStdString();
    auto graph = std::make_shared<const Graph>(import_onnx(dir + ".onnx"));
    const Tensor input = read_tensor_pb(dir + "/input_0.pb");
    const Tensor want = run_reference(*graph, {input})[0];

    auto compiled = compile::CompiledModel::compile(graph, Target::parse(target.toStdString()));
    int offloaded = 0, on_host = 0;
    std::string where;
    for (const compile::CompiledKernel& k : compiled->kernels()) {
      where += k.name + ": " + compiled->placement(k) + (k.on_host ? " (" + k.host_reason + ")" : "") + "\n";
      (k.on_host ? on_host : offloaded) += 1;
      if (!k.on_host)
        QVERIFY2(k.loop_program.find("tessel_intrin_gemm_16x16x16_i8") != std::string::npos, k.name.c_str());
    }
    QVERIFY2(offloaded > 0 && on_host > 0, where.c_str());
    QVERIFY2(compiled->compiled_count() == static_cast<int>(compiled->kernels().size()), where.c_str());

    compile::RunTimes times;
    const Tensor got = compiled->run({input}, &times)[0];
    const double similarity = cosine(got, want);
    QVERIFY2(similarity >= 0.99, qPrintable(QString("cosine similarity %1\n").arg(similarity) + where.c_str()));
    QCOMPARE(argmax(got), argmax(want));
    // Every offloaded kernel's operands crossed from the host kernels that made them.
    bool copied_for_host_kernel = false;
    for (const compile::RunTimes::Copy& c : times.copies)
      copied_for_host_kernel |= c.kernel >= 0 && compiled->kernels().at(static_cast<size_t>(c.kernel)).on_host;
    QVERIFY(copied_for_host_kernel);
    const std::string profile = compiled->module()->artifacts().at("accel_profile");
    QVERIFY2(profile.find("cycles") != std::string::npos, profile.c_str());
  }

  // The layout is a transform the pass makes in the graph for the accelerator: each offloaded
  // product's weights are a [N'/n, K', n] constant of n×n tiles and its result is untiled on the
  // host by nodes named for it; with gemm_layout=rows there are neither.
  void tiled_layout_shows_in_the_graph() {
    const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/resnet_block";
    auto graph = std::make_shared<const Graph>(import_onnx(dir + ".onnx"));
    for (const bool tiled : {true, false}) {
      auto compiled =
          compile::CompiledModel::compile(graph, Target::parse(tiled ? "accel-sim" : "accel-sim -gemm_layout=rows"));
      const Graph& g = compiled->graph();
      int products = 0, untiled = 0;
      for (const Node& node : g.nodes) {
        if (node.op->name == "MatMulInteger") {
          ++products;
          const TensorType& weights = g.value(node.inputs[1]).type;
          QCOMPARE(weights.shape.size(), size_t{tiled ? 3u : 2u});
          if (tiled) QCOMPARE(weights.shape[2], int64_t{16});
          QCOMPARE(g.value(node.inputs[1]).name.find("tiled_layout") != std::string::npos, tiled);
        }
        if (node.name.find("tiled_layout_untile") != std::string::npos) {
          QVERIFY(node.op->name == "Transpose");
          ++untiled;
        }
      }
      QVERIFY(products > 0);
      QCOMPARE(untiled, tiled ? products : 0);
    }
  }

  // A kernel that is not an int8 GEMM is not offloaded, and says why.
  void kernels_that_do_not_tensorize_run_on_the_host() {
    Graph g;
    ValueId x = g.add_input("x", {DataType::kFloat32, {4, 8}});
    g.outputs = {g.add_node1("relu", get_op("Relu"), get_op("Relu").parse_attrs("Relu", {}), {x})};
    infer_types(g);
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("accel-sim"));
    QCOMPARE(compiled->kernels().size(), size_t{1});
    const compile::CompiledKernel& k = compiled->kernels()[0];
    QVERIFY(k.on_host && k.compiled);
    QVERIFY2(k.host_reason.find("accel: ") == 0, k.host_reason.c_str());
    Tensor in(DataType::kFloat32, {4, 8});
    for (int64_t i = 0; i < in.numel(); ++i) in.set_double(i, static_cast<double>(i) - 16);
    const Tensor got = compiled->run({in})[0];
    for (int64_t i = 0; i < in.numel(); ++i) QCOMPARE(got.get_double(i), std::max(0.0, in.get_double(i)));
  }
};

QTEST_APPLESS_MAIN(TestAccelModels)
#include "test_accel_models.moc"
