// Tensor-expression builders for the element-wise and broadcast ops: one compute stage over the
// output shape, each element a formula of the broadcast reads of the inputs.
//
//   Add(p0: f32[4,1], p1: f32[3])  ──▶  add_7[i, j] = p0[i, 0] + p1[j]
#include <cmath>
#include <numbers>

#include "core/graph/ops/elementwise.h"
#include "core/graph/ops/nn.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

namespace {

using Values = const std::vector<Expr>&;

// f(x) on float inputs.
template <class F>
Stages unary(BuildContext& c, F f) {
  DataType t = float_operand(c);
  return {elementwise(c, t, [&](Values v) { return f(v[0]); })};
}

// The type u16 and u32 operands are computed in: int64 holds them exactly, and the result narrows
// back modulo 2^bits as their own arithmetic would. u64 stays u64, so that its order is unsigned.
DataType unsigned_operand(DataType t) {
  return t == DataType::kUInt16 || t == DataType::kUInt32 ? DataType::kInt64 : t;
}

// f(a, b) on numbers; float_only for formulas whose integer meaning differs (Div) or is absent.
template <class F>
Stages binary(BuildContext& c, F f, bool float_only) {
  DataType t = c.input(0)->dtype;
  if (float_only) float_operand(c);
  if (t == DataType::kBool || t == DataType::kInt8 || t == DataType::kUInt8 || t == DataType::kInt16)
    c.unsupported(std::string(dtype_name(t)) + " operands");
  return {elementwise(c, unsigned_operand(t), [&](Values v) { return f(v[0], v[1]); })};
}

template <class F>
Stages compare(BuildContext& c, F f) {
  DataType t = unsigned_operand(c.input(0)->dtype);
  if (!dtype_is_float(t) && t != DataType::kInt64 && t != DataType::kInt32 && t != DataType::kUInt64)
    c.unsupported(std::string(dtype_name(t)) + " operands");
  return {elementwise(c, t, [&](Values v) { return f(v[0], v[1]); })};
}

// f folded over every input; Mean then divides by their number.
template <class F>
Stages variadic(BuildContext& c, F f, bool mean) {
  // Min, Max and Sum also take int32/int64 and the unsigned types from u16 (Mean divides: floats only).
  DataType t = unsigned_operand(c.input(0)->dtype);
  if (mean || (t != DataType::kInt32 && t != DataType::kInt64 && t != DataType::kUInt64)) t = float_operand(c);
  return {elementwise(c, t, [&](Values v) {
    Expr acc = v[0];
    for (size_t i = 1; i < v.size(); ++i) acc = f(acc, v[i]);
    return mean ? acc / num(t, static_cast<double>(v.size())) : acc;
  })};
}

template <class F>
Stages logic(BuildContext& c, F f) {
  if (c.input(0)->dtype != DataType::kBool) c.unsupported(std::string(dtype_name(c.input(0)->dtype)) + " operands");
  return {elementwise(c, DataType::kBool, [&](Values v) { return f(v[0], v[1]); })};
}

Stages copy(BuildContext& c) {
  return {elementwise(c, c.input(0)->dtype, [](Values v) { return v[0]; })};
}

}  // namespace

