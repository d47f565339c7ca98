// Reference kernels and inference of the ops in index_ops.def and the newer element-wise rows:
// trigonometry, IsInf/IsNaN, Mod, BitShift, Shrink, Trilu, CumSum, OneHot, EyeLike, GatherND,
// ScatterND, TopK, NonZero, Compress, Unique, NonMaxSuppression, ReverseSequence, Einsum, Det, DFT,
// windows, the losses, MaxUnpool and GridSample. Expected values are written out by hand.
#include <cmath>
#include <limits>

#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

namespace {

std::vector<double> doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_double(i));
  return v;
}

bool near(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-6) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= tol * (1 + std::fabs(b[i])))) return false;
  return true;
}

Tensor scalar_i64(int64_t v) { return i64({}, {v}); }

// A graph input of the given value.
Operand v(Tensor t) { return Operand{std::move(t)}; }

}  // namespace

class TestMathIndexOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void trigonometry() {
    const Tensor x = f64({3}, {-0.5, 0.0, 0.25});
    QVERIFY(near(doubles(run1("Sin", {v(x)})), {std::sin(-0.5), 0.0, std::sin(0.25)}));
    QVERIFY(near(doubles(run1("Acos", {v(x)})), {std::acos(-0.5), std::acos(0.0), std::acos(0.25)}));
    QVERIFY(near(doubles(run1("Atanh", {v(x)})), {std::atanh(-0.5), 0.0, std::atanh(0.25)}));
    QVERIFY(contains(error_of([] { run1("Cos", {v(i64({1}, {1}))}); }), "Cos: input 0 has dtype i64"));
  }

  void classification() {
    const double inf = std::numeric_limits<double>::infinity();
    const Tensor x = f32({4}, {1.0f, static_cast<float>(inf), static_cast<float>(-inf), NAN});
    QCOMPARE(doubles(run1("IsInf", {v(x)})), (std::vector<double>{0, 1, 1, 0}));
    QCOMPARE(doubles(run1("IsInf", {v(x)}, {{"detect_negative", int64_t{0}}})), (std::vector<double>{0, 1, 0, 0}));
    QCOMPARE(doubles(run1("IsNaN", {v(x)})), (std::vector<double>{0, 0, 0, 1}));
    QCOMPARE(run1("IsNaN", {v(x)}).dtype(), DataType::kBool);
  }

  void modTakesTheSignRuleFromFmod() {
    const Tensor a = i64({4}, {-4, 7, 5, -7}), b = i64({4}, {3, -3, 2, -2});
    QCOMPARE(doubles(run1("Mod", {v(a), v(b)})), (std::vector<double>{2, -2, 1, -1}));
    QCOMPARE(doubles(run1("Mod", {v(a), v(b)}, {{"fmod", int64_t{1}}})), (std::vector<double>{-1, 1, 1, -1}));
    QCOMPARE(doubles(run1("Mod", {v(f32({2}, {-4.5f, 7.5f})), v(f32({1}, {2.0f}))}, {{"fmod", int64_t{1}}})),
             (std::vector<double>{-0.5, 1.5}));
    QVERIFY(contains(error_of([] {
                       run1("Mod", {v(f32({1}, {1})), v(f32({1}, {1}))});
                     }),
                     "fmod 0 is defined for integers only"));
  }

  void bitShiftAndShrink() {
    QCOMPARE(doubles(run1("BitShift", {v(u8({3}, {16, 4, 255})), v(u8({3}, {1, 2, 9}))},
                          {{"direction", std::string("LEFT")}})),
             (std::vector<double>{32, 16, 0}));
    QCOMPARE(doubles(run1("BitShift", {v(u8({2}, {16, 255})), v(u8({1}, {3}))}, {{"direction", std::string("RIGHT")}})),
             (std::vector<double>{2, 31}));
    QVERIFY(
        near(doubles(run1("Shrink", {v(f32({3}, {-2, 0.3f, 2}))}, {{"bias", 1.5}, {"lambd", 1.5}})), {-0.5, 0, 0.5}));
    QVERIFY(near(doubles(run1("ThresholdedRelu", {v(f32({3}, {0.5f, 1, 2}))})), {0, 0, 2}));
  }

  void triluAndEyeLike() {
    const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    QCOMPARE(doubles(run1("Trilu", {v(x)})), (std::vector<double>{1, 2, 3, 0, 5, 6}));
    QCOMPARE(doubles(run1("Trilu", {v(x), v(scalar_i64(-1))}, {{"upper", int64_t{0}}})),
             (std::vector<double>{0, 0, 0, 4, 0, 0}));
    const Tensor eye = run1("EyeLike", {v(x)}, {{"k", int64_t{1}}, {"dtype", int64_t{7}}});
    QCOMPARE(eye.dtype(), DataType::kInt64);
    QCOMPARE(doubles(eye), (std::vector<double>{0, 1, 0, 0, 0, 1}));
  }

  void cumSumVariants() {
    const Tensor x = f64({2, 3}, {1, 2, 3, 4, 5, 6});
    QCOMPARE(doubles(run1("CumSum", {v(x), constant(scalar_i64(1))})), (std::vector<double>{1, 3, 6, 4, 9, 15}));
    QCOMPARE(doubles(run1("CumSum", {v(x), constant(scalar_i64(0))}, {{"exclusive", int64_t{1}}})),
             (std::vector<double>{0, 0, 0, 1, 2, 3}));
    QCOMPARE(
        doubles(run1("CumSum", {v(x), constant(scalar_i64(-1))}, {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}})),
        (std::vector<double>{5, 3, 0, 11, 6, 0}));
    QVERIFY(contains(error_of([&] { run1("CumSum", {v(x), constant(scalar_i64(2))}); }), "axis 2 is out of range"));
  }

  void oneHotPutsTheDepthAxisWhereAsked() {
    const Tensor y =
        run1("OneHot", {v(i64({2}, {1, -1})), constant(f32({}, {3})), v(f32({2}, {0, 5}))}, {{"axis", int64_t{0}}});
    QCOMPARE(y.shape(), (Shape{3, 2}));
    QCOMPARE(doubles(y), (std::vector<double>{0, 0, 5, 0, 0, 5}));
  }

  void gatherAndScatterND() {
    const Tensor data = f32({2, 2}, {0, 1, 2, 3});
    QCOMPARE(doubles(run1("GatherND", {v(data), v(i64({2, 2}, {0, 0, 1, 1}))})), (std::vector<double>{0, 3}));
    QCOMPARE(doubles(run1("GatherND", {v(data), v(i64({2, 1}, {1, 0}))})), (std::vector<double>{2, 3, 0, 1}));
    QCOMPARE(doubles(run1("GatherND", {v(data), v(i64({2, 1}, {1, 0}))}, {{"batch_dims", int64_t{1}}})),
             (std::vector<double>{1, 2}));
    const Tensor upd = f32({2}, {10, 20});
    QCOMPARE(doubles(run1("ScatterND", {v(data), v(i64({2, 2}, {0, 1, 0, 1})), v(upd)})),
             (std::vector<double>{0, 20, 2, 3}));
    QCOMPARE(doubles(run1("ScatterND", {v(data), v(i64({2, 2}, {0, 1, 0, 1})), v(upd)},
                          {{"reduction", std::string("add")}})),
             (std::vector<double>{0, 31, 2, 3}));
    QVERIFY(contains(error_of([&] {
                       run1("GatherND", {v(data), v(i64({1, 2}, {0, 2}))});
                     }),
                     "index 2 out of range [-2, 2)"));
  }

  void topKKeepsTheLowerIndexOnTies() {
    const auto out =
        run_op("TopK", {{"largest", int64_t{1}}}, {v(f32({5}, {3, 1, 3, 2, 5})), constant(i64({1}, {3}))}, 2);
    QCOMPARE(doubles(out[0]), (std::vector<double>{5, 3, 3}));
    QCOMPARE(doubles(out[1]), (std::vector<double>{4, 0, 2}));
    const auto low =
        run_op("TopK", {{"largest", int64_t{0}}}, {v(f32({5}, {3, 1, 3, 2, 5})), constant(i64({1}, {2}))}, 2);
    QCOMPARE(doubles(low[1]), (std::vector<double>{1, 3}));
  }

  void nonZeroAndCompress() {
    const Tensor nz = run1("NonZero", {constant(f32({2, 2}, {1, 0, 0, 4}))});
    QCOMPARE(nz.shape(), (Shape{2, 2}));
    QCOMPARE(doubles(nz), (std::vector<double>{0, 1, 0, 1}));
    const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
    QCOMPARE(doubles(run1("Compress", {v(x), constant(boolean({3}, {0, 1, 1}))}, {{"axis", int64_t{0}}})),
             (std::vector<double>{3, 4, 5, 6}));
    QCOMPARE(doubles(run1("Compress", {v(x), constant(boolean({4}, {0, 1, 0, 1}))})), (std::vector<double>{2, 4}));
  }

  void einsumForms() {
    const Tensor a = f64({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor b = f64({3, 2}, {1, 0, 0, 1, 1, 1});
    QCOMPARE(doubles(run1("Einsum", {v(a), v(b)}, {{"equation", std::string("ij,jk->ik")}})),
             (std::vector<double>{4, 5, 10, 11}));
    QCOMPARE(doubles(run1("Einsum", {v(a)}, {{"equation", std::string("ij->ji")}})),
             (std::vector<double>{1, 4, 2, 5, 3, 6}));
    QCOMPARE(doubles(run1("Einsum", {v(a)}, {{"equation", std::string("ij->i")}})), (std::vector<double>{6, 15}));
    QCOMPARE(doubles(run1("Einsum", {v(f64({2, 2}, {1, 2, 3, 4}))}, {{"equation", std::string("...ii->...i")}})),
             (std::vector<double>{1, 4}));
    QCOMPARE(doubles(run1("Einsum", {v(f64({2}, {1, 2})), v(f64({2}, {3, 4}))}, {{"equation", std::string("i,i")}})),
             (std::vector<double>{11}));
    QVERIFY(contains(error_of([&] { run1("Einsum", {v(a)}, {{"equation", std::string("ijk->i")}}); }), "rank 2"));
  }

  void determinantAndWindows() {
    QVERIFY(near(doubles(run1("Det", {v(f64({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0}))})), {-2, -1}));
    QVERIFY(near(doubles(run1("HannWindow", {constant(i64({}, {4}))})), {0, 0.5, 1, 0.5}));
    QVERIFY(near(doubles(run1("HannWindow", {constant(i64({}, {3}))}, {{"periodic", int64_t{0}}})), {0, 1, 0}));
    QVERIFY(near(doubles(run1("BlackmanWindow", {constant(i64({}, {2}))})), {0.42 - 0.5 + 0.08, 0.42 + 0.5 + 0.08}));
  }

  void lossesAndUnpool() {
    const Tensor logp = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
    const Tensor target = i64({2}, {2, 0});
    QVERIFY(near(doubles(run1("NegativeLogLikelihoodLoss", {v(logp), v(target)})), {3.5}));
    QVERIFY(near(doubles(run1("NegativeLogLikelihoodLoss", {v(logp), v(target)}, {{"reduction", std::string("none")}})),
                 {3, 4}));
    QVERIFY(
        near(doubles(run1("NegativeLogLikelihoodLoss", {v(logp), v(target)}, {{"ignore_index", int64_t{0}}})), {3}));
    QVERIFY(near(doubles(run1("NegativeLogLikelihoodLoss", {v(logp), v(target), v(f32({3}, {1, 1, 3}))})),
                 {(9.0 + 4.0) / 4.0}));
    const Tensor sce = run1("SoftmaxCrossEntropyLoss", {v(f32({1, 2}, {0, 0})), v(i64({1}, {1}))});
    QVERIFY(near(doubles(sce), {std::log(2.0)}));
    const Tensor up = run1("MaxUnpool", {v(f32({1, 1, 1, 2}, {5, 7})), v(i64({1, 1, 1, 2}, {1, 3}))},
                           {{"kernel_shape", std::vector<int64_t>{1, 2}}, {"strides", std::vector<int64_t>{1, 2}}});
    QCOMPARE(up.shape(), (Shape{1, 1, 1, 4}));
    QCOMPARE(doubles(up), (std::vector<double>{0, 5, 0, 7}));
  }

  void gridSampleModesAndPadding() {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    auto sample = [&](float gx, float gy, const std::string& mode, const std::string& padding, int64_t corners) {
      return run1("GridSample", {v(x), v(f32({1, 1, 1, 2}, {gx, gy}))},
                  {{"mode", mode}, {"padding_mode", padding}, {"align_corners", corners}})
          .get_double(0);
    };
    QCOMPARE(sample(0, 0, "bilinear", "zeros", 0), 2.5);   // the centre: all four pixels equally
    QCOMPARE(sample(-1, -1, "nearest", "zeros", 1), 1.0);  // the top-left pixel's centre
    QCOMPARE(sample(3, 3, "bilinear", "zeros", 0), 0.0);   // far outside
    QCOMPARE(sample(3, 3, "bilinear", "border", 0), 4.0);  // the nearest pixel
    QCOMPARE(sample(1, -1, "nearest", "reflection", 1), 2.0);
    QVERIFY(contains(error_of([&] { run1("GridSample", {v(x), v(f32({1, 1, 2}, {0, 0}))}); }), "[N, Ho, Wo, 2]"));
  }

  void reverseSequenceAndDft() {
    // Time along axis 0, batch along axis 1: sequence 0 reverses 3 steps, sequence 1 only 1.
    const Tensor x = f32({3, 2}, {0, 10, 1, 11, 2, 12});
    QCOMPARE(doubles(run1("ReverseSequence", {v(x), v(i64({2}, {3, 1}))})), (std::vector<double>{2, 10, 1, 11, 0, 12}));
    // The transform of [1, 2, 3, 4]: [10, -2+2i, -2, -2-2i]; the inverse brings it back.
    const Tensor signal = f64({1, 4, 1}, {1, 2, 3, 4});
    const Tensor spectrum = run1("DFT", {v(signal)});
    QCOMPARE(spectrum.shape(), (Shape{1, 4, 2}));
    QVERIFY(near(doubles(spectrum), {10, 0, -2, 2, -2, 0, -2, -2}, 1e-12));
    QVERIFY(near(doubles(run1("DFT", {v(spectrum)}, {{"inverse", int64_t{1}}})), {1, 0, 2, 0, 3, 0, 4, 0}, 1e-12));
    QCOMPARE(run1("DFT", {v(signal)}, {{"onesided", int64_t{1}}}).shape(), (Shape{1, 3, 2}));
    QCOMPARE(run1("DFT", {v(signal), constant(i64({}, {6}))}).shape(), (Shape{1, 6, 2}));
  }

  void uniqueAndNonMaxSuppression() {
    const auto u = run_op("Unique", {{"sorted", int64_t{0}}}, {constant(f32({5}, {2, 1, 2, 3, 1}))}, 4);
    QCOMPARE(doubles(u[0]), (std::vector<double>{2, 1, 3}));
    QCOMPARE(doubles(u[1]), (std::vector<double>{0, 1, 3}));
    QCOMPARE(doubles(u[2]), (std::vector<double>{0, 1, 0, 2, 1}));
    QCOMPARE(doubles(u[3]), (std::vector<double>{2, 2, 1}));
    const auto rows = run_op("Unique", {{"axis", int64_t{0}}}, {constant(f32({3, 2}, {1, 2, 0, 1, 1, 2}))}, 1);
    QCOMPARE(doubles(rows[0]), (std::vector<double>{0, 1, 1, 2}));
    // Box 1 overlaps box 0 (IoU 0.81 > 0.5) and is suppressed; box 2 is apart.
    const Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6});
    const Tensor nms = run1("NonMaxSuppression", {constant(boxes), constant(f32({1, 1, 3}, {0.9f, 0.8f, 0.7f})),
                                                  constant(i64({1}, {3})), constant(f32({1}, {0.5f}))});
    QCOMPARE(nms.shape(), (Shape{2, 3}));
    QCOMPARE(doubles(nms), (std::vector<double>{0, 0, 0, 0, 0, 2}));
  }
};

QTEST_APPLESS_MAIN(TestMathIndexOps)
#include "test_ops_math_index.moc"
