// The opencl plugin on the first OpenCL device (CI: PoCL's CPU device, Debian pocl-opencl-icd):
// its DeviceAPI (attributes, copies in every direction, streams and cross-stream waits,
// workspaces, errors), its modules (GPU-style schedules on a grid, CPU schedules on one
// work-item, checks, both call paths) against the interpreter, the llvm plugin in the same
// process (both use LLVM 15), and a process with no OpenCL platform at all.
#include <QProcess>
#include <QtTest>
#include <numeric>
#include <random>

#include "core/analysis/calibrate.h"
#include "core/analysis/profile.h"
#include "core/compile/compiled_model.h"
#include "core/graph/text_format.h"
#include "core/loopir/interpreter.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/ndarray.h"
#include "core/runtime/reference_executor.h"
#include "core/schedule/default_schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"
#include "tests/plugins/compiled_vs_reference.h"
#include "tests/plugins/device_api_checks.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr Device kDevice{DeviceType::kOpenCL, 0};

// The halving steps of `reductions` trees over `lanes` work-items in an OpenCL source: with P
// the largest power of two <= lanes, a fold of lanes [P, lanes) when lanes is not P, then
// offsets P/2, ..., 1, each step's work-items below the offset reading lane t + offset, each
// step followed by a barrier.
void check_tree_steps(const std::string& source, int64_t lanes, int reductions) {
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = source.find(what); at != std::string::npos; at = source.find(what, at + 1)) ++n;
    return n;
  };
  int64_t power = 1;
  while (power * 2 <= lanes) power *= 2;
  int steps = 0;
  if (power < lanes) {
    QVERIFY2(count(" < ((long)" + std::to_string(lanes - power) + "L))) {") >= reductions, source.c_str());
    QVERIFY2(count(" + ((long)" + std::to_string(power) + "L))]") >= reductions, source.c_str());
    ++steps;
  }
  for (int64_t offset = power / 2; offset >= 1; offset /= 2, ++steps) {
    QVERIFY2(count(" < ((long)" + std::to_string(offset) + "L))) {") >= reductions, source.c_str());
    QVERIFY2(count(" + ((long)" + std::to_string(offset) + "L))]") >= reductions, source.c_str());
  }
  QVERIFY2(count("barrier(CLK_LOCAL_MEM_FENCE") >= reductions * (steps + 1), source.c_str());
}

}  // namespace

class TestOpenCl : public QObject {
  Q_OBJECT
  DeviceAPI* api_ = nullptr;

