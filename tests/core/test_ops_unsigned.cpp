// The unsigned element types u16, u32 and u64 and bfloat16 conversion: names and ONNX codes, the
// reference kernels at the edges where unsigned arithmetic differs from signed (wrap-around, order
// and division above 2^63, shifts by the width), and Cast rounding to bfloat16.
#include <cstring>
#include <limits>

#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

namespace {

template <class T>
Tensor values(Shape shape, std::vector<T> v) {
  return Tensor::from_values<T>(std::move(shape), v);
}
template <class T>
std::vector<T> elements(const Tensor& t) {
  auto s = t.values<T>();
  return {s.begin(), s.end()};
}
Operand v(Tensor t) { return Operand{std::move(t)}; }

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kHigh = (uint64_t{1} << 63) + 5;  // negative when read as int64

}  // namespace

class TestUnsignedOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void namesSizesAndOnnxCodes() {
    QCOMPARE(dtype_name(DataType::kUInt16), std::string_view("u16"));
    QCOMPARE(dtype_from_name("uint32"), DataType::kUInt32);
    QCOMPARE(dtype_from_name("u64"), DataType::kUInt64);
    QCOMPARE(dtype_size(DataType::kUInt64), size_t{8});
    QCOMPARE(dtype_from_onnx(4), DataType::kUInt16);
    QCOMPARE(dtype_from_onnx(12), DataType::kUInt32);
    QCOMPARE(dtype_from_onnx(13), DataType::kUInt64);
    QCOMPARE(dtype_to_onnx(DataType::kUInt64), 13);
    QVERIFY(dtype_is_unsigned(DataType::kUInt32) && dtype_is_integer(DataType::kUInt32));
    QVERIFY(!dtype_is_unsigned(DataType::kInt64) && !dtype_is_unsigned(DataType::kBool));
  }

  void arithmeticWrapsModuloTheWidth() {
    const Tensor a = values<uint16_t>({3}, {65535, 0, 300}), b = values<uint16_t>({3}, {1, 1, 300});
    QCOMPARE(elements<uint16_t>(run1("Add", {v(a), v(b)})), (std::vector<uint16_t>{0, 1, 600}));
    QCOMPARE(elements<uint16_t>(run1("Sub", {v(a), v(b)})), (std::vector<uint16_t>{65534, 65535, 0}));
    QCOMPARE(elements<uint16_t>(run1("Mul", {v(a), v(b)})),
             (std::vector<uint16_t>{65535, 0, 24464}));  // 90000 mod 2^16
    const Tensor c = values<uint32_t>({2}, {4294967295u, 7}), d = values<uint32_t>({2}, {2, 2});
    QCOMPARE(elements<uint32_t>(run1("Add", {v(c), v(d)})), (std::vector<uint32_t>{1, 9}));
    QCOMPARE(elements<uint32_t>(run1("Div", {v(c), v(d)})), (std::vector<uint32_t>{2147483647u, 3}));
  }

  void u64OrderAndDivisionAboveTwoToThe63() {
    const Tensor a = values<uint64_t>({3}, {kHigh, 1, kU64Max}), b = values<uint64_t>({3}, {1, kHigh, 2});
    QCOMPARE(elements<uint64_t>(run1("Max", {v(a), v(b)})), (std::vector<uint64_t>{kHigh, kHigh, kU64Max}));
    QCOMPARE(elements<uint64_t>(run1("Min", {v(a), v(b)})), (std::vector<uint64_t>{1, 1, 2}));
    QCOMPARE(elements<bool>(run1("Less", {v(a), v(b)})), (std::vector<bool>{false, true, false}));
    QCOMPARE(elements<bool>(run1("GreaterOrEqual", {v(a), v(b)})), (std::vector<bool>{true, false, true}));
    QCOMPARE(elements<uint64_t>(run1("Div", {v(a), v(b)})), (std::vector<uint64_t>{kHigh, 0, kU64Max / 2}));
    QCOMPARE(elements<uint64_t>(run1("Mod", {v(a), v(b)})), (std::vector<uint64_t>{0, 1, 1}));
    QCOMPARE(elements<uint64_t>(run1("Mod", {v(a), v(b)}, {{"fmod", int64_t{1}}})), (std::vector<uint64_t>{0, 1, 1}));
    QCOMPARE(elements<uint64_t>(run1("Sub", {v(b), v(a)})), (std::vector<uint64_t>{1 - kHigh, kHigh - 1, 3}));
  }

  void bitShiftOnEveryUnsignedWidth() {
    const AttrMap left{{"direction", std::string("LEFT")}}, right{{"direction", std::string("RIGHT")}};
    QCOMPARE(elements<uint16_t>(run1(
                 "BitShift", {v(values<uint16_t>({3}, {0x8001, 1, 7})), v(values<uint16_t>({3}, {1, 15, 16}))}, left)),
             (std::vector<uint16_t>{2, 0x8000, 0}));
    QCOMPARE(elements<uint32_t>(
                 run1("BitShift", {v(values<uint32_t>({2}, {0xffffffffu, 16})), v(values<uint32_t>({1}, {4}))}, right)),
             (std::vector<uint32_t>{0x0fffffffu, 1}));
    QCOMPARE(
        elements<uint64_t>(run1(
            "BitShift", {v(values<uint64_t>({3}, {kU64Max, 1, 1})), v(values<uint64_t>({3}, {60, 63, 64}))}, right)),
        (std::vector<uint64_t>{15, 0, 0}));
    QCOMPARE(elements<uint64_t>(
                 run1("BitShift", {v(values<uint64_t>({2}, {1, 3})), v(values<uint64_t>({2}, {63, 63}))}, left)),
             (std::vector<uint64_t>{uint64_t{1} << 63, uint64_t{1} << 63}));
    QVERIFY(contains(error_of([&] {
                       run1("BitShift", {v(i64({1}, {1})), v(i64({1}, {1}))}, left);
                     }),
                     "BitShift: input 0 has dtype i64; allowed: u8, u16, u32, u64"));
  }

  void powTakesAnUnsignedExponent() {
    const Tensor x = f32({3}, {2.0f, 3.0f, 0.5f});
    QCOMPARE(elements<float>(run1("Pow", {v(x), v(values<uint32_t>({3}, {3, 0, 2}))})),
             (std::vector<float>{8.0f, 1.0f, 0.25f}));
    QCOMPARE(elements<float>(run1("Pow", {v(x), v(values<uint64_t>({1}, {2}))})),
             (std::vector<float>{4.0f, 9.0f, 0.25f}));
  }

  void castBetweenUnsignedAndOtherTypes() {
    const Tensor big = values<uint64_t>({2}, {kU64Max, 12345678901234567890ull});
    QCOMPARE(elements<uint64_t>(run1("Cast", {v(big)}, {{"to", int64_t{13}}})), elements<uint64_t>(big));
    QCOMPARE(elements<double>(run1("Cast", {v(big)}, {{"to", int64_t{11}}})),
             (std::vector<double>{18446744073709551615.0, 12345678901234567890.0}));
    QCOMPARE(elements<uint32_t>(run1("Cast", {v(i64({2}, {-1, 4294967296 + 7}))}, {{"to", int64_t{12}}})),
             (std::vector<uint32_t>{4294967295u, 7}));
    QCOMPARE(elements<uint16_t>(run1("Cast", {v(f32({2}, {65535.9f, 2.5f}))}, {{"to", int64_t{4}}})),
             (std::vector<uint16_t>{65535, 2}));
  }

  // float32 → bfloat16 rounds to nearest, ties to even; NaN stays NaN.
  void castToBfloat16RoundsToNearestEven() {
    auto bits = [](float f) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    };
    auto from_bits = [](uint32_t u) {
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    };
    const Tensor x = f32({5}, {from_bits(0x3f808000u), from_bits(0x3f818000u), from_bits(0x3f80c000u),
                               from_bits(0x3f807fffu), std::numeric_limits<float>::quiet_NaN()});
    const Tensor y = run1("Cast", {v(x)}, {{"to", int64_t{16}}});
    QCOMPARE(y.dtype(), DataType::kBFloat16);
    const BFloat16* h = y.data<BFloat16>();
    QCOMPARE(h[0].bits, uint16_t{0x3f80});  // tie, even stays
    QCOMPARE(h[1].bits, uint16_t{0x3f82});  // tie, odd rounds up
    QCOMPARE(h[2].bits, uint16_t{0x3f81});  // above the tie
    QCOMPARE(h[3].bits, uint16_t{0x3f80});  // below the tie
    QVERIFY(std::isnan(to_float(h[4])));
    const Tensor back = run1("Cast", {v(y)}, {{"to", int64_t{1}}});
    QCOMPARE(bits(back.data<float>()[2]), 0x3f810000u);
  }

  void typeSetsListTheUnsignedTypes() {
    QVERIFY(contains(error_of([] { run1("Sigmoid", {v(values<uint32_t>({1}, {1}))}); }),
                     "Sigmoid: input 0 has dtype u32; allowed: f32, f64, f16, bf16"));
  }
};

QTEST_APPLESS_MAIN(TestUnsignedOps)
#include "test_ops_unsigned.moc"
