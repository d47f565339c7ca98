// Quantized ops: shape rules and reference kernels.
//
// The integer products reuse Conv's and MatMul's reference kernels on centered operands
// (x - zero_point, exact in int64 or double), so padding, groups and batch broadcasting are the
// float ops' own. Quantizing follows the arithmetic the compiled kernels use, so the two agree
// bit for bit: x / scale in float32 (double for int32 or float64 x), round half to even, add the
// zero point, saturate; requantizing an accumulator multiplies it in double by
// (in_scale · w_scale) / out_scale.
#include "core/graph/ops/quant_ops.h"

#include <cmath>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace quant {

IntRange int_range(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return {0, 255};
    case DataType::kInt8:
      return {-128, 127};
    case DataType::kInt16:
      return {-32768, 32767};
    case DataType::kInt32:
      return {INT32_MIN, INT32_MAX};
    default:
      return {0, 0};
  }
}

bool per_tensor(const Shape& shape) { return shape.size() <= 1 && shape_numel(shape) == 1; }

}  // namespace quant

namespace {

using quant::per_tensor;

constexpr std::initializer_list<DataType> kQuantizedTypes = {DataType::kUInt8, DataType::kInt8, DataType::kInt16};
constexpr std::initializer_list<DataType> kDequantizeTypes = {DataType::kUInt8, DataType::kInt8, DataType::kInt16,
                                                              DataType::kInt32};
constexpr std::initializer_list<DataType> kQuantizeInputTypes = {
    DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16, DataType::kInt32};
constexpr std::initializer_list<DataType> k8BitTypes = {DataType::kUInt8, DataType::kInt8};

std::string s(int64_t v) { return std::to_string(v); }
std::string name(DataType t) { return std::string(dtype_name(t)); }

void require_same_dtype(const char* op, const char* what, DataType t, const char* other, DataType want) {
  if (t != want)
    throw Error(std::string(op) + ": " + what + " has dtype " + name(t) + " but " + other + " has " + name(want));
}

// The axis a per-axis scale runs along, checked against the operand's rank; -1 when the scale is
// one value for the whole tensor (the axis is then not used, so not checked).
int64_t channel_axis(const char* op, int64_t axis, const Shape& x, const Shape& scale) {
  if (per_tensor(scale)) return -1;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (axis < -rank || axis >= rank)
    throw Error(std::string(op) + ": axis " + s(axis) + " is out of range for input " + shape_str(x) + " of rank " +
                s(rank));
  return axis < 0 ? axis + rank : axis;
}

// Checks a scale (input `scale`) and its optional zero point (input `zp`) for an operand of shape
// `x`: one value each, or one per element of axis `axis` (a 1-D tensor of that length, both).
void check_params(const char* op, const InferContext& ctx, int scale, int zp, const char* what, const Shape& x,
                  int64_t axis) {
  const TensorType& st = ctx.input(scale);
  nn::require_dtype(op, (std::string(what) + "_scale").c_str(), st.dtype, nn::kFloatTypes);
  if (axis >= 0 && (st.shape.size() != 1 || st.shape[0] != x[axis]))
    throw Error(std::string(op) + ": " + what + "_scale has shape " + shape_str(st.shape) +
                "; expected one value or a 1-D tensor of " + s(x[axis]) + " (axis " + s(axis) + " of " + shape_str(x) +
                ")");
  if (!ctx.has_input(zp)) return;
  const Shape& zs = ctx.input(zp).shape;
  if (!(per_tensor(zs) && per_tensor(st.shape)) && zs != st.shape)
    throw Error(std::string(op) + ": " + what + "_zero_point has shape " + shape_str(zs) + " but " + what +
                "_scale has " + shape_str(st.shape));
}

// Maps a flat element index of an operand to its channel along `axis` (0 when per tensor).
struct Channels {
  int64_t inner = 1, extent = 1;
  bool per_axis = false;
  Channels(const Shape& x, int64_t axis) : per_axis(axis >= 0) {
    if (!per_axis) return;
    extent = x[axis];
    inner = nn::product(x, static_cast<size_t>(axis) + 1);
  }
  int64_t operator()(int64_t i) const { return per_axis ? (i / inner) % extent : 0; }
};

// Rounds half to even (the default rounding mode's nearbyint) and saturates; NaN becomes the low
// end, as the compiled kernels' max/min do.
double saturate(double v, quant::IntRange r) {
  if (std::isnan(v)) return static_cast<double>(r.lo);
  return std::min(std::max(v, static_cast<double>(r.lo)), static_cast<double>(r.hi));
}

double zero_point(const KernelArgs& args, int i, int64_t channel) {
  if (!args.has(i)) return 0.0;
  const Tensor& z = args.in(i);
  return z.get_double(per_tensor(z.shape()) ? 0 : channel);
}

double scale_of(const Tensor& t, int64_t channel) { return t.get_double(per_tensor(t.shape()) ? 0 : channel); }

// An operand minus its zero point, as int64 (`dtype`) or float64 values; `channel_of` maps a flat
// index to the zero point's element.
template <class ChannelOf>
Tensor centered(const Tensor& v, const Tensor* zp, DataType dtype, ChannelOf channel_of) {
  Tensor out(dtype, v.shape());
  const std::vector<int64_t> values = nn::to_exact_int64s(v);
  const std::vector<int64_t> zs = zp ? nn::to_exact_int64s(*zp) : std::vector<int64_t>{0};
  const bool one = zs.size() == 1;
  std::vector<int64_t> diff(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    diff[i] = values[i] - zs[one ? 0 : static_cast<size_t>(channel_of(static_cast<int64_t>(i)))];
  if (dtype == DataType::kInt64) {
    nn::store_int64s(out, diff);
  } else {
    std::vector<double> d(diff.begin(), diff.end());
    nn::store_doubles(out, d);
  }
  return out;
}

// ------------------------------------------------------------------ integer matrix products

// Checks one operand of an integer product and its optional zero point (per tensor, or 1-D: per row
// of A, per column of B); returns the zero point's axis in the operand, -1 when per tensor.
int64_t check_matmul_param(const char* op, const InferContext& ctx, int operand, int zp, const char* what, bool is_a) {
  const TensorType& x = ctx.input(operand);
  nn::require_dtype(op, what, x.dtype, k8BitTypes);
  if (!ctx.has_input(zp)) return -1;
  const TensorType& z = ctx.input(zp);
  require_same_dtype(op, (std::string(what) + "'s zero point").c_str(), z.dtype, what, x.dtype);
  if (per_tensor(z.shape)) return -1;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = is_a ? rank - 2 : rank - 1;
  if (rank < 2 || z.shape.size() != 1 || z.shape[0] != x.shape[axis])
    throw Error(std::string(op) + ": " + what + "'s zero point " + shape_str(z.shape) +
                " must be one value or one per " + (is_a ? "row" : "column") + " of " + what + " " +
                shape_str(x.shape));
  return axis;
}

Shape matmul_output(const char* op, const TensorType& a, const TensorType& b) {
  const TensorType fa{DataType::kInt64, a.shape}, fb{DataType::kInt64, b.shape};
  InferContext inner({&fa, &fb}, {nullptr, nullptr}, 1);
  try {
    MatMulOp::infer({}, inner);
  } catch (const Error& e) {
    throw Error(std::string(op) + ": " + e.what());
  }
  return inner.outputs()[0].shape;
}

// The exact int64 product (A - a_zp)·(B - b_zp), numpy.matmul-shaped like the node's output.
Tensor integer_product(const KernelArgs& args, int a, int a_zp, int b, int b_zp, const Shape& out_shape) {
  const Tensor& av = args.in(a);
  const Tensor& bv = args.in(b);
  const int64_t ra = av.rank(), rb = bv.rank();
  const int64_t k = av.shape().back(), n = rb >= 2 ? bv.shape().back() : 1;
  const Tensor ca = centered(av, args.has(a_zp) ? &args.in(a_zp) : nullptr, DataType::kInt64,
                             [&](int64_t i) { return ra >= 2 ? (i / k) % av.shape()[ra - 2] : 0; });
  const Tensor cb =
      centered(bv, args.has(b_zp) ? &args.in(b_zp) : nullptr, DataType::kInt64, [&](int64_t i) { return i % n; });
  std::vector<Tensor> outs{Tensor(DataType::kInt64, out_shape)};
  MatMulOp::reference({}, KernelArgs{{&ca, &cb}, &outs});
  return outs[0];
}

// The row of A and the column of B that flat output element o of a matmul-shaped output reads.
struct RowColumn {
  int64_t m = 1, n = 1;
  bool a_matrix = true, b_matrix = true;
  int64_t row(int64_t o) const { return a_matrix ? (o / (b_matrix ? n : 1)) % m : 0; }
  int64_t column(int64_t o) const { return b_matrix ? o % n : 0; }
};

RowColumn row_column(const Shape& a, const Shape& b) {
  RowColumn rc;
  rc.a_matrix = a.size() >= 2;
  rc.b_matrix = b.size() >= 2;
  if (rc.a_matrix) rc.m = a[a.size() - 2];
  if (rc.b_matrix) rc.n = b.back();
  return rc;
}

int64_t matmul_flops(const OpTypes& t, int a) {
  const Shape& as = t.inputs[a]->shape;
  return 2 * shape_numel(t.outputs[0].shape) * (as.empty() ? 0 : as.back());
}

// ------------------------------------------------------------------ integer convolutions

Shape conv_output(const char* op, const ConvAttrs& a, const TensorType& x, const TensorType& w) {
  const TensorType fx{DataType::kFloat32, x.shape}, fw{DataType::kFloat32, w.shape};
  InferContext inner({&fx, &fw}, {nullptr, nullptr}, 1);
  try {
    ConvOp::infer(a, inner);
  } catch (const Error& e) {
    throw Error(std::string(op) + ": " + e.what());
  }
  return inner.outputs()[0].shape;
}

// Checks x, w and their zero points (x's one value, w's one value or one per output channel).
void check_conv_operands(const char* op, const InferContext& ctx, int x, int x_zp, int w, int w_zp) {
  const TensorType& xt = ctx.input(x);
  const TensorType& wt = ctx.input(w);
  nn::require_dtype(op, "x", xt.dtype, k8BitTypes);
  nn::require_dtype(op, "w", wt.dtype, k8BitTypes);
  if (ctx.has_input(x_zp)) {
    require_same_dtype(op, "x_zero_point", ctx.input(x_zp).dtype, "x", xt.dtype);
    if (!per_tensor(ctx.input(x_zp).shape))
      throw Error(std::string(op) + ": x_zero_point must be one value, got shape " + shape_str(ctx.input(x_zp).shape));
  }
  if (ctx.has_input(w_zp)) {
    const TensorType& z = ctx.input(w_zp);
    require_same_dtype(op, "w_zero_point", z.dtype, "w", wt.dtype);
    if (!per_tensor(z.shape) && !wt.shape.empty() && z.shape != Shape{wt.shape[0]})
      throw Error(std::string(op) + ": w_zero_point has shape " + shape_str(z.shape) +
                  "; expected one value or one per output channel ([" + s(wt.shape.empty() ? 0 : wt.shape[0]) + "])");
  }
}

// The exact conv(x - x_zp, w - w_zp) as float64 (padding reads x_zp, so centered zero).
Tensor integer_conv(const ConvAttrs& a, const KernelArgs& args, int x, int x_zp, int w, int w_zp, const Shape& out) {
  const Tensor& wv = args.in(w);
  const int64_t per_channel = nn::product(wv.shape(), 1);
  const Tensor cx =
      centered(args.in(x), args.has(x_zp) ? &args.in(x_zp) : nullptr, DataType::kFloat64, [](int64_t) { return 0; });
  const Tensor cw = centered(wv, args.has(w_zp) ? &args.in(w_zp) : nullptr, DataType::kFloat64,
                             [&](int64_t i) { return i / per_channel; });
  std::vector<Tensor> outs{Tensor(DataType::kFloat64, out)};
  ConvOp::reference(a, KernelArgs{{&cx, &cw}, &outs});
  return outs[0];
}

int64_t conv_flops(const OpTypes& t, int w) {
  return 2 * shape_numel(t.outputs[0].shape) * nn::product(t.inputs[w]->shape, 1);
}

}  // namespace

// ------------------------------------------------------------------ QuantizeLinear, DequantizeLinear

void QuantizeLinearOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  nn::require_dtype("QuantizeLinear", "x", x.dtype, kQuantizeInputTypes);
  const int64_t axis = channel_axis("QuantizeLinear", a.axis, x.shape, ctx.input(1).shape);
  check_params("QuantizeLinear", ctx, 1, 2, "y", x.shape, axis);
  DataType out = DataType::kUInt8;
  if (ctx.has_input(2)) {
    out = ctx.input(2).dtype;
    nn::require_dtype("QuantizeLinear", "y_zero_point", out, kQuantizedTypes);
  }
  ctx.set_output(0, out, x.shape);
}

void QuantizeLinearOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const Tensor& scale = args.in(1);
  Tensor& y = args.out(0);
  const Channels channel(x.shape(), channel_axis("QuantizeLinear", a.axis, x.shape(), scale.shape()));
  const quant::IntRange range = quant::int_range(y.dtype());
  const bool in_double = x.dtype() == DataType::kFloat64 || x.dtype() == DataType::kInt32;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = channel(i);
    const double q = in_double
                         ? std::nearbyint(x.get_double(i) / scale_of(scale, c))
                         : std::nearbyint(static_cast<float>(x.get_double(i)) / static_cast<float>(scale_of(scale, c)));
    y.set_double(i, saturate(q + zero_point(args, 2, c), range));
  }
}

void DequantizeLinearOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  nn::require_dtype("DequantizeLinear", "x", x.dtype, kDequantizeTypes);
  const int64_t axis = channel_axis("DequantizeLinear", a.axis, x.shape, ctx.input(1).shape);
  check_params("DequantizeLinear", ctx, 1, 2, "x", x.shape, axis);
  if (ctx.has_input(2)) require_same_dtype("DequantizeLinear", "x_zero_point", ctx.input(2).dtype, "x", x.dtype);
  ctx.set_output(0, ctx.input(1).dtype, x.shape);
}

void DequantizeLinearOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const Tensor& scale = args.in(1);
  Tensor& y = args.out(0);
  const Channels channel(x.shape(), channel_axis("DequantizeLinear", a.axis, x.shape(), scale.shape()));
  const std::vector<int64_t> xs = nn::to_exact_int64s(x);
  const bool in_double = y.dtype() == DataType::kFloat64;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = channel(i);
    const int64_t d = xs[static_cast<size_t>(i)] - static_cast<int64_t>(zero_point(args, 2, c));
    y.set_double(i, in_double ? static_cast<double>(d) * scale_of(scale, c)
                              : static_cast<float>(d) * static_cast<float>(scale_of(scale, c)));
  }
}

// ------------------------------------------------------------------ DynamicQuantizeLinear

void DynamicQuantizeLinearOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  nn::require_dtype("DynamicQuantizeLinear", "x", x.dtype, {DataType::kFloat32});
  ctx.set_output(0, DataType::kUInt8, x.shape);
  ctx.set_output(1, DataType::kFloat32, {});
  ctx.set_output(2, DataType::kUInt8, {});
}

// In float32 throughout, as the ONNX definition: scale = (max(0, max x) - min(0, min x)) / 255
// (1/255 when the range is empty), zero point = round(saturate(-min / scale)).
void DynamicQuantizeLinearOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const float* xs = x.data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = std::min(lo, xs[i]);
    hi = std::max(hi, xs[i]);
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float zp = std::nearbyint(std::min(std::max(0.0f - lo / scale, 0.0f), 255.0f));
  const quant::IntRange range = quant::int_range(DataType::kUInt8);
  Tensor& y = args.out(0);
  for (int64_t i = 0; i < x.numel(); ++i) y.set_double(i, saturate(std::nearbyint(xs[i] / scale) + zp, range));
  args.out(1).set_double(0, scale);
  args.out(2).set_double(0, zp);
}

