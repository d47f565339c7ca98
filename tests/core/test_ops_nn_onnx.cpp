// The official ONNX node tests of the neural-network ops (core/graph/ops/nn.def), run in-process:
// import model.onnx, feed test_data_set_0/input_K.pb to the reference executor, and compare every
// output with output_K.pb (floats within the ONNX backend tolerance rtol 1e-3, atol 1e-7; integers
// exactly).
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Every node test of an op in nn.def, without the "test_" prefix. Left out: the *_expanded
// variants (they exercise the element-wise ops a function body is made of) and
// batchnorm_*_training_mode (refused on purpose; see training_mode_tests_are_refused), and the
// tests saved at opsets below 7, which the importer refuses (see kOldOpsetTests).
const char* kTests[] = {
    "averagepool_1d_default",
    "averagepool_2d_ceil",
    "averagepool_2d_default",
    "averagepool_2d_pads",
    "averagepool_2d_pads_count_include_pad",
    "averagepool_2d_precomputed_pads",
    "averagepool_2d_precomputed_pads_count_include_pad",
    "averagepool_2d_precomputed_same_upper",
    "averagepool_2d_precomputed_strides",
    "averagepool_2d_same_lower",
    "averagepool_2d_same_upper",
    "averagepool_2d_strides",
    "averagepool_3d_default",
    "basic_conv_with_padding",
    "basic_conv_without_padding",
    "batchnorm_epsilon",
    "batchnorm_example",
    "conv_with_autopad_same",
    "conv_with_strides_and_asymmetric_padding",
    "conv_with_strides_no_padding",
    "conv_with_strides_padding",
    "convtranspose",
    "convtranspose_1d",
    "convtranspose_3d",
    "convtranspose_autopad_same",
    "convtranspose_dilations",
    "convtranspose_kernel_shape",
    "convtranspose_output_shape",
    "convtranspose_pad",
    "convtranspose_pads",
    "convtranspose_with_kernel",
    "gemm_all_attributes",
    "gemm_alpha",
    "gemm_beta",
    "gemm_default_matrix_bias",
    "gemm_default_no_bias",
    "gemm_default_scalar_bias",
    "gemm_default_single_elem_vector_bias",
    "gemm_default_vector_bias",
    "gemm_default_zero_bias",
    "gemm_transposeA",
    "gemm_transposeB",
    "hardmax_axis_0",
    "hardmax_axis_1",
    "hardmax_axis_2",
    "hardmax_default_axis",
    "hardmax_example",
    "hardmax_negative_axis",
    "hardmax_one_hot",
    "layer_normalization_2d_axis0",
    "layer_normalization_2d_axis1",
    "layer_normalization_2d_axis_negative_1",
    "layer_normalization_2d_axis_negative_2",
    "layer_normalization_3d_axis0_epsilon",
    "layer_normalization_3d_axis1_epsilon",
    "layer_normalization_3d_axis2_epsilon",
    "layer_normalization_3d_axis_negative_1_epsilon",
    "layer_normalization_3d_axis_negative_2_epsilon",
    "layer_normalization_3d_axis_negative_3_epsilon",
    "layer_normalization_4d_axis0",
    "layer_normalization_4d_axis1",
    "layer_normalization_4d_axis2",
    "layer_normalization_4d_axis3",
    "layer_normalization_4d_axis_negative_1",
    "layer_normalization_4d_axis_negative_2",
    "layer_normalization_4d_axis_negative_3",
    "layer_normalization_4d_axis_negative_4",
    "layer_normalization_default_axis",
    "logsoftmax_axis_0",
    "lrn",
    "lrn_default",
    "mvn",
    "logsoftmax_axis_1",
    "logsoftmax_axis_2",
    "logsoftmax_default_axis",
    "logsoftmax_example_1",
    "logsoftmax_large_number",
    "logsoftmax_negative_axis",
    "matmul_2d",
    "matmul_3d",
    "matmul_4d",
    "maxpool_1d_default",
    "maxpool_2d_ceil",
    "maxpool_2d_default",
    "maxpool_2d_dilations",
    "maxpool_2d_pads",
    "maxpool_2d_precomputed_pads",
    "maxpool_2d_precomputed_same_upper",
    "maxpool_2d_precomputed_strides",
    "maxpool_2d_same_lower",
    "maxpool_2d_same_upper",
    "maxpool_2d_strides",
    "maxpool_2d_uint8",
    "maxpool_3d_default",
    "maxpool_with_argmax_2d_precomputed_pads",
    "maxpool_with_argmax_2d_precomputed_strides",
    "softmax_axis_0",
    "softmax_axis_1",
    "softmax_axis_2",
    "softmax_default_axis",
    "softmax_example",
    "softmax_large_number",
    "softmax_negative_axis",
};

