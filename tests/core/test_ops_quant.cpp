// The quantized ops (core/graph/ops/quant_ops.def): shape inference, the reference kernels against
// values worked out by hand or by loops written here, every error message, and the ONNX node tests
// of these ops run in-process on the reference executor.
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

Tensor u8(Shape shape, const std::vector<uint8_t>& v) { return Tensor::from_values<uint8_t>(std::move(shape), v); }
Tensor i8(Shape shape, const std::vector<int8_t>& v) { return Tensor::from_values<int8_t>(std::move(shape), v); }
Tensor i32(Shape shape, const std::vector<int32_t>& v) { return Tensor::from_values<int32_t>(std::move(shape), v); }
Tensor scalar_f32(float v) { return Tensor::scalar<float>(v); }

std::vector<int64_t> ints_of(const Tensor& t) { return t.to_int64s(); }

// Deterministic 8-bit values (a 64-bit LCG), uint8 or int8 over their whole range.
Tensor random_8bit(DataType t, Shape shape, uint64_t seed) {
  Tensor out(t, std::move(shape));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < out.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t byte = static_cast<int64_t>(s >> 56);
    out.set_double(i, static_cast<double>(t == DataType::kUInt8 ? byte : byte - 128));
  }
  return out;
}

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Every node test of a quantized op (the *_expanded variants exercise the element-wise ops their
// function body is made of and run in the conformance ctests).
const char* kNodeTestNames[] = {
    "basic_convinteger",
    "convinteger_with_padding",
    "convinteger_without_padding",
    "dequantizelinear",
    "dequantizelinear_axis",
    "dynamicquantizelinear",
    "dynamicquantizelinear_max_adjusted",
    "dynamicquantizelinear_min_adjusted",
    "matmulinteger",
    "qlinearconv",
    "qlinearmatmul_2D",
    "qlinearmatmul_3D",
    "quantizelinear",
    "quantizelinear_axis",
};

Tensor read_pb(const fs::path& dir, const std::string& name) {
  return read_tensor_pb((dir / "test_data_set_0" / name).string());
}

// "" when every output equals the test's (integers exactly, floats within 1e-6 relative).
std::string run_node_test(const std::string& name) {
  const fs::path dir = kNodeTests / ("test_" + name);
  const std::string model = (dir / "model.onnx").string();
  std::vector<Tensor> feeds;
  for (size_t k = 0; k < onnx_runtime_inputs(model).size(); ++k)
    feeds.push_back(read_pb(dir, "input_" + std::to_string(k) + ".pb"));
  const std::vector<Tensor> outputs = run_reference(import_onnx(model, {}), feeds);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor want = read_pb(dir, "output_" + std::to_string(k) + ".pb");
    const Tensor& got = outputs[k];
    if (got.dtype() != want.dtype() || got.shape() != want.shape())
      return "output " + std::to_string(k) + " is " + std::string(dtype_name(got.dtype())) + shape_str(got.shape()) +
             ", expected " + std::string(dtype_name(want.dtype())) + shape_str(want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double g = got.get_double(i), w = want.get_double(i);
      if (std::abs(g - w) > 1e-6 * std::abs(w))
        return "output " + std::to_string(k) + " element " + std::to_string(i) + " is " + std::to_string(g) +
               ", expected " + std::to_string(w);
    }
  }
  return {};
}

}  // namespace