// ------------------------------------------------------------------ MatMulInteger, QLinearMatMul

void MatMulIntegerOp::infer(const Attrs&, InferContext& ctx) {
  check_matmul_param("MatMulInteger", ctx, 0, 2, "A", true);
  check_matmul_param("MatMulInteger", ctx, 1, 3, "B", false);
  ctx.set_output(0, DataType::kInt32, matmul_output("MatMulInteger", ctx.input(0), ctx.input(1)));
}

void MatMulIntegerOp::reference(const Attrs&, const KernelArgs& args) {
  Tensor& y = args.out(0);
  nn::store_int64s(y, nn::to_exact_int64s(integer_product(args, 0, 2, 1, 3, y.shape())));
}

int64_t MatMulIntegerOp::flops(const Attrs&, const OpTypes& t) { return matmul_flops(t, 0); }

void QLinearMatMulOp::infer(const Attrs&, InferContext& ctx) {
  const char* op = "QLinearMatMul";
  check_matmul_param(op, ctx, 0, 2, "a", true);
  check_matmul_param(op, ctx, 3, 5, "b", false);
  const Shape out = matmul_output(op, ctx.input(0), ctx.input(3));
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(3).shape;
  // A scale runs along what its zero point does: per tensor, per row of a or per column of b.
  const bool a_per_row = !per_tensor(ctx.input(1).shape), b_per_column = !per_tensor(ctx.input(4).shape);
  if ((a_per_row && as.size() < 2) || (b_per_column && bs.size() < 2))
    throw Error("QLinearMatMul: the scale of a vector operand must be one value");
  check_params(op, ctx, 1, 2, "a", as, a_per_row ? static_cast<int64_t>(as.size()) - 2 : -1);
  check_params(op, ctx, 4, 5, "b", bs, b_per_column ? static_cast<int64_t>(bs.size()) - 1 : -1);
  const TensorType& ys = ctx.input(6);
  nn::require_dtype(op, "y_scale", ys.dtype, nn::kFloatTypes);
  if (!per_tensor(ys.shape)) throw Error("QLinearMatMul: y_scale must be one value, got shape " + shape_str(ys.shape));
  const TensorType& yz = ctx.input(7);
  nn::require_dtype(op, "y_zero_point", yz.dtype, k8BitTypes);
  if (!per_tensor(yz.shape))
    throw Error("QLinearMatMul: y_zero_point must be one value, got shape " + shape_str(yz.shape));
  ctx.set_output(0, yz.dtype, out);
}

