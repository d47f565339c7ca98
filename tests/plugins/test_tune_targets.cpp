// The tuner on every kind of target, through the real plugins: each kind's space (its TargetTraits),
// the CPU's reduction knobs compiled by llvm against the plain loops, and `tessel tune` end to end
// on accel-sim (its measure is the simulator's cycles: deterministic) and on opencl, the records
// applied by `tessel run --records`. The opencl case runs only in the test labelled opencl
// (TESSEL_TUNE_OPENCL=1), which needs an OpenCL device (CI: PoCL).
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <random>
#include <set>

#include "core/frontend/onnx_import.h"
#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/te/op_builders.h"
#include "core/tune/records.h"
#include "core/tune/search_space.h"

using namespace tessel;

namespace {

struct Result {
  int exit_code = -1;
  QString out, err;
};

Result tessel_cli(const QStringList& args) {
  QProcess p;
  p.start(TESSEL_BINARY_DIR "/app/cli/tessel", args);
  if (!p.waitForFinished(600000)) return {-1, {}, "did not finish: " + p.errorString()};
  if (p.exitStatus() != QProcess::NormalExit) return {-2, {}, "crashed"};
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

std::vector<Tensor> random_args(const loopir::Func& f) {
  std::vector<Tensor> args;
  for (const loopir::Buffer& p : f.params) {
    Tensor t(p->dtype, p->shape);
    std::mt19937_64 rng(std::hash<std::string>()(p->name));
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, u(rng));
    args.push_back(t);
  }
  return args;
}

std::vector<Tensor*> pointers(std::vector<Tensor>& ts) {
  std::vector<Tensor*> out;
  for (auto& t : ts) out.push_back(&t);
  return out;
}

// A dense layer's shape: D[i, j] = sum(A[i, k] * W[k, j], k) + bias[j].
te::ComputeDag dense_dag(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kFloat32);
  te::Tensor w = te::placeholder("W", {k, n}, DataType::kFloat32);
  te::Tensor bias = te::placeholder("bias", {n}, DataType::kFloat32);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {m, n},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::sum(te::at(a, {i[0], r.var}) * te::at(w, {r.var, i[1]}), {r});
                             },
                             {"i", "j"});
  te::Tensor d = te::compute(
      "D", {m, n}, [&](const std::vector<loopir::Expr>& i) { return te::at(c, i) + te::at(bias, {i[1]}); }, {"i", "j"});
  return te::make_dag("dense", {d});
}

}  // namespace

