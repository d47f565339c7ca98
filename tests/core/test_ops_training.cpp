// The optimizer steps of ai.onnx.preview.training (training_ops.h): one step by hand beside the
// reference kernel, outputs in the order the spec gives (all X', then each moment), and the input
// counts that do not split into groups refused by name.
#include <cmath>

#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

namespace {

Operand floats(std::vector<float> v) {
  return Operand{Tensor::from_values<float>({static_cast<int64_t>(v.size())}, v)};
}
Operand rate(float r) { return Operand{Tensor::scalar<float>(r)}; }
Operand step(int64_t t) { return Operand{Tensor::scalar<int64_t>(t)}; }
bool near(double got, double want) { return std::abs(got - want) <= 1e-6 * (1 + std::abs(want)); }

}  // namespace

class TestTrainingOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void adagradStep() {
    // r = 0.1 / (1 + 2 * 0.5) = 0.05; g' = 0.5 * 2 + 1 = 2; h' = 3 + 4 = 7; x' = 2 - 0.05 * 2 / (sqrt(7) + 0)
    auto out = run_op("Adagrad", {{"decay_factor", 0.5}, {"epsilon", 0.0}, {"norm_coefficient", 0.5}},
                      {rate(0.1f), step(2), floats({2}), floats({1}), floats({3})}, 2);
    QVERIFY(near(out[1].get_double(0), 7));
    QVERIFY(near(out[0].get_double(0), 2 - 0.05 * 2 / std::sqrt(7.0)));
  }

  void adamStepCorrectsTheBiasAfterTheFirstStep() {
    // t = 1: r' = r * sqrt(1 - beta) / (1 - alpha); v' = 0.5 * 1 + 0.5 * 2 = 1.5; h' = 0.75 * 4 + 0.25 * 4 = 4
    auto out = run_op("Adam", {{"alpha", 0.5}, {"beta", 0.75}, {"epsilon", 0.0}},
                      {rate(0.1f), step(1), floats({1}), floats({2}), floats({1}), floats({4})}, 3);
    QVERIFY(near(out[1].get_double(0), 1.5));
    QVERIFY(near(out[2].get_double(0), 4));
    QVERIFY(near(out[0].get_double(0), 1 - 0.1 * std::sqrt(0.25) / 0.5 * 1.5 / 2));
  }

  void momentumModes() {
    // T = 0: beta counts as 1. v' = 0.9 * 1 + 1 * 2 = 2.9
    const std::vector<Operand> in = {rate(0.1f), step(0), floats({1, 1}), floats({2, 2}), floats({1, 1})};
    auto standard =
        run_op("Momentum",
               {{"alpha", 0.9}, {"beta", 0.5}, {"mode", std::string("standard")}, {"norm_coefficient", 0.0}}, in, 2);
    auto nesterov =
        run_op("Momentum",
               {{"alpha", 0.9}, {"beta", 0.5}, {"mode", std::string("nesterov")}, {"norm_coefficient", 0.0}}, in, 2);
    QVERIFY(near(standard[1].get_double(1), 2.9));
    QVERIFY(near(standard[0].get_double(1), 1 - 0.1 * 2.9));
    QVERIFY(near(nesterov[0].get_double(1), 1 - 0.1 * (2 + 0.9 * 2.9)));
  }

  void groupsThatDoNotSplitAreRefused() {
    const std::string e = error_of([] {
      run_op("Adagrad", {}, {rate(0.1f), step(0), floats({1}), floats({1}), floats({1}), floats({1})}, 2);
    });
    QVERIFY2(e.find("3 groups of n tensors") != std::string::npos, e.c_str());
    const std::string shapes = error_of([] {
      run_op("Adagrad", {}, {rate(0.1f), step(0), floats({1, 2}), floats({1}), floats({1, 2})}, 2);
    });
    QVERIFY2(shapes.find("its parameter is f32[2]") != std::string::npos, shapes.c_str());
  }
};

QTEST_APPLESS_MAIN(TestTrainingOps)
#include "test_ops_training.moc"
