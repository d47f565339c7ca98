// The quantized builders (core/graph/ops/te/builders_quant.cpp): a one-node graph per op, with
// per-channel parameters, padding, strides, groups, bias, batch broadcasting and values that land
// on rounding ties, compiles to kernels on every CPU backend with no reference fallback, and gives
// exactly what the reference kernel gives (the kernels use the reference's arithmetic). And the
// QDQ-quantized sample model (scripts/gen_quant_model.py) runs compiled within its tolerance.
#include <QtTest>
#include <random>

#include "core/compile/compiled_model.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "tests/plugins/compiled_vs_reference.h"

using namespace tessel;

namespace {

// An input: its type, and for scales the range its random values take.
struct Input {
  DataType dtype;
  Shape shape;
  double lo = 0, hi = 0;  // floats only: uniform in [lo, hi)
};

struct Case {
  const char* name;
  const char* op;
  AttrMap attrs;
  std::vector<Input> inputs;  // every input a graph input, random
  int outputs = 1;
};

constexpr DataType kF32 = DataType::kFloat32, kU8 = DataType::kUInt8, kI8 = DataType::kInt8, kI32 = DataType::kInt32;

Input scale(Shape s = {}) { return {kF32, std::move(s), 0.001, 0.05}; }

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // x/scale on exact ties: x is a multiple of 0.25 in [-40, 40), scale 0.5.
      {"quantize_ties", "QuantizeLinear", {}, {{kF32, {2, 3, 8}, -40, 40}, {kF32, {}, 0.5, 0.5}, {kU8, {}}}},
      {"quantize_per_axis_int8",
       "QuantizeLinear",
       {{"axis", int64_t{-1}}},
       {{kF32, {3, 5, 4}, -2, 2}, scale({4}), {kI8, {4}}}},
      {"quantize_no_zero_point", "QuantizeLinear", {}, {{kF32, {17}, -1, 1}, scale()}},
      {"quantize_int32", "QuantizeLinear", {}, {{kI32, {9}}, scale(), {kI8, {}}}},
      {"dequantize_per_axis", "DequantizeLinear", {}, {{kI8, {2, 3, 4}}, scale({3}), {kI8, {3}}}},
      {"dequantize_uint8", "DequantizeLinear", {}, {{kU8, {5, 7}}, scale(), {kU8, {}}}},
      {"dequantize_int32", "DequantizeLinear", {}, {{kI32, {6}}, scale()}},
      {"dynamic_quantize", "DynamicQuantizeLinear", {}, {{kF32, {4, 9}, -3, 1}}, 3},
      {"dynamic_quantize_positive", "DynamicQuantizeLinear", {}, {{kF32, {10}, 0.5, 2}}, 3},
      {"matmul_integer_per_row_column", "MatMulInteger", {}, {{kU8, {5, 7}}, {kI8, {7, 3}}, {kU8, {5}}, {kI8, {3}}}},
      {"matmul_integer_batched", "MatMulInteger", {}, {{kI8, {2, 1, 3, 4}}, {kI8, {3, 4, 2}}}},
      {"matmul_integer_vector", "MatMulInteger", {}, {{kU8, {4}}, {kU8, {2, 4, 3}}, {kU8, {}}, {kU8, {}}}},
      {"qlinear_matmul",
       "QLinearMatMul",
       {},
       {{kU8, {2, 3, 8}}, scale(), {kU8, {}}, {kI8, {8, 5}}, scale(), {kI8, {}}, {kF32, {}, 0.01, 0.02}, {kU8, {}}}},
      {"qlinear_matmul_per_row_column",
       "QLinearMatMul",
       {},
       {{kI8, {4, 6}},
        scale({4}),
        {kI8, {4}},
        {kU8, {6, 3}},
        scale({3}),
        {kU8, {3}},
        {kF32, {}, 0.01, 0.02},
        {kI8, {}}}},
      {"conv_integer_padded",
       "ConvInteger",
       {{"pads", std::vector<int64_t>{1, 2, 0, 1}}, {"strides", std::vector<int64_t>{2, 1}}},
       {{kU8, {2, 3, 7, 6}}, {kI8, {4, 3, 3, 3}}, {kU8, {}}, {kI8, {4}}}},
      {"conv_integer_plain", "ConvInteger", {}, {{kI8, {1, 2, 5, 5}}, {kI8, {3, 2, 2, 2}}}},
      {"qlinear_conv_grouped_bias",
       "QLinearConv",
       {{"group", int64_t{2}}, {"auto_pad", std::string("SAME_UPPER")}, {"dilations", std::vector<int64_t>{2, 1}}},
       {{kU8, {1, 4, 6, 6}},
        scale(),
        {kU8, {}},
        {kI8, {6, 2, 3, 3}},
        scale({6}),
        {kI8, {6}},
        {kF32, {}, 0.02, 0.04},
        {kI8, {}},
        {kI32, {6}}}},
      {"qlinear_conv_uint8",
       "QLinearConv",
       {},
       {{kU8, {1, 3, 5, 5}}, scale(), {kU8, {}}, {kU8, {2, 3, 1, 1}}, scale(), {kU8, {}}, scale(), {kU8, {}}}},
      // 16 or more output channels / columns (and input channels, for a conv): the VNNI form
      // (core/te/int8_dot_product.h).
      {"qlinear_conv_16_channels",
       "QLinearConv",
       {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
       {{kU8, {1, 18, 7, 7}},
        scale(),
        {kU8, {}},
        {kI8, {20, 18, 3, 3}},
        scale({20}),
        {kI8, {20}},
        {kF32, {}, 0.05, 0.1},
        {kU8, {}},
        {kI32, {20}}}},
      {"matmul_integer_16_columns", "MatMulInteger", {}, {{kU8, {9, 13}}, {kI8, {13, 18}}, {kU8, {}}, {kI8, {18}}}},
  };
  return all;
}

