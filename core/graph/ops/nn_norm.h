#pragma once
// Normalizations: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
// LRN (local response normalization across channels), MeanVarianceNormalization.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct BatchNormalizationAttrs {
  float epsilon = 1e-5f, momentum = 0.9f;
  int64_t training_mode = 0;
  template <class V>
  void visit(V& v) {
    v(epsilon, {.name = "epsilon", .doc = "Added to the variance before the square root", .def = 1e-5f});
    v(momentum,
      {.name = "momentum", .doc = "Running-statistics factor (training only; unused in inference)", .def = 0.9f});
    v(training_mode, {.name = "training_mode",
                      .doc = "1: training (batch statistics); Tessel runs inference only",
                      .def = int64_t{0},
                      .min = 0,
                      .max = 1});
  }
};

struct BatchNormalizationOp {
  using Attrs = BatchNormalizationAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;  // folded into the producer later
  static constexpr int min_inputs = 5, max_inputs = 5, min_outputs = 1, max_outputs = 3;
  static constexpr const char* doc =
      "Inference batch norm: Y = (X - mean) / sqrt(var + epsilon) · scale + B, per channel (axis 1)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct InstanceNormalizationAttrs {
  float epsilon = 1e-5f;
  template <class V>
  void visit(V& v) {
    v(epsilon, {.name = "epsilon", .doc = "Added to the variance before the square root", .def = 1e-5f});
  }
};

struct InstanceNormalizationOp {
  using Attrs = InstanceNormalizationAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Normalizes each (n, c) plane over its spatial axes, then scale[c]·x + B[c]";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct LayerNormalizationAttrs {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int64_t stash_type = 1;
  template <class V>
  void visit(V& v) {
    v(axis,
      {.name = "axis", .doc = "First normalized axis; axes [axis, rank) are normalized together", .def = int64_t{-1}});
    v(epsilon, {.name = "epsilon", .doc = "Added to the variance before the square root", .def = 1e-5f});
    v(stash_type, {.name = "stash_type",
                   .doc = "ONNX type code of Mean/InvStdDev and of the statistics computation (1 = float32)",
                   .def = int64_t{1}});
  }
};

struct LayerNormalizationOp {
  using Attrs = LayerNormalizationAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 3;
  static constexpr const char* doc =
      "Normalizes over axes [axis, rank): Y = (X - mean) · InvStdDev · Scale + B; optional Mean, InvStdDev outputs";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct LRNAttrs {
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
  int64_t size = 1;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Scale of the squared sum (divided by size)", .def = 1e-4f});
    v(beta, {.name = "beta", .doc = "Exponent of the denominator", .def = 0.75f});
    v(bias, {.name = "bias", .doc = "Added to the scaled squared sum", .def = 1.0f});
    v(size, {.name = "size", .doc = "Number of channels summed over (centred on each channel)", .min = 1});
  }
};

struct LRNOp {
  using Attrs = LRNAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Y = X / (bias + alpha/size · Σ X²)^beta, the sum over `size` neighbouring channels (axis 1)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct MeanVarianceNormalizationAttrs {
  std::vector<int64_t> axes = {0, 2, 3};
  template <class V>
  void visit(V& v) {
    v(axes, {.name = "axes", .doc = "Axes the mean and variance are taken over", .def = std::vector<int64_t>{0, 2, 3}});
  }
};

struct MeanVarianceNormalizationOp {
  using Attrs = MeanVarianceNormalizationAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Y = (X - mean) / (sqrt(variance) + 1e-9), statistics over `axes`";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 6); }
};

}  // namespace tessel::ops
