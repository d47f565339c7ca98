// BatchNormalization (inference), InstanceNormalization, LayerNormalization, LRN,
// MeanVarianceNormalization: shape rules and reference kernels. Statistics are computed in double in two passes (mean,
// then the mean of the squared deviations), the numerically safe form; each output is rounded once.
#include <algorithm>
#include <cmath>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

void check_channel_vector(const char* op, const char* what, const TensorType& t, int64_t channels) {
  nn::require_dtype(op, what, t.dtype, nn::kFloatTypes);
  if (t.shape != Shape{channels})
    throw Error(std::string(op) + ": " + what + " has shape " + shape_str(t.shape) + "; expected [" + s(channels) +
                "] (one per channel of X)");
}

void check_same_dtype(const char* op, const char* what, const TensorType& t, const TensorType& x) {
  if (t.dtype != x.dtype)
    throw Error(std::string(op) + ": " + what + " has dtype " + std::string(dtype_name(t.dtype)) + " but X has " +
                std::string(dtype_name(x.dtype)));
}

// Mean and population variance of n values starting at p.
std::pair<double, double> moments(const double* p, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += p[i];
  const double mean = n ? sum / static_cast<double>(n) : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += (p[i] - mean) * (p[i] - mean);
  return {mean, n ? sq / static_cast<double>(n) : 0.0};
}

}  // namespace

void BatchNormalizationOp::infer(const Attrs& a, InferContext& ctx) {
  const char* op = "BatchNormalization";
  if (a.training_mode)
    throw Error(
        "BatchNormalization: training_mode=1 is not supported; Tessel runs inference only (export the model "
        "in evaluation mode)");
  if (ctx.num_outputs() > 1)
    throw Error(
        "BatchNormalization: outputs running_mean and running_var exist only with training_mode=1, which "
        "Tessel does not support");
  const TensorType& x = ctx.input(0);
  nn::require_dtype(op, "X", x.dtype, nn::kFloatTypes);
  if (x.shape.size() < 2)
    throw Error("BatchNormalization: X must have rank 2 or more (N×C×…), got " + shape_str(x.shape));
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; ++i) check_channel_vector(op, names[i - 1], ctx.input(i), x.shape[1]);
  ctx.set_output(0, x);
}

void BatchNormalizationOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const std::vector<double> xs = nn::to_doubles(x), scale = nn::to_doubles(args.in(1)),
                            bias = nn::to_doubles(args.in(2)), mean = nn::to_doubles(args.in(3)),
                            var = nn::to_doubles(args.in(4));
  const int64_t batch = x.shape()[0], channels = x.shape()[1], inner = nn::product(x.shape(), 2);
  const double eps = a.epsilon;
  std::vector<double> ys(xs.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(var[c] + eps);
      const int64_t base = (n * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) ys[base + i] = (xs[base + i] - mean[c]) * inv_std * scale[c] + bias[c];
    }
  nn::store_doubles(args.out(0), ys);
}

// Per element once folded: one multiply, one add.
int64_t BatchNormalizationOp::flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 2); }

void InstanceNormalizationOp::infer(const Attrs&, InferContext& ctx) {
  const char* op = "InstanceNormalization";
  const TensorType& x = ctx.input(0);
  nn::require_dtype(op, "input", x.dtype, nn::kConvFloatTypes);
  if (x.shape.size() < 3)
    throw Error("InstanceNormalization: input must have rank 3 or more (N×C×D1…), got " + shape_str(x.shape));
  check_channel_vector(op, "scale", ctx.input(1), x.shape[1]);
  check_channel_vector(op, "B", ctx.input(2), x.shape[1]);
  check_same_dtype(op, "scale", ctx.input(1), x);
  check_same_dtype(op, "B", ctx.input(2), x);
  ctx.set_output(0, x);
}

void InstanceNormalizationOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const std::vector<double> xs = nn::to_doubles(x), scale = nn::to_doubles(args.in(1)),
                            bias = nn::to_doubles(args.in(2));
  const int64_t batch = x.shape()[0], channels = x.shape()[1], inner = nn::product(x.shape(), 2);
  std::vector<double> ys(xs.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (n * channels + c) * inner;
      const auto [mean, var] = moments(xs.data() + base, inner);
      const double inv_std = 1.0 / std::sqrt(var + static_cast<double>(a.epsilon));
      for (int64_t i = 0; i < inner; ++i) ys[base + i] = (xs[base + i] - mean) * inv_std * scale[c] + bias[c];
    }
  nn::store_doubles(args.out(0), ys);
}

