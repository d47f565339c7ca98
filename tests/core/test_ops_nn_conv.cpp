// Conv and ConvTranspose against formulations written independently here: an explicit
// im2col + matrix product for 2-D convolution, plain nested loops for 3-D, and the adjoint identity
// <conv(x), y> = <x, conv_transpose(y)> for the transposed convolution.
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;

namespace {

struct Conv2dParams {
  int64_t group = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
};

// Y = W_g · im2col(X_g) per image and group; `out_shape` receives N×M×OH×OW.
std::vector<double> conv2d_im2col(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                                  Shape& out_shape) {
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t M = w.shape()[0], Cg = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3];
  const int64_t OH = (H + p.pt + p.pb - ((KH - 1) * p.dh + 1)) / p.sh + 1;
  const int64_t OW = (W + p.pl + p.pr - ((KW - 1) * p.dw + 1)) / p.sw + 1;
  const int64_t Mg = M / p.group, rows = Cg * KH * KW, cols = OH * OW;
  out_shape = {N, M, OH, OW};
  std::vector<double> y(static_cast<size_t>(N * M * cols), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      std::vector<double> col(static_cast<size_t>(rows * cols), 0.0);
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw)
            for (int64_t oh = 0; oh < OH; ++oh)
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t ih = oh * p.sh - p.pt + kh * p.dh, iw = ow * p.sw - p.pl + kw * p.dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                col[((c * KH + kh) * KW + kw) * cols + oh * OW + ow] =
                    x.get_double(((n * C + g * Cg + c) * H + ih) * W + iw);
              }
      for (int64_t m = 0; m < Mg; ++m)
        for (int64_t q = 0; q < cols; ++q) {
          double acc = bias ? bias->get_double(g * Mg + m) : 0.0;
          for (int64_t r = 0; r < rows; ++r) acc += w.get_double((g * Mg + m) * rows + r) * col[r * cols + q];
          y[(n * M + g * Mg + m) * cols + q] = acc;
        }
    }
  return y;
}

AttrMap conv_attrs(const Conv2dParams& p) {
  AttrMap m;
  m["group"] = p.group;
  m["strides"] = std::vector<int64_t>{p.sh, p.sw};
  m["dilations"] = std::vector<int64_t>{p.dh, p.dw};
  m["pads"] = std::vector<int64_t>{p.pt, p.pl, p.pb, p.pr};
  return m;
}