// Node tests whose model.onnx has an opset below 7 (GlobalAveragePool/GlobalMaxPool at 1,
// InstanceNormalization at 6): the importer refuses them, so the node is built by hand here with
// the attributes the model holds, and fed the same .pb files.
struct OldOpsetTest {
  const char* name;
  const char* op;
  double epsilon;  // InstanceNormalization only; < 0: no attributes
};
const OldOpsetTest kOldOpsetTests[] = {
    {"globalaveragepool", "GlobalAveragePool", -1},
    {"globalaveragepool_precomputed", "GlobalAveragePool", -1},
    {"globalmaxpool", "GlobalMaxPool", -1},
    {"globalmaxpool_precomputed", "GlobalMaxPool", -1},
    {"instancenorm_epsilon", "InstanceNormalization", 0.01},
    {"instancenorm_example", "InstanceNormalization", -1},
};

std::string mismatch(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + std::string(dtype_name(got.dtype())) + shape_str(got.shape()) + ", expected " +
           std::string(dtype_name(want.dtype())) + shape_str(want.shape());
  const bool is_float = dtype_is_float(want.dtype());
  const std::vector<int64_t> got_ints = is_float ? std::vector<int64_t>{} : got.to_int64s();
  const std::vector<int64_t> want_ints = is_float ? std::vector<int64_t>{} : want.to_int64s();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_double(i), w = want.get_double(i);
    const bool ok = is_float ? std::abs(g - w) <= 1e-7 + 1e-3 * std::abs(w) : got_ints[i] == want_ints[i];
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return {};
}

Tensor read_pb(const fs::path& dir, const char* kind, size_t k) {
  return read_tensor_pb((dir / "test_data_set_0" / (kind + std::to_string(k) + ".pb")).string());
}

// "" when every output matches; otherwise why not.
std::string run_node_test(const std::string& name) {
  const fs::path dir = kNodeTests / ("test_" + name);
  const std::string model = (dir / "model.onnx").string();
  const std::vector<OnnxInputInfo> inputs = onnx_runtime_inputs(model);
  ImportOptions options;
  std::vector<Tensor> feeds;
  for (size_t k = 0; k < inputs.size(); ++k) {
    feeds.push_back(read_pb(dir, "input_", k));
    if (inputs[k].feeds_shape_operand) options.bound_inputs[inputs[k].name] = feeds.back();
  }
  const std::vector<Tensor> outputs = run_reference(import_onnx(model, options), feeds);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!fs::exists(dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")))
      return "produced output " + std::to_string(k) + ", which the test does not expect";
    const std::string diff = mismatch(outputs[k], read_pb(dir, "output_", k));
    if (!diff.empty()) return "output " + std::to_string(k) + ": " + diff;
  }
  if (fs::exists(dir / "test_data_set_0" / ("output_" + std::to_string(outputs.size()) + ".pb")))
    return "produced " + std::to_string(outputs.size()) + " outputs; the test expects more";
  return {};
}

}  // namespace

class TestOpsNnOnnx : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void node_test_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kTests) QTest::newRow(name) << QString(name);
  }
  void node_test() {
    QFETCH(QString, name);
    std::string failure;
    try {
      failure = run_node_test(name.toStdString());
    } catch (const Error& e) {
      failure = e.what();
    }
    QVERIFY2(failure.empty(), ("test_" + name.toStdString() + ": " + failure).c_str());
  }
  void old_opset_node_test_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < std::size(kOldOpsetTests); ++i) QTest::newRow(kOldOpsetTests[i].name) << int(i);
  }
  void old_opset_node_test() {
    QFETCH(int, index);
    const OldOpsetTest& test = kOldOpsetTests[index];
    const fs::path dir = kNodeTests / ("test_" + std::string(test.name));
    std::vector<Tensor> inputs;
    while (fs::exists(dir / "test_data_set_0" / ("input_" + std::to_string(inputs.size()) + ".pb")))
      inputs.push_back(read_pb(dir, "input_", inputs.size()));
    AttrMap attrs;
    if (test.epsilon >= 0) attrs["epsilon"] = test.epsilon;
    const std::string diff = mismatch(run1(test.op, attrs, inputs), read_pb(dir, "output_", 0));
    QVERIFY2(diff.empty(), diff.c_str());
  }
  void training_mode_tests_are_refused() {
    for (const char* name : {"batchnorm_example_training_mode", "batchnorm_epsilon_training_mode"}) {
      QString message;
      try {
        run_node_test(name);
      } catch (const Error& e) {
        message = QString::fromStdString(e.what());
      }
      QVERIFY2(message.contains("training_mode=1 is not supported"), qPrintable(message));
    }
  }
};

QTEST_APPLESS_MAIN(TestOpsNnOnnx)
#include "test_ops_nn_onnx.moc"
