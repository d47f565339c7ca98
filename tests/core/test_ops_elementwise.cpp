// Element-wise ops: broadcasting, dtype rules, integer exactness, activations, comparisons,
// Where, Clip, Cast, PRelu, Dropout. Expected values come from explicit index arithmetic or from
// the textbook formula, never from the kernels themselves.
#include <QtTest>
#include <cmath>
#include <limits>

#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

class TestOpsElementwise : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void add_broadcasts_rank_mismatch();
  void binary_with_scalar_operand();
  void broadcast_both_sides();
  void non_broadcastable_shapes_are_rejected();
  void forbidden_dtypes_are_rejected();
  void mismatched_dtypes_are_rejected();
  void int64_arithmetic_is_exact();
  void int_division_truncates_toward_zero();
  void int_division_by_zero_is_an_error();
  void narrow_ints_wrap();
  void pow_exact_and_mixed_types();
  void variadic_max_min_sum_mean();
  void unary_activations_match_formulas();
  void round_halves_to_even();
  void integer_unary_ops();
  void comparisons_give_bool();
  void logic_ops();
  void where_broadcasts_three_ways();
  void clip_optional_bounds();
  void clip_errors();
  void cast_truncates_and_to_bool();
  void cast_like();
  void prelu_slope_broadcasts();
  void dropout_inference_and_training_rules();
  void identity_copies();
  void half_precision_types();
  void pattern_kinds_and_attrs();
  void flops_count_outputs();
};

