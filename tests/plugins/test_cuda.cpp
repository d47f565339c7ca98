// The cuda plugin on the first CUDA device (ctest label gpu: run by scripts/check-gpu on a machine
// with an NVIDIA GPU, left out by label everywhere else). Its DeviceAPI (attributes, copies in
// every direction, streams and cross-stream waits, workspaces), its modules (GPU schedules on a
// grid, CPU schedules on one thread, checks, both call paths) against the interpreter, a model
// against the reference executor, and launch times from CUDA events. With no device it fails,
// saying why: a test that passed without a GPU would tell nothing.
#include <QtTest>
#include <numeric>
#include <random>

#include "core/analysis/profile.h"
#include "core/compile/compiled_model.h"
#include "core/graph/text_format.h"
#include "core/loopir/interpreter.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/ndarray.h"
#include "core/schedule/default_schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"
#include "tests/plugins/compiled_vs_reference.h"

using namespace tessel;

namespace {

constexpr Device kDevice{DeviceType::kCUDA, 0};

std::vector<float> iota_floats(size_t n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

Tensor random_tensor(DataType t, const Shape& shape, uint64_t seed) {
  Tensor out(t, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  for (int64_t i = 0; i < out.numel(); ++i)
    out.set_double(i, dtype_is_float(t) ? dist(rng) : std::floor(dist(rng) * 3));
  return out;
}

loopir::Func lowered(const std::string& spec, const schedule::Schedule& s, const std::string& name) {
  loopir::Func f = lower::lower(te::dag_from_spec(spec), s).func;
  f.name = name;
  return f;
}

// "" when f on `target` through call_host matches the interpreter in every output element.
QString against_interpreter(const loopir::Func& f, const std::string& target, double tol = 1e-4) {
  std::vector<Tensor> want, got;
  for (size_t k = 0; k < f.params.size(); ++k) {
    Tensor t = random_tensor(f.params[k]->dtype, f.params[k]->shape, 7 + k);
    want.push_back(t.clone());
    got.push_back(t.clone());
  }
  loopir::interpret(f, want);
  auto module = build_module({f}, Target::parse(target));
  std::vector<Tensor*> args;
  for (auto& t : got) args.push_back(&t);
  module->call_host(f.name, args);
  for (int64_t i = 0; i < want.back().numel(); ++i) {
    const double w = want.back().get_double(i), g = got.back().get_double(i);
    if (!(std::abs(w - g) <= tol * (1 + std::abs(w))))
      return QString("%1: element %2: interpreter %3, cuda %4")
          .arg(QString::fromStdString(f.name))
          .arg(i)
          .arg(w)
          .arg(g);
  }
  return {};
}

}  // namespace

class TestCuda : public QObject {
  Q_OBJECT
  DeviceAPI* api_ = nullptr;

 private slots:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("cuda"), "the cuda plugin did not load");
    api_ = DeviceAPIRegistry::global().find(DeviceType::kCUDA);
    QVERIFY(api_);
    QVERIFY2(api_->device_count() >= 1, ("no CUDA device: " + api_->why_no_device()).c_str());
  }

  void attributes_are_answered_or_none() {
    QCOMPARE(std::get<int64_t>(api_->attribute(0, DeviceAttr::kExist)), int64_t{1});
    QCOMPARE(std::get<int64_t>(api_->attribute(99, DeviceAttr::kExist)), int64_t{0});
    QVERIFY(std::holds_alternative<std::monostate>(api_->attribute(99, DeviceAttr::kName)));
    QVERIFY(!std::get<std::string>(api_->attribute(0, DeviceAttr::kName)).empty());
    for (DeviceAttr a : {DeviceAttr::kMaxThreadsPerBlock, DeviceAttr::kWarpSize, DeviceAttr::kMaxSharedMemoryPerBlock,
                         DeviceAttr::kMultiProcessorCount, DeviceAttr::kL2CacheBytes, DeviceAttr::kTotalMemoryBytes,
                         DeviceAttr::kAvailableMemoryBytes})
      QVERIFY2(std::get<int64_t>(api_->attribute(0, a)) > 0, device_attr_name(a).data());
    QCOMPARE(std::get<int64_t>(api_->attribute(0, DeviceAttr::kWarpSize)), int64_t{32});
    QCOMPARE(std::get<std::vector<int64_t>>(api_->attribute(0, DeviceAttr::kMaxThreadDimensions)).size(), size_t{3});
    QVERIFY(std::get<std::string>(api_->attribute(0, DeviceAttr::kComputeVersion)).find('.') != std::string::npos);
    QVERIFY(std::get<std::string>(api_->attribute(0, DeviceAttr::kDriverVersion)).rfind("CUDA ", 0) == 0);
    // The target's defaults are the device's.
    const Target t = Target::parse("cuda");
    QCOMPARE(t.get_int("max_threads_per_block"),
             std::get<int64_t>(api_->attribute(0, DeviceAttr::kMaxThreadsPerBlock)));
    QVERIFY(t.get_string("arch").rfind("sm_", 0) == 0);
  }

