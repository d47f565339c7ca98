#pragma once
// Losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) and MaxUnpool.
#include <limits>
#include <string>

#include "core/graph/ops/common.h"

namespace tessel::ops {

// No ignore_index given: every target counts.
inline constexpr int64_t kNoIgnoreIndex = std::numeric_limits<int64_t>::min();

struct LossAttrs {
  int64_t ignore_index = kNoIgnoreIndex;
  std::string reduction = "mean";
  template <class V>
  void visit(V& v) {
    v(ignore_index, {.name = "ignore_index",
                     .doc = "Target value that contributes nothing (absent: none; -2^63 stands for absent)",
                     .def = kNoIgnoreIndex});
    v(reduction, {.name = "reduction",
                  .doc = "none: a loss per target; sum; mean: the sum over the total weight",
                  .def = "mean",
                  .choices = {"none", "sum", "mean"}});
  }
};

// NegativeLogLikelihoodLoss(input [N,C,d...], target [N,d...], weight? [C]):
// loss = -input[n, target, d...] * weight[target].
struct NegativeLogLikelihoodLossOp {
  using Attrs = LossAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Weighted negative log-likelihood of each target class, optionally reduced";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

// SoftmaxCrossEntropyLoss(scores [N,C,d...], labels [N,d...], weights? [C]) -> (loss, log_prob?):
// NegativeLogLikelihoodLoss of LogSoftmax(scores, axis 1).
struct SoftmaxCrossEntropyLossOp {
  using Attrs = LossAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 2;
  static constexpr const char* doc = "Cross entropy of softmax(scores) over axis 1 and the labels";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct MaxUnpoolAttrs {
  std::vector<int64_t> kernel_shape, pads, strides;
  template <class V>
  void visit(V& v) {
    v(kernel_shape, {.name = "kernel_shape", .doc = "Window size per spatial axis", .min = 1});
    v(pads, {.name = "pads",
             .doc = "Padding removed: begins then ends per spatial axis (empty: 0)",
             .def = std::vector<int64_t>{},
             .min = 0});
    v(strides,
      {.name = "strides", .doc = "Window step per spatial axis (empty: 1)", .def = std::vector<int64_t>{}, .min = 1});
  }
};
// MaxUnpool(X, I, output_shape?): zeros with X's values put back at the flat positions I (as
// MaxPool's Indices output gives them).
struct MaxUnpoolOp {
  using Attrs = MaxUnpoolAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {2};
  static constexpr const char* doc = "Zeros, with each value of X written back at its MaxPool index";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

}  // namespace tessel::ops
