// Tensor-expression builders for quantized inference. 8-bit operands are widened to int32 as they
// are read and their products summed in int32; a requantizing stage turns the int32 accumulator
// into the 8-bit output with the arithmetic of the reference kernels (quant_ops.cpp):
//
//   acc[n,m,y,x] = Σ (x[...] - x_zp) · (w[m,...] - w_zp[m])                    int32
//   out[n,m,y,x] = saturate(round_half_even(f64(acc + B[m]) · x_s·w_s[m]/y_s) + y_zp)   uint8/int8
//
// Scales and zero points are read as tensors (often graph inputs, not constants), one value or
// one per channel.
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/quant_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"
#include "core/te/int8_dot_product.h"

namespace tessel::ops::te_builder {

namespace {

using ops::quant::per_tensor;

// A scale or zero point at `channel` (ignored when it is one value).
Expr param(const te::Tensor& t, const Expr& channel) {
  if (per_tensor(t->shape)) return te::at(t, std::vector<Expr>(t->shape.size(), make_int(0)));
  return te::at(t, {channel});
}

// A zero point as `t`, 0 when the input is absent.
Expr zero_point(const BuildContext& c, size_t input, const Expr& channel, DataType t) {
  return c.has(input) ? convert(t, param(c.in[input], channel)) : num(t, 0);
}

// round_half_even(v) + zp, saturated to `out`'s range and converted to it; v and zp are floats of
// one type. max/min turn NaN into the low end, as the reference kernel does.
Expr saturate(const Expr& v, const Expr& zp, DataType out) {
  const DataType t = v->dtype;
  const ops::quant::IntRange r = ops::quant::int_range(out);
  Expr q = round_half_even(v) + zp;
  return te::cast(out,
                  loopir::min(loopir::max(q, num(t, static_cast<double>(r.lo))), num(t, static_cast<double>(r.hi))));
}

// The axis a per-axis scale runs along, -1 when it is one value.
int64_t channel_axis(const te::Tensor& scale, int64_t axis, size_t rank) {
  if (per_tensor(scale->shape)) return -1;
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// (A - a_zp)·(B - b_zp) in int32, shaped like numpy.matmul: batch dims broadcast, a 1-D operand
// is a vector whose axis is dropped. A zero point is one value, one per row of A, or one per
// column of B.
te::Tensor integer_product(BuildContext& c, size_t a_in, size_t a_zp, size_t b_in, size_t b_zp,
                           const std::string& name) {
  const DataType acc = DataType::kInt32;
  const te::Tensor &a = c.input(a_in), &b = c.input(b_in);
  // Two matrices: the VNNI form (packed weights, dot steps; exact on every target, scheduled onto
  // the dot instruction where the target has it, schedule::int8_vnni_schedule). Except int8 × int8
  // without zero points: the product an accelerator's GEMM core takes as it is (what
  // quantize_for_accelerator makes; builders do not know the target), kept in the plain form below.
  const bool accelerator_gemm =
      a->dtype == DataType::kInt8 && b->dtype == DataType::kInt8 && !c.has(a_zp) && !c.has(b_zp);
  te::Int8ProductOperands vnni{a, b, nullptr, nullptr};
  if (c.has(a_zp)) vnni.a_zero = [&c, a_zp](const Expr& row) { return zero_point(c, a_zp, row, DataType::kInt32); };
  if (c.has(b_zp)) vnni.b_zero = [&c, b_zp](const Expr& column) { return zero_point(c, b_zp, column, DataType::kInt32); };
  if (!accelerator_gemm && te::why_not_int8_dot_product(vnni).empty()) return te::int8_dot_product(vnni, name);
  const size_t ra = a->shape.size(), rb = b->shape.size(), R = c.shape().size();
  IterVar r = te::reduce_axis(a->shape[ra - 1], "k");
  return te::compute(name, c.shape(), [&](const std::vector<Expr>& idx) {
    const size_t batch = R - (ra > 1 ? 1 : 0) - (rb > 1 ? 1 : 0);
    std::vector<Expr> ia, ib;
    Expr row = make_int(0), column = make_int(0);
    if (ra > 1) {
      for (size_t d = 0; d + 2 < ra; ++d) ia.push_back(a->shape[d] == 1 ? make_int(0) : idx[batch - (ra - 2) + d]);
      row = idx[batch];
      ia.push_back(row);
    }
    ia.push_back(r.var);
    if (rb > 1) {
      for (size_t d = 0; d + 2 < rb; ++d) ib.push_back(b->shape[d] == 1 ? make_int(0) : idx[batch - (rb - 2) + d]);
      column = idx[R - 1];
      ib.push_back(r.var);
      ib.push_back(column);
    } else {
      ib.push_back(r.var);
    }
    // An absent zero point subtracts nothing, so the product keeps the form of an int8 GEMM
    // intrinsic (tensorize matches it: an accelerator's core, schedule::default_accel_schedule).
    Expr av = convert(acc, te::at(a, ia)), bv = convert(acc, te::at(b, ib));
    if (c.has(a_zp)) av = av - zero_point(c, a_zp, row, acc);
    if (c.has(b_zp)) bv = bv - zero_point(c, b_zp, column, acc);
    return te::sum(av * bv, {r});
  });
}

// conv(x - x_zp, w - w_zp) in int32 over NCHW (2-D), padding with x_zp: the centered input is one
// stage, zero outside the image.
te::Tensor integer_conv(BuildContext& c, size_t x_in, size_t x_zp, size_t w_in, size_t w_zp, const std::string& name) {
  const DataType acc = DataType::kInt32;
  const auto& a = c.attrs<ops::ConvAttrs>();
  const te::Tensor &x = c.input(x_in), &w = c.input(w_in);
  if (x->shape.size() != 4) c.unsupported(std::to_string(x->shape.size() - 2) + "-D convolution (2-D only)");
  const ops::nn::WindowGeometry geo = ops::nn::resolve_window(
      c.node.op->name.c_str(), {x->shape[2], x->shape[3]}, {w->shape[2], w->shape[3]},
      {.auto_pad = a.auto_pad, .strides = a.strides, .dilations = a.dilations, .pads = a.pads, .ceil_mode = false});
  if (a.group == 1) {  // the VNNI form (as integer_product)
    te::Int8ConvOperands vnni{.x = x, .w = w, .x_zero = nullptr, .w_zero = nullptr};
    if (c.has(x_zp)) vnni.x_zero = [&c, x_zp] { return zero_point(c, x_zp, make_int(0), DataType::kInt32); };
    if (c.has(w_zp))
      vnni.w_zero = [&c, w_zp](const Expr& channel) { return zero_point(c, w_zp, channel, DataType::kInt32); };
    for (size_t d = 0; d < 2; ++d) {
      vnni.stride[d] = geo.stride[d];
      vnni.dilation[d] = geo.dilation[d];
      vnni.pad_begin[d] = geo.pad_begin[d];
    }
    vnni.out_h = c.shape()[2];
    vnni.out_w = c.shape()[3];
    if (te::why_not_int8_dot_conv(vnni).empty()) return te::int8_dot_conv(vnni, name);
  }
  Shape padded_shape = x->shape;
  for (size_t d = 0; d < 2; ++d) padded_shape[2 + d] += geo.pad_begin[d] + geo.pad_end[d];
  te::Tensor centered = te::compute(c.stage("centered"), padded_shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src = i;
    Expr inside;
    for (size_t d = 0; d < 2; ++d) {
      if (geo.pad_begin[d] == 0 && geo.pad_end[d] == 0) continue;
      Expr v = i[2 + d] - geo.pad_begin[d];
      src[2 + d] = v;
      Expr ok = loopir::logical_and(loopir::ge(v, make_int(0)), loopir::lt(v, make_int(x->shape[2 + d])));
      inside = inside ? loopir::logical_and(inside, ok) : ok;
    }
    Expr value = convert(acc, te::at(x, src)) - zero_point(c, x_zp, make_int(0), acc);
    return inside ? te::if_then_else(inside, value, num(acc, 0)) : value;
  });
  const int64_t group = a.group, cin_per_group = w->shape[1], cout_per_group = w->shape[0] / group;
  IterVar rc = te::reduce_axis(cin_per_group, "rc"), ry = te::reduce_axis(w->shape[2], "ry"),
          rx = te::reduce_axis(w->shape[3], "rx");
  return te::compute(name, c.shape(), [&](const std::vector<Expr>& i) {
    Expr channel = group == 1 ? Expr(rc.var) : (i[1] / cout_per_group) * cin_per_group + Expr(rc.var);
    Expr y = i[2] * geo.stride[0] + Expr(ry.var) * geo.dilation[0];
    Expr xx = i[3] * geo.stride[1] + Expr(rx.var) * geo.dilation[1];
    Expr wv = convert(acc, te::at(w, {i[1], rc.var, ry.var, rx.var})) - zero_point(c, w_zp, i[1], acc);
    return te::sum(te::at(centered, {i[0], channel, y, xx}) * wv, {rc, ry, rx});
  });
}

Expr f64(const Expr& e) { return convert(DataType::kFloat64, e); }

}  // namespace

Stages quantize_linear(BuildContext& c) {
  const auto& a = c.attrs<ops::QuantizeLinearAttrs>();
  const te::Tensor &x = c.input(0), &scale = c.input(1);
  const DataType t =
      x->dtype == DataType::kFloat64 || x->dtype == DataType::kInt32 ? DataType::kFloat64 : DataType::kFloat32;
  const int64_t axis = channel_axis(scale, a.axis, x->shape.size());
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr channel = axis < 0 ? make_int(0) : i[axis];
    return saturate(convert(t, te::at(x, i)) / convert(t, param(scale, channel)), zero_point(c, 2, channel, t),
                    c.dtype());
  })};
}

