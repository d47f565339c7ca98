#include "core/graph/ops/te/te_from_graph.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

#include "core/graph/layout.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/layout_ops.h"
#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/reduce.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops {

// The shared helpers, declared in builder_support.h.
namespace te_builder {

Expr convert(DataType t, const Expr& e) { return e->dtype == t ? e : te::cast(t, e); }
Expr num(DataType t, double v) { return make_const(t, v); }

Expr checked_index(const BuildContext& c, size_t input, const Expr& raw, int64_t extent, int64_t axis) {
  const std::string range =
      "out of range [" + std::to_string(-extent) + ", " + std::to_string(extent) + ") on axis " + std::to_string(axis);
  const std::string node = "node '" + (c.node.name.empty() ? c.stage() : c.node.name) + "' (" + c.node.op->name + ")";
  const ValueId v = input < c.node.inputs.size() ? c.node.inputs[input] : kNoValue;
  const Expr wrapped = te::if_then_else(loopir::lt(raw, make_int(0)), raw + extent, raw);
  if (v != kNoValue && c.g.value(v).value.defined()) {
    for (int64_t i : c.g.value(v).value.to_int64s())
      if (i < -extent || i >= extent)
        throw InvalidNode(node + ": index " + std::to_string(i) + " " + range + " (the indices are a constant)");
    return wrapped;
  }
  if (extent == 0)
    c.unsupported("indices into an empty axis");  // no index is valid, not even the 0 a failed check reads
  return loopir::make_check(
      loopir::logical_and(loopir::ge(wrapped, make_int(0)), loopir::lt(wrapped, make_int(extent))), wrapped, raw,
      node + ": index {} " + range);
}

// Reads t at `idx` (an index of a possibly higher-rank output) with numpy broadcasting.
Expr broadcast_read(const te::Tensor& t, const std::vector<Expr>& idx) {
  size_t r = t->shape.size(), R = idx.size();
  std::vector<Expr> i;
  for (size_t k = 0; k < r; ++k) i.push_back(t->shape[k] == 1 ? make_int(0) : idx[R - r + k]);
  return te::at(t, i);
}

// One compute stage over the output shape whose element is fn(broadcast reads of every input,
// converted to `operand` type).
te::Tensor elementwise(BuildContext& c, DataType operand, const std::function<Expr(const std::vector<Expr>&)>& fn) {
  if (!dtype_is_float(operand) && operand != DataType::kInt64 && operand != DataType::kInt32 &&
      operand != DataType::kUInt64 && operand != DataType::kBool)
    c.unsupported(std::string(dtype_name(operand)) + " arithmetic");
  return te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> v;
    for (size_t i = 0; i < c.in.size(); ++i)
      v.push_back(c.has(i) ? convert(operand, broadcast_read(c.in[i], idx)) : nullptr);
    return convert(c.dtype(), fn(v));
  });
}

DataType float_operand(BuildContext& c) {
  DataType t = c.input(0)->dtype;
  if (t != DataType::kFloat32 && t != DataType::kFloat64) c.unsupported(std::string(dtype_name(t)) + " inputs");
  return t;
}

std::vector<int64_t> normalized_axes(const BuildContext& c, std::vector<int64_t> axes, int64_t rank) {
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  for (auto& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.unsupported("repeated axes");
  return axes;
}

// out[kept...] = reduce(f(x[...])) over `axes` (kept as size-1 dims when keepdims).
te::Tensor reduction(BuildContext&, const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims,
                     const std::string& kind, const std::function<Expr(const Expr&)>& pre, const std::string& name,
                     const Shape& out_shape) {
  int64_t rank = static_cast<int64_t>(x->shape.size());
  std::vector<IterVar> r;
  for (int64_t a : axes) r.push_back(te::reduce_axis(x->shape[a], "r" + std::to_string(a)));
  return te::compute(name, out_shape, [&](const std::vector<Expr>& idx) {
    std::vector<Expr> src;
    size_t o = 0, k = 0;
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (reduced) {
        src.push_back(r[k++].var);
        if (keepdims) ++o;
      } else {
        src.push_back(idx[o++]);
      }
    }
    Expr v = pre(te::at(x, src));
    if (kind == "max") return te::max_reduce(v, r);
    if (kind == "min") return te::min_reduce(v, r);
    return te::sum(v, r);
  });
}

