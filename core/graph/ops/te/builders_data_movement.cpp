// Tensor-expression builders for data movement: each output element reads one (or, for linear
// Resize, a few) input elements at an index computed from its own.
#include <algorithm>
#include <unordered_map>

#include "core/graph/layout.h"
#include "core/graph/ops/layout_ops.h"
#include "core/graph/ops/shape_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

// out[i] = x[i mod in_shape]: Tile reads its source cyclically along every axis.
std::vector<te::Tensor> tile(BuildContext& c) {
  const te::Tensor& x = c.input(0);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> src;
    for (size_t d = 0; d < idx.size(); ++d) src.push_back(x->shape[d] == c.shape()[d] ? idx[d] : idx[d] % x->shape[d]);
    return te::at(x, src);
  })};
}

// Output k reads the source shifted along the axis by the lengths of the outputs before it.
std::vector<te::Tensor> split(BuildContext& c) {
  const te::Tensor& x = c.input(0);
  int64_t axis = c.attrs<ops::SplitAttrs>().axis;
  if (axis < 0) axis += static_cast<int64_t>(x->shape.size());
  std::vector<te::Tensor> outs;
  int64_t offset = 0;
  for (size_t k = 0; k < c.out.size(); ++k) {
    outs.push_back(te::compute(c.stage(std::to_string(k)), c.shape(k), [&](const std::vector<Expr>& idx) {
      std::vector<Expr> src = idx;
      if (offset) src[axis] = idx[axis] + offset;
      return te::at(x, src);
    }));
    offset += c.shape(k)[axis];
  }
  return outs;
}

// out[i] = x[start + i * step] on each sliced axis, with ONNX's clamping of starts (the lengths
// are the output's, which shape inference clamped the same way).
std::vector<te::Tensor> slice(BuildContext& c) {
  const te::Tensor& x = c.input(0);
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> starts = c.known(1, "starts").to_int64s(), axes, steps;
  if (c.has(3))
    axes = c.known(3, "axes").to_int64s();
  else
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (c.has(4))
    steps = c.known(4, "steps").to_int64s();
  else
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    c.unsupported("starts, axes and steps differ in length");
  std::vector<int64_t> first(static_cast<size_t>(rank), 0), stride(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || steps[i] == 0) c.unsupported("axis or step out of range");
    const int64_t dim = x->shape[a];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    first[a] = steps[i] > 0 ? std::clamp<int64_t>(start, 0, dim)
                            : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    stride[a] = steps[i];
  }
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> src;
    for (size_t d = 0; d < idx.size(); ++d)
      src.push_back(stride[d] == 1 && first[d] == 0 ? idx[d] : idx[d] * stride[d] + first[d]);
    return te::at(x, src);
  })};
}

// [N, C*b*b, H, W] → [N, C, H*b, W*b]; DCR takes the block offset from the high channel bits, CRD
// from the low ones.
std::vector<te::Tensor> depth_to_space(BuildContext& c) {
  const auto& a = c.attrs<ops::DepthToSpaceAttrs>();
  const te::Tensor& x = c.input(0);
  if (x->shape.size() != 4) c.unsupported("rank other than 4");
  const int64_t b = a.blocksize, channels = c.shape()[1];
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr block = (i[2] % b) * b + i[3] % b;
    Expr channel = a.mode == "DCR" ? block * channels + i[1] : i[1] * (b * b) + block;
    return te::at(x, {i[0], channel, i[2] / b, i[3] / b});
  })};
}

// [N, C, H*b, W*b] → [N, C*b*b, H, W], output channel = (row offset * b + column offset) * C + c.
std::vector<te::Tensor> space_to_depth(BuildContext& c) {
  const int64_t b = c.attrs<ops::SpaceToDepthAttrs>().blocksize;
  const te::Tensor& x = c.input(0);
  if (x->shape.size() != 4) c.unsupported("rank other than 4");
  const int64_t channels = x->shape[1];
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    Expr block = i[1] / channels;
    return te::at(x, {i[0], i[1] % channels, i[2] * b + block / b, i[3] * b + block % b});
  })};
}

