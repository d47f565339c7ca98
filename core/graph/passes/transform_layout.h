#pragma once
// Data layout transformation: picks, for every tensor, the memory layout its consumers compute
// best in, and inserts layout_transform where a producer and a consumer disagree.
//
//          NCHW         NCHW3c          NCHW16c               NCHW16c        NCHW16c   NCHW
//   %x ─────────▶ [lt] ───────▶ conv2d_nchwc ───▶ Add(bias') ───▶ Relu ───▶ MaxPool ──▶ … ──▶ [lt] ──▶ Flatten
//                  ▲ inserted      ▲ W' = W in OIHW3i16o (constant, pre-transformed)               ▲ inserted
//
// 1. Each op says what layout it wants for the target: a 2-D Conv (group 1, constant weights)
//    computes in NCHW{c}c with c = two vectors of the target (vector_bits / 32 floats each, so 32
//    for AVX-512) when the channel count is a multiple of that, else one vector or the largest
//    divisor of the channel count below it; its input keeps the block it has when that divides
//    the channels. It becomes conv2d_nchwc with weights pre-transformed to OIHW{i}i{o}o as
//    constants. A depthwise Conv
//    (group = channels) whose input is already blocked stays in that block (weights OIHW{c}o),
//    so MobileNet's expand → depthwise → project chain has no layout_transform inside.
//    A MatMul by constant 2-D weights with at least 4 rows becomes matmul_packed, the weights
//    packed in panels one register tile wide (core/target/register_tile.h): [N/b, K, b], layout
//    NK{b}n; so does a Gemm (transA=0, alpha=1; B K×N or, with transB, N×K), its bias C then an
//    Add after the product. A Gemm with fewer rows (a classifier's GEMV) and transB gets its
//    constant weights stored K×N instead (transB=0). On AVX2, 24 channels (three vectors, not a
//    multiple of two) are blocked by 24.
// 2. Layout-agnostic ops take the layout of their input and pass it on: element-wise ops,
//    broadcasts whose other operands are scalars or per-channel tensors (constants are
//    transformed at compile time, other tensors through layout_transform), MaxPool/AveragePool
//    (pooling an NCHW{c}c tensor is pooling over (H, W, c) with a window of 1 on c), and Concat
//    along channels when every input's channel count is a multiple of the block.
// 3. Every other op wants the plain layout (NCHW for 4-D); its blocked inputs are converted back.
// 4. Conversions are made once per (tensor, layout) and remembered in both directions, so a
//    tensor converted to NCHW16c and back reads the original: inverse pairs cancel. Graph
//    outputs are returned in their plain layout.
// Afterwards every value carries its layout string (a scalar's is empty).
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool transform_layout(Graph& g, PassContext& ctx);

// The plain layout of a tensor of this rank: "C", "NC", "NCW", "NCHW", "NCDHW" (letters beyond).
std::string default_layout(size_t rank);

}  // namespace tessel
