#pragma once
// Matrix products: MatMul (numpy matmul semantics) and Gemm (ONNX opset 13).
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct MatMulOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Matrix product like numpy.matmul: batch dims broadcast, a 1-D operand is a vector (its axis dropped)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct GemmAttrs {
  float alpha = 1.0f, beta = 1.0f;
  int64_t transA = 0, transB = 0;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Multiplier of A·B", .def = 1.0f});
    v(beta, {.name = "beta", .doc = "Multiplier of C", .def = 1.0f});
    v(transA, {.name = "transA", .doc = "1: use Aᵀ (A is K×M)", .def = int64_t{0}, .min = 0, .max = 1});
    v(transB, {.name = "transB", .doc = "1: use Bᵀ (B is N×K)", .def = int64_t{0}, .min = 0, .max = 1});
  }
};

struct GemmOp {
  using Attrs = GemmAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Y = alpha·op(A)·op(B) + beta·C, op = optional transpose; A, B 2-D; C broadcasts to M×N";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

}  // namespace tessel::ops
