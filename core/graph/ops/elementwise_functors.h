#pragma once
// What each element-wise op computes, as small functors for the templates in elementwise.h.
//
// A functor names its op (for error messages), the dtypes ONNX allows (opset ≤ 17 form), and its
// formula on the compute types of elementwise_support.h:
//   apply(...)      on doubles: used for float dtypes, and for integer dtypes when there is no
//                   apply_int (the result then truncates toward zero, like ONNX's astype)
//   apply_int(...)  on int64: exact integer (and bool) arithmetic
// A functor without `apply` (or `apply_int`) does not accept float (or integer) inputs.
#include <algorithm>
#include <cmath>

#include "core/attrs/attrs.h"
#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

// ---------------------------------------------------------------- unary

struct ReluFn {
  static constexpr const char* name = "Relu";
  static constexpr const char* doc = "max(x, 0), element-wise";
  static constexpr DTypeSet types = kSignedNumericTypes;
  using Attrs = NoAttrs;
  static double apply(const Attrs&, double x) { return x < 0 ? 0.0 : x; }  // NaN stays NaN
  static int64_t apply_int(const Attrs&, int64_t x) { return x < 0 ? 0 : x; }
};

struct LeakyReluAttrs {
  float alpha = 0.01f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Slope for x < 0", .def = 0.01f});
  }
};
struct LeakyReluFn {
  static constexpr const char* name = "LeakyRelu";
  static constexpr const char* doc = "x < 0 ? alpha * x : x";
  static constexpr DTypeSet types = kFloatTypes;
  using Attrs = LeakyReluAttrs;
  static double apply(const Attrs& a, double x) { return x < 0 ? a.alpha * x : x; }
};

struct SigmoidFn {
  static constexpr const char* name = "Sigmoid";
  static constexpr const char* doc = "1 / (1 + exp(-x))";
  static constexpr DTypeSet types = kFloatTypes;
  using Attrs = NoAttrs;
  // Written so that exp never overflows: for x < 0 use exp(x) / (1 + exp(x)).
  static double apply(const Attrs&, double x) {
    if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
    double e = std::exp(x);
    return e / (1.0 + e);
  }
};

// Float-only math functions that need nothing but a formula.
struct FloatMathFn {
  using Attrs = NoAttrs;
  static constexpr DTypeSet types = kFloatTypes;
};
struct TanhFn : FloatMathFn {
  static constexpr const char *name = "Tanh", *doc = "tanh(x)";
  static double apply(const Attrs&, double x) { return std::tanh(x); }
};
struct ExpFn : FloatMathFn {
  static constexpr const char *name = "Exp", *doc = "e^x";
  static double apply(const Attrs&, double x) { return std::exp(x); }
};
struct LogFn : FloatMathFn {
  static constexpr const char *name = "Log", *doc = "natural logarithm";
  static double apply(const Attrs&, double x) { return std::log(x); }
};
struct SqrtFn : FloatMathFn {
  static constexpr const char *name = "Sqrt", *doc = "square root";
  static double apply(const Attrs&, double x) { return std::sqrt(x); }
};
struct ReciprocalFn : FloatMathFn {
  static constexpr const char *name = "Reciprocal", *doc = "1 / x";
  static double apply(const Attrs&, double x) { return 1.0 / x; }
};
struct FloorFn : FloatMathFn {
  static constexpr const char *name = "Floor", *doc = "largest integer <= x";
  static double apply(const Attrs&, double x) { return std::floor(x); }
};
struct CeilFn : FloatMathFn {
  static constexpr const char *name = "Ceil", *doc = "smallest integer >= x";
  static double apply(const Attrs&, double x) { return std::ceil(x); }
};
// Trigonometric and hyperbolic functions (opsets 7 and 9: no bfloat16).
struct TrigFn : FloatMathFn {
  static constexpr DTypeSet types = kFloatTypesNoBf16;
};
struct SinFn : TrigFn {
  static constexpr const char *name = "Sin", *doc = "sine";
  static double apply(const Attrs&, double x) { return std::sin(x); }
};
struct CosFn : TrigFn {
  static constexpr const char *name = "Cos", *doc = "cosine";
  static double apply(const Attrs&, double x) { return std::cos(x); }
};
struct TanFn : TrigFn {
  static constexpr const char *name = "Tan", *doc = "tangent";
  static double apply(const Attrs&, double x) { return std::tan(x); }
};
struct AsinFn : TrigFn {
  static constexpr const char *name = "Asin", *doc = "arcsine";
  static double apply(const Attrs&, double x) { return std::asin(x); }
};
struct AcosFn : TrigFn {
  static constexpr const char *name = "Acos", *doc = "arccosine";
  static double apply(const Attrs&, double x) { return std::acos(x); }
};
struct AtanFn : TrigFn {
  static constexpr const char *name = "Atan", *doc = "arctangent";
  static double apply(const Attrs&, double x) { return std::atan(x); }
};
struct SinhFn : TrigFn {
  static constexpr const char *name = "Sinh", *doc = "hyperbolic sine";
  static double apply(const Attrs&, double x) { return std::sinh(x); }
};
struct CoshFn : TrigFn {
  static constexpr const char *name = "Cosh", *doc = "hyperbolic cosine";
  static double apply(const Attrs&, double x) { return std::cosh(x); }
};
struct AsinhFn : TrigFn {
  static constexpr const char *name = "Asinh", *doc = "inverse hyperbolic sine";
  static double apply(const Attrs&, double x) { return std::asinh(x); }
};
struct AcoshFn : TrigFn {
  static constexpr const char *name = "Acosh", *doc = "inverse hyperbolic cosine";
  static double apply(const Attrs&, double x) { return std::acosh(x); }
};
struct AtanhFn : TrigFn {
  static constexpr const char *name = "Atanh", *doc = "inverse hyperbolic tangent";
  static double apply(const Attrs&, double x) { return std::atanh(x); }
};

