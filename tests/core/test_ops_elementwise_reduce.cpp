// Reductions and ArgMax/ArgMin: axes (negative, empty, as input or attribute), keepdims,
// noop_with_empty_axes, integer exactness, numerical stability, and every error path. Expected
// values are computed here with explicit loops over a [2,3,4] input.
#include <QtTest>
#include <cmath>
#include <functional>
#include <limits>

#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

namespace {

// Reference reduction over axis 1 of a [2,3,4] tensor, written as a plain triple loop.
std::vector<double> reduce_axis1(const Tensor& x, const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> out;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      std::vector<double> group;
      for (int j = 0; j < 3; ++j) group.push_back(x.get_double((i * 3 + j) * 4 + k));
      out.push_back(f(group));
    }
  return out;
}

bool close(double a, double b, double tol = 1e-5) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

}  // namespace

class TestOpsElementwiseReduce : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void every_reduction_over_one_axis();
  void keepdims_and_negative_axes();
  void reduce_sum_axes_input();
  void empty_axes_reduce_everything();
  void noop_with_empty_axes();
  void multiple_axes();
  void integer_reductions_are_exact();
  void log_sum_exp_is_stable();
  void reduction_errors();
  void argmax_argmin();
  void argmax_select_last_index_and_nan();
  void arg_errors();
};

void TestOpsElementwiseReduce::every_reduction_over_one_axis() {
  Tensor x = random_f32({2, 3, 4}, 3, 0.1f, 2.0f);  // positive, so ReduceLogSum is defined
  struct Case {
    const char* op;
    std::function<double(const std::vector<double>&)> f;
  };
  auto sum = [](const std::vector<double>& g) {
    double s = 0;
    for (double v : g) s += v;
    return s;
  };
  const std::vector<Case> cases = {
      {"ReduceMean", [&](const auto& g) { return sum(g) / g.size(); }},
      {"ReduceMax", [](const auto& g) { return *std::max_element(g.begin(), g.end()); }},
      {"ReduceMin", [](const auto& g) { return *std::min_element(g.begin(), g.end()); }},
      {"ReduceProd", [](const auto& g) { return g[0] * g[1] * g[2]; }},
      {"ReduceL1", [](const auto& g) { return std::fabs(g[0]) + std::fabs(g[1]) + std::fabs(g[2]); }},
      {"ReduceL2", [](const auto& g) { return std::hypot(g[0], g[1], g[2]); }},
      {"ReduceSumSquare", [](const auto& g) { return g[0] * g[0] + g[1] * g[1] + g[2] * g[2]; }},
      {"ReduceLogSum", [&](const auto& g) { return std::log(sum(g)); }},
      {"ReduceLogSumExp", [](const auto& g) { return std::log(std::exp(g[0]) + std::exp(g[1]) + std::exp(g[2])); }},
  };
  for (const Case& c : cases) {
    Tensor y = run_op(c.op, {{"axes", std::vector<int64_t>{1}}}, {{x}})[0];
    QCOMPARE(y.shape(), (Shape{2, 1, 4}));
    std::vector<double> expected = reduce_axis1(x, c.f);
    for (size_t o = 0; o < expected.size(); ++o)
      QVERIFY2(close(y.get_double(static_cast<int64_t>(o)), expected[o]),
               qPrintable(QString("%1[%2] = %3, expected %4").arg(c.op).arg(o).arg(y.get_double(o)).arg(expected[o])));
  }
  Tensor s = run1("ReduceSum", {{x}, constant(i64({1}, {1}))});
  std::vector<double> expected = reduce_axis1(x, sum);
  for (size_t o = 0; o < expected.size(); ++o) QVERIFY(close(s.get_double(static_cast<int64_t>(o)), expected[o]));
}

