// Softmax, LogSoftmax, Hardmax along one axis. The maximum is subtracted before exponentiating, so
// large inputs do not overflow.
//
//   X viewed as [outer, n, inner]: each (o, i) is one independent vector of n elements, stride inner.
#include <cmath>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisView axis_view(const char* op, const SoftmaxAttrs& a, const TensorType& x) {
  nn::require_dtype(op, "input", x.dtype, nn::kFloatTypes);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (a.axis < -rank || a.axis >= rank)
    throw Error(std::string(op) + ": axis " + std::to_string(a.axis) + " is out of range for input " +
                shape_str(x.shape) + " of rank " + std::to_string(rank));
  const size_t axis = static_cast<size_t>(a.axis < 0 ? a.axis + rank : a.axis);
  return {nn::product(x.shape, 0, axis), x.shape[axis], nn::product(x.shape, axis + 1)};
}

// Calls fn(values, n) for every vector along the axis, with the values gathered contiguously, and
// scatters back what fn leaves in them.
template <class Fn>
void along_axis(const char* op, const SoftmaxAttrs& a, const KernelArgs& args, Fn fn) {
  const Tensor& x = args.in(0);
  const AxisView v = axis_view(op, a, {x.dtype(), x.shape()});
  std::vector<double> xs = nn::to_doubles(x);
  std::vector<double> line(static_cast<size_t>(v.n));
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double* base = xs.data() + o * v.n * v.inner + i;
      for (int64_t k = 0; k < v.n; ++k) line[k] = base[k * v.inner];
      fn(line);
      for (int64_t k = 0; k < v.n; ++k) base[k * v.inner] = line[k];
    }
  nn::store_doubles(args.out(0), xs);
}

double max_of(const std::vector<double>& line) {
  double m = -INFINITY;
  for (double x : line) m = std::max(m, x);
  return m;
}

}  // namespace

void SoftmaxOp::infer(const Attrs& a, InferContext& ctx) {
  axis_view("Softmax", a, ctx.input(0));
  infer_like_input(ctx);
}

void SoftmaxOp::reference(const Attrs& a, const KernelArgs& args) {
  along_axis("Softmax", a, args, [](std::vector<double>& line) {
    const double m = max_of(line);
    double sum = 0;
    for (double& x : line) sum += (x = std::exp(x - m));
    for (double& x : line) x /= sum;
  });
}

void LogSoftmaxOp::infer(const Attrs& a, InferContext& ctx) {
  axis_view("LogSoftmax", a, ctx.input(0));
  infer_like_input(ctx);
}

void LogSoftmaxOp::reference(const Attrs& a, const KernelArgs& args) {
  along_axis("LogSoftmax", a, args, [](std::vector<double>& line) {
    const double m = max_of(line);
    double sum = 0;
    for (double x : line) sum += std::exp(x - m);
    const double log_sum = std::log(sum);
    for (double& x : line) x = x - m - log_sum;
  });
}

void HardmaxOp::infer(const Attrs& a, InferContext& ctx) {
  axis_view("Hardmax", a, ctx.input(0));
  infer_like_input(ctx);
}

void HardmaxOp::reference(const Attrs& a, const KernelArgs& args) {
  along_axis("Hardmax", a, args, [](std::vector<double>& line) {
    size_t best = 0;
    for (size_t k = 1; k < line.size(); ++k)
      if (line[k] > line[best]) best = k;
    for (size_t k = 0; k < line.size(); ++k) line[k] = k == best ? 1.0 : 0.0;
  });
}

}  // namespace tessel::ops