// ------------------------------------------------------------------ reductions and normalization

namespace {

int64_t count_of(const te::Tensor& x, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= x->shape[a];
  return n;
}

Stages reduce_op(BuildContext& c, const std::string& kind) {
  DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  int64_t rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> axes;
  bool keepdims;
  if (c.node.op->name == "ReduceSum") {
    const auto& a = c.attrs<ops::ReduceSumAttrs>();
    keepdims = a.keepdims != 0;
    if (c.node.inputs.size() > 1 && c.node.inputs[1] != kNoValue) axes = c.known(1, "axes").to_int64s();
    if (axes.empty() && a.noop_with_empty_axes) c.unsupported("noop_with_empty_axes");
  } else {
    const auto& a = c.attrs<ops::ReduceAttrs>();
    keepdims = a.keepdims != 0;
    axes = a.axes;
  }
  axes = normalized_axes(c, axes, rank);
  auto identity = [](const Expr& v) { return v; };
  auto square = [](const Expr& v) { return v * v; };
  if (kind == "sum")
    return std::vector<te::Tensor>{reduction(c, x, axes, keepdims, "sum", identity, c.stage(), c.shape())};
  if (kind == "max" || kind == "min")
    return std::vector<te::Tensor>{reduction(c, x, axes, keepdims, kind, identity, c.stage(), c.shape())};
  if (kind == "sumsquare")
    return std::vector<te::Tensor>{reduction(c, x, axes, keepdims, "sum", square, c.stage(), c.shape())};
  if (kind == "l1")
    return std::vector<te::Tensor>{reduction(
        c, x, axes, keepdims, "sum", [](const Expr& v) { return te::intrinsic("abs", {v}); }, c.stage(), c.shape())};
  te::Tensor s =
      reduction(c, x, axes, keepdims, "sum", kind == "l2" ? std::function<Expr(const Expr&)>(square) : identity,
                c.stage("sum"), c.shape());
  double n = static_cast<double>(count_of(x, axes));
  return std::vector<te::Tensor>{te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    Expr v = te::at(s, idx);
    return kind == "l2" ? te::sqrt(v) : v / num(t, n);
  })};
}

// softmax(x)[.., i, ..] = exp(x - max) / sum(exp(x - max)) along one axis (log variant: x - max - log(sum)).
Stages softmax_along_axis(BuildContext& c, bool log) {
  DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = c.attrs<ops::SoftmaxAttrs>().axis;
  if (axis < 0) axis += rank;
  Shape kept = x->shape;
  kept[axis] = 1;
  auto id = [](const Expr& v) { return v; };
  te::Tensor m = reduction(c, x, {axis}, true, "max", id, c.stage("max"), kept);
  te::Tensor e = te::compute(c.stage("exp"), x->shape, [&](const std::vector<Expr>& idx) {
    return te::exp(te::at(x, idx) - broadcast_read(m, idx));
  });
  te::Tensor s = reduction(c, e, {axis}, true, "sum", id, c.stage("sum"), kept);
  return std::vector<te::Tensor>{te::compute(c.stage(), x->shape, [&](const std::vector<Expr>& idx) {
    if (log) return te::at(x, idx) - broadcast_read(m, idx) - te::log(broadcast_read(s, idx));
    // One reciprocal per row, then a multiply per element: a vector division costs about ten
    // times a multiply, and 1/sum does not change along the row, so LLVM hoists it out of the
    // row's loop (it may not turn a division into a multiply itself without fast-math).
    return te::at(e, idx) * (num(t, 1) / broadcast_read(s, idx));
  })};
}

}  // namespace