void check_conv2d(const Shape& x_shape, const Shape& w_shape, const Conv2dParams& p, bool with_bias, uint64_t seed) {
  const Tensor x = random_f32(x_shape, seed), w = random_f32(w_shape, seed + 1);
  const Tensor b = random_f32({w_shape[0]}, seed + 2);
  Shape expected_shape;
  const auto expected = conv2d_im2col(x, w, with_bias ? &b : nullptr, p, expected_shape);
  const Tensor y = run1("Conv", conv_attrs(p), with_bias ? std::vector<Tensor>{x, w, b} : std::vector<Tensor>{x, w});
  QCOMPARE(y.shape(), expected_shape);
  QVERIFY(close(values(y), expected));
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

class TestOpsNnConv : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void conv_matches_im2col_with_padding_and_bias() {
    Conv2dParams p;
    p.pt = p.pl = p.pb = p.pr = 1;
    check_conv2d({2, 3, 7, 6}, {4, 3, 3, 3}, p, true, 1);
  }
  void conv_matches_im2col_with_strides_and_asymmetric_pads() {
    Conv2dParams p;
    p.sh = 2;
    p.sw = 3;
    p.pt = 1;
    p.pl = 0;
    p.pb = 2;
    p.pr = 1;
    check_conv2d({1, 2, 9, 8}, {3, 2, 3, 2}, p, false, 11);
  }
  void conv_matches_im2col_with_dilations_and_groups() {
    Conv2dParams p;
    p.group = 2;
    p.dh = 2;
    p.dw = 3;
    p.pt = 2;
    p.pb = 1;
    check_conv2d({1, 4, 9, 10}, {6, 2, 3, 3}, p, true, 21);
  }
  void depthwise_conv_matches_im2col() {
    Conv2dParams p;
    p.group = 4;  // one input channel per group, channel multiplier 2
    p.pt = p.pl = p.pb = p.pr = 1;
    p.sh = p.sw = 2;
    check_conv2d({2, 4, 8, 8}, {8, 1, 3, 3}, p, true, 31);
  }
  void auto_pad_same_and_valid_equal_the_explicit_pads() {
    // 6 wide, kernel 3, stride 2: output ceil(6/2) = 3 needs (3-1)*2 + 3 - 6 = 1 padding element.
    const Tensor x = random_f32({1, 2, 6, 6}, 41), w = random_f32({3, 2, 3, 3}, 42);
    AttrMap base = ints("strides", {2, 2});
    auto with = [&](const char* key, AttrValue v) {
      AttrMap m = base;
      m[key] = std::move(v);
      return run1("Conv", m, {x, w});
    };
    const Tensor upper = with("auto_pad", std::string("SAME_UPPER"));
    const Tensor lower = with("auto_pad", std::string("SAME_LOWER"));
    const Tensor valid = with("auto_pad", std::string("VALID"));
    QCOMPARE(upper.shape(), (Shape{1, 3, 3, 3}));
    QVERIFY(close(values(upper), values(with("pads", std::vector<int64_t>{0, 0, 1, 1}))));
    QVERIFY(close(values(lower), values(with("pads", std::vector<int64_t>{1, 1, 0, 0}))));
    QCOMPARE(valid.shape(), (Shape{1, 3, 2, 2}));
    QVERIFY(close(values(valid), values(run1("Conv", base, {x, w}))));
    QVERIFY(max_difference(values(upper), values(lower)) > 0.1);  // the padding side matters
  }
  void conv_1d_equals_2d_with_unit_height() {
    const Tensor x = random_f32({2, 3, 11}, 51), w = random_f32({5, 3, 4}, 52), b = random_f32({5}, 53);
    AttrMap a1{{"strides", std::vector<int64_t>{2}},
               {"pads", std::vector<int64_t>{2, 1}},
               {"dilations", std::vector<int64_t>{2}}};
    const Tensor y1 = run1("Conv", a1, {x, w, b});
    QCOMPARE(y1.shape(), (Shape{2, 5, (11 + 3 - 7) / 2 + 1}));
    AttrMap a2{{"strides", std::vector<int64_t>{1, 2}},
               {"pads", std::vector<int64_t>{0, 2, 0, 1}},
               {"dilations", std::vector<int64_t>{1, 2}}};
    const Tensor y2 = run1("Conv", a2, {x.reshaped({2, 3, 1, 11}), w.reshaped({5, 3, 1, 4}), b});
    QVERIFY(close(values(y1), values(y2)));
  }
  void conv_3d_matches_nested_loops() {
    const Tensor x = random_f32({1, 2, 4, 5, 3}, 61), w = random_f32({3, 2, 2, 3, 2}, 62);
    AttrMap a{{"pads", std::vector<int64_t>{1, 0, 1, 0, 1, 0}}, {"strides", std::vector<int64_t>{1, 2, 1}}};
    const Tensor y = run1("Conv", a, {x, w});
    // D: 4+1-2+1 = 4, H: (5+1-3)/2+1 = 2, W: 3+1-2+1 = 3
    QCOMPARE(y.shape(), (Shape{1, 3, 4, 2, 3}));
    std::vector<double> expected;
    for (int64_t m = 0; m < 3; ++m)
      for (int64_t od = 0; od < 4; ++od)
        for (int64_t oh = 0; oh < 2; ++oh)
          for (int64_t ow = 0; ow < 3; ++ow) {
            double acc = 0;
            for (int64_t c = 0; c < 2; ++c)
              for (int64_t kd = 0; kd < 2; ++kd)
                for (int64_t kh = 0; kh < 3; ++kh)
                  for (int64_t kw = 0; kw < 2; ++kw) {
                    const int64_t id = od - 1 + kd, ih = oh * 2 + kh, iw = ow - 1 + kw;
                    if (id < 0 || id >= 4 || ih >= 5 || iw < 0 || iw >= 3) continue;
                    acc += x.get_double(((c * 4 + id) * 5 + ih) * 3 + iw) *
                           w.get_double((((m * 2 + c) * 2 + kd) * 3 + kh) * 2 + kw);
                  }
            expected.push_back(acc);
          }
    QVERIFY(close(values(y), expected));
  }
  void conv_supports_double_and_half() {
    const Tensor x = random_f32({1, 2, 5, 5}, 71), w = random_f32({2, 2, 3, 3}, 72);
    const auto expected = values(run1("Conv", {}, {x, w}));
    QVERIFY(close(values(run1("Conv", {}, {x.cast(DataType::kFloat64), w.cast(DataType::kFloat64)})), expected));
    const Tensor half = run1("Conv", {}, {x.cast(DataType::kFloat16), w.cast(DataType::kFloat16)});
    QCOMPARE(half.dtype(), DataType::kFloat16);
    QVERIFY(close(values(half), expected, 1e-2));
  }
  void conv_errors_name_the_problem() {
    const Tensor x = random_f32({1, 3, 5, 5}, 1), w = random_f32({2, 4, 3, 3}, 2);
    QCOMPARE(error_of("Conv", {}, {x, w}),
             QString("node 'node' (Conv): Conv: input channels 3 do not match weight channels 4 × group 1"));
    const Tensor w6 = random_f32({3, 3, 3, 3}, 3);
    QVERIFY(error_of("Conv", {{"group", int64_t{3}}}, {x, random_f32({4, 1, 3, 3}, 4)})
                .contains("not divisible by group 3"));
    QVERIFY(error_of("Conv", ints("pads", {1, 1}), {x, w6}).contains("pads has 2 values; expected 4"));
    QVERIFY(error_of("Conv", ints("strides", {1, 1, 1}), {x, w6}).contains("strides has 3 values"));
    QVERIFY(error_of("Conv", ints("kernel_shape", {2, 2}), {x, w6}).contains("does not match W's spatial shape"));
    QVERIFY(error_of("Conv", {{"group", int64_t{0}}}, {x, w6}).contains("group"));
    QVERIFY(error_of("Conv", {}, {x, w6, random_f32({2}, 5)}).contains("B has shape [2]; expected [3]"));
    QVERIFY(error_of("Conv", {}, {random_f32({3, 5}, 6), w6}).contains("rank 3 or more"));
    QVERIFY(error_of("Conv", {}, {x.cast(DataType::kInt32), w6.cast(DataType::kInt32)}).contains("dtype i32"));
    QVERIFY(error_of("Conv", {}, {x, random_f32({3, 3, 7, 7}, 7)}).contains("larger than the padded input"));
    AttrMap both = ints("pads", {1, 1, 1, 1});
    both["auto_pad"] = std::string("SAME_UPPER");
    QVERIFY(error_of("Conv", both, {x, w6}).contains("cannot be combined with auto_pad"));
    QVERIFY(error_of("Conv", {{"auto_pad", std::string("SAME")}}, {x, w6}).contains("auto_pad"));
    QVERIFY(error_of("Conv", {{"padding", int64_t{1}}}, {x, w6}).contains("padding"));
  }

  void conv_transpose_matches_the_hand_computed_example() {
    // Every weight is 1, stride 1: output[i][j] sums the inputs whose 3×3 footprint covers (i, j).
    const Tensor x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor w = f32({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
    const Tensor y = run1("ConvTranspose", {}, {x, w});
    QCOMPARE(y.shape(), (Shape{1, 2, 5, 5}));
    const std::vector<double> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                       27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
    std::vector<double> expected = plane;
    expected.insert(expected.end(), plane.begin(), plane.end());
    QVERIFY(close(values(y), expected));
  }
  void conv_transpose_is_the_adjoint_of_conv() {
    // For Conv X→Y with weights W (M×C/g×k…), ConvTranspose with the same W maps Y back to X's shape,
    // and <Conv(x), y> = <x, ConvTranspose(y)> for every x, y.
    struct Case {
      Shape x, w;
      int64_t group;
      std::vector<int64_t> strides, dilations, pads;
    };
    const std::vector<Case> cases = {
        {{1, 2, 7, 8}, {3, 2, 3, 3}, 1, {2, 3}, {1, 1}, {1, 0, 1, 2}},
        {{2, 4, 9, 6}, {6, 2, 3, 2}, 2, {2, 2}, {2, 1}, {0, 0, 0, 0}},
        {{1, 3, 10}, {3, 1, 4}, 3, {3}, {1}, {2, 1}},
    };
    uint64_t seed = 100;
    for (const Case& c : cases) {
      AttrMap attrs{{"group", c.group}, {"strides", c.strides}, {"dilations", c.dilations}, {"pads", c.pads}};
      const Tensor x = random_f32(c.x, seed++), w = random_f32(c.w, seed++);
      const Tensor conv = run1("Conv", attrs, {x, w});
      const Tensor y = random_f32(conv.shape(), seed++);
      // Same pads; output_padding restores the input elements the strided windows never reached.
      const size_t rank = c.strides.size();
      std::vector<int64_t> extra;
      for (size_t i = 0; i < rank; ++i) {
        const int64_t reach = c.strides[i] * (conv.shape()[2 + i] - 1) + (c.w[2 + i] - 1) * c.dilations[i] + 1 -
                              c.pads[i] - c.pads[rank + i];
        extra.push_back(c.x[2 + i] - reach);
      }
      attrs["output_padding"] = extra;
      const Tensor back = run1("ConvTranspose", attrs, {y, w});
      QCOMPARE(back.shape(), x.shape());
      const double lhs = dot(values(conv), values(y)), rhs = dot(values(x), values(back));
      QVERIFY2(std::abs(lhs - rhs) < 1e-4 * (1 + std::abs(lhs)), qPrintable(QString("%1 vs %2").arg(lhs).arg(rhs)));
    }
  }
  void conv_transpose_output_size_rules() {
    const TensorType x{DataType::kFloat32, {1, 1, 3, 3}}, w{DataType::kFloat32, {1, 2, 3, 3}};
    auto shape_of = [&](const AttrMap& a) { return infer_op("ConvTranspose", a, {x, w})[0].shape; };
    AttrMap s32 = ints("strides", {3, 2});
    QCOMPARE(shape_of(s32), (Shape{1, 2, 9, 7}));
    QCOMPARE(shape_of(ints("output_padding", {1, 1}, s32)), (Shape{1, 2, 10, 8}));
    QCOMPARE(shape_of(ints("pads", {1, 2, 1, 2}, s32)), (Shape{1, 2, 7, 3}));
    QCOMPARE(shape_of(ints("output_shape", {10, 8}, s32)), (Shape{1, 2, 10, 8}));
    QCOMPARE(shape_of(ints("dilations", {2, 2})), (Shape{1, 2, 7, 7}));
    AttrMap same = ints("strides", {2, 2});
    same["auto_pad"] = std::string("SAME_UPPER");
    QCOMPARE(shape_of(same), (Shape{1, 2, 6, 6}));
  }
  void conv_transpose_output_shape_pads_like_output_padding_and_same_crops_the_end() {
    const Tensor x = random_f32({1, 1, 3, 3}, 201), w = random_f32({1, 2, 3, 3}, 202);
    AttrMap s32 = ints("strides", {3, 2});
    // output_shape one larger than the natural size: the extra row/column is at the end, as with
    // output_padding.
    QVERIFY(close(values(run1("ConvTranspose", ints("output_shape", {10, 8}, s32), {x, w})),
                  values(run1("ConvTranspose", ints("output_padding", {1, 1}, s32), {x, w}))));
    // SAME_UPPER with stride 2: natural size 7 cropped to 6 by dropping the last row and column.
    AttrMap same = ints("strides", {2, 2});
    same["auto_pad"] = std::string("SAME_UPPER");
    const Tensor y = run1("ConvTranspose", same, {x, w});
    const Tensor full = run1("ConvTranspose", ints("strides", {2, 2}), {x, w});
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 6; ++j)
          QCOMPARE(y.get_double((c * 6 + i) * 6 + j), full.get_double((c * 7 + i) * 7 + j));
  }
  void conv_transpose_adds_bias_per_output_channel() {
    const Tensor x = random_f32({1, 2, 3, 3}, 301), w = random_f32({2, 3, 2, 2}, 302);
    const Tensor b = f32({3}, {1.0f, -2.0f, 0.5f});
    const auto plain = values(run1("ConvTranspose", {}, {x, w}));
    const auto biased = values(run1("ConvTranspose", {}, {x, w, b}));
    std::vector<double> expected;
    for (size_t i = 0; i < plain.size(); ++i) expected.push_back(plain[i] + b.get_double(int64_t(i / 16)));
    QVERIFY(close(biased, expected));
  }
  void conv_transpose_errors_name_the_problem() {
    const Tensor x = random_f32({1, 2, 3, 3}, 1);
    QVERIFY(error_of("ConvTranspose", {}, {x, random_f32({3, 1, 3, 3}, 2)})
                .contains("input channels 2 do not match weight dim 0 = 3"));
    QVERIFY(error_of("ConvTranspose", ints("output_padding", {2, 0}), {x, random_f32({2, 1, 3, 3}, 3)})
                .contains("must be less than the stride"));
    QVERIFY(error_of("ConvTranspose", ints("pads", {3, 3, 3, 3}), {x, random_f32({2, 1, 2, 2}, 4)})
                .contains("not positive"));
  }
  void costs_and_patterns() {
    Graph g = single_node_graph("Conv", ints("pads", {1, 1, 1, 1}),
                                {random_f32({1, 3, 8, 8}, 1), random_f32({4, 3, 3, 3}, 2), random_f32({4}, 3)}, 1);
    QCOMPARE(node_flops(g, g.nodes[0]), int64_t{2 * 4 * 64 * 3 * 9 + 4 * 64});
    Graph t = single_node_graph("ConvTranspose", {}, {random_f32({1, 2, 3, 3}, 1), random_f32({2, 5, 2, 2}, 2)}, 1);
    QCOMPARE(node_flops(t, t.nodes[0]), int64_t{2 * 2 * 9 * 5 * 4});
    QCOMPARE(get_op("Conv").pattern, PatternKind::kOutEWiseFusable);
    QCOMPARE(get_op("ConvTranspose").pattern, PatternKind::kOutEWiseFusable);
  }
  void every_onnx_attribute_is_declared() {
    AttrMap all{{"auto_pad", std::string("NOTSET")},
                {"dilations", std::vector<int64_t>{1, 1}},
                {"group", int64_t{1}},
                {"kernel_shape", std::vector<int64_t>{3, 3}},
                {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                {"strides", std::vector<int64_t>{1, 1}}};
    get_op("Conv").parse_attrs("Conv", all);
    all["output_padding"] = std::vector<int64_t>{0, 0};
    all["output_shape"] = std::vector<int64_t>{5, 5};
    get_op("ConvTranspose").parse_attrs("ConvTranspose", all);
  }
};

QTEST_APPLESS_MAIN(TestOpsNnConv)
#include "test_ops_nn_conv.moc"
