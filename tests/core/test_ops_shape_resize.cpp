// Resize: coordinate transformation modes, nearest rounding modes, n-linear and cubic
// interpolation, tf_crop_and_resize extrapolation, and errors. Expected values are computed by hand
// (shown in comments) or by a direct 2-D bilinear formula written in the test.
#include <cmath>

#include "test_ops_shape_helpers.h"

using namespace shape_test;

namespace {

Tensor resize_sizes(const Tensor& x, std::vector<int64_t> sizes, AttrMap attrs, Tensor roi = Tensor()) {
  return run1("Resize", attrs, {x, roi, none(), ints(sizes)});
}
Tensor resize_scales(const Tensor& x, std::vector<float> scales, AttrMap attrs) {
  return run1("Resize", attrs, {x, none(), f32({static_cast<int64_t>(scales.size())}, scales)});
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  QCOMPARE(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-5f)
      QFAIL(
          ("element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " + std::to_string(want[i]))
              .c_str());
}

}  // namespace

class TestResize : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void nearestUpsampleByScales() {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor y = resize_scales(x, {1, 1, 2, 3}, {});
    QCOMPARE(y.shape(), (Shape{1, 1, 4, 6}));
    QCOMPARE(floats(y), (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  }

  void nearestRoundingModes() {
    const Tensor x = f32({4}, {10, 20, 30, 40});
    // asymmetric, scale 2: x_in = x / 2 = 0, .5, 1, 1.5, 2, 2.5, 3, 3.5
    AttrMap a{{"coordinate_transformation_mode", std::string("asymmetric")}};
    a["nearest_mode"] = std::string("round_prefer_floor");
    QCOMPARE(floats(resize_sizes(x, {8}, a)), (std::vector<float>{10, 10, 20, 20, 30, 30, 40, 40}));
    a["nearest_mode"] = std::string("round_prefer_ceil");
    QCOMPARE(floats(resize_sizes(x, {8}, a)), (std::vector<float>{10, 20, 20, 30, 30, 40, 40, 40}));
    a["nearest_mode"] = std::string("floor");
    QCOMPARE(floats(resize_sizes(x, {8}, a)), (std::vector<float>{10, 10, 20, 20, 30, 30, 40, 40}));
    a["nearest_mode"] = std::string("ceil");
    QCOMPARE(floats(resize_sizes(x, {8}, a)), (std::vector<float>{10, 20, 20, 30, 30, 40, 40, 40}));
    // Downsample with half_pixel: x_in = (x + .5) * 2 - .5 = 0.5, 2.5 → round_prefer_floor picks 0, 2.
    QCOMPARE(floats(resize_sizes(x, {2}, {})), (std::vector<float>{10, 30}));
  }

  void nearestCopiesAnyDtypeExactly() {
    const int64_t big = (int64_t{1} << 62) + 1;
    const Tensor x = Tensor::from_int64s({2}, {big, -big});
    const Tensor y = resize_sizes(x, {4}, {});
    QCOMPARE(y.to_int64s(), (std::vector<int64_t>{big, big, -big, -big}));
  }

  void linearHalfPixelAndAlignCorners() {
    const Tensor x = f32({4}, {1, 2, 3, 4});
    // half_pixel, scale 2: x_in = x/2 - 1/4; the ends clamp to the edge values.
    expect_close(floats(resize_sizes(x, {8}, {{"mode", std::string("linear")}})),
                 {1, 1.25f, 1.75f, 2.25f, 2.75f, 3.25f, 3.75f, 4});
    // align_corners: x_in = x * 3 / 6.
    expect_close(floats(resize_sizes(x, {7},
                                     {{"mode", std::string("linear")},
                                      {"coordinate_transformation_mode", std::string("align_corners")}})),
                 {1, 1.5f, 2, 2.5f, 3, 3.5f, 4});
    // pytorch_half_pixel with one output element reads x_in = -0.5 → the first element.
    expect_close(floats(resize_sizes(x, {1},
                                     {{"mode", std::string("linear")},
                                      {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}})),
                 {1});
  }

  void bilinearMatchesDirectFormula() {
    Tensor x(DataType::kFloat32, {1, 1, 3, 4});
    for (int64_t i = 0; i < 12; ++i)
      x.data<float>()[i] = static_cast<float>((i * 7) % 5) + 0.5f * static_cast<float>(i);
    const Tensor y = resize_sizes(
        x, {1, 1, 5, 7},
        {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}});
    QCOMPARE(y.shape(), (Shape{1, 1, 5, 7}));
    auto at = [&](int64_t r, int64_t c) { return static_cast<double>(x.data<float>()[r * 4 + c]); };
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j) {
        const double fy = static_cast<double>(i) * 2 / 4, fx = static_cast<double>(j) * 3 / 6;
        const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
        const int64_t y1 = std::min<int64_t>(y0 + 1, 2), x1 = std::min<int64_t>(x0 + 1, 3);
        const double dy = fy - static_cast<double>(y0), dx = fx - static_cast<double>(x0);
        const double want =
            (1 - dy) * ((1 - dx) * at(y0, x0) + dx * at(y0, x1)) + dy * ((1 - dx) * at(y1, x0) + dx * at(y1, x1));
        QVERIFY(std::fabs(y.data<float>()[i * 7 + j] - want) < 1e-5);
      }
  }

  void cubicReproducesConstantsAndRamps() {
    // Cubic-convolution weights sum to 1, so a constant stays constant, edges included; with
    // exclude_outside the renormalised weights keep that true.
    const Tensor c = f32({5}, {3, 3, 3, 3, 3});
    for (int64_t exclude : {0, 1})
      expect_close(floats(resize_sizes(c, {9}, {{"mode", std::string("cubic")}, {"exclude_outside", exclude}})),
                   std::vector<float>(9, 3.0f));
    // Keys' kernel with A = -0.5 reproduces a linear ramp away from the edges. asymmetric, scale 2:
    // x_in = x / 2, so outputs 4..11 (x_in 2..5.5) only touch taps 1..7 of the 10-element ramp.
    Tensor ramp(DataType::kFloat32, {10});
    for (int64_t i = 0; i < 10; ++i) ramp.data<float>()[i] = 2.0f * static_cast<float>(i) + 1.0f;
    const Tensor y = resize_sizes(ramp, {20},
                                  {{"mode", std::string("cubic")},
                                   {"cubic_coeff_a", -0.5f},
                                   {"coordinate_transformation_mode", std::string("asymmetric")}});
    for (int64_t o = 4; o < 12; ++o) QVERIFY(std::fabs(y.data<float>()[o] - (static_cast<float>(o) + 1.0f)) < 1e-5f);
    QVERIFY(std::fabs(y.data<float>()[0] - 1.0f) < 1e-6f);  // integral positions hit the samples
  }

  void cropAndResizeExtrapolates() {
    const Tensor x = f32({4}, {1, 2, 3, 4});
    // roi [0.5, 1.5] of 3 units: x_in = 1.5 x + 1.5 = 1.5, 3, 4.5 (outside → extrapolation_value).
    const AttrMap a{{"mode", std::string("linear")},
                    {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                    {"extrapolation_value", 10.0f}};
    expect_close(floats(resize_sizes(x, {3}, a, f32({2}, {0.5f, 1.5f}))), {2.5f, 4, 10});
    AttrMap n = a;
    n["mode"] = std::string("nearest");
    expect_close(floats(resize_sizes(x, {3}, n, f32({2}, {0.5f, 1.5f}))), {2, 4, 10});
    EXPECT_ERROR(resize_sizes(x, {3}, a), "needs the roi input");
  }

  void scalesGiveFlooredSizes() {
    QCOMPARE(resize_scales(iota({1, 1, 2, 4}), {1, 1, 0.6f, 0.6f}, {}).shape(), (Shape{1, 1, 1, 2}));
    // An empty scales tensor counts as absent (exporters write one when they give sizes).
    QCOMPARE(run1("Resize", {}, {iota({2, 2}), none(), Tensor(DataType::kFloat32, {0}), ints({3, 5})}).shape(),
             (Shape{3, 5}));
  }

  void errors() {
    const Tensor x = iota({2, 2});
    EXPECT_ERROR(run1("Resize", {}, {x, none(), f32({2}, {2, 2}), ints({4, 4})}), "not both");
    EXPECT_ERROR(run1("Resize", {}, {x}), "one of scales (input 2) or sizes (input 3) is required");
    EXPECT_ERROR(resize_scales(x, {2}, {}), "scales has 1 entries for an input of rank 2");
    EXPECT_ERROR(resize_scales(x, {2, 0}, {}), "must be positive");
    EXPECT_ERROR(resize_sizes(x, {2, 2, 2}, {}), "has 3 entries");
    EXPECT_ERROR(resize_sizes(x, {2, -2}, {}), "negative");
    EXPECT_ERROR(resize_sizes(x, {4, 4}, {{"mode", std::string("bicubic")}}), "mode");
    EXPECT_ERROR(resize_sizes(x, {4, 4}, {{"nearest_mode", std::string("round")}}), "nearest_mode");
    EXPECT_ERROR(run1("Resize", {}, {x, none(), none(), ints({4, 4})}, 4), "must be known at compile time");
  }

  void flopsCountTaps() {
    const OpRun r =
        run_op("Resize", {{"mode", std::string("linear")}}, {iota({1, 1, 2, 2}), none(), none(), ints({1, 1, 4, 4})});
    QCOMPARE(node_flops(r.graph, r.graph.nodes[0]), 16 * 2 * 4);  // 16 outputs × 2 ops × 2×2 taps
    const OpRun n = run_op("Resize", {}, {iota({1, 1, 2, 2}), none(), none(), ints({1, 1, 4, 4})});
    QCOMPARE(node_flops(n.graph, n.graph.nodes[0]), 0);
  }
};

QTEST_APPLESS_MAIN(TestResize)
#include "test_ops_shape_resize.moc"
