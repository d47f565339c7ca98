// RoiAlign: checks, shape inference and the reference kernel (nn_roi_align.h), following
// onnxruntime's sampling rules, in double.
#include "core/graph/ops/nn_roi_align.h"

#include <algorithm>
#include <cmath>

#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

void RoiAlignOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType &x = ctx.input(0), &rois = ctx.input(1), &index = ctx.input(2);
  nn::require_dtype("RoiAlign", "X", x.dtype, nn::kFloatTypes);
  if (x.shape.size() != 4) throw Error("RoiAlign: X must be [N,C,H,W], it is " + shape_str(x.shape));
  if (rois.dtype != x.dtype || rois.shape.size() != 2 || rois.shape[1] != 4)
    throw Error("RoiAlign: rois must be " + std::string(dtype_name(x.dtype)) + "[R,4], it is " + type_str(rois));
  if (index.dtype != DataType::kInt64 || index.shape != Shape{rois.shape[0]})
    throw Error("RoiAlign: batch_indices must be i64[" + std::to_string(rois.shape[0]) + "], it is " + type_str(index));
  ctx.set_output(0, x.dtype, {rois.shape[0], x.shape[1], a.output_height, a.output_width});
}

void RoiAlignOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& xt = args.in(0);
  const int64_t N = xt.shape()[0], C = xt.shape()[1], H = xt.shape()[2], W = xt.shape()[3];
  const std::vector<double> x = nn::to_doubles(xt), rois = nn::to_doubles(args.in(1));
  const std::vector<int64_t> index = args.in(2).to_int64s();
  const int64_t R = static_cast<int64_t>(index.size()), OH = a.output_height, OW = a.output_width;
  const bool half_pixel = a.coordinate_transformation_mode == "half_pixel";
  std::vector<double> y(static_cast<size_t>(R * C * OH * OW));
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = index[r];
    if (b < 0 || b >= N)
      throw Error("RoiAlign: batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) + " is outside [0, " +
                  std::to_string(N) + ")");
    const double offset = half_pixel ? 0.5 : 0.0, scale = a.spatial_scale;
    const double x0 = rois[r * 4] * scale - offset, y0 = rois[r * 4 + 1] * scale - offset;
    double rw = rois[r * 4 + 2] * scale - offset - x0, rh = rois[r * 4 + 3] * scale - offset - y0;
    if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bin_h = rh / static_cast<double>(OH), bin_w = rw / static_cast<double>(OW);
    // The adaptive grid comes from the box, which is data: NaN gives 0 samples, and a box of
    // absurd size is held to 2^20 samples a side, so grid_h * grid_w cannot overflow.
    auto adaptive = [](double extent_per_bin) {
      return std::clamp<int64_t>(float_to_int64(std::ceil(extent_per_bin)), 0, int64_t{1} << 20);
    };
    const int64_t grid_h = a.sampling_ratio > 0 ? a.sampling_ratio : adaptive(rh / static_cast<double>(OH));
    const int64_t grid_w = a.sampling_ratio > 0 ? a.sampling_ratio : adaptive(rw / static_cast<double>(OW));
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t c = 0; c < C; ++c) {
      const double* img = x.data() + (b * C + c) * H * W;
      for (int64_t ph = 0; ph < OH; ++ph)
        for (int64_t pw = 0; pw < OW; ++pw) {
          double sum = 0, best = 0;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy)
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              double sy = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h;
              double sx = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w;
              double w[4] = {0, 0, 0, 0}, v[4] = {0, 0, 0, 0};
              if (!(sy < -1.0 || sy > H || sx < -1.0 || sx > W)) {
                sy = std::max(sy, 0.0), sx = std::max(sx, 0.0);
                int64_t ylo = static_cast<int64_t>(sy), xlo = static_cast<int64_t>(sx), yhi = ylo + 1, xhi = xlo + 1;
                if (ylo >= H - 1) ylo = yhi = H - 1, sy = static_cast<double>(ylo);
                if (xlo >= W - 1) xlo = xhi = W - 1, sx = static_cast<double>(xlo);
                const double ly = sy - ylo, lx = sx - xlo;
                w[0] = (1 - ly) * (1 - lx), w[1] = (1 - ly) * lx, w[2] = ly * (1 - lx), w[3] = ly * lx;
                v[0] = img[ylo * W + xlo], v[1] = img[ylo * W + xhi], v[2] = img[yhi * W + xlo],
                v[3] = img[yhi * W + xhi];
              }
              sum += w[0] * v[0] + w[1] * v[1] + w[2] * v[2] + w[3] * v[3];
              const double m = std::max({w[0] * v[0], w[1] * v[1], w[2] * v[2], w[3] * v[3]});
              best = first ? m : std::max(best, m);
              first = false;
            }
          y[static_cast<size_t>(((r * C + c) * OH + ph) * OW + pw)] = a.mode == "avg" ? sum / count : best;
        }
    }
  }
  nn::store_doubles(args.out(0), y);
}

int64_t RoiAlignOp::flops(const Attrs& a, const OpTypes& t) {
  // About 12 operations per sample (weights and the four terms); sampling_ratio 0 counted as 2.
  const int64_t grid = a.sampling_ratio > 0 ? a.sampling_ratio : 2;
  return 12 * grid * grid * shape_numel(t.outputs[0].shape);
}

}  // namespace tessel::ops
