// Tensor-expression builders of Einsum, the window functions and DFT (math_ops.h).
//
//   Einsum("bij,bjk->bik")  ──▶  einsum_3[b, i, k] = sum(p0[b, i, j] * p1[b, j, k], j)
//   HannWindow(size 8)      ──▶  hannwindow_4[n] = 0.5 - 0.5 * cos(2 pi n / 8)
#include <algorithm>
#include <numbers>

#include "core/graph/ops/math_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

Stages einsum(BuildContext& c) {
  const DataType t = float_operand(c);
  std::vector<Shape> shapes;
  for (size_t i = 0; i < c.in.size(); ++i) shapes.push_back(c.input(i)->shape);
  const ops::EinsumPlan plan = ops::plan_einsum(c.attrs<ops::EinsumAttrs>().equation, shapes);
  std::vector<IterVar> summed;
  for (int l : plan.summed_labels)
    summed.push_back(te::reduce_axis(plan.extents[static_cast<size_t>(l)], "r" + std::to_string(summed.size())));
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& p) {
    std::vector<Expr> label(plan.extents.size());
    for (size_t k = 0; k < plan.output_labels.size(); ++k) label[static_cast<size_t>(plan.output_labels[k])] = p[k];
    for (size_t k = 0; k < summed.size(); ++k) label[static_cast<size_t>(plan.summed_labels[k])] = summed[k].var;
    Expr product;
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::vector<Expr> idx;
      for (size_t k = 0; k < shapes[i].size(); ++k)
        idx.push_back(shapes[i][k] == 1 ? make_int(0) : label[static_cast<size_t>(plan.input_labels[i][k])]);
      Expr v = convert(t, te::at(c.in[i], idx));
      product = product ? product * v : v;
    }
    return summed.empty() ? product : te::sum(product, summed);
  })};
}

namespace {

Stages window(BuildContext& c, double a0, double a1, double a2) {
  const DataType t = c.dtype();
  if (t != DataType::kFloat32 && t != DataType::kFloat64) c.unsupported(std::string(dtype_name(t)) + " output");
  const int64_t n = c.shape()[0];
  const double d = static_cast<double>(c.attrs<ops::WindowAttrs>().periodic ? n : n - 1);
  const double step = d == 0 ? 0.0 : 2.0 * std::numbers::pi / d;
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& p) {
    Expr phase = convert(t, p[0]) * num(t, step);
    Expr w = num(t, a0) - num(t, a1) * te::intrinsic("cos", {phase});
    if (a2 != 0) w = w + num(t, a2) * te::intrinsic("cos", {phase * num(t, 2)});
    return w;
  })};
}

}  // namespace

Stages hann_window(BuildContext& c) {
  const auto w = ops::HannKind::coefficients;
  return window(c, w.a0, w.a1, w.a2);
}
Stages hamming_window(BuildContext& c) {
  const auto w = ops::HammingKind::coefficients;
  return window(c, w.a0, w.a1, w.a2);
}
Stages blackman_window(BuildContext& c) {
  const auto w = ops::BlackmanKind::coefficients;
  return window(c, w.a0, w.a1, w.a2);
}

// One reduction over the signal: y[..., k, c] = sum_j (x_re cos - x_im sin, x_re sin + x_im cos)[c]
// at angle -+2 pi (j k mod n) / n, the product reduced modulo n. Summed in f64 (the terms of a
// zero frequency bin cancel; f32 would leave ~1e-5 of rounding there), then stored as the input's type.
Stages dft(BuildContext& c) {
  const auto& a = c.attrs<ops::DFTAttrs>();
  const DataType t = float_operand(c);
  const DataType acc = DataType::kFloat64;
  const te::Tensor& x = c.input(0);
  const Shape& X = x->shape;
  Tensor length;
  if (c.has(1)) length = c.known(1, "dft_length");
  const ops::DFTPlan p = ops::plan_dft(a, X, c.has(1) ? &length : nullptr);
  const int64_t used = std::min(X[p.axis], p.length);
  const bool complex = X.back() == 2;
  const double step = (a.inverse ? 2.0 : -2.0) * std::numbers::pi / static_cast<double>(p.length);
  IterVar j = te::reduce_axis(used, "j");
  te::Tensor sum = te::compute(c.stage("sum"), c.shape(), [&](const std::vector<Expr>& o) {
    std::vector<Expr> src = o;
    src[p.axis] = j.var;
    src.back() = make_int(0);
    Expr re = convert(acc, te::at(x, src));
    Expr im = num(acc, 0);
    if (complex) {
      src.back() = make_int(1);
      im = convert(acc, te::at(x, src));
    }
    Expr turns = (Expr(j.var) * convert(DataType::kInt64, o[p.axis])) % p.length;
    Expr theta = convert(acc, turns) * num(acc, step);
    Expr cosine = te::intrinsic("cos", {theta}), sine = te::intrinsic("sin", {theta});
    Expr part = te::if_then_else(loopir::eq(convert(DataType::kInt64, o.back()), make_int(0)), re * cosine - im * sine,
                                 re * sine + im * cosine);
    if (a.inverse) part = part / num(acc, static_cast<double>(p.length));
    return te::sum(part, {j});
  });
  if (t == acc) return {sum};
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& o) { return convert(t, te::at(sum, o)); })};
}

}  // namespace tessel::ops::te_builder