void TestOpsElementwise::add_broadcasts_rank_mismatch() {
  // a: [2,3,4], b: [3,1] → b is read as [1,3,1].
  Tensor a = random_f32({2, 3, 4}, 1), b = random_f32({3, 1}, 2);
  Tensor y = run1("Add", {{a}, {b}});
  QCOMPARE(y.shape(), (Shape{2, 3, 4}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        QCOMPARE(y.data<float>()[(i * 3 + j) * 4 + k], a.data<float>()[(i * 3 + j) * 4 + k] + b.data<float>()[j]);
}

void TestOpsElementwise::binary_with_scalar_operand() {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  Tensor s = Tensor::scalar<float>(10.0f);
  Tensor y = run1("Sub", {{s}, {x}});
  QCOMPARE(y.shape(), (Shape{2, 2}));
  QCOMPARE(y.data<float>()[0], 9.0f);
  QCOMPARE(y.data<float>()[3], 6.0f);
  // Scalar with scalar stays rank 0.
  Tensor z = run1("Mul", {{s}, {Tensor::scalar<float>(0.5f)}});
  QCOMPARE(z.shape(), Shape{});
  QCOMPARE(z.data<float>()[0], 5.0f);
}

void TestOpsElementwise::broadcast_both_sides() {
  // [4,1] * [1,5] → [4,5]: an outer product.
  Tensor a = f64({4, 1}, {1, 2, 3, 4}), b = f64({1, 5}, {1, 10, 100, 1000, 10000});
  Tensor y = run1("Mul", {{a}, {b}});
  QCOMPARE(y.shape(), (Shape{4, 5}));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) QCOMPARE(y.data<double>()[i * 5 + j], (i + 1) * std::pow(10.0, j));
  // A zero-sized dimension broadcasts against 1 and yields an empty result.
  Tensor e = run1("Add", {{Tensor(DataType::kFloat32, {0, 3})}, {f32({1, 3}, {1, 2, 3})}});
  QCOMPARE(e.shape(), (Shape{0, 3}));
}

void TestOpsElementwise::non_broadcastable_shapes_are_rejected() {
  std::string msg = error_of([] { run1("Add", {{random_f32({2, 3}, 1)}, {random_f32({4, 3}, 2)}}); });
  QVERIFY2(contains(msg, "Add") && contains(msg, "[2,3]") && contains(msg, "[4,3]"), msg.c_str());
  msg = error_of([] { run1("Max", {{random_f32({3}, 1)}, {random_f32({3}, 2)}, {random_f32({2}, 3)}}); });
  QVERIFY2(contains(msg, "Max") && contains(msg, "broadcast"), msg.c_str());
  msg = error_of([] { run1("Where", {{boolean({2}, {1, 0})}, {random_f32({3}, 1)}, {random_f32({3}, 2)}}); });
  QVERIFY2(contains(msg, "Where") && contains(msg, "broadcast"), msg.c_str());
}

void TestOpsElementwise::forbidden_dtypes_are_rejected() {
  struct Case {
    const char* op;
    std::vector<Operand> in;
    const char* dtype;
  };
  std::vector<Case> cases = {
      {"Sigmoid", {{i32({2}, {1, 2})}}, "i32"},
      {"Add", {{boolean({2}, {1, 0})}, {boolean({2}, {1, 1})}}, "bool"},
      {"Sum", {{i64({1}, {1})}, {i64({1}, {2})}}, "i64"},
      {"Neg", {{u8({1}, {1})}}, "u8"},
      {"Softplus", {{Tensor(DataType::kBFloat16, {2})}}, "bf16"},
      {"Less", {{boolean({1}, {1})}, {boolean({1}, {0})}}, "bool"},
      {"And", {{f32({1}, {1})}, {f32({1}, {0})}}, "f32"},
      {"Not", {{i64({1}, {1})}}, "i64"},
      {"Pow", {{i8({1}, {2})}, {i8({1}, {2})}}, "i8"},
      {"Where", {{i64({1}, {1})}, {f32({1}, {1})}, {f32({1}, {2})}}, "i64"},
      {"Dropout", {{i64({1}, {1})}}, "i64"},
      {"ReduceMean", {{i8({2}, {1, 2})}}, "i8"},
      {"ArgMax", {{boolean({2}, {1, 0})}}, "bool"},
  };
  for (const Case& c : cases) {
    std::string msg = error_of([&] { run1(c.op, c.in); });
    QVERIFY2(contains(msg, c.op) && contains(msg, c.dtype), (std::string(c.op) + ": " + msg).c_str());
  }
}

void TestOpsElementwise::mismatched_dtypes_are_rejected() {
  std::string msg = error_of([] { run1("Add", {{f32({1}, {1})}, {i64({1}, {1})}}); });
  QVERIFY2(contains(msg, "Add") && contains(msg, "f32") && contains(msg, "i64"), msg.c_str());
  msg = error_of([] { run1("Mean", {{f32({1}, {1})}, {f64({1}, {1})}}); });
  QVERIFY2(contains(msg, "Mean") && contains(msg, "f64"), msg.c_str());
  msg = error_of([] { run1("Where", {{boolean({1}, {1})}, {f32({1}, {1})}, {f64({1}, {2})}}); });
  QVERIFY2(contains(msg, "Where"), msg.c_str());
}

void TestOpsElementwise::int64_arithmetic_is_exact() {
  // 2^53 + 1 is not representable in double: any detour through double would lose the +1.
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor a = i64({3}, {big, big, std::numeric_limits<int64_t>::max() - 1});
  Tensor b = i64({3}, {2, 0, 1});
  QCOMPARE(run1("Add", {{a}, {b}}).data<int64_t>()[0], big + 2);
  QCOMPARE(run1("Add", {{a}, {b}}).data<int64_t>()[2], std::numeric_limits<int64_t>::max());
  QCOMPARE(run1("Sub", {{a}, {b}}).data<int64_t>()[1], big);
  QCOMPARE(run1("Mul", {{i64({1}, {big})}, {i64({1}, {3})}}).data<int64_t>()[0], big * 3);
  QCOMPARE(run1("Div", {{i64({1}, {big * 3})}, {i64({1}, {3})}}).data<int64_t>()[0], big);
  QCOMPARE(run1("Max", {{i64({1}, {big})}, {i64({1}, {big - 1})}}).data<int64_t>()[0], big);
  QCOMPARE(run1("Equal", {{i64({1}, {big})}, {i64({1}, {big - 1})}}).data<bool>()[0], false);
  QCOMPARE(run1("Less", {{i64({1}, {big - 1})}, {i64({1}, {big})}}).data<bool>()[0], true);
}

void TestOpsElementwise::int_division_truncates_toward_zero() {
  Tensor y = run1("Div", {{i64({4}, {7, -7, 7, -7})}, {i64({4}, {2, 2, -2, -2})}});
  const int64_t expected[] = {3, -3, -3, 3};
  for (int i = 0; i < 4; ++i) QCOMPARE(y.data<int64_t>()[i], expected[i]);
  Tensor z = run1("Div", {{i32({2}, {-9, 9})}, {i32({2}, {4, -4})}});
  QCOMPARE(z.data<int32_t>()[0], -2);
  QCOMPARE(z.data<int32_t>()[1], -2);
  Tensor u = run1("Div", {{u8({2}, {255, 7})}, {u8({2}, {2, 8})}});
  QCOMPARE(int(u.data<uint8_t>()[0]), 127);
  QCOMPARE(int(u.data<uint8_t>()[1]), 0);
}

void TestOpsElementwise::int_division_by_zero_is_an_error() {
  std::string msg = error_of([] { run1("Div", {{i64({2}, {1, 2})}, {i64({2}, {1, 0})}}); });
  QVERIFY2(contains(msg, "Div") && contains(msg, "zero"), msg.c_str());
  // Floats follow IEEE: 1/0 = inf.
  QVERIFY(std::isinf(run1("Div", {{f32({1}, {1})}, {f32({1}, {0})}}).data<float>()[0]));
}

void TestOpsElementwise::narrow_ints_wrap() {
  // Like the narrow type's own arithmetic: 127 + 1 = -128 in int8, 3 - 5 = 254 in uint8.
  QCOMPARE(int(run1("Add", {{i8({1}, {127})}, {i8({1}, {1})}}).data<int8_t>()[0]), -128);
  QCOMPARE(int(run1("Sub", {{u8({1}, {3})}, {u8({1}, {5})}}).data<uint8_t>()[0]), 254);
  QCOMPARE(int(run1("Mul", {{u8({1}, {16})}, {u8({1}, {17})}}).data<uint8_t>()[0]), (16 * 17) % 256);
}

void TestOpsElementwise::pow_exact_and_mixed_types() {
  // 3^39 = 4052555153018976267 needs all 62 bits; compute it here by plain multiplication.
  int64_t expected = 1;
  for (int k = 0; k < 39; ++k) expected *= 3;
  Tensor y = run1("Pow", {{i64({2}, {3, -2})}, {i64({2}, {39, 5})}});
  QCOMPARE(y.data<int64_t>()[0], expected);
  QCOMPARE(y.data<int64_t>()[1], int64_t{-32});
  // Negative integer exponents: 1/a^b truncated.
  Tensor n = run1("Pow", {{i64({3}, {2, 1, -1})}, {i64({3}, {-1, -5, -3})}});
  QCOMPARE(n.data<int64_t>()[0], int64_t{0});
  QCOMPARE(n.data<int64_t>()[1], int64_t{1});
  QCOMPARE(n.data<int64_t>()[2], int64_t{-1});
  // Float base, int64 exponent (broadcast): output keeps the base's dtype.
  Tensor f = run1("Pow", {{f32({3}, {2, 3, 0.5f})}, {Tensor::scalar<int64_t>(3)}});
  QCOMPARE(f.dtype(), DataType::kFloat32);
  QCOMPARE(f.data<float>()[0], 8.0f);
  QCOMPARE(f.data<float>()[1], 27.0f);
  QCOMPARE(f.data<float>()[2], 0.125f);
  // Int base, float exponent: the real power truncated toward zero, type of the base.
  Tensor t = run1("Pow", {{i32({3}, {2, 10, -8})}, {f32({3}, {0.5f, 1.5f, 1.0f / 3.0f})}});
  QCOMPARE(t.dtype(), DataType::kInt32);
  QCOMPARE(t.data<int32_t>()[0], 1);   // 1.414...
  QCOMPARE(t.data<int32_t>()[1], 31);  // 31.62...
  QCOMPARE(t.data<int32_t>()[2], 0);   // (-8)^(1/3) is NaN in real pow → 0
  std::string msg = error_of([] { run1("Pow", {{i64({1}, {0})}, {i64({1}, {-1})}}); });
  QVERIFY2(contains(msg, "Pow"), msg.c_str());
}

void TestOpsElementwise::variadic_max_min_sum_mean() {
  Tensor a = f32({2, 3}, {1, 5, 3, -1, -5, 9}), b = f32({3}, {2, 2, 2}), c = Tensor::scalar<float>(0.0f);
  Tensor mx = run1("Max", {{a}, {b}, {c}});
  Tensor mn = run1("Min", {{a}, {b}, {c}});
  Tensor sm = run1("Sum", {{a}, {b}, {c}});
  Tensor me = run1("Mean", {{a}, {b}, {c}});
  QCOMPARE(mx.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) {
    float av = a.data<float>()[i], bv = 2.0f;
    QCOMPARE(mx.data<float>()[i], std::max({av, bv, 0.0f}));
    QCOMPARE(mn.data<float>()[i], std::min({av, bv, 0.0f}));
    QCOMPARE(sm.data<float>()[i], av + bv);
    QCOMPARE(me.data<float>()[i], (av + bv) / 3.0f);
  }
  // One input: a copy. NaN wins in Max/Min.
  QCOMPARE(run1("Max", {{a}}).data<float>()[5], 9.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  QVERIFY(std::isnan(run1("Max", {{f32({1}, {1})}, {f32({1}, {nan})}}).data<float>()[0]));
  QVERIFY(std::isnan(run1("Min", {{f32({1}, {nan})}, {f32({1}, {1})}}).data<float>()[0]));
  // Integer Max/Min are exact.
  Tensor im = run1("Min", {{i64({2}, {-4, 7})}, {i64({1}, {3})}});
  QCOMPARE(im.data<int64_t>()[0], int64_t{-4});
  QCOMPARE(im.data<int64_t>()[1], int64_t{3});
}

void TestOpsElementwise::unary_activations_match_formulas() {
  Tensor x = random_f32({64}, 7, -6.0f, 6.0f);
  const float* px = x.data<float>();
  auto check = [&](const char* op, const AttrMap& attrs, auto formula) {
    Tensor y = run_op(op, attrs, {{x}})[0];
    QCOMPARE(y.shape(), x.shape());
    for (int i = 0; i < 64; ++i) {
      double expected = formula(static_cast<double>(px[i]));
      double got = y.data<float>()[i];
      if (std::fabs(got - expected) > 1e-6 * std::max(1.0, std::fabs(expected)))
        QFAIL(qPrintable(QString("%1(%2) = %3, expected %4").arg(op).arg(px[i]).arg(got).arg(expected)));
    }
  };
  check("Relu", {}, [](double v) { return v > 0 ? v : 0; });
  check("LeakyRelu", {{"alpha", 0.1}}, [](double v) { return v >= 0 ? v : 0.1 * v; });
  check("LeakyRelu", {}, [](double v) { return v >= 0 ? v : 0.01 * v; });
  check("Sigmoid", {}, [](double v) { return 1 / (1 + std::exp(-v)); });
  check("Tanh", {}, [](double v) { return (std::exp(2 * v) - 1) / (std::exp(2 * v) + 1); });
  check("Exp", {}, [](double v) { return std::exp(v); });
  check("Softplus", {}, [](double v) { return std::log(1 + std::exp(v)); });
  check("Softsign", {}, [](double v) { return v / (1 + std::fabs(v)); });
  check("Elu", {{"alpha", 2.0}}, [](double v) { return v > 0 ? v : 2 * (std::exp(v) - 1); });
  check("Celu", {{"alpha", 2.0}}, [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); });
  check("Selu", {}, [](double v) { return 1.0507009873554805 * (v > 0 ? v : 1.6732632423543772 * (std::exp(v) - 1)); });
  check("HardSigmoid", {}, [](double v) { return std::clamp(0.2 * v + 0.5, 0.0, 1.0); });
  check("HardSigmoid", {{"alpha", 0.5}, {"beta", 0.25}}, [](double v) { return std::clamp(0.5 * v + 0.25, 0.0, 1.0); });
  check("HardSwish", {}, [](double v) { return v * std::clamp((v + 3) / 6, 0.0, 1.0); });
  check("Abs", {}, [](double v) { return v < 0 ? -v : v; });
  check("Neg", {}, [](double v) { return -v; });
  check("Floor", {}, [](double v) { return std::floor(v); });
  check("Ceil", {}, [](double v) { return -std::floor(-v); });
  check("Sign", {}, [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); });
  check("Erf", {}, [](double v) { return 1 - std::erfc(v); });
  check("Reciprocal", {}, [](double v) { return 1 / v; });
  Tensor pos = run1("Abs", {{x}});
  Tensor sq = run1("Sqrt", {{pos}}), lg = run1("Log", {{pos}});
  for (int i = 0; i < 64; ++i) {
    QVERIFY(std::fabs(sq.data<float>()[i] * sq.data<float>()[i] - std::fabs(px[i])) < 1e-5f);
    QVERIFY(std::fabs(std::exp(lg.data<float>()[i]) - std::fabs(px[i])) < 1e-5f * std::max(1.0f, std::fabs(px[i])));
  }
  // Large arguments must not overflow: sigmoid(-1000) = 0, softplus(1000) = 1000.
  Tensor ext = f32({2}, {-1000.0f, 1000.0f});
  QCOMPARE(run1("Sigmoid", {{ext}}).data<float>()[0], 0.0f);
  QCOMPARE(run1("Softplus", {{ext}}).data<float>()[1], 1000.0f);
  std::string msg = error_of([&] { run_op("LeakyRelu", {{"beta", 1.0}}, {{x}}); });
  QVERIFY2(contains(msg, "LeakyRelu") && contains(msg, "beta"), msg.c_str());
}

