// Compiled execution end to end: each sample model (resources/models) is imported, optimized,
// compiled kernel by kernel for every CPU backend, run with the static memory plan, and compared
// with the expected outputs that scripts/gen_models.py computed with numpy.
#include <QtTest>

#include <cmath>
#include <filesystem>

#include "core/compile/compiled_model.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/op_table.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"

#include <set>

using namespace tessel;
namespace fs = std::filesystem;

namespace {

void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const QString& what) {
  QCOMPARE(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.get_double(i), w = want.get_double(i);
    if (std::abs(g - w) > atol + rtol * std::abs(w))
      QFAIL(qPrintable(QString("%1: element %2 is %3, expected %4").arg(what).arg(i).arg(g).arg(w)));
  }
}

}  // namespace

class TestCompiledModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void sample_models_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("target");
    for (const char* m : {"resnet_block", "mlp", "mobilenet_block", "attention_block"})
      for (const char* t : {"llvm", "c", "interp"}) QTest::newRow((std::string(m) + "@" + t).c_str()) << m << t;
  }
  void sample_models() {
    QFETCH(QString, model);
    QFETCH(QString, target);
    std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/" + model.toStdString();
    Graph g = import_onnx(dir + ".onnx");
    Tensor input = read_tensor_pb(dir + "/input_0.pb");
    Tensor expected = read_tensor_pb(dir + "/output_0.pb");
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    for (const auto& k : compiled->kernels())
      QVERIFY2(k.compiled, qPrintable(QString::fromStdString(k.name + " ran on the reference kernels: " + k.fallback_reason)));
    compile::RunTimes times;
    auto out = compiled->run({input}, &times);
    expect_close(out[0], expected, 1e-4, 1e-5, model + " on " + target);
    QCOMPARE(times.kernel_ms.size(), compiled->kernels().size());
    // Running again reuses the arena and gives the same result.
    expect_close(compiled->run({input})[0], out[0], 0, 0, model + " (second run)");
  }

  void fallback_is_reported_and_still_correct() {
    // Every op has a tensor-expression builder now; Pad's declines the reflect mode (Unsupported),
    // so its kernel runs on the reference kernels, says why, and still computes the right values.
    Graph g;
    ValueId x = g.add_input("x", {DataType::kFloat32, {1, 2, 2, 2}});
    ValueId pads = g.add_constant("pads", Tensor::from_values<int64_t>({8}, std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}));
    const OpDef& pad = get_op("Pad");
    ValueId y = g.add_node1("pad", pad, pad.parse_attrs("Pad", {{"mode", std::string("reflect")}}), {x, pads});
    ValueId z = g.add_node1("relu", get_op("Relu"), get_op("Relu").parse_attrs("Relu", {}), {y});
    g.outputs = {z};
    infer_types(g);
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"));
    bool reported = false;
    for (const auto& k : compiled->kernels())
      if (!k.compiled) reported = QString::fromStdString(k.fallback_reason).contains("Pad: mode reflect");
    QVERIFY(reported);
    Tensor in = Tensor::from_values<float>({1, 2, 2, 2}, std::vector<float>{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f, -3.7f});
    expect_close(compiled->run({in})[0], run_reference(g, {in})[0], 0, 0, "reflect pad+relu");
  }

  // Floor, Ceil and Round are built without a rounding intrinsic (truncation and a correction):
  // halves (Round goes to even), negatives, values past 2^23 and infinities match the reference
  // exactly on every backend.
  void rounding_ops_compile_exactly() {
    const std::vector<float> values{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f, -3.7f, 0.49999997f, -0.49999997f,
                                    8388609.0f, -16777218.0f, 3.0e9f, -3.0e9f, INFINITY, -INFINITY};
    for (const char* op : {"Floor", "Ceil", "Round"}) {
      Graph g;
      ValueId x = g.add_input("x", {DataType::kFloat32, {static_cast<int64_t>(values.size())}});
      g.outputs = {g.add_node1("r", get_op(op), get_op(op).parse_attrs(op, {}), {x})};
      infer_types(g);
      Tensor in = Tensor::from_values<float>({static_cast<int64_t>(values.size())}, values);
      for (const char* target : {"llvm", "c", "interp"}) {
        auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target));
        QCOMPARE(compiled->compiled_count(), 1);
        const Tensor got = compiled->run({in})[0], want = run_reference(g, {in})[0];
        for (int64_t i = 0; i < want.numel(); ++i)  // == so that an infinity must come back as itself
          QVERIFY2(got.get_double(i) == want.get_double(i),
                   qPrintable(QString("%1 on %2: %3 gives %4, expected %5").arg(op, target).arg(values[i]).arg(got.get_double(i)).arg(want.get_double(i))));
      }
    }
  }

  // The profiler's per-thread timeline: with a pool of two threads, the parallel loops of the
  // kernels leave chunk spans on both, inside their kernel's span.
  void a_timed_run_records_what_each_pool_thread_did() {
    std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/resnet_block";
    Graph g = import_onnx(dir + ".onnx");
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm -num_threads=2"));
    compile::RunTimes times;
    compiled->run({read_tensor_pb(dir + "/input_0.pb")}, &times);
    std::set<int> threads;
    for (const compile::RunTimes::ThreadSpan& t : times.thread_spans) {
      threads.insert(t.thread);
      QVERIFY(t.kernel >= 0 && static_cast<size_t>(t.kernel) < times.kernel_spans_ms.size());
      auto [begin, end] = times.kernel_spans_ms[static_cast<size_t>(t.kernel)];
      QVERIFY(t.begin_ms >= begin - 1e-3 && t.end_ms <= end + 1e-3 && t.begin_ms <= t.end_ms);
    }
    QCOMPARE(threads, (std::set<int>{0, 1}));
    compiled->run({read_tensor_pb(dir + "/input_0.pb")});  // no times: nothing is traced
    QVERIFY(ThreadPool::global().take_trace().empty());
  }

  void a_bad_hand_schedule_names_the_kernel() {
    Graph g = import_onnx(std::string(TESSEL_SOURCE_DIR) + "/resources/models/mlp.onnx");
    auto first = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"));
    compile::CompileOptions options;
    std::string name = first->kernels()[0].name;
    options.schedules[name] = schedule::parse_schedule("split(nonexistent.i, 4)");
    try {
      compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"), options);
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains(QString::fromStdString("kernel '" + name + "'")), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestCompiledModel)
#include "test_compiled_model.moc"
