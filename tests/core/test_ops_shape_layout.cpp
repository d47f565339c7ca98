// Layout parsing, shape conversion and index mapping (core/graph/layout.h), and the
// layout_transform op built on them; the Winograd transforms on blocked tensors.
#include <cmath>
#include <limits>

#include "core/graph/layout.h"
#include "core/graph/ops/winograd_ops.h"
#include "test_ops_shape_helpers.h"

using namespace shape_test;

class TestLayout : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parsesPrimalAndSubAxes() {
    Layout l("NCHW16c");
    QCOMPARE(l.rank(), 5);
    QCOMPARE(l.primal_axes(), std::string("NCHW"));
    QCOMPARE(l.factor('C'), 16);
    QCOMPARE(l.factor('H'), 1);
    QCOMPARE(l.primal_position('C'), 1);
    QCOMPARE(l.sub_position('C'), 4);
    QCOMPARE(l.sub_position('W'), -1);
    QVERIFY(l.is_blocked());
    QVERIFY(!Layout("NHWC").is_blocked());
    QVERIFY(l.convertible_to(Layout("NHWC")));
    QVERIFY(!l.convertible_to(Layout("NCH")));
    QVERIFY(!Layout("NCHW").convertible_to(Layout("NCDW")));

    Layout w("OIHW16i16o");
    QCOMPARE(w.factor('O'), 16);
    QCOMPARE(w.factor('I'), 16);
    QCOMPARE(w.sub_position('I'), 4);
    QCOMPARE(w.sub_position('O'), 5);
  }

  void rejectsMalformedLayouts() {
    EXPECT_ERROR(Layout(""), "is empty");
    EXPECT_ERROR(Layout("NCHC"), "axis C appears twice");
    EXPECT_ERROR(Layout("NCHW16"), "must be followed by the lower-case letter");
    EXPECT_ERROR(Layout("NCHWc"), "needs a factor");
    EXPECT_ERROR(Layout("NCHW0c"), "factor 0");
    EXPECT_ERROR(Layout("NHW16c"), "has no primal axis C");
    EXPECT_ERROR(Layout("NCHW4c4c"), "split twice");
    EXPECT_ERROR(Layout("NC-HW"), "unexpected character '-'");
    EXPECT_ERROR(Layout("NCHW99999999999c"), "too large");
    // The layout text is named in every message.
    EXPECT_ERROR(Layout("NCHWc"), "layout 'NCHWc'");
  }

  void convertsShapesWithPadding() {
    const Layout nchw("NCHW"), blocked("NCHW16c"), nhwc("NHWC");
    QCOMPARE(convert_layout_shape(nchw, blocked, {1, 32, 7, 5}), (Shape{1, 2, 7, 5, 16}));
    QCOMPARE(convert_layout_shape(nchw, blocked, {1, 20, 7, 5}), (Shape{1, 2, 7, 5, 16}));  // 20 → padded to 32
    QCOMPARE(convert_layout_shape(blocked, nchw, {1, 2, 7, 5, 16}), (Shape{1, 32, 7, 5}));
    QCOMPARE(convert_layout_shape(blocked, nchw, {1, 2, 7, 5, 16}, {1, 20, 7, 5}), (Shape{1, 20, 7, 5}));
    QCOMPARE(convert_layout_shape(nchw, nhwc, {2, 3, 4, 5}), (Shape{2, 4, 5, 3}));
    QCOMPARE(convert_layout_shape(Layout("OIHW"), Layout("OIHW16i16o"), {64, 48, 3, 3}), (Shape{4, 3, 3, 3, 16, 16}));
    EXPECT_ERROR(convert_layout_shape(nchw, blocked, {1, 20, 7}), "has rank 3");
    EXPECT_ERROR(convert_layout_shape(blocked, nchw, {1, 2, 7, 5, 8}), "sub-axis 16c has extent 8");
    EXPECT_ERROR(convert_layout_shape(nchw, Layout("NCH"), {1, 2, 3, 4}), "primal axes differ");
    EXPECT_ERROR(convert_layout_shape(blocked, nchw, {1, 2, 7, 5, 16}, {1, 40, 7, 5}), "outside 0..32");
  }

  void mapsIndicesThroughLogicalCoordinates() {
    const Layout blocked("NCHW16c");
    PrimalValues logical{};
    const int64_t physical[] = {1, 2, 3, 4, 5};
    blocked.logical_index(physical, logical);
    QCOMPARE(logical['N' - 'A'], 1);
    QCOMPARE(logical['C' - 'A'], 2 * 16 + 5);
    QCOMPARE(logical['W' - 'A'], 4);
    int64_t back[5];
    blocked.physical_index(logical, back);
    for (int k = 0; k < 5; ++k) QCOMPARE(back[k], physical[k]);
  }

  void blockedRoundTripPlacesEachElement() {
    // C = 20 is not a multiple of 8: the split zero-pads channels 20..23, the merge drops them.
    const Tensor x = iota({2, 20, 3, 2});
    const Tensor blocked = convert_layout(x, Layout("NCHW"), Layout("NCHW8c"));
    QCOMPARE(blocked.shape(), (Shape{2, 3, 3, 2, 8}));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 24; ++c)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t w = 0; w < 2; ++w) {
            const int64_t at = (((n * 3 + c / 8) * 3 + h) * 2 + w) * 8 + c % 8;
            const float expected = c < 20 ? static_cast<float>(((n * 20 + c) * 3 + h) * 2 + w) : 0.0f;
            QCOMPARE(blocked.data<float>()[at], expected);
          }
    const Tensor back = convert_layout(blocked, Layout("NCHW8c"), Layout("NCHW"), {2, 20, 3, 2});
    QCOMPARE(back.shape(), x.shape());
    QCOMPARE(floats(back), floats(x));
  }

  void nchwToNhwcEqualsTranspose() {
    const Tensor x = iota({2, 3, 4, 5});
    const Tensor via_layout =
        run1("layout_transform", {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NHWC")}}, {x});
    const Tensor via_transpose = run1("Transpose", {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, {x});
    QCOMPARE(via_layout.shape(), (Shape{2, 4, 5, 3}));
    QCOMPARE(floats(via_layout), floats(via_transpose));
  }

  void blockedToBlockedKeepsLogicalExtent() {
    // NCHW16c (C padded 20 → 32) to NHWC8c with the logical C = 20: channels 20..23 are zero.
    Tensor x = convert_layout(iota({1, 20, 2, 2}), Layout("NCHW"), Layout("NCHW16c"));
    const Tensor y = run1("layout_transform",
                          {{"src_layout", std::string("NCHW16c")},
                           {"dst_layout", std::string("NHWC8c")},
                           {"logical_shape", std::vector<int64_t>{1, 2, 2, 20}}},
                          {x});
    QCOMPARE(y.shape(), (Shape{1, 2, 2, 3, 8}));
    const Tensor plain = convert_layout(y, Layout("NHWC8c"), Layout("NCHW"), {1, 20, 2, 2});
    QCOMPARE(floats(plain), floats(iota({1, 20, 2, 2})));
    for (int64_t c = 20; c < 24; ++c) QCOMPARE(y.data<float>()[(0 * 3 + c / 8) * 8 + c % 8], 0.0f);
  }

  // Winograd's three nodes (winograd_convs makes them) compute the conv: input transform, the
  // batched product with winograd_weights, output transform, against the reference Conv, for
  // tiles of 2 and of 4 (the 6x6 output in tiles of 4 leaves 2 rows and columns past the edge).
  void winogradNodesComputeTheConv() {
    Tensor x = iota({1, 16, 6, 6}), w = iota({16, 16, 3, 3});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, std::sin(0.37 * static_cast<double>(i)));
    for (int64_t i = 0; i < w.numel(); ++i) w.set_double(i, std::cos(0.11 * static_cast<double>(i)));
    const Tensor bias = iota({1, 16});
    const Tensor direct = convert_layout(run1("Conv", {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {x, w}),
                                         Layout("NCHW"), Layout("NCHW16c"));
    const Tensor xb = convert_layout(x, Layout("NCHW"), Layout("NCHW16c"));
    for (int64_t tile : {2, 4}) {
      const Tensor v = run1("winograd_input_transform",
                            {{"tile", tile}, {"pad_top", int64_t{1}}, {"pad_left", int64_t{1}},
                             {"out_height", int64_t{6}}, {"out_width", int64_t{6}}},
                            {xb});
      const int64_t side = tile + 2, tiles = (tile == 2 ? 3 : 2) * (tile == 2 ? 3 : 2);
      QCOMPARE(v.shape(), (Shape{side * side, tiles, 16}));
      const Tensor m = run1("MatMul", {}, {v, ops::winograd_weights(w, tile)});
      const Tensor y = run1("winograd_output_transform",
                            {{"tile", tile}, {"out_height", int64_t{6}}, {"out_width", int64_t{6}}, {"block", int64_t{16}}},
                            {m, bias}, 2);
      QCOMPARE(y.shape(), direct.shape());
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double want = direct.get_double(i) + bias.get_double(i % 16);
        QVERIFY2(std::abs(y.get_double(i) - want) <= 1e-4 * (1 + std::abs(want)),
                 qPrintable(QString("tile %1, element %2: %3, expected %4").arg(tile).arg(i).arg(y.get_double(i)).arg(want)));
      }
    }
  }

  void winogradNodesRejectWhatTheyDoNotDefine() {
    const AttrMap in = {{"tile", int64_t{4}}, {"out_height", int64_t{8}}, {"out_width", int64_t{8}}};
    EXPECT_ERROR(run1("winograd_input_transform", in, {iota({1, 16, 8, 8})}), "NCHW{b}c (rank 5)");
    AttrMap three = in;
    three["tile"] = int64_t{3};
    EXPECT_ERROR(run1("winograd_input_transform", three, {iota({1, 1, 8, 8, 16})}), "tile must be 2 or 4");
    AttrMap far = in;
    far["pad_top"] = int64_t{3};
    EXPECT_ERROR(run1("winograd_input_transform", far, {iota({1, 1, 8, 8, 16})}), "pads above 2");
    AttrMap tall = in;
    tall["out_height"] = int64_t{11};
    EXPECT_ERROR(run1("winograd_input_transform", tall, {iota({1, 1, 8, 8, 16})}), "does not fit a 3x3 stride-1 window");
    const AttrMap out = {{"tile", int64_t{4}}, {"out_height", int64_t{8}}, {"out_width", int64_t{8}}, {"block", int64_t{16}}};
    EXPECT_ERROR(run1("winograd_output_transform", out, {iota({36, 5, 16})}), "not a whole number of 8x8 images");
    EXPECT_ERROR(run1("winograd_output_transform", out, {iota({16, 4, 16})}), "M must be [36, tiles, K]");
    AttrMap huge = out;
    huge["out_height"] = std::numeric_limits<int64_t>::max();
    EXPECT_ERROR(run1("winograd_output_transform", huge, {iota({36, 4, 16})}), "not a whole number");
    EXPECT_ERROR(run1("winograd_output_transform", out, {iota({36, 4, 16}), iota({16})}, 2), "B must be [K/b, b]");
  }

  void weightLayoutOIHW16i16o() {
    const Tensor w = iota({32, 16, 1, 2});
    const Tensor b = convert_layout(w, Layout("OIHW"), Layout("OIHW16i16o"));
    QCOMPARE(b.shape(), (Shape{2, 1, 1, 2, 16, 16}));
    // Element (o, i, h, w) lives at [o/16, i/16, h, w, i%16, o%16].
    for (int64_t o = 0; o < 32; ++o)
      for (int64_t i = 0; i < 16; ++i)
        for (int64_t x = 0; x < 2; ++x) {
          const int64_t at = ((((o / 16) * 1 + i / 16) * 1 + 0) * 2 + x) * 256 + (i % 16) * 16 + o % 16;
          QCOMPARE(b.data<float>()[at], w.data<float>()[(o * 16 + i) * 2 + x]);
        }
  }

  void opRejectsBadLayouts() {
    EXPECT_ERROR(run1("layout_transform", {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NCHWc")}},
                      {iota({1, 2, 2, 2})}),
                 "needs a factor");
    EXPECT_ERROR(run1("layout_transform", {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NHWC")}},
                      {iota({1, 2, 2})}),
                 "has rank 3");
    EXPECT_ERROR(run1("layout_transform",
                      {{"src_layout", std::string("NCHW16c")},
                       {"dst_layout", std::string("NCHW")},
                       {"logical_shape", std::vector<int64_t>{1, 20}}},
                      {Tensor(DataType::kFloat32, {1, 2, 2, 2, 16})}),
                 "has 4 primal axes (NCHW), got 2 extents");
    EXPECT_ERROR(run1("layout_transform", {{"src_layout", std::string("NCHW")}}, {iota({1, 2, 2, 2})}),
                 "missing required attribute 'dst_layout'");
  }
};

QTEST_APPLESS_MAIN(TestLayout)
#include "test_ops_shape_layout.moc"