void TestOpsElementwise::round_halves_to_even() {
  Tensor y = run1("Round", {{f32({8}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4f, -2.6f, 3.5f})}});
  const float expected[] = {0, 2, 2, -0, -2, 2, -3, 4};
  for (int i = 0; i < 8; ++i) QCOMPARE(y.data<float>()[i], expected[i]);
}

void TestOpsElementwise::integer_unary_ops() {
  Tensor x = i64({4}, {-5, 0, 7, std::numeric_limits<int64_t>::min() + 1});
  Tensor a = run1("Abs", {{x}}), n = run1("Neg", {{x}}), s = run1("Sign", {{x}}), r = run1("Relu", {{x}});
  const int64_t abs_expected[] = {5, 0, 7, std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < 4; ++i) {
    QCOMPARE(a.data<int64_t>()[i], abs_expected[i]);
    QCOMPARE(n.data<int64_t>()[i], int64_t{0} - x.data<int64_t>()[i]);
    QCOMPARE(s.data<int64_t>()[i], int64_t{x.data<int64_t>()[i] > 0} - int64_t{x.data<int64_t>()[i] < 0});
    QCOMPARE(r.data<int64_t>()[i], std::max<int64_t>(x.data<int64_t>()[i], 0));
  }
  QCOMPARE(int(run1("Neg", {{i8({1}, {-128})}}).data<int8_t>()[0]), -128);  // wraps like int8
  QCOMPARE(int(run1("Abs", {{u8({1}, {200})}}).data<uint8_t>()[0]), 200);
}