Stages relu(BuildContext& c) {
  return unary(c, [](const Expr& x) { return loopir::max(x, num(x->dtype, 0)); });
}
Stages leaky_relu(BuildContext& c) {
  return unary(c, [&](const Expr& x) {
    return te::if_then_else(loopir::lt(x, num(x->dtype, 0)), x * num(x->dtype, c.attrs<ops::LeakyReluAttrs>().alpha),
                            x);
  });
}
Stages sigmoid(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::sigmoid(x); });
}
Stages tanh(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::tanh(x); });
}
Stages exp(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::exp(x); });
}
Stages log(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::log(x); });
}
Stages sqrt(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::sqrt(x); });
}
Stages erf(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::erf(x); });
}
Stages neg(BuildContext& c) {
  return unary(c, [](const Expr& x) { return -x; });
}
Stages abs(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("abs", {x}); });
}
Stages reciprocal(BuildContext& c) {
  return unary(c, [](const Expr& x) { return num(x->dtype, 1) / x; });
}
Stages softplus(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::log(te::exp(x) + num(x->dtype, 1)); });
}
Stages softsign(BuildContext& c) {
  return unary(c, [](const Expr& x) { return x / (te::intrinsic("abs", {x}) + num(x->dtype, 1)); });
}
Stages hard_swish(BuildContext& c) {
  return unary(c, [](const Expr& x) {
    DataType t = x->dtype;
    return x * loopir::max(num(t, 0), loopir::min(num(t, 1), x / num(t, 6) + num(t, 0.5)));
  });
}
Stages hard_sigmoid(BuildContext& c) {
  const auto& a = c.attrs<ops::HardSigmoidAttrs>();
  return unary(c, [&](const Expr& x) {
    DataType t = x->dtype;
    return loopir::max(num(t, 0), loopir::min(num(t, 1), x * num(t, a.alpha) + num(t, a.beta)));
  });
}
Stages elu(BuildContext& c) {
  return unary(c, [&](const Expr& x) {
    DataType t = x->dtype;
    return te::if_then_else(loopir::lt(x, num(t, 0)), num(t, c.attrs<ops::EluAttrs>().alpha) * (te::exp(x) - num(t, 1)),
                            x);
  });
}
Stages celu(BuildContext& c) {
  const float alpha = c.attrs<ops::CeluAttrs>().alpha;
  return unary(c, [&](const Expr& x) {
    DataType t = x->dtype;
    return te::if_then_else(loopir::lt(x, num(t, 0)), num(t, alpha) * (te::exp(x / num(t, alpha)) - num(t, 1)), x);
  });
}
Stages selu(BuildContext& c) {
  const auto& a = c.attrs<ops::SeluAttrs>();
  return unary(c, [&](const Expr& x) {
    DataType t = x->dtype;
    return te::if_then_else(loopir::le(x, num(t, 0)),
                            num(t, a.gamma) * (num(t, a.alpha) * te::exp(x) - num(t, a.alpha)), num(t, a.gamma) * x);
  });
}
Stages gelu(BuildContext& c) {
  const bool tanh_form = c.attrs<ops::GeluAttrs>().approximate == "tanh";
  return unary(c, [&](const Expr& x) {
    DataType t = x->dtype;
    if (tanh_form) {
      Expr inner = num(t, std::sqrt(2.0 / std::numbers::pi)) * (x + num(t, 0.044715) * x * x * x);
      return num(t, 0.5) * x * (num(t, 1) + te::tanh(inner));
    }
    return num(t, 0.5) * x * (num(t, 1) + te::erf(x * num(t, 1.0 / std::numbers::sqrt2)));
  });
}
Stages floor(BuildContext& c) {
  return unary(c, [](const Expr& x) { return floor_of(x); });
}
Stages ceil(BuildContext& c) {
  return unary(c, [](const Expr& x) { return ceil_of(x); });
}
Stages round(BuildContext& c) {
  return unary(c, [](const Expr& x) { return round_half_even(x); });
}
Stages sign(BuildContext& c) {
  DataType t = c.input(0)->dtype;
  if (t != DataType::kFloat32 && t != DataType::kFloat64 && t != DataType::kInt32 && t != DataType::kInt64)
    c.unsupported(std::string(dtype_name(t)) + " inputs");
  return {elementwise(c, t, [](Values v) { return sign_of(v[0]); })};
}

