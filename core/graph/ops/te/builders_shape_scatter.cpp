// Tensor-expression builders for the shape-valued ops (Shape, Size, ConstantOfShape, Range),
// ScatterElements and ConvTranspose, matching the reference kernels of core/graph/ops/
// (shape_values.cpp, shape_gather.cpp, nn_conv.cpp).
#include <algorithm>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/shape_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

namespace {

// A compute over a 1-D output whose element k is values[k]: nested selects on the index, the last
// value innermost (the shapes these ops report have a handful of entries).
te::Tensor constant_vector(BuildContext& c, const std::vector<int64_t>& values) {
  return te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr v = make_int(values.empty() ? 0 : values.back());
    for (size_t k = values.size() > 0 ? values.size() - 1 : 0; k-- > 0;)
      v = te::if_then_else(loopir::eq(i[0], make_int(static_cast<int64_t>(k))), make_int(values[k]), v);
    return convert(c.dtype(), v);
  });
}

// Shape: the input's dims from `start` to `end` (each counted from the end when negative, then
// clamped into [0, rank]); known from the input's static shape.
}  // namespace

std::vector<te::Tensor> shape_op(BuildContext& c) {
  const auto& a = c.attrs<ops::ShapeAttrs>();
  const Shape& in = c.input(0)->shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  auto clamp_axis = [rank](int64_t axis) { return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank); };
  const int64_t start = clamp_axis(a.start), end = clamp_axis(a.end);
  std::vector<int64_t> dims;
  for (int64_t k = start; k < end; ++k) dims.push_back(in[k]);
  if (c.shape() != Shape{static_cast<int64_t>(dims.size())}) c.unsupported("output shape differs from the dims sliced");
  return {constant_vector(c, dims)};
}

// Size: the input's element count, a scalar constant.
std::vector<te::Tensor> size_op(BuildContext& c) {
  const int64_t n = shape_numel(c.input(0)->shape);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>&) { return convert(c.dtype(), make_int(n)); })};
}

// ConstantOfShape: the `value` attribute everywhere; the shape came from shape inference (the
// shape input is a compile-time constant there).
std::vector<te::Tensor> constant_of_shape(BuildContext& c) {
  const Tensor& value = c.attrs<ops::ConstantOfShapeAttrs>().value;
  if (!value.defined() || value.numel() != 1) c.unsupported("value is not a one-element tensor");
  const DataType t = c.dtype();
  Expr v;
  if (dtype_is_float(t))
    v = num(t, value.get_double(0));
  else if (dtype_is_integer(t) || t == DataType::kBool)
    v = convert(t, make_int(value.to_int64s()[0]));  // exact for every int64
  else
    c.unsupported(std::string(dtype_name(t)) + " value");
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>&) { return v; })};
}

// Range: out[i] = start + i * delta, in int64 for integer types and in float64 for floats (then
// rounded to the output type), as the reference computes; the length came from shape inference.
std::vector<te::Tensor> range(BuildContext& c) {
  const DataType t = c.dtype();
  auto scalar = [&](size_t k) {
    const te::Tensor& s = c.input(k);
    return te::at(s, std::vector<Expr>(s->shape.size(), make_int(0)));
  };
  const DataType wide = dtype_is_float(t) ? DataType::kFloat64 : DataType::kInt64;
  if (!dtype_is_float(t) && !dtype_is_integer(t)) c.unsupported(std::string(dtype_name(t)) + " range");
  // The reads happen inside the compute, which records them as the stage's inputs.
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    return convert(t, convert(wide, scalar(0)) + convert(wide, i[0]) * convert(wide, scalar(2)));
  })};
}

