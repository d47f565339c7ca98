// STFT: checks, shape inference and the reference kernel (signal_ops.h), computed in double.
#include "core/graph/ops/signal_ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

int64_t scalar_of(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw Error(std::string("STFT: ") + what + " must be a scalar, it has shape " + shape_str(t.shape()));
  return t.to_int64s()[0];
}

}  // namespace

STFTPlan plan_stft(const STFTAttrs& a, const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  nn::require_dtype("STFT", "the signal", x.dtype, nn::kFloatTypes);
  if (x.shape.size() != 3 || (x.shape[2] != 1 && x.shape[2] != 2))
    throw Error("STFT: the signal must be [B, L, 1] (real) or [B, L, 2] (complex), it is " + shape_str(x.shape));
  STFTPlan p;
  p.complex = x.shape[2] == 2;
  p.step = scalar_of(ctx.require_value(1, "frame_step"), "frame_step");
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.input(2);
    if (w.shape.size() != 1) throw Error("STFT: the window must be 1-D, it is " + shape_str(w.shape));
    if (w.dtype != x.dtype)
      throw Error("STFT: the window has dtype " + std::string(dtype_name(w.dtype)) + ", the signal " +
                  std::string(dtype_name(x.dtype)));
  }
  if (ctx.has_input(3)) {
    p.length = scalar_of(ctx.require_value(3, "frame_length"), "frame_length");
    if (ctx.has_input(2) && ctx.input(2).shape[0] != p.length)
      throw Error("STFT: the window has " + s(ctx.input(2).shape[0]) + " values, frame_length is " + s(p.length));
  } else if (ctx.has_input(2)) {
    p.length = ctx.input(2).shape[0];
  } else {
    throw Error("STFT: needs a window or a frame_length");
  }
  if (p.step < 1) throw Error("STFT: frame_step is " + s(p.step) + "; it must be at least 1");
  if (p.length < 1 || p.length > x.shape[1])
    throw Error("STFT: the frame length " + s(p.length) + " must lie in [1, " + s(x.shape[1]) +
                "] (the signal's length)");
  if (a.onesided && p.complex) throw Error("STFT: onesided=1 needs a real signal ([B, L, 1])");
  p.frames = (x.shape[1] - p.length) / p.step + 1;
  p.bins = a.onesided ? p.length / 2 + 1 : p.length;
  return p;
}

void STFTOp::infer(const Attrs& a, InferContext& ctx) {
  const STFTPlan p = plan_stft(a, ctx);
  ctx.set_output(0, ctx.input(0).dtype, {ctx.input(0).shape[0], p.frames, p.bins, 2});
}

void STFTOp::reference(const Attrs& a, const KernelArgs& args) {
  std::vector<TensorType> types;
  std::vector<const TensorType*> pointers;
  std::vector<const Tensor*> values;
  types.reserve(args.inputs.size());
  for (const Tensor* t : args.inputs) {
    types.push_back(t ? TensorType{t->dtype(), t->shape()} : TensorType{});
    pointers.push_back(t ? &types.back() : nullptr);
    values.push_back(t);
  }
  const STFTPlan p = plan_stft(a, InferContext(pointers, values, 1));
  const std::vector<double> x = nn::to_doubles(args.in(0));
  const std::vector<double> w = args.has(2) ? nn::to_doubles(args.in(2)) : std::vector<double>(p.length, 1.0);
  const int64_t batch = args.in(0).shape()[0], length = args.in(0).shape()[1], parts = p.complex ? 2 : 1;
  std::vector<double> out(static_cast<size_t>(batch * p.frames * p.bins * 2));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < p.frames; ++f)
      for (int64_t k = 0; k < p.bins; ++k) {
        double re = 0, im = 0;
        for (int64_t n = 0; n < p.length; ++n) {
          const int64_t at = (b * length + f * p.step + n) * parts;
          const double xr = x[at] * w[n], xi = p.complex ? x[at + 1] * w[n] : 0.0;
          // e^(-iθ) with θ reduced modulo 2π through k·n mod N, exactly.
          const double theta =
              2.0 * std::numbers::pi * static_cast<double>((k * n) % p.length) / static_cast<double>(p.length);
          re += xr * std::cos(theta) + xi * std::sin(theta);
          im += xi * std::cos(theta) - xr * std::sin(theta);
        }
        const int64_t o = ((b * p.frames + f) * p.bins + k) * 2;
        out[o] = re;
        out[o + 1] = im;
      }
  nn::store_doubles(args.out(0), out);
}

int64_t STFTOp::flops(const Attrs& a, const OpTypes& t) {
  // Four multiply-adds per frame sample and frequency; N from the bins (exact but for an odd
  // onesided frame length, which this counts one short).
  const Shape& y = t.outputs[0].shape;
  if (y.size() != 4) return 0;
  const int64_t n = a.onesided ? std::max<int64_t>(2 * (y[2] - 1), 1) : y[2];
  return 8 * y[0] * y[1] * y[2] * n;
}

void MelWeightMatrixOp::infer(const Attrs& a, InferContext& ctx) {
  for (int i = 0; i < 5; ++i) {
    const TensorType& t = ctx.input(i);
    if (!t.shape.empty() && shape_numel(t.shape) != 1)
      throw Error("MelWeightMatrix: input " + s(i) + " must be a scalar, it has shape " + shape_str(t.shape));
  }
  const int64_t bins = scalar_of(ctx.require_value(0, "num_mel_bins"), "num_mel_bins");
  const int64_t length = scalar_of(ctx.require_value(1, "dft_length"), "dft_length");
  if (bins < 1 || length < 1)
    throw Error("MelWeightMatrix: num_mel_bins " + s(bins) + " and dft_length " + s(length) + " must be at least 1");
  ctx.set_output(0, dtype_from_onnx(a.output_datatype), {length / 2 + 1, bins});
}

void MelWeightMatrixOp::reference(const Attrs&, const KernelArgs& args) {
  const int64_t bands = args.in(0).to_int64s()[0], length = args.in(1).to_int64s()[0];
  const double rate = args.in(2).get_double(0), low = args.in(3).get_double(0), high = args.in(4).get_double(0);
  const int64_t spectrum = length / 2 + 1;
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = mel(low), step = (mel(high) - low_mel) / static_cast<double>(bands + 2);
  std::vector<int64_t> edge;
  for (int64_t k = 0; k < bands + 2; ++k) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(k) * step + low_mel) / 2595.0) - 1.0);
    // A sample rate of 0 or NaN gives an infinite or NaN edge: saturated, then refused by `set`.
    edge.push_back(float_to_int64(std::floor(static_cast<double>(length + 1) * hz / rate)));
  }
  Tensor& y = args.out(0);
  auto set = [&](int64_t bin, int64_t band, double v) {
    if (bin < 0 || bin >= spectrum)
      throw Error("MelWeightMatrix: the band edges reach bin " + s(bin) + ", outside the spectrum's " + s(spectrum) +
                  " (is upper_edge_hertz above sample_rate / 2?)");
    y.set_double(bin * bands + band, v);
  };
  for (int64_t i = 0; i < bands; ++i) {
    const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = left; j <= center; ++j)
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    }
    for (int64_t j = center; j < right; ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
}

}  // namespace tessel::ops