void TestOpsElementwise::comparisons_give_bool() {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), b = f32({3}, {2, 2, 7});
  struct Case {
    const char* op;
    bool (*f)(float, float);
  };
  const Case cases[] = {{"Equal", [](float x, float y) { return x == y; }},
                        {"Less", [](float x, float y) { return x < y; }},
                        {"Greater", [](float x, float y) { return x > y; }},
                        {"LessOrEqual", [](float x, float y) { return x <= y; }},
                        {"GreaterOrEqual", [](float x, float y) { return x >= y; }}};
  for (const Case& c : cases) {
    Tensor y = run1(c.op, {{a}, {b}});
    QCOMPARE(y.dtype(), DataType::kBool);
    QCOMPARE(y.shape(), (Shape{2, 3}));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        QVERIFY2(y.data<bool>()[i * 3 + j] == c.f(a.data<float>()[i * 3 + j], b.data<float>()[j]), c.op);
  }
  Tensor eb = run1("Equal", {{boolean({3}, {1, 0, 1})}, {boolean({1}, {1})}});
  QCOMPARE(eb.data<bool>()[0], true);
  QCOMPARE(eb.data<bool>()[1], false);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  QCOMPARE(run1("Equal", {{f32({1}, {nan})}, {f32({1}, {nan})}}).data<bool>()[0], false);
}

