#pragma once
// Quantizing for an accelerator's int8 GEMM core (a target with the `gemm` option: accel-sim).
// Every float Conv (2-D, one group, constant weights) and every Gemm or MatMul with a constant
// 2-D weight becomes one int8 matrix product, the kernel shape the accelerator's default schedule
// tensorizes (schedule::default_accel_schedule), with host kernels before and after it:
//
//   %y = Conv(%x, %w, %b)
//                     │
//                     ▼
//   %s   = Max(ReduceMax(Abs(%x)) / 127, tiny)            activation scale, per tensor, calibrated
//   %xq  = QuantizeLinear(%x, %s, 0:i8)                    on the run's own input (symmetric int8)
//   %xf  = Pad(Reshape(%xq, [N, C·H·W]), [0, 0, 0, 1])      one zero after each image
//   %a   = Reshape(Gather(%xf, %rows, axis=1), [N·M', K'])  im2col: a row per output pixel
//   %acc = MatMulInteger(%a, %wq)                          [N·M', N'] int32: offloaded
//   %y   = Transpose(Reshape(Add(Mul(Cast(Slice(%acc)), %s·%sw), %b), [N, OH, OW, O]), NCHW)
//
// Why im2col tiles from a Gather rather than a LOAD with strides: the LOAD instruction reads 2-D
// tiles, and a convolution's window is 3-D (channels × rows × columns) with zero padding on two
// sides, so each GEMM input tile would need C·KH LOADs of KW bytes (a 3x3 conv: 3-byte rows, the
// DRAM latency paid for every one). The index table `%rows` (a constant, [M', K']) puts every
// window in one contiguous row of K' bytes instead; padding, and the extra rows and columns that
// round M, K and N up to the core's n, all read the zero after the image:
//
//   x: C×H×W ─flat─▶ [x0 x1 ... x(CHW-1) 0]      %rows[r, k] = c·H·W + iy·W + ix   (inside)
//                                      ▲                      = C·H·W             (padding, r ≥ M, k ≥ K)
//                                      └──────── the zero
//
// Weights are quantized per output channel, symmetric: sw[o] = max|w[o, ...]| / 127,
// wq[k, o] = round(w[o, k] / sw[o]) (laid out [K', N'], the core's weight operand). The int32
// products are requantized on the host (Cast, Mul by %s·%sw, Add the float bias), where they fuse
// with what follows (Relu, the residual Add). A Gemm or MatMul is the same with one image of M
// rows.
//
// A QDQ model's integer convolutions (ConvInteger, QLinearConv: quantize_qdq) keep the scales the
// model declares: its int8 weights (zero point 0) are the core's operand as they are; a uint8 input
// becomes int8 by -128, exactly (DequantizeLinear with zero point 128, QuantizeLinear with 0), and
// Σ (x - zx)·w = Σ (x - 128)·w + (128 - zx)·Σ w adds a constant per channel (with QLinearConv's
// bias); padding reads zx - 128, the input's zero. QLinearConv is requantized on the host:
// QuantizeLinear(acc · sx·sw/sy, 1, zy).
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool quantize_for_accelerator(Graph& g, PassContext& ctx);

}  // namespace tessel
