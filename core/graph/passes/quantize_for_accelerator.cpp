#include "core/graph/passes/quantize_for_accelerator.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/graph/op_table.h"
#include "core/graph/ops/elementwise.h"
#include "core/graph/ops/nn_conv.h"
#include "core/graph/ops/nn_matmul.h"
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/quant_ops.h"
#include "core/graph/ops/reduce.h"
#include "core/graph/ops/shape_ops.h"
#include "core/graph/passes/graph_rewrite.h"

namespace tessel {

namespace {

int64_t round_up(int64_t v, int64_t n) { return (v + n - 1) / n * n; }

Tensor int64_vector(const std::vector<int64_t>& values) {
  Tensor t(DataType::kInt64, Shape{static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

// One float product to offload, as a matrix product per image:
//   out[image, r, o] = Σ_k x_flat[image, rows[r, k]] · weight[o, k]      (+ bias[o])
struct Product {
  NodeId node = -1;
  ValueId x = kNoValue, out = kNoValue;
  int64_t images = 1, image_elements = 0;  // x as [images, image_elements]
  int64_t rows = 0, depth = 0, channels = 0;
  std::vector<int64_t> table;  // [rows, depth]: the element of an image each product reads, -1: zero
  Tensor weight;               // f32 [channels, depth]
  std::optional<Tensor> bias;  // f32 [channels]
  Shape out_shape;             // of the float result
  bool nchw = false;           // a conv: out is [images, rows = OH·OW, channels] transposed to NCHW
  // An integer convolution (ConvInteger, QLinearConv of a QDQ model): its declared int8 weights
  // and scales are used as they are. x is 8-bit with zero point x_zero; uint8 is moved to int8 by
  // -128 (exact), and the products of the move are added back per channel.
  bool integer = false;
  bool qlinear = false;             // QLinearConv: requantized to its declared output scale
  ValueId y_zero = kNoValue;        // QLinearConv's output zero point
  int64_t x_zero = 0;               // the input's zero point
  double x_scale = 1, y_scale = 1;  // QLinearConv's declared scales
  std::vector<double> w_scale;      // per output channel (QLinearConv)
  std::optional<Tensor> int_bias;   // int32 [channels] (QLinearConv's B)
};

class AcceleratorQuantizer {
 public:
  AcceleratorQuantizer(Graph& g, int64_t n, bool tiled) : g_(g), n_(n), tiled_(tiled), dead_(g.nodes.size(), false) {}

  bool run() {
    const auto count = static_cast<NodeId>(g_.nodes.size());
    for (NodeId id = 0; id < count; ++id) {
      std::optional<Product> p;
      const std::string& op = g_.nodes[id].op->name;
      if (op == "Conv") p = conv(id);
      if (op == "ConvInteger" || op == "QLinearConv") p = integer_conv(id);
      if (op == "Gemm" || op == "MatMul") p = dense(id);
      if (p) offload(*p);
    }
    if (!changed_) return false;
    compact(g_, dead_);
    infer_types(g_);
    return true;
  }

 private:
  const Tensor* constant(ValueId v) const { return v != kNoValue && g_.is_constant(v) ? &g_.value(v).value : nullptr; }
  const TensorType& type(ValueId v) const { return g_.value(v).type; }

  std::optional<Product> conv(NodeId id) const {
    const Node& node = g_.nodes[id];
    const Tensor* w = constant(node.inputs[1]);
    const Tensor* b = node.inputs.size() > 2 ? constant(node.inputs[2]) : nullptr;
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && !b) return std::nullopt;
    if (!w || type(node.inputs[0]).dtype != DataType::kFloat32) return std::nullopt;
    std::optional<Product> p = window(id, node.inputs[0], *w);
    if (p && b) p->bias = *b;
    return p;
  }

  // The value of a constant scalar (one element), or nullopt.
  std::optional<double> scalar(ValueId v) const {
    const Tensor* t = constant(v);
    return t && t->numel() == 1 ? std::optional<double>(t->get_double(0)) : std::nullopt;
  }
  bool all_zero(ValueId v) const {
    if (v == kNoValue) return true;
    const Tensor* t = constant(v);
    if (!t) return false;
    for (int64_t i = 0; i < t->numel(); ++i)
      if (t->get_double(i) != 0) return false;
    return true;
  }

  // ConvInteger(x, w, x_zero, w_zero) and QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B) with constant
  // int8 weights of zero point 0 and a constant per-tensor input zero point.
  std::optional<Product> integer_conv(NodeId id) const {
    const Node& node = g_.nodes[id];
    const bool qlinear = node.op->name == "QLinearConv";
    auto input = [&](size_t k) { return k < node.inputs.size() ? node.inputs[k] : kNoValue; };
    const ValueId x = input(0), w = input(qlinear ? 3 : 1);
    const ValueId x_zero = input(qlinear ? 2 : 2), w_zero = input(qlinear ? 5 : 3);
    const DataType xt = type(x).dtype;
    const Tensor* weights = constant(w);
    if (!weights || weights->dtype() != DataType::kInt8 || !all_zero(w_zero)) return std::nullopt;
    if (xt != DataType::kUInt8 && xt != DataType::kInt8) return std::nullopt;
    std::optional<double> zx = x_zero == kNoValue ? std::optional<double>(0) : scalar(x_zero);
    if (!zx) return std::nullopt;
    Tensor as_float(DataType::kFloat32, weights->shape());
    for (int64_t i = 0; i < as_float.numel(); ++i) as_float.set_double(i, weights->get_double(i));
    std::optional<Product> p = window(id, x, as_float);
    if (!p) return std::nullopt;
    p->integer = true, p->qlinear = qlinear, p->x_zero = static_cast<int64_t>(*zx);
    if (qlinear) {
      const std::optional<double> sx = scalar(input(1)), sy = scalar(input(6));
      const Tensor* sw = constant(input(4));
      if (!sx || !sy || !sw || !constant(input(7)) || constant(input(7))->numel() != 1) return std::nullopt;
      if (input(8) != kNoValue && !constant(input(8))) return std::nullopt;
      p->x_scale = *sx, p->y_scale = *sy, p->y_zero = input(7);
      for (int64_t o = 0; o < p->channels; ++o) p->w_scale.push_back(sw->get_double(sw->numel() == 1 ? 0 : o));
      if (input(8) != kNoValue) p->int_bias = constant(input(8))->reshaped(Shape{p->channels});
    }
    return p;
  }

  // A 2-D convolution of one group as im2col rows by the weights.
  std::optional<Product> window(NodeId id, ValueId x, const Tensor& weight) const {
    const Node& node = g_.nodes[id];
    const auto& a = attrs_as<ops::ConvAttrs>(node.attrs);
    const Shape& xs = type(x).shape;
    const Tensor* w = &weight;
    if (a.group != 1 || xs.size() != 4 || weight.shape().size() != 4) return std::nullopt;
    const Shape& ws = w->shape();
    const ops::nn::WindowGeometry geo = ops::nn::resolve_window(
        "Conv", {xs[2], xs[3]}, {ws[2], ws[3]},
        {.auto_pad = a.auto_pad, .strides = a.strides, .dilations = a.dilations, .pads = a.pads, .ceil_mode = false});
    Product p;
    p.node = id, p.x = x, p.out = node.outputs[0], p.nchw = true;
    const int64_t c = xs[1], h = xs[2], wd = xs[3], oh = geo.output[0], ow = geo.output[1];
    p.images = xs[0], p.image_elements = c * h * wd;
    p.rows = oh * ow, p.depth = c * ws[2] * ws[3], p.channels = ws[0];
    p.table.assign(static_cast<size_t>(p.rows * p.depth), -1);
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t ky = 0; ky < ws[2]; ++ky)
            for (int64_t kx = 0; kx < ws[3]; ++kx) {
              const int64_t iy = oy * geo.stride[0] - geo.pad_begin[0] + ky * geo.dilation[0];
              const int64_t ix = ox * geo.stride[1] - geo.pad_begin[1] + kx * geo.dilation[1];
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              const int64_t k = (ch * ws[2] + ky) * ws[3] + kx;
              p.table[static_cast<size_t>((oy * ow + ox) * p.depth + k)] = (ch * h + iy) * wd + ix;
            }
    p.weight = w->reshaped(Shape{p.channels, p.depth});
    p.out_shape = {xs[0], p.channels, oh, ow};
    return p;
  }

  // Gemm (no transposed A, alpha 1, a constant B and C of one value per column, or beta 0) and
  // MatMul of a 2-D input by a constant 2-D weight.
  std::optional<Product> dense(NodeId id) const {
    const Node& node = g_.nodes[id];
    const ValueId x = node.inputs[0];
    const Tensor* w = constant(node.inputs[1]);
    if (!w || type(x).shape.size() != 2 || w->shape().size() != 2 || type(x).dtype != DataType::kFloat32)
      return std::nullopt;
    bool transposed = false;
    std::optional<Tensor> bias;
    if (node.op->name == "Gemm") {
      const auto& a = attrs_as<ops::GemmAttrs>(node.attrs);
      if (a.transA || a.alpha != 1.0f) return std::nullopt;
      transposed = a.transB != 0;
      if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && a.beta != 0.0f) {
        const Tensor* c = constant(node.inputs[2]);
        const int64_t columns = transposed ? w->shape()[0] : w->shape()[1];
        if (!c || c->numel() != columns || c->dtype() != DataType::kFloat32) return std::nullopt;
        Tensor scaled(DataType::kFloat32, Shape{columns});
        for (int64_t o = 0; o < columns; ++o) scaled.set_double(o, a.beta * c->get_double(o));
        bias = std::move(scaled);
      }
    }
    Product p;
    p.node = id, p.x = x, p.out = node.outputs[0];
    const int64_t m = type(x).shape[0], k = type(x).shape[1];
    p.images = 1, p.image_elements = m * k, p.rows = m, p.depth = k;
    p.channels = transposed ? w->shape()[0] : w->shape()[1];
    p.table.resize(static_cast<size_t>(m * k));
    for (int64_t i = 0; i < m * k; ++i) p.table[static_cast<size_t>(i)] = i;
    p.weight = Tensor(DataType::kFloat32, Shape{p.channels, k});
    for (int64_t o = 0; o < p.channels; ++o)
      for (int64_t r = 0; r < k; ++r)
        p.weight.set_double(o * k + r, w->get_double(transposed ? o * k + r : r * p.channels + o));
    p.bias = std::move(bias);
    p.out_shape = {m, p.channels};
    return p;
  }

  ValueId node(const std::string& what, const char* op, Attrs attrs, std::vector<ValueId> inputs) {
    return g_.add_node1(g_.unique_name(base_ + "_" + what), get_op(op), std::move(attrs), std::move(inputs));
  }
  ValueId constant_value(const std::string& what, Tensor t) {
    return g_.add_constant(g_.unique_name(base_ + "_" + what), std::move(t));
  }
  ValueId shape_constant(const std::string& what, const std::vector<int64_t>& v) {
    return constant_value(what, int64_vector(v));
  }

  void offload(const Product& p) {
    base_ = g_.nodes[p.node].name;
    const int64_t rows = round_up(p.rows, n_), depth = round_up(p.depth, n_), channels = round_up(p.channels, n_);

    // The weights, per output channel, as the core's [K', N'] operand.
    Tensor wq(DataType::kInt8, Shape{depth, channels});
    Tensor sw(DataType::kFloat32, Shape{p.channels});
    for (int64_t o = 0; o < p.channels; ++o) {
      double top = 0;
      for (int64_t k = 0; k < p.depth; ++k) top = std::max(top, std::abs(p.weight.get_double(o * p.depth + k)));
      const double scale = p.integer ? 1 : top > 0 ? top / 127 : 1;  // declared int8 weights stay as they are
      sw.set_double(o, scale);
      for (int64_t k = 0; k < p.depth; ++k)
        wq.set_double(k * channels + o,
                      std::clamp(std::nearbyint(p.weight.get_double(o * p.depth + k) / scale), -128.0, 127.0));
    }
    ValueId sx = kNoValue, xq = p.x;
    int64_t shift = 0;  // xq = x - shift, int8
    if (p.integer && type(p.x).dtype == DataType::kUInt8) {
      // uint8 → int8 by -128, exactly: dequantize with zero point 128, quantize with zero point 0.
      shift = 128;
      ops::DequantizeLinearAttrs d;
      Tensor one(DataType::kFloat32, Shape{});
      one.set_double(0, 1.0);
      Tensor middle(DataType::kUInt8, Shape{});
      middle.set_double(0, 128);
      const ValueId moved = node("centered", "DequantizeLinear", make_attrs(d),
                                 {p.x, constant_value("unit", one), constant_value("middle", middle)});
      xq = node("shifted", "QuantizeLinear", make_attrs(ops::QuantizeLinearAttrs{}),
                {moved, constant_value("unit", one), constant_value("zero_point", Tensor(DataType::kInt8, Shape{}))});
    } else if (!p.integer) {
      // The activation's scale, from this run's values.
      ops::ReduceAttrs all;
      all.keepdims = 0;
      const ValueId top =
          node("absmax", "ReduceMax", make_attrs(all), {node("abs", "Abs", make_attrs(NoAttrs{}), {p.x})});
      Tensor step(DataType::kFloat32, Shape{});
      step.set_double(0, 127.0);
      Tensor tiny(DataType::kFloat32, Shape{});
      tiny.set_double(0, 1e-30);
      sx = node("scale", "Max", make_attrs(NoAttrs{}),
                {node("scale_raw", "Div", make_attrs(NoAttrs{}), {top, constant_value("levels", step)}),
                 constant_value("tiny", tiny)});
      ops::QuantizeLinearAttrs q;
      q.axis = 1;
      xq = node("quantized", "QuantizeLinear", make_attrs(q),
                {p.x, sx, constant_value("zero_point", Tensor(DataType::kInt8, Shape{}))});
    }
    // The padding reads the input's zero (x = x_zero, so x - x_zero = 0): x_zero - shift after the move.
    Tensor pad_value(DataType::kInt8, Shape{});
    pad_value.set_double(0, static_cast<double>(p.x_zero - shift));
    // im2col rows through the index table; index image_elements is the zero after the image.
    const ValueId flat = node("flat", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                              {xq, shape_constant("flat_shape", {p.images, p.image_elements})});
    const ValueId padded = node("padded", "Pad", make_attrs(ops::PadAttrs{}),
                                {flat, shape_constant("pads", {0, 0, 0, 1}), constant_value("pad_value", pad_value)});
    Tensor table(DataType::kInt64, Shape{rows, depth});
    int64_t* t = table.data<int64_t>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < depth; ++k) {
        const int64_t e = r < p.rows && k < p.depth ? p.table[static_cast<size_t>(r * p.depth + k)] : -1;
        t[r * depth + k] = e < 0 ? p.image_elements : e;
      }
    ops::GatherAttrs along;
    along.axis = 1;
    const ValueId tiles = node("im2col", "Gather", make_attrs(along), {padded, constant_value("im2col_rows", table)});
    const ValueId a = node("gemm_input", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                           {tiles, shape_constant("gemm_input_shape", {p.images * rows, depth})});
    ValueId per_image;
    if (tiled_) {
      // The tiled layout: the weights as columns of n×n tiles, [N'/n, K', n], each column's tiles
      // one after another, so the product is [N'/n, N·M', n], one output tile contiguous too. Back
      // to rows on the host, where it fuses with the requantization.
      const int64_t column_tiles = channels / n_;
      const ValueId acc = node("gemm_tiled_layout", "MatMulInteger", make_attrs(NoAttrs{}),
                               {a, constant_value("weight_i8_tiled_layout", column_tiles_of(wq))});
      const ValueId tiles = node("tiled_layout_tiles", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                                 {acc, shape_constant("tiled_layout_tiles_shape", {column_tiles, p.images, rows, n_})});
      ops::TransposeAttrs untile;
      untile.perm = {1, 2, 0, 3};
      per_image = node("tiled_layout_rows", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                       {node("tiled_layout_untile", "Transpose", make_attrs(untile), {tiles}),
                        shape_constant("per_image_shape", {p.images, rows, channels})});
    } else {
      const ValueId acc = node("gemm", "MatMulInteger", make_attrs(NoAttrs{}), {a, constant_value("weight_i8", wq)});
      per_image = node("per_image", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                       {acc, shape_constant("per_image_shape", {p.images, rows, channels})});
    }
    // Back to float on the host: the real rows and channels, times both scales, plus the bias.
    const ValueId real = node("real", "Slice", make_attrs(NoAttrs{}),
                              {per_image, shape_constant("starts", {0, 0}),
                               shape_constant("ends", {p.rows, p.channels}), shape_constant("axes", {1, 2})});
    ValueId out;
    if (p.integer) {
      // Σ (x - x_zero)·w = Σ (x - shift)·w + (shift - x_zero)·Σ w, per output channel; plus B.
      Tensor add(DataType::kInt32, Shape{p.channels});
      for (int64_t o = 0; o < p.channels; ++o) {
        int64_t column = 0;
        for (int64_t k = 0; k < p.depth; ++k) column += static_cast<int64_t>(p.weight.get_double(o * p.depth + k));
        add.set_double(o, static_cast<double>((shift - p.x_zero) * column +
                                              (p.int_bias ? static_cast<int64_t>(p.int_bias->get_double(o)) : 0)));
      }
      out = node("corrected", "Add", make_attrs(NoAttrs{}), {real, constant_value("correction", add)});
      if (p.qlinear) {
        ops::CastAttrs to_float;
        to_float.to = DataType::kFloat32;
        Tensor scale(DataType::kFloat32, Shape{p.channels});
        for (int64_t o = 0; o < p.channels; ++o)
          scale.set_double(o, p.x_scale * p.w_scale[static_cast<size_t>(o)] / p.y_scale);
        Tensor one(DataType::kFloat32, Shape{});
        one.set_double(0, 1.0);
        out = node("rescaled", "Mul", make_attrs(NoAttrs{}),
                   {node("float", "Cast", make_attrs(to_float), {out}), constant_value("requant_scale", scale)});
        out = node("requantized", "QuantizeLinear", make_attrs(ops::QuantizeLinearAttrs{}),
                   {out, constant_value("unit", one), p.y_zero});
      }
    } else {
      ops::CastAttrs to_float;
      to_float.to = DataType::kFloat32;
      const ValueId f = node("float", "Cast", make_attrs(to_float), {real});
      const ValueId scale =
          node("requant_scale", "Mul", make_attrs(NoAttrs{}), {sx, constant_value("weight_scale", sw)});
      out = node("scaled", "Mul", make_attrs(NoAttrs{}), {f, scale});
      if (p.bias) out = node("biased", "Add", make_attrs(NoAttrs{}), {out, constant_value("bias", *p.bias)});
    }
    if (p.nchw) {
      const Shape& s = p.out_shape;
      out = node("nhwc", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                 {out, shape_constant("nhwc_shape", {s[0], s[2], s[3], s[1]})});
      ops::TransposeAttrs to_nchw;
      to_nchw.perm = {0, 3, 1, 2};
      out = node("nchw", "Transpose", make_attrs(to_nchw), {out});
    } else {
      out = node("matrix", "Reshape", make_attrs(ops::ReshapeAttrs{}),
                 {out, shape_constant("matrix_shape", p.out_shape)});
    }
    const std::string name = g_.value(p.out).name;
    replace_uses(g_, p.out, out);
    if (g_.value(out).name != name) std::swap(g_.value(out).name, g_.value(p.out).name);
    dead_.resize(g_.nodes.size(), false);
    dead_[p.node] = true;
    changed_ = true;
  }

  // [K', N'] → [N'/n, K', n]: column tile t is rows [t][k][0..n) = columns t·n .. t·n + n of row k.
  Tensor column_tiles_of(const Tensor& w) const {
    const int64_t depth = w.shape()[0], channels = w.shape()[1];
    Tensor out(DataType::kInt8, Shape{channels / n_, depth, n_});
    const int8_t* from = w.data<int8_t>();
    int8_t* to = out.data<int8_t>();
    for (int64_t t = 0; t < channels / n_; ++t)
      for (int64_t k = 0; k < depth; ++k) std::copy_n(from + k * channels + t * n_, n_, to + (t * depth + k) * n_);
    return out;
  }

  Graph& g_;
  int64_t n_;
  bool tiled_;
  std::vector<bool> dead_;
  std::string base_;
  bool changed_ = false;
};

}  // namespace

bool quantize_for_accelerator(Graph& g, PassContext& ctx) {
  const TargetTraits traits = ctx.traits();
  if (!traits.is_accelerator()) return false;
  return AcceleratorQuantizer(g, traits.accelerator.gemm, traits.accelerator.tiled_layout).run();
}

}  // namespace tessel
