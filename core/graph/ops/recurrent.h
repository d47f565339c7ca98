#pragma once
// Recurrent layers: RNN, GRU and LSTM (ONNX opset 14 forms), every direction, activation and option.
//
// Why real ops and not an import-time unrolling into MatMul/Add/Sigmoid/... (as TVM's frontends
// do): a model keeps one node per layer, named and typed as the user wrote it, with its attributes
// in the inspector; the unrolled form would put T·D·(5..12) anonymous nodes in the graph view and
// needs a sequence length fixed at import. Unrolling is still what compiles: the builder
// (te/builders_recurrent.cpp) emits the same per-time-step stages (two products, the gate
// activations, the state update) that an unrolled graph would hold, over the node's own tensors,
// so every backend compiles them with its existing lowering. The reference kernel below is the
// oracle for both.
//
// Shapes (num_directions D = 2 for bidirectional, else 1; G gates: RNN 1, GRU 3, LSTM 4):
//   X [T,B,I]   W [D,G·H,I]   R [D,G·H,H]   B [D,2·G·H]   sequence_lens [B] (i32)
//   initial_h, initial_c [D,B,H]   P [D,3·H] (LSTM peepholes, gates i, o, f)
//   outputs Y [T,D,B,H], Y_h [D,B,H], Y_c [D,B,H] (LSTM)
// With layout = 1 the batch comes first: X [B,T,I], initial_h [B,D,H], Y [B,T,D,H], Y_h [B,D,H].
//
// Gate order in W, R and B: RNN i; GRU z, r, h; LSTM i, o, f, c. For a batch item of length L
// (sequence_lens, else T), the forward direction visits t = 0..L-1, the reverse one t = L-1..0;
// Y is zero at t >= L and Y_h holds the state after the last step visited.
#include <string>
#include <vector>

#include "core/graph/ops/common.h"

namespace tessel::ops {

// One activation function as the recurrent ops name them, with its alpha and beta resolved.
struct RecurrentActivation {
  enum Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = kTanh;
  float alpha = 0.0f, beta = 0.0f;
  double apply(double x) const;
};

enum class RecurrentCell { kRnn, kGru, kLstm };

struct RecurrentAttrs {
  std::vector<float> activation_alpha, activation_beta;
  std::vector<std::string> activations;
  float clip = 0.0f;
  std::string direction = "forward";
  int64_t hidden_size = 0;
  int64_t layout = 0;
  int64_t input_forget = 0;         // LSTM only
  int64_t linear_before_reset = 0;  // GRU only
};

struct RnnAttrs : RecurrentAttrs {
  template <class V>
  void visit(V& v) {
    visit_common(v, "f per direction (default Tanh)");
  }
  template <class V>
  void visit_common(V& v, const char* default_activations) {
    v(activation_alpha, {.name = "activation_alpha",
                         .doc = "alpha of the activations that take one (Affine, LeakyRelu, ...), in their order",
                         .def = std::vector<float>{}});
    v(activation_beta, {.name = "activation_beta",
                        .doc = "beta of the activations that take one (Affine, ScaledTanh, ...), in their order",
                        .def = std::vector<float>{}});
    v(activations, {.name = "activations", .doc = default_activations, .def = std::vector<std::string>{}});
    v(clip,
      {.name = "clip", .doc = "Gate inputs are clipped to [-clip, clip]; 0: no clipping", .def = 0.0f, .min = 0.0});
    v(direction, {.name = "direction",
                  .doc = "Which way the sequence is read; bidirectional reads it both ways (D = 2)",
                  .def = std::string("forward"),
                  .choices = {"forward", "reverse", "bidirectional"}});
    v(hidden_size, {.name = "hidden_size", .doc = "H; 0: taken from R", .def = int64_t{0}, .min = 0});
    v(layout, {.name = "layout",
               .doc = "1: batch-first X, Y, initial and final states",
               .def = int64_t{0},
               .min = 0,
               .max = 1});
  }
};

struct GruAttrs : RnnAttrs {
  template <class V>
  void visit(V& v) {
    visit_common(v, "f, g per direction (default Sigmoid, Tanh)");
    v(linear_before_reset, {.name = "linear_before_reset",
                            .doc = "1: the reset gate multiplies (R_h·H + Rb_h), not H",
                            .def = int64_t{0},
                            .min = 0,
                            .max = 1});
  }
};

struct LstmAttrs : RnnAttrs {
  template <class V>
  void visit(V& v) {
    visit_common(v, "f, g, h per direction (default Sigmoid, Tanh, Tanh)");
    v(input_forget, {.name = "input_forget",
                     .doc = "1: couple the forget gate to the input gate (f = 1 - i)",
                     .def = int64_t{0},
                     .min = 0,
                     .max = 1});
  }
};

// What the reference kernel and the builder share: the node's geometry and its resolved activations.
struct RecurrentPlan {
  RecurrentCell cell = RecurrentCell::kRnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, gates = 1;
  bool batch_first = false, reverse_only = false, input_forget = false, linear_before_reset = false;
  float clip = 0.0f;                                          // 0: none
  std::vector<std::vector<RecurrentActivation>> activations;  // [direction][f, g, h]
  // Direction d (0 or 1) reads the sequence backwards.
  bool backwards(int64_t d) const { return reverse_only || d == 1; }
};

// Checks the input types of `ctx` and the attributes (throws Error naming the op) and resolves the
// plan: what infer, the reference kernel, the cost and the builder all start from.
RecurrentPlan plan_recurrent(RecurrentCell cell, const RecurrentAttrs& a, const InferContext& ctx);

template <RecurrentCell kCell, class A>
struct RecurrentOp {
  using Attrs = A;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 3, max_inputs = kCell == RecurrentCell::kLstm ? 8 : 6;
  static constexpr int min_outputs = 0, max_outputs = kCell == RecurrentCell::kLstm ? 3 : 2;
  static constexpr const char* doc =
      kCell == RecurrentCell::kRnn   ? "Elman RNN layer: H_t = f(X_t·Wᵀ + H_{t-1}·Rᵀ + Wb + Rb)"
      : kCell == RecurrentCell::kGru ? "GRU layer: update and reset gates z, r and candidate h per step"
                                     : "LSTM layer: input, output, forget gates and cell state per step";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

using RnnOp = RecurrentOp<RecurrentCell::kRnn, RnnAttrs>;
using GruOp = RecurrentOp<RecurrentCell::kGru, GruAttrs>;
using LstmOp = RecurrentOp<RecurrentCell::kLstm, LstmAttrs>;

}  // namespace tessel::ops