std::vector<te::Tensor> gather_elements(BuildContext& c) {
  const te::Tensor &data = c.input(0), &indices = c.input(1);
  int64_t axis = c.attrs<ops::GatherAttrs>().axis;
  if (axis < 0) axis += static_cast<int64_t>(data->shape.size());
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    Expr q = convert(DataType::kInt64, te::at(indices, idx));
    std::vector<Expr> src = idx;
    src[axis] = checked_index(c, 1, q, data->shape[axis], axis);
    return te::at(data, src);
  })};
}

// Resize (nearest, linear, cubic) as the reference computes it (shape_resize.cpp) but with each
// output coordinate's input position written as an expression in float64, in the reference's
// operation order so that positions that land exactly on an input element do so here too:
//
//   half_pixel, scale 2, x = 3:  x_in = (3 + 0.5) / 2 - 0.5 = 1.25   lower = 1, ratio = 0.25
//   nearest (round_prefer_floor): element 1          linear: x[1]·0.75 + x[2]·0.25
//   cubic: x[0..3] with the cubic-convolution weights of 0.25
//
// Axes that map every output position to the same input position (scale 1) read it directly.
std::vector<te::Tensor> resize(BuildContext& c) {
  const auto& a = c.attrs<ops::ResizeAttrs>();
  const te::Tensor& x = c.input(0);
  const Shape& in = x->shape;
  const Shape& out = c.shape();
  const size_t rank = in.size();
  const std::string& mode = a.coordinate_transformation_mode;
  if (mode == "tf_crop_and_resize") c.unsupported("coordinate_transformation_mode tf_crop_and_resize");
  if (a.mode == "nearest" && a.exclude_outside) c.unsupported("exclude_outside in nearest mode");
  if (a.mode != "nearest") float_operand(c);
  auto given = [&](size_t i) { return c.has(i) && c.known(i, i == 2 ? "scales" : "sizes").numel() > 0; };
  std::vector<double> scale(rank);
  for (size_t k = 0; k < rank; ++k) {
    if (in[k] == 0) c.unsupported("an empty axis");
    scale[k] = given(2) ? c.known(2, "scales").get_double(static_cast<int64_t>(k))
                        : static_cast<double>(out[k]) / static_cast<double>(in[k]);
  }
  const DataType f64 = DataType::kFloat64;
  auto d = [&](double v) { return num(f64, v); };
  // x_in of output coordinate `o` on axis k (ONNX's coordinate_transformation_mode).
  auto input_coordinate = [&](size_t k, const Expr& o) -> Expr {
    const double out_len = scale[k] * static_cast<double>(in[k]), last = static_cast<double>(in[k] - 1);
    Expr xo = te::cast(f64, o);
    if (mode == "half_pixel") return (xo + d(0.5)) / d(scale[k]) - d(0.5);
    if (mode == "pytorch_half_pixel") return out_len == 1 ? d(-0.5) : (xo + d(0.5)) / d(scale[k]) - d(0.5);
    if (mode == "align_corners") return out_len == 1 ? d(0) : xo * d(last) / d(out_len - 1);
    if (mode == "asymmetric") return xo / d(scale[k]);
    return (xo + d(0.5)) / d(scale[k]);  // tf_half_pixel_for_nn
  };
  auto clamp_index = [&](const Expr& i, int64_t n) {
    return loopir::max(loopir::min(i, make_int(n - 1)), make_int(0));
  };
  // The reference's two-tap window: taps first and first + 1, first = ceil(x_in) - 1 kept in [-1, n - 1].
  struct Taps {
    Expr first, ratio;  // int64 index of the lower tap (unclamped), float64 weight of the upper one
  };
  auto taps = [&](size_t k, const Expr& o) {
    Expr x_in = input_coordinate(k, o);
    Expr lower = floor_of(x_in);
    Expr integral = loopir::eq(x_in, lower);
    Expr ratio = te::if_then_else(integral, d(1), x_in - lower);
    Expr first = te::cast(DataType::kInt64, lower) + te::if_then_else(integral, make_int(0), make_int(1)) - 1;
    first = loopir::max(loopir::min(first, make_int(in[k] - 1)), make_int(-1));
    return Taps{first, ratio};
  };
  // Identity axes: same length and scale 1, where every mode but tf_half_pixel_for_nn (which shifts
  // by half an element) maps x to exactly x.
  std::vector<bool> identity(rank);
  for (size_t k = 0; k < rank; ++k) identity[k] = in[k] == out[k] && scale[k] == 1.0 && mode != "tf_half_pixel_for_nn";
  if (a.mode == "nearest") {
    const std::string& nm = a.nearest_mode;
    return {te::compute(c.stage(), out, [&](const std::vector<Expr>& idx) {
      std::vector<Expr> src;
      for (size_t k = 0; k < rank; ++k) {
        if (identity[k]) {
          src.push_back(idx[k]);
          continue;
        }
        Taps t = taps(k, idx[k]);
        Expr upper = nm == "ceil"    ? loopir::gt(t.ratio, d(0))
                     : nm == "floor" ? loopir::eq(t.ratio, d(1))
                     : nm == "round_prefer_floor"
                         ? loopir::logical_or(loopir::eq(t.ratio, d(1)), loopir::gt(t.ratio, d(0.5)))
                         : loopir::ge(t.ratio, d(0.5));
        src.push_back(clamp_index(t.first + te::if_then_else(upper, make_int(1), make_int(0)), in[k]));
      }
      return te::at(x, src);
    })};
  }
  // Linear and cubic: the reference's window of n taps (2 or 4) whose (n/2)-th tap is ceil(x_in),
  // kept within n/2 of the edges, each tap clamped into the input. Per resized axis, two small
  // stages hold every output coordinate's taps and weights,
  //
  //   tap_k[o, t]: input index of tap t        weight_k[o, t]: its weight (float64)
  //
  // so the weights are computed once per coordinate, not once per output element, and the sum
  // over every combination of the axes' taps (accumulated in float64, like the reference) stays a
  // small expression.
  const int64_t n_taps = a.mode == "cubic" ? 4 : 2, pad = n_taps / 2;
  const double A = a.cubic_coeff_a;
  auto near = [&](const Expr& t) { return (d(A + 2) * t - d(A + 3)) * t * t + d(1); };              // |t| <= 1
  auto far = [&](const Expr& t) { return ((d(A) * t - d(5 * A)) * t + d(8 * A)) * t - d(4 * A); };  // 1 < |t| < 2
  auto first_tap = [&](size_t k, const Expr& o, Expr* ratio) {
    Expr x_in = input_coordinate(k, o);
    Expr lower = floor_of(x_in);
    Expr integral = loopir::eq(x_in, lower);
    *ratio = te::if_then_else(integral, d(1), x_in - lower);
    Expr first = te::cast(DataType::kInt64, lower) + te::if_then_else(integral, make_int(0), make_int(1)) - pad;
    return loopir::max(loopir::min(first, make_int(in[k] + pad - n_taps)), make_int(-pad));
  };
  std::vector<te::Tensor> tap(rank), weight(rank);
  for (size_t k = 0; k < rank; ++k) {
    if (identity[k]) continue;
    const std::string axis = std::to_string(k);
    tap[k] = te::compute(c.stage("tap" + axis), {out[k], n_taps}, [&](const std::vector<Expr>& i) {
      Expr ratio;
      return clamp_index(first_tap(k, i[0], &ratio) + i[1], in[k]);
    });
    te::Tensor raw =
        te::compute(c.stage("weight" + axis + (a.exclude_outside ? "_raw" : "")), {out[k], n_taps},
                    [&](const std::vector<Expr>& i) {
                      Expr ratio;
                      Expr first = first_tap(k, i[0], &ratio);
                      std::vector<Expr> w = n_taps == 2 ? std::vector<Expr>{d(1) - ratio, ratio}
                                                        : std::vector<Expr>{far(ratio + d(1)), near(ratio),
                                                                            near(d(1) - ratio), far(d(2) - ratio)};
                      Expr v = w.back();
                      for (int64_t t = n_taps - 1; t-- > 0;)
                        v = te::if_then_else(loopir::eq(i[1], make_int(t)), w[t], v);
                      if (!a.exclude_outside) return v;
                      Expr at = first + i[1];  // taps outside the input get no weight; the rest are renormalised
                      return te::if_then_else(
                          loopir::logical_and(loopir::ge(at, make_int(0)), loopir::lt(at, make_int(in[k]))), v, d(0));
                    });
    weight[k] = raw;
    if (a.exclude_outside) {
      IterVar r = te::reduce_axis(n_taps, "t");
      te::Tensor total = te::compute(c.stage("weight" + axis + "_sum"), {out[k]}, [&](const std::vector<Expr>& i) {
        return te::sum(te::at(raw, {i[0], r.var}), {r});
      });
      weight[k] = te::compute(c.stage("weight" + axis), {out[k], n_taps}, [&](const std::vector<Expr>& i) {
        Expr s = te::at(total, {i[0]});
        return te::if_then_else(loopir::ne(s, d(0)), te::at(raw, i) / s, te::at(raw, i));
      });
    }
  }
  return {te::compute(c.stage(), out, [&](const std::vector<Expr>& idx) {
    std::vector<size_t> resized;
    for (size_t k = 0; k < rank; ++k)
      if (!identity[k]) resized.push_back(k);
    size_t combos = 1;
    for (size_t j = 0; j < resized.size(); ++j) combos *= static_cast<size_t>(n_taps);
    Expr sum;
    for (size_t combo = 0; combo < combos; ++combo) {
      std::vector<Expr> src = idx;
      Expr w;
      size_t rest = combo;
      for (size_t k : resized) {
        Expr t = make_int(static_cast<int64_t>(rest % static_cast<size_t>(n_taps)));
        rest /= static_cast<size_t>(n_taps);
        src[k] = te::at(tap[k], {idx[k], t});
        w = w ? w * te::at(weight[k], {idx[k], t}) : te::at(weight[k], {idx[k], t});
      }
      Expr term = w ? w * te::cast(f64, te::at(x, src)) : te::cast(f64, te::at(x, src));
      sum = sum ? sum + term : term;
    }
    return te::cast(c.dtype(), sum);
  })};
}

