#include "core/te/int8_dot_product.h"

namespace tessel::te {
using namespace loopir;

namespace {

constexpr int64_t kLanes = 16, kDepth = 4;
constexpr int64_t kMinRows = 8;

Expr i32(int64_t v) { return make_int(v, DataType::kInt32); }
Expr to_i32(const Expr& e) { return cast(DataType::kInt32, e); }
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

std::string why_not_int8_dot_product(const Int8ProductOperands& p) {
  auto byte = [](DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; };
  if (p.a->shape.size() != 2 || p.b->shape.size() != 2) return "the operands are not both matrices";
  if (!byte(p.a->dtype) || !byte(p.b->dtype)) return "the operands are not 8-bit";
  if (p.a->shape[1] != p.b->shape[0]) return "the inner extents differ";
  // B is packed on every call (K·N), so a product of few rows would spend its time packing
  // (1×4096×1024: 6 GO/s against 84 for the plain form).
  if (p.a->shape[0] < kMinRows)
    return std::to_string(p.a->shape[0]) + " rows: packing the weights would cost about as much as the product";
  // Each dot step fills 16 lanes with 16 columns: fewer would leave lanes idle in every step while
  // the packing is still paid on every call (the sample qdq_resnet's 8-channel layers ran 3x slower).
  if (p.b->shape[1] < kLanes)
    return std::to_string(p.b->shape[1]) + " columns: fewer than the dot step's " + std::to_string(kLanes) + " lanes";
  return {};
}

Tensor int8_dot_product(const Int8ProductOperands& p, const std::string& name) {
  const Tensor &a = p.a, &b = p.b;
  const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  const int64_t k4 = round_up(k, kDepth), n16 = round_up(n, kLanes);
  const int64_t sa = a->dtype == DataType::kInt8 ? 128 : 0, sb = b->dtype == DataType::kUInt8 ? 128 : 0;

  // A' is A itself when it is already u8 with whole depth groups.
  Tensor rows = a;
  if (sa != 0 || k4 != k) {
    rows = compute(name + "_vnni_a", {m, k4}, [&](const std::vector<Expr>& i) {
      Expr v = cast(DataType::kUInt8, to_i32(at(a, {i[0], min(i[1], make_int(k - 1))})) + i32(sa));
      return k4 == k ? v : if_then_else(lt(i[1], make_int(k)), v, make_const(DataType::kUInt8, 0));
    });
  }
  Tensor packed =
      compute(name + "_vnni_b", {n16 / kLanes, k4 / kDepth, kLanes, kDepth}, [&](const std::vector<Expr>& i) {
        Expr depth = i[1] * kDepth + i[3], column = i[0] * kLanes + i[2];
        Expr v =
            cast(DataType::kInt8, to_i32(at(b, {min(depth, make_int(k - 1)), min(column, make_int(n - 1))})) - i32(sb));
        if (k4 == k && n16 == n) return v;
        return if_then_else(logical_and(lt(depth, make_int(k)), lt(column, make_int(n))), v,
                            make_const(DataType::kInt8, 0));
      });
  IterVar ko = reduce_axis(k4 / kDepth, "ko"), ki = reduce_axis(kDepth, "ki");
  Tensor dot = compute(name + kVnniDotSuffix, {m, n16 / kLanes, kLanes},
                       [&](const std::vector<Expr>& i) {
                         return sum(to_i32(at(rows, {i[0], ko.var * kDepth + ki.var})) *
                                        to_i32(at(packed, {i[1], ko.var, i[2], ki.var})),
                                    {ko, ki});
                       },
                       {"i", "jo", "ji"});

  auto a_zero = [&](const Expr& row) { return p.a_zero ? p.a_zero(row) : i32(0); };
  auto b_zero = [&](const Expr& column) { return p.b_zero ? p.b_zero(column) : i32(0); };
  const bool row_sums = sb != 0 || p.b_zero, column_sums = sa != 0 || p.a_zero;
  Tensor row_sum, column_sum;
  if (row_sums) {
    IterVar r = reduce_axis(k, "k");
    row_sum = compute(name + "_vnni_rows", {m}, [&](const std::vector<Expr>& i) {
      return sum(to_i32(at(a, {i[0], r.var})), {r});
    });
  }
  if (column_sums) {
    IterVar r = reduce_axis(k, "k");
    column_sum = compute(name + "_vnni_columns", {n}, [&](const std::vector<Expr>& i) {
      return sum(to_i32(at(b, {r.var, i[0]})), {r});
    });
  }
  return compute(name, {m, n}, [&](const std::vector<Expr>& i) {
    Expr v = at(dot, {i[0], i[1] / kLanes, i[1] % kLanes});
    if (row_sums) v = v + (i32(sb) - b_zero(i[1])) * at(row_sum, {i[0]});
    if (column_sums) v = v - (i32(sa) + a_zero(i[0])) * at(column_sum, {i[1]});
    if (sa * sb != 0 || (p.a_zero && p.b_zero)) v = v + i32(k) * (i32(sa * sb) + a_zero(i[0]) * b_zero(i[1]));
    return v;
  });
}

std::string why_not_int8_dot_conv(const Int8ConvOperands& p) {
  auto byte = [](DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; };
  if (p.x->shape.size() != 4 || p.w->shape.size() != 4) return "not a 2-D convolution";
  if (!byte(p.x->dtype) || !byte(p.w->dtype)) return "the operands are not 8-bit";
  if (p.x->shape[1] != p.w->shape[1]) return "grouped";
  // As for the product: the output channels fill the dot step's lanes.
  if (p.w->shape[0] < kLanes)
    return std::to_string(p.w->shape[0]) + " output channels: fewer than the dot step's " + std::to_string(kLanes) +
           " lanes";
  // Each output pixel's dot steps run over the input channels 4 at a time: with fewer than 16 the
  // steps per pixel are too few to pay for laying the input out in groups of 4 channels on every
  // call (qdq_resnet's 8 -> 16 channel stride-2 conv: 12.3 µs in this form, 5.6 µs plain).
  if (p.x->shape[1] < 4 * kDepth)
    return std::to_string(p.x->shape[1]) + " input channels: fewer than 4 dot steps per pixel";
  return {};
}

Tensor int8_dot_conv(const Int8ConvOperands& p, const std::string& name) {
  const Tensor &x = p.x, &w = p.w;
  const int64_t batch = x->shape[0], c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  const int64_t m = w->shape[0], r = w->shape[2], s = w->shape[3];
  const int64_t c4 = round_up(c, kDepth), m16 = round_up(m, kLanes);
  const int64_t hp = (p.out_h - 1) * p.stride[0] + (r - 1) * p.dilation[0] + 1;
  const int64_t wp = (p.out_w - 1) * p.stride[1] + (s - 1) * p.dilation[1] + 1;
  const int64_t sa = x->dtype == DataType::kInt8 ? 128 : 0, sb = w->dtype == DataType::kUInt8 ? 128 : 0;
  auto x_zero = [&] { return p.x_zero ? p.x_zero() : i32(0); };
  auto w_zero = [&](const Expr& channel) { return p.w_zero ? p.w_zero(channel) : i32(0); };

  Tensor input = compute(name + "_vnni_a", {batch, c4 / kDepth, hp, wp, kDepth}, [&](const std::vector<Expr>& i) {
    Expr channel = i[1] * kDepth + i[4];
    Expr y = i[2] - p.pad_begin[0], xx = i[3] - p.pad_begin[1];
    Expr inside = logical_and(logical_and(ge(y, make_int(0)), lt(y, make_int(h))),
                              logical_and(ge(xx, make_int(0)), lt(xx, make_int(wd))));
    auto clamp = [](const Expr& v, int64_t extent) { return min(max(v, make_int(0)), make_int(extent - 1)); };
    Expr value = to_i32(at(x, {i[0], clamp(channel, c), clamp(y, h), clamp(xx, wd)}));
    Expr shifted = if_then_else(inside, value, x_zero()) + i32(sa);
    return cast(DataType::kUInt8, c4 == c ? shifted : if_then_else(lt(channel, make_int(c)), shifted, i32(0)));
  });
  Tensor packed =
      compute(name + "_vnni_b", {m16 / kLanes, c4 / kDepth, r, s, kLanes, kDepth}, [&](const std::vector<Expr>& i) {
        Expr out_channel = i[0] * kLanes + i[4], channel = i[1] * kDepth + i[5];
        Expr v = cast(
            DataType::kInt8,
            to_i32(at(w, {min(out_channel, make_int(m - 1)), min(channel, make_int(c - 1)), i[2], i[3]})) - i32(sb));
        if (c4 == c && m16 == m) return v;
        return if_then_else(logical_and(lt(out_channel, make_int(m)), lt(channel, make_int(c))), v,
                            make_const(DataType::kInt8, 0));
      });
  IterVar co = reduce_axis(c4 / kDepth, "co"), ry = reduce_axis(r, "ry"), rx = reduce_axis(s, "rx"),
          ci = reduce_axis(kDepth, "ci");
  auto window_y = [&](const Expr& y) { return y * p.stride[0] + Expr(ry.var) * p.dilation[0]; };
  auto window_x = [&](const Expr& xx) { return xx * p.stride[1] + Expr(rx.var) * p.dilation[1]; };
  Tensor dot = compute(name + kVnniDotSuffix, {batch, m16 / kLanes, p.out_h, p.out_w, kLanes},
                       [&](const std::vector<Expr>& i) {
                         return sum(to_i32(at(input, {i[0], co.var, window_y(i[2]), window_x(i[3]), ci.var})) *
                                        to_i32(at(packed, {i[1], co.var, ry.var, rx.var, i[4], ci.var})),
                                    {co, ry, rx, ci});
                       },
                       {"n", "mo", "y", "x", "mi"});

  const bool window_sums = sb != 0 || p.w_zero, weight_sums = sa != 0 || p.x_zero;
  Tensor window_sum, weight_sum;
  if (window_sums) {
    // Over the real channels only (c4 - c padded channels hold 0 in X' anyway).
    IterVar wc = reduce_axis(c4 / kDepth, "co"), wy = reduce_axis(r, "ry"), wx = reduce_axis(s, "rx"),
            wi = reduce_axis(kDepth, "ci");
    window_sum = compute(name + "_vnni_rows", {batch, p.out_h, p.out_w}, [&](const std::vector<Expr>& i) {
      Expr y = i[1] * p.stride[0] + Expr(wy.var) * p.dilation[0],
           xx = i[2] * p.stride[1] + Expr(wx.var) * p.dilation[1];
      return sum(to_i32(at(input, {i[0], wc.var, y, xx, wi.var})), {wc, wy, wx, wi});
    });
  }
  if (weight_sums) {
    IterVar wc = reduce_axis(c, "c"), wy = reduce_axis(r, "ry"), wx = reduce_axis(s, "rx");
    weight_sum = compute(name + "_vnni_columns", {m}, [&](const std::vector<Expr>& i) {
      return sum(to_i32(at(w, {i[0], wc.var, wy.var, wx.var})) - i32(sb), {wc, wy, wx});
    });
  }
  const int64_t window = c * r * s;
  return compute(name, {batch, m, p.out_h, p.out_w}, [&](const std::vector<Expr>& i) {
    Expr v = at(dot, {i[0], i[1] / kLanes, i[2], i[3], i[1] % kLanes});
    Expr centering = i32(sb) - w_zero(i[1]);
    if (window_sums) v = v + centering * at(window_sum, {i[0], i[2], i[3]});
    if (weight_sums) {
      Expr shift = i32(sa) + x_zero();
      v = v - shift * at(weight_sum, {i[1]});
      if (window_sums) v = v - i32(window) * shift * centering;
    }
    return v;
  });
}

}  // namespace tessel::te
