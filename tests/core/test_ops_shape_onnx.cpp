// The official ONNX node tests of the shape and data-movement ops, run in-process: import the model
// (inputs that feed shape operands bound to their .pb values), run the reference executor, and
// compare with the expected outputs (floats to within ONNX's own tolerance, everything else exactly).
#include <cmath>
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "test_ops_shape_helpers.h"

using namespace shape_test;
namespace fs = std::filesystem;

namespace {

const char* kNodeTestRoot = "/usr/share/libonnx-testdata/data/node";

// Every node test of the ops in core/graph/ops/shape_ops.def (without the "test_" prefix).
const char* kNodeTests[] = {"concat_1d_axis_0",
                            "concat_1d_axis_negative_1",
                            "concat_2d_axis_0",
                            "concat_2d_axis_1",
                            "concat_2d_axis_negative_1",
                            "concat_2d_axis_negative_2",
                            "concat_3d_axis_0",
                            "concat_3d_axis_1",
                            "concat_3d_axis_2",
                            "concat_3d_axis_negative_1",
                            "concat_3d_axis_negative_2",
                            "concat_3d_axis_negative_3",
                            "constant_pad",
                            "constantofshape_float_ones",
                            "constantofshape_int_shape_zero",
                            "constantofshape_int_zeros",
                            "depthtospace_crd_mode",
                            "depthtospace_crd_mode_example",
                            "depthtospace_dcr_mode",
                            "depthtospace_example",
                            "edge_pad",
                            "expand_dim_changed",
                            "expand_dim_unchanged",
                            "flatten_axis0",
                            "flatten_axis1",
                            "flatten_axis2",
                            "flatten_axis3",
                            "flatten_default_axis",
                            "flatten_negative_axis1",
                            "flatten_negative_axis2",
                            "flatten_negative_axis3",
                            "flatten_negative_axis4",
                            "gather_0",
                            "gather_1",
                            "gather_2d_indices",
                            "gather_elements_0",
                            "gather_elements_1",
                            "gather_elements_negative_indices",
                            "gather_negative_indices",
                            "range_float_type_positive_delta",
                            "range_int32_type_negative_delta",
                            "reflect_pad",
                            "reshape_allowzero_reordered",
                            "reshape_extended_dims",
                            "reshape_negative_dim",
                            "reshape_negative_extended_dims",
                            "reshape_one_dim",
                            "reshape_reduced_dims",
                            "reshape_reordered_all_dims",
                            "reshape_reordered_last_dims",
                            "reshape_zero_and_negative_dim",
                            "reshape_zero_dim",
                            "resize_downsample_scales_cubic",
                            "resize_downsample_scales_cubic_A_n0p5_exclude_outside",
                            "resize_downsample_scales_cubic_align_corners",
                            "resize_downsample_scales_linear",
                            "resize_downsample_scales_linear_align_corners",
                            "resize_downsample_scales_nearest",
                            "resize_downsample_sizes_cubic",
                            "resize_downsample_sizes_linear_pytorch_half_pixel",
                            "resize_downsample_sizes_nearest",
                            "resize_downsample_sizes_nearest_tf_half_pixel_for_nn",
                            "resize_tf_crop_and_resize",
                            "resize_upsample_scales_cubic",
                            "resize_upsample_scales_cubic_A_n0p5_exclude_outside",
                            "resize_upsample_scales_cubic_align_corners",
                            "resize_upsample_scales_cubic_asymmetric",
                            "resize_upsample_scales_linear",
                            "resize_upsample_scales_linear_align_corners",
                            "resize_upsample_scales_nearest",
                            "resize_upsample_sizes_cubic",
                            "resize_upsample_sizes_nearest",
                            "resize_upsample_sizes_nearest_ceil_half_pixel",
                            "resize_upsample_sizes_nearest_floor_align_corners",
                            "resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric",
                            "scatter_elements_with_axis",
                            "scatter_elements_with_duplicate_indices",
                            "scatter_elements_with_negative_indices",
                            "scatter_elements_without_axis",
                            "shape",
                            "shape_clip_end",
                            "shape_clip_start",
                            "shape_end_1",
                            "shape_end_negative_1",
                            "shape_example",
                            "shape_start_1",
                            "shape_start_1_end_2",
                            "shape_start_1_end_negative_1",
                            "shape_start_negative_1",
                            "size",
                            "size_example",
                            "slice",
                            "slice_default_axes",
                            "slice_default_steps",
                            "slice_end_out_of_bounds",
                            "slice_neg",
                            "slice_neg_steps",
                            "slice_negative_axes",
                            "slice_start_out_of_bounds",
                            "spacetodepth",
                            "spacetodepth_example",
                            "split_equal_parts_1d",
                            "split_equal_parts_2d",
                            "split_equal_parts_default_axis",
                            "split_variable_parts_1d",
                            "split_variable_parts_2d",
                            "split_variable_parts_default_axis",
                            "split_zero_size_splits",
                            "squeeze",
                            "squeeze_negative_axes",
                            "tile",
                            "tile_precomputed",
                            "transpose_all_permutations_0",
                            "transpose_all_permutations_1",
                            "transpose_all_permutations_2",
                            "transpose_all_permutations_3",
                            "transpose_all_permutations_4",
                            "transpose_all_permutations_5",
                            "transpose_default",
                            "unsqueeze_axis_0",
                            "unsqueeze_axis_1",
                            "unsqueeze_axis_2",
                            "unsqueeze_axis_3",
                            "unsqueeze_negative_axes",
                            "unsqueeze_three_axes",
                            "unsqueeze_two_axes",
                            "unsqueeze_unsorted_axes"};

std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + std::string(dtype_name(got.dtype())) + shape_str(got.shape()) + ", expected " +
           std::string(dtype_name(want.dtype())) + shape_str(want.shape());
  const bool exact = !dtype_is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_double(i), w = want.get_double(i);
    const bool same =
        exact ? (want.dtype() == DataType::kInt64 ? got.data<int64_t>()[i] == want.data<int64_t>()[i] : g == w)
              : std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w);
    if (!same) return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return "";
}

