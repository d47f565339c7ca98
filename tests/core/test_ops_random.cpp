// The seeded random generators (random_ops.h): a seed gives the same values on every run and every
// target, different seeds give different values, and the values follow their distribution.
#include <cmath>

#include "core/compile/compiled_model.h"
#include "core/plugin/plugin_manager.h"
#include "core/target/target.h"
#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

namespace {

std::vector<double> doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_double(i));
  return v;
}
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double variance(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size());
}
Operand v(Tensor t) { return Operand{std::move(t)}; }

AttrMap uniform(double seed) {
  return {{"shape", std::vector<int64_t>{100, 100}}, {"low", -2.0}, {"high", 4.0}, {"seed", seed}};
}

}  // namespace

class TestRandomOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void sameSeedSameValuesOtherSeedOtherValues() {
    const Tensor a = run1("RandomUniform", {}, uniform(7.0f)), b = run1("RandomUniform", {}, uniform(7.0f));
    const Tensor c = run1("RandomUniform", {}, uniform(8.0f));
    QCOMPARE(doubles(a), doubles(b));
    QVERIFY(doubles(a) != doubles(c));
    QCOMPARE(a.dtype(), DataType::kFloat32);
    QCOMPARE(shape_str(a.shape()), std::string("[100,100]"));
  }

  void uniformStaysInItsRange() {
    const std::vector<double> x = doubles(run1("RandomUniform", {}, uniform(1.0f)));
    for (double e : x) QVERIFY(e >= -2.0 && e < 4.0);
    QVERIFY(std::abs(mean(x) - 1.0) < 0.05);     // (low + high) / 2
    QVERIFY(std::abs(variance(x) - 3.0) < 0.1);  // (high - low)^2 / 12
  }

  void normalHasItsMeanAndScale() {
    const Tensor y = run1(
        "RandomNormal", {},
        {{"shape", std::vector<int64_t>{20000}}, {"mean", 5.0}, {"scale", 2.0}, {"seed", 3.0}, {"dtype", int64_t{11}}});
    QCOMPARE(y.dtype(), DataType::kFloat64);
    const std::vector<double> x = doubles(y);
    QVERIFY(std::abs(mean(x) - 5.0) < 0.05);
    QVERIFY(std::abs(std::sqrt(variance(x)) - 2.0) < 0.05);
  }

  void likeFormsTakeTheInputsShapeAndType() {
    const Tensor like = f64({3, 4}, std::vector<double>(12, 0.0));
    const Tensor u = run1("RandomUniformLike", {v(like)}, {{"seed", 2.0}});
    QCOMPARE(u.dtype(), DataType::kFloat64);
    QCOMPARE(shape_str(u.shape()), std::string("[3,4]"));
    const Tensor n = run1("RandomNormalLike", {v(like)}, {{"dtype", int64_t{1}}});
    QCOMPARE(n.dtype(), DataType::kFloat32);
    // Unseeded draws are the ones of seed 0: a run repeats.
    QCOMPARE(doubles(run1("RandomUniformLike", {v(like)})),
             doubles(run1("RandomUniformLike", {v(like)}, {{"seed", 0.0}})));
  }

  void bernoulliFollowsItsProbabilities() {
    std::vector<float> p(3000);
    for (size_t i = 0; i < p.size(); ++i) p[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.25f;
    const Tensor y = run1("Bernoulli", {v(f32({3000}, p))}, {{"seed", 11.0}, {"dtype", int64_t{9}}});
    QCOMPARE(y.dtype(), DataType::kBool);
    const std::vector<double> x = doubles(y);
    double quarter = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (i % 3 == 0) QCOMPARE(x[i], 0.0);
      if (i % 3 == 1) QCOMPARE(x[i], 1.0);
      if (i % 3 == 2) quarter += x[i];
    }
    QVERIFY(std::abs(quarter / 1000 - 0.25) < 0.05);
  }

  // No code generator draws: every target runs the same reference kernel, so the values agree.
  void everyTargetDrawsTheSameValues() {
    Graph g;
    const OpDef& op = get_op("RandomNormalLike");
    const ValueId x = g.add_input("x", {DataType::kFloat32, {64}});
    g.outputs = g.add_node("r", op, op.parse_attrs("RandomNormalLike", {{"seed", 5.0}}), {x}, 1);
    infer_types(g);
    const Tensor in(DataType::kFloat32, {64});
    const std::vector<double> want = doubles(run_reference(g, {in})[0]);
    for (const char* target : {"llvm", "c", "interp"}) {
      auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target));
      QCOMPARE(doubles(compiled->run({in})[0]), want);
    }
  }

  void refusesIntegerOutputs() {
    QVERIFY(contains(error_of([] {
                       run1("RandomUniform", {}, {{"shape", std::vector<int64_t>{2}}, {"dtype", int64_t{7}}});
                     }),
                     "RandomUniform: the output (dtype) has dtype i64"));
  }
};

QTEST_APPLESS_MAIN(TestRandomOps)
#include "test_ops_random.moc"
