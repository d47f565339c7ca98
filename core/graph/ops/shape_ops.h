#pragma once
// Shape and data-movement ops: they change how elements are arranged, never their values (Resize
// and Range aside). Semantics are those of the ONNX opset 13-17 forms; parameters that shape the
// output (Reshape's shape, Slice's starts, Pad's pads, ...) are inputs listed in shape_inputs.
// Element copies go through shape_copy.h, so every dtype is supported by moving bytes.
#include <limits>

#include "core/graph/ops/common.h"

namespace tessel::ops {

// Base of the ops that only move elements: no floating-point operations.
struct DataMovement {
  template <class A>
  static int64_t flops(const A&, const OpTypes&) {
    return 0;
  }
};

// ---- Reshaping without moving elements -------------------------------------------------------

struct ReshapeAttrs {
  int64_t allowzero = 0;
  template <class V>
  void visit(V& v) {
    v(allowzero, {.name = "allowzero",
                  .doc = "1: a 0 in `shape` means a dimension of size 0; 0: it copies the input's dimension",
                  .def = 0,
                  .min = 0,
                  .max = 1});
  }
};
struct ReshapeOp : DataMovement {
  using Attrs = ReshapeAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Same elements in a new shape (-1 infers one dimension, 0 copies one)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct FlattenAttrs {
  int64_t axis = 1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Dimensions before it form the rows, the rest the columns (-r..r)", .def = 1});
  }
};
struct FlattenOp : DataMovement {
  using Attrs = FlattenAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Reshapes to 2-D [prod(dims before axis), prod(dims from axis)]";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct SqueezeOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Removes the size-1 dimensions listed in `axes` (input 1), or all of them";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct UnsqueezeOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Inserts size-1 dimensions at `axes` (input 1; positions in the output)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

// ---- Reordering ------------------------------------------------------------------------------

struct TransposeAttrs {
  std::vector<int64_t> perm;
  template <class V>
  void visit(V& v) {
    v(perm, {.name = "perm",
             .doc = "Output axis k is input axis perm[k]; empty reverses the axes",
             .def = std::vector<int64_t>{}});
  }
};
struct TransposeOp : DataMovement {
  using Attrs = TransposeAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Permutes the axes";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct DepthToSpaceAttrs {
  int64_t blocksize = 1;
  std::string mode = "DCR";
  template <class V>
  void visit(V& v) {
    v(blocksize, {.name = "blocksize", .doc = "Side of the square block moved out of the channels", .min = 1});
    v(mode, {.name = "mode",
             .doc = "Channel order: depth-column-row or column-row-depth",
             .def = "DCR",
             .choices = {"DCR", "CRD"}});
  }
};
struct DepthToSpaceOp : DataMovement {
  using Attrs = DepthToSpaceAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "[N, C*b*b, H, W] → [N, C, H*b, W*b]";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct SpaceToDepthAttrs {
  int64_t blocksize = 1;
  template <class V>
  void visit(V& v) {
    v(blocksize, {.name = "blocksize", .doc = "Side of the square block moved into the channels", .min = 1});
  }
};
struct SpaceToDepthOp : DataMovement {
  using Attrs = SpaceToDepthAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "[N, C, H*b, W*b] → [N, C*b*b, H, W]";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

// Tessel's own: converts between data layouts (core/graph/layout.h), e.g. NCHW → NCHW16c.
struct LayoutTransformAttrs {
  std::string src_layout, dst_layout;
  std::vector<int64_t> logical_shape;
  template <class V>
  void visit(V& v) {
    v(src_layout, {.name = "src_layout", .doc = "Layout of the input, e.g. NCHW"});
    v(dst_layout, {.name = "dst_layout", .doc = "Layout of the output, e.g. NCHW16c"});
    v(logical_shape, {.name = "logical_shape",
                      .doc = "Unpadded extent of each primal axis in dst_layout's order (the output shape when "
                             "dst_layout has no sub-axes), so merging a padded axis drops the padding; empty: "
                             "taken from the input",
                      .def = std::vector<int64_t>{}});
  }
};
struct LayoutTransformOp : DataMovement {
  using Attrs = LayoutTransformAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Rearranges a tensor from src_layout to dst_layout (split axes are zero-padded)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

// ---- Joining and splitting -------------------------------------------------------------------

struct ConcatAttrs {
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to join along (-r..r-1)"});
  }
};
struct ConcatOp : DataMovement {
  using Attrs = ConcatAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 1 << 20, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Joins tensors of equal rank along an axis";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct SplitAttrs {
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to split (-r..r-1)", .def = 0});
  }
};
struct SplitOp : DataMovement {
  using Attrs = SplitAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 2, min_outputs = 1, max_outputs = 1 << 20;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Splits along an axis into the lengths of `split` (input 1) or equal parts";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

// ---- Selecting -------------------------------------------------------------------------------

struct SliceOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 3, max_inputs = 5, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1, 2, 3, 4};
  static constexpr const char* doc = "data[starts:ends:steps] along `axes` (inputs 1-4; clamped like Python)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct GatherAttrs {
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis the indices select on", .def = 0});
  }
};
struct GatherOp : DataMovement {
  using Attrs = GatherAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Selects slices along an axis by index (negative indices count from the end)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct GatherElementsOp : DataMovement {
  using Attrs = GatherAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "out[i][j] = data[indices[i][j]][j] (for axis 0): element-wise gather";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct ScatterElementsAttrs {
  int64_t axis = 0;
  std::string reduction = "none";
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis the indices address", .def = 0});
    v(reduction, {.name = "reduction",
                  .doc = "How an update combines with the existing element",
                  .def = "none",
                  .choices = {"none", "add", "mul"}});
  }
};
struct ScatterElementsOp {
  using Attrs = ScatterElementsAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Copy of data with out[indices[i][j]][j] = updates[i][j] (for axis 0)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

// ---- Growing ---------------------------------------------------------------------------------

struct ExpandOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Broadcasts to broadcast(input shape, `shape`) (input 1)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct TileOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Repeats the tensor `repeats[k]` times along each axis k (input 1)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct PadAttrs {
  std::string mode = "constant";
  template <class V>
  void visit(V& v) {
    v(mode, {.name = "mode",
             .doc = "Values of the new elements: a constant, a mirror image, or the edge",
             .def = "constant",
             .choices = {"constant", "reflect", "edge"}});
  }
};
struct PadOp : DataMovement {
  using Attrs = PadAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Pads (or, for negative pads, crops) each axis; pads = [begins..., ends...]";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct ResizeAttrs {
  std::string coordinate_transformation_mode = "half_pixel";
  float cubic_coeff_a = -0.75f;
  int64_t exclude_outside = 0;
  float extrapolation_value = 0.0f;
  std::string mode = "nearest";
  std::string nearest_mode = "round_prefer_floor";
  template <class V>
  void visit(V& v) {
    v(coordinate_transformation_mode, {.name = "coordinate_transformation_mode",
                                       .doc = "How an output coordinate maps to an input coordinate",
                                       .def = "half_pixel",
                                       .choices = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                                   "tf_half_pixel_for_nn", "tf_crop_and_resize"}});
    v(cubic_coeff_a, {.name = "cubic_coeff_a", .doc = "The A of cubic convolution interpolation", .def = -0.75f});
    v(exclude_outside, {.name = "exclude_outside",
                        .doc = "1: weights of taps outside the input are zeroed and the rest renormalised",
                        .def = 0,
                        .min = 0,
                        .max = 1});
    v(extrapolation_value, {.name = "extrapolation_value",
                            .doc = "Value of outputs that map outside the input (tf_crop_and_resize)",
                            .def = 0.0f});
    v(mode, {.name = "mode", .doc = "Interpolation", .def = "nearest", .choices = {"nearest", "linear", "cubic"}});
    v(nearest_mode, {.name = "nearest_mode",
                     .doc = "Rounding of the input coordinate in nearest mode",
                     .def = "round_prefer_floor",
                     .choices = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}});
  }
};
struct ResizeOp {
  using Attrs = ResizeAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 4, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {2, 3};
  static constexpr const char* doc = "Resamples every axis by `scales` (input 2) or to `sizes` (input 3)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

// ---- Values computed from shapes ---------------------------------------------------------------

struct ShapeAttrs {
  int64_t start = 0;
  int64_t end = std::numeric_limits<int64_t>::max();
  template <class V>
  void visit(V& v) {
    v(start, {.name = "start", .doc = "First axis to report (negative counts from the end; clamped)", .def = 0});
    v(end, {.name = "end",
            .doc = "One past the last axis to report (negative counts from the end; clamped)",
            .def = std::numeric_limits<int64_t>::max()});
  }
};
struct ShapeOp : DataMovement {
  using Attrs = ShapeAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "The input's shape as a 1-D int64 tensor (optionally a range of axes)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct SizeOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "The input's element count as an int64 scalar";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

Tensor default_constant_of_shape_value();  // f32[1] {0}
struct ConstantOfShapeAttrs {
  Tensor value;
  template <class V>
  void visit(V& v) {
    v(value, {.name = "value",
              .doc = "One-element tensor giving the fill value and the output dtype",
              .def = default_constant_of_shape_value()});
  }
};
struct ConstantOfShapeOp : DataMovement {
  using Attrs = ConstantOfShapeAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0};
  static constexpr const char* doc = "A tensor of the shape given by input 0, filled with `value`";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

struct RangeOp : DataMovement {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0, 1, 2};
  static constexpr const char* doc = "start, start+delta, ... up to (excluding) limit; inputs are scalars";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
};

}  // namespace tessel::ops