void TestOpsElementwise::logic_ops() {
  // Truth table via broadcasting: a [2,1] against b [1,2].
  Tensor a = boolean({2, 1}, {0, 1}), b = boolean({1, 2}, {0, 1});
  Tensor andy = run1("And", {{a}, {b}}), ory = run1("Or", {{a}, {b}}), xory = run1("Xor", {{a}, {b}});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      QCOMPARE(andy.data<bool>()[i * 2 + j], bool(i) && bool(j));
      QCOMPARE(ory.data<bool>()[i * 2 + j], bool(i) || bool(j));
      QCOMPARE(xory.data<bool>()[i * 2 + j], bool(i) != bool(j));
    }
  Tensor n = run1("Not", {{boolean({2}, {1, 0})}});
  QCOMPARE(n.dtype(), DataType::kBool);
  QCOMPARE(n.data<bool>()[0], false);
  QCOMPARE(n.data<bool>()[1], true);
}

void TestOpsElementwise::where_broadcasts_three_ways() {
  // cond [2,1], x [1,3], y scalar → [2,3].
  Tensor cond = boolean({2, 1}, {1, 0}), x = i64({1, 3}, {10, 20, 30}), y = Tensor::scalar<int64_t>(-1);
  Tensor out = run1("Where", {{cond}, {x}, {y}});
  QCOMPARE(out.dtype(), DataType::kInt64);
  QCOMPARE(out.shape(), (Shape{2, 3}));
  const int64_t expected[] = {10, 20, 30, -1, -1, -1};
  for (int i = 0; i < 6; ++i) QCOMPARE(out.data<int64_t>()[i], expected[i]);
  Tensor f = run1("Where", {{boolean({3}, {0, 1, 0})}, {f32({3}, {1, 2, 3})}, {f32({2, 1}, {7, 8})}});
  QCOMPARE(f.shape(), (Shape{2, 3}));
  const float fe[] = {7, 2, 7, 8, 2, 8};
  for (int i = 0; i < 6; ++i) QCOMPARE(f.data<float>()[i], fe[i]);
}

