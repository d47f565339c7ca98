#pragma once
// Quantized inference (ONNX opsets 10-13 forms): the linear (de)quantizers and the integer
// convolution and matrix products.
//
//   QuantizeLinear     y = saturate(round_half_even(x / scale) + zero_point)    f32 → u8/i8
//   DequantizeLinear   y = (x - zero_point) · scale                             u8/i8/i32 → f32
//   ConvInteger        y = conv(x - x_zp, w - w_zp)                             → i32
//   QLinearConv        y = quantize(conv(x - x_zp, w - w_zp) + B, x_scale · w_scale / y_scale, y_zp)
//
// Scales and zero points are per tensor (one element) or per axis (one per channel, a 1-D tensor).
// Products accumulate exactly in integers; requantization multiplies the accumulator by the
// combined scale in double and rounds once, half to even, then saturates to the output type.
#include "core/graph/ops/common.h"
#include "core/graph/ops/nn_conv.h"

namespace tessel::ops {

struct QuantizeLinearAttrs {
  int64_t axis = 1, block_size = 0, saturate = 1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis",
             .doc = "The axis a 1-D scale and zero point run along (negative: from the end)",
             .def = int64_t{1}});
    v(block_size, {.name = "block_size",
                   .doc = "Blocked quantization (opset 21); only 0, none, is supported",
                   .def = int64_t{0},
                   .min = 0,
                   .max = 0});
    v(saturate, {.name = "saturate",
                 .doc = "For float8 outputs (opset 19); integer outputs always saturate",
                 .def = int64_t{1},
                 .min = 0,
                 .max = 1});
  }
};

struct QuantizeLinearOp {
  using Attrs = QuantizeLinearAttrs;
  // Injective, not broadcast: a per-axis scale is read by channel, which layout rewriting and
  // numpy-style broadcasting do not know about.
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "y = saturate(round_half_even(x / y_scale) + y_zero_point); the output type is y_zero_point's (uint8 "
      "without one); scale and zero point per tensor or per axis";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 4); }
};

struct DequantizeLinearAttrs {
  int64_t axis = 1, block_size = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis",
             .doc = "The axis a 1-D scale and zero point run along (negative: from the end)",
             .def = int64_t{1}});
    v(block_size, {.name = "block_size",
                   .doc = "Blocked quantization (opset 21); only 0, none, is supported",
                   .def = int64_t{0},
                   .min = 0,
                   .max = 0});
  }
};

struct DequantizeLinearOp {
  using Attrs = DequantizeLinearAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "y = (x - x_zero_point) · x_scale, in x_scale's type; scale and zero point per tensor or per axis";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 2); }
};

struct DynamicQuantizeLinearOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 3, max_outputs = 3;
  static constexpr const char* doc =
      "Quantizes float32 x to uint8 over the range [min(0, min x), max(0, max x)]: outputs y, y_scale and "
      "y_zero_point";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return 6 * shape_numel(t.inputs[0]->shape); }
};

struct MatMulIntegerOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 4, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "int32 matrix product of (A - a_zero_point) and (B - b_zero_point), like numpy.matmul; zero points per "
      "tensor, per row of A or per column of B";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct QLinearMatMulOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 8, max_inputs = 8, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Quantized matrix product: (a - a_zp)·(b - b_zp) in int32, requantized with a_scale·b_scale/y_scale and "
      "y_zero_point; parameters per tensor, per row of a or per column of b";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct ConvIntegerOp {
  using Attrs = ConvAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 4, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "int32 convolution of (x - x_zero_point) and (w - w_zero_point), padding with x_zero_point; w_zero_point "
      "per tensor or per output channel";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct QLinearConvOp {
  using Attrs = ConvAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 8, max_inputs = 9, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Quantized convolution: conv(x - x_zp, w - w_zp) + B in int32, requantized with x_scale·w_scale/y_scale "
      "and y_zero_point; w_scale and w_zero_point per tensor or per output channel";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

namespace quant {

// The saturation range of a quantized type: [0, 255] for uint8, [-128, 127] for int8.
struct IntRange {
  int64_t lo = 0, hi = 0;
};
IntRange int_range(DataType t);

// Whether a scale or zero point of `shape` is one value for the whole tensor.
bool per_tensor(const Shape& shape);

}  // namespace quant

}  // namespace tessel::ops
