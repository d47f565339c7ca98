// MaxPool, AveragePool and the global pools against values worked out by hand and against plain
// loops written here.
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;

namespace {

// 1, 2, 3, ... in a tensor of the given shape.
Tensor counting(Shape shape) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, static_cast<double>(i + 1));
  return t;
}

AttrMap pool(std::vector<int64_t> kernel, AttrMap extra = {}) {
  extra["kernel_shape"] = std::move(kernel);
  return extra;
}

}  // namespace

class TestOpsNnPool : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void max_pool_ceil_mode_keeps_the_partial_window() {
    const Tensor x = counting({1, 1, 4, 4});
    const Tensor floor = run1("MaxPool", pool({3, 3}, ints("strides", {2, 2})), {x});
    QCOMPARE(floor.shape(), (Shape{1, 1, 1, 1}));
    QCOMPARE(floor.get_double(0), 11.0);
    AttrMap ceil = pool({3, 3}, ints("strides", {2, 2}));
    ceil["ceil_mode"] = int64_t{1};
    const Tensor y = run1("MaxPool", ceil, {x});
    QCOMPARE(y.shape(), (Shape{1, 1, 2, 2}));
    QCOMPARE(values(y), (std::vector<double>{11, 12, 15, 16}));
  }
  void ceil_mode_never_starts_a_window_in_the_end_padding() {
    // 4 wide, kernel 2, stride 2, one padding element at the end: ceil((4+1-2)/2)+1 = 3 windows,
    // but the third would start at 4, inside the padding, so there are 2.
    AttrMap a = pool({2}, ints("strides", {2}, ints("pads", {0, 1})));
    a["ceil_mode"] = int64_t{1};
    QCOMPARE(infer_op("MaxPool", a, {{DataType::kFloat32, {1, 1, 4}}})[0].shape, (Shape{1, 1, 2}));
    // 5 wide: the third window starts at 4, inside the input, and is kept.
    QCOMPARE(infer_op("MaxPool", a, {{DataType::kFloat32, {1, 1, 5}}})[0].shape, (Shape{1, 1, 3}));
  }
  void max_pool_dilations_and_padding() {
    const Tensor x = counting({1, 1, 4, 4});
    const Tensor y = run1("MaxPool", pool({2, 2}, ints("dilations", {2, 2})), {x});
    QCOMPARE(values(y), (std::vector<double>{11, 12, 15, 16}));
    // Padding never wins the max, even when every input is negative.
    Tensor neg = counting({1, 1, 2, 2});
    for (int64_t i = 0; i < 4; ++i) neg.set_double(i, -neg.get_double(i));
    const Tensor p = run1("MaxPool", pool({2, 2}, ints("pads", {1, 1, 1, 1})), {neg});
    QCOMPARE(values(p), (std::vector<double>{-1, -1, -2, -1, -1, -2, -3, -3, -4}));
  }
  void max_pool_same_upper_and_lower_pad_opposite_sides() {
    const Tensor x = counting({1, 1, 5, 5});
    AttrMap upper = pool({2, 2}, {{"auto_pad", std::string("SAME_UPPER")}});
    AttrMap lower = pool({2, 2}, {{"auto_pad", std::string("SAME_LOWER")}});
    const Tensor u = run1("MaxPool", upper, {x}), l = run1("MaxPool", lower, {x});
    QCOMPARE(u.shape(), (Shape{1, 1, 5, 5}));
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        // UPPER pads after: the window at (i, j) reaches (i+1, j+1); LOWER pads before: it ends at (i, j).
        QCOMPARE(u.get_double(i * 5 + j), x.get_double(std::min<int64_t>(i + 1, 4) * 5 + std::min<int64_t>(j + 1, 4)));
        QCOMPARE(l.get_double(i * 5 + j), x.get_double(i * 5 + j));
      }
    AttrMap valid = pool({2, 2}, {{"auto_pad", std::string("VALID")}, {"strides", std::vector<int64_t>{2, 2}}});
    QCOMPARE(run1("MaxPool", valid, {x}).shape(), (Shape{1, 1, 2, 2}));
  }
  void max_pool_indices_row_and_column_major() {
    const Tensor x = counting({1, 2, 5, 5});
    AttrMap a = pool({2, 2}, ints("strides", {2, 2}));
    auto out = run_op("MaxPool", a, {x}, 2);
    QCOMPARE(values(out[0]), (std::vector<double>{7, 9, 17, 19, 32, 34, 42, 44}));
    QCOMPARE(out[1].dtype(), DataType::kInt64);
    // Flat positions in X, counting the batch and channel: the second channel starts at 25.
    QCOMPARE(out[1].to_int64s(), (std::vector<int64_t>{6, 8, 16, 18, 31, 33, 41, 43}));
    a["storage_order"] = int64_t{1};
    out = run_op("MaxPool", a, {x}, 2);
    QCOMPARE(out[1].to_int64s(), (std::vector<int64_t>{6, 16, 8, 18, 31, 41, 33, 43}));
  }
  void max_pool_keeps_integer_types() {
    Tensor x(DataType::kUInt8, {1, 1, 2, 3});
    const std::vector<int> v = {3, 250, 7, 255, 0, 1};
    for (int i = 0; i < 6; ++i) x.set_double(i, v[i]);
    const Tensor y = run1("MaxPool", pool({2, 2}), {x});
    QCOMPARE(y.dtype(), DataType::kUInt8);
    QCOMPARE(values(y), (std::vector<double>{255, 250}));
  }
  void average_pool_count_include_pad() {
    const Tensor ones(f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f)));
    AttrMap a = pool({3, 3}, ints("pads", {1, 1, 1, 1}));
    QCOMPARE(values(run1("AveragePool", a, {ones})), std::vector<double>(9, 1.0));
    a["count_include_pad"] = int64_t{1};
    // Corners see 4 of 9 real elements, edges 6, the centre 9.
    const std::vector<double> expected = {4 / 9.0, 6 / 9.0, 4 / 9.0, 6 / 9.0, 1.0, 6 / 9.0, 4 / 9.0, 6 / 9.0, 4 / 9.0};
    QVERIFY(close(values(run1("AveragePool", a, {ones})), expected, 1e-6));
  }
  void average_pool_ceil_mode_divides_by_the_covered_part() {
    // 5 wide, kernel 2, stride 2, ceil: windows [0,1], [2,3], [4] → the last averages one element,
    // with or without count_include_pad (it hangs past the input, not into padding).
    const Tensor x = counting({1, 1, 1, 5});
    for (int64_t include : {0, 1}) {
      AttrMap a = pool({1, 2}, ints("strides", {1, 2}));
      a["ceil_mode"] = int64_t{1};
      a["count_include_pad"] = include;
      QCOMPARE(values(run1("AveragePool", a, {x})), (std::vector<double>{1.5, 3.5, 5.0}));
    }
  }
  void average_pool_matches_loops_on_3d_input() {
    const Tensor x = random_f32({2, 3, 4, 5, 6}, 9);
    AttrMap a = pool({2, 3, 2}, ints("strides", {2, 1, 2}, ints("pads", {0, 1, 1, 1, 0, 0})));
    const Tensor y = run1("AveragePool", a, {x});
    // D: (4-2)/2+1 = 2, H: (5+1-3)/1+1 = 4, W: (6+1-2)/2+1 = 3
    QCOMPARE(y.shape(), (Shape{2, 3, 2, 4, 3}));
    std::vector<double> expected;
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t od = 0; od < 2; ++od)
        for (int64_t oh = 0; oh < 4; ++oh)
          for (int64_t ow = 0; ow < 3; ++ow) {
            double sum = 0;
            int count = 0;
            for (int64_t kd = 0; kd < 2; ++kd)
              for (int64_t kh = 0; kh < 3; ++kh)
                for (int64_t kw = 0; kw < 2; ++kw) {
                  const int64_t d = od * 2 + kd, h = oh - 1 + kh, w = ow * 2 - 1 + kw;
                  if (h < 0 || h >= 5 || w < 0 || w >= 6) continue;
                  sum += x.get_double(((p * 4 + d) * 5 + h) * 6 + w);
                  ++count;
                }
            expected.push_back(sum / count);
          }
    QVERIFY(close(values(y), expected));
  }
  void global_pools() {
    const Tensor x = random_f32({2, 3, 4, 5}, 3);
    const Tensor avg = run1("GlobalAveragePool", {}, {x}), mx = run1("GlobalMaxPool", {}, {x});
    QCOMPARE(avg.shape(), (Shape{2, 3, 1, 1}));
    QCOMPARE(mx.shape(), (Shape{2, 3, 1, 1}));
    std::vector<double> mean, max;
    for (int64_t p = 0; p < 6; ++p) {
      double s = 0, m = -1e30;
      for (int64_t i = 0; i < 20; ++i) {
        s += x.get_double(p * 20 + i);
        m = std::max(m, x.get_double(p * 20 + i));
      }
      mean.push_back(s / 20);
      max.push_back(m);
    }
    QVERIFY(close(values(avg), mean));
    QCOMPARE(values(mx), max);
    QCOMPARE(run1("GlobalAveragePool", {}, {random_f32({1, 2, 3}, 1)}).shape(), (Shape{1, 2, 1}));
  }
  void lp_pool_matches_loops() {
    const Tensor x = random_f32({1, 2, 5, 4}, 12);
    for (int64_t p : {1, 2, 3}) {
      AttrMap a = pool({2, 3}, ints("strides", {2, 1}, ints("pads", {1, 0, 0, 1})));
      a["p"] = p;
      const Tensor y = run1("LpPool", a, {x});
      // H: (5+1-2)/2+1 = 3, W: (4+1-3)/1+1 = 3
      QCOMPARE(y.shape(), (Shape{1, 2, 3, 3}));
      std::vector<double> expected;
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t oh = 0; oh < 3; ++oh)
          for (int64_t ow = 0; ow < 3; ++ow) {
            double s = 0;
            for (int64_t kh = 0; kh < 2; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t h = oh * 2 - 1 + kh, w = ow + kw;
                if (h >= 0 && h < 5 && w < 4) s += std::pow(std::abs(x.get_double((c * 5 + h) * 4 + w)), double(p));
              }
            expected.push_back(std::pow(s, 1.0 / double(p)));
          }
      QVERIFY(close(values(y), expected));
    }
    const Tensor g = run1("GlobalLpPool", {{"p", int64_t{1}}}, {x});
    QCOMPARE(g.shape(), (Shape{1, 2, 1, 1}));
    for (int64_t c = 0; c < 2; ++c) {
      double s = 0;
      for (int64_t i = 0; i < 20; ++i) s += std::abs(x.get_double(c * 20 + i));
      QVERIFY(std::abs(g.get_double(c) - s) < 1e-5);
    }
    QVERIFY(error_of("LpPool", pool({2, 2}, {{"p", int64_t{0}}}), {x}).contains("'p'"));
  }
  void pool_errors_name_the_problem() {
    const Tensor x = random_f32({1, 1, 4, 4}, 1);
    QVERIFY(error_of("MaxPool", {}, {x}).contains("missing required attribute 'kernel_shape'"));
    QVERIFY(error_of("MaxPool", pool({3}), {x}).contains("kernel has 1 spatial axes; the input has 2"));
    QVERIFY(
        error_of("MaxPool", pool({2, 2}, ints("pads", {2, 0, 0, 0})), {x}).contains("must be smaller than the window"));
    QVERIFY(error_of("MaxPool", pool({5, 5}), {x}).contains("larger than the padded input"));
    QVERIFY(error_of("MaxPool", pool({2, 2}, {{"storage_order", int64_t{2}}}), {x}).contains("storage_order"));
    QVERIFY(error_of("AveragePool", pool({2, 2}, ints("dilations", {2, 2})), {x}).contains("dilations"));
    QVERIFY(error_of("AveragePool", pool({2, 2}), {x.cast(DataType::kInt8)}).contains("dtype i8"));
    QVERIFY(error_of("GlobalMaxPool", {}, {random_f32({4}, 1)}).contains("rank 3 or more"));
  }
  void costs_and_patterns() {
    Graph g = single_node_graph("MaxPool", pool({3, 3}), {random_f32({1, 2, 5, 5}, 1)}, 1);
    QCOMPARE(node_flops(g, g.nodes[0]), int64_t{2 * 9 * 9});
    for (const char* op : {"MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
      QCOMPARE(get_op(op).pattern, PatternKind::kOutEWiseFusable);
  }
};

QTEST_APPLESS_MAIN(TestOpsNnPool)
#include "test_ops_nn_pool.moc"