class TestOpsQuant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void quantize_rounds_half_to_even_and_saturates() {
    const Tensor x = f32({8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 1000.0f, -1000.0f});
    const Tensor y = run1("QuantizeLinear", {}, {x, scalar_f32(1.0f), Tensor::scalar<uint8_t>(128)});
    QCOMPARE(y.dtype(), DataType::kUInt8);
    QCOMPARE(ints_of(y), (std::vector<int64_t>{126, 126, 128, 128, 130, 130, 255, 0}));
    const Tensor s = run1("QuantizeLinear", {}, {x, scalar_f32(1.0f), Tensor::scalar<int8_t>(0)});
    QCOMPARE(s.dtype(), DataType::kInt8);
    QCOMPARE(ints_of(s), (std::vector<int64_t>{-2, -2, 0, 0, 2, 2, 127, -128}));
  }
  void quantize_without_zero_point_gives_uint8() {
    const Tensor y = run1("QuantizeLinear", {}, {f32({3}, {3.0f, 5.0f, -4.0f}), scalar_f32(2.0f)});
    QCOMPARE(y.dtype(), DataType::kUInt8);
    QCOMPARE(ints_of(y), (std::vector<int64_t>{2, 2, 0}));  // 1.5 → 2, 2.5 → 2, -2 saturates to 0
  }
  void quantize_per_axis() {
    // x [1,2,2]; axis 1 (the default): channel 0 scale 1 zp 0, channel 1 scale 0.5 zp -10.
    const Tensor x = f32({1, 2, 2}, {1, 2, 3, 4});
    const Tensor y = run1("QuantizeLinear", {}, {x, f32({2}, {1.0f, 0.5f}), i8({2}, {0, -10})});
    QCOMPARE(ints_of(y), (std::vector<int64_t>{1, 2, -4, -2}));
    // The same along axis -1.
    const Tensor z = run1("QuantizeLinear", {{"axis", int64_t{-1}}}, {x, f32({2}, {1.0f, 0.5f}), i8({2}, {0, -10})});
    QCOMPARE(ints_of(z), (std::vector<int64_t>{1, -6, 3, -2}));
  }
  void quantize_int32_input() {
    const Tensor y =
        run1("QuantizeLinear", {}, {i32({3}, {-300, 7, 300}), scalar_f32(2.0f), Tensor::scalar<int8_t>(1)});
    QCOMPARE(ints_of(y), (std::vector<int64_t>{-128, 5, 127}));  // 3.5 → 4, + 1
  }
  void dequantize_per_tensor_and_per_axis() {
    const Tensor y =
        run1("DequantizeLinear", {}, {u8({4}, {0, 3, 128, 255}), scalar_f32(2.0f), Tensor::scalar<uint8_t>(128)});
    QCOMPARE(y.dtype(), DataType::kFloat32);
    QCOMPARE(values(y), (std::vector<double>{-256, -250, 0, 254}));
    const Tensor a =
        run1("DequantizeLinear", {}, {i8({1, 2, 2}, {-128, 127, 0, 10}), f32({2}, {0.5f, 2.0f}), i8({2}, {0, 5})});
    QCOMPARE(values(a), (std::vector<double>{-64, 63.5, -10, 10}));
    const Tensor w = run1("DequantizeLinear", {}, {i32({2}, {-1000000, 3}), scalar_f32(0.25f)});
    QCOMPARE(values(w), (std::vector<double>{-250000, 0.75}));
  }
  void dynamic_quantize_follows_onnx() {
    // The ONNX operator documentation's example: range [-3, 2], scale 5/255, zero point 153.
    const auto out = run_op("DynamicQuantizeLinear", {}, {f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}, 3);
    QCOMPARE(out[0].dtype(), DataType::kUInt8);
    QCOMPARE(ints_of(out[0]), (std::vector<int64_t>{153, 255, 0, 26, 221, 179}));
    QCOMPARE(out[1].shape(), Shape{});
    QCOMPARE(out[1].data<float>()[0], 5.0f / 255.0f);
    QCOMPARE(ints_of(out[2]), (std::vector<int64_t>{153}));
    // All zeros: the range is empty, scale 1/255, everything 0.
    const auto zero = run_op("DynamicQuantizeLinear", {}, {f32({3}, {0, 0, 0})}, 3);
    QCOMPARE(ints_of(zero[0]), (std::vector<int64_t>{0, 0, 0}));
    QCOMPARE(zero[1].data<float>()[0], 1.0f / 255.0f);
    QCOMPARE(ints_of(zero[2]), (std::vector<int64_t>{0}));
  }
  void matmul_integer_zero_points_per_row_and_column() {
    const Tensor a = random_8bit(DataType::kUInt8, {2, 3}, 1), b = random_8bit(DataType::kInt8, {3, 4}, 2);
    const Tensor az = u8({2}, {10, 200}), bz = i8({4}, {-3, 0, 5, 127});
    const Tensor y = run1("MatMulInteger", {}, {a, b, az, bz});
    QCOMPARE(y.dtype(), DataType::kInt32);
    QCOMPARE(y.shape(), (Shape{2, 4}));
    std::vector<int64_t> want;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        int64_t s = 0;
        for (int64_t k = 0; k < 3; ++k)
          s += (static_cast<int64_t>(a.get_double(r * 3 + k)) - static_cast<int64_t>(az.get_double(r))) *
               (static_cast<int64_t>(b.get_double(k * 4 + c)) - static_cast<int64_t>(bz.get_double(c)));
        want.push_back(s);
      }
    QCOMPARE(ints_of(y), want);
  }
  void matmul_integer_broadcasts_batches() {
    const Tensor a = random_8bit(DataType::kInt8, {2, 1, 2, 3}, 3), b = random_8bit(DataType::kInt8, {3, 3, 2}, 4);
    const Tensor y = run1("MatMulInteger", {}, {a, b});
    QCOMPARE(y.shape(), (Shape{2, 3, 2, 2}));
    // Item (1, 2), row 1, column 0.
    int64_t s = 0;
    for (int64_t k = 0; k < 3; ++k) s += static_cast<int64_t>(a.get_double(6 + 3 + k) * b.get_double(12 + k * 2));
    QCOMPARE(ints_of(y)[(1 * 3 + 2) * 4 + 2], s);
  }
  void qlinear_matmul_requantizes_and_saturates() {
    // a = [[2, 4]] - 0, b = [[1], [1]] - 0: 6 · (0.5 · 1 / 0.25) = 12, + 100.
    const Tensor y =
        run1("QLinearMatMul", {},
             {u8({1, 2}, {2, 4}), scalar_f32(0.5f), Tensor::scalar<uint8_t>(0), u8({2, 1}, {1, 1}), scalar_f32(1.0f),
              Tensor::scalar<uint8_t>(0), scalar_f32(0.25f), Tensor::scalar<uint8_t>(100)});
    QCOMPARE(ints_of(y), (std::vector<int64_t>{112}));
    const Tensor big =
        run1("QLinearMatMul", {},
             {u8({1, 2}, {200, 200}), scalar_f32(1.0f), Tensor::scalar<uint8_t>(0), u8({2, 1}, {200, 200}),
              scalar_f32(1.0f), Tensor::scalar<uint8_t>(0), scalar_f32(1.0f), Tensor::scalar<int8_t>(0)});
    QCOMPARE(big.dtype(), DataType::kInt8);
    QCOMPARE(ints_of(big), (std::vector<int64_t>{127}));
  }
  void conv_integer_pads_with_the_zero_point() {
    // x is its zero point everywhere: every output, padded border included, is 0.
    const Tensor x = u8({1, 1, 3, 3}, std::vector<uint8_t>(9, 7));
    const Tensor w = u8({2, 1, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor y = run1("ConvInteger", ints("pads", {1, 1, 1, 1}), {x, w, Tensor::scalar<uint8_t>(7)});
    QCOMPARE(y.dtype(), DataType::kInt32);
    QCOMPARE(y.shape(), (Shape{1, 2, 4, 4}));
    QCOMPARE(ints_of(y), std::vector<int64_t>(32, 0));
    // Per-channel weight zero points: channel 1's weights minus 5 are [0, 1, 2, 3].
    const Tensor ones = u8({1, 1, 2, 2}, {1, 1, 1, 1});
    const Tensor z = run1("ConvInteger", {}, {ones, w, Tensor::scalar<uint8_t>(0), u8({2}, {0, 5})});
    QCOMPARE(ints_of(z), (std::vector<int64_t>{10, 6}));
  }
  void qlinear_conv_per_channel_with_bias() {
    const Tensor x = random_8bit(DataType::kUInt8, {1, 2, 4, 4}, 5), w = random_8bit(DataType::kInt8, {4, 1, 3, 3}, 6);
    const Tensor ws = f32({4}, {0.001f, 0.002f, 0.0005f, 0.003f}), b = i32({4}, {100, -2000, 0, 7});
    AttrMap attrs = ints("pads", {1, 1, 1, 1}, ints("strides", {2, 2}));
    attrs["group"] = int64_t{2};
    const float xs = 0.02f, ys = 0.05f;
    const Tensor y = run1("QLinearConv", attrs,
                          {x, scalar_f32(xs), Tensor::scalar<uint8_t>(120), w, ws, i8({4}, {0, 1, -1, 2}),
                           scalar_f32(ys), Tensor::scalar<int8_t>(-5), b});
    QCOMPARE(y.dtype(), DataType::kInt8);
    QCOMPARE(y.shape(), (Shape{1, 4, 2, 2}));
    const int64_t wzp[4] = {0, 1, -1, 2};
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t oy = 0; oy < 2; ++oy)
        for (int64_t ox = 0; ox < 2; ++ox) {
          int64_t acc = static_cast<int64_t>(b.get_double(m));
          const int64_t c = m / 2;  // group of two output channels per input channel
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
              if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
              acc += (static_cast<int64_t>(x.get_double((c * 4 + iy) * 4 + ix)) - 120) *
                     (static_cast<int64_t>(w.get_double(m * 9 + ky * 3 + kx)) - wzp[m]);
            }
          const double q = std::nearbyint(static_cast<double>(acc) * (double(xs) * ws.get_double(m) / double(ys))) - 5;
          QCOMPARE(static_cast<double>(ints_of(y)[(m * 2 + oy) * 2 + ox]), std::clamp(q, -128.0, 127.0));
        }
  }
  void inference_shapes() {
    const auto conv = infer_op("QLinearConv", ints("strides", {2, 2}),
                               {{DataType::kUInt8, {1, 3, 8, 8}},
                                {DataType::kFloat32, {}},
                                {DataType::kUInt8, {}},
                                {DataType::kInt8, {6, 3, 3, 3}},
                                {DataType::kFloat32, {6}},
                                {DataType::kInt8, {6}},
                                {DataType::kFloat32, {}},
                                {DataType::kUInt8, {}}});
    QCOMPARE(conv[0], (TensorType{DataType::kUInt8, {1, 6, 3, 3}}));
    const auto mm = infer_op("MatMulInteger", {}, {{DataType::kInt8, {5, 2, 7}}, {DataType::kUInt8, {7}}});
    QCOMPARE(mm[0], (TensorType{DataType::kInt32, {5, 2}}));
    const auto dq = infer_op("DequantizeLinear", {}, {{DataType::kInt8, {2, 3}}, {DataType::kFloat16, {}}});
    QCOMPARE(dq[0], (TensorType{DataType::kFloat16, {2, 3}}));
  }
  void errors_name_the_problem() {
    const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    QVERIFY(error_of("QuantizeLinear", {}, {x, f32({2}, {1, 1})})
                .contains("QuantizeLinear: y_scale has shape [2]; expected one value or a 1-D tensor of 3 (axis 1 of "
                          "[2,3])"));
    QVERIFY(error_of("QuantizeLinear", {{"axis", int64_t{2}}}, {x, f32({3}, {1, 1, 1})})
                .contains("axis 2 is out of range"));
    QVERIFY(error_of("QuantizeLinear", {}, {x, scalar_f32(1), scalar_f32(0)}).contains("y_zero_point has dtype f32"));
    QVERIFY(error_of("QuantizeLinear", {}, {x, f32({3}, {1, 1, 1}), u8({2}, {0, 0})})
                .contains("y_zero_point has shape [2] but y_scale has [3]"));
    QVERIFY(error_of("QuantizeLinear", {{"block_size", int64_t{2}}}, {x, scalar_f32(1)}).contains("block_size"));
    QVERIFY(error_of("DequantizeLinear", {}, {u8({2}, {1, 2}), scalar_f32(1), Tensor::scalar<int8_t>(0)})
                .contains("x_zero_point has dtype i8 but x has u8"));
    QVERIFY(error_of("DequantizeLinear", {}, {x, scalar_f32(1)}).contains("x has dtype f32"));
    QVERIFY(error_of("MatMulInteger", {}, {u8({2, 3}, {1, 2, 3, 4, 5, 6}), u8({2, 3}, {1, 2, 3, 4, 5, 6})})
                .contains("MatMulInteger: MatMul: inner dimensions differ"));
    QVERIFY(error_of("MatMulInteger", {}, {u8({2, 3}, {1, 2, 3, 4, 5, 6}), u8({3}, {1, 2, 3}), u8({3}, {0, 0, 0})})
                .contains("A's zero point [3] must be one value or one per row of A [2,3]"));
    QVERIFY(error_of("ConvInteger", {},
                     {u8({1, 1, 3, 3}, std::vector<uint8_t>(9, 1)), u8({1, 2, 2, 2}, std::vector<uint8_t>(8, 1))})
                .contains("ConvInteger: Conv: input channels 1 do not match weight channels 2"));
    QVERIFY(error_of("ConvInteger", {},
                     {u8({1, 1, 3, 3}, std::vector<uint8_t>(9, 1)), u8({2, 1, 2, 2}, std::vector<uint8_t>(8, 1)),
                      Tensor::scalar<uint8_t>(0), u8({3}, {0, 0, 0})})
                .contains("w_zero_point has shape [3]; expected one value or one per output channel ([2])"));
    const Tensor one = scalar_f32(1);
    const Tensor zp = Tensor::scalar<uint8_t>(0);
    QVERIFY(error_of("QLinearConv", {},
                     {u8({1, 1, 3, 3}, std::vector<uint8_t>(9, 1)), one, zp,
                      u8({2, 1, 2, 2}, std::vector<uint8_t>(8, 1)), one, zp, one, zp, f32({2}, {0, 0})})
                .contains("B has dtype f32"));
    QVERIFY(error_of("QLinearMatMul", {},
                     {u8({2, 3}, {1, 2, 3, 4, 5, 6}), one, zp, u8({3, 1}, {1, 2, 3}), one, zp, f32({2}, {1, 1}), zp})
                .contains("y_scale must be one value"));
  }
  void onnx_node_test_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kNodeTestNames) QTest::newRow(name) << QString(name);
  }
  void onnx_node_test() {
    QFETCH(QString, name);
    std::string failure;
    try {
      failure = run_node_test(name.toStdString());
    } catch (const Error& e) {
      failure = e.what();
    }
    QVERIFY2(failure.empty(), ("test_" + name.toStdString() + ": " + failure).c_str());
  }
};

QTEST_APPLESS_MAIN(TestOpsQuant)
#include "test_ops_quant.moc"