// Ops defined before bfloat16 joined ONNX (Round-11, Softplus-1, HardSwish-14 kept the old list).
struct OldFloatMathFn : FloatMathFn {
  static constexpr DTypeSet types = kFloatTypesNoBf16;
};
struct RoundFn : OldFloatMathFn {
  static constexpr const char *name = "Round", *doc = "round to nearest, halves to even";
  // nearbyint in the default rounding mode rounds halves to even, as ONNX requires.
  static double apply(const Attrs&, double x) { return std::nearbyint(x); }
};
struct SoftplusFn : OldFloatMathFn {
  static constexpr const char *name = "Softplus", *doc = "log(1 + e^x)";
  // Split so that e^x never overflows for large x.
  static double apply(const Attrs&, double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
};
struct SoftsignFn : OldFloatMathFn {
  static constexpr const char *name = "Softsign", *doc = "x / (1 + |x|)";
  static double apply(const Attrs&, double x) { return x / (1.0 + std::abs(x)); }
};
struct HardSwishFn : OldFloatMathFn {
  static constexpr const char *name = "HardSwish", *doc = "x * max(0, min(1, x / 6 + 0.5))";
  static double apply(const Attrs&, double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); }
};

struct ErfFn {
  static constexpr const char* name = "Erf";
  static constexpr const char* doc = "Gauss error function";
  static constexpr DTypeSet types = kNumericTypes;  // integers: erf then truncation
  using Attrs = NoAttrs;
  static double apply(const Attrs&, double x) { return std::erf(x); }
};

struct NegFn {
  static constexpr const char* name = "Neg";
  static constexpr const char* doc = "-x";
  static constexpr DTypeSet types = kSignedNumericTypes;
  using Attrs = NoAttrs;
  static double apply(const Attrs&, double x) { return -x; }
  static int64_t apply_int(const Attrs&, int64_t x) { return wrap_neg(x); }
};

struct AbsFn {
  static constexpr const char* name = "Abs";
  static constexpr const char* doc = "|x|";
  static constexpr DTypeSet types = kNumericTypes;
  using Attrs = NoAttrs;
  static double apply(const Attrs&, double x) { return std::fabs(x); }
  static int64_t apply_int(const Attrs&, int64_t x) { return x < 0 ? wrap_neg(x) : x; }
};

struct SignFn {
  static constexpr const char* name = "Sign";
  static constexpr const char* doc = "-1, 0 or 1 by the sign of x";
  static constexpr DTypeSet types = kNumericTypes;
  using Attrs = NoAttrs;
  static double apply(const Attrs&, double x) { return std::isnan(x) ? x : (x > 0) - (x < 0); }
  static int64_t apply_int(const Attrs&, int64_t x) { return (x > 0) - (x < 0); }
};

