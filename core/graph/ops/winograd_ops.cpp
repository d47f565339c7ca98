#include "core/graph/ops/winograd_ops.h"

#include <string>

namespace tessel::ops {

namespace {

WinogradMatrices make_f2() {
  WinogradMatrices w;
  w.m = 2;
  w.a = 4;
  w.bt = {1, 0, -1, 0,  //
          0, 1, 1, 0,   //
          0, -1, 1, 0,  //
          0, 1, 0, -1};
  w.g = {1, 0, 0,        //
         0.5, 0.5, 0.5,  //
         0.5, -0.5, 0.5, //
         0, 0, 1};
  w.at = {1, 1, 1, 0,  //
          0, 1, -1, -1};
  return w;
}

WinogradMatrices make_f4() {
  WinogradMatrices w;
  w.m = 4;
  w.a = 6;
  w.bt = {4, 0, -5, 0, 1, 0,    //
          0, -4, -4, 1, 1, 0,   //
          0, 4, -4, -1, 1, 0,   //
          0, -2, -1, 2, 1, 0,   //
          0, 2, -1, -2, 1, 0,   //
          0, 4, 0, -5, 0, 1};
  w.g = {1.0 / 4, 0, 0,                  //
         -1.0 / 6, -1.0 / 6, -1.0 / 6,   //
         -1.0 / 6, 1.0 / 6, -1.0 / 6,    //
         1.0 / 24, 1.0 / 12, 1.0 / 6,    //
         1.0 / 24, -1.0 / 12, 1.0 / 6,   //
         0, 0, 1};
  w.at = {1, 1, 1, 1, 1, 0,    //
          0, 1, -1, 2, -2, 0,  //
          0, 1, 1, 4, 4, 0,    //
          0, 1, -1, 8, -8, 1};
  return w;
}

void require(bool ok, const std::string& why) {
  if (!ok) throw Error(why);
}

}  // namespace

const WinogradMatrices& winograd_matrices(int64_t m) {
  static const WinogradMatrices f2 = make_f2(), f4 = make_f4();
  if (m == 2) return f2;
  if (m == 4) return f4;
  throw Error("winograd: tile must be 2 or 4, got " + std::to_string(m));
}

Tensor winograd_weights(const Tensor& oihw, int64_t m) {
  const WinogradMatrices& w = winograd_matrices(m);
  const Shape& s = oihw.shape();
  require(s.size() == 4 && s[2] == 3 && s[3] == 3, "winograd: weights must be OIHW with a 3x3 kernel");
  const int64_t k_count = s[0], c_count = s[1], a = w.a;
  Tensor u(oihw.dtype(), {a * a, c_count, k_count});
  for (int64_t k = 0; k < k_count; ++k)
    for (int64_t c = 0; c < c_count; ++c) {
      const int64_t base = (k * c_count + c) * 9;
      // G g (A x 3), then (G g) Gᵀ (A x A).
      std::vector<double> gg(static_cast<size_t>(a * 3), 0.0);
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t r = 0; r < 3; ++r) gg[static_cast<size_t>(i * 3 + j)] += w.G(i, r) * oihw.get_double(base + r * 3 + j);
      for (int64_t e1 = 0; e1 < a; ++e1)
        for (int64_t e2 = 0; e2 < a; ++e2) {
          double v = 0;
          for (int64_t j = 0; j < 3; ++j) v += gg[static_cast<size_t>(e1 * 3 + j)] * w.G(e2, j);
          u.set_double(((e1 * a + e2) * c_count + c) * k_count + k, v);
        }
    }
  return u;
}

// ---- input transform ----

