// Normalization and Lp pooling: InstanceNormalization, MeanVarianceNormalization, LRN, LpPool,
// GlobalLpPool. Each follows its reference kernel (core/graph/ops/nn_norm.cpp, nn_pool.cpp): the
// same statistics (two passes: the mean, then the mean of squared deviations), the same epsilon
// placement and the same window rules, computed in the input's float type.
#include <algorithm>

#include "core/graph/ops/nn_norm.h"
#include "core/graph/ops/nn_pool.h"
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

namespace {

Expr identity(const Expr& v) { return v; }

int64_t count_over(const Shape& s, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= s[a];
  return n;
}

// Mean and (population) variance of x over `axes`, both shaped like x with those axes set to 1,
// and x minus its mean:
//
//   x[n,c,h,w] ──sum/count──▶ mean[n,c,1,1] ──x - mean──▶ centered ──Σ²/count──▶ var[n,c,1,1]
struct Moments {
  te::Tensor mean, centered, var;
};
Moments moments(BuildContext& c, const te::Tensor& x, const std::vector<int64_t>& axes) {
  const DataType t = x->dtype;
  Shape kept = x->shape;
  for (int64_t a : axes) kept[a] = 1;
  const double n = static_cast<double>(count_over(x->shape, axes));
  te::Tensor sum = reduction(c, x, axes, true, "sum", identity, c.stage("sum"), kept);
  Moments m;
  m.mean = te::compute(c.stage("mean"), kept, [&](const std::vector<Expr>& i) { return te::at(sum, i) / num(t, n); });
  m.centered = te::compute(c.stage("centered"), x->shape,
                           [&](const std::vector<Expr>& i) { return te::at(x, i) - broadcast_read(m.mean, i); });
  te::Tensor squares = reduction(
      c, m.centered, axes, true, "sum", [](const Expr& v) { return v * v; }, c.stage("squares"), kept);
  m.var = te::compute(c.stage("var"), kept, [&](const std::vector<Expr>& i) { return te::at(squares, i) / num(t, n); });
  return m;
}

// InstanceNormalization: each (n, c) plane normalized over its spatial axes, then scale[c]·y + B[c].
}  // namespace

std::vector<te::Tensor> instance_norm(BuildContext& c) {
  const DataType t = float_operand(c);
  const te::Tensor &x = c.input(0), &scale = c.input(1), &bias = c.input(2);
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  if (rank < 3) c.unsupported("rank " + std::to_string(rank) + " input (N×C×D1… expected)");
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < rank; ++d) spatial.push_back(d);
  const float eps = c.attrs<ops::InstanceNormalizationAttrs>().epsilon;
  Moments m = moments(c, x, spatial);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr inv_std = num(t, 1) / te::sqrt(broadcast_read(m.var, i) + num(t, eps));
    return te::at(m.centered, i) * inv_std * te::at(scale, {i[1]}) + te::at(bias, {i[1]});
  })};
}

// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes` (ONNX puts its epsilon
// on the standard deviation). With no axes every element is its own group: 0 (NaN for NaN or ±inf).
std::vector<te::Tensor> mean_variance_norm(BuildContext& c) {
  const DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  const auto& a = c.attrs<ops::MeanVarianceNormalizationAttrs>();
  constexpr double kEpsilon = 1e-9;
  if (a.axes.empty())
    return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
      Expr v = te::at(x, i);
      return (v - v) / num(t, kEpsilon);
    })};
  Moments m = moments(c, x, normalized_axes(c, a.axes, static_cast<int64_t>(x->shape.size())));
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    return te::at(m.centered, i) / (te::sqrt(broadcast_read(m.var, i)) + num(t, kEpsilon));
  })};
}

// LRN: y = x / (bias + alpha/size · Σ x²)^beta, the sum over the `size` channels around c that
// exist. The window starts floor((size-1)/2) channels before c; a reduction axis walks it and a
// guard drops the channels outside the tensor (the guarded read never touches memory there).
//
//   size 4, channel c:   [c-1  c  c+1  c+2]   clipped to [0, C)
std::vector<te::Tensor> lrn(BuildContext& c) {
  const DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  if (x->shape.size() < 2) c.unsupported("rank " + std::to_string(x->shape.size()) + " input (N×C×… expected)");
  const auto& a = c.attrs<ops::LRNAttrs>();
  const int64_t channels = x->shape[1], before = (a.size - 1) / 2;
  IterVar r = te::reduce_axis(a.size, "rc");
  te::Tensor squares = te::compute(c.stage("squares"), x->shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src = i;
    Expr k = i[1] - before + Expr(r.var);
    src[1] = k;
    Expr inside = loopir::logical_and(loopir::ge(k, make_int(0)), loopir::lt(k, make_int(channels)));
    Expr v = te::at(x, src);
    return te::sum(te::if_then_else(inside, v * v, num(t, 0)), {r});
  });
  const double scale = static_cast<double>(a.alpha) / static_cast<double>(a.size);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr base = num(t, a.bias) + num(t, scale) * te::at(squares, i);
    return te::at(x, i) / te::pow(base, num(t, a.beta));
  })};
}

