// Tensor-expression builders: rounding without a rounding intrinsic, boolean logic, and the
// reductions whose result is not a plain sum/max/min (products, logs, indices).
#include <algorithm>

#include "core/graph/ops/nn_softmax.h"
#include "core/graph/ops/reduce.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

// Rounding without a rounding intrinsic, exact for every float: truncation through int64 (the
// loop IR's float→int cast truncates), corrected by one. Values at or above 2^mantissa are
// integers already and pass through, as do NaN and infinities (the comparison fails).
//
//   x = -2.5:  t = -2   floor: x < t → -3   ceil: t = -2   round (half to even): |x-t| = .5, t even → -2
namespace {

// 2^52, 2^23: at or above it, every value of the type is an integer.
double integral_limit_value(DataType t) { return t == DataType::kFloat64 ? 4503599627370496.0 : 8388608.0; }
Expr integral_limit(DataType t) { return num(t, integral_limit_value(t)); }
// trunc(x) as int64, of x clamped to the limit first: every use is under when_fractional, which
// keeps x itself beyond it, and a cast of a clamped value is a plain conversion
// (loopir::float_cast_is_in_range) rather than the saturating rule that NaN and huge values would
// need (a compare and two selects per element more, in QuantizeLinear's inner loop).
Expr truncated_integer(const Expr& x) {
  const double limit = integral_limit_value(x->dtype);
  return te::cast(DataType::kInt64, loopir::min(loopir::max(x, num(x->dtype, -limit)), num(x->dtype, limit)));
}
Expr truncated(const Expr& x) { return te::cast(x->dtype, truncated_integer(x)); }
Expr when_fractional(const Expr& x, const Expr& rounded) {
  return te::if_then_else(loopir::lt(te::intrinsic("abs", {x}), integral_limit(x->dtype)), rounded, x);
}
}  // namespace

Expr floor_of(const Expr& x) {
  Expr t = truncated(x);
  return when_fractional(x, te::if_then_else(loopir::lt(x, t), t - num(x->dtype, 1), t));
}
Expr ceil_of(const Expr& x) {
  Expr t = truncated(x);
  return when_fractional(x, te::if_then_else(loopir::gt(x, t), t + num(x->dtype, 1), t));
}
Expr round_half_even(const Expr& x) {
  DataType t = x->dtype;
  Expr whole = truncated(x);
  Expr away = whole + te::if_then_else(loopir::lt(x, num(t, 0)), num(t, -1), num(t, 1));
  Expr fraction = te::intrinsic("abs", {x - whole});  // exact: |x - trunc(x)| < 1
  Expr odd = loopir::ne(truncated_integer(x) % 2, make_int(0));
  Expr up = loopir::logical_or(loopir::gt(fraction, num(t, 0.5)),
                               loopir::logical_and(loopir::eq(fraction, num(t, 0.5)), odd));
  return when_fractional(x, te::if_then_else(up, away, whole));
}
Expr sign_of(const Expr& x) {
  DataType t = x->dtype;
  // NaN compares false everywhere and stays NaN.
  return te::if_then_else(
      loopir::gt(x, num(t, 0)), num(t, 1),
      te::if_then_else(loopir::lt(x, num(t, 0)), num(t, -1), te::if_then_else(loopir::eq(x, num(t, 0)), num(t, 0), x)));
}

namespace {

// ReduceProd, ReduceLogSum and ReduceLogSumExp (max + log(sum(exp(x - max))), which never overflows).
Stages reduce_more(BuildContext& c, const std::string& kind) {
  DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  const auto& a = c.attrs<ops::ReduceAttrs>();
  std::vector<int64_t> axes = normalized_axes(c, a.axes, rank);
  const bool keepdims = a.keepdims != 0;
  auto id = [](const Expr& v) { return v; };
  if (kind == "prod") {
    std::vector<IterVar> r;
    for (int64_t ax : axes) r.push_back(te::reduce_axis(x->shape[ax], "r" + std::to_string(ax)));
    te::Reducer product = te::make_reducer(
        "prod", t, [](Expr p, Expr q) { return p * q; }, num(t, 1));
    return std::vector<te::Tensor>{te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
      std::vector<Expr> src;
      size_t o = 0, k = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
          src.push_back(r[k++].var);
          if (keepdims) ++o;
        } else {
          src.push_back(idx[o++]);
        }
      }
      return te::reduce(product, te::at(x, src), r);
    })};
  }
  if (kind == "logsum") {
    te::Tensor s = reduction(c, x, axes, keepdims, "sum", id, c.stage("sum"), c.shape());
    return std::vector<te::Tensor>{
        te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) { return te::log(te::at(s, i)); })};
  }
  Shape kept = x->shape;
  for (int64_t ax : axes) kept[ax] = 1;
  te::Tensor m = reduction(c, x, axes, true, "max", id, c.stage("max"), kept);
  te::Tensor e = te::compute(c.stage("exp"), x->shape,
                             [&](const std::vector<Expr>& i) { return te::exp(te::at(x, i) - broadcast_read(m, i)); });
  te::Tensor s = reduction(c, e, axes, true, "sum", id, c.stage("sum"), kept);
  return std::vector<te::Tensor>{te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    // Output index → index of the kept-dims intermediates (0 on reduced axes).
    std::vector<Expr> k;
    size_t o = 0;
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (reduced) {
        k.push_back(make_int(0));
        if (keepdims) ++o;
      } else {
        k.push_back(idx[o++]);
      }
    }
    // A max of -inf (every element -inf) would give NaN from exp(-inf - -inf): that is the reference's answer too.
    return te::log(te::at(s, k)) + te::at(m, k);
  })};
}

