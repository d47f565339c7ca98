// MaxPool, AveragePool, LpPool and the global pools: shape rules and reference kernels.
#include <algorithm>
#include <cmath>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

constexpr std::initializer_list<DataType> kMaxPoolTypes = {DataType::kFloat16, DataType::kFloat32, DataType::kFloat64,
                                                           DataType::kInt8, DataType::kUInt8};

std::string s(int64_t v) { return std::to_string(v); }

void check_pool_input(const char* op, const TensorType& x, std::initializer_list<DataType> types) {
  nn::require_dtype(op, "X", x.dtype, types);
  if (x.shape.size() < 3)
    throw Error(std::string(op) + ": X must have rank 3 or more (N×C×D1…), got " + shape_str(x.shape));
}

// Geometry of a windowed pool. Padding at least as wide as the window would leave windows with
// nothing to pool, so it is refused.
nn::WindowGeometry pool_window(const char* op, const TensorType& x, const std::vector<int64_t>& kernel,
                               const nn::WindowAttrs& a) {
  const Shape spatial(x.shape.begin() + 2, x.shape.end());
  nn::WindowGeometry g = nn::resolve_window(op, spatial, kernel, a);
  for (size_t i = 0; i < g.rank(); ++i)
    if (g.pad_begin[i] >= g.effective_kernel(i) || g.pad_end[i] >= g.effective_kernel(i))
      throw Error(std::string(op) + ": pads (" + s(g.pad_begin[i]) + ", " + s(g.pad_end[i]) + ") on spatial axis " +
                  s(int64_t(i)) + " must be smaller than the window extent " + s(g.effective_kernel(i)));
  return g;
}

nn::WindowGeometry max_pool_window(const MaxPoolAttrs& a, const TensorType& x) {
  check_pool_input("MaxPool", x, kMaxPoolTypes);
  return pool_window("MaxPool", x, a.kernel_shape,
                     {.auto_pad = a.auto_pad,
                      .strides = a.strides,
                      .dilations = a.dilations,
                      .pads = a.pads,
                      .ceil_mode = a.ceil_mode != 0});
}

nn::WindowGeometry average_pool_window(const AveragePoolAttrs& a, const TensorType& x) {
  check_pool_input("AveragePool", x, nn::kConvFloatTypes);
  static const std::vector<int64_t> no_dilations;
  return pool_window("AveragePool", x, a.kernel_shape,
                     {.auto_pad = a.auto_pad,
                      .strides = a.strides,
                      .dilations = no_dilations,
                      .pads = a.pads,
                      .ceil_mode = a.ceil_mode != 0});
}

nn::WindowGeometry lp_pool_window(const LpPoolAttrs& a, const TensorType& x) {
  check_pool_input("LpPool", x, nn::kConvFloatTypes);
  static const std::vector<int64_t> no_dilations;
  return pool_window(
      "LpPool", x, a.kernel_shape,
      {.auto_pad = a.auto_pad, .strides = a.strides, .dilations = no_dilations, .pads = a.pads, .ceil_mode = false});
}

// (Σ |v|^p)^(1/p), with the exact square root for the common p = 2.
double lp_norm_root(double sum_of_powers, int64_t p) {
  return p == 2 ? std::sqrt(sum_of_powers) : std::pow(sum_of_powers, 1.0 / static_cast<double>(p));
}
double lp_power(double v, int64_t p) { return p == 2 ? v * v : std::pow(std::abs(v), static_cast<double>(p)); }

Shape pooled_shape(const Shape& x, const Shape& spatial_out) {
  Shape out{x[0], x[1]};
  out.insert(out.end(), spatial_out.begin(), spatial_out.end());
  return out;
}

std::vector<nn::AxisTaps> forward_taps(const nn::WindowGeometry& g) {
  std::vector<nn::AxisTaps> axes;
  for (size_t i = 0; i < g.rank(); ++i) axes.push_back(nn::forward_axis_taps(g, i));
  return axes;
}

