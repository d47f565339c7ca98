// The cuda plugin on the first CUDA device (ctest label gpu: run by scripts/check-gpu on a machine
// with an NVIDIA GPU, left out by label everywhere else). Its DeviceAPI (attributes, copies in
// every direction, streams and cross-stream waits, workspaces), its modules (GPU schedules on a
// grid, CPU schedules on one thread, checks, both call paths) against the interpreter, a model
// against the reference executor, and launch times from CUDA events. With no device it fails,
// saying why: a test that passed without a GPU would tell nothing.
#include <QtTest>

#include "core/analysis/profile.h"
#include "core/compile/compiled_model.h"
#include "core/graph/text_format.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"
#include "tests/plugins/compiled_vs_reference.h"
#include "tests/plugins/device_api_checks.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr Device kDevice{DeviceType::kCUDA, 0};

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
    check_bad_ids_and_sizes_are_errors(*api_, "cuda", "cuMemAlloc failed: CUDA_ERROR_");
  }

  void copies_in_every_direction() { check_copies_in_every_direction(*api_, kDevice); }

  void ndarray_round_trip() { check_ndarray_round_trip(kDevice); }

  void workspaces_hold_data() { check_workspaces_hold_data(*api_, kDevice); }

  // A copy issued on one stream and consumed on another, ordered only by sync_stream_from_to
  // (64 MiB: a GPU copies 16 MiB too fast for an unordered read to be caught).
  void copy_on_one_stream_consumed_on_another() {
    check_copy_on_one_stream_consumed_on_another(*api_, kDevice, size_t{1} << 24);
  }

  void kernels_run_on_the_chosen_stream() { check_kernels_run_on_the_chosen_stream(*api_, kDevice, "cuda"); }

  void gpu_schedules_run_on_a_grid_data() { add_gpu_schedule_rows(); }

  void gpu_schedules_run_on_a_grid() {
    QFETCH(QString, spec);
    te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    check_against_interpreter(lowered(spec.toStdString(), schedule::default_gpu_schedule(dag), "gpu_kernel"), "cuda",
                              1e-4);
  }

  void figure_7_schedules_match_the_interpreter() {
    for (const char* file : {"matmul_gpu_shared.sched", "matmul_gpu_cooperative.sched"}) {
      QFile text(QString(TESSEL_SOURCE_DIR "/resources/schedules/") + file);
      QVERIFY2(text.open(QIODevice::ReadOnly), file);
      const schedule::Schedule s = schedule::parse_schedule(text.readAll().toStdString());
      check_against_interpreter(lowered("matmul M=64 N=48 K=32", s, "fig7"), "cuda", 1e-4);
    }
  }

  void cpu_schedules_run_on_one_thread() {
    const std::string spec = "conv2d N=1 C=3 H=10 W=10 K=4 R=3 S=3 stride=1 pad=1";
    loopir::Func f = lowered(spec, schedule::default_cpu_schedule(te::dag_from_spec(spec), 8), "cpu_kernel");
    check_against_interpreter(f, "cuda", 1e-4);
  }

  void failed_checks_become_errors() { check_failed_checks_become_errors("cuda"); }

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
    const analysis::Profile profile = analysis::profile_model(*model, {x}, 1, 3, std::nullopt);
    for (const auto& k : profile.kernels) QVERIFY2(k.device_clock, "a kernel without CUDA event times");
    compile::RunTimes times;
    model->run({x}, &times);
    QCOMPARE(times.device_spans.size(), static_cast<size_t>(model->compiled_count()));
    for (const compile::RunTimes::DeviceSpan& d : times.device_spans) QVERIFY(d.end_ms >= d.begin_ms);
  }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "test_cuda.moc"
