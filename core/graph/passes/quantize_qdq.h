#pragma once
// Quantized operators from QDQ patterns: a float Conv or MatMul whose operands are dequantized
// 8-bit tensors and whose result is quantized again becomes one integer op that accumulates in
// int32 and requantizes once. Runs before fold_constants, which would otherwise fold the weights'
// DequantizeLinear into float constants and leave a float convolution.
//
//   %x = DequantizeLinear(%xq, %sx, %zx)
//   %w = DequantizeLinear(%wq, %sw, %zw) {axis=0}
//   %b = DequantizeLinear(%bq, %sb, %zb) {axis=0}      %y = QLinearConv(%xq, %sx, %zx, %wq, %sw, %zw,
//   %c = Conv(%x, %w, %b)                         →                     %sy, %zy, %bq)
//   %r = Relu(%c)
//   %y = QuantizeLinear(%r, %sy, %zy)
//
// MatMul becomes QLinearMatMul the same way (no bias). A Conv of dequantized operands whose float
// result is not quantized again (it feeds a float residual Add) still accumulates in integers:
//
//   %c = Conv(%x, %w, %b)      →      %c = Mul(Cast(Add(ConvInteger(%xq, %wq, %zx, %zw), %bq), f32),
//                                              sx·sw)        (per channel, shaped [M,1,1])
//
// Each rewrite is made only when it computes what the float graph computes, up to the rounding of
// the float products:
// - the scales and zero points are constants: x and y per tensor; w per tensor or per output
//   channel (axis 0 for Conv, the last axis of a matrix b for MatMul);
// - the bias is an int32 tensor dequantized with zero point 0 and scale sx·sw (per channel,
//   within float32 rounding), which is how QLinearConv reads its B;
// - the float results between the Conv and the QuantizeLinear (the Conv's, the Relu's) have no
//   other reader (otherwise the Conv alone becomes ConvInteger); a DequantizeLinear read
//   elsewhere too stays for those readers;
// - a Relu is folded only when the output zero point is the bottom of its type (0 for uint8,
//   -128 for int8): QuantizeLinear is monotonic and maps 0 to the zero point, so quantize(relu(c))
//   = max(quantize(c), zy), which saturation already gives when zy is the type's minimum. Any other
//   zero point would need a Max on 8-bit integers, which Tessel does not compile: the Conv then
//   becomes ConvInteger and the Relu and QuantizeLinear stay;
// - Conv is 2-D (the integer convolution compiles only in 2-D; others would fall back).
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool quantize_qdq(Graph& g, PassContext& ctx);

}  // namespace tessel