Stages dequantize_linear(BuildContext& c) {
  const auto& a = c.attrs<ops::DequantizeLinearAttrs>();
  const te::Tensor &x = c.input(0), &scale = c.input(1);
  const DataType t = c.dtype() == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
  const DataType diff = x->dtype == DataType::kInt32 ? DataType::kInt64 : DataType::kInt32;
  const int64_t axis = channel_axis(scale, a.axis, x->shape.size());
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr channel = axis < 0 ? make_int(0) : i[axis];
    Expr d = convert(diff, te::at(x, i)) - zero_point(c, 2, channel, diff);
    return convert(c.dtype(), convert(t, d) * convert(t, param(scale, channel)));
  })};
}

Stages dynamic_quantize_linear(BuildContext& c) {
  const DataType t = DataType::kFloat32;
  const te::Tensor& x = c.input(0);
  if (x->dtype != t) c.unsupported(std::string(dtype_name(x->dtype)) + " input");
  std::vector<int64_t> axes;
  for (size_t d = 0; d < x->shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  auto id = [](const Expr& v) { return v; };
  te::Tensor lo = reduction(c, x, axes, false, "min", id, c.stage("min"), {});
  te::Tensor hi = reduction(c, x, axes, false, "max", id, c.stage("max"), {});
  // The range always holds 0; an empty one gives scale 1/255.
  auto low = [&] { return loopir::min(te::at(lo, {}), num(t, 0)); };
  auto high = [&] { return loopir::max(te::at(hi, {}), num(t, 0)); };
  te::Tensor scale = te::compute(c.stage("scale"), {}, [&](const std::vector<Expr>&) {
    return te::if_then_else(loopir::eq(high(), low()), num(t, 1), high() - low()) / num(t, 255);
  });
  te::Tensor zp = te::compute(c.stage("zero_point"), {}, [&](const std::vector<Expr>&) {
    Expr v = loopir::min(loopir::max(num(t, 0) - low() / te::at(scale, {}), num(t, 0)), num(t, 255));
    return te::cast(DataType::kUInt8, round_half_even(v));
  });
  te::Tensor y = te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    return saturate(te::at(x, i) / te::at(scale, {}), convert(t, te::at(zp, {})), DataType::kUInt8);
  });
  return {y, scale, zp};
}