Stages reduce_sum(BuildContext& c) { return reduce_op(c, "sum"); }
Stages reduce_mean(BuildContext& c) { return reduce_op(c, "mean"); }
Stages reduce_max(BuildContext& c) { return reduce_op(c, "max"); }
Stages reduce_min(BuildContext& c) { return reduce_op(c, "min"); }
Stages reduce_sum_square(BuildContext& c) { return reduce_op(c, "sumsquare"); }
Stages reduce_l1(BuildContext& c) { return reduce_op(c, "l1"); }
Stages reduce_l2(BuildContext& c) { return reduce_op(c, "l2"); }
Stages softmax(BuildContext& c) { return softmax_along_axis(c, false); }
Stages log_softmax(BuildContext& c) { return softmax_along_axis(c, true); }

Stages layer_norm(BuildContext& c) {
  DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  int64_t rank = static_cast<int64_t>(x->shape.size());
  const auto& a = c.attrs<ops::LayerNormalizationAttrs>();
  int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  std::vector<int64_t> axes;
  Shape kept = x->shape;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d), kept[d] = 1;
  double n = static_cast<double>(count_of(x, axes));
  auto id = [](const Expr& v) { return v; };
  te::Tensor s = reduction(c, x, axes, true, "sum", id, c.stage("sum"), kept);
  te::Tensor mean =
      te::compute(c.stage("mean"), kept, [&](const std::vector<Expr>& i) { return te::at(s, i) / num(t, n); });
  te::Tensor centered = te::compute(c.stage("centered"), x->shape,
                                    [&](const std::vector<Expr>& i) { return te::at(x, i) - broadcast_read(mean, i); });
  te::Tensor var = reduction(
      c, centered, axes, true, "sum", [](const Expr& v) { return v * v; }, c.stage("var"), kept);
  std::vector<te::Tensor> outs{te::compute(c.stage(), x->shape, [&](const std::vector<Expr>& i) {
    Expr inv = te::intrinsic("rsqrt", {broadcast_read(var, i) / num(t, n) + num(t, a.epsilon)});
    Expr y = te::at(centered, i) * inv * broadcast_read(c.input(1), i);
    return c.has(2) ? y + broadcast_read(c.in[2], i) : y;
  })};
  // The optional Mean and InvStdDev outputs (training's saved statistics), shaped like `kept`.
  if (c.out.size() > 1)
    outs.push_back(te::compute(c.stage("mean_out"), c.shape(1),
                               [&](const std::vector<Expr>& i) { return convert(c.dtype(1), te::at(mean, i)); }));
  if (c.out.size() > 2)
    outs.push_back(te::compute(c.stage("inv_std_dev"), c.shape(2), [&](const std::vector<Expr>& i) {
      return convert(c.dtype(2), te::intrinsic("rsqrt", {te::at(var, i) / num(t, n) + num(t, a.epsilon)}));
    }));
  return outs;
}

Stages batch_norm(BuildContext& c) {
  if (c.out.size() > 1) c.unsupported("training outputs");
  DataType t = float_operand(c);
  float eps = c.attrs<ops::BatchNormalizationAttrs>().epsilon;
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    std::vector<Expr> ch{i[1]};
    Expr inv = te::intrinsic("rsqrt", {te::at(c.input(4), ch) + num(t, eps)});
    return (te::at(c.input(0), i) - te::at(c.input(3), ch)) * inv * te::at(c.input(1), ch) + te::at(c.input(2), ch);
  })};
}

// ------------------------------------------------------------------ matmul, gemm, conv, pooling

Stages matmul(BuildContext& c) {
  DataType t = float_operand(c);
  const te::Tensor &a = c.input(0), &b = c.input(1);
  size_t ra = a->shape.size(), rb = b->shape.size();
  int64_t k = a->shape[ra - 1];
  IterVar r = te::reduce_axis(k, "k");
  size_t R = c.shape().size();
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    // Output: batch..., [i if ra > 1], [j if rb > 1].
    std::vector<Expr> ia, ib;
    size_t batch = R - (ra > 1 ? 1 : 0) - (rb > 1 ? 1 : 0);
    std::vector<Expr> bidx(idx.begin(), idx.begin() + static_cast<long>(batch));
    if (ra > 1) {
      for (size_t d = 0; d + 2 < ra; ++d) ia.push_back(a->shape[d] == 1 ? make_int(0) : bidx[batch - (ra - 2) + d]);
      ia.push_back(idx[batch]);
    }
    ia.push_back(r.var);
    if (rb > 1) {
      for (size_t d = 0; d + 2 < rb; ++d) ib.push_back(b->shape[d] == 1 ? make_int(0) : bidx[batch - (rb - 2) + d]);
      ib.push_back(r.var);
      ib.push_back(idx[R - 1]);
    } else {
      ib.push_back(r.var);
    }
    return te::sum(convert(t, te::at(a, ia)) * convert(t, te::at(b, ib)), {r});
  })};
}

