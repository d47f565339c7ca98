// One target policy (issue 38 §1). For every kernel of every sample model, on every kind of target,
// the schedule the studio shows and measures by default, the one `tessel lower` prints, the one
// `tessel run`/`build` compile (CompiledModel) and the tuner's candidate 0 are one schedule, and the
// kernel runs where all of them say. They used to come from three copies of the policy that
// disagreed (the studio's took the vector width alone: no caches, no VNNI, no GPU or accelerator).
//
//   target spec ──▶ CompiledModel::compile (tessel run)   kernel k: schedule, on host?
//               ──▶ the studio's snapshot + lower_kernel  (views/edit/kernel_lowering.h)
//               ──▶ `tessel lower MODEL --kernel k`        "# schedule (N steps)" + its text
//               ──▶ tune::SearchSpace candidate 0         on the traits of where k runs
//                                   all equal
#include <QProcess>
#include <QtTest>

#include "core/compile/compiled_model.h"
#include "core/frontend/load_model.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/device_api.h"
#include "core/tune/search_space.h"
#include "studio_fixtures.h"
#include "views/edit/kernel_lowering.h"

using namespace tessel;
using namespace tessel::views;

namespace {

const QStringList kModels = {"resnet_block", "mobilenet_block", "attention_block", "mlp", "qdq_resnet"};

// The schedule `tessel lower MODEL --kernel K --target SPEC` prints, as text; a failed run is a
// test failure with what it printed.
std::string schedule_from_lower(const QString& model, const std::string& kernel, const std::string& spec,
                                std::string* error) {
  QProcess p;
  p.start(QStringLiteral(TESSEL_CLI_EXE), {"lower", model, "--kernel", QString::fromStdString(kernel), "--target",
                                           QString::fromStdString(spec)});
  if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
    *error = "tessel lower " + kernel + " failed: " + p.readAllStandardError().toStdString();
    return {};
  }
  // "# schedule (N steps)" then one step per line, up to the next "# " line.
  const QStringList lines = QString::fromUtf8(p.readAllStandardOutput()).split('\n');
  std::string text;
  bool in_schedule = false;
  for (const QString& line : lines) {
    if (line.startsWith("# schedule (")) {
      in_schedule = true;
      continue;
    }
    if (!in_schedule) continue;
    if (line.startsWith("# ")) break;
    if (!line.trimmed().isEmpty()) text += line.toStdString() + "\n";
  }
  return text;
}

// One step per line, blank lines dropped: the form both the CLI and to_text print.
std::string text_of(const schedule::Schedule& s) {
  std::string text;
  for (const QString& line : QString::fromStdString(schedule::to_text(s)).split('\n', Qt::SkipEmptyParts))
    text += line.toStdString() + "\n";
  return text;
}

bool has_opencl_device() {
  const DeviceAPI* api = DeviceAPIRegistry::global().find(DeviceType::kOpenCL);
  return api && api->device_count() > 0;
}

}  // namespace

class TargetPolicyTest : public QObject {
  Q_OBJECT