 private slots:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("opencl"), "the opencl plugin did not load");
    api_ = DeviceAPIRegistry::global().find(DeviceType::kOpenCL);
    QVERIFY(api_);
    QVERIFY2(api_->device_count() >= 1, "no OpenCL device: install pocl-opencl-icd (scripts/packages.txt)");
  }

  void attributes_are_answered_or_none() {
    QCOMPARE(std::get<int64_t>(api_->attribute(0, DeviceAttr::kExist)), int64_t{1});
    QCOMPARE(std::get<int64_t>(api_->attribute(99, DeviceAttr::kExist)), int64_t{0});
    QVERIFY(std::holds_alternative<std::monostate>(api_->attribute(99, DeviceAttr::kName)));
    QVERIFY(!std::get<std::string>(api_->attribute(0, DeviceAttr::kName)).empty());
    for (DeviceAttr a : {DeviceAttr::kMaxThreadsPerBlock, DeviceAttr::kMaxSharedMemoryPerBlock,
                         DeviceAttr::kMultiProcessorCount, DeviceAttr::kTotalMemoryBytes})
      QVERIFY2(std::get<int64_t>(api_->attribute(0, a)) > 0, device_attr_name(a).data());
    QVERIFY(std::get<std::string>(api_->attribute(0, DeviceAttr::kApiVersion)).rfind("OpenCL ", 0) == 0);
    QVERIFY(!std::get<std::vector<int64_t>>(api_->attribute(0, DeviceAttr::kMaxThreadDimensions)).empty());
    // OpenCL 1.2 has no query for these: "does not apply", never a typical number.
    QVERIFY(std::holds_alternative<std::monostate>(api_->attribute(0, DeviceAttr::kWarpSize)));
    QVERIFY(std::holds_alternative<std::monostate>(api_->attribute(0, DeviceAttr::kAvailableMemoryBytes)));
  }

  void bad_ids_and_sizes_are_errors() {
    check_bad_ids_and_sizes_are_errors(*api_, "opencl", "clCreateBuffer failed: CL_");
  }

  void copies_in_every_direction() { check_copies_in_every_direction(*api_, kDevice); }

  void ndarray_round_trip() { check_ndarray_round_trip(kDevice); }

  void workspaces_hold_data() { check_workspaces_hold_data(*api_, kDevice); }

  // A copy issued on one stream and consumed on another: `second` waits for `first` through
  // sync_stream_from_to, then reads what the copy on `first` wrote.
  void copy_on_one_stream_consumed_on_another() {
    check_copy_on_one_stream_consumed_on_another(*api_, kDevice, size_t{1} << 22);
  }

  // Kernels launched on a stream set_stream chose; the default queue sees them after a sync.
  void kernels_run_on_the_chosen_stream() { check_kernels_run_on_the_chosen_stream(*api_, kDevice, "opencl"); }

  void gpu_schedules_run_on_a_grid_data() { add_gpu_schedule_rows(); }

  void gpu_schedules_run_on_a_grid() {
    QFETCH(QString, spec);
    te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    loopir::Func f = lowered(spec.toStdString(), schedule::default_gpu_schedule(dag), "gpu_kernel");
    check_against_interpreter(f, "opencl");
    auto module = build_module({f}, Target::parse("opencl"));
    const std::string source = module->artifacts().at("opencl");
    QVERIFY2(source.find("__kernel void gpu_kernel") != std::string::npos, source.c_str());
  }

  void matmul_uses_local_memory_and_barriers() {
    te::ComputeDag dag = te::dag_from_spec("matmul M=32 N=32 K=32");
    loopir::Func f = lowered("matmul M=32 N=32 K=32", schedule::default_gpu_schedule(dag), "mm");
    auto module = build_module({f}, Target::parse("opencl"));
    const std::string source = module->artifacts().at("opencl");
    QVERIFY2(source.find("__local float") != std::string::npos, source.c_str());
    QVERIFY2(source.find("barrier(CLK_LOCAL_MEM_FENCE") != std::string::npos, source.c_str());
    QVERIFY2(source.find("get_local_id(0)") != std::string::npos, source.c_str());
    QVERIFY2(module->artifacts().at("launch").find("mm: grid of 4x4x1 work-groups, 8x8x1") != std::string::npos,
             module->artifacts().at("launch").c_str());
    // Too little local memory for the tiles: the same kernel on one work-item, still right.
    loopir::Func g = f;
    g.name = "mm_small_local";
    auto serial = build_module({g}, Target::parse("opencl -local_memory_bytes=16"));
    QVERIFY2(serial->artifacts().at("launch").find("one work-item") != std::string::npos,
             serial->artifacts().at("launch").c_str());
    check_against_interpreter(g, "opencl -local_memory_bytes=16");
  }

  // Root nests side by side (reductions bound to blocks, then the output): one __kernel each,
  // launched in order (the end of a launch is the barrier between blocks that one kernel cannot have).
  void root_nests_are_launched_in_order() {
    te::ComputeDag dag = te::dag_from_spec("softmax M=6 N=70");
    schedule::Schedule s = schedule::parse_schedule(
        "bind(row_max.i, blockIdx.x)\nbind(exp_sum.i, blockIdx.x)\nsplit(softmax.j, 32)\n"
        "bind(softmax.i, blockIdx.x)\nbind(softmax.j.inner, threadIdx.x)");
    loopir::Func f = lowered("softmax M=6 N=70", s, "sm");
    auto module = build_module({f}, Target::parse("opencl"));
    const std::string launch = module->artifacts().at("launch");
    QVERIFY2(launch.find("sm: grid of") != std::string::npos && launch.find("; grid of") != std::string::npos,
             launch.c_str());
    const std::string source = module->artifacts().at("opencl");
    QVERIFY2(source.find("__kernel void sm_0(") != std::string::npos, source.c_str());
    QVERIFY2(source.find("__kernel void sm_1(") != std::string::npos, source.c_str());
    check_against_interpreter(f, "opencl");
  }

  // Vectorized loops as OpenCL vector types when the target allows the lanes (vector_width): the
  // f32 loads and stores at consecutive addresses become vloadN/vstoreN, invariant values are
  // broadcast, math functions take the vectors; a loop with anything else, or wider than the
  // target allows, stays a loop. The results match the interpreter either way.
  void vectorized_loops_use_vector_types() {
    const std::string spec = "softmax M=6 N=64";
    schedule::Schedule vec = schedule::parse_schedule(
        "split(softmax.j, 8)\nbind(softmax.i, blockIdx.x)\nbind(softmax.j.outer, threadIdx.x)\n"
        "vectorize(softmax.j.inner)");
    loopir::Func f = lowered(spec, vec, "vec");
    for (int width : {8, 4, 1}) {
      auto module = build_module({f}, Target::parse("opencl -vector_width=" + std::to_string(width)));
      const std::string source = module->artifacts().at("opencl");
      const bool vector = source.find("vstore8(") != std::string::npos;
      QVERIFY2(vector == (width == 8), source.c_str());
      if (vector) {
        QVERIFY2(source.find("exp((vload8(0, ") != std::string::npos, source.c_str());
        QVERIFY2(source.find("((float8)(") != std::string::npos, source.c_str());  // the row's max, broadcast
      }
      check_against_interpreter(f, "opencl -vector_width=" + std::to_string(width));
    }
    // A strided access (the transposed read of a matmul's column) keeps the loop.
    schedule::Schedule strided = schedule::parse_schedule(
        "split(C.i, 4)\nbind(C.j, blockIdx.x)\nreorder(C.j, C.i.outer, C.k, C.i.inner)\nvectorize(C.i.inner)");
    loopir::Func g = lowered("matmul M=8 N=8 K=4", strided, "col");
    auto module = build_module({g}, Target::parse("opencl -vector_width=4"));
    QVERIFY2(module->artifacts().at("opencl").find("vstore4(") == std::string::npos,
             module->artifacts().at("opencl").c_str());
    check_against_interpreter(g, "opencl -vector_width=4");
  }

  // The default GPU schedule of a row reduction (softmax, layernorm): one work-group per row, each
  // reduction computed by the work-group's work-items together (each one's partial result in
  // __local memory, then a tree: the lower half combines the upper half into itself, a barrier
  // after every halving), one __kernel. The sizes of BERT's attention softmax and layer norm too.
  void row_reductions_are_cooperative_on_one_work_group_per_row_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("threads");  // work-items per row: min(64, row length)
    QTest::newRow("softmax 6x70") << "softmax M=6 N=70" << 64;
    QTest::newRow("layernorm 5x48") << "layernorm M=5 N=48" << 48;
    QTest::newRow("layernorm 5x33") << "layernorm M=5 N=33" << 33;
    QTest::newRow("softmax (1,12,128,128)") << "softmax M=1536 N=128" << 64;
    QTest::newRow("layernorm (128,768)") << "layernorm M=128 N=768" << 64;
  }
  void row_reductions_are_cooperative_on_one_work_group_per_row() {
    QFETCH(QString, spec);
    QFETCH(int, threads);
    te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    loopir::Func f = lowered(spec.toStdString(), schedule::default_gpu_schedule(dag), "rows");
    auto module = build_module({f}, Target::parse("opencl"));
    const std::string launch = module->artifacts().at("launch");
    QVERIFY2(launch.find("rows: grid of") != std::string::npos && launch.find("; grid of") == std::string::npos,
             launch.c_str());
    QVERIFY2(launch.find(", " + std::to_string(threads) + "x1x1 work-items") != std::string::npos, launch.c_str());
    const std::string source = module->artifacts().at("opencl");
    QVERIFY2(source.find("__local float") != std::string::npos, source.c_str());
    check_tree_steps(source, threads, 2);
    check_against_interpreter(f, "opencl", 1e-4);
  }

  // A reduction that is the kernel's output (sum, max) or feeds it (mean): one work-group per
  // output element, its work-items reducing together; the element stored by work-item 0. Against
  // the interpreter: max exactly, sums within float rounding (the tree adds in another order).
  void reductions_reduce_across_a_work_group_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("threads");
    for (const char* op : {"sum", "max", "mean"})
      for (int k : {1, 7, 100, 1000, 4096})
        for (int threads : {32, 64, 256})
          QTest::newRow(qPrintable(QString("%1 k=%2 T=%3").arg(op).arg(k).arg(threads))) << op << k << threads;
  }
  void reductions_reduce_across_a_work_group() {
    QFETCH(QString, op);
    QFETCH(int, k);
    QFETCH(int, threads);
    const te::ComputeDag dag = last_axis_reduction(op.toStdString(), 3, k);
    loopir::Func f = lower::lower(dag, schedule::default_gpu_schedule(dag, 8, threads)).func;
    f.name = "reduce";
    auto module = build_module({f}, Target::parse("opencl"));
    const std::string launch = module->artifacts().at("launch");
    QVERIFY2(launch.find("reduce: grid of") == 0, launch.c_str());
    if (k >= 32) {  // fewer elements per result keep one work-item each
      const int lanes = std::min(k, threads);
      QVERIFY2(
          launch.find("reduce: grid of 3x1x1 work-groups, " + std::to_string(lanes) + "x1x1 work-items each\n") == 0,
          launch.c_str());
      check_tree_steps(module->artifacts().at("opencl"), lanes, 1);
    }
    check_against_interpreter(f, "opencl", op == "max" ? 0 : 1e-4);
  }

  // Whole graphs whose kernels reduce: GlobalAveragePool of a ResNet's last feature map, a mean and
  // an ArgMax over a row, each kernel on a grid and matching the reference.
  void reduction_kernels_of_models_run_on_a_grid_data() {
    QTest::addColumn<QString>("graph");
    QTest::addColumn<QString>("shape");
    QTest::newRow("GlobalAveragePool") << "%y = GlobalAveragePool(%x)"
                                       << "1,512,7,7";
    QTest::newRow("ReduceMean") << "%y = ReduceMean(%x) {axes=[-1], keepdims=0}"
                                << "4,1000";
    QTest::newRow("ReduceMax") << "%y = ReduceMax(%x) {axes=[1], keepdims=1}"
                               << "3,777";
    QTest::newRow("ArgMax") << "%y = ArgMax(%x) {axis=1, keepdims=0}"
                            << "4,300";
  }
  void reduction_kernels_of_models_run_on_a_grid() {
    QFETCH(QString, graph);
    QFETCH(QString, shape);
    Shape dims;
    for (const QString& d : shape.split(',')) dims.push_back(d.toLongLong());
    const Graph g =
        parse_graph(QString("graph r(%x: f32[%1]) {\n  %2\n  return %y\n}\n").arg(shape, graph).toStdString());
    const Tensor x = random_tensor(DataType::kFloat32, dims, 5);
    const QString failure = compiled_vs_reference(g, {x}, "opencl", kFloat32Rounding);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    auto model = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("opencl"));
    const std::string launch = model->module()->artifacts().at("launch");
    QVERIFY2(launch.find("grid of") != std::string::npos && launch.find("one work-item") == std::string::npos,
             launch.c_str());
  }

  void cpu_schedules_run_on_one_work_item_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("matmul") << "matmul M=33 N=40 K=17";
    QTest::newRow("softmax") << "softmax M=4 N=50";
    QTest::newRow("conv") << "conv2d N=1 C=3 H=10 W=10 K=4 R=3 S=3 stride=1 pad=1";
  }
  void cpu_schedules_run_on_one_work_item() {
    QFETCH(QString, spec);
    te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    loopir::Func f = lowered(spec.toStdString(), schedule::default_cpu_schedule(dag, 8), "cpu_kernel");
    check_against_interpreter(f, "opencl");
  }

  void build_errors_name_the_kernel() {
    // A scope OpenCL does not have is refused by the code generator, naming the kernel and the buffer.
    using namespace loopir;
    Buffer out = make_buffer("out", DataType::kFloat32, {4});
    Buffer tmp = make_buffer("tmp", DataType::kFloat32, {4}, "myacc.sram");
    VarRef i = make_var("i");
    Func f{"odd_scope",
           {out},
           make_allocate(tmp, make_for(i, make_int(0), make_int(4), make_store(out, {i}, make_load(tmp, {i}))))};
    try {
      build_module({f}, Target::parse("opencl"));
      QFAIL("an unknown scope was accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("kernel 'odd_scope': opencl codegen: buffer 'tmp'") != std::string::npos,
               e.what());
    }
  }

  void failed_checks_become_errors() { check_failed_checks_become_errors("opencl"); }

  // PoCL links LLVM 15's shared library, as the llvm plugin does: one copy of LLVM's options
  // in the process. Both backends compile and run here, in either order.
  void llvm_and_opencl_share_a_process() {
    if (!CodeGenRegistry::global().has("llvm")) QSKIP("the llvm plugin is not built");
    te::ComputeDag dag = te::dag_from_spec("matmul M=20 N=20 K=20");
    loopir::Func f = lowered("matmul M=20 N=20 K=20", schedule::default_cpu_schedule(dag, 8), "both");
    check_against_interpreter(f, "llvm");
    check_against_interpreter(f, "opencl");
    check_against_interpreter(f, "llvm");
  }

  // A whole model on the device: the memory plan's blocks in device memory, weights copied once,
  // and data crossing to the host only around the kernel that has no compiled form (Det).
  void whole_models_run_in_device_memory() {
    const Graph g = parse_graph(R"(graph mixed(%x: f32[2,3,3]) {
      %w = constant f32[2,3,3] random(3)
      %a = Mul(%x, %w) : f32[2,3,3]
      %r = Relu(%a) : f32[2,3,3]
      %d = Det(%r) : f32[2]
      %e = Exp(%d) : f32[2]
      %s = Add(%d, %e) : f32[2]
      return %s, %r
    })");
    const auto model = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("opencl"));
    QCOMPARE(model->device().type, DeviceType::kOpenCL);
    const Tensor x = random_tensor(DataType::kFloat32, {2, 3, 3}, 11);
    const std::vector<Tensor> want = run_reference(g, {x});
    compile::RunTimes times;
    for (int run = 0; run < 2; ++run) {  // the second run finds the weights on the device already
      times = {};
      const std::vector<Tensor> got = model->run({x}, &times);
      QCOMPARE(got.size(), want.size());
      for (size_t o = 0; o < got.size(); ++o)
        for (int64_t i = 0; i < want[o].numel(); ++i)
          QVERIFY2(
              std::abs(got[o].get_double(i) - want[o].get_double(i)) <= 1e-4 * (1 + std::abs(want[o].get_double(i))),
              qPrintable(QString("output %1 element %2").arg(o).arg(i)));
    }
    int det = -1;
    for (size_t k = 0; k < model->kernels().size(); ++k)
      if (!model->kernels()[k].compiled) det = static_cast<int>(k);
    QVERIFY2(det >= 0 && model->compiled_count() >= 2, "expected Det on the reference kernels, the rest compiled");
    // In: x (the run's); r to the host for Det and d back for Exp/Add; out: s (r is on the host
    // already, since Det needed it). Never w: the weights stay on the device from the first run.
    QString seen;
    for (const compile::RunTimes::Copy& c : times.copies) {
      QVERIFY(c.bytes > 0 && c.end_ms >= c.begin_ms);
      seen += QString("%1%2@%3 ").arg(c.to_device ? ">" : "<", QString::fromStdString(c.value)).arg(c.kernel);
    }
    QCOMPARE(seen, QString(">x@-1 <r@%1 >d@%2 <s@-1 ").arg(det).arg(det + 1));

    // The device's events time every compiled kernel; the reference one has only the host's clock.
    QCOMPARE(times.device_spans.size(), static_cast<size_t>(model->compiled_count()));
    for (const compile::RunTimes::DeviceSpan& d : times.device_spans)
      QVERIFY(d.kernel != det && d.end_ms >= d.begin_ms && d.begin_ms >= times.kernel_spans_ms[d.kernel].first);
    const analysis::Profile profile = analysis::profile_model(*model, {x}, 1, 3, std::nullopt);
    for (size_t k = 0; k < profile.kernels.size(); ++k)
      QCOMPARE(profile.kernels[k].device_clock, static_cast<int>(k) != det);
    const nlohmann::json j = analysis::profile_json(profile);
    QCOMPARE(j.at("copies").size(), size_t{4});
    QCOMPARE(j.at("kernels").at(det).at("clock").get<std::string>(), std::string("host"));
    const std::string trace = analysis::chrome_trace(profile);
    QVERIFY(trace.find("\"device kernel\"") != std::string::npos &&
            trace.find("host<->device copies") != std::string::npos);
    const compile::RunTimes back = analysis::run_times_from_json(analysis::run_times_json(profile.last_run));
    QCOMPARE(back.copies.size(), profile.last_run.copies.size());
    QCOMPARE(back.device_spans.size(), profile.last_run.device_spans.size());
  }

  // The roofline's ceilings of the device itself: kernels on a grid, timed on device arrays (no
  // host copies in the time), kept under the device's name.
  void calibrate_measures_the_device() {
    const Target target = Target::parse("opencl");
    const analysis::MachineCeilings c = analysis::calibrate(target, {.quick = true});
    const DeviceAttrValue name = api_->attribute(0, DeviceAttr::kName);
    QVERIFY(std::holds_alternative<std::string>(name));
    QCOMPARE(c.machine, std::get<std::string>(name));
    QCOMPARE(c.compute.size(), size_t{1});
    QCOMPARE(QString::fromStdString(c.compute[0].name), QString("fma"));
    QVERIFY2(c.peak_gflops() > 0.1, qPrintable(QString::number(c.peak_gflops())));
    QVERIFY2(c.dram_gbps() > 0.1, qPrintable(QString::number(c.dram_gbps())));
    QCOMPARE(c.bandwidth.size(), size_t{2});
    QVERIFY(c.threads > 1);  // a grid, not one work-item
  }

  // No OpenCL platform (the ICD loader pointed at an empty folder): the plugin loads, lists its
  // target kind and no device, and a run says why.
  void no_platform_means_no_device_not_a_crash() {
    QTemporaryDir empty;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OCL_ICD_VENDORS", empty.path());
    env.insert("OPENCL_VENDOR_PATH", empty.path());
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(TESSEL_BINARY_DIR "/app/cli/tessel", {"targets"});
    QVERIFY(p.waitForFinished(60000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out + p.readAllStandardError()));
    QVERIFY2(out.contains("opencl   on opencl"), qPrintable(out));
    QVERIFY2(!out.contains("opencl:0 (from opencl)"), qPrintable(out));
    QVERIFY2(out.contains("  opencl: no device (from opencl)"), qPrintable(out));  // and why, when known
  }
};

QTEST_GUILESS_MAIN(TestOpenCl)
#include "test_opencl.moc"