void QLinearMatMulOp::reference(const Attrs&, const KernelArgs& args) {
  Tensor& y = args.out(0);
  const std::vector<int64_t> acc = nn::to_exact_int64s(integer_product(args, 0, 2, 3, 5, y.shape()));
  const RowColumn rc = row_column(args.in(0).shape(), args.in(3).shape());
  const double y_scale = args.in(6).get_double(0), y_zp = args.in(7).get_double(0);
  const quant::IntRange range = quant::int_range(y.dtype());
  for (int64_t o = 0; o < y.numel(); ++o) {
    const double multiplier = scale_of(args.in(1), rc.row(o)) * scale_of(args.in(4), rc.column(o)) / y_scale;
    // The compiled kernel accumulates in int32, wrapping as the hardware does.
    const auto sum = static_cast<int32_t>(static_cast<uint32_t>(acc[static_cast<size_t>(o)]));
    y.set_double(o, saturate(std::nearbyint(static_cast<double>(sum) * multiplier) + y_zp, range));
  }
}

int64_t QLinearMatMulOp::flops(const Attrs&, const OpTypes& t) {
  return matmul_flops(t, 0) + 4 * shape_numel(t.outputs[0].shape);
}

// ------------------------------------------------------------------ ConvInteger, QLinearConv

void ConvIntegerOp::infer(const Attrs& a, InferContext& ctx) {
  check_conv_operands("ConvInteger", ctx, 0, 2, 1, 3);
  ctx.set_output(0, DataType::kInt32, conv_output("ConvInteger", a, ctx.input(0), ctx.input(1)));
}