// ScatterElements as a reduction over the positions of the indices tensor along the axis:
//
//   data [4], axis 0, indices [1, -1, 1], updates [a, b, c]      (normalised: 1, 3, 1)
//
//   p = 1:  q = 0 and q = 2 address it   none → last = 2 → c;  add → d1 + (a + c);  mul → d1 * (a * c)
//   p = 3:  q = 1                        none → b;             add → d3 + b
//   p = 0:  nothing addresses it         data[0]
//
// Off the axis an update addresses the position it sits at, so out[p] only looks at the indices
// sharing p's other coordinates (none when p lies beyond the indices' extent there). "none" keeps
// the last matching update, as the reference's in-order writes do: one stage finds its position
// (a max over q of q where it matches, -1 where nothing does), the next reads it. Every index read
// is checked (checked_index): one out of range fails the kernel, naming it, as the reference does.
std::vector<te::Tensor> scatter_elements(BuildContext& c) {
  const auto& a = c.attrs<ops::ScatterElementsAttrs>();
  const te::Tensor &data = c.input(0), &indices = c.input(1), &updates = c.input(2);
  const Shape& D = data->shape;
  const Shape& I = indices->shape;
  const size_t rank = D.size();
  if (rank == 0 || I.size() != rank) c.unsupported("indices must have the data's rank >= 1");
  int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(rank) : a.axis;
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) c.unsupported("axis out of range");
  for (int64_t e : I)
    if (e == 0) c.unsupported("empty indices");
  const DataType t = c.dtype();
  const bool is_bool = t == DataType::kBool;
  if (a.reduction != "none" && !is_bool && !dtype_is_float(t) && t != DataType::kInt32 && t != DataType::kInt64)
    c.unsupported(std::string(dtype_name(t)) + " with reduction " + a.reduction);
  const int64_t dim = D[axis];

  // The indices/updates position for output p and axis position q (other coordinates clamped into
  // the indices' extent; `inside` says whether they were already in it).
  auto source = [&](const std::vector<Expr>& p, const Expr& q, Expr* inside) {
    std::vector<Expr> s = p;
    for (size_t k = 0; k < rank; ++k) {
      if (static_cast<int64_t>(k) == axis) {
        s[k] = q;
      } else if (I[k] < D[k]) {
        Expr ok = loopir::lt(p[k], make_int(I[k]));
        *inside = *inside ? loopir::logical_and(*inside, ok) : ok;
        s[k] = loopir::min(p[k], make_int(I[k] - 1));
      }
    }
    return s;
  };
  // Whether indices[s] addresses position p[axis] (after counting negatives from the end).
  auto matches = [&](const std::vector<Expr>& p, const std::vector<Expr>& s, const Expr& inside) {
    Expr v = checked_index(c, 1, convert(DataType::kInt64, te::at(indices, s)), dim, axis);
    Expr m = loopir::eq(v, convert(DataType::kInt64, p[axis]));
    return inside ? loopir::logical_and(inside, m) : m;
  };

  if (a.reduction == "none") {
    IterVar r = te::reduce_axis(I[axis], "q");
    te::Tensor last = te::compute(c.stage("last"), D, [&](const std::vector<Expr>& p) {
      Expr inside;
      Expr q = convert(DataType::kInt64, Expr(r.var));
      std::vector<Expr> s = source(p, r.var, &inside);
      return te::max_reduce(te::if_then_else(matches(p, s, inside), q, make_int(-1)), {r});
    });
    return {te::compute(c.stage(), D, [&](const std::vector<Expr>& p) {
      Expr inside;
      Expr q = te::at(last, p);
      std::vector<Expr> s = source(p, loopir::max(q, make_int(0)), &inside);
      return te::if_then_else(loopir::ge(q, make_int(0)), te::at(updates, s), te::at(data, p));
    })};
  }

  const bool add = a.reduction == "add";
  if (a.reduction != "mul" && !add) c.unsupported("reduction " + a.reduction);
  IterVar r = te::reduce_axis(I[axis], "q");
  // bool: add is "or" (any matching true update), mul is "and" (no matching false one), counted in int32.
  const DataType acc = is_bool ? DataType::kInt32 : t;
  te::Reducer product = te::make_reducer(
      "prod", acc, [](Expr x, Expr y) { return x * y; }, num(acc, 1));
  te::Tensor combined = te::compute(c.stage("updates"), D, [&](const std::vector<Expr>& p) {
    Expr inside;
    std::vector<Expr> s = source(p, r.var, &inside);
    Expr m = matches(p, s, inside);
    Expr u = te::at(updates, s);
    if (is_bool) {
      Expr counted = add ? u : loopir::make_not(u);
      return te::sum(te::if_then_else(loopir::logical_and(m, counted), make_int(1, acc), make_int(0, acc)), {r});
    }
    return add ? te::sum(te::if_then_else(m, u, num(t, 0)), {r})
               : te::reduce(product, te::if_then_else(m, u, num(t, 1)), {r});
  });
  return {te::compute(c.stage(), D, [&](const std::vector<Expr>& p) {
    Expr d = te::at(data, p), u = te::at(combined, p);
    if (!is_bool) return add ? d + u : d * u;
    Expr none = loopir::eq(u, make_int(0, acc));
    return add ? loopir::logical_or(d, loopir::make_not(none)) : loopir::logical_and(d, none);
  })};
}

