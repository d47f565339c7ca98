#pragma once
// The softmax family along one axis (ONNX opset 13 semantics: only `axis` is normalized, every
// other axis is independent): Softmax, LogSoftmax, Hardmax.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct SoftmaxAttrs {
  int64_t axis = -1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "The axis normalized over (negative counts from the end)", .def = int64_t{-1}});
  }
};

struct SoftmaxOp {
  using Attrs = SoftmaxAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "exp(x - max) / Σ exp(x - max) along `axis`";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 5); }
};

struct LogSoftmaxOp {
  using Attrs = SoftmaxAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "(x - max) - log Σ exp(x - max) along `axis`";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 5); }
};

struct HardmaxOp {
  using Attrs = SoftmaxAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "1 at the first maximum along `axis`, 0 elsewhere";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 1); }
};

}  // namespace tessel::ops
