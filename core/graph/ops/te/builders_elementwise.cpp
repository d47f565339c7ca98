// Tensor-expression builders for the element-wise and broadcast ops: one compute stage over the
// output shape, each element a formula of the broadcast reads of the inputs.
//
//   Add(p0: f32[4,1], p1: f32[3])  ──▶  add_7[i, j] = p0[i, 0] + p1[j]
#include <cmath>
#include <numbers>

#include "core/graph/ops/elementwise.h"
#include "core/graph/ops/nn.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te/builders.h"

namespace tessel::compile::te_builder {

namespace {

using Values = const std::vector<Expr>&;

// f(x) on float inputs.
template <class F>
Stages unary(BuildContext& c, F f) {
  DataType t = float_operand(c);
  return {elementwise(c, t, [&](Values v) { return f(v[0]); })};
}

// f(a, b) on numbers; float_only for formulas whose integer meaning differs (Div) or is absent.
template <class F>
Stages binary(BuildContext& c, F f, bool float_only) {
  DataType t = c.input(0)->dtype;
  if (float_only) float_operand(c);
  if (t == DataType::kBool || t == DataType::kInt8 || t == DataType::kUInt8 || t == DataType::kInt16)
    c.unsupported(std::string(dtype_name(t)) + " operands");
  return {elementwise(c, t, [&](Values v) { return f(v[0], v[1]); })};
}

template <class F>
Stages compare(BuildContext& c, F f) {
  DataType t = c.input(0)->dtype;
  if (!dtype_is_float(t) && t != DataType::kInt64 && t != DataType::kInt32)
    c.unsupported(std::string(dtype_name(t)) + " operands");
  return {elementwise(c, t, [&](Values v) { return f(v[0], v[1]); })};
}

// f folded over every input; Mean then divides by their number.
template <class F>
Stages variadic(BuildContext& c, F f, bool mean) {
  // Min, Max and Sum also take int32/int64 (Mean divides: floats only).
  DataType t = c.input(0)->dtype;
  if (mean || (t != DataType::kInt32 && t != DataType::kInt64)) t = float_operand(c);
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

Stages identity(BuildContext& c) { return copy(c); }
Stages dropout(BuildContext& c) {
  if (c.out.size() > 1) c.unsupported("the mask output");
  return copy(c);
}
Stages cast(BuildContext& c) {
  return {elementwise(c, c.input(0)->dtype, [&](Values v) { return te::cast(c.dtype(), v[0]); })};
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

}  // namespace tessel::compile::te_builder
