// The one kernel compile API (core/compile/kernel_compiler.h) and the callers that must agree
// through it: CompiledModel, `tessel lower`, `tessel run --target ref`.
#include <QProcess>
#include <QtTest>

#include "core/compile/compiled_model.h"
#include "core/compile/kernel_compiler.h"
#include "core/frontend/onnx_import.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/target_default.h"

using namespace tessel;

namespace {

const std::string kModels = TESSEL_SOURCE_DIR "/resources/models/";

GraphPtr sample(const std::string& name) {
  return std::make_shared<const Graph>(import_onnx(kModels + name + ".onnx"));
}

// The schedule `tessel lower MODEL --kernel K --target T` prints (the lines under "# schedule").
QString lower_command_schedule(const std::string& model, const std::string& kernel, const QString& target) {
  QProcess p;
  p.start(TESSEL_BINARY_DIR "/app/cli/tessel",
          {"lower", QString::fromStdString(model), "--kernel", QString::fromStdString(kernel), "--target", target});
  if (!p.waitForFinished(120000) || p.exitCode() != 0) return "tessel lower failed: " + p.readAllStandardError();
  QString schedule;
  bool inside = false;
  for (const QString& line : QString::fromUtf8(p.readAllStandardOutput()).split('\n')) {
    if (line.startsWith("# schedule")) {
      inside = true;
    } else if (line.startsWith("# ")) {
      if (inside) break;
    } else if (inside && !line.isEmpty()) {
      schedule += line + "\n";
    }
  }
  return schedule;
}

QString text_of(const schedule::Schedule& s) {
  QString out;
  for (const QString& line : QString::fromStdString(schedule::to_text(s)).split('\n'))
    if (!line.isEmpty()) out += line + "\n";
  return out;
}

}  // namespace

