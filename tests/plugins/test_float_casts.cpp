// Float → integer conversion has one meaning on every backend (issue 40). ONNX leaves Cast of NaN,
// ±Inf and out-of-range values undefined, and a bare C or LLVM conversion is undefined behaviour
// (x86 gives INT_MIN, ARM saturates, LLVM may fold poison into anything), so llvm and ref used to
// disagree. The rule (core/support/dtype.h, float_to_int64): truncate toward zero, NaN → 0,
// saturate at int64, then keep the low bits of the narrower type; uint64 keeps [2^63, 2^64).
//
//   - the reference follows the rule on hand-worked values (the rule itself is checked, not only
//     that the backends agree with each other);
//   - Cast from f32 and f64 to every integer type over NaN, ±Inf, every type's edges ± a fraction
//     and values beyond int64: each backend gives the reference's bits exactly;
//   - QuantizeLinear, whose clamp lets code generators skip the saturating rule
//     (loopir::float_cast_is_in_range), still matches on NaN and ±Inf input.
// The opencl rows run in the test labelled opencl (float_casts_opencl), which needs a device.
#include <QtTest>
#include <cmath>
#include <limits>

#include "core/loopir/ir.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "tests/plugins/compiled_vs_reference.h"

using namespace tessel;

namespace {

// Where conversions go wrong: NaN, infinities, each integer width's edges and just past them,
// fractions of both signs, and magnitudes beyond int64 and uint64.
std::vector<double> special_values() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {std::nan(""), -std::nan(""), inf, -inf, 0.0, -0.0, 0.5, -0.5, 1.9, -1.9, -1.0};
  for (double edge : {127.0, 128.0, 255.0, 256.0, 32767.0, 32768.0, 65535.0, 65536.0, 2147483647.0, 2147483648.0,
                      4294967295.0, 4294967296.0, 9007199254740992.0, 9223372036854775808.0, 18446744073709551616.0})
    for (double x : {edge, edge + 0.5, -edge, -edge - 0.5, edge * 1.5}) v.push_back(x);
  for (double big : {1e19, 1e20, 1e30, -1e30, 3e38, -3e38}) v.push_back(big);
  return v;
}

Tensor values_as(DataType t) {
  const std::vector<double> v = special_values();
  Tensor out(t, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) out.set_double(static_cast<int64_t>(i), v[i]);
  return out;
}

}  // namespace