struct NotFn {
  static constexpr const char* name = "Not";
  static constexpr const char* doc = "logical negation";
  static constexpr DTypeSet types = kBoolType;
  using Attrs = NoAttrs;
  static int64_t apply_int(const Attrs&, int64_t x) { return x == 0; }
};

struct EluAttrs {
  float alpha = 1.0f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Scale of the negative part", .def = 1.0f});
  }
};
struct EluFn {
  static constexpr const char* name = "Elu";
  static constexpr const char* doc = "x < 0 ? alpha * (e^x - 1) : x";
  static constexpr DTypeSet types = kFloatTypesNoBf16;
  using Attrs = EluAttrs;
  static double apply(const Attrs& a, double x) { return x < 0 ? a.alpha * std::expm1(x) : x; }
};

struct CeluAttrs {
  float alpha = 1.0f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Scale of the negative part (not 0)", .def = 1.0f});
  }
};
struct CeluFn {
  static constexpr const char* name = "Celu";
  static constexpr const char* doc = "max(0, x) + min(0, alpha * (e^(x / alpha) - 1))";
  static constexpr DTypeSet types{DataType::kFloat32};
  using Attrs = CeluAttrs;
  static double apply(const Attrs& a, double x) { return x < 0 ? a.alpha * std::expm1(x / a.alpha) : x; }
};

struct SeluAttrs {
  float alpha = 1.67326319217681884765625f;
  float gamma = 1.05070102214813232421875f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Scale of the exponential part", .def = 1.67326319217681884765625f});
    v(gamma, {.name = "gamma", .doc = "Scale of the whole output", .def = 1.05070102214813232421875f});
  }
};
struct SeluFn {
  static constexpr const char* name = "Selu";
  static constexpr const char* doc = "gamma * (x <= 0 ? alpha * (e^x - 1) : x)";
  static constexpr DTypeSet types = kFloatTypesNoBf16;
  using Attrs = SeluAttrs;
  static double apply(const Attrs& a, double x) {
    return x <= 0 ? double{a.gamma} * (double{a.alpha} * std::exp(x) - double{a.alpha}) : double{a.gamma} * x;
  }
};

struct HardSigmoidAttrs {
  float alpha = 0.2f;
  float beta = 0.5f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Slope", .def = 0.2f});
    v(beta, {.name = "beta", .doc = "Offset", .def = 0.5f});
  }
};
struct HardSigmoidFn {
  static constexpr const char* name = "HardSigmoid";
  static constexpr const char* doc = "max(0, min(1, alpha * x + beta))";
  static constexpr DTypeSet types = kFloatTypesNoBf16;
  using Attrs = HardSigmoidAttrs;
  static double apply(const Attrs& a, double x) { return std::max(0.0, std::min(1.0, a.alpha * x + a.beta)); }
};

struct ShrinkAttrs {
  float bias = 0.0f;
  float lambd = 0.5f;
  template <class V>
  void visit(V& v) {
    v(bias, {.name = "bias", .doc = "Moved toward 0 from the values kept", .def = 0.0f});
    v(lambd, {.name = "lambd", .doc = "Values in [-lambd, lambd] become 0", .def = 0.5f});
  }
};
struct ShrinkFn {
  static constexpr const char* name = "Shrink";
  static constexpr const char* doc = "x < -lambd ? x + bias : x > lambd ? x - bias : 0";
  static constexpr DTypeSet types = kNumericTypes;  // integers: computed in double, then truncated
  using Attrs = ShrinkAttrs;
  static double apply(const Attrs& a, double x) {
    if (x < -double{a.lambd}) return x + double{a.bias};
    if (x > double{a.lambd}) return x - double{a.bias};
    return 0.0;
  }
};

struct ThresholdedReluAttrs {
  float alpha = 1.0f;
  template <class V>
  void visit(V& v) {
    v(alpha, {.name = "alpha", .doc = "Threshold: values <= alpha become 0", .def = 1.0f});
  }
};
struct ThresholdedReluFn {
  static constexpr const char* name = "ThresholdedRelu";
  static constexpr const char* doc = "x > alpha ? x : 0";
  static constexpr DTypeSet types = kFloatTypes;
  using Attrs = ThresholdedReluAttrs;
  static double apply(const Attrs& a, double x) { return x > double{a.alpha} ? x : 0.0; }
};