namespace {

// |v|^p and its inverse, (Σ)^(1/p), with the exact forms the reference uses for p = 1 and 2.
Expr lp_power(const Expr& v, int64_t p) {
  if (p == 2) return v * v;
  Expr magnitude = te::intrinsic("abs", {v});
  return p == 1 ? magnitude : te::pow(magnitude, num(v->dtype, static_cast<double>(p)));
}
Expr lp_root(const Expr& s, int64_t p) {
  if (p == 1) return s;
  if (p == 2) return te::sqrt(s);
  return te::pow(s, num(s->dtype, 1.0 / static_cast<double>(p)));
}

// The zero-padded view of an N×C×spatial input: padding contributes |0|^p = 0 to an Lp sum,
// exactly as the reference skips it.
te::Tensor zero_padded(const te::Tensor& x, const ops::nn::WindowGeometry& w, const std::string& name) {
  bool any = false;
  for (size_t d = 0; d < w.rank(); ++d) any = any || w.pad_begin[d] != 0 || w.pad_end[d] != 0;
  if (!any) return x;
  Shape s = x->shape;
  for (size_t d = 0; d < w.rank(); ++d) s[2 + d] += w.pad_begin[d] + w.pad_end[d];
  return te::compute(name, s, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src = i;
    Expr inside;
    for (size_t d = 0; d < w.rank(); ++d) {
      if (w.pad_begin[d] == 0 && w.pad_end[d] == 0) continue;
      Expr v = i[2 + d] - w.pad_begin[d];
      src[2 + d] = v;
      Expr ok = loopir::logical_and(loopir::ge(v, make_int(0)), loopir::lt(v, make_int(x->shape[2 + d])));
      inside = inside ? loopir::logical_and(inside, ok) : ok;
    }
    return te::if_then_else(inside, te::at(x, src), num(x->dtype, 0));
  });
}

// LpPool: (Σ |x|^p)^(1/p) over each window (no dilations, floor rounding, so every window lies
// inside the padded input).
}  // namespace

std::vector<te::Tensor> lp_pool(BuildContext& c) {
  float_operand(c);
  const te::Tensor& x = c.input(0);
  if (x->shape.size() < 3) c.unsupported("pooling needs a spatial axis");
  const auto& a = c.attrs<ops::LpPoolAttrs>();
  static const std::vector<int64_t> no_dilations;
  const Shape spatial(x->shape.begin() + 2, x->shape.end());
  const ops::nn::WindowGeometry geo = ops::nn::resolve_window(
      "LpPool", spatial, a.kernel_shape,
      {.auto_pad = a.auto_pad, .strides = a.strides, .dilations = no_dilations, .pads = a.pads, .ceil_mode = false});
  te::Tensor padded = zero_padded(x, geo, c.stage("pad"));
  std::vector<IterVar> r;
  for (size_t d = 0; d < geo.rank(); ++d) r.push_back(te::reduce_axis(geo.kernel[d], "r" + std::to_string(d)));
  te::Tensor sum = te::compute(c.stage("sum"), c.shape(), [&](const std::vector<Expr>& i) {
    std::vector<Expr> src{i[0], i[1]};
    for (size_t d = 0; d < geo.rank(); ++d) src.push_back(i[2 + d] * geo.stride[d] + Expr(r[d].var));
    return te::sum(lp_power(te::at(padded, src), a.p), r);
  });
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) { return lp_root(te::at(sum, i), a.p); })};
}

// GlobalLpPool: the Lp norm of each (n, c) plane, N×C×D1… → N×C×1….
std::vector<te::Tensor> global_lp_pool(BuildContext& c) {
  float_operand(c);
  const te::Tensor& x = c.input(0);
  const int64_t p = c.attrs<ops::GlobalLpPoolAttrs>().p;
  std::vector<int64_t> spatial;
  for (size_t d = 2; d < x->shape.size(); ++d) spatial.push_back(static_cast<int64_t>(d));
  te::Tensor sum = reduction(
      c, x, spatial, true, "sum", [p](const Expr& v) { return lp_power(v, p); }, c.stage("sum"), c.shape());
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) { return lp_root(te::at(sum, i), p); })};
}

}  // namespace tessel::ops::te_builder
