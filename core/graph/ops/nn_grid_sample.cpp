// Inference and reference kernel of GridSample (nn_grid_sample.h), in double.
#include "core/graph/ops/nn_grid_sample.h"

#include <algorithm>
#include <cmath>

#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

namespace {

// Folds x back into [lo, hi] by reflecting at the borders as often as needed.
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo || x > hi) {
    const bool below = x < lo;
    const double d = below ? lo - x : x - hi;
    const double n = std::floor(d / range);
    const double r = d - n * range;
    const bool even = std::fmod(n, 2.0) == 0.0;
    x = below == even ? lo + r : hi - r;
  }
  return x;
}

// Keys' cubic convolution weights (a = -0.75) of the four taps around a point at fraction t.
void cubic_weights(double t, double w[4]) {
  const double a = -0.75;
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

}  // namespace

void GridSampleOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& grid = ctx.input(1);
  require_dtype("GridSample", "X", x.dtype, kFloatTypes);
  require_dtype("GridSample", "grid", grid.dtype, kFloatTypes);
  if (x.shape.size() != 4 || grid.shape.size() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0])
    throw Error("GridSample: X " + shape_str(x.shape) + " and grid " + shape_str(grid.shape) +
                " must be [N, C, H, W] and [N, Ho, Wo, 2] (only 2-D sampling is supported)");
  ctx.set_output(0, x.dtype, {x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]});
}

void GridSampleOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const Tensor& grid = args.in(1);
  Tensor& y = args.out(0);
  const int64_t n_ = x.shape()[0], c_ = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t ho = grid.shape()[1], wo = grid.shape()[2];
  const bool corners = a.align_corners != 0;
  const bool nearest = a.mode == "nearest", cubic = a.mode == "bicubic" || a.mode == "cubic";
  // Where pixel centres may lie before a position counts as outside.
  const double x_lo = corners ? 0.0 : -0.5, x_hi = corners ? w - 1.0 : w - 0.5;
  const double y_lo = corners ? 0.0 : -0.5, y_hi = corners ? h - 1.0 : h - 0.5;
  auto denormalize = [&](double v, int64_t extent) {
    return corners ? (v + 1) / 2.0 * static_cast<double>(extent - 1)
                   : ((v + 1) * static_cast<double>(extent) - 1) / 2.0;
  };
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t c = 0; c < c_; ++c) {
      const int64_t plane = (n * c_ + c) * h * w;
      auto pixel = [&](int64_t r, int64_t col) -> double {
        if (a.padding_mode == "zeros") {
          if (col < 0 || col >= w || r < 0 || r >= h) return 0.0;
        } else if (a.padding_mode == "border") {
          col = std::clamp<int64_t>(col, 0, w - 1);
          r = std::clamp<int64_t>(r, 0, h - 1);
        } else {
          col = static_cast<int64_t>(reflect(static_cast<double>(col), x_lo, x_hi));
          r = static_cast<int64_t>(reflect(static_cast<double>(r), y_lo, y_hi));
          col = std::clamp<int64_t>(col, 0, w - 1);
          r = std::clamp<int64_t>(r, 0, h - 1);
        }
        return x.get_double(plane + r * w + col);
      };
      for (int64_t oy = 0; oy < ho; ++oy)
        for (int64_t ox = 0; ox < wo; ++ox) {
          const int64_t g = ((n * ho + oy) * wo + ox) * 2;
          double px = denormalize(grid.get_double(g), w), py = denormalize(grid.get_double(g + 1), h);
          if (nearest) {
            px = std::nearbyint(px);
            py = std::nearbyint(py);
          }
          if (px < x_lo || px > x_hi || py < y_lo || py > y_hi) {
            if (a.padding_mode == "border") {
              px = std::clamp(px, 0.0, w - 1.0);
              py = std::clamp(py, 0.0, h - 1.0);
            } else if (a.padding_mode == "reflection") {
              px = reflect(px, x_lo, x_hi);
              py = reflect(py, y_lo, y_hi);
            }
          }
          double v = 0;
          if (nearest) {
            v = pixel(static_cast<int64_t>(py), static_cast<int64_t>(px));
          } else if (!cubic) {
            const double fx = std::floor(px), fy = std::floor(py);
            const int64_t x1 = static_cast<int64_t>(fx), y1 = static_cast<int64_t>(fy);
            const double dx = px - fx, dy = py - fy;
            v = (1 - dy) * ((1 - dx) * pixel(y1, x1) + dx * pixel(y1, x1 + 1)) +
                dy * ((1 - dx) * pixel(y1 + 1, x1) + dx * pixel(y1 + 1, x1 + 1));
          } else {
            const double fx = std::floor(px), fy = std::floor(py);
            const int64_t x0 = static_cast<int64_t>(fx) - 1, y0 = static_cast<int64_t>(fy) - 1;
            double wx[4], wy[4];
            cubic_weights(px - fx, wx);
            cubic_weights(py - fy, wy);
            for (int64_t i = 0; i < 4; ++i) {
              double row = 0;
              for (int64_t j = 0; j < 4; ++j) row += wx[j] * pixel(y0 + i, x0 + j);
              v += wy[i] * row;
            }
          }
          y.set_double(((n * c_ + c) * ho + oy) * wo + ox, v);
        }
    }
}

int64_t GridSampleOp::flops(const Attrs& a, const OpTypes& t) {
  const int64_t taps = a.mode == "nearest" ? 1 : (a.mode == "bicubic" || a.mode == "cubic") ? 16 : 4;
  return flops_per_output_element(t, 2 * taps);
}

}  // namespace tessel::ops