  void bad_ids_and_sizes_are_errors() {
    try {
      api_->set_device(99);
      QFAIL("set_device(99) did not throw");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("cuda:99 does not exist") != std::string::npos, e.what());
    }
    try {
      api_->alloc_data_space(0, size_t{1} << 62, 64);
      QFAIL("a 4 EiB allocation did not throw");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("cuMemAlloc failed: CUDA_ERROR_") != std::string::npos, e.what());
    }
  }

  void copies_in_every_direction() {
    const size_t n = 1000;
    std::vector<float> host = iota_floats(n, 1);
    DataSpace a = api_->alloc_data_space(0, n * 4, 64), b = api_->alloc_data_space(0, n * 4, 64);
    api_->copy_host_to_device(host.data(), a, 0, n * 4, kDevice, nullptr);
    host.assign(n, 0);  // the copy has read it already
    api_->copy_device_to_device(a, 0, b, 0, n * 4, kDevice, nullptr);
    api_->copy_device_to_device(a, 500 * 4, b, 10 * 4, 10 * 4, kDevice, nullptr);   // b[10..20) = a[500..510)
    api_->copy_device_to_device(b, 100 * 4, b, 101 * 4, 50 * 4, kDevice, nullptr);  // overlapping
    std::vector<float> back(n, -1);
    api_->copy_device_to_host(b, 0, back.data(), n * 4, kDevice, nullptr);
    api_->stream_sync(0, nullptr);
    for (size_t i = 0; i < n; ++i) {
      float want = static_cast<float>(i + 1);
      if (i >= 10 && i < 20) want = static_cast<float>(500 + i - 10 + 1);
      if (i >= 101 && i < 151) want = static_cast<float>(i - 1 + 1);
      QCOMPARE(back[i], want);
    }
    float one = 0;
    api_->copy_device_to_host(a, 999 * 4, &one, 4, kDevice, nullptr);
    api_->stream_sync(0, nullptr);
    QCOMPARE(one, 1000.0f);
    api_->free_data_space(0, a);
    api_->free_data_space(0, b);
  }

  void ndarray_round_trip() {
    Tensor t = random_tensor(DataType::kFloat32, {3, 5}, 1);
    NDArray d = NDArray::from_host(t, kDevice);
    NDArray e = NDArray::empty(DataType::kFloat32, {3, 5}, kDevice);
    e.copy_from(d);
    Tensor back = e.to_host();
    for (int64_t i = 0; i < t.numel(); ++i) QCOMPARE(back.get_double(i), t.get_double(i));
  }

  void workspaces_hold_data() {
    DataSpace w = api_->alloc_workspace(0, 4096);
    std::vector<float> host = iota_floats(1024, 0), back(1024);
    api_->copy_host_to_device(host.data(), w, 0, 4096, kDevice, nullptr);
    api_->copy_device_to_host(w, 0, back.data(), 4096, kDevice, nullptr);
    api_->stream_sync(0, nullptr);
    QCOMPARE(back, host);
    api_->free_workspace(0, w);
  }

  // A copy issued on one stream and consumed on another, ordered only by sync_stream_from_to.
  void copy_on_one_stream_consumed_on_another() {
    const size_t n = size_t{1} << 24;  // 64 MiB: long enough that an unordered read would see zeros
    Stream first = api_->create_stream(0), second = api_->create_stream(0);
    QVERIFY(first && second && first != second);
    std::vector<float> host = iota_floats(n, 0), zeros(n, 0), back(n, -1);
    DataSpace src = api_->alloc_data_space(0, n * 4, 64), dst = api_->alloc_data_space(0, n * 4, 64);
    api_->copy_host_to_device(host.data(), src, 0, n * 4, kDevice, first);
    api_->copy_host_to_device(zeros.data(), dst, 0, n * 4, kDevice, second);
    api_->copy_device_to_device(src, 0, dst, 0, n * 4, kDevice, first);
    api_->sync_stream_from_to(0, first, second);
    api_->copy_device_to_host(dst, 0, back.data(), n * 4, kDevice, second);
    api_->stream_sync(0, second);
    QCOMPARE(back[n - 1], static_cast<float>(n - 1));
    QVERIFY(back == host);
    api_->stream_sync(0, first);
    api_->free_data_space(0, src);
    api_->free_data_space(0, dst);
    api_->free_stream(0, first);
    api_->free_stream(0, second);
  }

  void kernels_run_on_the_chosen_stream() {
    loopir::Func f =
        lowered("matmul M=16 N=16 K=16", schedule::default_gpu_schedule(te::dag_from_spec("matmul M=16 N=16 K=16")),
                "mm_on_stream");
    auto module = build_module({f}, Target::parse("cuda"));
    Stream s = api_->create_stream(0);
    api_->set_stream(0, s);
    Tensor a = random_tensor(DataType::kFloat32, {16, 16}, 1), b = random_tensor(DataType::kFloat32, {16, 16}, 2);
    NDArray da = NDArray::from_host(a, kDevice), db = NDArray::from_host(b, kDevice);
    NDArray dc = NDArray::empty(DataType::kFloat32, {16, 16}, kDevice);
    module->call("mm_on_stream", {&da, &db, &dc});
    api_->set_stream(0, nullptr);
    api_->sync_stream_from_to(0, s, nullptr);
    Tensor c = dc.to_host();
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < 16; ++j) {
        double want = 0;
        for (int64_t k = 0; k < 16; ++k) want += a.get_double(i * 16 + k) * b.get_double(k * 16 + j);
        QVERIFY(std::abs(c.get_double(i * 16 + j) - want) < 1e-4);
      }
    api_->free_stream(0, s);
  }

  void gpu_schedules_run_on_a_grid_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("matmul") << "matmul M=64 N=48 K=40";
    QTest::newRow("matmul_tail") << "matmul M=30 N=20 K=9";
    QTest::newRow("add") << "add shape=40x25";
    QTest::newRow("conv") << "conv2d N=1 C=3 H=10 W=10 K=4 R=3 S=3 stride=1 pad=1";
    QTest::newRow("softmax") << "softmax M=6 N=70";
    QTest::newRow("layernorm") << "layernorm M=5 N=33";
  }
  void gpu_schedules_run_on_a_grid() {
    QFETCH(QString, spec);
    te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    const QString failure =
        against_interpreter(lowered(spec.toStdString(), schedule::default_gpu_schedule(dag), "gpu_kernel"), "cuda");
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
  }

  void cpu_schedules_run_on_one_thread() {
    const std::string spec = "conv2d N=1 C=3 H=10 W=10 K=4 R=3 S=3 stride=1 pad=1";
    loopir::Func f = lowered(spec, schedule::default_cpu_schedule(te::dag_from_spec(spec), 8), "cpu_kernel");
    const QString failure = against_interpreter(f, "cuda");
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
  }

  void failed_checks_become_errors() {
    using namespace loopir;
    Buffer idx = make_buffer("idx", DataType::kInt64, {3});
    Buffer data = make_buffer("data", DataType::kFloat32, {5});
    Buffer out = make_buffer("out", DataType::kFloat32, {3});
    VarRef i = make_var("i");
    Expr q = make_load(idx, {i});
    Expr guarded = make_check(logical_and(ge(q, make_int(0)), lt(q, make_int(5))), q, q,
                              "node 'g' (Gather): index {} out of range [0, 5)");
    Func f{"gather",
           {idx, data, out},
           make_for(i, make_int(0), make_int(3), make_store(out, {i}, make_load(data, {guarded})))};
    auto module = build_module({f}, Target::parse("cuda"));
    Tensor indices(DataType::kInt64, {3}), values = random_tensor(DataType::kFloat32, {5}, 3),
                                           result(DataType::kFloat32, {3});
    for (int k = 0; k < 3; ++k) indices.set_double(k, k == 1 ? 4 : k);
    module->call_host("gather", {&indices, &values, &result});
    QCOMPARE(result.get_double(1), values.get_double(4));
    indices.set_double(1, 7);
    try {
      module->call_host("gather", {&indices, &values, &result});
      QFAIL("an index out of range was not reported");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()) == "kernel 'gather': node 'g' (Gather): index 7 out of range [0, 5)", e.what());
    }
  }

  // A model on the device against the reference executor, and its kernels timed by CUDA events.
  void a_model_matches_the_reference_and_is_timed_by_events() {
    const Graph g = parse_graph(R"(graph mlp(%x: f32[4,32]) {
      %w = constant f32[32,16] random(3)
      %m = MatMul(%x, %w) : f32[4,16]
      %r = Relu(%m) : f32[4,16]
      %s = Softmax(%r) : f32[4,16]
      return %s
    })");
    const Tensor x = random_tensor(DataType::kFloat32, {4, 32}, 11);
    const QString failure = testing::compiled_vs_reference(g, {x}, "cuda", testing::kFloat32Rounding);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    const auto model = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("cuda"));
    QCOMPARE(model->device().type, DeviceType::kCUDA);
    const compile::Profile profile = compile::profile_model(*model, {x}, 1, 3, std::nullopt);
    for (const auto& k : profile.kernels) QVERIFY2(k.device_clock, "a kernel without CUDA event times");
    compile::RunTimes times;
    model->run({x}, &times);
    QCOMPARE(times.device_spans.size(), static_cast<size_t>(model->compiled_count()));
    for (const compile::RunTimes::DeviceSpan& d : times.device_spans) QVERIFY(d.end_ms >= d.begin_ms);
  }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "test_cuda.moc"