void ConvIntegerOp::reference(const Attrs& a, const KernelArgs& args) {
  Tensor& y = args.out(0);
  const std::vector<double> acc = nn::to_doubles(integer_conv(a, args, 0, 2, 1, 3, y.shape()));
  std::vector<int64_t> values(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) values[i] = static_cast<int64_t>(acc[i]);  // exact integers
  nn::store_int64s(y, values);
}

int64_t ConvIntegerOp::flops(const Attrs&, const OpTypes& t) { return conv_flops(t, 1); }

void QLinearConvOp::infer(const Attrs& a, InferContext& ctx) {
  const char* op = "QLinearConv";
  check_conv_operands(op, ctx, 0, 2, 3, 5);
  const Shape out = conv_output(op, a, ctx.input(0), ctx.input(3));
  const int64_t channels = out[1];
  const TensorType& xs = ctx.input(1);
  nn::require_dtype(op, "x_scale", xs.dtype, nn::kFloatTypes);
  if (!per_tensor(xs.shape)) throw Error("QLinearConv: x_scale must be one value, got shape " + shape_str(xs.shape));
  const TensorType& ws = ctx.input(4);
  nn::require_dtype(op, "w_scale", ws.dtype, nn::kFloatTypes);
  if (!per_tensor(ws.shape) && ws.shape != Shape{channels})
    throw Error("QLinearConv: w_scale has shape " + shape_str(ws.shape) +
                "; expected one value or one per output channel ([" + s(channels) + "])");
  const TensorType& ys = ctx.input(6);
  nn::require_dtype(op, "y_scale", ys.dtype, nn::kFloatTypes);
  if (!per_tensor(ys.shape)) throw Error("QLinearConv: y_scale must be one value, got shape " + shape_str(ys.shape));
  const TensorType& yz = ctx.input(7);
  nn::require_dtype(op, "y_zero_point", yz.dtype, k8BitTypes);
  if (!per_tensor(yz.shape))
    throw Error("QLinearConv: y_zero_point must be one value, got shape " + shape_str(yz.shape));
  if (ctx.has_input(8)) {
    const TensorType& b = ctx.input(8);
    nn::require_dtype(op, "B", b.dtype, {DataType::kInt32});
    if (b.shape != Shape{channels})
      throw Error("QLinearConv: B has shape " + shape_str(b.shape) + "; expected [" + s(channels) +
                  "] (one per output channel)");
  }
  ctx.set_output(0, yz.dtype, out);
}

void QLinearConvOp::reference(const Attrs& a, const KernelArgs& args) {
  Tensor& y = args.out(0);
  const std::vector<double> acc = nn::to_doubles(integer_conv(a, args, 0, 2, 3, 5, y.shape()));
  const std::vector<int64_t> bias = args.has(8) ? nn::to_exact_int64s(args.in(8)) : std::vector<int64_t>{};
  const Shape& ys = y.shape();
  const int64_t channels = ys[1], spatial = nn::product(ys, 2);
  const double x_scale = args.in(1).get_double(0), y_scale = args.in(6).get_double(0);
  const double y_zp = args.in(7).get_double(0);
  const quant::IntRange range = quant::int_range(y.dtype());
  for (int64_t o = 0; o < y.numel(); ++o) {
    const int64_t m = (o / spatial) % channels;
    const auto sum = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(acc[static_cast<size_t>(o)]) +
                                                                (bias.empty() ? 0 : bias[static_cast<size_t>(m)])));
    const double multiplier = x_scale * scale_of(args.in(4), m) / y_scale;
    y.set_double(o, saturate(std::nearbyint(static_cast<double>(sum) * multiplier) + y_zp, range));
  }
}

int64_t QLinearConvOp::flops(const Attrs&, const OpTypes& t) {
  return conv_flops(t, 3) + 4 * shape_numel(t.outputs[0].shape);
}

}  // namespace tessel::ops