void TestOpsElementwiseReduce::keepdims_and_negative_axes() {
  Tensor x = random_f32({2, 3, 4}, 4);
  Tensor kept = run_op("ReduceMax", {{"axes", std::vector<int64_t>{-2}}}, {{x}})[0];
  Tensor dropped = run_op("ReduceMax", {{"axes", std::vector<int64_t>{-2}}, {"keepdims", int64_t{0}}}, {{x}})[0];
  QCOMPARE(kept.shape(), (Shape{2, 1, 4}));
  QCOMPARE(dropped.shape(), (Shape{2, 4}));
  std::vector<double> expected = reduce_axis1(x, [](const auto& g) { return *std::max_element(g.begin(), g.end()); });
  for (size_t o = 0; o < expected.size(); ++o) {
    QCOMPARE(kept.get_double(static_cast<int64_t>(o)), expected[o]);
    QCOMPARE(dropped.get_double(static_cast<int64_t>(o)), expected[o]);
  }
  // Last axis: mean over the 4 innermost elements.
  Tensor m = run_op("ReduceMean", {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{0}}}, {{x}})[0];
  QCOMPARE(m.shape(), (Shape{2, 3}));
  for (int r = 0; r < 6; ++r) {
    double s = 0;
    for (int k = 0; k < 4; ++k) s += x.data<float>()[r * 4 + k];
    QVERIFY(close(m.get_double(r), s / 4));
  }
}

void TestOpsElementwiseReduce::reduce_sum_axes_input() {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor rows = run_op("ReduceSum", {{"keepdims", int64_t{0}}}, {{x}, constant(i64({1}, {-1}))})[0];
  QCOMPARE(rows.shape(), (Shape{2}));
  QCOMPARE(rows.data<float>()[0], 6.0f);
  QCOMPARE(rows.data<float>()[1], 15.0f);
  Tensor cols = run1("ReduceSum", {{x}, constant(i64({1}, {0}))});
  QCOMPARE(cols.shape(), (Shape{1, 3}));
  QCOMPARE(cols.data<float>()[2], 9.0f);
  // The axes must be known when inferring shapes.
  std::string msg = error_of([&] { run1("ReduceSum", {{x}, {i64({1}, {0})}}); });
  QVERIFY2(contains(msg, "ReduceSum") && contains(msg, "axes") && contains(msg, "compile time"), msg.c_str());
  msg = error_of([&] { run1("ReduceSum", {{x}, constant(i32({1}, {0}))}); });
  QVERIFY2(contains(msg, "ReduceSum") && contains(msg, "i32"), msg.c_str());
}

void TestOpsElementwiseReduce::empty_axes_reduce_everything() {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor all_keep = run1("ReduceSum", {{x}});  // no axes input
  QCOMPARE(all_keep.shape(), (Shape{1, 1}));
  QCOMPARE(all_keep.data<float>()[0], 21.0f);
  Tensor all_empty = run_op("ReduceSum", {{"keepdims", int64_t{0}}}, {{x}, constant(i64({0}, {}))})[0];
  QCOMPARE(all_empty.shape(), Shape{});
  QCOMPARE(all_empty.data<float>()[0], 21.0f);
  Tensor mean = run_op("ReduceMean", {{"keepdims", int64_t{0}}}, {{x}})[0];
  QCOMPARE(mean.shape(), Shape{});
  QCOMPARE(mean.data<float>()[0], 3.5f);
  Tensor prod = run1("ReduceProd", {{x}});
  QCOMPARE(prod.data<float>()[0], 720.0f);
  // A scalar input reduces to itself.
  QCOMPARE(run1("ReduceL2", {{Tensor::scalar<float>(-3.0f)}}).data<float>()[0], 3.0f);
}

void TestOpsElementwiseReduce::noop_with_empty_axes() {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const Operand& axes : {Operand::absent(), constant(i64({0}, {}))}) {
    Tensor y = run_op("ReduceSum", {{"noop_with_empty_axes", int64_t{1}}}, {{x}, axes})[0];
    QCOMPARE(y.shape(), x.shape());
    for (int i = 0; i < 6; ++i) QCOMPARE(y.data<float>()[i], x.data<float>()[i]);
  }
  // With axes given, the flag changes nothing.
  Tensor y = run_op("ReduceSum", {{"noop_with_empty_axes", int64_t{1}}}, {{x}, constant(i64({1}, {1}))})[0];
  QCOMPARE(y.shape(), (Shape{2, 1}));
  QCOMPARE(y.data<float>()[1], 15.0f);
}