class TestFloatCasts : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  // The rule on values worked by hand, through the reference's Cast.
  void reference_follows_the_rule() {
    struct Case {
      double x;
      DataType to;
      double want;
    };
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    const std::vector<Case> cases = {
        {nan, DataType::kInt32, 0},
        {-1.9, DataType::kInt32, -1},
        {3e9, DataType::kInt32, -1294967296.0},  // 3000000000 − 2^32
        {1e30, DataType::kInt32, -1},            // INT64_MAX's low 32 bits
        {-inf, DataType::kInt16, 0},             // INT64_MIN's low 16 bits
        {-1.0, DataType::kUInt8, 255},
        {300.7, DataType::kUInt8, 44},
        {inf, DataType::kInt64, 9223372036854775807.0},
        {9223372036854775808.0, DataType::kUInt64, 9223372036854775808.0},
        {1e30, DataType::kUInt64, 18446744073709551615.0},
    };
    for (const Case& c : cases) {
      Tensor x(DataType::kFloat64, {1});
      x.set_double(0, c.x);
      const Graph g = testing::one_node_graph("Cast", {{"to", int64_t{dtype_to_onnx(c.to)}}}, {x});
      const double got = run_reference(g, {x})[0].get_double(0);
      QVERIFY2(got == c.want, qPrintable(QString("%1 → %2 gave %3, the rule says %4")
                                             .arg(c.x, 0, 'g', 20)
                                             .arg(QString::fromStdString(std::string(dtype_name(c.to))))
                                             .arg(got, 0, 'g', 20)
                                             .arg(c.want, 0, 'g', 20)));
    }
  }

  void special_values_match_the_reference_data() {
    QTest::addColumn<int>("from");
    QTest::addColumn<int>("to");
    QTest::addColumn<QString>("target");
    for (DataType from : {DataType::kFloat32, DataType::kFloat64})
      for (DataType to : testing::integer_types())
        for (const char* target : testing::backends_under_test())
          QTest::newRow(qPrintable(QString("%1_to_%2@%3")
                                       .arg(QString::fromStdString(std::string(dtype_name(from))))
                                       .arg(QString::fromStdString(std::string(dtype_name(to))))
                                       .arg(target)))
              << static_cast<int>(from) << static_cast<int>(to) << QString(target);
  }
  void special_values_match_the_reference() {
    QFETCH(int, from);
    QFETCH(int, to);
    QFETCH(QString, target);
    const std::vector<Tensor> x = {values_as(static_cast<DataType>(from))};
    const Graph g = testing::one_node_graph("Cast", {{"to", int64_t{dtype_to_onnx(static_cast<DataType>(to))}}}, x);
    const QString failure = testing::compiled_vs_reference(g, x, target, testing::kExact);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
  }

  void quantize_of_nan_and_infinity_matches_the_reference_data() {
    QTest::addColumn<int>("to");
    QTest::addColumn<QString>("target");
    for (DataType to : {DataType::kInt8, DataType::kUInt8})
      for (const char* target : testing::backends_under_test())
        QTest::newRow(qPrintable(QString("%1@%2").arg(QString::fromStdString(std::string(dtype_name(to)))).arg(target)))
            << static_cast<int>(to) << QString(target);
  }
  void quantize_of_nan_and_infinity_matches_the_reference() {
    QFETCH(int, to);
    QFETCH(QString, target);
    Tensor scale(DataType::kFloat32, {});
    scale.set_double(0, 0.5);
    Tensor zero_point(static_cast<DataType>(to), {});
    zero_point.set_double(0, 3);
    const std::vector<Tensor> in = {values_as(DataType::kFloat32), scale, zero_point};
    const Graph g = testing::one_node_graph("QuantizeLinear", {}, in);
    const QString failure = testing::compiled_vs_reference(g, in, target, testing::kExact);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
  }

  // The clamp that lets a code generator convert directly is recognised only when both bounds lie
  // inside the target type as the kernel holds them.
  void in_range_clamps_are_recognised_exactly() {
    using namespace loopir;
    const Expr x = make_var("x", DataType::kFloat32);
    auto f32 = [](double v) { return make_float(v, DataType::kFloat32); };
    auto f64 = [](double v) { return make_float(v, DataType::kFloat64); };
    QVERIFY(float_cast_is_in_range(min(max(x, f32(-128)), f32(127)), DataType::kInt8));
    QVERIFY(float_cast_is_in_range(max(min(x, f32(255)), f32(0)), DataType::kUInt8));
    QVERIFY(!float_cast_is_in_range(min(max(x, f32(-128)), f32(128)), DataType::kInt8));
    QVERIFY(!float_cast_is_in_range(min(max(x, f32(-1)), f32(255)), DataType::kUInt8));
    QVERIFY(!float_cast_is_in_range(min(x, f32(127)), DataType::kInt8));  // no lower bound: -Inf passes
    // 2147483647 as an f32 immediate is 2^31, outside int32; as f64 it is exact.
    QVERIFY(!float_cast_is_in_range(min(max(x, f32(0)), f32(2147483647.0)), DataType::kInt32));
    const Expr y = make_var("y", DataType::kFloat64);
    QVERIFY(float_cast_is_in_range(min(max(y, f64(0)), f64(2147483647.0)), DataType::kInt32));
    QVERIFY(!float_cast_is_in_range(min(max(y, f64(std::nan(""))), f64(1)), DataType::kInt32));
  }
};

QTEST_APPLESS_MAIN(TestFloatCasts)
#include "test_float_casts.moc"