// Flat index of a spatial position in column-major order (storage_order=1): the first spatial
// axis varies fastest.
int64_t column_major_offset(int64_t row_major_offset, const Shape& spatial) {
  int64_t offset = 0, stride = 1;
  Shape coord(spatial.size());
  for (size_t d = spatial.size(); d-- > 0;) {
    coord[d] = row_major_offset % spatial[d];
    row_major_offset /= spatial[d];
  }
  for (size_t d = 0; d < spatial.size(); ++d) {
    offset += coord[d] * stride;
    stride *= spatial[d];
  }
  return offset;
}

int64_t pool_flops(const OpTypes& t, int64_t window, int64_t per_output) {
  return shape_numel(t.outputs[0].shape) * (window + per_output);
}

}  // namespace

void MaxPoolOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const Shape out = pooled_shape(x.shape, max_pool_window(a, x).output);
  ctx.set_output(0, x.dtype, out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DataType::kInt64, out);
}

void MaxPoolOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const nn::WindowGeometry g = max_pool_window(a, {x.dtype(), x.shape()});
  const std::vector<double> xs = nn::to_doubles(x);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t in_size = nn::product(g.input), out_size = nn::product(g.output);
  std::vector<double> ys(static_cast<size_t>(planes * out_size));
  std::vector<int64_t> indices(ys.size());
  nn::for_each_window(
      g.output, g.kernel, g.input, forward_taps(g), [&](int64_t o, const int64_t*, const nn::WindowTaps& taps) {
        for (int64_t p = 0; p < planes; ++p) {
          const double* plane = xs.data() + p * in_size;
          // The first maximum in row-major window order wins ties.
          size_t best = 0;
          for (size_t t = 1; t < taps.size(); ++t)
            if (plane[taps.input_offset[t]] > plane[taps.input_offset[best]]) best = t;
          const int64_t at = taps.input_offset[best];
          ys[p * out_size + o] = plane[at];
          indices[p * out_size + o] = p * in_size + (a.storage_order == 0 ? at : column_major_offset(at, g.input));
        }
      });
  nn::store_doubles(args.out(0), ys);
  if (args.outputs->size() > 1) nn::store_int64s(args.out(1), indices);
}

int64_t MaxPoolOp::flops(const Attrs& a, const OpTypes& t) { return pool_flops(t, nn::product(a.kernel_shape), 0); }

void AveragePoolOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  ctx.set_output(0, x.dtype, pooled_shape(x.shape, average_pool_window(a, x).output));
}

void AveragePoolOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const nn::WindowGeometry g = average_pool_window(a, {x.dtype(), x.shape()});
  // With count_include_pad the divisor counts window positions inside the padded extent
  // [-pad_begin, in + pad_end); positions past it (ceil_mode overhang) never count.
  std::vector<std::vector<int64_t>> padded_count(g.rank());
  for (size_t i = 0; i < g.rank(); ++i)
    for (int64_t o = 0; o < g.output[i]; ++o) {
      const int64_t start = o * g.stride[i] - g.pad_begin[i];
      const int64_t end = std::min(start + g.kernel[i], g.input[i] + g.pad_end[i]);
      padded_count[i].push_back(end - start);
    }
  const std::vector<double> xs = nn::to_doubles(x);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t in_size = nn::product(g.input), out_size = nn::product(g.output);
  std::vector<double> ys(static_cast<size_t>(planes * out_size));
  nn::for_each_window(g.output, g.kernel, g.input, forward_taps(g),
                      [&](int64_t o, const int64_t* coord, const nn::WindowTaps& taps) {
                        double divisor = static_cast<double>(taps.size());
                        if (a.count_include_pad) {
                          divisor = 1;
                          for (size_t i = 0; i < g.rank(); ++i)
                            divisor *= static_cast<double>(padded_count[i][coord[i]]);
                        }
                        for (int64_t p = 0; p < planes; ++p) {
                          const double* plane = xs.data() + p * in_size;
                          double sum = 0;
                          for (size_t t = 0; t < taps.size(); ++t) sum += plane[taps.input_offset[t]];
                          ys[p * out_size + o] = sum / divisor;
                        }
                      });
  nn::store_doubles(args.out(0), ys);
}

int64_t AveragePoolOp::flops(const Attrs& a, const OpTypes& t) { return pool_flops(t, nn::product(a.kernel_shape), 1); }

