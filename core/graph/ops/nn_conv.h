#pragma once
// Convolutions: Conv and ConvTranspose (ONNX opset 11 forms, N-d, grouped, dilated, padded).
#include "core/graph/ops/common.h"

namespace tessel::ops {

// The window attributes Conv and ConvTranspose share; empty lists mean "the default on every axis".
template <class V, class A>
void visit_conv_window_fields(V& v, A& a) {
  v(a.auto_pad, {.name = "auto_pad",
                 .doc = "NOTSET: use pads; SAME_UPPER/SAME_LOWER: pad so the output is ceil(in/stride) (Conv) or "
                        "in*stride (ConvTranspose), an odd padding's extra element at the end/start; VALID: no padding",
                 .def = std::string("NOTSET"),
                 .choices = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}});
  v(a.dilations, {.name = "dilations",
                  .doc = "Spacing between kernel taps per spatial axis (empty: 1)",
                  .def = std::vector<int64_t>{},
                  .min = 1});
  v(a.group, {.name = "group",
              .doc = "Number of groups the input and output channels are split into",
              .def = int64_t{1},
              .min = 1});
  v(a.kernel_shape, {.name = "kernel_shape",
                     .doc = "Kernel spatial shape (empty: taken from W)",
                     .def = std::vector<int64_t>{},
                     .min = 1});
  v(a.pads, {.name = "pads",
             .doc = "Padding [begin..., end...] per spatial axis (empty: 0)",
             .def = std::vector<int64_t>{},
             .min = 0});
  v(a.strides,
    {.name = "strides", .doc = "Stride per spatial axis (empty: 1)", .def = std::vector<int64_t>{}, .min = 1});
}

struct ConvAttrs {
  std::string auto_pad;
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape, pads, strides;
  template <class V>
  void visit(V& v) {
    visit_conv_window_fields(v, *this);
  }
};

struct ConvOp {
  using Attrs = ConvAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "N-d convolution Y = X ⋆ W + B (X: N×C×D1…, W: M×C/group×k1…, B: M); grouped, dilated, padded";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct ConvTransposeAttrs {
  std::string auto_pad;
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape, output_padding, output_shape, pads, strides;
  template <class V>
  void visit(V& v) {
    visit_conv_window_fields(v, *this);
    v(output_padding, {.name = "output_padding",
                       .doc = "Extra output elements at the end of each spatial axis",
                       .def = std::vector<int64_t>{},
                       .min = 0});
    v(output_shape, {.name = "output_shape",
                     .doc = "Output spatial shape; the pads are then derived from it",
                     .def = std::vector<int64_t>{},
                     .min = 0});
  }
};

struct ConvTransposeOp {
  using Attrs = ConvTransposeAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "N-d transposed convolution (X: N×C×D1…, W: C×M/group×k1…, B: M): each input element scatters W into the "
      "output";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

}  // namespace tessel::ops