// matmul_packed: A[..., M, K] * B[N/b, K, b] -> Y[..., M, N], B's element (k, j) at [j / b, k, j % b].
// A register tile b columns wide splits j at multiples of b, so the indices simplify to
// [tile, k, lane] and each k of the micro-kernel reads b contiguous floats of B.
Stages matmul_packed(BuildContext& c) {
  float_operand(c);
  const te::Tensor &a = c.input(0), &b = c.input(1);
  const int64_t block = b->shape[2];
  IterVar r = te::reduce_axis(a->shape.back(), "k");
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    std::vector<Expr> ia(i.begin(), i.end() - 1);
    ia.push_back(r.var);
    const Expr& j = i.back();
    return te::sum(te::at(a, ia) * te::at(b, {j / block, r.var, j % block}), {r});
  })};
}

Stages gemm(BuildContext& c) {
  DataType t = float_operand(c);
  const auto& g = c.attrs<ops::GemmAttrs>();
  const te::Tensor &a = c.input(0), &b = c.input(1);
  int64_t k = g.transA ? a->shape[0] : a->shape[1];
  IterVar r = te::reduce_axis(k, "k");
  te::Tensor prod = te::compute(c.stage("matmul"), c.shape(), [&](const std::vector<Expr>& i) {
    Expr av = g.transA ? te::at(a, {r.var, i[0]}) : te::at(a, {i[0], r.var});
    Expr bv = g.transB ? te::at(b, {i[1], r.var}) : te::at(b, {r.var, i[1]});
    return te::sum(av * bv, {r});
  });
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr v = te::at(prod, i);
    if (g.alpha != 1.0f) v = v * num(t, g.alpha);
    if (c.has(2)) {
      Expr cv = broadcast_read(c.in[2], i);
      v = v + (g.beta != 1.0f ? cv * num(t, g.beta) : cv);
    }
    return v;
  })};
}

// The `fill`-padded view of an N-C-spatial... input (spatial axes from 2 on).
namespace {

te::Tensor pad_spatial(BuildContext&, const te::Tensor& x, const ops::nn::WindowGeometry& w, double fill,
                       const std::string& name) {
  size_t rank = w.rank();
  bool any = false;
  for (size_t d = 0; d < rank; ++d) any = any || w.pad_begin[d] != 0 || w.pad_end[d] != 0;
  if (!any) return x;
  Shape s = x->shape;
  for (size_t d = 0; d < rank; ++d) s[2 + d] += w.pad_begin[d] + w.pad_end[d];
  return te::compute(name, s, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src = i;
    Expr inside;
    for (size_t d = 0; d < rank; ++d) {
      if (w.pad_begin[d] == 0 && w.pad_end[d] == 0) continue;
      Expr v = i[2 + d] - w.pad_begin[d];
      src[2 + d] = v;
      Expr ok = loopir::logical_and(loopir::ge(v, make_int(0)), loopir::lt(v, make_int(x->shape[2 + d])));
      inside = inside ? loopir::logical_and(inside, ok) : ok;
    }
    return te::if_then_else(inside, te::at(x, src), num(x->dtype, fill));
  });
}

ops::nn::WindowGeometry window(BuildContext& c, const Shape& in_spatial, const Shape& kernel,
                               const std::string& auto_pad, const std::vector<int64_t>& strides,
                               const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
                               bool ceil_mode) {
  return ops::nn::resolve_window(c.node.op->name.c_str(), in_spatial, kernel,
                                 {auto_pad, strides, dilations, pads, ceil_mode});
}

}  // namespace