// Runs one node test; returns "" on success or the reason it failed.
std::string run_node_test(const std::string& name) {
  const fs::path dir = fs::path(kNodeTestRoot) / ("test_" + name);
  const std::string model = (dir / "model.onnx").string();
  try {
    const std::vector<OnnxInputInfo> infos = onnx_runtime_inputs(model);
    ImportOptions options;
    std::vector<Tensor> feeds;
    for (size_t k = 0; k < infos.size(); ++k) {
      Tensor t = read_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string());
      if (infos[k].feeds_shape_operand) options.bound_inputs[infos[k].name] = t;
      feeds.push_back(t);
    }
    Graph g = import_onnx(model, options);
    const std::vector<Tensor> outs = run_reference(g, feeds);
    size_t expected_outputs = 0;
    while (fs::exists(dir / "test_data_set_0" / ("output_" + std::to_string(expected_outputs) + ".pb")))
      ++expected_outputs;
    if (outs.size() != expected_outputs || outs.empty())
      return "produced " + std::to_string(outs.size()) + " outputs, expected " + std::to_string(expected_outputs);
    for (size_t k = 0; k < outs.size(); ++k) {
      const Tensor want = read_tensor_pb((dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")).string());
      const std::string diff = compare(outs[k], want);
      if (!diff.empty()) return "output " + std::to_string(k) + ": " + diff;
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

class TestShapeOpsOnnx : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void nodeTest_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kNodeTests) QTest::newRow(name) << QString(name);
  }
  void nodeTest() {
    QFETCH(QString, name);
    const std::string failure = run_node_test(name.toStdString());
    if (!failure.empty()) QFAIL(("test_" + name.toStdString() + ": " + failure).c_str());
  }
};

QTEST_APPLESS_MAIN(TestShapeOpsOnnx)
#include "test_ops_shape_onnx.moc"