namespace {

void infer_global_pool(const char* op, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  check_pool_input(op, x, nn::kConvFloatTypes);
  Shape out = x.shape;
  std::fill(out.begin() + 2, out.end(), 1);
  ctx.set_output(0, x.dtype, out);
}

// Reduces each N×C plane with `combine`, starting from its first element; `finish` maps the result.
template <class Combine, class Finish>
void global_pool(const KernelArgs& args, Combine combine, Finish finish) {
  const Tensor& x = args.in(0);
  const std::vector<double> xs = nn::to_doubles(x);
  const int64_t planes = x.shape()[0] * x.shape()[1], size = nn::product(x.shape(), 2);
  std::vector<double> ys(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    double acc = xs[p * size];
    for (int64_t i = 1; i < size; ++i) acc = combine(acc, xs[p * size + i]);
    ys[p] = finish(acc, size);
  }
  nn::store_doubles(args.out(0), ys);
}

}  // namespace

void GlobalAveragePoolOp::infer(const Attrs&, InferContext& ctx) { infer_global_pool("GlobalAveragePool", ctx); }

void GlobalAveragePoolOp::reference(const Attrs&, const KernelArgs& args) {
  if (nn::product(args.in(0).shape(), 2) == 0) throw Error("GlobalAveragePool: X has an empty spatial extent");
  global_pool(
      args, [](double acc, double v) { return acc + v; },
      [](double sum, int64_t n) { return sum / static_cast<double>(n); });
}

int64_t GlobalAveragePoolOp::flops(const Attrs&, const OpTypes& t) {
  return shape_numel(t.inputs[0]->shape) + shape_numel(t.outputs[0].shape);
}

void GlobalMaxPoolOp::infer(const Attrs&, InferContext& ctx) { infer_global_pool("GlobalMaxPool", ctx); }

void GlobalMaxPoolOp::reference(const Attrs&, const KernelArgs& args) {
  if (nn::product(args.in(0).shape(), 2) == 0) throw Error("GlobalMaxPool: X has an empty spatial extent");
  global_pool(
      args, [](double acc, double v) { return v > acc ? v : acc; }, [](double m, int64_t) { return m; });
}

int64_t GlobalMaxPoolOp::flops(const Attrs&, const OpTypes& t) { return shape_numel(t.inputs[0]->shape); }

void LpPoolOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  ctx.set_output(0, x.dtype, pooled_shape(x.shape, lp_pool_window(a, x).output));
}

void LpPoolOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const nn::WindowGeometry g = lp_pool_window(a, {x.dtype(), x.shape()});
  const std::vector<double> xs = nn::to_doubles(x);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t in_size = nn::product(g.input), out_size = nn::product(g.output);
  std::vector<double> ys(static_cast<size_t>(planes * out_size));
  nn::for_each_window(g.output, g.kernel, g.input, forward_taps(g),
                      [&](int64_t o, const int64_t*, const nn::WindowTaps& taps) {
                        for (int64_t p = 0; p < planes; ++p) {
                          const double* plane = xs.data() + p * in_size;
                          double sum = 0;
                          for (size_t t = 0; t < taps.size(); ++t) sum += lp_power(plane[taps.input_offset[t]], a.p);
                          ys[p * out_size + o] = lp_norm_root(sum, a.p);
                        }
                      });
  nn::store_doubles(args.out(0), ys);
}

// Per tap: power and add; per output: the root.
int64_t LpPoolOp::flops(const Attrs& a, const OpTypes& t) { return pool_flops(t, 2 * nn::product(a.kernel_shape), 1); }

void GlobalLpPoolOp::infer(const Attrs&, InferContext& ctx) { infer_global_pool("GlobalLpPool", ctx); }

void GlobalLpPoolOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const std::vector<double> xs = nn::to_doubles(x);
  const int64_t planes = x.shape()[0] * x.shape()[1], size = nn::product(x.shape(), 2);
  std::vector<double> ys(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += lp_power(xs[p * size + i], a.p);
    ys[p] = lp_norm_root(sum, a.p);
  }
  nn::store_doubles(args.out(0), ys);
}

int64_t GlobalLpPoolOp::flops(const Attrs&, const OpTypes& t) {
  return 2 * shape_numel(t.inputs[0]->shape) + shape_numel(t.outputs[0].shape);
}

}  // namespace tessel::ops