Stages conv2d(BuildContext& c) {
  DataType t = float_operand(c);
  const auto& a = c.attrs<ops::ConvAttrs>();
  const te::Tensor &x = c.input(0), &w = c.input(1);
  if (x->shape.size() != 4) c.unsupported(std::to_string(x->shape.size() - 2) + "-D convolution (2-D only)");
  if (!a.dilations.empty() && a.dilations.size() != 2) c.unsupported("dilations");
  auto geo = window(c, {x->shape[2], x->shape[3]}, {w->shape[2], w->shape[3]}, a.auto_pad, a.strides, a.dilations,
                    a.pads, false);
  te::Tensor padded = pad_spatial(c, x, geo, 0.0, c.stage("pad"));
  int64_t group = a.group, cin_per_group = w->shape[1], cout_per_group = w->shape[0] / group;
  IterVar rc = te::reduce_axis(cin_per_group, "rc"), ry = te::reduce_axis(w->shape[2], "ry"),
          rx = te::reduce_axis(w->shape[3], "rx");
  te::Tensor conv = te::compute(c.has(2) ? c.stage("conv") : c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr channel = group == 1 ? Expr(rc.var) : (i[1] / cout_per_group) * cin_per_group + Expr(rc.var);
    Expr y = i[2] * geo.stride[0] + Expr(ry.var) * geo.dilation[0];
    Expr xx = i[3] * geo.stride[1] + Expr(rx.var) * geo.dilation[1];
    return te::sum(te::at(padded, {i[0], channel, y, xx}) * te::at(w, {i[1], rc.var, ry.var, rx.var}), {rc, ry, rx});
  });
  if (!c.has(2)) return {conv};
  return {te::compute(c.stage(), c.shape(),
                      [&](const std::vector<Expr>& i) { return te::at(conv, i) + te::at(c.in[2], {i[1]}); })};
  (void)t;
}

// conv2d_nchwc: X[N, C/b, H, W, b] * W[O/b, C/b, R, S, b(i), b(o)] -> Y[N, O/b, H', W', b].
// Depthwise: X[N, C/b, H, W, b] * W[C/b, 1, R, S, b] -> Y[N, C/b, H', W', b], channel by channel.
Stages conv2d_nchwc(BuildContext& c) {
  float_operand(c);
  const auto& a = c.attrs<ops::Conv2dNchwcAttrs>();
  const te::Tensor &x = c.input(0), &w = c.input(1);
  Layout dl(a.data_layout), kl(a.kernel_layout), ol(a.out_layout);
  const bool depthwise = a.conv.group != 1;
  const std::string kernel = depthwise
                                 ? "OIHW" + std::to_string(kl.factor('O')) + "o"
                                 : "OIHW" + std::to_string(kl.factor('I')) + "i" + std::to_string(kl.factor('O')) + "o";
  if (dl.str() != "NCHW" + std::to_string(dl.factor('C')) + "c" ||
      ol.str() != "NCHW" + std::to_string(ol.factor('C')) + "c" || kl.str() != kernel ||
      (!depthwise && kl.factor('I') != dl.factor('C')) || kl.factor('O') != ol.factor('C') ||
      (depthwise && dl.factor('C') != ol.factor('C')))
    c.unsupported("layouts " + a.data_layout + " / " + a.kernel_layout + " / " + a.out_layout);
  auto geo = window(c, {x->shape[2], x->shape[3]}, {w->shape[2], w->shape[3]}, a.conv.auto_pad, a.conv.strides,
                    a.conv.dilations, a.conv.pads, false);
  te::Tensor padded = pad_spatial(c, x, geo, 0.0, c.stage("pad"));
  IterVar ry = te::reduce_axis(w->shape[2], "ry"), rx = te::reduce_axis(w->shape[3], "rx");
  te::Tensor conv;
  if (depthwise) {
    conv = te::compute(c.has(2) ? c.stage("conv") : c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
      Expr y = i[2] * geo.stride[0] + Expr(ry.var) * geo.dilation[0];
      Expr xx = i[3] * geo.stride[1] + Expr(rx.var) * geo.dilation[1];
      return te::sum(te::at(padded, {i[0], i[1], y, xx, i[4]}) * te::at(w, {i[1], make_int(0), ry.var, rx.var, i[4]}),
                     {ry, rx});
    });
  } else {
    IterVar rcb = te::reduce_axis(x->shape[1], "rcb"), rci = te::reduce_axis(x->shape[4], "rci");
    conv = te::compute(c.has(2) ? c.stage("conv") : c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
      Expr y = i[2] * geo.stride[0] + Expr(ry.var) * geo.dilation[0];
      Expr xx = i[3] * geo.stride[1] + Expr(rx.var) * geo.dilation[1];
      return te::sum(
          te::at(padded, {i[0], rcb.var, y, xx, rci.var}) * te::at(w, {i[1], rcb.var, ry.var, rx.var, rci.var, i[4]}),
          {rcb, ry, rx, rci});
    });
  }
  if (!c.has(2)) return {conv};
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    const te::Tensor& b = c.in[2];
    Expr bias = b->shape.size() == 2 ? te::at(b, {i[1], i[4]}) : te::at(b, {i[1] * b->shape.back() + i[4]});
    return te::at(conv, i) + bias;
  })};
}

