// The element-wise builders on u16, u32 and u64 operands (core/graph/ops/te/builders_elementwise.cpp):
// a one-node graph per case compiles on every CPU backend with no reference fallback and gives
// exactly the reference kernel's values. The inputs hold the edges where unsigned arithmetic
// parts from signed: 0, the type's maximum (wrap-around) and, for u64, values at and above 2^63,
// which an int64 would read as negative (order, remainder, conversion to float).
#include <QtTest>
#include <limits>
#include <random>

#include "core/compile/compiled_model.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "tests/plugins/compiled_vs_reference.h"

using namespace tessel;

namespace {

// What values an input takes: any of the type's (edges included), non-zero ones (divisors), or
// shift amounts from 0 to the type's width.
enum class Values { kAny, kNonZero, kShift, kSmallFloat };

struct Input {
  DataType dtype;
  Shape shape;
  Values values = Values::kAny;
};

struct Case {
  const char* name;
  const char* op;
  AttrMap attrs;
  std::vector<Input> inputs;
};

constexpr DataType kU16 = DataType::kUInt16, kU32 = DataType::kUInt32, kU64 = DataType::kUInt64,
                   kF32 = DataType::kFloat32;

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"add_u16_wraps", "Add", {}, {{kU16, {4, 6}}, {kU16, {6}}}},
      {"sub_u32_wraps", "Sub", {}, {{kU32, {5, 3}}, {kU32, {5, 3}}}},
      {"mul_u64_wraps", "Mul", {}, {{kU64, {17}}, {kU64, {17}}}},
      {"less_u64", "Less", {}, {{kU64, {3, 8}}, {kU64, {8}}}},
      {"greater_or_equal_u32", "GreaterOrEqual", {}, {{kU32, {12}}, {kU32, {12}}}},
      {"equal_u16", "Equal", {}, {{kU16, {9}}, {kU16, {1}}}},
      {"max_u64", "Max", {}, {{kU64, {2, 9}}, {kU64, {9}}, {kU64, {2, 1}}}},
      {"min_u32", "Min", {}, {{kU32, {10}}, {kU32, {10}}}},
      {"max_u16", "Max", {}, {{kU16, {7}}, {kU16, {7}}}},
      {"mod_u64", "Mod", {}, {{kU64, {16}}, {kU64, {16}, Values::kNonZero}}},
      {"fmod_u64", "Mod", {{"fmod", int64_t{1}}}, {{kU64, {16}}, {kU64, {16}, Values::kNonZero}}},
      {"mod_u32", "Mod", {}, {{kU32, {3, 5}}, {kU32, {5}, Values::kNonZero}}},
      {"mod_u16", "Mod", {}, {{kU16, {11}}, {kU16, {11}, Values::kNonZero}}},
      {"shift_left_u32",
       "BitShift",
       {{"direction", std::string("LEFT")}},
       {{kU32, {14}}, {kU32, {14}, Values::kShift}}},
      {"shift_right_u16",
       "BitShift",
       {{"direction", std::string("RIGHT")}},
       {{kU16, {18}}, {kU16, {18}, Values::kShift}}},
      {"pow_u32_exponent", "Pow", {}, {{kF32, {8}, Values::kSmallFloat}, {kU32, {8}, Values::kShift}}},
      {"cast_u64_to_f32", "Cast", {{"to", int64_t{1}}}, {{kU64, {13}}}},
      {"cast_u64_to_i64", "Cast", {{"to", int64_t{7}}}, {{kU64, {13}}}},
      {"cast_u32_to_u16", "Cast", {{"to", int64_t{4}}}, {{kU32, {13}}}},
      {"cast_u16_to_f64", "Cast", {{"to", int64_t{11}}}, {{kU16, {13}}}},
  };
  return all;
}

Tensor random_tensor(const Input& in, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t(in.dtype, in.shape);
  if (in.dtype == kF32) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::uniform_real_distribution<float>(0.5f, 1.5f)(rng);
    return t;
  }
  dispatch_dtype(in.dtype, [&]<class T>() {
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      constexpr T kMax = std::numeric_limits<T>::max();
      const T edges[] = {0,
                         1,
                         kMax,
                         static_cast<T>(kMax - 1),
                         static_cast<T>(kMax / 2),
                         static_cast<T>(kMax / 2 + 1),
                         static_cast<T>(kMax / 2 + 7)};
      T* data = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        T x = i < 7 ? edges[(i + static_cast<int64_t>(seed)) % 7] : static_cast<T>(rng());
        if (in.values == Values::kShift) x = static_cast<T>(rng() % (sizeof(T) * 8 + 1));
        if (in.values == Values::kNonZero && x == 0) x = 3;
        data[i] = x;
      }
    }
  });
  return t;
}

}  // namespace

class TestTeBuildersUnsigned : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void compiles_and_matches_the_reference_data() {
    std::vector<std::string> names;
    for (const Case& k : cases()) names.push_back(k.name);
    testing::add_case_rows(names);
  }
  void compiles_and_matches_the_reference() {
    QFETCH(int, index);
    QFETCH(QString, target);
    const Case& k = cases()[static_cast<size_t>(index)];
    QVERIFY(ops::has_te_builder(k.op));

    std::vector<Tensor> values;
    for (size_t i = 0; i < k.inputs.size(); ++i) values.push_back(random_tensor(k.inputs[i], 17 + i));
    const Graph g = testing::one_node_graph(k.op, k.attrs, values);

    // Integer outputs bit for bit; Pow's and the casts' float outputs are one rounding of the same value.
    const QString failure = testing::compiled_vs_reference(g, values, target, testing::kFloat32Rounding);
    QVERIFY2(failure.isEmpty(), qPrintable(QString("%1 on %2: %3").arg(k.name, target, failure)));
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersUnsigned)
#include "test_te_builders_unsigned.moc"
