#pragma once
// Element-wise and broadcasting ops: arithmetic, activations, comparisons, logic, Where, Clip,
// Cast, Identity, Dropout; reductions live in reduce.h.
//
// Most ops are one of three templates parameterised by a small functor (elementwise_functors.h)
// that says what is computed per element and which dtypes ONNX allows:
//   UnaryOp<Fn>     y = f(x)                      (Relu, Sigmoid, Exp, Not, ...)
//   BinaryOp<Fn>    y = f(a, b), numpy broadcast  (Add, Pow, Equal, And, PRelu, ...)
//   VariadicOp<Fn>  y = f(...f(x0, x1)..., xn)    (Max, Min, Sum, Mean)
// Their kernels are explicit instantiations in elementwise.cpp.
#include "core/graph/ops/common.h"
#include "core/graph/ops/elementwise_functors.h"
#include "core/graph/ops/elementwise_support.h"
#include "core/graph/ops/reduce.h"

namespace tessel::ops {

template <class Fn>
struct UnaryOp {
  using Attrs = typename Fn::Attrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = Fn::doc;
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

template <class Fn>
struct BinaryOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = Fn::doc;
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

template <class Fn>
struct VariadicOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;
  static constexpr int min_inputs = 1, max_inputs = std::numeric_limits<int>::max();
  static constexpr int min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = Fn::doc;
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  // Per output element: n - 1 for the fold of n inputs, plus Mean's division.
  static int64_t flops(const Attrs&, const OpTypes& t);
};

// Clip(x, min?, max?): min/max are optional scalar inputs of x's type; absent means unbounded.
struct ClipOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "min(max(x, min), max); min and max are optional scalar inputs";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

struct WhereOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "condition ? x : y, with the three inputs broadcast together";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }  // a selection moves data
};

struct CastAttrs {
  DataType to = DataType::kFloat32;
  template <class V>
  void visit(V& v) {
    v(to, {.name = "to", .doc = "Element type of the output"});
  }
};

struct CastOp {
  using Attrs = CastAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Converts elements to `to`; float to integer truncates toward zero";
  static void infer(const Attrs& attrs, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

// CastLike(x, like): Cast to the dtype of the second input (its values are not read).
struct CastLikeOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Converts elements to the dtype of the second input";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct IdentityOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr bool takes_any_kind = true;  // passes sequences and optionals through too
  static constexpr const char* doc = "y = x";
  static void infer(const Attrs&, InferContext& ctx) { infer_like_input(ctx); }
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct DropoutAttrs {
  int64_t seed = 0;
  template <class V>
  void visit(V& v) {
    v(seed, {.name = "seed", .doc = "Random seed (training only; Tessel runs inference)", .def = int64_t{0}});
  }
};

// Dropout(data, ratio?, training_mode?) → (output, mask?). Inference only: output = data and the
// mask is all true. Training with a non-zero ratio is random and is rejected.
struct DropoutOp {
  using Attrs = DropoutAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 3, min_outputs = 1, max_outputs = 2;
  static constexpr const char* doc = "Inference dropout: output = data, mask all true";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

// ---- Classification, remainder and shifts (elementwise_extra.cpp) -----------------------------

struct IsInfAttrs {
  int64_t detect_negative = 1;
  int64_t detect_positive = 1;
  template <class V>
  void visit(V& v) {
    v(detect_negative, {.name = "detect_negative", .doc = "1: -inf counts", .def = int64_t{1}, .min = 0, .max = 1});
    v(detect_positive, {.name = "detect_positive", .doc = "1: +inf counts", .def = int64_t{1}, .min = 0, .max = 1});
  }
};
struct IsInfOp {
  using Attrs = IsInfAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Whether x is infinite (bool), each sign selectable";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

struct IsNaNOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Whether x is NaN (bool)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

struct ModAttrs {
  int64_t fmod = 0;
  template <class V>
  void visit(V& v) {
    v(fmod, {.name = "fmod",
             .doc = "0: the remainder takes the divisor's sign (integers only); 1: the dividend's (C fmod)",
             .def = int64_t{0},
             .min = 0,
             .max = 1});
  }
};
struct ModOp {
  using Attrs = ModAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Remainder of a / b, numpy broadcasting; fmod picks the sign rule";
  static void infer(const Attrs& attrs, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

struct BitShiftAttrs {
  std::string direction;
  template <class V>
  void visit(V& v) {
    v(direction, {.name = "direction", .doc = "LEFT or RIGHT", .choices = {"LEFT", "RIGHT"}});
  }
};
// Unsigned integers only; a shift by the type's width or more gives 0.
struct BitShiftOp {
  using Attrs = BitShiftAttrs;
  static constexpr PatternKind pattern = PatternKind::kBroadcast;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "x << y or x >> y on unsigned integers, numpy broadcasting";
  static void infer(const Attrs& attrs, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

}  // namespace tessel::ops
