// Inference and reference kernels of the losses and MaxUnpool (nn_loss.h).
#include "core/graph/ops/nn_loss.h"

#include <algorithm>
#include <cmath>

#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

namespace {

// Checks input [N,C,d...], target [N,d...], weight [C]; sets output 0 (and log_prob when asked).
void infer_loss(const char* op, const LossAttrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& target = ctx.input(1);
  require_dtype(op, "input 0", x.dtype, kFloatTypes);
  if (target.dtype != DataType::kInt64 && target.dtype != DataType::kInt32)
    throw Error(std::string(op) + ": the target has dtype " + std::string(dtype_name(target.dtype)) +
                "; allowed: i32, i64");
  if (x.shape.size() < 2)
    throw Error(std::string(op) + ": the input needs rank >= 2 [N, C, ...], it has " + shape_str(x.shape));
  Shape expected = x.shape;
  expected.erase(expected.begin() + 1);
  if (target.shape != expected)
    throw Error(std::string(op) + ": the target has shape " + shape_str(target.shape) + ", expected " +
                shape_str(expected));
  if (ctx.has_input(2)) {
    if (ctx.input(2).shape != Shape{x.shape[1]} || ctx.input(2).dtype != x.dtype)
      throw Error(std::string(op) + ": the weight must be " + std::string(dtype_name(x.dtype)) + "[" +
                  std::to_string(x.shape[1]) + "], it is " + type_str(ctx.input(2)));
  }
  ctx.set_output(0, x.dtype, a.reduction == "none" ? target.shape : Shape{});
}

// The loss of log-probabilities `logp` (flat [N, C, D]) for `target`, reduced as asked.
void nll(const char* op, const LossAttrs& a, const std::vector<double>& logp, const Shape& shape, const Tensor& target,
         const Tensor* weight, Tensor& out) {
  const int64_t n = shape[0], c = shape[1], d = shape_numel(shape) / std::max<int64_t>(n * c, 1);
  const std::vector<int64_t> t = target.to_int64s();
  double total = 0, total_weight = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      const int64_t e = i * d + k;
      const int64_t cls = t[static_cast<size_t>(e)];
      double loss = 0, w = 0;
      if (cls != a.ignore_index) {
        if (cls < 0 || cls >= c)
          throw Error(std::string(op) + ": target " + std::to_string(cls) + " is out of range [0, " +
                      std::to_string(c) + ")");
        w = weight ? weight->get_double(cls) : 1.0;
        loss = -logp[static_cast<size_t>((i * c + cls) * d + k)] * w;
      }
      if (a.reduction == "none") out.set_double(e, loss);
      total += loss;
      total_weight += w;
    }
  if (a.reduction == "sum") out.set_double(0, total);
  if (a.reduction == "mean") out.set_double(0, total / total_weight);
}

std::vector<double> doubles_of(const Tensor& x) {
  std::vector<double> v(static_cast<size_t>(x.numel()));
  for (int64_t e = 0; e < x.numel(); ++e) v[static_cast<size_t>(e)] = x.get_double(e);
  return v;
}

int64_t loss_flops(const OpTypes& t, int64_t per_element) {
  return t.inputs[0] ? per_element * shape_numel(t.inputs[0]->shape) : 0;
}

}  // namespace

void NegativeLogLikelihoodLossOp::infer(const Attrs& a, InferContext& ctx) {
  infer_loss("NegativeLogLikelihoodLoss", a, ctx);
}

void NegativeLogLikelihoodLossOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  nll("NegativeLogLikelihoodLoss", a, doubles_of(x), x.shape(), args.in(1), args.has(2) ? &args.in(2) : nullptr,
      args.out(0));
}

int64_t NegativeLogLikelihoodLossOp::flops(const Attrs&, const OpTypes& t) {
  return t.inputs[1] ? 2 * shape_numel(t.inputs[1]->shape) : 0;
}

void SoftmaxCrossEntropyLossOp::infer(const Attrs& a, InferContext& ctx) {
  infer_loss("SoftmaxCrossEntropyLoss", a, ctx);
  if (ctx.num_outputs() > 1) ctx.set_output(1, ctx.input(0));
}

void SoftmaxCrossEntropyLossOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], d = x.numel() / std::max<int64_t>(n * c, 1);
  std::vector<double> logp = doubles_of(x);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      auto at = [&](int64_t j) -> double& { return logp[static_cast<size_t>((i * c + j) * d + k)]; };
      double m = -INFINITY;
      for (int64_t j = 0; j < c; ++j) m = std::max(m, at(j));
      double sum = 0;
      for (int64_t j = 0; j < c; ++j) sum += std::exp(at(j) - m);
      const double log_sum = m + std::log(sum);
      for (int64_t j = 0; j < c; ++j) at(j) -= log_sum;
    }
  nll("SoftmaxCrossEntropyLoss", a, logp, s, args.in(1), args.has(2) ? &args.in(2) : nullptr, args.out(0));
  if (args.outputs->size() > 1)
    for (int64_t e = 0; e < x.numel(); ++e) args.out(1).set_double(e, logp[static_cast<size_t>(e)]);
}

int64_t SoftmaxCrossEntropyLossOp::flops(const Attrs&, const OpTypes& t) { return loss_flops(t, 5); }

// ---------------------------------------------------------------- MaxUnpool

namespace {
// The output shape MaxUnpool has without output_shape: the shape of MaxPool's input.
Shape default_unpool_shape(const MaxUnpoolAttrs& a, const Shape& x) {
  Shape out = x;
  const size_t spatial = x.size() - 2;
  for (size_t k = 0; k < spatial; ++k) {
    const int64_t stride = a.strides.empty() ? 1 : a.strides[k];
    const int64_t pads = a.pads.empty() ? 0 : a.pads[k] + a.pads[k + spatial];
    out[k + 2] = (x[k + 2] - 1) * stride + a.kernel_shape[k] - pads;
  }
  return out;
}
}  // namespace

void MaxUnpoolOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype("MaxUnpool", "X", x.dtype, kFloatTypes);
  if (ctx.input(1).dtype != DataType::kInt64)
    throw Error("MaxUnpool: I has dtype " + std::string(dtype_name(ctx.input(1).dtype)) + "; allowed: i64");
  if (ctx.input(1).shape != x.shape)
    throw Error("MaxUnpool: I has shape " + shape_str(ctx.input(1).shape) + ", X has " + shape_str(x.shape));
  const size_t spatial = x.shape.size() < 2 ? 0 : x.shape.size() - 2;
  if (spatial == 0 || a.kernel_shape.size() != spatial)
    throw Error("MaxUnpool: kernel_shape has " + std::to_string(a.kernel_shape.size()) + " entries for " +
                std::to_string(spatial) + " spatial axes");
  if (!a.pads.empty() && a.pads.size() != 2 * spatial)
    throw Error("MaxUnpool: pads needs " + std::to_string(2 * spatial) + " entries");
  if (!a.strides.empty() && a.strides.size() != spatial)
    throw Error("MaxUnpool: strides needs " + std::to_string(spatial) + " entries");
  Shape out = x.shape;
  if (ctx.has_input(2)) {
    out = ctx.require_ints(2, "output_shape");
    if (out.size() != x.shape.size() || out[0] != x.shape[0] || out[1] != x.shape[1])
      throw Error("MaxUnpool: output_shape " + shape_str(out) + " does not fit X " + shape_str(x.shape));
  } else {
    out = default_unpool_shape(a, x.shape);
  }
  ctx.set_output(0, x.dtype, out);
}

void MaxUnpoolOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const std::vector<int64_t> index = args.in(1).to_int64s();
  // MaxPool's indices are flat positions in its input, whose shape is the default one; a larger
  // output_shape keeps each position's coordinates.
  const Shape pooled = default_unpool_shape(a, x.shape());
  const Shape& out = y.shape();
  const int64_t pooled_numel = shape_numel(pooled);
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t from = index[static_cast<size_t>(e)];
    if (from < 0 || from >= pooled_numel)
      throw Error("MaxUnpool: index " + std::to_string(from) + " is out of range for the pooled shape " +
                  shape_str(pooled));
    int64_t rest = from, to = 0, scale = 1;
    bool inside = true;
    for (size_t k = pooled.size(); k-- > 0;) {
      const int64_t coordinate = rest % pooled[k];
      rest /= pooled[k];
      inside = inside && coordinate < out[k];
      to += coordinate * scale;
      scale *= out[k];
    }
    if (inside) y.set_double(to, x.get_double(e));
  }
}

}  // namespace tessel::ops