// ArgMax / ArgMin as three reductions along the axis (the loop IR's reducers carry one value, not
// a value and its index), matching the reference kernel: the first (or last) index holding the
// extreme value, and a NaN, when there is one, wins over every number.
//
//   x = [3 7 7 1]   extreme = max = 7   first index with x == 7 → 1   (select_last_index: 2)
Stages arg_extreme(BuildContext& c, bool is_max) {
  float_operand(c);
  const te::Tensor& x = c.input(0);
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  const auto& a = c.attrs<ops::ArgAttrs>();
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  const bool keepdims = a.keepdims != 0, last = a.select_last_index != 0;
  Shape kept = x->shape;
  kept[axis] = 1;
  auto id = [](const Expr& v) { return v; };
  te::Tensor extreme = reduction(c, x, {axis}, true, is_max ? "max" : "min", id, c.stage("extreme"), kept);
  // Index of the first (min) or last (max) element satisfying `hit`; `none` when there is none.
  const int64_t none = last ? -1 : x->shape[axis];
  auto position = [&](const std::string& name, const std::function<Expr(const Expr& v, const Expr& e)>& hit) {
    IterVar r = te::reduce_axis(x->shape[axis], "r");
    return te::compute(c.stage(name), kept, [&](const std::vector<Expr>& i) {
      std::vector<Expr> src = i;
      src[axis] = r.var;
      Expr found = te::if_then_else(hit(te::at(x, src), te::at(extreme, i)), Expr(r.var), make_int(none));
      return last ? te::max_reduce(found, {r}) : te::min_reduce(found, {r});
    });
  };
  te::Tensor nan_at = position("nan", [](const Expr& v, const Expr&) { return loopir::ne(v, v); });
  te::Tensor extreme_at = position("at", [](const Expr& v, const Expr& e) { return loopir::eq(v, e); });
  return std::vector<te::Tensor>{te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> k = idx;
    if (!keepdims)
      k.insert(k.begin() + axis, make_int(0));
    else
      k[axis] = make_int(0);
    Expr n = te::at(nan_at, k);
    return convert(c.dtype(), te::if_then_else(loopir::ne(n, make_int(none)), n, te::at(extreme_at, k)));
  })};
}

}  // namespace

Stages reduce_prod(BuildContext& c) { return reduce_more(c, "prod"); }
Stages reduce_log_sum(BuildContext& c) { return reduce_more(c, "logsum"); }
Stages reduce_log_sum_exp(BuildContext& c) { return reduce_more(c, "logsumexp"); }
Stages arg_max(BuildContext& c) { return arg_extreme(c, true); }
Stages arg_min(BuildContext& c) { return arg_extreme(c, false); }

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere, as the reference scans it (a strict
// `>` from element 0, so a NaN is never chosen unless it is element 0, which then stays chosen).
//
//   x = [2 9 9 1]   max = 9   first index of 9 = 1   →   [0 1 0 0]
std::vector<te::Tensor> hardmax(BuildContext& c) {
  float_operand(c);
  const te::Tensor& x = c.input(0);
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = c.attrs<ops::SoftmaxAttrs>().axis;
  if (axis < 0) axis += rank;
  const int64_t n = x->shape[axis];
  Shape kept = x->shape;
  kept[axis] = 1;
  te::Tensor m = reduction(
      c, x, {axis}, true, "max", [](const Expr& v) { return v; }, c.stage("max"), kept);
  IterVar r = te::reduce_axis(n, "r");
  te::Tensor first = te::compute(c.stage("first"), kept, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src = i;
    src[axis] = r.var;
    return te::min_reduce(te::if_then_else(loopir::eq(te::at(x, src), te::at(m, i)), Expr(r.var), make_int(n)), {r});
  });
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> k = idx, head = idx;
    k[axis] = make_int(0);
    head[axis] = make_int(0);
    Expr x0 = te::at(x, head);
    // No element equals the max (NaNs only) or element 0 is NaN: the reference keeps index 0.
    Expr chosen = te::if_then_else(loopir::logical_or(loopir::ne(x0, x0), loopir::eq(te::at(first, k), make_int(n))),
                                   make_int(0), te::at(first, k));
    return te::if_then_else(loopir::eq(idx[axis], chosen), num(c.dtype(), 1), num(c.dtype(), 0));
  })};
}

}  // namespace tessel::ops::te_builder