Tensor random_tensor(const Input& in, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t(in.dtype, in.shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (in.dtype == kF32) {
      const double v = in.lo == in.hi ? in.lo : std::uniform_real_distribution<double>(in.lo, in.hi)(rng);
      t.set_double(i, in.lo == -40 ? std::round(v * 4) / 4 : v);  // the ties case: multiples of 0.25
    } else if (in.dtype == kI32) {
      t.set_double(i, static_cast<double>(std::uniform_int_distribution<int32_t>(-5000, 5000)(rng)));
    } else {
      const int lo = in.dtype == kU8 ? 0 : -128;
      t.set_double(i, static_cast<double>(std::uniform_int_distribution<int>(lo, lo + 255)(rng)));
    }
  }
  return t;
}

}  // namespace

class TestTeBuildersQuant : public QObject {
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
    for (size_t i = 0; i < k.inputs.size(); ++i) values.push_back(random_tensor(k.inputs[i], 31 + i));
    const Graph g = testing::one_node_graph(k.op, k.attrs, values, k.outputs);

    // Compiled and reference kernels do the same integer and rounding arithmetic: equal bit for bit.
    const QString failure = testing::compiled_vs_reference(g, values, target, testing::kExact);
    QVERIFY2(failure.isEmpty(), qPrintable(QString("%1 on %2: %3").arg(k.name, target, failure)));
  }

  // The quantized products with 16 or more output columns (channels) run on the VNNI dot step when
  // the target has it, exactly; narrower ones keep the plain form (its lanes would idle).
  void wide_products_take_the_dot_step() {
    for (const Case& k : cases()) {
      std::vector<Tensor> values;
      for (size_t i = 0; i < k.inputs.size(); ++i) values.push_back(random_tensor(k.inputs[i], 31 + i));
      const auto g = std::make_shared<const Graph>(testing::one_node_graph(k.op, k.attrs, values, k.outputs));
      auto compiled = compile::CompiledModel::compile(g, Target::parse("llvm -vnni=true"));
      bool dot = false;
      for (const auto& kernel : compiled->kernels())
        dot = dot || kernel.loop_program.find("tessel_intrin_dot_16x4_u8i8_i32(") != std::string::npos;
      const std::string name = k.name;
      const bool wide = name.find("16_") != std::string::npos;
      QVERIFY2(dot == wide, qPrintable(QString::fromStdString(name + (dot ? ": dot step" : ": no dot step"))));
      if (wide) {
        const QString failure = testing::compiled_vs_reference(*g, values, "llvm -vnni=true", testing::kExact);
        QVERIFY2(failure.isEmpty(), qPrintable(QString::fromStdString(name) + ": " + failure));
      }
    }
  }

  // resources/models/qdq_resnet: every kernel compiles (Q/DQ included) and the output is the
  // generator's numpy forward pass. float32 accumulation in another order may move a value across
  // a rounding tie, one quantization step of one activation (about 1e-3 at the output); 1e-2
  // leaves room for a few such flips. On this machine the difference is below 1e-6.
  void qdq_sample_runs_compiled_data() {
    QTest::addColumn<QString>("target");
    // vnni=true schedules the convolutions onto the VNNI dot step (a scalar call where the host
    // lacks the instruction), vnni=false leaves the same packed stages to the default schedule.
    for (const char* t : {"llvm", "llvm -vnni=true", "llvm -vnni=false", "c"}) QTest::newRow(t) << t;
  }
  void qdq_sample_runs_compiled() {
    QFETCH(QString, target);
    const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/qdq_resnet";
    const Graph g = import_onnx(dir + ".onnx");
    auto compiled =
        compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    int dot_kernels = 0;
    for (const auto& kernel : compiled->kernels()) {
      QVERIFY2(kernel.compiled,
               qPrintable(QString::fromStdString(kernel.name + " fell back: " + kernel.fallback_reason)));
      dot_kernels += kernel.loop_program.find("tessel_intrin_dot_16x4_u8i8_i32(") != std::string::npos;
    }
    // block2's 16 -> 16 channel convolution takes the dot step; those with 8 output channels
    // (fewer than the step's 16 lanes) or 8 input channels (block2's first conv and shortcut: two
    // dot steps per pixel) keep the plain form.
    if (target.contains("vnni=true")) QCOMPARE(dot_kernels, 1);
    if (target.contains("vnni=false")) QCOMPARE(dot_kernels, 0);
    const Tensor got = compiled->run({read_tensor_pb(dir + "/input_0.pb")})[0];
    const Tensor want = read_tensor_pb(dir + "/output_0.pb");
    QCOMPARE(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i)
      QVERIFY2(
          std::abs(got.get_double(i) - want.get_double(i)) <= 1e-2,
          qPrintable(QString("element %1 is %2, expected %3").arg(i).arg(got.get_double(i)).arg(want.get_double(i))));
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersQuant)
#include "test_te_builders_quant.moc"