// Max or average pooling over every spatial axis (2-D in NCHW, or 3-D with a unit window on the
// channel block of NCHW16c after layout transformation).
namespace {

Stages pool(BuildContext& c, bool is_max) {
  DataType t = float_operand(c);
  const te::Tensor& x = c.input(0);
  if (x->shape.size() < 3) c.unsupported("pooling needs a spatial axis");
  if (c.out.size() > 1) c.unsupported("the Indices output");
  Shape spatial(x->shape.begin() + 2, x->shape.end());
  size_t rank = spatial.size();
  ops::nn::WindowGeometry geo;
  bool include_pad = false;
  if (is_max) {
    const auto& a = c.attrs<ops::MaxPoolAttrs>();
    if (a.storage_order) c.unsupported("storage_order");
    geo = window(c, spatial, a.kernel_shape, a.auto_pad, a.strides, a.dilations, a.pads, a.ceil_mode != 0);
  } else {
    const auto& a = c.attrs<ops::AveragePoolAttrs>();
    geo = window(c, spatial, a.kernel_shape, a.auto_pad, a.strides, {}, a.pads, a.ceil_mode != 0);
    include_pad = a.count_include_pad != 0;
  }
  // Windows may run past the padded input in ceil mode: pad enough for every window.
  ops::nn::WindowGeometry padded_geo = geo;
  for (size_t d = 0; d < rank; ++d) {
    int64_t needed = (geo.output[d] - 1) * geo.stride[d] + geo.effective_kernel(d) - geo.input[d] - geo.pad_begin[d];
    padded_geo.pad_end[d] = std::max(needed, geo.pad_end[d]);
  }
  double lowest = -std::numeric_limits<double>::infinity();
  te::Tensor padded = pad_spatial(c, x, padded_geo, is_max ? lowest : 0.0, c.stage("pad"));
  std::vector<IterVar> r;
  for (size_t d = 0; d < rank; ++d) r.push_back(te::reduce_axis(geo.kernel[d], "r" + std::to_string(d)));
  te::Tensor acc = te::compute(is_max ? c.stage() : c.stage("sum"), c.shape(), [&](const std::vector<Expr>& i) {
    std::vector<Expr> src{i[0], i[1]};
    for (size_t d = 0; d < rank; ++d) src.push_back(i[2 + d] * geo.stride[d] + Expr(r[d].var) * geo.dilation[d]);
    Expr v = te::at(padded, src);
    return is_max ? te::max_reduce(v, r) : te::sum(v, r);
  });
  if (is_max) return {acc};
  // Divisor: the window's taps inside the input (or inside input + explicit padding).
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr count = num(DataType::kInt64, 1);
    for (size_t d = 0; d < rank; ++d) {
      Expr start = i[2 + d] * geo.stride[d] - geo.pad_begin[d];
      Expr end = start + geo.effective_kernel(d);
      int64_t lo = include_pad ? -geo.pad_begin[d] : 0, hi = geo.input[d] + (include_pad ? geo.pad_end[d] : 0);
      count = count * (loopir::min(end, make_int(hi)) - loopir::max(start, make_int(lo)));
    }
    return te::at(acc, i) / te::cast(t, count);
  })};
}