void WinogradInputTransformOp::infer(const Attrs& a, InferContext& ctx) {
  const WinogradMatrices& w = winograd_matrices(a.tile);
  const TensorType& x = ctx.input(0);
  require(x.dtype == DataType::kFloat32 || x.dtype == DataType::kFloat64,
          "winograd_input_transform: X must be f32 or f64");
  require(x.shape.size() == 5, "winograd_input_transform: X must be NCHW{b}c (rank 5)");
  const int64_t n = x.shape[0], cb = x.shape[1], h = x.shape[2], wd = x.shape[3], b = x.shape[4];
  // Every output pixel's 3x3 window must start inside the padded input (stride 1). The pads are
  // checked first: they bound the output by the input's own (valid) size, so nothing overflows.
  require(a.pad_top <= 2 && a.pad_left <= 2, "winograd_input_transform: pads above 2 do not fit a 3x3 window");
  require(a.out_height <= h + 2 * a.pad_top && a.out_width <= wd + 2 * a.pad_left,
          "winograd_input_transform: output " + std::to_string(a.out_height) + "x" + std::to_string(a.out_width) +
              " does not fit a 3x3 stride-1 window over " + std::to_string(h) + "x" + std::to_string(wd));
  const int64_t tiles = n * winograd_tiles(a.out_height, a.tile) * winograd_tiles(a.out_width, a.tile);
  ctx.set_output(0, x.dtype, {w.a * w.a, tiles, cb * b});
}

void WinogradInputTransformOp::reference(const Attrs& at, const KernelArgs& args) {
  const WinogradMatrices& w = winograd_matrices(at.tile);
  const Tensor& x = args.in(0);
  Tensor& v = args.out(0);
  const Shape& s = x.shape();
  const int64_t n_count = s[0], cb_count = s[1], h = s[2], wd = s[3], b = s[4], a = w.a, m = w.m;
  const int64_t th = winograd_tiles(at.out_height, m), tw = winograd_tiles(at.out_width, m);
  const int64_t tiles = n_count * th * tw, channels = cb_count * b;
  std::vector<double> d(static_cast<size_t>(a * a)), t(static_cast<size_t>(a * a));
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t ty = 0; ty < th; ++ty)
      for (int64_t tx = 0; tx < tw; ++tx)
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t tile = (n * th + ty) * tw + tx;
          for (int64_t r1 = 0; r1 < a; ++r1)
            for (int64_t r2 = 0; r2 < a; ++r2) {
              const int64_t y = ty * m + r1 - at.pad_top, xx = tx * m + r2 - at.pad_left;
              const bool inside = y >= 0 && y < h && xx >= 0 && xx < wd;
              d[static_cast<size_t>(r1 * a + r2)] =
                  inside ? x.get_double((((n * cb_count + c / b) * h + y) * wd + xx) * b + c % b) : 0.0;
            }
          // t = Bᵀ d, then V = t B.
          for (int64_t e1 = 0; e1 < a; ++e1)
            for (int64_t r2 = 0; r2 < a; ++r2) {
              double acc = 0;
              for (int64_t r1 = 0; r1 < a; ++r1) acc += w.BT(e1, r1) * d[static_cast<size_t>(r1 * a + r2)];
              t[static_cast<size_t>(e1 * a + r2)] = acc;
            }
          for (int64_t e1 = 0; e1 < a; ++e1)
            for (int64_t e2 = 0; e2 < a; ++e2) {
              double acc = 0;
              for (int64_t r2 = 0; r2 < a; ++r2) acc += t[static_cast<size_t>(e1 * a + r2)] * w.BT(e2, r2);
              v.set_double(((e1 * a + e2) * tiles + tile) * channels + c, acc);
            }
        }
}

int64_t WinogradInputTransformOp::flops(const Attrs& a, const OpTypes& t) {
  const int64_t side = winograd_matrices(a.tile).a;
  return 2 * side * t.outputs[0].shape[1] * t.outputs[0].shape[2] * side * side * 2;  // two A x A products per tile
}

// ---- output transform ----

