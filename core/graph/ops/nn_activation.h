#pragma once
// Activations defined by a formula the element-wise table does not hold: Gelu.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct GeluAttrs {
  std::string approximate = "none";
  template <class V>
  void visit(V& v) {
    v(approximate, {.name = "approximate",
                    .doc = "none: x·Φ(x) with the exact erf; tanh: the tanh approximation",
                    .def = std::string("none"),
                    .choices = {"none", "tanh"}});
  }
};

struct GeluOp {
  using Attrs = GeluAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "0.5·x·(1 + erf(x/√2)), or with approximate=tanh 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

}  // namespace tessel::ops