void TestOpsElementwiseReduce::multiple_axes() {
  Tensor x = random_f32({2, 3, 4}, 9);
  Tensor y = run_op("ReduceSumSquare", {{"axes", std::vector<int64_t>{0, -1}}, {"keepdims", int64_t{0}}}, {{x}})[0];
  QCOMPARE(y.shape(), (Shape{3}));
  for (int j = 0; j < 3; ++j) {
    double s = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) s += std::pow(x.data<float>()[(i * 3 + j) * 4 + k], 2);
    QVERIFY(close(y.get_double(j), s));
  }
}

void TestOpsElementwiseReduce::integer_reductions_are_exact() {
  const int64_t big = (int64_t{1} << 53) + 1;  // lost by any detour through double
  Tensor x = i64({2, 2}, {big, 2, -big, 5});
  Tensor s = run_op("ReduceSum", {{"keepdims", int64_t{0}}}, {{x}, constant(i64({1}, {1}))})[0];
  QCOMPARE(s.data<int64_t>()[0], big + 2);
  QCOMPARE(s.data<int64_t>()[1], -big + 5);
  Tensor mx = run_op("ReduceMax", {{"axes", std::vector<int64_t>{0}}}, {{x}})[0];
  QCOMPARE(mx.data<int64_t>()[0], big);
  Tensor p = run_op("ReduceProd", {{"axes", std::vector<int64_t>{1}}}, {{x}})[0];
  QCOMPARE(p.data<int64_t>()[0], big * 2);
  Tensor l1 = run_op("ReduceL1", {{"axes", std::vector<int64_t>{0}}}, {{x}})[0];
  QCOMPARE(l1.data<int64_t>()[0], 2 * big);
  // Integer mean truncates toward zero: (-7 + 0) / 2 = -3.
  Tensor m = run_op("ReduceMean", {}, {{i32({2}, {-7, 0})}})[0];
  QCOMPARE(m.data<int32_t>()[0], -3);
  // int8 and uint8 are allowed for Max/Min only.
  Tensor m8 = run_op("ReduceMin", {{"keepdims", int64_t{0}}}, {{u8({3}, {9, 200, 4})}})[0];
  QCOMPARE(int(m8.data<uint8_t>()[0]), 4);
}

void TestOpsElementwiseReduce::log_sum_exp_is_stable() {
  Tensor x = f32({2}, {1000.0f, 1000.0f});  // exp(1000) overflows even in double
  Tensor y = run1("ReduceLogSumExp", {{x}});
  QVERIFY(close(y.get_double(0), 1000.0 + std::log(2.0), 1e-7));
  Tensor z = run1("ReduceLogSumExp", {{f32({2}, {-1000.0f, -1000.0f})}});
  QVERIFY(close(z.get_double(0), -1000.0 + std::log(2.0), 1e-7));
}

void TestOpsElementwiseReduce::reduction_errors() {
  Tensor x = random_f32({2, 3}, 1);
  std::string msg = error_of([&] { run_op("ReduceMean", {{"axes", std::vector<int64_t>{2}}}, {{x}}); });
  QVERIFY2(contains(msg, "ReduceMean") && contains(msg, "axis 2") && contains(msg, "rank 2"), msg.c_str());
  msg = error_of([&] { run_op("ReduceMax", {{"axes", std::vector<int64_t>{-3}}}, {{x}}); });
  QVERIFY2(contains(msg, "ReduceMax") && contains(msg, "-3"), msg.c_str());
  msg = error_of([&] { run_op("ReduceMin", {{"axes", std::vector<int64_t>{1, -1}}}, {{x}}); });
  QVERIFY2(contains(msg, "ReduceMin") && contains(msg, "twice"), msg.c_str());
  msg = error_of([&] { run_op("ReduceL2", {{"keepdims", int64_t{2}}}, {{x}}); });
  QVERIFY2(contains(msg, "ReduceL2") && contains(msg, "keepdims"), msg.c_str());
  msg = error_of([&] { run_op("ReduceSum", {{"axes", std::vector<int64_t>{0}}}, {{x}}); });  // axes is an input
  QVERIFY2(contains(msg, "ReduceSum") && contains(msg, "axes"), msg.c_str());
  msg = error_of([&] { run1("ReduceProd", {{boolean({1}, {1})}}); });
  QVERIFY2(contains(msg, "ReduceProd") && contains(msg, "bool"), msg.c_str());
}

