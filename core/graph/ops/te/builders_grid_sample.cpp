// Tensor-expression builder of GridSample (nn_grid_sample.h): nearest and bilinear sampling with
// zeros or border padding. Reflection and bicubic decline (they run the reference kernel).
//
//   y[n, c, i, j] = sum over the 4 (or 1) taps of weight * pixel(X[n, c], row, col)
//   where (x, y) = denormalize(grid[n, i, j, 0..1]), pixel = 0 (zeros) or clamped (border) outside
#include "core/graph/ops/nn_grid_sample.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

Stages grid_sample(BuildContext& c) {
  const auto& a = c.attrs<ops::GridSampleAttrs>();
  const DataType t = float_operand(c);
  if (c.input(1)->dtype != t) c.unsupported("a grid of another dtype than X");
  const bool nearest = a.mode == "nearest";
  if (!nearest && a.mode != "bilinear" && a.mode != "linear") c.unsupported("mode " + a.mode);
  if (a.padding_mode == "reflection") c.unsupported("padding_mode reflection");
  const bool zeros = a.padding_mode == "zeros";
  const bool corners = a.align_corners != 0;
  const te::Tensor &x = c.input(0), &grid = c.input(1);
  const int64_t h = x->shape[2], w = x->shape[3];
  auto denormalize = [&](const Expr& v, int64_t extent) {
    const double e = static_cast<double>(extent);
    return corners ? (v + num(t, 1)) * num(t, (e - 1) / 2) : ((v + num(t, 1)) * num(t, e) - num(t, 1)) / num(t, 2);
  };
  auto clamp = [&](const Expr& v, double lo, double hi) { return loopir::min(loopir::max(v, num(t, lo)), num(t, hi)); };
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& p) {
    Expr px = denormalize(te::at(grid, {p[0], p[2], p[3], make_int(0)}), w);
    Expr py = denormalize(te::at(grid, {p[0], p[2], p[3], make_int(1)}), h);
    if (nearest) {
      px = round_half_even(px);
      py = round_half_even(py);
    }
    if (!zeros) {  // border: a position outside moves to the nearest pixel centre
      const double x_lo = corners ? 0.0 : -0.5, x_hi = corners ? w - 1.0 : w - 0.5;
      const double y_lo = corners ? 0.0 : -0.5, y_hi = corners ? h - 1.0 : h - 0.5;
      Expr outside = loopir::logical_or(loopir::logical_or(loopir::lt(px, num(t, x_lo)), loopir::gt(px, num(t, x_hi))),
                                        loopir::logical_or(loopir::lt(py, num(t, y_lo)), loopir::gt(py, num(t, y_hi))));
      px = te::if_then_else(outside, clamp(px, 0, w - 1.0), px);
      py = te::if_then_else(outside, clamp(py, 0, h - 1.0), py);
    }
    auto pixel = [&](const Expr& row, const Expr& col) {  // row, col: int64
      Expr r = loopir::min(loopir::max(row, make_int(0)), make_int(h - 1));
      Expr k = loopir::min(loopir::max(col, make_int(0)), make_int(w - 1));
      Expr v = te::at(x, {p[0], p[1], r, k});
      if (!zeros) return v;
      Expr inside =
          loopir::logical_and(loopir::logical_and(loopir::ge(row, make_int(0)), loopir::lt(row, make_int(h))),
                              loopir::logical_and(loopir::ge(col, make_int(0)), loopir::lt(col, make_int(w))));
      return te::if_then_else(inside, v, num(t, 0));
    };
    if (nearest) return pixel(te::cast(DataType::kInt64, py), te::cast(DataType::kInt64, px));
    Expr fx = floor_of(px), fy = floor_of(py);
    Expr x1 = te::cast(DataType::kInt64, fx), y1 = te::cast(DataType::kInt64, fy);
    Expr dx = px - fx, dy = py - fy;
    Expr one = num(t, 1);
    return (one - dy) * ((one - dx) * pixel(y1, x1) + dx * pixel(y1, x1 + 1)) +
           dy * ((one - dx) * pixel(y1 + 1, x1) + dx * pixel(y1 + 1, x1 + 1));
  })};
}

}  // namespace tessel::ops::te_builder