void TestOpsElementwise::clip_optional_bounds() {
  Tensor x = f32({5}, {-3, -1, 0, 2, 9});
  Tensor only_max = run1("Clip", {{x}, Operand::absent(), {Tensor::scalar<float>(1.0f)}});
  const float e1[] = {-3, -1, 0, 1, 1};
  for (int i = 0; i < 5; ++i) QCOMPARE(only_max.data<float>()[i], e1[i]);
  Tensor only_min = run1("Clip", {{x}, {Tensor::scalar<float>(0.5f)}});
  const float e2[] = {0.5f, 0.5f, 0.5f, 2, 9};
  for (int i = 0; i < 5; ++i) QCOMPARE(only_min.data<float>()[i], e2[i]);
  Tensor none = run1("Clip", {{x}});
  for (int i = 0; i < 5; ++i) QCOMPARE(none.data<float>()[i], x.data<float>()[i]);
  // min > max: numpy's clip gives max everywhere.
  Tensor inverted = run1("Clip", {{x}, {Tensor::scalar<float>(5.0f)}, {Tensor::scalar<float>(1.0f)}});
  for (int i = 0; i < 5; ++i) QCOMPARE(inverted.data<float>()[i], 1.0f);
  // Integers stay exact, including int64 values beyond 2^53.
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor xi = i64({3}, {-big, 5, big});
  Tensor ci = run1("Clip", {{xi}, {Tensor::scalar<int64_t>(-big + 2)}, {Tensor::scalar<int64_t>(big - 2)}});
  QCOMPARE(ci.data<int64_t>()[0], -big + 2);
  QCOMPARE(ci.data<int64_t>()[1], int64_t{5});
  QCOMPARE(ci.data<int64_t>()[2], big - 2);
  Tensor c8 = run1("Clip", {{i8({3}, {-128, 0, 127})}, {Tensor::scalar<int8_t>(-5)}});
  QCOMPARE(int(c8.data<int8_t>()[0]), -5);
  QCOMPARE(int(c8.data<int8_t>()[2]), 127);
}

void TestOpsElementwise::clip_errors() {
  Tensor x = f32({2}, {1, 2});
  std::string msg = error_of([&] { run1("Clip", {{x}, {f32({2}, {0, 1})}}); });
  QVERIFY2(contains(msg, "Clip") && contains(msg, "scalar"), msg.c_str());
  msg = error_of([&] { run1("Clip", {{x}, {Tensor::scalar<double>(0.0)}}); });
  QVERIFY2(contains(msg, "Clip") && contains(msg, "f64"), msg.c_str());
  msg = error_of([&] { run1("Clip", {{boolean({1}, {1})}}); });
  QVERIFY2(contains(msg, "Clip") && contains(msg, "bool"), msg.c_str());
}

void TestOpsElementwise::cast_truncates_and_to_bool() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32({6}, {-1.7f, 2.9f, -0.5f, 0.0f, 100.99f, nan});
  Tensor ints = run_op("Cast", {{"to", int64_t{6}}}, {{x}})[0];  // 6 = ONNX INT32
  QCOMPARE(ints.dtype(), DataType::kInt32);
  const int32_t ie[] = {-1, 2, 0, 0, 100};
  for (int i = 0; i < 5; ++i) QCOMPARE(ints.data<int32_t>()[i], ie[i]);
  Tensor bools = run_op("Cast", {{"to", std::string("bool")}}, {{x}})[0];
  QCOMPARE(bools.dtype(), DataType::kBool);
  const bool be[] = {true, true, true, false, true, true};  // NaN is non-zero
  for (int i = 0; i < 6; ++i) QCOMPARE(bools.data<bool>()[i], be[i]);
  // int64 → f32 rounds once; 2^24 + 1 rounds to even (2^24).
  Tensor f = run_op("Cast", {{"to", int64_t{1}}}, {{i64({2}, {(1 << 24) + 1, -3})}})[0];
  QCOMPARE(f.data<float>()[0], 16777216.0f);
  QCOMPARE(f.data<float>()[1], -3.0f);
  // bool → float, f32 → f16 → f32 for a value f16 represents exactly.
  QCOMPARE(run_op("Cast", {{"to", int64_t{1}}}, {{boolean({1}, {1})}})[0].data<float>()[0], 1.0f);
  Tensor h = run_op("Cast", {{"to", int64_t{10}}}, {{f32({1}, {0.375f})}})[0];
  QCOMPARE(h.dtype(), DataType::kFloat16);
  QCOMPARE(run_op("Cast", {{"to", int64_t{1}}}, {{h}})[0].data<float>()[0], 0.375f);
  std::string msg = error_of([&] { run_op("Cast", {}, {{x}}); });
  QVERIFY2(contains(msg, "Cast") && contains(msg, "to"), msg.c_str());
  msg = error_of([&] { run_op("Cast", {{"to", int64_t{14}}}, {{x}}); });  // 14 = COMPLEX64
  QVERIFY2(contains(msg, "COMPLEX64"), msg.c_str());
}

