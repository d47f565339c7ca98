#pragma once
// The optimizer steps of ONNX's ai.onnx.preview.training domain: Adagrad, Adam, Momentum. Each
// updates n tensors at once; its inputs are the learning rate R and the step count T (scalars),
// then n tensors of each kind, and its outputs n tensors of each updated kind:
//
//   Adagrad   R, T, X1..Xn, G1..Gn, H1..Hn          ->  X'1..X'n, H'1..H'n
//   Momentum  R, T, X1..Xn, G1..Gn, V1..Vn          ->  X'1..X'n, V'1..V'n
//   Adam      R, T, X1..Xn, G1..Gn, V1..Vn, H1..Hn  ->  X'1..X'n, V'1..V'n, H'1..H'n
//
// (X the parameters, G their gradients, V and H the running moments.) Reference kernels only:
// training steps are element-wise and small beside the models that produce their gradients, and
// they run once per step; each is computed in double, as the ONNX reference implementation
// computes them in numpy.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct AdagradAttrs {
  float decay_factor = 0.0f, epsilon = 1e-6f, norm_coefficient = 0.0f;
  template <class V>
  void visit(V& v) {
    v(decay_factor, {.name = "decay_factor", .doc = "Learning rate R / (1 + T * decay_factor)", .def = 0.0f});
    v(epsilon, {.name = "epsilon", .doc = "Added to the root of the accumulated squares", .def = 1e-6f});
    v(norm_coefficient,
      {.name = "norm_coefficient", .doc = "L2 regularization: G + norm_coefficient * X", .def = 0.0f});
  }
};

struct AdamAttrs {
  float alpha = 0.9f, beta = 0.999f, epsilon = 1e-6f, norm_coefficient = 0.0f, norm_coefficient_post = 0.0f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Decay of the first moment V", .def = 0.9f});
    v(beta, {.name = "beta", .doc = "Decay of the second moment H", .def = 0.999f});
    v(epsilon, {.name = "epsilon", .doc = "Added to the root of H", .def = 1e-6f});
    v(norm_coefficient,
      {.name = "norm_coefficient", .doc = "L2 regularization: G + norm_coefficient * X", .def = 0.0f});
    v(norm_coefficient_post, {.name = "norm_coefficient_post",
                              .doc = "Weight decay after the step: X' * (1 - norm_coefficient_post)",
                              .def = 0.0f});
  }
};

struct MomentumAttrs {
  float alpha = 0.0f, beta = 0.0f, norm_coefficient = 0.0f;
  std::string mode;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Decay of the momentum V"});
    v(beta, {.name = "beta", .doc = "Weight of the gradient in V (1 at T = 0)"});
    v(mode, {.name = "mode", .doc = "standard or nesterov", .choices = {"standard", "nesterov"}});
    v(norm_coefficient, {.name = "norm_coefficient", .doc = "L2 regularization: G + norm_coefficient * X"});
  }
};

// What the three share: opaque (never fused), R and T then `Kinds` groups of n inputs, outputs
// the n parameters and the updated groups but the gradients.
template <class A, int Kinds>
struct OptimizerTraits {
  using Attrs = A;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2 + Kinds, max_inputs = 1 << 20, min_outputs = Kinds - 1, max_outputs = 1 << 20;
  static constexpr int kinds = Kinds;
  static void infer(const Attrs&, InferContext& ctx);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct AdagradOp : OptimizerTraits<AdagradAttrs, 3> {
  static constexpr const char* doc = "Adagrad step on n tensors: inputs R, T, X..., G..., H...; outputs X'..., H'...";
  static void reference(const Attrs& a, const KernelArgs& args);
};
struct AdamOp : OptimizerTraits<AdamAttrs, 4> {
  static constexpr const char* doc =
      "Adam step on n tensors: inputs R, T, X..., G..., V..., H...; outputs X'..., V'..., H'...";
  static void reference(const Attrs& a, const KernelArgs& args);
};
struct MomentumOp : OptimizerTraits<MomentumAttrs, 3> {
  static constexpr const char* doc =
      "Momentum step (standard or Nesterov) on n tensors: inputs R, T, X..., G..., V...; outputs X'..., V'...";
  static void reference(const Attrs& a, const KernelArgs& args);
};

}  // namespace tessel::ops