void TestOpsElementwiseReduce::argmax_argmin() {
  Tensor x = random_f32({2, 3, 4}, 21);
  for (int64_t axis : {1, -2}) {
    Tensor amax = run_op("ArgMax", {{"axis", axis}}, {{x}})[0];
    Tensor amin = run_op("ArgMin", {{"axis", axis}, {"keepdims", int64_t{0}}}, {{x}})[0];
    QCOMPARE(amax.dtype(), DataType::kInt64);
    QCOMPARE(amax.shape(), (Shape{2, 1, 4}));
    QCOMPARE(amin.shape(), (Shape{2, 4}));
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) {
        int best_max = 0, best_min = 0;
        for (int j = 1; j < 3; ++j) {
          float v = x.data<float>()[(i * 3 + j) * 4 + k];
          if (v > x.data<float>()[(i * 3 + best_max) * 4 + k]) best_max = j;
          if (v < x.data<float>()[(i * 3 + best_min) * 4 + k]) best_min = j;
        }
        QCOMPARE(amax.data<int64_t>()[i * 4 + k], int64_t{best_max});
        QCOMPARE(amin.data<int64_t>()[i * 4 + k], int64_t{best_min});
      }
  }
  // Default axis 0.
  Tensor d = run1("ArgMax", {{i64({3, 1}, {4, 9, 2})}});
  QCOMPARE(d.shape(), (Shape{1, 1}));
  QCOMPARE(d.data<int64_t>()[0], int64_t{1});
}

void TestOpsElementwiseReduce::argmax_select_last_index_and_nan() {
  Tensor ties = f32({5}, {1, 7, 3, 7, 1});
  QCOMPARE(run1("ArgMax", {{ties}}).data<int64_t>()[0], int64_t{1});
  QCOMPARE(run_op("ArgMax", {{"select_last_index", int64_t{1}}}, {{ties}})[0].data<int64_t>()[0], int64_t{3});
  QCOMPARE(run1("ArgMin", {{ties}}).data<int64_t>()[0], int64_t{0});
  QCOMPARE(run_op("ArgMin", {{"select_last_index", int64_t{1}}}, {{ties}})[0].data<int64_t>()[0], int64_t{4});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor with_nan = f32({4}, {1, nan, 5, nan});
  QCOMPARE(run1("ArgMax", {{with_nan}}).data<int64_t>()[0], int64_t{1});
  QCOMPARE(run1("ArgMin", {{with_nan}}).data<int64_t>()[0], int64_t{1});
  QCOMPARE(run_op("ArgMax", {{"select_last_index", int64_t{1}}}, {{with_nan}})[0].data<int64_t>()[0], int64_t{3});
  // Exact integer comparisons: values that are equal as doubles still order correctly.
  const int64_t big = int64_t{1} << 53;
  QCOMPARE(run1("ArgMax", {{i64({2}, {big + 1, big})}}).data<int64_t>()[0], int64_t{0});
}

void TestOpsElementwiseReduce::arg_errors() {
  std::string msg = error_of([] { run_op("ArgMax", {{"axis", int64_t{3}}}, {{random_f32({2, 3}, 1)}}); });
  QVERIFY2(contains(msg, "ArgMax") && contains(msg, "axis 3"), msg.c_str());
  msg = error_of([] { run_op("ArgMin", {{"axis", int64_t{1}}}, {{Tensor(DataType::kFloat32, {2, 0})}}); });
  QVERIFY2(contains(msg, "ArgMin") && contains(msg, "size 0"), msg.c_str());
  msg = error_of([] { run_op("ArgMax", {{"select_last_index", int64_t{2}}}, {{random_f32({2}, 1)}}); });
  QVERIFY2(contains(msg, "ArgMax") && contains(msg, "select_last_index"), msg.c_str());
}

QTEST_APPLESS_MAIN(TestOpsElementwiseReduce)
#include "test_ops_elementwise_reduce.moc"
