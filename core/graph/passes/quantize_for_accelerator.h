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
//   %acc = MatMulInteger(%a, %wt)                          [N'/n, N·M', n] int32: offloaded
//   %r   = Reshape(Transpose(Reshape(%acc, [N'/n, N, M', n]), [1, 2, 0, 3]), [N, M', N'])   untiled
//   %y   = Transpose(Reshape(Add(Mul(Cast(Slice(%r)), %s·%sw), %b), [N, OH, OW, O]), NCHW)
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
// wq[k, o] = round(w[o, k] / sw[o]) ([K', N'], the core's weight operand). The int32 products are
// requantized on the host (Cast, Mul by %s·%sw, Add the float bias), where they fuse with what
// follows (Relu, the residual Add). A Gemm or MatMul is the same with one image of M rows.
//
// The layout (the TVM paper's layout transformation to an accelerator's blocks, here the GEMM
// core's n×n tile): the accelerator's DRAM moves whole bursts (accel-sim's dram_burst_bytes, 64),
// so a LOAD of a row-major [K', N'] weight tile, n·t rows of n bytes N' apart, pays a whole burst
// for every 16-byte row. The pass lays the weights out as columns of tiles,
//
//   wq: [K', N'] ──▶ %wt: [N'/n, K', n]    %wt[t, k, j] = wq[k, t·n + j]   (a constant: no cost)
//
// so each n×n tile is contiguous and a column's tiles follow each other: a weight LOAD of n·t
// rows is one run. The product is then a broadcast MatMulInteger whose result comes out tiled
// the same way, [N'/n, N·M', n] (an output tile's n rows of n int32 are one run); the host undoes
// it (the Reshape, Transpose, Reshape named `*_tiled_layout_*` in the graph) in the kernel that
// requantizes. The im2col rows stay rows: the product has one reduction axis, so a row must hold
// all of K' (a tile-major input, [M'/n][K'/n][n][n], needs a second reduction axis across the
// tiles); an input tile's rows are n·t bytes (up to 128 at n = 16), which fill their bursts but
// for the edges. The target option gemm_layout=rows keeps the row-major weights and result
// ([K', N'] and [N·M', N']).
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