  // Every kernel of `model` compiled for `spec` by each path; each must agree with the compile driver.
  void check_model(const QString& model, const std::string& spec) {
    const QString path = test::sample_model(model);
    const Target target = Target::parse(spec);
    const auto compiled = compile::CompiledModel::compile(
        std::make_shared<const Graph>(load_model_file(path.toStdString())), target);
    const StudioSnapshotPtr snapshot = test::compile_now(path, spec);
    QVERIFY2(snapshot && !snapshot->has_errors(), qPrintable(model));
    int compared = 0;
    for (const compile::CompiledKernel& k : compiled->kernels()) {
      const std::string where = model.toStdString() + " on '" + spec + "', kernel " + k.name;
      const KernelLoweringPtr studio = lower_kernel(snapshot, k.name, std::nullopt, spec, 1);
      if (!k.compiled) {  // the reference kernels: no schedule anywhere, and the studio says why
        QVERIFY2(!studio->error.empty(), where.c_str());
        continue;
      }
      QVERIFY2(studio->error.empty(), (where + ": " + studio->error).c_str());
      const std::string run = text_of(k.schedule);
      QVERIFY2(text_of(studio->schedule) == run, (where + ": the studio's default differs from tessel run's\n" +
                                                  text_of(studio->schedule) + "--- tessel run:\n" + run)
                                                     .c_str());
      // The studio says where it runs when the accelerator does not take it, as --report does.
      QCOMPARE(studio->schedule_note.find("runs on the host") != std::string::npos, k.on_host);
      std::string error;
      const std::string lowered = schedule_from_lower(path, k.name, spec, &error);
      QVERIFY2(error.empty(), (where + ": " + error).c_str());
      QVERIFY2(lowered == run, (where + ": tessel lower's schedule differs from tessel run's\n" + lowered +
                                "--- tessel run:\n" + run)
                                   .c_str());
      // The tuner searches from the same schedule, on the traits of the device the kernel runs on.
      std::string why;
      std::optional<te::ComputeDag> dag = kernel_dag(*snapshot, k.name, &why);
      QVERIFY2(dag, why.c_str());
      const tune::SearchSpace space(*dag, target_traits(k.on_host ? *compiled->host_target() : target));
      if (space.unsupported().empty()) {
        const std::optional<schedule::Schedule> first = space.schedule_of(space.default_candidate());
        QVERIFY2(first && text_of(*first) == run, (where + ": the tuner's candidate 0 differs from tessel run's").c_str());
      } else {
        // Only the int8 dot-product schedule has no knobs (int8_vnni_schedule).
        QVERIFY2(space.unsupported().find("int8 dot-product") != std::string::npos,
                 (where + ": " + space.unsupported()).c_str());
      }
      ++compared;
    }
    QVERIFY2(compared > 0, qPrintable(model + " compiled no kernel on " + QString::fromStdString(spec)));
  }

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    for (const char* kind : {"llvm", "c", "interp", "accel-sim"})
      QVERIFY2(TargetKindRegistry::global().find(kind), kind);
  }

  // LLVM at -O0: the schedules are the compiler's; code generation only has to accept them. Both
  // vector widths, whatever the host has: a target describes the machine, the host is not asked.
  void every_path_takes_the_same_schedule_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("target");
    const QStringList targets = {"llvm -vector_bits=512 -vnni=true -opt_level=0",
                                 "llvm -vector_bits=256 -vnni=false -opt_level=0 -l2_cache_bytes=524288", "c",
                                 "interp", "accel-sim"};
    for (const QString& target : targets)
      for (const QString& model : kModels)
        QTest::newRow(qPrintable(model + " / " + target)) << model << target;
  }
  void every_path_takes_the_same_schedule() {
    QFETCH(QString, model);
    QFETCH(QString, target);
    check_model(model, target.toStdString());
  }

  // The GPU kind: run by ctest as test_target_policy_opencl (labelled opencl), where PoCL has a device.
  void opencl_takes_the_same_schedule_everywhere() {
    QVERIFY2(has_opencl_device(), "no OpenCL device: this function is run only where scripts/check finds one");
    for (const QString& model : kModels) check_model(model, "opencl");
  }

  // A kind's device class is declared, not inferred from its options: `ref` declares vector_bits
  // and num_threads like llvm and is a CPU; accel-sim is the accelerator whatever its options.
  void device_classes_are_declared() {
    QCOMPARE(target_traits(Target::parse("ref")).device_class, DeviceClass::kCpu);
    QCOMPARE(target_traits(Target::parse("llvm")).device_class, DeviceClass::kCpu);
    QCOMPARE(target_traits(Target::parse("accel-sim -gemm=8")).device_class, DeviceClass::kAccelerator);
    QCOMPARE(target_traits(Target::parse("accel-sim -gemm=8")).accelerator.gemm, int64_t{8});
    QCOMPARE(target_traits(Target::parse("accel-sim -gemm_layout=rows")).accelerator.tiled_layout, false);
    QCOMPARE(target_traits(Target::parse("llvm -vector_bits=256 -l1_cache_bytes=16384")).l1_bytes, int64_t{16384});
    QCOMPARE(target_traits(Target::parse("llvm -num_threads=3")).threads, 3);
  }
};

QTEST_MAIN(TargetPolicyTest)
#include "test_target_policy.moc"