// out[idx] = x[the element with the same row-major position]: Reshape, Flatten, Squeeze, Unsqueeze.
std::vector<te::Tensor> reshape(BuildContext& c) {
  const te::Tensor& x = c.input(0);
  Shape out_strides = contiguous_strides(c.shape()), in_strides = contiguous_strides(x->shape);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    if (x->shape == c.shape()) return te::at(x, idx);
    Expr flat = make_int(0);
    for (size_t d = 0; d < idx.size(); ++d) flat = flat + idx[d] * out_strides[d];
    std::vector<Expr> src;
    for (size_t d = 0; d < x->shape.size(); ++d)
      src.push_back(x->shape[d] == 1 ? make_int(0) : (flat / in_strides[d]) % x->shape[d]);
    return te::at(x, src);
  })};
}

std::vector<te::Tensor> transpose(BuildContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> perm = c.attrs<ops::TransposeAttrs>().perm;
  if (perm.empty())
    for (int64_t d = static_cast<int64_t>(x->shape.size()) - 1; d >= 0; --d) perm.push_back(d);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> src(x->shape.size());
    for (size_t d = 0; d < perm.size(); ++d) src[perm[d]] = idx[d];
    return te::at(x, src);
  })};
}

std::vector<te::Tensor> concat(BuildContext& c) {
  int64_t rank = static_cast<int64_t>(c.shape().size());
  int64_t axis = c.attrs<ops::ConcatAttrs>().axis;
  if (axis < 0) axis += rank;
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    // Nested selects, last input innermost: axis index < offset_k picks input k.
    std::vector<int64_t> offsets;
    int64_t off = 0;
    for (size_t k = 0; k < c.in.size(); ++k) offsets.push_back(off), off += c.input(k)->shape[axis];
    Expr v;
    for (size_t k = c.in.size(); k-- > 0;) {
      std::vector<Expr> src = idx;
      src[axis] = idx[axis] - offsets[k];
      Expr read = te::at(c.input(k), src);
      v = v ? te::if_then_else(loopir::lt(idx[axis], make_int(offsets[k] + c.input(k)->shape[axis])), read, v) : read;
    }
    return v;
  })};
}

