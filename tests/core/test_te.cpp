// Tensor expressions and the per-step views built on them.
#include <QtTest>
#include <sstream>

#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/lower/step_views.h"
#include "core/support/error.h"
#include "core/te/op_builders.h"
#include "core/te/op_spec.h"
#include "core/te/tensor.h"
#include "tests/error_of.h"

using namespace tessel;
using tessel::testing::error_of;
using te::at;
using te::compute;
using te::ComputeDag;
using te::dag_from_spec;
using te::Expr;
using te::float_const;
using te::IterVar;
using te::make_dag;
using te::placeholder;
using te::reduce;
using te::Reducer;

class TestTe : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void matmul_prints_as_index_formulas() {
    ComputeDag dag = te::matmul_dag(4, 5, 6);
    QCOMPARE(te::to_string(dag), std::string("A = placeholder(f32[4, 6])\n"
                                             "B = placeholder(f32[6, 5])\n"
                                             "C[i, j] = sum(A[i, k] * B[k, j], axis=[k in 0..6])\n"));
    QCOMPARE(dag.inputs().size(), size_t(2));
    QCOMPARE(dag.outputs[0]->name, std::string("C"));
  }

  void compute_records_its_inputs_in_topological_order() {
    ComputeDag dag = te::conv2d_bias_relu_dag(te::Conv2dParams{});
    std::vector<std::string> names;
    for (auto& t : dag.ops) names.push_back(t->name);
    QCOMPARE(names, (std::vector<std::string>{"X", "Wt", "bias", "pad", "conv", "bias_add", "relu"}));
    QCOMPARE(dag.find("conv")->get()->inputs.size(), size_t(2));
  }

  void user_defined_reducer_lowers_and_runs() {
    // Product of each row: a commutative reducer written in the TE language.
    te::Tensor x = placeholder("X", {3, 4});
    Reducer product = te::make_reducer(
        "product", DataType::kFloat32, [](Expr a, Expr b) { return a * b; }, float_const(1));
    IterVar k = te::reduce_axis(4, "k");
    te::Tensor y = compute("Y", {3},
                           [&](const std::vector<Expr>& i) {
                             return reduce(product, at(x, {i[0], k.var}), {k});
                           },
                           {"i"});
    ComputeDag dag = make_dag("row_product", {y});
    QVERIFY(te::to_string(dag).find("Y[i] = product(X[i, k], axis=[k in 0..4])") != std::string::npos);
    std::vector<float> v = {1, 2, 3, 4, -1, 2, -1, 2, 0.5, 0.5, 2, 2};
    Tensor in = Tensor::from_values<float>({3, 4}, v), out(DataType::kFloat32, {3});
    loopir::interpret(lower::lower(dag, schedule::parse_schedule("split(Y.k, 2)")).func, {in, out});
    QCOMPARE(out.data<float>()[0], 24.f);
    QCOMPARE(out.data<float>()[1], 4.f);
    QCOMPARE(out.data<float>()[2], 1.f);
  }

  void intrinsics_casts_and_if_then_else() {
    te::Tensor x = placeholder("X", {4});
    te::Tensor y = compute("Y", {4},
                           [&](const std::vector<Expr>& i) {
                             Expr v = at(x, i);
                             return te::if_then_else(loopir::lt(i[0], loopir::make_int(2)),
                                                     te::exp(v) + te::sqrt(v) + te::tanh(v) + te::erf(v),
                                                     te::sigmoid(v) + te::log(v) + te::pow(v, float_const(2)) +
                                                         te::cast(DataType::kFloat32, te::cast(DataType::kInt32, v)));
                           },
                           {"i"});
    std::vector<float> v = {1, 4, 2.5, 0.5};
    Tensor in = Tensor::from_values<float>({4}, v), out(DataType::kFloat32, {4});
    loopir::interpret(lower::lower(make_dag("math", {y}), {}).func, {in, out});
    auto f = [](double a) { return float(std::exp(a) + std::sqrt(a) + std::tanh(a) + std::erf(a)); };
    auto g = [](double a) { return float(1 / (1 + std::exp(-a)) + std::log(a) + a * a + std::trunc(a)); };
    QVERIFY(std::fabs(out.data<float>()[0] - f(1)) < 1e-5);
    QVERIFY(std::fabs(out.data<float>()[1] - f(4)) < 1e-5);
    QVERIFY(std::fabs(out.data<float>()[2] - g(2.5)) < 1e-5);
    QVERIFY(std::fabs(out.data<float>()[3] - g(0.5)) < 1e-5);
  }

  void op_specs_name_their_errors() {
    QVERIFY(error_of([] { dag_from_spec("matmull M=2"); }).find("unknown op 'matmull' (known: matmul,") == 0);
    QCOMPARE(error_of([] { dag_from_spec("matmul M=2 Q=3"); }),
             std::string("matmul: unknown attribute 'Q' (allowed: M, N, K)"));
    QCOMPARE(error_of([] { dag_from_spec("matmul M=two"); }), std::string("matmul: attribute M=two is not an integer"));
    QCOMPARE(error_of([] { dag_from_spec("matmul M=0"); }), std::string("matmul: M must be >= 1, got 0"));
    QCOMPARE(error_of([] { dag_from_spec("conv2d H=2 W=2 R=5 S=5 pad=0"); }),
             std::string("conv2d: the kernel is larger than the padded input"));
    QCOMPARE(error_of([] { dag_from_spec("matmul_packed M=4 N=20 K=8 block=16"); }),
             std::string("matmul_packed: N=20 must be a multiple of block=16"));
    QVERIFY(error_of([] { te::reduce_axis(0, "k"); }).find("needs an extent >= 1") != std::string::npos);
    QVERIFY(error_of([] {
              te::Tensor a = placeholder("A", {2, 2});
              at(a, {loopir::make_int(0)});
            }).find("A has rank 2 but is read with 1 indices") != std::string::npos);
    QVERIFY(error_of([] { te::intrinsic("cbrt", {float_const(1)}); }).find("unknown intrinsic 'cbrt'") !=
            std::string::npos);
    // ONNX names from the op table map to the same builders.
    QCOMPARE(dag_from_spec("MatMul M=3 N=3 K=3").name, std::string("matmul"));
    QCOMPARE(dag_from_spec("Conv").name, std::string("conv2d"));
  }

  void program_after_each_step_has_diffs_and_times() {
    ComputeDag dag = dag_from_spec("matmul M=8 N=8 K=8");
    auto views = lower::program_after_each_step(
        dag, schedule::parse_schedule("split(C.i, 4)\nparallel(C.i.outer)\nparallel(C.i.outer)"));
    // Steps 0..2 lower; step 3 repeats an annotation, which is fine (same kind): it changes nothing.
    QCOMPARE(views.size(), size_t(4));
    QCOMPARE(views[0].record.name, std::string("initial"));
    QVERIFY(views[0].diff.empty());
    QCOMPARE(views[1].record.name, std::string("step 1 split(C.i, 4)"));
    QVERIFY(views[1].diff.find("+   for i.outer in 0..2 {") != std::string::npos);
    QVERIFY(views[1].diff.find("-   for i in 0..8 {") != std::string::npos);
    QVERIFY(views[2].record.changed);
    QVERIFY(views[2].diff.find("+   for i.outer in 0..2 parallel {") != std::string::npos);
    QVERIFY(!views[3].record.changed);
    QVERIFY(views[3].diff.empty());
    for (auto& v : views) QVERIFY(v.record.wall_ms >= 0 && !v.record.text().empty());
  }

  void a_failing_step_ends_the_list_with_its_error() {
    ComputeDag dag = dag_from_spec("matmul M=8 N=8 K=8");
    auto views =
        lower::program_after_each_step(dag, schedule::parse_schedule("split(C.i, 4)\nsplit(C.i, 2)\nparallel(C.j)"));
    QCOMPARE(views.size(), size_t(3));
    QVERIFY(!views[1].record.failed());
    QVERIFY(views[2].record.failed());
    QVERIFY(views[2].record.error.find("step 2 split(C.i, 2): axis C.i was already split") == 0);
  }

  void program_after_each_pass_lists_the_pipeline() {
    ComputeDag dag = dag_from_spec("matmul M=10 N=8 K=4");
    auto views = lower::program_after_each_pass(dag, schedule::parse_schedule("split(C.i, 4)\nunroll(C.k)"));
    std::vector<std::string> names;
    for (auto& v : views) names.push_back(v.record.name);
    QCOMPARE(names, lower::lowering_pass_names());
    QCOMPARE(names.front(), std::string("build_loop_nests"));
    auto find = [&](const std::string& n) -> const lower::ViewRecord& {
      for (auto& v : views)
        if (v.record.name == n) return v;
      return views.front();
    };
    QVERIFY(find("loop_partition").record.changed);
    QVERIFY(find("storage_flatten").record.changed);
    QVERIFY(find("unroll").record.changed);
    QVERIFY(!find("insert_barriers").record.changed);  // no shared buffers
    QVERIFY(!find("inject_virtual_thread").record.changed);
    QVERIFY(find("unroll").diff.find("k in 0..4 unrolled") != std::string::npos);
  }

  // Schedule steps and lowering passes go through the same instruments as graph passes and make
  // the same StepRecord.
  void schedule_steps_and_lowering_passes_go_through_the_instruments() {
    ComputeDag dag = dag_from_spec("matmul M=10 N=8 K=4");
    schedule::Schedule s = schedule::parse_schedule("split(C.i, 4)\nunroll(C.k)");
    StepRecorder steps;
    auto views = lower::program_after_each_step(dag, s, {&steps});
    QCOMPARE(steps.records().size(), views.size());
    for (size_t k = 0; k < views.size(); ++k) {
      QVERIFY(steps.records()[k]->kind == StepKind::kScheduleStep);
      QCOMPARE(steps.records()[k]->name, views[k].record.name);
      QCOMPARE(steps.records()[k]->text(), views[k].record.text());
      if (k > 0) QVERIFY(steps.records()[k]->before == steps.records()[k - 1]->after);
    }

    StepRecorder passes;
    std::ostringstream dump;
    TextDumper unroll(dump, TextDumper::When::kNamed, "unroll");
    lower::LowerResult r = lower::lower(dag, s, {&passes, &unroll});
    QCOMPARE(passes.records().size(), r.passes.size());
    for (const StepRecordPtr& rec : passes.records()) QVERIFY(rec->kind == StepKind::kLoweringPass);
    QCOMPARE(r.passes.back()->text(), loopir::to_string(r.func));
    QVERIFY(lower::program_of(r.passes.back()->after) != nullptr);
    const std::string text = dump.str();
    QVERIFY2(text.rfind("// ---- after unroll, ", 0) == 0, text.c_str());
    QCOMPARE(text.find("// ---- after", 1), std::string::npos);  // that pass only
    for (const StepRecordPtr& rec : r.passes)
      if (rec->name == "unroll") QVERIFY(text.find(rec->text()) != std::string::npos);
  }

  void a_verifier_rejects_a_lowering_pass() {
    ComputeDag dag = dag_from_spec("matmul M=8 N=8 K=8");
    Verifier reject([](const IrSnapshot&) { throw Error("rejected"); });
    StepRecorder recorder;
    try {
      lower::lower(dag, schedule::Schedule{}, {&reject, &recorder});
      QFAIL("expected a StepFailure");
    } catch (const StepFailure& f) {
      QCOMPARE(std::string(f.what()),
               std::string("lowering pass build_loop_nests: verifier after 'build_loop_nests': rejected"));
      QCOMPARE(f.record().name, std::string("build_loop_nests"));
      QVERIFY(f.record().after == f.record().before && !f.record().changed);
    }
    QCOMPARE(recorder.records().size(), size_t{1});
    QVERIFY(recorder.records()[0]->failed());
  }
};

QTEST_APPLESS_MAIN(TestTe)
#include "test_te.moc"