// ---------------------------------------------------------------- binary

struct BinaryFnDefaults {
  static constexpr bool bool_result = false;     // comparisons and logic produce bool
  static constexpr bool mixed_types = false;     // Pow: the exponent may have its own dtype
  static constexpr bool unidirectional = false;  // PRelu: input 1 broadcasts to input 0's shape
};
struct ComparisonFnDefaults : BinaryFnDefaults {
  static constexpr bool bool_result = true;
  static constexpr DTypeSet types = kNumericTypes;
};

struct AddFn : BinaryFnDefaults {
  static constexpr const char* name = "Add";
  static constexpr const char* doc = "a + b, numpy broadcasting";
  static constexpr DTypeSet types = kNumericTypes;
  static double apply(double a, double b) { return a + b; }
  static int64_t apply_int(int64_t a, int64_t b) { return wrap_add(a, b); }
};

struct SubFn : BinaryFnDefaults {
  static constexpr const char* name = "Sub";
  static constexpr const char* doc = "a - b, numpy broadcasting";
  static constexpr DTypeSet types = kNumericTypes;
  static double apply(double a, double b) { return a - b; }
  static int64_t apply_int(int64_t a, int64_t b) { return wrap_sub(a, b); }
};

struct MulFn : BinaryFnDefaults {
  static constexpr const char* name = "Mul";
  static constexpr const char* doc = "a * b, numpy broadcasting";
  static constexpr DTypeSet types = kNumericTypes;
  static double apply(double a, double b) { return a * b; }
  static int64_t apply_int(int64_t a, int64_t b) { return wrap_mul(a, b); }
};

struct DivFn : BinaryFnDefaults {
  static constexpr const char* name = "Div";
  static constexpr const char* doc = "a / b, numpy broadcasting; integers truncate toward zero";
  static constexpr DTypeSet types = kNumericTypes;
  static double apply(double a, double b) { return a / b; }
  static int64_t apply_int(int64_t a, int64_t b) {
    if (b == 0) throw Error("Div: integer division by zero");
    return b == -1 ? wrap_neg(a) : a / b;  // INT64_MIN / -1 wraps instead of trapping
  }
  static uint64_t apply_unsigned(uint64_t a, uint64_t b) {
    if (b == 0) throw Error("Div: integer division by zero");
    return a / b;
  }
};

