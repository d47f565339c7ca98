// Resize: separable resampling. Each output axis is handled on its own: an output coordinate x maps
// to an input coordinate x_in (coordinate_transformation_mode), and x_in to a few weighted taps
// (the interpolation mode). An output element is the sum over the taps of every axis:
//
//   half_pixel, scale 2:  x = 3  →  x_in = (3 + 0.5) / 2 - 0.5 = 1.25
//   linear taps:          [1]·0.75  [2]·0.25
//   nearest taps:         [1]·1           (round_prefer_floor)
//   cubic taps:           [0] [1] [2] [3] with the cubic-convolution weights of 0.25
//
// Taps outside the input read the edge element. As in ONNX's reference, a fractional position
// prefers the lower neighbour and an integral one uses the window ending on it.
#include <cmath>
#include <cstring>

#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

struct Tap {
  int64_t index;  // clamped into the input
  double weight;
};
struct AxisTaps {
  std::vector<std::vector<Tap>> at;  // per output position
  std::vector<bool> outside;         // tf_crop_and_resize: position maps outside the input
};

// Scales actually used per axis: the `scales` input, or sizes / input sizes.
struct ResizePlan {
  Shape out;
  std::vector<double> scale;
};

bool given(const Tensor* t) { return t && t->numel() > 0; }

ResizePlan plan_resize(const Shape& in, const Tensor* scales, const Tensor* sizes) {
  const size_t rank = in.size();
  if (given(scales) == given(sizes))
    throw Error(given(scales) ? "give either scales (input 2) or sizes (input 3), not both"
                              : "one of scales (input 2) or sizes (input 3) is required");
  ResizePlan p;
  if (given(scales)) {
    if (!dtype_is_float(scales->dtype())) throw Error("scales must be a float tensor");
    if (static_cast<size_t>(scales->numel()) != rank)
      throw Error("scales has " + std::to_string(scales->numel()) + " entries for an input of rank " +
                  std::to_string(rank));
    for (size_t k = 0; k < rank; ++k) {
      const double s = scales->get_double(static_cast<int64_t>(k));
      if (!(s > 0) || !std::isfinite(s))
        throw Error("scale " + std::to_string(s) + " of axis " + std::to_string(k) + " must be positive");
      p.scale.push_back(s);
      // A huge scale saturates (float_to_int64) and fails later as a size, never as a conversion.
      p.out.push_back(float_to_int64(std::floor(static_cast<double>(in[k]) * s)));
    }
  } else {
    const std::vector<int64_t> s = sizes->to_int64s();
    if (s.size() != rank)
      throw Error("sizes " + ints_str(s) + " has " + std::to_string(s.size()) + " entries for an input of rank " +
                  std::to_string(rank));
    for (size_t k = 0; k < rank; ++k) {
      if (s[k] < 0) throw Error("sizes " + ints_str(s) + " has a negative entry");
      p.out.push_back(s[k]);
      p.scale.push_back(in[k] == 0 ? 1.0 : static_cast<double>(s[k]) / static_cast<double>(in[k]));
    }
  }
  for (size_t k = 0; k < rank; ++k)
    if (in[k] == 0 && p.out[k] > 0)
      throw Error("cannot resize axis " + std::to_string(k) + " of size 0 to a non-empty one");
  return p;
}

// Input coordinate of output coordinate x (ONNX's coordinate_transformation_mode). The output length
// is in_len × scale, fractional when scales were given, as in the ONNX reference.
double input_coordinate(const ResizeAttrs& a, double x, double scale, int64_t in_len, double roi_start,
                        double roi_end) {
  const double out_len = scale * static_cast<double>(in_len), last = static_cast<double>(in_len - 1);
  const std::string& m = a.coordinate_transformation_mode;
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "pytorch_half_pixel") return out_len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (m == "align_corners") return out_len == 1 ? 0.0 : x * last / (out_len - 1);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize: the output spans [roi_start, roi_end] of the input, in normalised units.
  if (out_len == 1) return (roi_end - roi_start) * last / 2 + roi_start * last;
  return x * (roi_end - roi_start) * last / (out_len - 1) + roi_start * last;
}

// Interpolation weights for a position at `ratio` in (0, 1] past the first of the middle taps.
std::vector<double> tap_weights(const ResizeAttrs& a, double ratio) {
  if (a.mode == "linear") return {1 - ratio, ratio};
  if (a.mode == "cubic") {
    const double A = a.cubic_coeff_a;
    auto near = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };       // |t| <= 1
    auto far = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };  // 1 < |t| < 2
    return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
  }
  const std::string& m = a.nearest_mode;  // nearest: all weight on one of the two taps
  bool upper = ratio == 1 || m == "ceil" || (m == "round_prefer_floor" && ratio > 0.5) ||
               (m == "round_prefer_ceil" && ratio >= 0.5);
  return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
}

