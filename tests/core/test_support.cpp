// Data types, tensors, shapes and broadcasting.
#include <QtTest>

#include <cmath>

#include "core/graph/ops/common.h"
#include "core/support/error.h"
#include "core/support/tensor.h"

using namespace tessel;

class TestSupport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void float16_round_trips_representable_values() {
    for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
      QCOMPARE(to_float(to_float16(f)), f);
    QVERIFY(std::isinf(to_float(to_float16(1e6f))));
    QVERIFY(std::isnan(to_float(to_float16(NAN))));
    QCOMPARE(to_float(to_float16(1.0009765625f + 0.0001f)), 1.0009765625f);  // rounds to nearest
  }
  void bfloat16_rounds_to_nearest_even() {
    QCOMPARE(to_float(to_bfloat16(1.0f)), 1.0f);
    QCOMPARE(to_float(to_bfloat16(3.0f)), 3.0f);
    QCOMPARE(to_float(to_bfloat16(1.00390625f)), 1.0f);  // exactly halfway: even mantissa wins
  }
  void dtype_names_and_onnx_codes() {
    QCOMPARE(dtype_from_name("float32"), DataType::kFloat32);
    QCOMPARE(dtype_from_name("i64"), DataType::kInt64);
    QCOMPARE(dtype_from_onnx(7), DataType::kInt64);
    QCOMPARE(dtype_to_onnx(DataType::kBool), 9);
    QCOMPARE(dtype_from_onnx(8), DataType::kString);
    QVERIFY_THROWS_EXCEPTION(Error, dtype_from_onnx(14));  // COMPLEX64
    QVERIFY_THROWS_EXCEPTION(Error, dtype_from_name("complex64"));
  }
  void tensors_refuse_absurd_sizes() {
    QVERIFY_THROWS_EXCEPTION(Error, Tensor(DataType::kFloat32, {1 << 20, 1 << 20, 1 << 20}));
    QVERIFY_THROWS_EXCEPTION(Error, Tensor(DataType::kFloat32, {int64_t{1} << 40}));
    QVERIFY_THROWS_EXCEPTION(Error, Tensor(DataType::kFloat32, {-1}));
    // Found by tests/fuzz (graph_text): the message's size in MiB overflowed int64 for an element
    // count that fits int64 but whose byte count does not.
    try {
      Tensor(DataType::kFloat32, {222222222222222224, 4, 3});
      QFAIL("allocated");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("exceeds the 8 GiB limit"), e.what());
    }
  }
  void allocation_limit_can_be_lowered() {
    set_tensor_allocation_limit(int64_t{1} << 20);
    QCOMPARE(tensor_allocation_limit(), int64_t{1} << 20);
    QCOMPARE(Tensor(DataType::kFloat32, {512, 512}).numel(), int64_t{512 * 512});
    try {
      Tensor(DataType::kFloat32, {513, 512});
      QFAIL("allocated past the lowered limit");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("exceeds the 1 MiB limit"), e.what());
    }
    set_tensor_allocation_limit(int64_t{1} << 62);  // clamped
    QCOMPARE(tensor_allocation_limit(), kMaxTensorBytes);
  }
  void shape_sizes_are_checked_for_overflow() {
    QCOMPARE(shape_numel({3, 4, 5}), 60);
    QVERIFY_THROWS_EXCEPTION(Error, shape_numel({int64_t{1} << 62, 4}));  // wrapped to 0
    QCOMPARE(checked_tensor_bytes({1024, 1024}, 4), int64_t{4} << 20);
    QVERIFY_THROWS_EXCEPTION(Error, checked_tensor_bytes({int64_t{1} << 46, 3}, 4));
    QVERIFY_THROWS_EXCEPTION(Error, checked_tensor_bytes({int64_t{1} << 61}, 8));
  }
  void cast_truncates_and_keeps_int64_exact() {
    Tensor f = Tensor::from_values<float>({3}, std::vector<float>{-1.7f, 2.9f, 0.0f});
    Tensor i = f.cast(DataType::kInt32);
    QCOMPARE(i.values<int32_t>()[0], -1);
    QCOMPARE(i.values<int32_t>()[1], 2);
    Tensor b = f.cast(DataType::kBool);
    QCOMPARE(b.values<bool>()[0], true);
    QCOMPARE(b.values<bool>()[2], false);
    int64_t big = (int64_t{1} << 62) + 1;
    Tensor l = Tensor::from_int64s({1}, {big});
    QCOMPARE(l.cast(DataType::kInt64).values<int64_t>()[0], big);
    QCOMPARE(l.to_int64s()[0], big);
  }
  void broadcasting() {
    QCOMPARE(broadcast_shapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
    QCOMPARE(broadcast_shapes({}, {5}), (Shape{5}));
    QVERIFY_THROWS_EXCEPTION(Error, broadcast_shapes({2, 3}, {4}));
    std::vector<std::pair<int64_t, int64_t>> seen;
    ops::for_each_broadcast({2, 3}, {{2, 1}, {3}}, [&](int64_t, const int64_t* in) { seen.emplace_back(in[0], in[1]); });
    std::vector<std::pair<int64_t, int64_t>> expected = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
    QCOMPARE(seen, expected);
  }
  void normalize_axis_errors() {
    QCOMPARE(normalize_axis(-1, 4), int64_t{3});
    QVERIFY_THROWS_EXCEPTION(Error, normalize_axis(4, 4));
    QVERIFY_THROWS_EXCEPTION(Error, normalize_axis(-5, 4));
  }
};

QTEST_APPLESS_MAIN(TestSupport)
#include "test_support.moc"