struct PowFn : BinaryFnDefaults {
  static constexpr const char* name = "Pow";
  static constexpr const char* doc = "a ^ b, numpy broadcasting; the exponent may have another dtype";
  static constexpr DTypeSet types{DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
  static constexpr bool mixed_types = true;
  static constexpr DTypeSet exponent_types = kNumericTypes;
  static double apply(double a, double b) { return std::pow(a, b); }
  // Exact by repeated squaring (wrapping like int64 multiplication); a negative exponent gives
  // the truncated value of 1 / a^-b.
  static int64_t apply_int(int64_t base, int64_t exponent) {
    if (exponent < 0) {
      if (base == 0) throw Error("Pow: 0 raised to the negative integer power " + std::to_string(exponent));
      if (base == 1) return 1;
      if (base == -1) return exponent % 2 == 0 ? 1 : -1;
      return 0;
    }
    int64_t result = 1;
    for (; exponent > 0; exponent >>= 1) {
      if (exponent & 1) result = wrap_mul(result, base);
      base = wrap_mul(base, base);
    }
    return result;
  }
};

struct PReluFn : BinaryFnDefaults {
  static constexpr const char* name = "PRelu";
  static constexpr const char* doc = "x < 0 ? slope * x : x; slope broadcasts to x's shape";
  static constexpr DTypeSet types = kFloatTypes | DTypeSet{DataType::kInt32, DataType::kInt64};
  static constexpr bool unidirectional = true;
  static double apply(double x, double slope) { return x < 0 ? slope * x : x; }
  static int64_t apply_int(int64_t x, int64_t slope) { return x < 0 ? wrap_mul(slope, x) : x; }
};

struct EqualFn : ComparisonFnDefaults {
  static constexpr const char *name = "Equal", *doc = "a == b (bool), numpy broadcasting";
  static constexpr DTypeSet types = kAllTypes;
  static bool apply(double a, double b) { return a == b; }
  static bool apply_int(int64_t a, int64_t b) { return a == b; }
};
struct LessFn : ComparisonFnDefaults {
  static constexpr const char *name = "Less", *doc = "a < b (bool), numpy broadcasting";
  static bool apply(double a, double b) { return a < b; }
  static bool apply_int(int64_t a, int64_t b) { return a < b; }
  static bool apply_unsigned(uint64_t a, uint64_t b) { return a < b; }
};
struct GreaterFn : ComparisonFnDefaults {
  static constexpr const char *name = "Greater", *doc = "a > b (bool), numpy broadcasting";
  static bool apply(double a, double b) { return a > b; }
  static bool apply_int(int64_t a, int64_t b) { return a > b; }
  static bool apply_unsigned(uint64_t a, uint64_t b) { return a > b; }
};
struct LessOrEqualFn : ComparisonFnDefaults {
  static constexpr const char *name = "LessOrEqual", *doc = "a <= b (bool), numpy broadcasting";
  static bool apply(double a, double b) { return a <= b; }
  static bool apply_int(int64_t a, int64_t b) { return a <= b; }
  static bool apply_unsigned(uint64_t a, uint64_t b) { return a <= b; }
};
struct GreaterOrEqualFn : ComparisonFnDefaults {
  static constexpr const char *name = "GreaterOrEqual", *doc = "a >= b (bool), numpy broadcasting";
  static bool apply(double a, double b) { return a >= b; }
  static bool apply_int(int64_t a, int64_t b) { return a >= b; }
  static bool apply_unsigned(uint64_t a, uint64_t b) { return a >= b; }
};

struct LogicFnDefaults : ComparisonFnDefaults {
  static constexpr DTypeSet types = kBoolType;
};
struct AndFn : LogicFnDefaults {
  static constexpr const char *name = "And", *doc = "logical a and b, numpy broadcasting";
  static bool apply_int(int64_t a, int64_t b) { return a != 0 && b != 0; }
};
struct OrFn : LogicFnDefaults {
  static constexpr const char *name = "Or", *doc = "logical a or b, numpy broadcasting";
  static bool apply_int(int64_t a, int64_t b) { return a != 0 || b != 0; }
};
struct XorFn : LogicFnDefaults {
  static constexpr const char *name = "Xor", *doc = "logical a xor b, numpy broadcasting";
  static bool apply_int(int64_t a, int64_t b) { return (a != 0) != (b != 0); }
};

// ---------------------------------------------------------------- variadic

struct MaxFn {
  static constexpr const char* name = "Max";
  static constexpr const char* doc = "element-wise maximum of all inputs, numpy broadcasting; NaN wins";
  static constexpr DTypeSet types = kNumericTypes;
  static double apply(double a, double b) { return std::isnan(a) || a >= b ? a : b; }
  static int64_t apply_int(int64_t a, int64_t b) { return std::max(a, b); }
  static uint64_t apply_unsigned(uint64_t a, uint64_t b) { return std::max(a, b); }
};

struct MinFn {
  static constexpr const char* name = "Min";
  static constexpr const char* doc = "element-wise minimum of all inputs, numpy broadcasting; NaN wins";
  static constexpr DTypeSet types = kNumericTypes;
  static double apply(double a, double b) { return std::isnan(a) || a <= b ? a : b; }
  static int64_t apply_int(int64_t a, int64_t b) { return std::min(a, b); }
  static uint64_t apply_unsigned(uint64_t a, uint64_t b) { return std::min(a, b); }
};

struct SumFn {
  static constexpr const char* name = "Sum";
  static constexpr const char* doc = "element-wise sum of all inputs, numpy broadcasting";
  static constexpr DTypeSet types = kFloatTypes;
  static double apply(double a, double b) { return a + b; }
};

struct MeanFn {
  static constexpr const char* name = "Mean";
  static constexpr const char* doc = "element-wise mean of all inputs, numpy broadcasting";
  static constexpr DTypeSet types = kFloatTypes;
  static double apply(double a, double b) { return a + b; }
  static double finish(double sum, int64_t count) { return sum / static_cast<double>(count); }
};

}  // namespace tessel::ops
