// RoiAlign (core/graph/ops/nn_roi_align.h): a bin worked by hand, the edge and outside rules,
// errors, and the ONNX node tests at the backend tolerance (rtol 1e-3: their expected outputs
// are rounded to four decimals, too coarse for the conformance suite's 1e-4).
#include <QtTest>
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

Tensor ramp(Shape shape) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, static_cast<double>(i));
  return t;
}

}  // namespace

class TestOpsRoiAlign : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void averages_bilinear_samples() {
    // X[y][x] = 4y + x is linear, so a bilinear sample at (y, x) is 4y + x exactly. One bin over
    // the roi (0,0)-(2,2) with half_pixel: samples at -0.5 + (i + 0.5) · 2/2 = 0, 1 → mean 4·0.5 + 0.5.
    const Tensor x = ramp({1, 1, 4, 4});
    const Tensor rois = f32({1, 4}, {0, 0, 2, 2});
    const Tensor index = Tensor::from_int64s({1}, {0});
    const AttrMap attrs = {{"sampling_ratio", int64_t{2}}};
    QVERIFY(std::abs(run1("RoiAlign", attrs, {x, rois, index}).get_double(0) - 2.5) < 1e-6);
    // output_half_pixel: no shift; samples at 0.5 and 1.5 on each axis, mean 4·1 + 1.
    const AttrMap legacy = {{"sampling_ratio", int64_t{2}},
                            {"coordinate_transformation_mode", std::string("output_half_pixel")}};
    QVERIFY(std::abs(run1("RoiAlign", legacy, {x, rois, index}).get_double(0) - 5.0) < 1e-6);
    // Max: the largest weighted corner term, 0.25 · X at each of the four corners of a sample;
    // the sample at (1.5, 1.5) has corners 5, 6, 9, 10.
    const AttrMap max = {{"sampling_ratio", int64_t{2}},
                         {"coordinate_transformation_mode", std::string("output_half_pixel")},
                         {"mode", std::string("max")}};
    QVERIFY(std::abs(run1("RoiAlign", max, {x, rois, index}).get_double(0) - 2.5) < 1e-6);
  }

  void samples_outside_count_as_zero() {
    // A roi entirely below-right of X: every sample lies more than a pixel outside.
    const Tensor y = run1("RoiAlign", {{"sampling_ratio", int64_t{1}}},
                          {ramp({1, 1, 4, 4}), f32({1, 4}, {10, 10, 12, 12}), Tensor::from_int64s({1}, {0})});
    QCOMPARE(y.get_double(0), 0.0);
  }

  void rejects_bad_inputs() {
    const Tensor x = ramp({2, 1, 4, 4});
    QVERIFY(error_of("RoiAlign", {}, {x, f32({1, 3}, {0, 0, 1}), Tensor::from_int64s({1}, {0})})
                .contains("rois must be f32[R,4]"));
    QVERIFY(error_of("RoiAlign", {}, {x, f32({1, 4}, {0, 0, 1, 1}), Tensor::from_int64s({1}, {2})})
                .contains("batch_indices[0] = 2 is outside [0, 2)"));
  }

  void node_tests_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("aligned_false") << QString("test_roialign_aligned_false");
    QTest::newRow("aligned_true") << QString("test_roialign_aligned_true");
  }
  void node_tests() {
    QFETCH(QString, name);
    const fs::path dir = fs::path("/usr/share/libonnx-testdata/data/node") / name.toStdString();
    if (!fs::exists(dir)) QSKIP("libonnx-testdata is not installed");
    std::vector<Tensor> feeds;
    for (int k = 0; k < 3; ++k)
      feeds.push_back(read_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string()));
    const Tensor got = run_reference(import_onnx((dir / "model.onnx").string()), feeds)[0];
    const Tensor want = read_tensor_pb((dir / "test_data_set_0" / "output_0.pb").string());
    QCOMPARE(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i)
      QVERIFY2(
          std::abs(got.get_double(i) - want.get_double(i)) <= 1e-3 * std::abs(want.get_double(i)) + 1e-7,
          qPrintable(QString("element %1 is %2, expected %3").arg(i).arg(got.get_double(i)).arg(want.get_double(i))));
  }
};

QTEST_APPLESS_MAIN(TestOpsRoiAlign)
#include "test_ops_roi_align.moc"