void TestOpsElementwise::cast_like() {
  Tensor y = run1("CastLike", {{f64({2}, {-2.5, 3.75})}, {i8({1}, {0})}});
  QCOMPARE(y.dtype(), DataType::kInt8);
  QCOMPARE(int(y.data<int8_t>()[0]), -2);
  QCOMPARE(int(y.data<int8_t>()[1]), 3);
}

void TestOpsElementwise::prelu_slope_broadcasts() {
  // x [2,3,2], slope [3,1]: one slope per middle index.
  Tensor x = random_f32({2, 3, 2}, 11), slope = f32({3, 1}, {0.1f, 0.2f, 0.3f});
  Tensor y = run1("PRelu", {{x}, {slope}});
  QCOMPARE(y.shape(), x.shape());
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 2; ++k) {
        float v = x.data<float>()[(i * 3 + c) * 2 + k];
        QCOMPARE(y.data<float>()[(i * 3 + c) * 2 + k], v < 0 ? v * slope.data<float>()[c] : v);
      }
  // The slope must broadcast to x's shape, not the other way round.
  std::string msg = error_of([] { run1("PRelu", {{random_f32({3}, 1)}, {random_f32({2, 3}, 2)}}); });
  QVERIFY2(contains(msg, "PRelu") && contains(msg, "[2,3]"), msg.c_str());
  Tensor yi = run1("PRelu", {{i64({2}, {-4, 4})}, {Tensor::scalar<int64_t>(3)}});
  QCOMPARE(yi.data<int64_t>()[0], int64_t{-12});
  QCOMPARE(yi.data<int64_t>()[1], int64_t{4});
}

void TestOpsElementwise::dropout_inference_and_training_rules() {
  Tensor x = random_f32({2, 3}, 5);
  std::vector<Tensor> out = run_op("Dropout", {}, {{x}}, 2);
  QCOMPARE(out[1].dtype(), DataType::kBool);
  for (int i = 0; i < 6; ++i) {
    QCOMPARE(out[0].data<float>()[i], x.data<float>()[i]);
    QCOMPARE(out[1].data<bool>()[i], true);
  }
  // Inference mode ignores the ratio.
  out = run_op("Dropout", {{"seed", int64_t{3}}}, {{x}, {Tensor::scalar<float>(0.75f)}, {boolean({}, {0})}}, 1);
  QCOMPARE(out[0].data<float>()[4], x.data<float>()[4]);
  // Training with ratio 0 keeps everything.
  out = run_op("Dropout", {}, {{x}, {Tensor::scalar<float>(0.0f)}, {boolean({}, {1})}}, 2);
  QCOMPARE(out[0].data<float>()[2], x.data<float>()[2]);
  QCOMPARE(out[1].data<bool>()[2], true);
  // Training with a non-zero (or the default 0.5) ratio is random: rejected, whether the values
  // are known when inferring (constants) or only when running (graph inputs).
  std::string msg = error_of([&] {
    run_op("Dropout", {}, {{x}, {Tensor::scalar<float>(0.5f)}, constant(boolean({}, {1}))});
  });
  QVERIFY2(contains(msg, "Dropout") && contains(msg, "training_mode"), msg.c_str());
  msg = error_of([&] { run_op("Dropout", {}, {{x}, Operand::absent(), constant(boolean({}, {1}))}); });
  QVERIFY2(contains(msg, "Dropout") && contains(msg, "0.5"), msg.c_str());
  msg = error_of([&] { run_op("Dropout", {}, {{x}, {Tensor::scalar<float>(0.25f)}, {boolean({}, {1})}}); });
  QVERIFY2(contains(msg, "Dropout") && contains(msg, "training_mode"), msg.c_str());
  msg = error_of([&] { run_op("Dropout", {}, {{x}, constant(Tensor::scalar<float>(1.5f))}); });
  QVERIFY2(contains(msg, "Dropout") && contains(msg, "ratio"), msg.c_str());
}

void TestOpsElementwise::identity_copies() {
  Tensor x = i64({2, 2}, {1, -2, 3, (int64_t{1} << 62) + 1});
  Tensor y = run1("Identity", {{x}});
  QCOMPARE(y.shape(), x.shape());
  QCOMPARE(y.data<int64_t>()[3], (int64_t{1} << 62) + 1);
  QVERIFY(y.raw_data() != x.raw_data());
}

