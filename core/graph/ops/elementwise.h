#pragma once
// Element-wise and broadcasting ops: arithmetic, activations, comparisons, Where, Cast, reductions.
#include <cmath>

#include "core/graph/ops/common.h"

namespace tessel::ops {

struct ReluOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "max(x, 0), element-wise";
  static void infer(const Attrs&, InferContext& ctx) { infer_like_input(ctx); }
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

}  // namespace tessel::ops
