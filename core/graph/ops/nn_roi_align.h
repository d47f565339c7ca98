#pragma once
// RoiAlign (ONNX opset 16 form): for each region of interest, an output_height × output_width grid
// of bins over one image of X, each bin the average (or maximum) of bilinear samples on a regular
// grid of sampling_ratio × sampling_ratio points (0: ceil(roi size / output size) per axis).
//
//   X [N,C,H,W], rois [R,4] (x1, y1, x2, y2 in X's coordinates / spatial_scale), batch_indices [R]
//   -> Y [R, C, output_height, output_width]
//
// half_pixel shifts the roi by -0.5 pixel; output_half_pixel (the opset 10 behaviour) does not,
// and makes every roi at least 1 × 1. A sample more than one pixel outside X counts as 0; one
// within a pixel of the edge reads the edge. The maximum of a bin, as onnxruntime computes it, is
// the largest of the four weighted corner terms over its samples, not of the interpolated values.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct RoiAlignAttrs {
  std::string coordinate_transformation_mode = "half_pixel";
  std::string mode = "avg";
  int64_t output_height = 1, output_width = 1, sampling_ratio = 0;
  float spatial_scale = 1.0f;
  template <class V>
  void visit(V& v) {
    v(coordinate_transformation_mode, {.name = "coordinate_transformation_mode",
                                       .doc = "half_pixel: shift the roi by -0.5 pixel; output_half_pixel: do not",
                                       .def = std::string("half_pixel"),
                                       .choices = {"half_pixel", "output_half_pixel"}});
    v(mode,
      {.name = "mode", .doc = "How a bin pools its samples", .def = std::string("avg"), .choices = {"avg", "max"}});
    v(output_height, {.name = "output_height", .doc = "Bins per roi, vertically", .def = int64_t{1}, .min = 1});
    v(output_width, {.name = "output_width", .doc = "Bins per roi, horizontally", .def = int64_t{1}, .min = 1});
    v(sampling_ratio, {.name = "sampling_ratio",
                       .doc = "Samples per bin along each axis; 0: ceil(roi size / output size)",
                       .def = int64_t{0},
                       .min = 0});
    v(spatial_scale, {.name = "spatial_scale", .doc = "Scale from roi coordinates to X's", .def = 1.0f});
  }
};

struct RoiAlignOp {
  using Attrs = RoiAlignAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Pools each region of interest into a fixed grid of bilinear-sampled bins";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

}  // namespace tessel::ops
