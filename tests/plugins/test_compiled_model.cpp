// Compiled execution end to end: each sample model (resources/models) is imported, optimized,
// compiled kernel by kernel for every CPU backend, run with the static memory plan, and compared
// with the expected outputs that scripts/gen_models.py computed with numpy.
#include <QtTest>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/compile/compiled_model.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"

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

ValueId add_node(Graph& g, const std::string& name, const std::string& op, AttrMap attrs, std::vector<ValueId> inputs) {
  return g.add_node1(name, get_op(op), get_op(op).parse_attrs(op, attrs), std::move(inputs));
}

Tensor i64s(const Shape& shape, std::vector<int64_t> v) { return Tensor::from_values<int64_t>(shape, std::move(v)); }

Tensor counting(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 3;
  return Tensor::from_values<float>(shape, v);
}

// One-node graphs whose second input is a runtime int64 indices tensor: Gather and GatherElements
// of a f32 data input, ScatterElements of data and updates inputs. `indices` shape, axis 0.
Graph index_graph(const std::string& op, const Shape& data, const Shape& indices) {
  Graph g;
  ValueId x = g.add_input("data", {DataType::kFloat32, data});
  ValueId q = g.add_input("indices", {DataType::kInt64, indices});
  std::vector<ValueId> in{x, q};
  if (op == "ScatterElements") in.push_back(g.add_input("updates", {DataType::kFloat32, indices}));
  g.outputs = {add_node(g, "the_" + op, op, {}, in)};
  infer_types(g);
  return g;
}

