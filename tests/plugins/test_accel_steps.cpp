// Every schedule step kind, offered for the accelerator: added to the accelerator's default
// schedule of an int8 GEMM, it either compiles for accel-sim and computes the right numbers, or is
// refused with a message that names the step.
#include <QtTest>
#include <random>

#include "core/compile/kernel_compiler.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/step.h"
#include "core/schedule/target_default.h"
#include "core/te/tensor.h"

using namespace tessel;

namespace {

const int64_t kM = 64, kN = 48, kK = 64;

te::ComputeDag gemm() {
  te::Tensor a = te::placeholder("A", {kM, kK}, DataType::kInt8);
  te::Tensor b = te::placeholder("B", {kK, kN}, DataType::kInt8);
  loopir::IterVar r = te::reduce_axis(kK, "k");
  te::Tensor c = te::compute("C", {kM, kN},
                             [&](const std::vector<loopir::Expr>& i) {
                               loopir::Expr x = te::cast(DataType::kInt32, te::at(a, {i[0], r.var}));
                               loopir::Expr y = te::cast(DataType::kInt32, te::at(b, {r.var, i[1]}));
                               return te::sum(x * y, {r});
                             },
                             {"i", "j"});
  return te::make_dag("gemm", {c});
}

Tensor random_int8(Shape shape, uint64_t seed) {
  Tensor t(DataType::kInt8, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return t;
}

// One step of each kind, valid on the default schedule's stages and loops.
const std::map<std::string, std::string> kSteps = {
    {"split", "split(C_acc.j, 8)"},
    {"tile", "tile(C.i.inner, C.j.inner, 8, 8)"},
    {"fuse", "fuse(C.i.inner, C.j.inner)"},
    {"reorder", "reorder(C.j.inner, C.i.inner)"},
    {"vectorize", "vectorize(C.j.inner)"},
    {"unroll", "unroll(C_acc.k.outer)"},
    {"parallel", "parallel(C.i.outer.inner)"},
    {"bind", "bind(C.i.outer.inner, blockIdx.x)"},
    {"vthread", "vthread(C.j.outer)"},
    {"compute_at", "compute_at(B_wgt, C_acc.k.inner.outer)"},
    {"compute_inline", "compute_inline(A_inp)"},
    {"compute_root", "compute_root(B_wgt)"},
    {"cache_read", "cache_read(C_acc, accel.acc, C)"},
    {"cache_write", "cache_write(C_acc, local)"},
    {"storage_align", "storage_align(A_inp.ax0, 32, 0)"},
    {"set_scope", "set_scope(A_inp, global)"},
    {"double_buffer", "double_buffer(A_inp)"},
    {"pragma", "pragma(C_acc.k.outer, auto_unroll_max_step=4)"},
    {"prefetch", "prefetch(C_acc.k.outer, A_inp, C_acc.k.outer, 1)"},
    {"rfactor", "rfactor(C_acc.k.outer)"},
    {"tensorize", "tensorize(C_acc.i, gemm_8x8x8_i8)"},
};

}  // namespace

class TestAccelSteps : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("accel-sim"), "the accel_sim plugin did not load");
  }

  void every_step_kind_lowers_or_is_refused_by_name_data() {
    QTest::addColumn<QString>("kind");
    for (const schedule::StepKindInfo& k : schedule::step_kinds()) QTest::newRow(k.name) << QString(k.name);
  }
  void every_step_kind_lowers_or_is_refused_by_name() {
    QFETCH(QString, kind);
    auto step = kSteps.find(kind.toStdString());
    QVERIFY2(step != kSteps.end(), "no step of this kind in the test: add one");
    const Target target = Target::parse("accel-sim");
    const te::ComputeDag dag = gemm();
    schedule::Schedule s = schedule::default_accel_schedule(dag, schedule::accel_knobs_of(target_traits(target)));
    s.steps.push_back(schedule::parse_step(step->second));
    Tensor a = random_int8({kM, kK}, 1), b = random_int8({kK, kN}, 2), got(DataType::kInt32, {kM, kN});
    try {
      loopir::Func f = compile::lower_for_accelerator("gemm", dag, s, target);
      build_module({f}, target)->call_host(f.name, {&a, &b, &got});
    } catch (const Error& e) {
      qInfo("%s: refused: %s", step->second.c_str(), e.what());
      QVERIFY2(std::string(e.what()).find(kind.toStdString()) != std::string::npos, e.what());
      return;
    }
    qInfo("%s: compiles", step->second.c_str());
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        int32_t want = 0;
        for (int64_t r = 0; r < kK; ++r) want += int32_t{a.data<int8_t>()[i * kK + r]} * b.data<int8_t>()[r * kN + j];
        QCOMPARE(got.data<int32_t>()[i * kN + j], want);
      }
  }
};

QTEST_APPLESS_MAIN(TestAccelSteps)
#include "test_accel_steps.moc"