void TestOpsElementwise::half_precision_types() {
  // Values chosen to be exact in f16/bf16, so the expected results are exact too.
  auto cast_to = [](const Tensor& t, int64_t onnx_code) { return run_op("Cast", {{"to", onnx_code}}, {{t}})[0]; };
  for (int64_t code : {int64_t{10}, int64_t{16}}) {  // FLOAT16, BFLOAT16
    Tensor a = cast_to(f32({3}, {1.5f, -2.0f, 0.25f}), code), b = cast_to(f32({1}, {2.25f}), code);
    Tensor sum = run1("Add", {{a}, {b}});
    QCOMPARE(sum.dtype(), a.dtype());
    Tensor back = cast_to(sum, 1);
    QCOMPARE(back.data<float>()[0], 3.75f);
    QCOMPARE(back.data<float>()[1], 0.25f);
    QCOMPARE(back.data<float>()[2], 2.5f);
    Tensor mx = cast_to(run1("ReduceMax", {{a}}), 1);
    QCOMPARE(mx.data<float>()[0], 1.5f);
    QCOMPARE(cast_to(run1("Relu", {{a}}), 1).data<float>()[1], 0.0f);
  }
  // f32 → bf16 rounds to nearest even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
  Tensor halfway = cast_to(f32({2}, {1.00390625f, 1.01171875f}), 16);
  Tensor back = cast_to(halfway, 1);
  QCOMPARE(back.data<float>()[0], 1.0f);
  QCOMPARE(back.data<float>()[1], 1.015625f);
}

void TestOpsElementwise::pattern_kinds_and_attrs() {
  for (const char* op : {"Relu", "Sigmoid", "Exp", "Not", "Cast", "Identity", "Dropout", "Clip"})
    QVERIFY2(get_op(op).pattern == PatternKind::kElemWise, op);
  for (const char* op : {"Add", "Pow", "Max", "Sum", "Equal", "And", "Where", "PRelu"})
    QVERIFY2(get_op(op).pattern == PatternKind::kBroadcast, op);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceLogSumExp", "ArgMax", "ArgMin"})
    QVERIFY2(get_op(op).pattern == PatternKind::kCommReduce, op);
  // Only ReduceSum reads its axes from an input; it must be known when inferring.
  QCOMPARE(get_op("ReduceSum").shape_inputs, std::vector<int>{1});
  QVERIFY(get_op("ReduceMean").shape_inputs.empty());
  // Every ONNX attribute is declared.
  auto names = [](const char* op) {
    std::vector<std::string> out;
    for (const FieldDoc& f : get_op(op).attr_doc()) out.push_back(f.name);
    return out;
  };
  QCOMPARE(names("Selu"), (std::vector<std::string>{"alpha", "gamma"}));
  QCOMPARE(names("ReduceSum"), (std::vector<std::string>{"keepdims", "noop_with_empty_axes"}));
  QCOMPARE(names("ReduceMax"), (std::vector<std::string>{"axes", "keepdims"}));
  QCOMPARE(names("ArgMin"), (std::vector<std::string>{"axis", "keepdims", "select_last_index"}));
  QCOMPARE(names("Dropout"), (std::vector<std::string>{"seed"}));
  QCOMPARE(names("Cast"), (std::vector<std::string>{"to"}));
}

void TestOpsElementwise::flops_count_outputs() {
  Graph g;
  ValueId a = g.add_input("a", {DataType::kFloat32, {4, 5}});
  ValueId b = g.add_input("b", {DataType::kFloat32, {5}});
  ValueId s = g.add_node1("add", get_op("Add"), get_op("Add").parse_attrs("Add", {}), {a, b});
  ValueId r =
      g.add_node1("sum", get_op("ReduceSumSquare"), get_op("ReduceSumSquare").parse_attrs("ReduceSumSquare", {}), {s});
  g.add_node1("cast", get_op("Cast"), get_op("Cast").parse_attrs("Cast", {{"to", int64_t{7}}}), {r});
  g.add_node1("max", get_op("Max"), get_op("Max").parse_attrs("Max", {}), {a, b, s});
  g.add_node1("mean", get_op("Mean"), get_op("Mean").parse_attrs("Mean", {}), {a, b});
  infer_types(g);
  QCOMPARE(node_flops(g, g.nodes[0]), int64_t{20});
  QCOMPARE(node_flops(g, g.nodes[1]), int64_t{40});  // a multiply and an add per input element
  QCOMPARE(node_flops(g, g.nodes[2]), int64_t{0});
  QCOMPARE(node_flops(g, g.nodes[3]), int64_t{40});  // two comparisons per output element
  QCOMPARE(node_flops(g, g.nodes[4]), int64_t{40});  // an add and a division per output element
}

QTEST_APPLESS_MAIN(TestOpsElementwise)
#include "test_ops_elementwise.moc"
