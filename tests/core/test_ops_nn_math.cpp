// MatMul, Gemm, the normalizations, the softmax family and Gelu, checked against loops and
// formulas written out here and against known constants.
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;

namespace {

// C[i] = A[i] · B[i] with explicit batch indices: A is batch_a × M × K, B is batch_b × K × N, and
// `a_of(i)`, `b_of(i)` say which batch item of each operand output item i uses.
template <class AOf, class BOf>
std::vector<double> batched_product(const Tensor& a, const Tensor& b, int64_t items, int64_t m, int64_t k, int64_t n,
                                    AOf a_of, BOf b_of) {
  std::vector<double> out;
  for (int64_t i = 0; i < items; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double s = 0;
        for (int64_t j = 0; j < k; ++j)
          s += a.get_double((a_of(i) * m + r) * k + j) * b.get_double((b_of(i) * k + j) * n + c);
        out.push_back(s);
      }
  return out;
}

Tensor i64(Shape shape, const std::vector<int64_t>& v) { return Tensor::from_int64s(std::move(shape), v); }

}  // namespace

class TestOpsNnMath : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matmul_broadcasts_batch_dims() {
    // A: [2,1,2,3], B: [3,3,4] → batch [2,3], each 2×3 · 3×4.
    const Tensor a = random_f32({2, 1, 2, 3}, 1), b = random_f32({3, 3, 4}, 2);
    const Tensor y = run1("MatMul", {}, {a, b});
    QCOMPARE(y.shape(), (Shape{2, 3, 2, 4}));
    const auto expected = batched_product(
        a, b, 6, 2, 3, 4, [](int64_t i) { return i / 3; }, [](int64_t i) { return i % 3; });
    QVERIFY(close(values(y), expected));
  }
  void matmul_vector_operands_drop_their_axis() {
    const Tensor v = random_f32({3}, 3), m = random_f32({2, 3, 4}, 4), w = random_f32({4}, 5);
    const Tensor dot = run1("MatMul", {}, {v, v});
    QCOMPARE(dot.shape(), Shape{});
    double s = 0;
    for (int64_t i = 0; i < 3; ++i) s += v.get_double(i) * v.get_double(i);
    QVERIFY(close(values(dot), {s}));
    const Tensor vm = run1("MatMul", {}, {v, m});
    QCOMPARE(vm.shape(), (Shape{2, 4}));
    QVERIFY(close(values(vm), batched_product(
                                  v, m, 2, 1, 3, 4, [](int64_t) { return 0; }, [](int64_t i) { return i; })));
    const Tensor mw = run1("MatMul", {}, {m, w});
    QCOMPARE(mw.shape(), (Shape{2, 3}));
    QVERIFY(close(values(mw), batched_product(
                                  m, w, 2, 3, 4, 1, [](int64_t i) { return i; }, [](int64_t) { return 0; })));
  }
  void matmul_int64_is_exact() {
    // 3037000499² = 9223372030926249001 needs 63 bits: a trip through double would round it.
    const Tensor a = i64({1, 2}, {3037000499, 1}), b = i64({2, 1}, {3037000499, -7});
    const Tensor y = run1("MatMul", {}, {a, b});
    QCOMPARE(y.dtype(), DataType::kInt64);
    QCOMPARE(y.data<int64_t>()[0], int64_t{9223372030926249001} - 7);
  }
  void matmul_errors() {
    QVERIFY(error_of("MatMul", {}, {random_f32({2, 3}, 1), random_f32({4, 5}, 2)})
                .contains("inner dimensions differ: A [2,3] has 3 columns, B [4,5] has 4 rows"));
    QVERIFY(error_of("MatMul", {}, {random_f32({2, 2, 3}, 1), random_f32({3, 3, 4}, 2)})
                .contains("batch dimensions do not broadcast"));
    QVERIFY(error_of("MatMul", {}, {random_f32({2, 3}, 1), random_f32({3, 4}, 2).cast(DataType::kFloat64)})
                .contains("B has dtype f64 but A has f32"));
    QVERIFY(error_of("MatMul", {},
                     {random_f32({2, 3}, 1).cast(DataType::kBool), random_f32({3, 4}, 2).cast(DataType::kBool)})
                .contains("dtype bool"));
  }
  void matmul_packed_reads_weights_in_column_panels() {
    // B [K=3, N=4] packed in panels of 2 columns: [N/2, K, 2], element (k, j) at [j / 2, k, j % 2].
    const Tensor a = random_f32({2, 2, 3}, 1), b = random_f32({3, 4}, 2);
    Tensor packed(DataType::kFloat32, {2, 3, 2});
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t j = 0; j < 4; ++j) packed.data<float>()[(j / 2 * 3 + k) * 2 + j % 2] = b.data<float>()[k * 4 + j];
    const Tensor y = run1("matmul_packed", {{"block", int64_t{2}}}, {a, packed});
    QCOMPARE(y.shape(), (Shape{2, 2, 4}));
    QVERIFY(close(values(y), batched_product(
                                 a, b, 2, 2, 3, 4, [](int64_t i) { return i; }, [](int64_t) { return 0; })));
    Graph g = single_node_graph("matmul_packed", {{"block", int64_t{2}}}, {a, packed}, 1);
    QCOMPARE(node_flops(g, g.nodes[0]), int64_t{2 * 2 * 2 * 4 * 3});
  }
  void matmul_packed_errors() {
    const Tensor a = random_f32({2, 3}, 1), packed = random_f32({2, 3, 2}, 2);
    QVERIFY(error_of("matmul_packed", {{"block", int64_t{4}}}, {a, packed}).contains("B must be [N/4, K, 4]"));
    QVERIFY(error_of("matmul_packed", {{"block", int64_t{2}}}, {random_f32({2, 5}, 1), packed})
                .contains("A's columns differ from B's rows (A [2,5], B [2,3,2])"));
    QVERIFY(error_of("matmul_packed", {{"block", int64_t{2}}}, {random_f32({3}, 1), packed}).contains("rank 2 or more"));
  }
  void gemm_attributes_and_bias_broadcast() {
    const Tensor a = random_f32({3, 4}, 1), b = random_f32({5, 3}, 2);  // transA: A is K×M; transB: B is N×K
    const Tensor c_row = random_f32({5}, 3), c_col = random_f32({4, 1}, 4), c_scalar = f32({}, {2.5f});
    for (const Tensor& c : {c_row, c_col, c_scalar}) {
      AttrMap attrs{{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5}, {"beta", -2.0}};
      const Tensor y = run1("Gemm", attrs, {a, b, c});
      QCOMPARE(y.shape(), (Shape{4, 5}));
      std::vector<double> expected;
      for (int64_t m = 0; m < 4; ++m)
        for (int64_t n = 0; n < 5; ++n) {
          double s = 0;
          for (int64_t k = 0; k < 3; ++k) s += a.get_double(k * 4 + m) * b.get_double(n * 3 + k);
          const int64_t ci = c.numel() == 1 ? 0 : c.shape().size() == 1 ? n : m;
          expected.push_back(0.5 * s - 2.0 * c.get_double(ci));
        }
      QVERIFY(close(values(y), expected));
    }
    // Without C, plain A·B.
    const Tensor p = random_f32({2, 3}, 5), q = random_f32({3, 2}, 6);
    QVERIFY(close(values(run1("Gemm", {}, {p, q, Tensor()})), values(run1("MatMul", {}, {p, q}))));
  }
  void gemm_integer_types_stay_exact() {
    // (2^40 + 1)·3 + 5 exceeds float precision but not int64's.
    const int64_t big = (int64_t{1} << 40) + 1;
    const Tensor a = i64({1, 2}, {big, 2}), b = i64({2, 1}, {3, -4}), c = i64({1}, {5});
    QCOMPARE(run1("Gemm", {}, {a, b, c}).data<int64_t>()[0], big * 3 - 8 + 5);
    const std::vector<int32_t> av = {7, 2}, bv = {3, -4};
    const Tensor a32 = Tensor::from_values<int32_t>({1, 2}, av), b32 = Tensor::from_values<int32_t>({2, 1}, bv);
    const Tensor y32 = run1("Gemm", {{"alpha", 2.0}, {"beta", 0.0}}, {a32, b32});
    QCOMPARE(y32.dtype(), DataType::kInt32);
    QCOMPARE(y32.data<int32_t>()[0], 2 * (7 * 3 - 2 * 4));
  }
  void softmax_in_half_precision() {
    const Tensor x = f32({4}, {0.5f, -1.0f, 2.0f, 0.0f});
    const Tensor y = run1("Softmax", {}, {x.cast(DataType::kFloat16)});
    QCOMPARE(y.dtype(), DataType::kFloat16);
    QVERIFY(close(values(y), values(run1("Softmax", {}, {x})), 1e-3));
  }
  void gemm_errors() {
    const Tensor a = random_f32({2, 3}, 1), b = random_f32({3, 4}, 2);
    QVERIFY(error_of("Gemm", {}, {a, b, random_f32({3}, 3)}).contains("C [3] does not broadcast to the output [2,4]"));
    QVERIFY(error_of("Gemm", {{"transB", int64_t{1}}}, {a, b}).contains("inner dimensions differ"));
    QVERIFY(error_of("Gemm", {}, {random_f32({2, 2, 3}, 1), b}).contains("must be 2-D"));
    QVERIFY(error_of("Gemm", {{"transA", int64_t{2}}}, {a, b}).contains("transA"));
  }
  void matmul_and_gemm_costs() {
    Graph g = single_node_graph("MatMul", {}, {random_f32({2, 3, 4}, 1), random_f32({4, 5}, 2)}, 1);
    QCOMPARE(node_flops(g, g.nodes[0]), int64_t{2 * 2 * 3 * 5 * 4});
    Graph h = single_node_graph("Gemm", {}, {random_f32({3, 4}, 1), random_f32({4, 5}, 2), random_f32({5}, 3)}, 1);
    QCOMPARE(node_flops(h, h.nodes[0]), int64_t{2 * 3 * 5 * 4 + 3 * 5});
    QCOMPARE(get_op("MatMul").pattern, PatternKind::kOutEWiseFusable);
    QCOMPARE(get_op("Gemm").pattern, PatternKind::kOutEWiseFusable);
  }

  void batch_normalization_matches_the_formula() {
    const Tensor x = random_f32({2, 3, 2, 2}, 1);
    const Tensor scale = f32({3}, {1.0f, 2.0f, -0.5f}), bias = f32({3}, {0.0f, 1.0f, 3.0f});
    const Tensor mean = f32({3}, {0.1f, -0.2f, 0.3f}), var = f32({3}, {1.0f, 0.25f, 4.0f});
    const Tensor y = run1("BatchNormalization", {{"epsilon", 0.01}}, {x, scale, bias, mean, var});
    std::vector<double> expected;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = (i / 4) % 3;
      expected.push_back((x.get_double(i) - mean.get_double(c)) / std::sqrt(var.get_double(c) + 0.01f) *
                             scale.get_double(c) +
                         bias.get_double(c));
    }
    QVERIFY(close(values(y), expected));
    QCOMPARE(get_op("BatchNormalization").pattern, PatternKind::kBroadcast);
  }
  void batch_normalization_rejects_training_and_bad_shapes() {
    const Tensor x = random_f32({1, 2, 3}, 1), v = f32({2}, {1, 1}), bad = f32({3}, {1, 1, 1});
    QVERIFY(error_of("BatchNormalization", {{"training_mode", int64_t{1}}}, {x, v, v, v, v})
                .contains("training_mode=1 is not supported"));
    QVERIFY(error_of("BatchNormalization", {}, {x, v, v, v, v}, 3).contains("running_mean"));
    QVERIFY(error_of("BatchNormalization", {}, {x, v, bad, v, v}).contains("B has shape [3]; expected [2]"));
  }
  void instance_normalization_normalizes_each_plane() {
    const Tensor x = random_f32({2, 3, 4, 5}, 2);
    const Tensor scale = f32({3}, {1.0f, 2.0f, 0.5f}), bias = f32({3}, {0.0f, -1.0f, 4.0f});
    const Tensor y = run1("InstanceNormalization", {{"epsilon", 1e-3}}, {x, scale, bias});
    std::vector<double> expected;
    for (int64_t p = 0; p < 6; ++p) {
      double s = 0, sq = 0;
      for (int64_t i = 0; i < 20; ++i) s += x.get_double(p * 20 + i);
      const double mean = s / 20;
      for (int64_t i = 0; i < 20; ++i) sq += std::pow(x.get_double(p * 20 + i) - mean, 2);
      const double sd = std::sqrt(sq / 20 + 1e-3f);
      for (int64_t i = 0; i < 20; ++i)
        expected.push_back((x.get_double(p * 20 + i) - mean) / sd * scale.get_double(p % 3) + bias.get_double(p % 3));
    }
    QVERIFY(close(values(y), expected));
    QVERIFY(error_of("InstanceNormalization", {}, {x, f32({2}, {1, 1}), bias}).contains("scale has shape [2]"));
  }
  void layer_normalization_with_statistics_outputs() {
    const Tensor x = random_f32({2, 3, 4}, 3), scale = random_f32({3, 4}, 4), bias = random_f32({4}, 5);
    const auto out = run_op("LayerNormalization", {{"axis", int64_t{-2}}}, {x, scale, bias}, 3);
    QCOMPARE(out[1].shape(), (Shape{2, 1, 1}));
    QCOMPARE(out[2].dtype(), DataType::kFloat32);
    std::vector<double> y, means, inv;
    for (int64_t r = 0; r < 2; ++r) {
      double s = 0, sq = 0;
      for (int64_t i = 0; i < 12; ++i) s += x.get_double(r * 12 + i);
      const double mean = s / 12;
      for (int64_t i = 0; i < 12; ++i) sq += std::pow(x.get_double(r * 12 + i) - mean, 2);
      const double is = 1 / std::sqrt(sq / 12 + 1e-5f);
      means.push_back(mean);
      inv.push_back(is);
      for (int64_t i = 0; i < 12; ++i)
        y.push_back((x.get_double(r * 12 + i) - mean) * is * scale.get_double(i) + bias.get_double(i % 4));
    }
    QVERIFY(close(values(out[0]), y));
    QVERIFY(close(values(out[1]), means));
    QVERIFY(close(values(out[2]), inv));
    // Without B, and on the last axis (the default).
    const Tensor y2 = run1("LayerNormalization", {}, {x, f32({4}, {1, 1, 1, 1}), Tensor()});
    for (int64_t r = 0; r < 6; ++r) {
      double s = 0;
      for (int64_t i = 0; i < 4; ++i) s += y2.get_double(r * 4 + i);
      QVERIFY(std::abs(s) < 1e-5);
    }
  }
  void layer_normalization_errors() {
    const Tensor x = random_f32({2, 3}, 1), s = f32({3}, {1, 1, 1});
    QVERIFY(error_of("LayerNormalization", {{"axis", int64_t{2}}}, {x, s}).contains("axis 2 is out of range"));
    QVERIFY(
        error_of("LayerNormalization", {}, {x, f32({2}, {1, 1})}).contains("Scale [2] does not broadcast to X [2,3]"));
    QVERIFY(error_of("LayerNormalization", {{"stash_type", int64_t{7}}}, {x, s}).contains("not a floating-point type"));
    QCOMPARE(get_op("LayerNormalization").pattern, PatternKind::kOpaque);
    QCOMPARE(get_op("InstanceNormalization").pattern, PatternKind::kOpaque);
  }

  void lrn_sums_squares_over_neighbouring_channels() {
    const Tensor x = random_f32({2, 5, 3}, 8);
    const double alpha = 0.02, beta = 0.6, bias = 1.5;
    for (int64_t size : {1, 2, 3, 4}) {
      AttrMap attrs{{"alpha", alpha}, {"beta", beta}, {"bias", bias}, {"size", size}};
      const Tensor y = run1("LRN", attrs, {x});
      std::vector<double> expected;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 5; ++c)
          for (int64_t i = 0; i < 3; ++i) {
            // Channels c - floor((size-1)/2) … c + ceil((size-1)/2) that exist.
            double sq = 0;
            for (int64_t k = c - (size - 1) / 2; k <= c + size / 2; ++k)
              if (k >= 0 && k < 5) sq += std::pow(x.get_double((n * 5 + k) * 3 + i), 2);
            expected.push_back(x.get_double((n * 5 + c) * 3 + i) /
                               std::pow(float(bias) + float(alpha) / size * sq, float(beta)));
          }
      QVERIFY(close(values(y), expected));
    }
    QVERIFY(error_of("LRN", {}, {x}).contains("missing required attribute 'size'"));
  }
  void mean_variance_normalization_over_axes() {
    const Tensor x = random_f32({2, 3, 4}, 9);
    const Tensor y = run1("MeanVarianceNormalization", ints("axes", {0, 2}), {x});
    // Per channel c: statistics over the 2×4 elements with that c.
    for (int64_t c = 0; c < 3; ++c) {
      double s = 0, sq = 0;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 4; ++i) s += x.get_double((n * 3 + c) * 4 + i);
      const double mean = s / 8;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 4; ++i) sq += std::pow(x.get_double((n * 3 + c) * 4 + i) - mean, 2);
      const double sd = std::sqrt(sq / 8);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 4; ++i) {
          const int64_t at = (n * 3 + c) * 4 + i;
          QVERIFY(std::abs(y.get_double(at) - (x.get_double(at) - mean) / (sd + 1e-9)) < 1e-5);
        }
    }
    QVERIFY(error_of("MeanVarianceNormalization", ints("axes", {0, 3}), {x}).contains("axis 3 is out of range"));
    QVERIFY(error_of("MeanVarianceNormalization", ints("axes", {1, -2}), {x}).contains("listed twice"));
  }
  void softmax_rows_sum_to_one_and_match_exp_over_sum() {
    const Tensor x = random_f32({2, 3, 4}, 7);
    for (int64_t axis : {0, 1, 2, -1}) {
      const Tensor y = run1("Softmax", {{"axis", axis}}, {x});
      const int64_t a = axis < 0 ? axis + 3 : axis;
      const Shape& s = x.shape();
      const Shape strides = contiguous_strides(s);
      for (int64_t i = 0; i < x.numel(); ++i) {
        // The vector along `a` that element i belongs to.
        const int64_t pos = (i / strides[a]) % s[a], base = i - pos * strides[a];
        double sum = 0, ysum = 0;
        for (int64_t k = 0; k < s[a]; ++k) {
          sum += std::exp(x.get_double(base + k * strides[a]));
          ysum += y.get_double(base + k * strides[a]);
        }
        QVERIFY(std::abs(ysum - 1.0) < 1e-6);
        QVERIFY(std::abs(y.get_double(i) - std::exp(x.get_double(i)) / sum) < 1e-6);
      }
    }
  }
  void softmax_and_log_softmax_survive_large_inputs() {
    const Tensor x = f32({1, 3}, {1000.0f, 1001.0f, 1002.0f});
    const double e = std::exp(1.0);
    const double z = 1 + e + e * e;
    QVERIFY(close(values(run1("Softmax", {}, {x})), {1 / z, e / z, e * e / z}));
    QVERIFY(close(values(run1("LogSoftmax", {}, {x})), {-std::log(z), 1 - std::log(z), 2 - std::log(z)}));
  }
  void hardmax_marks_the_first_maximum() {
    const Tensor x = f32({2, 4}, {3, 10, 1, 10, -1, -2, -3, -4});
    QCOMPARE(values(run1("Hardmax", {}, {x})), (std::vector<double>{0, 1, 0, 0, 1, 0, 0, 0}));
    QCOMPARE(values(run1("Hardmax", {{"axis", int64_t{0}}}, {x})), (std::vector<double>{1, 1, 1, 1, 0, 0, 0, 0}));
  }
  void softmax_errors() {
    QVERIFY(error_of("Softmax", {{"axis", int64_t{3}}}, {random_f32({2, 3}, 1)}).contains("axis 3 is out of range"));
    QVERIFY(error_of("LogSoftmax", {}, {random_f32({2, 3}, 1).cast(DataType::kInt32)}).contains("dtype i32"));
    QCOMPARE(get_op("Softmax").pattern, PatternKind::kOpaque);
  }

  void gelu_known_values() {
    // x·Φ(x): Φ(1) = 0.8413447460685429, Φ(-1) = 1 - Φ(1), Φ(0) = 1/2.
    const Tensor x = f32({3}, {1.0f, -1.0f, 0.0f});
    QVERIFY(close(values(run1("Gelu", {}, {x})), {0.8413447460685429, -0.15865525393145707, 0.0}, 1e-7));
    // tanh form at 1: 0.5·(1 + tanh(√(2/π)·1.044715)).
    const double t = 0.5 * (1 + std::tanh(std::sqrt(2 / 3.141592653589793) * 1.044715));
    const Tensor y = run1("Gelu", {{"approximate", std::string("tanh")}}, {x});
    QVERIFY(close(values(y), {t, -(1 - t), 0.0}, 1e-7));
    QVERIFY(error_of("Gelu", {{"approximate", std::string("fast")}}, {x}).contains("approximate"));
    QCOMPARE(get_op("Gelu").pattern, PatternKind::kElemWise);
  }
};

QTEST_APPLESS_MAIN(TestOpsNnMath)
#include "test_ops_nn_math.moc"