AxisTaps axis_taps(const ResizeAttrs& a, int64_t in_len, int64_t out_len, double scale, double roi_start,
                   double roi_end) {
  AxisTaps taps;
  const bool crop = a.coordinate_transformation_mode == "tf_crop_and_resize";
  for (int64_t x = 0; x < out_len; ++x) {
    const double x_in = input_coordinate(a, static_cast<double>(x), scale, in_len, roi_start, roi_end);
    taps.outside.push_back(crop && (x_in < 0 || x_in > static_cast<double>(in_len - 1)));
    const double lower = std::floor(x_in);
    const double ratio = x_in == lower ? 1.0 : x_in - lower;
    std::vector<double> w = tap_weights(a, ratio);
    const int64_t n = static_cast<int64_t>(w.size()), pad = n / 2;
    // The window of n taps whose (n/2)-th tap is ceil(x_in), kept within one pad of the edges.
    int64_t first = static_cast<int64_t>(lower) + (ratio == 1.0 ? 0 : 1) - pad;
    first = std::clamp<int64_t>(first, -pad, in_len + pad - n);
    if (a.exclude_outside) {
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        if (first + t < 0 || first + t >= in_len) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    std::vector<Tap> at;
    for (int64_t t = 0; t < n; ++t)
      if (w[t] != 0) at.push_back({std::clamp<int64_t>(first + t, 0, in_len - 1), w[t]});
    if (at.empty()) at.push_back({std::clamp<int64_t>(first + n / 2, 0, in_len - 1), 0.0});
    taps.at.push_back(std::move(at));
  }
  return taps;
}

}  // namespace

void ResizeOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (a.coordinate_transformation_mode == "tf_crop_and_resize" && !ctx.has_input(1))
    throw Error("coordinate_transformation_mode tf_crop_and_resize needs the roi input (input 1)");
  const Tensor* scales = ctx.has_input(2) ? &ctx.require_value(2, "scales") : nullptr;
  const Tensor* sizes = ctx.has_input(3) ? &ctx.require_value(3, "sizes") : nullptr;
  ctx.set_output(0, x.dtype, plan_resize(x.shape, scales, sizes).out);
}

void ResizeOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  Tensor& out = args.out(0);
  const Shape& s = in.shape();
  const size_t rank = s.size();
  const ResizePlan plan = plan_resize(s, args.has(2) ? &args.in(2) : nullptr, args.has(3) ? &args.in(3) : nullptr);
  std::vector<double> roi;
  if (a.coordinate_transformation_mode == "tf_crop_and_resize") {
    const Tensor& r = args.in(1);
    if (static_cast<size_t>(r.numel()) != 2 * rank)
      throw Error("roi has " + std::to_string(r.numel()) + " entries; rank " + std::to_string(rank) + " needs " +
                  std::to_string(2 * rank) + " (starts then ends)");
    for (int64_t i = 0; i < r.numel(); ++i) roi.push_back(r.get_double(i));
  }
  std::vector<AxisTaps> taps;
  for (size_t k = 0; k < rank; ++k)
    taps.push_back(axis_taps(a, s[k], out.shape()[k], plan.scale[k], roi.empty() ? 0.0 : roi[k],
                             roi.empty() ? 1.0 : roi[k + rank]));
  const Shape strides = contiguous_strides(s);

  if (a.mode == "nearest") {  // one tap per axis: a pure copy, exact for every dtype
    AxisOffsets offsets(rank);
    for (size_t k = 0; k < rank; ++k)
      for (size_t x = 0; x < taps[k].at.size(); ++x)
        offsets[k].push_back(taps[k].outside[x] ? kFill : taps[k].at[x][0].index * strides[k]);
    Tensor fill(in.dtype(), {});
    fill.set_double(0, a.extrapolation_value);
    copy_with_axis_offsets(in, out, offsets, fill.raw_data());
    return;
  }

  // Linear and cubic: sum over every combination of the axes' taps, in double.
  Shape pos(rank, 0);
  std::vector<size_t> choice(rank, 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    bool outside = false;
    for (size_t k = 0; k < rank; ++k) outside = outside || taps[k].outside[pos[k]];
    double sum = 0;
    if (!outside) {
      std::fill(choice.begin(), choice.end(), 0);
      for (;;) {
        double w = 1;
        int64_t offset = 0;
        for (size_t k = 0; k < rank; ++k) {
          const Tap& t = taps[k].at[pos[k]][choice[k]];
          w *= t.weight;
          offset += t.index * strides[k];
        }
        sum += w * in.get_double(offset);
        size_t k = rank;
        while (k-- > 0 && ++choice[k] == taps[k].at[pos[k]].size()) choice[k] = 0;
        if (k == static_cast<size_t>(-1)) break;
      }
    }
    out.set_double(o, outside ? a.extrapolation_value : sum);
    for (size_t k = rank; k-- > 0;) {
      if (++pos[k] < out.shape()[k]) break;
      pos[k] = 0;
    }
  }
}

int64_t ResizeOp::flops(const Attrs& a, const OpTypes& t) {
  if (a.mode == "nearest" || !t.inputs[0]) return 0;
  const Shape& in = t.inputs[0]->shape;
  const Shape& out = t.outputs[0].shape;
  int64_t taps = 1;
  for (size_t k = 0; k < in.size() && k < out.size(); ++k)
    if (in[k] != out[k]) taps *= a.mode == "cubic" ? 4 : 2;
  return shape_numel(out) * 2 * taps;  // a multiply and an add per tap
}

}  // namespace tessel::ops
