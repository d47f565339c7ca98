#include "core/te/op_builders.h"

#include "core/support/error.h"

namespace tessel::te {
using namespace loopir;

namespace {

void require_positive(const char* op, const char* what, int64_t v) {
  if (v < 1) throw Error(std::string(op) + ": " + what + " must be >= 1, got " + std::to_string(v));
}

// i * stride, written as just i for stride 1 (the formulas are what users read).
Expr strided(const Expr& i, int64_t stride) { return stride == 1 ? i : i * stride; }

void check_conv(const char* op, const Conv2dParams& p) {
  require_positive(op, "N", p.batch);
  require_positive(op, "C", p.in_channels);
  require_positive(op, "H", p.height);
  require_positive(op, "W", p.width);
  require_positive(op, "K", p.out_channels);
  require_positive(op, "R", p.kernel_h);
  require_positive(op, "S", p.kernel_w);
  require_positive(op, "stride", p.stride);
  if (p.pad < 0) throw Error(std::string(op) + ": pad must be >= 0, got " + std::to_string(p.pad));
  if (p.out_height() < 1 || p.out_width() < 1)
    throw Error(std::string(op) + ": the kernel is larger than the padded input");
}

// pad[n, c, h, w] = X[n, c, h - pad, w - pad] inside, 0 outside (or X itself when pad == 0).
Tensor padded(const Tensor& x, int64_t pad) {
  if (pad == 0) return x;
  const Shape& s = x->shape;
  int64_t h = s[2], w = s[3];
  return compute("pad", {s[0], s[1], h + 2 * pad, w + 2 * pad},
                 [&](const std::vector<Expr>& i) {
                   Expr inside = logical_and(logical_and(ge(i[2], make_int(pad)), lt(i[2], make_int(h + pad))),
                                             logical_and(ge(i[3], make_int(pad)), lt(i[3], make_int(w + pad))));
                   return if_then_else(inside, at(x, {i[0], i[1], i[2] - pad, i[3] - pad}), float_const(0));
                 },
                 {"n", "c", "h", "w"});
}

Tensor conv_tensor(const Conv2dParams& p, const Tensor& x, const Tensor& wt) {
  Tensor in = padded(x, p.pad);
  IterVar rc = reduce_axis(p.in_channels, "rc"), ry = reduce_axis(p.kernel_h, "ry"), rx = reduce_axis(p.kernel_w, "rx");
  return compute("conv", {p.batch, p.out_channels, p.out_height(), p.out_width()},
                 [&](const std::vector<Expr>& i) {
                   return sum(
                       at(in, {i[0], rc.var, strided(i[2], p.stride) + ry.var, strided(i[3], p.stride) + rx.var}) *
                           at(wt, {i[1], rc.var, ry.var, rx.var}),
                       {rc, ry, rx});
                 },
                 {"n", "f", "y", "x"});
}

}  // namespace

ComputeDag matmul_dag(int64_t m, int64_t n, int64_t k) {
  require_positive("matmul", "M", m);
  require_positive("matmul", "N", n);
  require_positive("matmul", "K", k);
  Tensor a = placeholder("A", {m, k}), b = placeholder("B", {k, n});
  IterVar rk = reduce_axis(k, "k");
  Tensor c = compute("C", {m, n},
                     [&](const std::vector<Expr>& i) {
                       return sum(at(a, {i[0], rk.var}) * at(b, {rk.var, i[1]}), {rk});
                     },
                     {"i", "j"});
  return make_dag("matmul", {c});
}

ComputeDag matmul_packed_dag(int64_t m, int64_t n, int64_t k, int64_t block) {
  require_positive("matmul_packed", "M", m);
  require_positive("matmul_packed", "N", n);
  require_positive("matmul_packed", "K", k);
  require_positive("matmul_packed", "block", block);
  if (n % block != 0)
    throw Error("matmul_packed: N=" + std::to_string(n) + " must be a multiple of block=" + std::to_string(block));
  Tensor a = placeholder("A", {m, k}), b = placeholder("B", {n / block, k, block});
  IterVar rk = reduce_axis(k, "k");
  Tensor c = compute("C", {m, n},
                     [&](const std::vector<Expr>& i) {
                       return sum(at(a, {i[0], rk.var}) * at(b, {i[1] / block, rk.var, i[1] % block}), {rk});
                     },
                     {"i", "j"});
  return make_dag("matmul_packed", {c});
}

ComputeDag conv2d_dag(const Conv2dParams& p) {
  check_conv("conv2d", p);
  Tensor x = placeholder("X", {p.batch, p.in_channels, p.height, p.width});
  Tensor wt = placeholder("Wt", {p.out_channels, p.in_channels, p.kernel_h, p.kernel_w});
  return make_dag("conv2d", {conv_tensor(p, x, wt)});
}

ComputeDag conv2d_bias_relu_dag(const Conv2dParams& p) {
  check_conv("conv2d_bias_relu", p);
  Tensor x = placeholder("X", {p.batch, p.in_channels, p.height, p.width});
  Tensor wt = placeholder("Wt", {p.out_channels, p.in_channels, p.kernel_h, p.kernel_w});
  Tensor bias = placeholder("bias", {p.out_channels});
  Tensor conv = conv_tensor(p, x, wt);
  Shape out = conv->shape;
  Tensor biased = compute("bias_add", out, [&](const std::vector<Expr>& i) { return at(conv, i) + at(bias, {i[1]}); },
                          {"n", "f", "y", "x"});
  Tensor relu =
      compute("relu", out, [&](const std::vector<Expr>& i) { return loopir::max(at(biased, i), float_const(0)); },
              {"n", "f", "y", "x"});
  return make_dag("conv2d_bias_relu", {relu});
}

ComputeDag depthwise_conv2d_dag(const Conv2dParams& p0) {
  Conv2dParams p = p0;
  p.out_channels = p.in_channels;
  check_conv("depthwise_conv2d", p);
  Tensor x = placeholder("X", {p.batch, p.in_channels, p.height, p.width});
  Tensor wt = placeholder("Wt", {p.in_channels, p.kernel_h, p.kernel_w});
  Tensor in = padded(x, p.pad);
  IterVar ry = reduce_axis(p.kernel_h, "ry"), rx = reduce_axis(p.kernel_w, "rx");
  Tensor out =
      compute("dwconv", {p.batch, p.in_channels, p.out_height(), p.out_width()},
              [&](const std::vector<Expr>& i) {
                return sum(at(in, {i[0], i[1], strided(i[2], p.stride) + ry.var, strided(i[3], p.stride) + rx.var}) *
                               at(wt, {i[1], ry.var, rx.var}),
                           {ry, rx});
              },
              {"n", "c", "y", "x"});
  return make_dag("depthwise_conv2d", {out});
}

ComputeDag conv2d_nchwc_dag(const Conv2dParams& p, int64_t b) {
  check_conv("conv2d_nchwc", p);
  require_positive("conv2d_nchwc", "block", b);
  if (p.in_channels % b != 0 || p.out_channels % b != 0)
    throw Error("conv2d_nchwc: C=" + std::to_string(p.in_channels) + " and K=" + std::to_string(p.out_channels) +
                " must be multiples of block=" + std::to_string(b));
  int64_t cb = p.in_channels / b, kb = p.out_channels / b;
  Tensor x = placeholder("X", {p.batch, cb, p.height, p.width, b});
  Tensor wt = placeholder("Wt", {kb, cb, p.kernel_h, p.kernel_w, b, b});
  Tensor in = x;
  if (p.pad > 0) {
    int64_t h = p.height, w = p.width, pad = p.pad;
    in = compute("pad", {p.batch, cb, h + 2 * pad, w + 2 * pad, b},
                 [&](const std::vector<Expr>& i) {
                   Expr inside = logical_and(logical_and(ge(i[2], make_int(pad)), lt(i[2], make_int(h + pad))),
                                             logical_and(ge(i[3], make_int(pad)), lt(i[3], make_int(w + pad))));
                   return if_then_else(inside, at(x, {i[0], i[1], i[2] - pad, i[3] - pad, i[4]}), float_const(0));
                 },
                 {"n", "c", "h", "w", "cb"});
  }
  IterVar rc = reduce_axis(cb, "rc"), ry = reduce_axis(p.kernel_h, "ry"), rx = reduce_axis(p.kernel_w, "rx"),
          rb = reduce_axis(b, "rb");
  Tensor out = compute(
      "conv", {p.batch, kb, p.out_height(), p.out_width(), b},
      [&](const std::vector<Expr>& i) {
        return sum(at(in, {i[0], rc.var, strided(i[2], p.stride) + ry.var, strided(i[3], p.stride) + rx.var, rb.var}) *
                       at(wt, {i[1], rc.var, ry.var, rx.var, rb.var, i[4]}),
                   {rc, ry, rx, rb});
      },
      {"n", "f", "y", "x", "fb"});
  return make_dag("conv2d_nchwc", {out});
}

namespace {
std::vector<std::string> axis_names(size_t rank) {
  static const char* names[] = {"i", "j", "k", "l", "m", "n"};
  std::vector<std::string> out;
  for (size_t d = 0; d < rank; ++d) out.push_back(d < 6 ? names[d] : "i" + std::to_string(d));
  return out;
}
void check_shape(const char* op, const Shape& s) {
  if (s.empty()) throw Error(std::string(op) + ": shape must have at least one dimension");
  for (auto d : s) require_positive(op, "every dimension", d);
}
}  // namespace

ComputeDag relu_dag(const Shape& shape) {
  check_shape("relu", shape);
  Tensor x = placeholder("X", shape);
  Tensor y = compute(
      "Y", shape, [&](const std::vector<Expr>& i) { return loopir::max(at(x, i), float_const(0)); },
      axis_names(shape.size()));
  return make_dag("relu", {y});
}

ComputeDag add_dag(const Shape& shape) {
  check_shape("add", shape);
  Tensor a = placeholder("A", shape), b = placeholder("B", shape);
  Tensor y = compute(
      "Y", shape, [&](const std::vector<Expr>& i) { return at(a, i) + at(b, i); }, axis_names(shape.size()));
  return make_dag("add", {y});
}

ComputeDag pool2d_dag(bool is_max, int64_t batch, int64_t channels, int64_t height, int64_t width, int64_t size,
                      int64_t stride) {
  const char* op = is_max ? "max_pool" : "avg_pool";
  for (auto [what, v] :
       {std::pair{"N", batch}, {"C", channels}, {"H", height}, {"W", width}, {"size", size}, {"stride", stride}})
    require_positive(op, what, v);
  if (size > height || size > width)
    throw Error(std::string(op) + ": window " + std::to_string(size) + " is larger than the input");
  int64_t oh = (height - size) / stride + 1, ow = (width - size) / stride + 1;
  Tensor x = placeholder("X", {batch, channels, height, width});
  IterVar ry = reduce_axis(size, "ry"), rx = reduce_axis(size, "rx");
  auto window = [&](const std::vector<Expr>& i) {
    return at(x, {i[0], i[1], strided(i[2], stride) + ry.var, strided(i[3], stride) + rx.var});
  };
  if (is_max) {
    Tensor y = compute("pool", {batch, channels, oh, ow},
                       [&](const std::vector<Expr>& i) {
                         return max_reduce(window(i), {ry, rx});
                       },
                       {"n", "c", "y", "x"});
    return make_dag("max_pool", {y});
  }
  Tensor s = compute("pool_sum", {batch, channels, oh, ow},
                     [&](const std::vector<Expr>& i) {
                       return sum(window(i), {ry, rx});
                     },
                     {"n", "c", "y", "x"});
  Tensor y =
      compute("pool", {batch, channels, oh, ow},
              [&](const std::vector<Expr>& i) { return at(s, i) / float_const(static_cast<double>(size * size)); },
              {"n", "c", "y", "x"});
  return make_dag("avg_pool", {y});
}

ComputeDag softmax_dag(int64_t rows, int64_t cols) {
  require_positive("softmax", "M", rows);
  require_positive("softmax", "N", cols);
  Tensor x = placeholder("X", {rows, cols});
  IterVar k1 = reduce_axis(cols, "k");
  Tensor mx = compute("row_max", {rows},
                      [&](const std::vector<Expr>& i) {
                        return max_reduce(at(x, {i[0], k1.var}), {k1});
                      },
                      {"i"});
  IterVar k2 = reduce_axis(cols, "k");
  Tensor es = compute("exp_sum", {rows},
                      [&](const std::vector<Expr>& i) {
                        return sum(exp(at(x, {i[0], k2.var}) - at(mx, {i[0]})), {k2});
                      },
                      {"i"});
  Tensor y =
      compute("softmax", {rows, cols},
              [&](const std::vector<Expr>& i) { return exp(at(x, i) - at(mx, {i[0]})) / at(es, {i[0]}); }, {"i", "j"});
  return make_dag("softmax", {y});
}

ComputeDag layernorm_dag(int64_t rows, int64_t cols, double eps) {
  require_positive("layernorm", "M", rows);
  require_positive("layernorm", "N", cols);
  Tensor x = placeholder("X", {rows, cols});
  Tensor gamma = placeholder("gamma", {cols}), beta = placeholder("beta", {cols});
  double inv_n = 1.0 / static_cast<double>(cols);
  IterVar k1 = reduce_axis(cols, "k");
  Tensor s = compute("row_sum", {rows},
                     [&](const std::vector<Expr>& i) {
                       return sum(at(x, {i[0], k1.var}), {k1});
                     },
                     {"i"});
  IterVar k2 = reduce_axis(cols, "k");
  Tensor v = compute("row_var", {rows},
                     [&](const std::vector<Expr>& i) {
                       Expr d = at(x, {i[0], k2.var}) - at(s, {i[0]}) * float_const(inv_n);
                       return sum(d * d, {k2});
                     },
                     {"i"});
  Tensor y = compute("layernorm", {rows, cols},
                     [&](const std::vector<Expr>& i) {
                       Expr mean = at(s, {i[0]}) * float_const(inv_n);
                       Expr inv_std = intrinsic("rsqrt", {at(v, {i[0]}) * float_const(inv_n) + float_const(eps)});
                       return (at(x, i) - mean) * inv_std * at(gamma, {i[1]}) + at(beta, {i[1]});
                     },
                     {"i", "j"});
  return make_dag("layernorm", {y});
}

ComputeDag transpose_dag(int64_t rows, int64_t cols) {
  require_positive("transpose", "M", rows);
  require_positive("transpose", "N", cols);
  Tensor x = placeholder("X", {rows, cols});
  Tensor y = compute("T", {cols, rows}, [&](const std::vector<Expr>& i) { return at(x, {i[1], i[0]}); }, {"i", "j"});
  return make_dag("transpose", {y});
}

}  // namespace tessel::te