void WinogradOutputTransformOp::infer(const Attrs& a, InferContext& ctx) {
  const WinogradMatrices& w = winograd_matrices(a.tile);
  const TensorType& mt = ctx.input(0);
  require(mt.dtype == DataType::kFloat32 || mt.dtype == DataType::kFloat64,
          "winograd_output_transform: M must be f32 or f64");
  require(mt.shape.size() == 3 && mt.shape[0] == w.a * w.a,
          "winograd_output_transform: M must be [" + std::to_string(w.a * w.a) + ", tiles, K]");
  const int64_t tiles = mt.shape[1], k = mt.shape[2];
  const std::string images = std::to_string(tiles) + " tiles are not a whole number of " +
                             std::to_string(a.out_height) + "x" + std::to_string(a.out_width) + " images";
  // th · tw ≤ tiles checked by division: attributes and shapes of any size overflow nothing.
  const int64_t th = winograd_tiles(a.out_height, a.tile), tw = winograd_tiles(a.out_width, a.tile);
  require(th <= tiles / tw && tiles % (th * tw) == 0, "winograd_output_transform: " + images);
  const int64_t per_image = th * tw;
  require(k % a.block == 0, "winograd_output_transform: K=" + std::to_string(k) + " is not a multiple of block " +
                                std::to_string(a.block));
  if (ctx.has_input(1)) {
    const TensorType& bias = ctx.input(1);
    require(bias.dtype == mt.dtype && bias.shape == Shape{k / a.block, a.block},
            "winograd_output_transform: B must be [K/b, b] of M's type");
  }
  ctx.set_output(0, mt.dtype, {tiles / per_image, k / a.block, a.out_height, a.out_width, a.block});
}

void WinogradOutputTransformOp::reference(const Attrs& at, const KernelArgs& args) {
  const WinogradMatrices& w = winograd_matrices(at.tile);
  const Tensor& mt = args.in(0);
  Tensor& y = args.out(0);
  const int64_t a = w.a, m = w.m, tiles = mt.shape()[1], k_count = mt.shape()[2], b = at.block;
  const int64_t th = winograd_tiles(at.out_height, m), tw = winograd_tiles(at.out_width, m);
  const int64_t oh = at.out_height, ow = at.out_width;
  std::vector<double> t(static_cast<size_t>(m * a));
  for (int64_t tile = 0; tile < tiles; ++tile) {
    const int64_t n = tile / (th * tw), ty = tile / tw % th, tx = tile % tw;
    for (int64_t k = 0; k < k_count; ++k) {
      auto mv = [&](int64_t e1, int64_t e2) { return mt.get_double(((e1 * a + e2) * tiles + tile) * k_count + k); };
      // t = Aᵀ M (m x A), then Y = t A (m x m).
      for (int64_t i = 0; i < m; ++i)
        for (int64_t e2 = 0; e2 < a; ++e2) {
          double acc = 0;
          for (int64_t e1 = 0; e1 < a; ++e1) acc += w.AT(i, e1) * mv(e1, e2);
          t[static_cast<size_t>(i * a + e2)] = acc;
        }
      const double bias = args.has(1) ? args.in(1).get_double(k) : 0.0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) {
          const int64_t yy = ty * m + i, xx = tx * m + j;
          if (yy >= oh || xx >= ow) continue;  // past the edge: computed, never stored
          double acc = bias;
          for (int64_t e2 = 0; e2 < a; ++e2) acc += t[static_cast<size_t>(i * a + e2)] * w.AT(j, e2);
          y.set_double((((n * (k_count / b) + k / b) * oh + yy) * ow + xx) * b + k % b, acc);
        }
    }
  }
}

int64_t WinogradOutputTransformOp::flops(const Attrs& a, const OpTypes& t) {
  const WinogradMatrices& w = winograd_matrices(a.tile);
  const TensorType& mt = *t.inputs[0];
  return 2 * mt.shape[1] * mt.shape[2] * (w.m * w.a * w.a + w.m * w.m * w.a);
}

}  // namespace tessel::ops
