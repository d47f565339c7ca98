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

using namespace tessel;

namespace {

constexpr Device kDevice{DeviceType::kOpenCL, 0};

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

// The lowered function of `spec` under `s`.
loopir::Func lowered(const std::string& spec, const schedule::Schedule& s, const std::string& name) {
  loopir::Func f = lower::lower(te::dag_from_spec(spec), s).func;
  f.name = name;
  return f;
}

// Runs f with the interpreter and with `target` through call_host; compares every output element.
void check_against_interpreter(const loopir::Func& f, const std::string& target, double tol = 1e-5) {
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
    if (std::abs(w - g) > tol * (1 + std::abs(w)))
      QFAIL(qPrintable(QString("%1 on %2: element %3: interpreter %4, backend %5")
                           .arg(QString::fromStdString(f.name), QString::fromStdString(target))
                           .arg(i)
                           .arg(w)
                           .arg(g)));
  }
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
    try {
      api_->set_device(99);
      QFAIL("set_device(99) did not throw");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("opencl:99 does not exist") != std::string::npos, e.what());
    }
    try {
      api_->alloc_data_space(0, size_t{1} << 62, 64);
      QFAIL("a 4 EiB allocation did not throw");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("clCreateBuffer failed: CL_") != std::string::npos, e.what());
    }
  }

  void copies_in_every_direction() {
    const size_t n = 1000;
    std::vector<float> host = iota_floats(n, 1);
    DataSpace a = api_->alloc_data_space(0, n * 4, 64), b = api_->alloc_data_space(0, n * 4, 64);
    api_->copy_host_to_device(host.data(), a, 0, n * 4, kDevice, nullptr);
    host.assign(n, 0);  // the copy has read it already
    api_->copy_device_to_device(a, 0, b, 0, n * 4, kDevice, nullptr);
    // Offsets on both sides: b[10..20) = a[500..510).
    api_->copy_device_to_device(a, 500 * 4, b, 10 * 4, 10 * 4, kDevice, nullptr);
    // Overlapping regions of one buffer (OpenCL refuses them; the API copies through a temporary).
    api_->copy_device_to_device(b, 100 * 4, b, 101 * 4, 50 * 4, kDevice, nullptr);
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

  // A copy issued on one stream and consumed on another: `second` waits for `first` through
  // sync_stream_from_to, then reads what the copy on `first` wrote.
  void copy_on_one_stream_consumed_on_another() {
    const size_t n = size_t{1} << 22;  // 16 MiB: long enough that an unsynchronized read would see zeros
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
    QCOMPARE(back[0], 0.0f);
    QCOMPARE(back[n - 1], static_cast<float>(n - 1));
    QVERIFY(back == host);
    api_->stream_sync(0, first);
    api_->free_data_space(0, src);
    api_->free_data_space(0, dst);
    api_->free_stream(0, first);
    api_->free_stream(0, second);
  }

  // Kernels launched on a stream set_stream chose; the default queue sees them after a sync.
  void kernels_run_on_the_chosen_stream() {
    loopir::Func f =
        lowered("matmul M=16 N=16 K=16", schedule::default_gpu_schedule(te::dag_from_spec("matmul M=16 N=16 K=16")),
                "mm_on_stream");
    auto module = build_module({f}, Target::parse("opencl"));
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

  // The default GPU schedule of a row reduction (softmax, layernorm): one work-group per row, each
  // reduction computed cooperatively (every work-item's partial result in __local memory, a barrier,
  // then each work-item combines them), one __kernel.
  void row_reductions_are_cooperative_on_one_work_group_per_row() {
    for (const char* spec : {"softmax M=6 N=70", "layernorm M=5 N=48"}) {
      te::ComputeDag dag = te::dag_from_spec(spec);
      loopir::Func f = lowered(spec, schedule::default_gpu_schedule(dag), "rows");
      auto module = build_module({f}, Target::parse("opencl"));
      const std::string launch = module->artifacts().at("launch");
      QVERIFY2(launch.find("rows: grid of") != std::string::npos && launch.find("; grid of") == std::string::npos,
               launch.c_str());
      const std::string source = module->artifacts().at("opencl");
      QVERIFY2(source.find("__local float") != std::string::npos, source.c_str());
      QVERIFY2(source.find("barrier(CLK_LOCAL_MEM_FENCE") != std::string::npos, source.c_str());
      check_against_interpreter(f, "opencl");
    }
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
    auto module = build_module({f}, Target::parse("opencl"));
    Tensor indices(DataType::kInt64, {3}), values = random_tensor(DataType::kFloat32, {5}, 3),
                                           result(DataType::kFloat32, {3});
    indices.set_double(0, 1);
    indices.set_double(1, 4);
    indices.set_double(2, 2);
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
    const compile::Profile profile = compile::profile_model(*model, {x}, 1, 3, std::nullopt);
    for (size_t k = 0; k < profile.kernels.size(); ++k)
      QCOMPARE(profile.kernels[k].device_clock, static_cast<int>(k) != det);
    const nlohmann::json j = compile::profile_json(profile);
    QCOMPARE(j.at("copies").size(), size_t{4});
    QCOMPARE(j.at("kernels").at(det).at("clock").get<std::string>(), std::string("host"));
    const std::string trace = compile::chrome_trace(profile);
    QVERIFY(trace.find("\"device kernel\"") != std::string::npos &&
            trace.find("host<->device copies") != std::string::npos);
    const compile::RunTimes back = compile::run_times_from_json(compile::run_times_json(profile.last_run));
    QCOMPARE(back.copies.size(), profile.last_run.copies.size());
    QCOMPARE(back.device_spans.size(), profile.last_run.device_spans.size());
  }

  // The roofline's ceilings of the device itself: kernels on a grid, timed on device arrays (no
  // host copies in the time), kept under the device's name.
  void calibrate_measures_the_device() {
    const Target target = Target::parse("opencl");
    const compile::MachineCeilings c = compile::calibrate(target, {.quick = true});
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