Stages sin(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("sin", {x}); });
}
Stages cos(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("cos", {x}); });
}
Stages tan(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("tan", {x}); });
}
Stages asin(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("asin", {x}); });
}
Stages acos(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("acos", {x}); });
}
Stages atan(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("atan", {x}); });
}
Stages sinh(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("sinh", {x}); });
}
Stages cosh(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("cosh", {x}); });
}
Stages asinh(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("asinh", {x}); });
}
Stages acosh(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("acosh", {x}); });
}
Stages atanh(BuildContext& c) {
  return unary(c, [](const Expr& x) { return te::intrinsic("atanh", {x}); });
}
Stages shrink(BuildContext& c) {
  const auto& a = c.attrs<ops::ShrinkAttrs>();
  return unary(c, [&](const Expr& x) {
    DataType t = x->dtype;
    return te::if_then_else(loopir::lt(x, num(t, -a.lambd)), x + num(t, a.bias),
                            te::if_then_else(loopir::gt(x, num(t, a.lambd)), x - num(t, a.bias), num(t, 0)));
  });
}
Stages thresholded_relu(BuildContext& c) {
  const float alpha = c.attrs<ops::ThresholdedReluAttrs>().alpha;
  return unary(
      c, [&](const Expr& x) { return te::if_then_else(loopir::gt(x, num(x->dtype, alpha)), x, num(x->dtype, 0)); });
}
// Compares with the infinities themselves (no fast-math: they stay meaningful).
Stages is_inf(BuildContext& c) {
  const auto& a = c.attrs<ops::IsInfAttrs>();
  DataType t = float_operand(c);
  return {elementwise(c, t, [&](Values v) {
    Expr pos = loopir::eq(v[0], num(t, HUGE_VAL));
    Expr neg = loopir::eq(v[0], num(t, -HUGE_VAL));
    if (a.detect_positive && a.detect_negative) return loopir::logical_or(pos, neg);
    if (a.detect_positive) return pos;
    if (a.detect_negative) return neg;
    return loopir::logical_and(pos, neg);  // neither sign asked for: never true
  })};
}
Stages is_nan(BuildContext& c) {
  DataType t = float_operand(c);
  return {elementwise(c, t, [](Values v) { return loopir::ne(v[0], v[0]); })};
}

Stages identity(BuildContext& c) { return copy(c); }
Stages dropout(BuildContext& c) {
  if (c.out.size() > 1) c.unsupported("the mask output");
  return copy(c);
}
Stages cast(BuildContext& c) {
  return {elementwise(c, unsigned_operand(c.input(0)->dtype), [&](Values v) { return te::cast(c.dtype(), v[0]); })};
}
Stages cast_like(BuildContext& c) { return cast(c); }
Stages clip(BuildContext& c) {
  DataType t = float_operand(c);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    Expr v = te::at(c.in[0], idx);
    if (c.has(1)) v = loopir::max(v, te::at(c.in[1], {}));
    if (c.has(2)) v = loopir::min(v, te::at(c.in[2], {}));
    return convert(t, v);
  })};
}

Stages logical_not(BuildContext& c) {
  if (c.input(0)->dtype != DataType::kBool) c.unsupported(std::string(dtype_name(c.input(0)->dtype)) + " input");
  return {elementwise(c, DataType::kBool, [](Values v) { return loopir::make_not(v[0]); })};
}
Stages logical_and(BuildContext& c) {
  return logic(c, [](const Expr& a, const Expr& b) { return loopir::logical_and(a, b); });
}
Stages logical_or(BuildContext& c) {
  return logic(c, [](const Expr& a, const Expr& b) { return loopir::logical_or(a, b); });
}
Stages logical_xor(BuildContext& c) {
  return logic(c, [](const Expr& a, const Expr& b) { return loopir::ne(a, b); });
}

Stages add(BuildContext& c) {
  return binary(
      c, [](const Expr& a, const Expr& b) { return a + b; }, false);
}
Stages sub(BuildContext& c) {
  return binary(
      c, [](const Expr& a, const Expr& b) { return a - b; }, false);
}
Stages mul(BuildContext& c) {
  return binary(
      c, [](const Expr& a, const Expr& b) { return a * b; }, false);
}
// Integer Div truncates in ONNX but floors in the loop IR: only floats here.
Stages div(BuildContext& c) {
  return binary(
      c, [](const Expr& a, const Expr& b) { return a / b; }, true);
}
Stages pow(BuildContext& c) {
  return binary(
      c, [](const Expr& a, const Expr& b) { return te::pow(a, b); }, true);
}
Stages prelu(BuildContext& c) {
  return binary(
      c, [](const Expr& a, const Expr& b) { return te::if_then_else(loopir::lt(a, num(a->dtype, 0)), a * b, a); },
      true);
}

