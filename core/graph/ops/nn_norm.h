#pragma once
// Normalizations: BatchNormalization (inference), InstanceNormalization, LayerNormalization.
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

}  // namespace tessel::ops
