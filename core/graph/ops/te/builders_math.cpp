// Tensor-expression builders of Einsum and the window functions (math_ops.h).
//
//   Einsum("bij,bjk->bik")  ──▶  einsum_3[b, i, k] = sum(p0[b, i, j] * p1[b, j, k], j)
//   HannWindow(size 8)      ──▶  hannwindow_4[n] = 0.5 - 0.5 * cos(2 pi n / 8)
#include <numbers>

#include "core/graph/ops/math_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te/builders.h"

namespace tessel::compile::te_builder {

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

}  // namespace tessel::compile::te_builder