std::vector<Tensor> index_inputs(const std::string& op, const Shape& data, const Tensor& indices) {
  std::vector<Tensor> in{counting(data), indices};
  if (op == "ScatterElements") in.push_back(counting(indices.shape()));
  return in;
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
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
    auto compiled =
        compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    for (const auto& k : compiled->kernels())
      QVERIFY2(k.compiled,
               qPrintable(QString::fromStdString(k.name + " ran on the reference kernels: " + k.fallback_reason)));
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
    ValueId pads =
        g.add_constant("pads", Tensor::from_values<int64_t>({8}, std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}));
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
    Tensor in = Tensor::from_values<float>({1, 2, 2, 2},
                                           std::vector<float>{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f, -3.7f});
    expect_close(compiled->run({in})[0], run_reference(g, {in})[0], 0, 0, "reflect pad+relu");
  }

  // Floor, Ceil and Round are built without a rounding intrinsic (truncation and a correction):
  // halves (Round goes to even), negatives, values past 2^23 and infinities match the reference
  // exactly on every backend.
  void rounding_ops_compile_exactly() {
    const std::vector<float> values{-2.5f,  -1.5f,   -0.5f,       0.5f,         1.5f,       2.5f,
                                    3.7f,   -3.7f,   0.49999997f, -0.49999997f, 8388609.0f, -16777218.0f,
                                    3.0e9f, -3.0e9f, INFINITY,    -INFINITY};
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
          QVERIFY2(got.get_double(i) == want.get_double(i), qPrintable(QString("%1 on %2: %3 gives %4, expected %5")
                                                                           .arg(op, target)
                                                                           .arg(values[i])
                                                                           .arg(got.get_double(i))
                                                                           .arg(want.get_double(i))));
      }
    }
  }

  // The profiler's per-thread timeline: with a pool of two threads, the parallel loops of the
  // kernels leave chunk spans inside their kernel's span, naming the pool thread that ran them.
  // Chunks are claimed by whichever thread is free, so on a busy machine the caller may run a whole
  // run's chunks itself (which thread ran what is checked in test_thread_pool). The kernels must be
  // large enough for the default schedules to run them in parallel (schedule/parallel_work.h; the
  // sample resnet_block's are not): a layout transform in, two 64-channel 3×3 conv + relu at 56×56,
  // a layout transform out.
  void a_timed_run_records_what_each_pool_thread_did() {
    Graph g;
    ValueId x = g.add_input("x", {DataType::kFloat32, {1, 64, 56, 56}});
    for (int k = 0; k < 2; ++k) {
      ValueId w = g.add_constant("w" + std::to_string(k), counting({64, 64, 3, 3}));
      ValueId c = add_node(g, "conv" + std::to_string(k), "Conv", {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {x, w});
      x = add_node(g, "relu" + std::to_string(k), "Relu", {}, {c});
    }
    g.outputs = {x};
    infer_types(g);
    auto compiled =
        compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm -num_threads=2"));
    compile::RunTimes times;
    compiled->run({counting({1, 64, 56, 56})}, &times);
    QVERIFY(!times.thread_spans.empty());
    std::set<int> kernels;
    for (const compile::RunTimes::ThreadSpan& t : times.thread_spans) {
      QVERIFY(t.thread == 0 || t.thread == 1);
      QVERIFY(t.kernel >= 0 && static_cast<size_t>(t.kernel) < times.kernel_spans_ms.size());
      kernels.insert(t.kernel);
      auto [begin, end] = times.kernel_spans_ms[static_cast<size_t>(t.kernel)];
      QVERIFY(t.begin_ms >= begin - 1e-3 && t.end_ms <= end + 1e-3 && t.begin_ms <= t.end_ms);
    }
    QVERIFY2(kernels.size() >= 3, "the convolutions' parallel loops left no spans");
    compiled->run({counting({1, 64, 56, 56})});  // no times: nothing is traced
    QVERIFY(ThreadPool::global().take_trace().empty());
  }

  // Compiled kernels check data-dependent indices: an index out of range after counting negatives
  // from the end fails the run with an Error naming the kernel, the node and the index, on every
  // backend, instead of reading outside the buffer; in-range and negative indices give the
  // reference's values, and the model runs again afterwards.
  void an_index_out_of_range_fails_the_run_naming_node_and_index_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("target");
    for (const char* op : {"Gather", "GatherElements", "ScatterElements"})
      for (const char* t : {"llvm", "c", "interp", "llvm -num_threads=2"})
        QTest::newRow((std::string(op) + "@" + t).c_str()) << op << t;
  }
  void an_index_out_of_range_fails_the_run_naming_node_and_index() {
    QFETCH(QString, op);
    QFETCH(QString, target);
    const std::string o = op.toStdString();
    // Gather takes whole rows; the element-wise ops index each element along axis 0.
    const Shape data{5, 16}, shape = o == "Gather" ? Shape{6} : Shape{3, 16};
    const Graph g = index_graph(o, data, shape);
    auto compiled =
        compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    QCOMPARE(compiled->compiled_count(), static_cast<int>(compiled->kernels().size()));
    QVERIFY(compiled->kernels()[0].loop_program.find("out of range [-5, 5) on axis 0") != std::string::npos);

    std::vector<int64_t> good(static_cast<size_t>(shape_numel(shape)));
    for (size_t i = 0; i < good.size(); ++i) good[i] = static_cast<int64_t>(i * 7 % 10) - 5;  // -5 .. 4
    if (o == "ScatterElements")  // distinct targets per column: the reference writes in order, so must we
      for (size_t i = 0; i < good.size(); ++i)
        good[i] = static_cast<int64_t>(i / 16) * 2 - 4 + static_cast<int64_t>(i % 2);
    const std::vector<Tensor> in = index_inputs(o, data, i64s(shape, good));
    expect_close(compiled->run(in)[0], run_reference(g, in)[0], 0, 0, op + " on " + target);

    for (int64_t bad : {int64_t{5}, int64_t{-6}, int64_t{1} << 40}) {
      std::vector<int64_t> wrong = good;
      wrong[wrong.size() - 2] = bad;  // late in the tensor: every earlier read was fine
      try {
        compiled->run(index_inputs(o, data, i64s(shape, wrong)));
        QFAIL(qPrintable(op + " on " + target + ": index " + QString::number(bad) + " was not reported"));
      } catch (const Error& e) {
        const QString m = e.what();
        QVERIFY2(m.contains(QString::fromStdString("kernel '" + compiled->kernels()[0].name + "'")), e.what());
        QVERIFY2(m.contains(QString::fromStdString("node 'the_" + o + "' (" + o + ")")), e.what());
        QVERIFY2(m.contains("index " + QString::number(bad) + " out of range [-5, 5) on axis 0"), e.what());
      }
    }
    expect_close(compiled->run(in)[0], run_reference(g, in)[0], 0, 0, op + " on " + target + " after an error");
  }

  // Constant indices are checked once, when the model is compiled: out of range, the model is
  // refused with the same message; in range, the kernel carries no check at all.
  void constant_indices_are_checked_at_compile_time() {
    for (const char* target : {"llvm", "c", "interp"}) {
      for (int64_t last : {int64_t{-5}, int64_t{9}}) {
        Graph g;
        ValueId x = g.add_input("data", {DataType::kFloat32, {5, 4}});
        ValueId q = g.add_constant("rows", i64s({3}, {0, -1, last}));
        g.outputs = {add_node(g, "pick", "Gather", {}, {x, q})};
        infer_types(g);
        try {
          auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target));
          QVERIFY2(last == -5, "an out-of-range constant index compiled");
          QCOMPARE(compiled->compiled_count(), 1);
          QVERIFY2(compiled->kernels()[0].loop_program.find("check(") == std::string::npos,
                   compiled->kernels()[0].loop_program.c_str());
          const Tensor in = counting({5, 4});
          expect_close(compiled->run({in})[0], run_reference(g, {in})[0], 0, 0, "constant gather");
        } catch (const Error& e) {
          QVERIFY2(last == 9, e.what());
          QVERIFY2(QString(e.what()).contains("node 'pick' (Gather): index 9 out of range [-5, 5) on axis 0"),
                   e.what());
        }
      }
    }
  }

  // f32 → bf16 → f32 rounds to nearest even, keeps NaNs NaN and infinities infinite, and overflows
  // to infinity, exactly as the reference does, on every backend (llvm once needed compiler-rt's
  // __truncsfbf2, which its JIT lacks).
  void cast_to_bfloat16_rounds_like_the_reference() {
    const std::vector<uint32_t> bits{
        0x3f808000u,                            // tie, even below: rounds down
        0x3f818000u,                            // tie, odd below: rounds up
        0x3f808001u,                            // just above a tie
        0x3f807fffu,                            // just below a tie
        0xbf818000u,                            // negative tie
        0x7f7fffffu,                            // the largest float: rounds up to infinity
        0x00000001u,                            // the smallest subnormal
        0x80000000u,                            // -0
        0x7f800000u, 0xff800000u,               // ±inf
        0x7fc00001u, 0x7f800001u, 0xffc12345u,  // quiet, signalling, negative NaNs
        0x40490fdbu, 0x3eaaaaabu,               // pi, 1/3
    };
    std::vector<float> values;
    for (uint32_t b : bits) values.push_back(bits_float(b));
    const int64_t n = static_cast<int64_t>(values.size());
    Graph g;
    ValueId x = g.add_input("x", {DataType::kFloat32, {n}});
    ValueId narrow = add_node(g, "narrow", "Cast", {{"to", int64_t{16}}}, {x});  // 16 = ONNX BFLOAT16
    g.outputs = {add_node(g, "widen", "Cast", {{"to", int64_t{1}}}, {narrow})};
    infer_types(g);
    const Tensor in = Tensor::from_values<float>({n}, values);
    const Tensor want = run_reference(g, {in})[0];
    for (const char* target : {"llvm", "c", "interp"}) {
      auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target));
      QVERIFY2(compiled->compiled_count() == static_cast<int>(compiled->kernels().size()), target);
      const Tensor got = compiled->run({in})[0];
      for (int64_t i = 0; i < n; ++i) {
        const float a = got.data<float>()[i], b = want.data<float>()[i];
        const bool same = std::isnan(b) ? std::isnan(a) : float_bits(a) == float_bits(b);
        QVERIFY2(same, qPrintable(QString("%1: 0x%2 gives 0x%3, the reference 0x%4")
                                      .arg(target)
                                      .arg(bits[static_cast<size_t>(i)], 8, 16, QChar('0'))
                                      .arg(float_bits(a), 8, 16, QChar('0'))
                                      .arg(float_bits(b), 8, 16, QChar('0'))));
      }
    }
  }

  // A plan that needs more than the memory limit is refused when the model is compiled, before
  // anything is allocated, naming the model, the bytes, the largest tensor and the limit.
  void a_plan_above_the_memory_limit_is_refused() {
    Graph g;
    g.name = "huge";
    ValueId x = g.add_input("x", {DataType::kFloat32, {1}});
    ValueId shape = g.add_constant("shape", i64s({2}, {1 << 16, 1 << 15}));  // 8 GiB of f32
    g.outputs = {add_node(g, "spread", "Expand", {}, {x, shape})};
    infer_types(g);
    compile::CompileOptions options;
    options.memory_limit = int64_t{1} << 30;
    const auto start = std::chrono::steady_clock::now();
    try {
      compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"), options);
      QFAIL("an 8 GiB plan compiled under a 1 GiB limit");
    } catch (const Error& e) {
      const QString m = e.what();
      QVERIFY2(m.contains("model 'huge' needs 16.0 GiB"), e.what());  // the arena and the output copied out
      QVERIFY2(m.contains("f32[65536,32768] (8.0 GiB)"), e.what());
      QVERIFY2(m.contains("memory limit of 1.0 GiB") && m.contains("--memory-limit"), e.what());
    }
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    options.memory_limit = int64_t{1} << 40;  // raised: it compiles (nothing is allocated before a run)
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("ref"), options);
    const compile::MemoryNeed need = compile::memory_need(compiled->graph(), *compiled->pipeline().memory_plan);
    QVERIFY(need.arena >= int64_t{8} << 30 && need.total() - need.arena - need.constants == (int64_t{8} << 30) + 4);
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
