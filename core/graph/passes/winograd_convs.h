#pragma once
// Winograd convolution: a 3x3 stride-1 conv2d_nchwc (made by transform_layout) becomes an input
// transform, A² independent matrix products with pre-transformed weights, and an output transform
// that keeps the conv's bias and takes its epilogue (ReLU, a residual Add) when fused:
//
//   X ──conv2d_nchwc(W 3x3, B)──▶ Y          X ──winograd_input_transform──▶ V [36, T, C]
//                                     ==>     V ──MatMul(U [36, C, K] = G W Gᵀ, a constant)──▶ M
//                                             M ──winograd_output_transform(B)──▶ Y
//
// F(4x4, 3x3) takes 36 multiply-adds per 16 outputs and channel pair where the direct conv takes
// 144 (4x fewer); the transforms add a pass over the input and the output. When it applies:
//   - group 1, kernel 3x3, stride 1, dilation 1, constant f32 weights, padding at most 2;
//   - at least 16 input and 16 output channels (below that the products are too narrow to pay for
//     the transforms);
//   - tiles of 4 whose padding past the edge wastes at most a quarter of the work, else tiles of
//     2 under the same bound, else none. ResNet-18 at 56 and 28: tiles of 4; at 14 (tiles of 4
//     would compute 16x16, 1.31x): tiles of 2, measured 2.9 against 3.1 ms per conv;
//   - the transformed weights (36 or 16 per 9 of the 3x3 ones), at most 16 MiB. ResNet's
//     512-channel convs would each need 37.7 MB, streamed from memory on every run: measured
//     6.8 ms for their products against 5.4 ms for the direct conv.
// F(4, 3) rounds differently from the direct sum: its transforms scale values by up to 8 and
// back, so results differ in the last bits (relative error about 1e-6 of the output's scale).
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool winograd_convs(Graph& g, PassContext& ctx);

}  // namespace tessel