Stages global_pool(BuildContext& c, bool is_max) {
  float_operand(c);
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> axes;
  for (size_t d = 2; d < x->shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  auto id = [](const Expr& v) { return v; };
  if (is_max) return {reduction(c, x, axes, true, "max", id, c.stage(), c.shape())};
  te::Tensor s = reduction(c, x, axes, true, "sum", id, c.stage("sum"), c.shape());
  double n = static_cast<double>(count_of(x, axes));
  return {
      te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) { return te::at(s, i) / num(c.dtype(), n); })};
}

}  // namespace

Stages max_pool(BuildContext& c) { return pool(c, true); }
Stages average_pool(BuildContext& c) { return pool(c, false); }
Stages global_max_pool(BuildContext& c) { return global_pool(c, true); }
Stages global_average_pool(BuildContext& c) { return global_pool(c, false); }

}  // namespace te_builder

bool has_te_builder(const std::string& op) {
  const OpDef* def = find_op(op);
  return def && def->compilation.builder;
}

std::optional<te::ComputeDag> build_group_dag(const Graph& g, const FusionGroup& group, std::string* why) {
  using te_builder::BuildContext;
  using te_builder::Unsupported;
  std::unordered_map<ValueId, te::Tensor> tensors;
  for (size_t k = 0; k < group.inputs.size(); ++k) {
    const Value& v = g.value(group.inputs[k]);
    tensors[group.inputs[k]] = te::placeholder("p" + std::to_string(k), v.type.shape, v.type.dtype);
  }
  try {
    for (NodeId id : group.nodes) {
      const Node& n = g.nodes[id];
      const OpCompilation& compilation = n.op->compilation;
      if (!compilation.builder)
        throw Unsupported{n.op->name + " has no tensor-expression builder (" + compilation.why + ")"};
      for (const std::vector<ValueId>* values : {&n.inputs, &n.outputs})
        for (ValueId v : *values)
          if (v != kNoValue && g.value(v).type.dtype == DataType::kString)
            throw Unsupported{n.op->name + ": string values run on the reference kernels"};
      BuildContext c{g, n, id, {}, {}};
      for (ValueId v : n.inputs) c.in.push_back(v == kNoValue ? nullptr : tensors.at(v));
      for (ValueId v : n.outputs) c.out.push_back(g.value(v).type);
      std::vector<te::Tensor> outs = compilation.builder(c);
      for (size_t k = 0; k < outs.size(); ++k) {
        if (outs[k]->dtype != c.out[k].dtype || outs[k]->shape != c.out[k].shape)
          throw Unsupported{n.op->name + ": builder produced " + std::string(dtype_name(outs[k]->dtype)) +
                            shape_str(outs[k]->shape) + " for " + type_str(c.out[k])};
        tensors[n.outputs[k]] = outs[k];
      }
    }
  } catch (const Unsupported& u) {
    if (why) *why = u.why;
    return std::nullopt;
  } catch (const te_builder::InvalidNode&) {
    throw;  // the model is wrong, not the builder: no backend can run it
  } catch (const Error& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
  std::vector<te::Tensor> outputs;
  for (ValueId v : group.outputs) outputs.push_back(tensors.at(v));
  return te::make_dag(group.kernel_name, outputs);
}

std::vector<ValueId> bind_kernel_params(const loopir::Func& f, const FusionGroup& group, const te::ComputeDag& dag) {
  std::vector<ValueId> params;
  for (const auto& b : f.params) {
    bool found = false;
    if (b->name.size() > 1 && b->name[0] == 'p' && std::all_of(b->name.begin() + 1, b->name.end(), ::isdigit)) {
      size_t k = std::stoul(b->name.substr(1));
      if (k < group.inputs.size()) params.push_back(group.inputs[k]), found = true;
    }
    for (size_t k = 0; !found && k < dag.outputs.size(); ++k)
      if (dag.outputs[k]->buffer->name == b->name) params.push_back(group.outputs[k]), found = true;
    if (!found) throw Error("kernel '" + f.name + "': parameter '" + b->name + "' matches no tensor of its group");
  }
  return params;
}

}  // namespace tessel::ops