Stages matmul_integer(BuildContext& c) { return {integer_product(c, 0, 2, 1, 3, c.stage())}; }

Stages qlinear_matmul(BuildContext& c) {
  te::Tensor acc = integer_product(c, 0, 2, 3, 5, c.stage("acc"));
  const size_t ra = c.input(0)->shape.size(), rb = c.input(3)->shape.size(), R = c.shape().size();
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr row = ra > 1 ? i[R - 1 - (rb > 1 ? 1 : 0)] : make_int(0);
    Expr column = rb > 1 ? i[R - 1] : make_int(0);
    Expr multiplier = f64(param(c.input(1), row)) * f64(param(c.input(4), column)) / f64(param(c.input(6), row));
    return saturate(f64(te::at(acc, i)) * multiplier, f64(param(c.input(7), row)), c.dtype());
  })};
}

Stages conv_integer(BuildContext& c) { return {integer_conv(c, 0, 2, 1, 3, c.stage())}; }

Stages qlinear_conv(BuildContext& c) {
  te::Tensor acc = integer_conv(c, 0, 2, 3, 5, c.stage("acc"));
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr sum = te::at(acc, i);
    if (c.has(8)) sum = sum + te::at(c.in[8], {i[1]});
    Expr multiplier = f64(param(c.input(1), i[1])) * f64(param(c.input(4), i[1])) / f64(param(c.input(6), i[1]));
    return saturate(f64(sum) * multiplier, f64(param(c.input(7), i[1])), c.dtype());
  })};
}

}  // namespace tessel::ops::te_builder