// Per element: mean (add), variance (sub, mul, add), normalize (sub, mul), scale and shift (mul, add).
int64_t InstanceNormalizationOp::flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 8); }

namespace {

struct LayerNormPlan {
  int64_t axis = 0, outer = 1, inner = 1;
  DataType stash = DataType::kFloat32;
  Shape stats_shape;  // X's shape with the normalized axes set to 1
};

LayerNormPlan plan_layer_norm(const LayerNormalizationAttrs& a, const InferContext& ctx) {
  const char* op = "LayerNormalization";
  const TensorType& x = ctx.input(0);
  nn::require_dtype(op, "X", x.dtype, nn::kFloatTypes);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) throw Error("LayerNormalization: X must have rank 1 or more, got a scalar");
  if (a.axis < -rank || a.axis >= rank)
    throw Error("LayerNormalization: axis " + s(a.axis) + " is out of range for X of rank " + s(rank));
  LayerNormPlan p;
  p.axis = a.axis < 0 ? a.axis + rank : a.axis;
  p.outer = nn::product(x.shape, 0, static_cast<size_t>(p.axis));
  p.inner = nn::product(x.shape, static_cast<size_t>(p.axis));
  try {
    p.stash = dtype_from_onnx(a.stash_type);
  } catch (const Error& e) {
    throw Error(std::string("LayerNormalization: stash_type ") + s(a.stash_type) + ": " + e.what());
  }
  if (!dtype_is_float(p.stash))
    throw Error("LayerNormalization: stash_type " + s(a.stash_type) + " (" + std::string(dtype_name(p.stash)) +
                ") is not a floating-point type");
  const char* names[] = {"X", "Scale", "B"};
  for (int i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorType& t = ctx.input(i);
    check_same_dtype(op, names[i], t, x);
    // Scale and B broadcast to X one way: they may not grow it.
    bool ok = t.shape.size() <= x.shape.size();
    for (size_t d = 0; ok && d < t.shape.size(); ++d) {
      const int64_t want = x.shape[x.shape.size() - t.shape.size() + d];
      ok = t.shape[d] == want || t.shape[d] == 1;
    }
    if (!ok)
      throw Error(std::string("LayerNormalization: ") + names[i] + " " + shape_str(t.shape) +
                  " does not broadcast to X " + shape_str(x.shape));
  }
  p.stats_shape = x.shape;
  for (int64_t d = p.axis; d < rank; ++d) p.stats_shape[d] = 1;
  return p;
}

}  // namespace

void LayerNormalizationOp::infer(const Attrs& a, InferContext& ctx) {
  const LayerNormPlan p = plan_layer_norm(a, ctx);
  ctx.set_output(0, ctx.input(0));
  for (int k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, p.stash, p.stats_shape);
}

void LayerNormalizationOp::reference(const Attrs& a, const KernelArgs& args) {
  const LayerNormPlan p = plan_layer_norm(a, nn::TypesContext(args).get());
  const Tensor& x = args.in(0);
  const std::vector<double> xs = nn::to_doubles(x);
  std::vector<double> normalized(xs.size()), means(static_cast<size_t>(p.outer)), inv_stds(means.size());
  for (int64_t r = 0; r < p.outer; ++r) {
    const auto [mean, var] = moments(xs.data() + r * p.inner, p.inner);
    means[r] = mean;
    inv_stds[r] = 1.0 / std::sqrt(var + static_cast<double>(a.epsilon));
    for (int64_t i = 0; i < p.inner; ++i) normalized[r * p.inner + i] = (xs[r * p.inner + i] - mean) * inv_stds[r];
  }
  const bool has_b = args.has(2);
  const std::vector<double> scale = nn::to_doubles(args.in(1));
  const std::vector<double> bias = has_b ? nn::to_doubles(args.in(2)) : std::vector<double>{};
  std::vector<double> ys(xs.size());
  for_each_broadcast(
      x.shape(), {args.in(1).shape(), has_b ? args.in(2).shape() : Shape{}},
      [&](int64_t o, const int64_t* in) { ys[o] = normalized[o] * scale[in[0]] + (has_b ? bias[in[1]] : 0.0); });
  nn::store_doubles(args.out(0), ys);
  if (args.outputs->size() > 1) nn::store_doubles(args.out(1), means);
  if (args.outputs->size() > 2) nn::store_doubles(args.out(2), inv_stds);
}

