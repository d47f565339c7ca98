// The cuda plugin where no GPU is needed: it loads (with or without a driver), lists its target
// kind and options, says why there is no device when there is none, and its code generator turns
// GPU schedules (shared-memory tiles, barriers, root nests side by side), CPU schedules, f16, bf16,
// integer arithmetic and run-time checks into CUDA C that NVRTC compiles to PTX. Runs wherever
// the plugin builds; what needs a device is in test_cuda.cpp (ctest label gpu).
#include <QProcess>
#include <QtTest>

#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/device_api.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"
#include "tests/plugins/device_api_checks.h"

using namespace tessel;
using tessel::testing::lowered;

namespace {

loopir::Func gpu_kernel(const std::string& spec, const std::string& name) {
  return lowered(spec, schedule::default_gpu_schedule(te::dag_from_spec(spec)), name);
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

class TestCudaCodegen : public QObject {
  Q_OBJECT
  DeviceAPI* api_ = nullptr;

 private slots:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("cuda"), "the cuda plugin did not load");
    api_ = DeviceAPIRegistry::global().find(DeviceType::kCUDA);
    QVERIFY(api_);
  }

  void the_target_kind_has_typed_options() {
    const TargetKind& k = TargetKindRegistry::global().get("cuda");
    QCOMPARE(QString::fromStdString(k.device), QString("cuda"));
    for (const char* option : {"device", "max_threads_per_block", "shared_memory_bytes", "warp_size", "arch"})
      QVERIFY2(k.find_option(option), option);
    const Target t = Target::parse("cuda -arch=sm_80 -shared_memory_bytes=1024");
    QCOMPARE(QString::fromStdString(t.get_string("arch")), QString("sm_80"));
    QCOMPARE(t.get_int("shared_memory_bytes"), int64_t{1024});
    try {
      Target::parse("cuda -arch=compute_80");
      QFAIL("an arch not of the form sm_XY was accepted");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), "sm_XY"), e.what());
    }
  }

  // `tessel targets` lists the kind and either the devices or, with none, why: both are answers
  // this test checks, whichever this machine gives.
  void targets_lists_the_kind_and_the_devices_or_why_none() {
    QProcess p;
    p.start(TESSEL_BINARY_DIR "/app/cli/tessel", {"targets"});
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out + p.readAllStandardError()));
    QVERIFY2(out.contains("cuda     on cuda"), qPrintable(out));
    QVERIFY2(out.contains("-arch") && out.contains("-shared_memory_bytes"), qPrintable(out));
    if (api_->device_count() == 0) {
      const std::string why = api_->why_no_device();
      QVERIFY2(!why.empty(), "0 CUDA devices and no reason given");
      QVERIFY2(out.contains(QString::fromStdString("  cuda: no device (from cuda): " + why)), qPrintable(out));
      QVERIFY2(!out.contains("cuda:0 (from cuda)"), qPrintable(out));
    } else {
      QVERIFY2(out.contains("cuda:0 (from cuda)"), qPrintable(out));
      QVERIFY2(api_->why_no_device().empty(), api_->why_no_device().c_str());
    }
  }

  void gpu_schedules_compile_to_ptx_data() { tessel::testing::add_gpu_schedule_rows(); }

  void gpu_schedules_compile_to_ptx() {
    QFETCH(QString, spec);
    auto module = build_module({gpu_kernel(spec.toStdString(), "gpu_kernel")}, Target::parse("cuda"));
    const auto artifacts = module->artifacts();
    QVERIFY2(contains(artifacts.at("cuda"), "extern \"C\" __global__ void gpu_kernel"), artifacts.at("cuda").c_str());
    QVERIFY2(artifacts.count("ptx") && contains(artifacts.at("ptx"), ".entry gpu_kernel"),
             "NVRTC made no PTX for the kernel");
    QVERIFY2(contains(artifacts.at("launch"), "grid of"), artifacts.at("launch").c_str());
  }

  // The half of Figure 7 that needs no GPU: the tiles in __shared__ arrays, barriers between the
  // fetch and the use, threads from threadIdx, and the grid the launch note promises.
  void matmul_uses_shared_memory_and_barriers() {
    auto module = build_module({gpu_kernel("matmul M=32 N=32 K=32", "mm")}, Target::parse("cuda"));
    const std::string source = module->artifacts().at("cuda");
    QVERIFY2(contains(source, "__shared__ float"), source.c_str());
    QVERIFY2(contains(source, "__syncthreads();"), source.c_str());
    QVERIFY2(contains(source, "threadIdx.x") && contains(source, "blockIdx.y"), source.c_str());
    const std::string launch = module->artifacts().at("launch");
    QVERIFY2(contains(launch, "mm: grid of 4x4x1 blocks, 8x8x1 threads each"), launch.c_str());
    QVERIFY2(contains(module->artifacts().at("ptx"), "bar.sync"), "no barrier in the PTX");
    // Too little shared memory for the tiles: one thread runs the kernel in order.
    auto serial =
        build_module({gpu_kernel("matmul M=32 N=32 K=32", "mm")}, Target::parse("cuda -shared_memory_bytes=16"));
    QVERIFY2(contains(serial->artifacts().at("launch"), "one thread runs the loop program in order"),
             serial->artifacts().at("launch").c_str());
    QVERIFY(!contains(serial->artifacts().at("cuda"), "__shared__"));
  }

  // Figure 7's pair: both run on the grid of the block's threads, the cooperative one with the
  // tile copies bound to those threads (each copies one element) instead of a loop in every one.
  void figure_7_schedules_run_on_a_grid() {
    const std::string spec = "matmul M=32 N=32 K=32";
    for (const char* file : {"matmul_gpu_shared.sched", "matmul_gpu_cooperative.sched"}) {
      QFile text(QString(TESSEL_SOURCE_DIR "/resources/schedules/") + file);
      QVERIFY2(text.open(QIODevice::ReadOnly), file);
      const schedule::Schedule s = schedule::parse_schedule(text.readAll().toStdString());
      auto module = build_module({lowered(spec, s, "fig7")}, Target::parse("cuda"));
      const std::string launch = module->artifacts().at("launch");
      QVERIFY2(contains(launch, "fig7: grid of 2x2x1 blocks, 16x16x1 threads each"), launch.c_str());
      const std::string source = module->artifacts().at("cuda");
      const bool cooperative = std::string(file) == "matmul_gpu_cooperative.sched";
      // The copy loop over a tile's columns: a loop in every thread, or the thread's own index.
      QVERIFY2(contains(source, "for (long v_ax1") != cooperative, source.c_str());
      QVERIFY(contains(module->artifacts().at("ptx"), ".entry fig7"));
    }
  }

  // A grid CUDA cannot launch (more than 65535 blocks along y) runs as one thread instead.
  void grids_beyond_the_limits_run_as_one_thread() {
    auto module = build_module({gpu_kernel("matmul M=524296 N=8 K=1", "tall")}, Target::parse("cuda"));
    const std::string launch = module->artifacts().at("launch");
    QVERIFY2(
        contains(launch, "one thread runs the loop program in order (65537 blocks along y exceed the grid's 65535)"),
        launch.c_str());
  }

  // Root nests side by side (softmax's reductions bound to blocks, then its output) are separate
  // kernels; the default GPU schedule of softmax is one kernel, a block per row.
  void root_nests_are_separate_kernels() {
    const schedule::Schedule nests = schedule::parse_schedule(
        "bind(row_max.i, blockIdx.x)\nbind(exp_sum.i, blockIdx.x)\nsplit(softmax.j, 32)\n"
        "bind(softmax.i, blockIdx.x)\nbind(softmax.j.inner, threadIdx.x)");
    auto module = build_module({lowered("softmax M=6 N=70", nests, "sm")}, Target::parse("cuda"));
    const std::string ptx = module->artifacts().at("ptx");
    QVERIFY2(contains(ptx, ".entry sm_0(") && contains(ptx, ".entry sm_1("), ptx.c_str());
    auto rows = build_module({gpu_kernel("softmax M=6 N=70", "rows")}, Target::parse("cuda"));
    const std::string launch = rows->artifacts().at("launch");
    QVERIFY2(contains(launch, "rows: grid of") && !contains(launch, "; grid of"), launch.c_str());
    QVERIFY2(contains(rows->artifacts().at("cuda"), "__syncthreads()"), rows->artifacts().at("cuda").c_str());
  }

  // A reduction that is the kernel's output: a block per output element, its threads reducing
  // together through a tree in shared memory (the halving steps and their barriers), thread 0
  // storing the element; the reduction inside softmax likewise. NVRTC compiles both.
  void reductions_across_a_block_compile_to_ptx() {
    const te::ComputeDag dag = tessel::testing::last_axis_reduction("sum", 1024, 4096);
    loopir::Func f = lower::lower(dag, schedule::default_gpu_schedule(dag, 8, 256)).func;
    f.name = "row_sum";
    auto module = build_module({f, gpu_kernel("softmax M=1536 N=128", "softmax_rows")}, Target::parse("cuda"));
    const auto artifacts = module->artifacts();
    const std::string launch = artifacts.at("launch");
    QVERIFY2(contains(launch, "row_sum: grid of 1024x1x1 blocks, 256x1x1 threads each"), launch.c_str());
    QVERIFY2(contains(launch, "softmax_rows: grid of 1536x1x1 blocks, 64x1x1 threads each"), launch.c_str());
    const std::string source = artifacts.at("cuda");
    QVERIFY2(contains(source, "__shared__ float b_Y_red[256];"), source.c_str());
    for (int offset : {128, 64, 32, 16, 8, 4, 2, 1})
      QVERIFY2(contains(source, " + ((long)" + std::to_string(offset) + "L))]"), source.c_str());
    QVERIFY2(contains(source, " == ((long)0L))) {"), source.c_str());  // thread 0 stores
    QVERIFY2(contains(artifacts.at("ptx"), ".entry row_sum") && contains(artifacts.at("ptx"), "bar.sync"),
             "no PTX with barriers for row_sum");
  }

  void cpu_schedules_compile_for_one_thread() {
    const std::string spec = "conv2d N=1 C=3 H=10 W=10 K=4 R=3 S=3 stride=1 pad=1";
    loopir::Func f = lowered(spec, schedule::default_cpu_schedule(te::dag_from_spec(spec), 8), "cpu_kernel");
    auto module = build_module({f}, Target::parse("cuda"));
    QVERIFY2(contains(module->artifacts().at("launch"), "one thread"), module->artifacts().at("launch").c_str());
    QVERIFY(contains(module->artifacts().at("ptx"), ".entry cpu_kernel"));
  }

  // f16 and bf16 storage, integer floor division and modulo, math calls and a run-time check:
  // the prelude's helpers, compiled by NVRTC.
  void every_prelude_helper_compiles() {
    using namespace loopir;
    Buffer h = make_buffer("h", DataType::kFloat16, {8});
    Buffer b = make_buffer("b", DataType::kBFloat16, {8});
    Buffer idx = make_buffer("idx", DataType::kInt64, {8});
    Buffer out = make_buffer("out", DataType::kFloat16, {8});
    Buffer tmp = make_buffer("tmp", DataType::kFloat16, {8}, "local");
    VarRef i = make_var("i");
    Expr q = make_load(idx, {i});
    Expr checked = make_check(logical_and(ge(q, make_int(0)), lt(q, make_int(8))), q, q, "index {} out of range");
    Expr x = make_cast(DataType::kFloat32, make_load(h, {checked})) * make_cast(DataType::kFloat32, make_load(b, {i}));
    Expr y = make_call("exp", {x}, DataType::kFloat32) + make_call("tanh", {x}, DataType::kFloat32) +
             make_cast(DataType::kFloat32, max(q / make_int(3), q % make_int(5))) +
             make_cast(DataType::kFloat32, make_call("abs", {min(q, make_int(-2))}, DataType::kInt64));
    Func f{"helpers",
           {h, b, idx, out},
           make_allocate(tmp, make_for(i, make_int(0), make_int(8),
                                       make_seq({make_store(tmp, {i}, make_cast(DataType::kFloat16, y)),
                                                 make_store(out, {i}, make_load(tmp, {i}))})))};
    auto module = build_module({f}, Target::parse("cuda"));
    const std::string source = module->artifacts().at("cuda");
    QVERIFY2(contains(source, "vstore_half_rte(") && contains(source, "tessel_bf16_to_float("), source.c_str());
    QVERIFY2(contains(source, "tessel_check_failed(") && contains(source, "tessel_floordiv("), source.c_str());
    QVERIFY(contains(module->artifacts().at("ptx"), ".entry helpers"));
  }

  void codegen_errors_name_the_kernel() {
    using namespace loopir;
    Buffer out = make_buffer("out", DataType::kFloat32, {4});
    Buffer tmp = make_buffer("tmp", DataType::kFloat32, {4}, "myacc.sram");
    VarRef i = make_var("i");
    Func f{"odd_scope",
           {out},
           make_allocate(tmp, make_for(i, make_int(0), make_int(4), make_store(out, {i}, make_load(tmp, {i}))))};
    try {
      build_module({f}, Target::parse("cuda"));
      QFAIL("an unknown scope was accepted");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(),
                        "kernel 'odd_scope': cuda codegen: buffer 'tmp' is in scope 'myacc.sram', which "
                        "CUDA does not have"),
               e.what());
    }
  }

  // With no device, a module still has its source and PTX, and running it says why it cannot.
  void running_without_a_device_says_why() {
    if (api_->device_count() > 0) QSKIP("this machine has a CUDA device: test_cuda (label gpu) runs kernels");
    auto module = build_module({gpu_kernel("add shape=4x4", "add")}, Target::parse("cuda"));
    Tensor a(DataType::kFloat32, {4, 4}), b(DataType::kFloat32, {4, 4}), c(DataType::kFloat32, {4, 4});
    try {
      module->call_host("add", {&a, &b, &c});
      QFAIL("a kernel ran without a device");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), "kernel 'add': cuda: device cuda:0 does not exist (" + api_->why_no_device()),
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestCudaCodegen)
#include "test_cuda_codegen.moc"
