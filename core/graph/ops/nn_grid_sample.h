#pragma once
// GridSample: X sampled at the positions a grid gives, with nearest, bilinear or bicubic
// interpolation and three rules for positions outside X.
#include <string>

#include "core/graph/ops/common.h"

namespace tessel::ops {

struct GridSampleAttrs {
  int64_t align_corners = 0;
  std::string mode = "bilinear";
  std::string padding_mode = "zeros";
  template <class V>
  void visit(V& v) {
    v(align_corners, {.name = "align_corners",
                      .doc = "1: -1 and 1 are the centres of the corner pixels; 0: their outer edges",
                      .def = int64_t{0},
                      .min = 0,
                      .max = 1});
    v(mode, {.name = "mode",
             .doc = "Interpolation (linear and cubic are opset 20's names for bilinear and bicubic)",
             .def = "bilinear",
             .choices = {"bilinear", "nearest", "bicubic", "linear", "cubic"}});
    v(padding_mode, {.name = "padding_mode",
                     .doc = "Outside X: zeros, the border pixels, or reflection at the border",
                     .def = "zeros",
                     .choices = {"zeros", "border", "reflection"}});
  }
};

// GridSample(X [N,C,H,W], grid [N,Ho,Wo,2]) -> [N,C,Ho,Wo]; grid holds (x, y) in [-1, 1].
struct GridSampleOp {
  using Attrs = GridSampleAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Samples X at the normalized (x, y) positions of grid";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

}  // namespace tessel::ops