std::vector<te::Tensor> gather(BuildContext& c) {
  const te::Tensor &data = c.input(0), &indices = c.input(1);
  int64_t rank = static_cast<int64_t>(data->shape.size());
  int64_t axis = c.attrs<ops::GatherAttrs>().axis;
  if (axis < 0) axis += rank;
  size_t qr = indices->shape.size();
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    std::vector<Expr> qi(idx.begin() + axis, idx.begin() + axis + static_cast<long>(qr));
    Expr q = convert(DataType::kInt64, te::at(indices, qi));
    std::vector<Expr> src(idx.begin(), idx.begin() + axis);
    src.push_back(checked_index(c, 1, q, data->shape[axis], axis));
    src.insert(src.end(), idx.begin() + axis + static_cast<long>(qr), idx.end());
    return te::at(data, src);
  })};
}

std::vector<te::Tensor> pad(BuildContext& c) {
  if (c.attrs<ops::PadAttrs>().mode != "constant") c.unsupported("mode " + c.attrs<ops::PadAttrs>().mode);
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> pads = c.known(1, "pads").to_int64s();
  size_t rank = x->shape.size();
  if (pads.size() != 2 * rank) c.unsupported("axes input");
  for (int64_t p : pads)
    if (p < 0) c.unsupported("negative pads");
  double fill = c.has(2) ? c.known(2, "constant_value").get_double(0) : 0.0;
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    Expr inside;
    std::vector<Expr> src;
    for (size_t d = 0; d < rank; ++d) {
      Expr s = idx[d] - pads[d];
      src.push_back(s);
      Expr ok = loopir::logical_and(loopir::ge(s, make_int(0)), loopir::lt(s, make_int(x->shape[d])));
      inside = inside ? loopir::logical_and(inside, ok) : ok;
    }
    return inside ? te::if_then_else(inside, te::at(x, src), num(c.dtype(), fill)) : te::at(x, src);
  })};
}