class TestKernelCompiler : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void the_registry_says_which_targets_generate_code() {
    QVERIFY(!compile::generates_code(Target::parse("ref")));
    QVERIFY(compile::generates_code(Target::parse("llvm")));
    QVERIFY(compile::generates_code(Target::parse("interp")));
    QCOMPARE(compile::default_target().kind(), std::string("llvm"));
  }

  // Kinds without a vector_bits option schedule for one lane, everywhere: what `tessel run` used
  // to schedule for them (8 lanes) disagreed with `tessel lower` and the studio (1).
  void vector_lanes_follow_the_target() {
    QCOMPARE(target_vector_floats(Target::parse("interp")), int64_t{1});
    QCOMPARE(target_vector_floats(Target::parse("llvm -vector_bits=512")), int64_t{16});
    QCOMPARE(target_traits(Target::parse("llvm -vector_bits=256")).vector_lanes, int64_t{8});
    QCOMPARE(target_traits(Target::parse("interp")).vector_lanes, int64_t{1});
  }

  void compiled_model_and_lower_take_the_same_default_schedule_data() {
    QTest::addColumn<QString>("target");
    for (const char* t : {"llvm", "interp", "c"}) QTest::newRow(t) << t;
  }
  void compiled_model_and_lower_take_the_same_default_schedule() {
    QFETCH(QString, target);
    const Target t = Target::parse(target.toStdString());
    auto model = compile::CompiledModel::compile(sample("resnet_block"), t);
    const FusionResult& fusion = *model->pipeline().fusion;
    int scheduled = 0;
    for (const compile::CompiledKernel& k : model->kernels()) {
      QVERIFY2(k.compiled, k.fallback_reason.c_str());
      const te::ComputeDag dag = compile::kernel_dag(model->graph(), compile::find_kernel(fusion, k.name));
      // The default CPU schedule for the target's lanes; plain loops where it cannot be built
      // or does not lower.
      schedule::Schedule want;
      try {
        const TargetTraits traits = target_traits(t);
        want = schedule::default_cpu_schedule(dag, traits.vector_lanes, {}, schedule::cpu_caches_of(traits));
        lower::lower(dag, want);
      } catch (const Error&) {
        want = {};
      }
      QCOMPARE(text_of(k.schedule), text_of(want));
      if (want.steps.empty()) continue;
      QCOMPARE(text_of(compile::default_schedule(dag, t)), text_of(want));
      ++scheduled;
    }
    QVERIFY(scheduled > 0);
    // Every kernel as the command line shows it.
    for (const compile::CompiledKernel& k : model->kernels())
      QCOMPARE(lower_command_schedule(kModels + "resnet_block.onnx", k.name, target), text_of(k.schedule));
  }

  void an_unknown_kernel_lists_the_kernels() {
    auto model = compile::CompiledModel::compile(sample("mlp"), Target::parse("interp"));
    const FusionResult& fusion = *model->pipeline().fusion;
    std::string names;
    for (const FusionGroup& g : fusion.groups) names += (names.empty() ? "" : ", ") + g.kernel_name;
    QVERIFY(!fusion.groups.empty());
    QVERIFY(compile::has_kernel(fusion, fusion.groups.front().kernel_name));
    QVERIFY(!compile::has_kernel(fusion, "fused_nothing_9"));
    try {
      compile::find_kernel(fusion, "fused_nothing_9");
      QFAIL("no error");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()), "kernel 'fused_nothing_9' is not in the model (kernels: " + names + ")");
    }
  }

  void a_hand_schedule_that_does_not_lower_names_the_kernel() {
    auto model = compile::CompiledModel::compile(sample("mlp"), Target::parse("interp"));
    const FusionGroup& group = model->pipeline().fusion->groups.front();
    const te::ComputeDag dag = compile::kernel_dag(model->graph(), group);
    try {
      compile::lower_kernel(group, dag, model->target(), schedule::parse_schedule("split(no_such_stage.i, 4)"));
      QFAIL("no error");
    } catch (const Error& e) {
      const std::string want = "kernel '" + group.kernel_name + "': schedule: ";
      QVERIFY2(std::string(e.what()).rfind(want, 0) == 0, e.what());
    }
    // The same schedule given to the whole model is the caller's error, not a silent fallback.
    compile::CompileOptions options;
    options.schedules[group.kernel_name] = schedule::parse_schedule("split(no_such_stage.i, 4)");
    QVERIFY_THROWS_EXCEPTION(Error, compile::CompiledModel::compile(sample("mlp"), Target::parse("interp"), options));
  }

  void lowering_records_stop_at_the_failing_step() {
    auto model = compile::CompiledModel::compile(sample("mlp"), Target::parse("interp"));
    const FusionGroup& group = model->pipeline().fusion->groups.front();
    const te::ComputeDag dag = compile::kernel_dag(model->graph(), group);
    compile::LoweringRecords good =
        compile::record_lowering(group.kernel_name, dag, compile::default_schedule(dag, model->target()));
    QVERIFY2(good.error.empty(), good.error.c_str());
    QCOMPARE(good.steps.size(), compile::default_schedule(dag, model->target()).steps.size() + 1);
    QVERIFY(!good.passes.empty());
    compile::LoweringRecords bad =
        compile::record_lowering(group.kernel_name, dag, schedule::parse_schedule("split(no_such_stage.i, 4)"));
    QCOMPARE(bad.error_step, 0);
    QCOMPARE(bad.steps.size(), size_t{2});  // unscheduled, then the failing step
    QVERIFY(bad.passes.empty());
    QVERIFY2(bad.error.rfind("kernel '" + group.kernel_name + "': step 1", 0) == 0, bad.error.c_str());
  }

  // `ref` generates no code: every kernel runs with the reference kernels through the same
  // executor (memory plan, arena), and gives what the reference executor gives.
  void the_ref_target_runs_through_the_compiled_model() {
    const std::string dir = kModels + "resnet_block";
    const Tensor input = read_tensor_pb(dir + "/input_0.pb");
    auto model = compile::CompiledModel::compile(sample("resnet_block"), Target::parse("ref"));
    QVERIFY(!model->module());
    QCOMPARE(model->compiled_count(), 0);
    QVERIFY(!model->kernels().empty());
    for (const compile::CompiledKernel& k : model->kernels())
      QCOMPARE(k.fallback_reason, std::string("target 'ref' has no code generator"));
    const Tensor got = model->run({input})[0];
    const Tensor want = run_reference(model->graph(), {input})[0];
    QCOMPARE(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) QCOMPARE(got.get_double(i), want.get_double(i));
    const Tensor expected = read_tensor_pb(dir + "/output_0.pb");
    for (int64_t i = 0; i < expected.numel(); ++i)
      QVERIFY(std::abs(got.get_double(i) - expected.get_double(i)) <= 1e-5 + 1e-4 * std::abs(expected.get_double(i)));
  }

  void a_model_file_is_parsed_once_and_imported_once() {
    OnnxModelFile file(kModels + "mlp.onnx");
    QCOMPARE(file.runtime_inputs().size(), size_t{1});
    const Graph g = file.import();
    QCOMPARE(g.inputs.size(), size_t{1});
    QCOMPARE(g.value(g.inputs[0]).name, file.runtime_inputs()[0].name);
    QVERIFY_THROWS_EXCEPTION(Error, file.import());
  }
};

QTEST_GUILESS_MAIN(TestKernelCompiler)
#include "test_kernel_compiler.moc"