// Per element: mean (add), variance (sub, mul, add), normalize (sub, mul), scale and shift (mul, add).
int64_t LayerNormalizationOp::flops(const Attrs&, const OpTypes& t) { return shape_numel(t.inputs[0]->shape) * 8; }

void LRNOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  nn::require_dtype("LRN", "X", x.dtype, nn::kFloatTypes);
  if (x.shape.size() < 2) throw Error("LRN: X must have rank 2 or more (N×C×…), got " + shape_str(x.shape));
  ctx.set_output(0, x);
}

void LRNOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const std::vector<double> xs = nn::to_doubles(x);
  const int64_t batch = x.shape()[0], channels = x.shape()[1], inner = nn::product(x.shape(), 2);
  // Channel c sums channels [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped to the tensor.
  const int64_t before = (a.size - 1) / 2, after = a.size - 1 - before;
  const double scale = static_cast<double>(a.alpha) / static_cast<double>(a.size);
  std::vector<double> ys(xs.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        double square_sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after); ++k) {
          const double v = xs[(n * channels + k) * inner + i];
          square_sum += v * v;
        }
        const int64_t at = (n * channels + c) * inner + i;
        ys[at] = xs[at] / std::pow(static_cast<double>(a.bias) + scale * square_sum, static_cast<double>(a.beta));
      }
  nn::store_doubles(args.out(0), ys);
}

// Per element: `size` squares and adds, then scale, add, pow and divide.
int64_t LRNOp::flops(const Attrs& a, const OpTypes& t) { return flops_per_output_element(t, 2 * a.size + 4); }

namespace {

// X's shape with the normalized axes set to 1: the shape of the statistics.
Shape mvn_stats_shape(const MeanVarianceNormalizationAttrs& a, const TensorType& x) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  Shape stats = x.shape;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : a.axes) {
    if (axis < -rank || axis >= rank)
      throw Error("MeanVarianceNormalization: axis " + s(axis) + " is out of range for X " + shape_str(x.shape));
    const int64_t d = axis < 0 ? axis + rank : axis;
    if (seen[d]) throw Error("MeanVarianceNormalization: axis " + s(axis) + " is listed twice");
    seen[d] = true;
    stats[d] = 1;
  }
  return stats;
}

}  // namespace

void MeanVarianceNormalizationOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  nn::require_dtype("MeanVarianceNormalization", "X", x.dtype, nn::kFloatTypes);
  mvn_stats_shape(a, x);
  ctx.set_output(0, x);
}

void MeanVarianceNormalizationOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const Shape stats = mvn_stats_shape(a, {x.dtype(), x.shape()});
  const std::vector<double> xs = nn::to_doubles(x);
  // group[i]: which statistics element X's element i contributes to.
  std::vector<int64_t> group(xs.size());
  for_each_broadcast(x.shape(), {stats}, [&](int64_t o, const int64_t* in) { group[o] = in[0]; });
  const size_t groups = static_cast<size_t>(shape_numel(stats));
  const double count = static_cast<double>(x.numel()) / static_cast<double>(std::max<size_t>(groups, 1));
  std::vector<double> mean(groups, 0.0), var(groups, 0.0);
  for (size_t i = 0; i < xs.size(); ++i) mean[group[i]] += xs[i];
  for (double& m : mean) m /= count;
  for (size_t i = 0; i < xs.size(); ++i) var[group[i]] += (xs[i] - mean[group[i]]) * (xs[i] - mean[group[i]]);
  std::vector<double> ys(xs.size());
  // ONNX adds its epsilon (1e-9) to the standard deviation, not to the variance.
  for (size_t i = 0; i < xs.size(); ++i) ys[i] = (xs[i] - mean[group[i]]) / (std::sqrt(var[group[i]] / count) + 1e-9);
  nn::store_doubles(args.out(0), ys);
}

}  // namespace tessel::ops
