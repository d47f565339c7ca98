#pragma once
// Tessel's own ops for blocked data layouts (made by the transform_layout pass, never by a
// frontend). Their reference kernels convert to the plain layout, run the ONNX op's reference
// kernel, and convert back: obviously correct, so the reference executor runs transformed graphs.
//
//   conv2d_nchwc(X: NCHW{i}c, W: OIHW{i}i{o}o, B?: C{o}c) → Y: NCHW{o}c
//   X [N, C/i, H, W, i] ─▶ NCHW ─▶ Conv ─▶ NCHW ─▶ Y [N, M/o, H', W', o]
//   depthwise (group = C = M): W: OIHW{o}o [M/o, 1, R, S, o], X in NCHW{o}c
//
//   matmul_packed(A: [..., M, K], B: NK{b}n) → Y: [..., M, N]   B [N/b, K, b] = constant weights
//   K×N in column panels of b: each panel one contiguous K x b run, the order a register tile
//   b columns wide reads them (what a GEMM packs at run time, done once at compile time)
#include "core/graph/ops/common.h"
#include "core/graph/ops/nn_conv.h"

namespace tessel::ops {

struct Conv2dNchwcAttrs {
  ConvAttrs conv;  // the original Conv's attributes
  std::string data_layout, kernel_layout, out_layout;
  template <class V> void visit(V& v) {
    conv.visit(v);
    v(data_layout, {.name = "data_layout", .doc = "Layout of X, e.g. NCHW16c"});
    v(kernel_layout, {.name = "kernel_layout", .doc = "Layout of W, e.g. OIHW16i16o"});
    v(out_layout, {.name = "out_layout", .doc = "Layout of Y (and of B as C{o}c), e.g. NCHW16c"});
  }
};

struct Conv2dNchwcOp {
  using Attrs = Conv2dNchwcAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "2-D convolution on channel-blocked tensors (Conv in data_layout/kernel_layout/out_layout)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct MatMulPackedAttrs {
  int64_t block = 16;  // the panel width b
  template <class V> void visit(V& v) {
    v(block, {.name = "block", .doc = "Columns per panel of B (NK{block}n)", .def = int64_t{16}, .min = 1});
  }
};

struct MatMulPackedOp {
  using Attrs = MatMulPackedAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "MatMul of A [..., M, K] by constant weights packed in column panels (B: NK{block}n, [N/block, K, block])";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

}  // namespace tessel::ops