// fmod 1: C's fmod (floats) or the truncated remainder (integers); fmod 0: the loop IR's own
// integer %, which floors, so the remainder takes the divisor's sign as ONNX asks.
Stages mod(BuildContext& c) {
  DataType t = c.input(0)->dtype;
  if (t == DataType::kFloat16 || t == DataType::kBFloat16) c.unsupported(std::string(dtype_name(t)) + " operands");
  // Narrow integers: exact in int64. u64 keeps its type: its remainder is unsigned (and both rules agree).
  if (!dtype_is_float(t) && t != DataType::kInt32 && t != DataType::kUInt64) t = DataType::kInt64;
  const bool fmod = c.attrs<ops::ModAttrs>().fmod != 0;
  const std::string node = "node '" + (c.node.name.empty() ? c.stage() : c.node.name) + "' (Mod)";
  return {elementwise(c, t, [&](Values v) {
    if (dtype_is_float(t)) return te::intrinsic("fmod", {v[0], v[1]});
    // Integer % traps (SIGFPE) on a zero divisor and on MIN % -1. A zero divisor fails the kernel's
    // check, naming the node, as the reference does; -1 divides everything, so its remainder is 0
    // under both rules, which x % 1 gives without the overflow. The check reads 0 where it fails,
    // so the divisor is made safe after it, not before.
    Expr zero = num(t, 0), one = num(t, 1);
    Expr checked = loopir::make_check(loopir::ne(v[1], zero), v[1], convert(DataType::kInt64, v[1]),
                                      node + ": integer remainder by zero");
    Expr unsafe = loopir::eq(checked, zero);
    if (t != DataType::kUInt64) unsafe = loopir::logical_or(unsafe, loopir::eq(checked, num(t, -1)));
    Expr divisor = te::if_then_else(unsafe, one, checked);
    Expr floored = v[0] % divisor;
    if (!fmod) return floored;
    Expr differs = loopir::ne(loopir::lt(floored, zero), loopir::lt(v[0], zero));
    return te::if_then_else(loopir::logical_and(loopir::ne(floored, zero), differs), floored - divisor, floored);
  })};
}
// No shift in the loop IR: x * 2^s or x / 2^s on int64, 2^s chosen from the type's width.
Stages bit_shift(BuildContext& c) {
  const bool left = c.attrs<ops::BitShiftAttrs>().direction == "LEFT";
  const int64_t bits = static_cast<int64_t>(dtype_size(c.dtype()) * 8);
  if (bits > 32) c.unsupported(std::string(dtype_name(c.dtype())) + " operands");  // u64: 2^63 is no int64
  return {elementwise(c, DataType::kInt64, [&](Values v) {
    Expr power = make_int(0);  // a shift by the width or more leaves nothing
    for (int64_t s = bits - 1; s >= 0; --s)
      power = te::if_then_else(loopir::eq(v[1], make_int(s)), make_int(int64_t{1} << s), power);
    if (left) return (v[0] * power) % make_int(int64_t{1} << bits);
    return te::if_then_else(loopir::eq(power, make_int(0)), make_int(0), v[0] / loopir::max(power, make_int(1)));
  })};
}

Stages equal(BuildContext& c) {
  return compare(c, [](const Expr& a, const Expr& b) { return loopir::eq(a, b); });
}
Stages less(BuildContext& c) {
  return compare(c, [](const Expr& a, const Expr& b) { return loopir::lt(a, b); });
}
Stages greater(BuildContext& c) {
  return compare(c, [](const Expr& a, const Expr& b) { return loopir::gt(a, b); });
}
Stages less_or_equal(BuildContext& c) {
  return compare(c, [](const Expr& a, const Expr& b) { return loopir::le(a, b); });
}
Stages greater_or_equal(BuildContext& c) {
  return compare(c, [](const Expr& a, const Expr& b) { return loopir::ge(a, b); });
}

Stages max(BuildContext& c) {
  return variadic(
      c, [](const Expr& a, const Expr& b) { return loopir::max(a, b); }, false);
}
Stages min(BuildContext& c) {
  return variadic(
      c, [](const Expr& a, const Expr& b) { return loopir::min(a, b); }, false);
}
Stages sum(BuildContext& c) {
  return variadic(
      c, [](const Expr& a, const Expr& b) { return a + b; }, false);
}
Stages mean(BuildContext& c) {
  return variadic(
      c, [](const Expr& a, const Expr& b) { return a + b; }, true);
}

Stages where(BuildContext& c) {
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    return te::if_then_else(broadcast_read(c.in[0], idx), broadcast_read(c.in[1], idx), broadcast_read(c.in[2], idx));
  })};
}

}  // namespace tessel::ops::te_builder
