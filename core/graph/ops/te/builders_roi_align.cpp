// Tensor-expression builder of RoiAlign (nn_roi_align.h) for a fixed sample grid (sampling_ratio
// > 0): one reduction over the grid of each bin, every sample a bilinear read of X at positions
// computed from the roi, clamped as the reference clamps them so every read stays inside X:
//
//   sum[r,c,ph,pw] = Σ(iy,ix) outside ? 0 : Σ corners w·X[b, c, y, x]     (b = batch_indices[r])
//   out = sum / grid²   (avg)     or the largest weighted corner term (max)
// With sampling_ratio 0 the grid's size depends on each roi's values: declined.
#include "core/graph/ops/nn_roi_align.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

Stages roi_align(BuildContext& c) {
  const auto& a = c.attrs<ops::RoiAlignAttrs>();
  const DataType t = float_operand(c);
  if (a.sampling_ratio == 0) c.unsupported("sampling_ratio 0 (the sample grid depends on each roi's size)");
  const te::Tensor &x = c.input(0), &rois = c.input(1), &index = c.input(2);
  const int64_t N = x->shape[0], H = x->shape[2], W = x->shape[3], grid = a.sampling_ratio;
  const bool half_pixel = a.coordinate_transformation_mode == "half_pixel";
  const bool avg = a.mode == "avg";
  IterVar iy = te::reduce_axis(grid, "iy"), ix = te::reduce_axis(grid, "ix");

  te::Tensor pooled = te::compute(c.stage(avg ? "sum" : ""), c.shape(), [&](const std::vector<Expr>& o) {
    const Expr b = checked_index(c, 2, te::at(index, {o[0]}), N, 0);
    auto roi = [&](int64_t k) {
      return te::at(rois, {o[0], make_int(k)}) * num(t, a.spatial_scale) - num(t, half_pixel ? 0.5 : 0.0);
    };
    // One axis of the sample: its clamped position, the low and high pixels, and the weight of the high one.
    struct Axis {
      Expr outside, low, high, frac;
    };
    auto axis = [&](const Expr& start, const Expr& end, const Expr& bin_index, int64_t bins, const Expr& sample,
                    int64_t extent) {
      Expr size = end - start;
      if (!half_pixel) size = loopir::max(size, num(t, 1));
      const Expr bin = size / num(t, static_cast<double>(bins));
      const Expr pos = start + convert(t, bin_index) * bin +
                       (convert(t, sample) + num(t, 0.5)) * bin / num(t, static_cast<double>(grid));
      Axis ax;
      ax.outside =
          loopir::logical_or(loopir::lt(pos, num(t, -1)), loopir::gt(pos, num(t, static_cast<double>(extent))));
      const Expr clamped = loopir::max(pos, num(t, 0));
      const Expr raw = te::cast(DataType::kInt64, clamped);
      const Expr edge = loopir::ge(raw, make_int(extent - 1));
      ax.low = te::if_then_else(edge, make_int(extent - 1), raw);
      ax.high = te::if_then_else(edge, make_int(extent - 1), raw + 1);
      ax.frac = te::if_then_else(edge, num(t, 0), clamped - convert(t, raw));
      return ax;
    };
    const Axis ya = axis(roi(1), roi(3), o[2], a.output_height, iy.var, H);
    const Axis xa = axis(roi(0), roi(2), o[3], a.output_width, ix.var, W);
    const Expr one = num(t, 1);
    auto term = [&](const Expr& wy, const Expr& py, const Expr& wx, const Expr& px) {
      return wy * wx * te::at(x, {b, o[1], py, px});
    };
    const Expr t1 = term(one - ya.frac, ya.low, one - xa.frac, xa.low),
               t2 = term(one - ya.frac, ya.low, xa.frac, xa.high);
    const Expr t3 = term(ya.frac, ya.high, one - xa.frac, xa.low), t4 = term(ya.frac, ya.high, xa.frac, xa.high);
    const Expr outside = loopir::logical_or(ya.outside, xa.outside);
    if (avg) return te::sum(te::if_then_else(outside, num(t, 0), t1 + t2 + t3 + t4), {iy, ix});
    const Expr largest = loopir::max(loopir::max(t1, t2), loopir::max(t3, t4));
    return te::max_reduce(te::if_then_else(outside, num(t, 0), largest), {iy, ix});
  });
  if (!avg) return {pooled};
  const double count = static_cast<double>(grid * grid);
  return {
      te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& o) { return te::at(pooled, o) / num(t, count); })};
}

}  // namespace tessel::ops::te_builder