class TestTuneTargets : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString path(const QString& name) const { return dir_.filePath(name); }
  const QString models_ = TESSEL_SOURCE_DIR "/resources/models";

  // `tessel tune` of mlp on `target`, then `tessel run --records` with the log: the records of the
  // kernels tuned, the best at least as good as each kernel's default, the outputs those of a run
  // without the log (`exact`) or close to them.
  void tune_and_apply(const QString& target, bool exact) {
    const QString model = models_ + "/mlp.onnx", log = path(target + ".jsonl");
    Result r = tessel_cli(
        {"tune", model, "--records", log, "--trials", "6", "--batch", "3", "--min-time-ms", "1", "--target", target});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
    const std::vector<tune::TuningRecord> records = tune::read_records(log.toStdString());
    QVERIFY2(!records.empty(), qPrintable(r.out));
    std::map<std::string, std::vector<tune::TuningRecord>> by_kernel;
    for (const tune::TuningRecord& record : records) by_kernel[record.kernel].push_back(record);
    int searched = 0;  // kernels with more than their default schedule to measure
    for (const auto& [kernel, trials] : by_kernel) {
      QVERIFY2(trials.front().ok(), (kernel + ": the default schedule failed: " + trials.front().error).c_str());
      double best = trials.front().ms_min;
      for (const tune::TuningRecord& t : trials)
        if (t.ok()) best = std::min(best, t.ms_min);
      QVERIFY(best <= trials.front().ms_min);
      searched += trials.size() >= 2;
      QVERIFY(Target::parse(trials.front().target).kind() == target.toStdString());
    }
    QVERIFY2(searched >= 1, qPrintable(r.out));

    const QString plain = path(target + "_plain"), tuned = path(target + "_tuned");
    r = tessel_cli({"run", model, "--inputs", models_ + "/mlp", "--out-dir", plain, "--target", target});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = tessel_cli(
        {"run", model, "--inputs", models_ + "/mlp", "--out-dir", tuned, "--target", target, "--records", log});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QString applied = QString("%1 of ").arg(by_kernel.size());
    QVERIFY2(r.err.contains(applied) && r.err.contains("compiled kernels use tuned schedules"), qPrintable(r.err));
    const Tensor want = read_tensor_pb((plain + "/output_0.pb").toStdString());
    const Tensor got = read_tensor_pb((tuned + "/output_0.pb").toStdString());
    QCOMPARE(got.numel(), want.numel());
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double a = want.get_double(i), b = got.get_double(i);
      if (exact ? a != b : std::abs(a - b) > 1e-3 * (1 + std::abs(a)))
        QFAIL(qPrintable(QString("output element %1: %2 untuned, %3 tuned").arg(i).arg(a).arg(b)));
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("llvm"), "the llvm plugin did not load");
    QVERIFY2(CodeGenRegistry::global().has("accel-sim"), "the accel_sim plugin did not load");
  }

  // The kind's declared device class decides the space (its traits), the way it decides the default.
  void each_kind_gets_its_space() {
    const TargetTraits llvm = target_traits(Target::parse("llvm -vector_bits=256 -l2_cache_bytes=65536"));
    QCOMPARE(llvm.device_class, DeviceClass::kCpu);
    QCOMPARE(llvm.vector_lanes, int64_t{8});
    QCOMPARE(llvm.l2_bytes, int64_t{65536});
    const TargetTraits accel = target_traits(Target::parse("accel-sim -gemm=8"));
    QCOMPARE(accel.device_class, DeviceClass::kAccelerator);
    QCOMPARE(accel.accelerator.gemm, int64_t{8});
    if (TargetKindRegistry::global().find("opencl"))
      QCOMPARE(target_traits(Target::parse("opencl")).device_class, DeviceClass::kGpu);
    if (TargetKindRegistry::global().find("cuda"))
      QCOMPARE(target_traits(Target::parse("cuda")).device_class, DeviceClass::kGpu);
  }

  // Every value of the reduction's split and order (and the k unroll, and the GEMM's k blocking, its
  // tile columns in parallel), compiled by llvm, computes what the plain loops compute in the
  // interpreter, on a GEMM and a conv with tails.
  void reduction_knobs_compile_and_match_the_plain_loops() {
    const te::Conv2dParams p{1, 24, 5, 9, 8, 3, 3, 1, 1};
    for (const te::ComputeDag& dag :
         {te::matmul_dag(10, 24, 48), dense_dag(10, 24, 48), te::conv2d_dag(p), te::conv2d_bias_relu_dag(p)}) {
      std::vector<Tensor> want = random_args(lower::lower(dag, {}).func);
      loopir::interpret(lower::lower(dag, {}).func, want);
      using Order = schedule::CpuKnobs::ReduceOrder;
      std::set<std::string> compiled;
      for (std::optional<int64_t> split :
           {std::optional<int64_t>(), std::optional<int64_t>(4), std::optional<int64_t>(8), std::optional<int64_t>(5)})
        for (std::optional<Order> order :
             {std::optional<Order>(), std::optional<Order>(Order::kMainOuter),
              std::optional<Order>(Order::kWindowOuter), std::optional<Order>(Order::kSplitAround)})
          for (int64_t unroll : {1, 4})
            for (std::optional<int64_t> k_block :
                 {std::optional<int64_t>(), std::optional<int64_t>(8), std::optional<int64_t>(16)})
              for (bool k_outer : {false, true}) {
                schedule::CpuKnobs knobs;
                knobs.k_unroll = unroll, knobs.reduce_split = split, knobs.reduce_order = order;
                knobs.k_block = k_block, knobs.k_block_outer = k_outer;  // K blocking: the GEMM only
                const schedule::Schedule s = schedule::default_cpu_schedule(dag, 8, knobs);
                if (!compiled.insert(schedule::to_text(s)).second) continue;
                const loopir::Func f = lower::lower(dag, s).func;
                std::vector<Tensor> got = random_args(f);
                build_module({f}, Target::parse("llvm"))->call_host(f.name, pointers(got));
                // Parameters are the DAG's placeholders and outputs in the same order for every schedule.
                for (size_t i = 0; i < got.size(); ++i)
                  for (int64_t e = 0; e < got[i].numel(); ++e) {
                    const double a = want[i].get_double(e), b = got[i].get_double(e);
                    if (std::abs(a - b) > 1e-4 * (1 + std::abs(a)))
                      QFAIL(qPrintable(QString("%1[%2]: plain loops %3, llvm %4 with\n%5")
                                           .arg(f.params[i]->name.c_str())
                                           .arg(e)
                                           .arg(a)
                                           .arg(b)
                                           .arg(schedule::to_text(s).c_str())));
                  }
              }
      const bool gemm = dag.name == "matmul" || dag.name == "dense";
      QVERIFY(compiled.size() >= (gemm ? 8u : 4u));
    }
  }

  // accel-sim: the kernels on its GEMM core are tuned (virtual threads, loads per reduction tile),
  // the host kernels are named as not tuned; the products are exact, so the tuned run's outputs
  // are the untuned run's.
  void tune_on_accel_sim_applies_with_run_records() { tune_and_apply("accel-sim", /*exact=*/true); }

  // A shared log's record whose schedule unrolls 64 x 4 x 128 statements (LLVM would spend over a
  // minute and gigabytes on the one basic block) is held to the limit a typed schedule has: the
  // kernel takes its default schedule, the run succeeds in seconds, and the warning names the
  // kernel, the log and the limit (issue 40).
  void record_past_the_schedule_limits_is_passed_over_naming_why() {
    const QString model = models_ + "/mlp.onnx", log = path("unrolled.jsonl");
    Result r = tessel_cli({"tune", model, "--records", log, "--kernel", "fused_matmul_packed_add_relu_1", "--trials",
                           "1", "--min-time-ms", "1", "--target", "llvm"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
    std::vector<tune::TuningRecord> records = tune::read_records(log.toStdString());
    QCOMPARE(records.size(), size_t(1));
    tune::TuningRecord hostile = records.front();
    hostile.schedule =
        "split(matmul_packed_3.i1, 64)\n"
        "reorder(matmul_packed_3.i1.outer, matmul_packed_3.i0, matmul_packed_3.i1.inner, matmul_packed_3.k)\n"
        "unroll(matmul_packed_3.i1.inner)\nunroll(matmul_packed_3.i0)\nunroll(matmul_packed_3.k)";
    hostile.ms_min = hostile.ms_median = 1e-9;  // claims to be the fastest, so it is the one chosen
    tune::append_record(log.toStdString(), hostile);
    QElapsedTimer took;
    took.start();
    r = tessel_cli({"run", model, "--inputs", models_ + "/mlp", "--out-dir", path("unrolled"), "--records", log});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(took.elapsed() < 20000, qPrintable(QString("took %1 ms").arg(took.elapsed())));
    QVERIFY2(r.err.contains("kernel 'fused_matmul_packed_add_relu_1': the tuning record from " + log +
                            " was passed over for the default schedule") &&
                 r.err.contains("more than 4096"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("0 of 3 compiled kernels use tuned schedules"), qPrintable(r.err));
  }

  // A tune killed for real (SIGKILL, while it is writing records), its log then cut inside the last
  // line as a kill inside write() or a full disk leaves it, and a second tune on the same log: every
  // byte written before the kill is still there, the fragment stays a line of its own (named and
  // skipped, never glued to a new record), the second tune adds its records, and `run --records`
  // reads the whole log, saying what it skipped (issue 40).
  void tune_killed_mid_write_loses_no_record_and_resumes() {
    const QString model = models_ + "/mlp.onnx", log = path("killed.jsonl");
    QProcess tune;
    tune.start(TESSEL_BINARY_DIR "/app/cli/tessel", {"tune", model, "--records", log, "--trials", "100000", "--batch",
                                                     "2", "--min-time-ms", "1", "--target", "accel-sim"});
    QVERIFY2(tune.waitForStarted(), qPrintable(tune.errorString()));
    auto whole_lines = [&] {
      QFile f(log);
      return f.open(QIODevice::ReadOnly) ? f.readAll().count('\n') : 0;
    };
    QElapsedTimer waited;
    waited.start();
    while (whole_lines() < 4 && tune.state() == QProcess::Running && waited.elapsed() < 300000) QTest::qWait(20);
    QVERIFY2(whole_lines() >= 4, qPrintable("the tune wrote no records: " + tune.readAllStandardError()));
    tune.kill();
    QVERIFY(tune.waitForFinished());
    QCOMPARE(tune.exitStatus(), QProcess::CrashExit);

    QFile file(log);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QByteArray before = file.readAll();
    if (!before.endsWith('\n')) before.truncate(before.lastIndexOf('\n') + 1);  // the kill's own cut
    const int last_start = before.lastIndexOf('\n', before.size() - 2) + 1;
    const QByteArray fragment = before.mid(last_start, (before.size() - last_start) / 2);
    QVERIFY(file.resize(0));
    QVERIFY(file.write(before + fragment) == before.size() + fragment.size());
    file.close();
    const size_t complete = tune::read_record_log(log.toStdString()).records.size();
    QCOMPARE(complete, static_cast<size_t>(before.count('\n')));

    Result r = tessel_cli({"tune", model, "--records", log, "--trials", "6", "--batch", "3", "--min-time-ms", "1",
                           "--target", "accel-sim"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.err.contains("its last line was cut off"), qPrintable(r.err));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray after = file.readAll();
    QVERIFY2(after.startsWith(before + fragment + "\n"), "the bytes written before the kill changed");
    const tune::RecordLog read = tune::read_record_log(log.toStdString());
    QVERIFY2(read.records.size() > complete, qPrintable(r.out));
    QCOMPARE(read.skipped.size(), size_t(1));
    const std::string fragment_line = log.toStdString() + ":" + std::to_string(complete + 1) + ":";
    QVERIFY2(read.skipped[0].find(fragment_line) == 0, read.skipped[0].c_str());

    r = tessel_cli({"run", model, "--inputs", models_ + "/mlp", "--out-dir", path("resumed"), "--target", "accel-sim",
                    "--records", log});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QString said = QString("1 of %1 records of %2 skipped as damaged").arg(read.records.size() + 1).arg(log);
    QVERIFY2(r.err.contains(said), qPrintable(r.err));
  }

  void tune_on_opencl_applies_with_run_records() {
    if (qEnvironmentVariable("TESSEL_TUNE_OPENCL") != "1")
      QSKIP("runs in the test labelled opencl (tune_opencl), which needs an OpenCL device");
    QVERIFY2(CodeGenRegistry::global().has("opencl"), "the opencl plugin did not load");
    tune_and_apply("opencl", /*exact=*/false);
  }
};

QTEST_GUILESS_MAIN(TestTuneTargets)
#include "test_tune_targets.moc"