namespace {

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// ConvTranspose's padding at the start of each spatial axis, as the reference's transposed_window
// derives it: from `pads` unless output_shape or SAME_* fixed the output size, in which case the
// total padding (the full transposed extent minus the output size) is split with SAME_UPPER's odd
// element at the end and every other mode's at the start.
Shape transposed_pad_begin(BuildContext& c, const ops::ConvTransposeAttrs& a, const ops::nn::WindowGeometry& g,
                           const Shape& out) {
  const size_t rank = g.input.size();
  const auto mode = ops::nn::parse_auto_pad(a.auto_pad);
  const bool sized =
      !a.output_shape.empty() || mode == ops::nn::AutoPad::kSameUpper || mode == ops::nn::AutoPad::kSameLower;
  Shape begin, end;
  ops::nn::split_pads("ConvTranspose", sized ? std::vector<int64_t>{} : a.pads, rank, begin, end);
  const Shape extra = ops::nn::per_axis("ConvTranspose", "output_padding", a.output_padding, rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t full = g.stride[i] * (g.input[i] - 1) + extra[i] + g.effective_kernel(i);
    if (sized) {
      const int64_t total = full - out[i];
      begin[i] = mode == ops::nn::AutoPad::kSameUpper ? floor_half(total) : total - floor_half(total);
    } else if (full - begin[i] - end[i] != out[i]) {
      c.unsupported("output size disagrees with the pads");
    }
  }
  return begin;
}

// ConvTranspose as an ordinary convolution over a zero-stuffed, shifted view of the input:
//
//   input x (stride 2):      x0 x1 x2
//   stuffed & shifted u:     0  0 x0  0 x1  0 x2  0  0      u[q] = x[(q - shift) / s] where that
//                            ─────┬───────────────────        divides and lands inside, else 0
//                                 shift = (k-1)·dil - pad_begin (may be negative)
//   out[o] = Σ_j u[o + j·dil] · w[k-1-j]                      (the kernel flipped)
//
// which is the reference's gather (out[o] takes x[t/s]·w[j] for t = o + pad_begin - j·dil) with
// j' = k-1-j. Groups: output channel m of group g reads input channels g·C/G .. (g+1)·C/G, weight
// W[c, m mod M/G, …]. The bias is added in a second stage, as for Conv.
}  // namespace

std::vector<te::Tensor> conv_transpose(BuildContext& c) {
  const DataType t = float_operand(c);
  const auto& a = c.attrs<ops::ConvTransposeAttrs>();
  const te::Tensor &x = c.input(0), &w = c.input(1);
  const size_t rank = x->shape.size() < 3 ? 0 : x->shape.size() - 2;
  if (rank == 0 || w->shape.size() != rank + 2) c.unsupported("X and W must be N×C×D… of the same rank");
  const Shape& out = c.shape();
  ops::nn::WindowGeometry g;
  g.input.assign(x->shape.begin() + 2, x->shape.end());
  g.kernel.assign(w->shape.begin() + 2, w->shape.end());
  g.stride = ops::nn::per_axis("ConvTranspose", "strides", a.strides, rank, 1);
  g.dilation = ops::nn::per_axis("ConvTranspose", "dilations", a.dilations, rank, 1);
  const Shape begin = transposed_pad_begin(c, a, g, Shape(out.begin() + 2, out.end()));
  const int64_t group = a.group, in_channels = x->shape[1];
  if (group < 1 || in_channels % group != 0 || w->shape[0] != in_channels) c.unsupported("channels and group");
  const int64_t in_per_group = in_channels / group, out_per_group = w->shape[1];

  Shape stuffed_shape = {x->shape[0], in_channels};
  std::vector<int64_t> shift(rank);
  for (size_t d = 0; d < rank; ++d) {
    shift[d] = (g.kernel[d] - 1) * g.dilation[d] - begin[d];
    stuffed_shape.push_back(out[2 + d] + (g.kernel[d] - 1) * g.dilation[d]);
  }
  te::Tensor stuffed = te::compute(c.stage("stuffed"), stuffed_shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> src = {i[0], i[1]};
    Expr inside;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t s = g.stride[d], n = g.input[d];
      Expr v = i[2 + d] - shift[d];  // = x position · stride
      Expr ok = loopir::logical_and(loopir::ge(v, make_int(0)), loopir::lt(v, make_int(n * s)));
      if (s != 1) ok = loopir::logical_and(ok, loopir::eq(v % s, make_int(0)));
      inside = inside ? loopir::logical_and(inside, ok) : ok;
      Expr pos = s == 1 ? v : v / s;
      src.push_back(loopir::max(loopir::min(pos, make_int(n - 1)), make_int(0)));
    }
    return te::if_then_else(inside, te::at(x, src), num(t, 0));
  });

  IterVar rc = te::reduce_axis(in_per_group, "rc");
  std::vector<IterVar> axes = {rc};
  for (size_t d = 0; d < rank; ++d) axes.push_back(te::reduce_axis(g.kernel[d], "r" + std::to_string(d)));
  te::Tensor conv = te::compute(c.has(2) ? c.stage("conv") : c.stage(), out, [&](const std::vector<Expr>& i) {
    Expr channel = group == 1 ? Expr(rc.var) : (i[1] / out_per_group) * in_per_group + Expr(rc.var);
    Expr m = group == 1 ? i[1] : i[1] % out_per_group;
    std::vector<Expr> xi = {i[0], channel}, wi = {channel, m};
    for (size_t d = 0; d < rank; ++d) {
      Expr j = axes[1 + d].var;
      xi.push_back(g.dilation[d] == 1 ? i[2 + d] + j : i[2 + d] + j * g.dilation[d]);
      wi.push_back(make_int(g.kernel[d] - 1) - j);
    }
    return te::sum(te::at(stuffed, xi) * te::at(w, wi), axes);
  });
  if (!c.has(2)) return {conv};
  return {te::compute(c.stage(), out,
                      [&](const std::vector<Expr>& i) { return te::at(conv, i) + te::at(c.in[2], {i[1]}); })};
}

}  // namespace tessel::ops::te_builder