std::vector<te::Tensor> layout_transform(BuildContext& c) {
  const auto& a = c.attrs<ops::LayoutTransformAttrs>();
  Layout src(a.src_layout), dst(a.dst_layout);
  const te::Tensor& x = c.input(0);
  PrimalValues extents = src.logical_extents(x->shape);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) {
    // dst physical → logical coordinate per primal axis → src physical; padding reads as zero.
    std::unordered_map<char, Expr> logical;
    for (char p : dst.primal_axes()) {
      Expr v = idx[dst.primal_position(p)];
      if (dst.sub_position(p) >= 0) v = v * dst.factor(p) + idx[dst.sub_position(p)];
      logical[p] = v;
    }
    std::vector<Expr> s(static_cast<size_t>(src.rank()));
    Expr inside;
    for (char p : src.primal_axes()) {
      Expr v = logical.at(p);
      int64_t f = src.factor(p);
      if (src.sub_position(p) >= 0) {
        s[src.primal_position(p)] = v / f;
        s[src.sub_position(p)] = v % f;
      } else {
        s[src.primal_position(p)] = v;
      }
      Expr ok = loopir::lt(v, make_int(extents[p - 'A']));
      inside = inside ? loopir::logical_and(inside, ok) : ok;
    }
    return te::if_then_else(inside, te::at(x, s), num(c.dtype(), 0));
  })};
}

// out[idx] = x[idx broadcast]: Expand.
std::vector<te::Tensor> expand(BuildContext& c) {
  return {
      te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& idx) { return broadcast_read(c.input(0), idx); })};
}

}  // namespace tessel::ops::te_builder
