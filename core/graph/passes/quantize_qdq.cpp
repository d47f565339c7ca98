#include "core/graph/passes/quantize_qdq.h"

#include <cmath>
#include <optional>

#include "core/graph/op_table.h"
#include "core/graph/ops/elementwise.h"
#include "core/graph/ops/quant_ops.h"
#include "core/graph/passes/graph_rewrite.h"

namespace tessel {

namespace {

bool is_8bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// A DequantizeLinear read by the float op: its quantized input, scale and zero point (kNoValue when
// omitted) and the axis a per-axis scale runs along (-1 when per tensor).
struct Dequantized {
  NodeId node = -1;
  ValueId q = kNoValue, scale = kNoValue, zero_point = kNoValue;
  int64_t axis = -1;
};

class QdqRewriter {
 public:
  explicit QdqRewriter(Graph& g) : g_(g), dead_(g.nodes.size(), false), uses_(use_counts(g)) {}

  bool run() {
    const auto n_nodes = static_cast<NodeId>(g_.nodes.size());
    for (NodeId id = 0; id < n_nodes; ++id)
      if (g_.nodes[id].op->name == "QuantizeLinear") rewrite(id);
    for (NodeId id = 0; id < n_nodes; ++id)
      if (!dead_[id] && g_.nodes[id].op->name == "Conv") integer_conv(id);
    if (!changed_) return false;
    compact(g_, dead_);
    infer_types(g_);
    return true;
  }

 private:
  const Tensor* constant(ValueId v) const { return v != kNoValue && g_.is_constant(v) ? &g_.value(v).value : nullptr; }
  const TensorType& type(ValueId v) const { return g_.value(v).type; }

  // The node producing `v` when `v`'s only reader is the node being matched; -1 otherwise.
  NodeId sole_producer(ValueId v) const {
    const NodeId p = g_.value(v).producer;
    return p >= 0 && !dead_[p] && uses_[v] == 1 ? p : -1;
  }

  // Scale and zero point of one value each (a constant; an omitted zero point counts).
  bool per_tensor_constants(ValueId scale, ValueId zero_point) const {
    const Tensor* s = constant(scale);
    if (!s || s->dtype() != DataType::kFloat32 || !ops::quant::per_tensor(s->shape())) return false;
    if (zero_point == kNoValue) return true;
    const Tensor* z = constant(zero_point);
    return z && ops::quant::per_tensor(z->shape());
  }

  std::optional<Dequantized> dequantized(ValueId v) const {
    const NodeId p = g_.value(v).producer;
    if (p < 0 || dead_[p] || type(v).dtype != DataType::kFloat32) return std::nullopt;
    const Node& n = g_.nodes[p];
    if (n.op->name != "DequantizeLinear") return std::nullopt;
    const auto& a = attrs_as<ops::DequantizeLinearAttrs>(n.attrs);
    if (a.block_size != 0) return std::nullopt;
    Dequantized d{p, n.inputs[0], n.inputs[1], n.inputs.size() > 2 ? n.inputs[2] : kNoValue, -1};
    const Tensor* s = constant(d.scale);
    if (!s || s->dtype() != DataType::kFloat32) return std::nullopt;
    if (d.zero_point != kNoValue) {
      const Tensor* z = constant(d.zero_point);
      const bool both_one = z && ops::quant::per_tensor(z->shape()) && ops::quant::per_tensor(s->shape());
      if (!z || !(both_one || z->shape() == s->shape())) return std::nullopt;
    }
    if (!ops::quant::per_tensor(s->shape())) {
      const auto rank = static_cast<int64_t>(type(d.q).shape.size());
      if (s->rank() != 1 || a.axis < -rank || a.axis >= rank) return std::nullopt;
      d.axis = a.axis < 0 ? a.axis + rank : a.axis;
    }
    return d;
  }

  // An explicit zero point: the given one, or new constant zeros of `dtype` shaped like the scale.
  ValueId zero_point_or_zero(ValueId zp, ValueId scale, DataType dtype, const std::string& base) {
    if (zp != kNoValue) return zp;
    return g_.add_constant(g_.unique_name(base + "_zero_point"), Tensor(dtype, type(scale).shape));
  }

  // Whether `b` dequantizes an int32 bias of `channels` values the way QLinearConv reads its B:
  // zero point 0 and scale x_scale·w_scale per channel (within float32 rounding).
  bool bias_matches(const Dequantized& b, const Dequantized& x, const Dequantized& w, int64_t channels) const {
    if (type(b.q).dtype != DataType::kInt32 || type(b.q).shape != Shape{channels}) return false;
    if (b.axis > 0) return false;
    if (b.zero_point != kNoValue) {
      const Tensor& z = *constant(b.zero_point);
      for (int64_t i = 0; i < z.numel(); ++i)
        if (z.get_double(i) != 0) return false;
    }
    const Tensor &sb = *constant(b.scale), &sx = *constant(x.scale), &sw = *constant(w.scale);
    if (sb.numel() != 1 && sb.numel() != channels) return false;
    for (int64_t c = 0; c < channels; ++c) {
      const double want = static_cast<double>(static_cast<float>(sx.get_double(0)) *
                                              static_cast<float>(sw.get_double(sw.numel() == 1 ? 0 : c)));
      const double got = sb.get_double(sb.numel() == 1 ? 0 : c);
      if (std::abs(got - want) > 4e-7 * std::abs(want)) return false;  // a few float32 ulps
    }
    return true;
  }

  // The operands of an integer Conv: x and y per tensor, w per tensor or per output channel.
  bool conv_operands_match(const Node& conv, const Dequantized& x, const Dequantized& w) const {
    if (!is_8bit(type(x.q).dtype) || !is_8bit(type(w.q).dtype)) return false;
    if (type(x.q).shape.size() != 4 || type(w.q).shape.size() != 4) return false;
    if (x.axis != -1 || !per_tensor_constants(x.scale, x.zero_point)) return false;
    if (w.axis != -1 && (w.axis != 0 || constant(w.scale)->numel() != type(w.q).shape[0])) return false;
    return type(conv.outputs[0]).dtype == DataType::kFloat32;
  }

  // b per tensor or per column (the last axis of a matrix): what QLinearMatMul reads.
  bool matmul_operands_match(const Dequantized& a, const Dequantized& b) const {
    if (!is_8bit(type(a.q).dtype) || !is_8bit(type(b.q).dtype)) return false;
    if (a.axis != -1 || !per_tensor_constants(a.scale, a.zero_point)) return false;
    const auto b_rank = static_cast<int64_t>(type(b.q).shape.size());
    if (b.axis != -1 && (b_rank < 2 || b.axis != b_rank - 1)) return false;
    return true;
  }

  void rewrite(NodeId q_id) {
    const Node q = g_.nodes[q_id];
    const auto& qa = attrs_as<ops::QuantizeLinearAttrs>(q.attrs);
    const ValueId y_scale = q.inputs[1], y_zp = q.inputs.size() > 2 ? q.inputs[2] : kNoValue;
    const DataType y_type = type(q.outputs[0]).dtype;
    if (qa.block_size != 0 || !is_8bit(y_type) || !per_tensor_constants(y_scale, y_zp)) return;
    if (type(q.inputs[0]).dtype != DataType::kFloat32) return;

    // Optional Relu between the float op and the quantizer.
    NodeId relu = -1, core = sole_producer(q.inputs[0]);
    if (core < 0) return;
    if (g_.nodes[core].op->name == "Relu") {
      const double zp = y_zp == kNoValue ? 0.0 : constant(y_zp)->get_double(0);
      if (zp != static_cast<double>(ops::quant::int_range(y_type).lo)) return;
      relu = core;
      core = sole_producer(g_.nodes[relu].inputs[0]);
      if (core < 0) return;
    }
    const Node& op = g_.nodes[core];
    std::vector<ValueId> inputs;
    std::vector<NodeId> dequantizers;
    if (op.op->name == "Conv") {
      const auto x = dequantized(op.inputs[0]), w = dequantized(op.inputs[1]);
      if (!x || !w || !conv_operands_match(op, *x, *w)) return;
      std::optional<Dequantized> b;
      const bool has_bias = op.inputs.size() > 2 && op.inputs[2] != kNoValue;
      if (has_bias) {
        b = dequantized(op.inputs[2]);
        if (!b || !bias_matches(*b, *x, *w, type(w->q).shape[0])) return;
      }
      inputs = {x->q,
                x->scale,
                zero_point_or_zero(x->zero_point, x->scale, type(x->q).dtype, op.name + "_x"),
                w->q,
                w->scale,
                zero_point_or_zero(w->zero_point, w->scale, type(w->q).dtype, op.name + "_w"),
                y_scale,
                zero_point_or_zero(y_zp, y_scale, y_type, op.name + "_y")};
      dequantizers = {x->node, w->node};
      if (b) {
        inputs.push_back(b->q);
        dequantizers.push_back(b->node);
      }
    } else if (op.op->name == "MatMul") {
      const auto a = dequantized(op.inputs[0]), b = dequantized(op.inputs[1]);
      if (!a || !b || !matmul_operands_match(*a, *b)) return;
      inputs = {a->q,
                a->scale,
                zero_point_or_zero(a->zero_point, a->scale, type(a->q).dtype, op.name + "_a"),
                b->q,
                b->scale,
                zero_point_or_zero(b->zero_point, b->scale, type(b->q).dtype, op.name + "_b"),
                y_scale,
                zero_point_or_zero(y_zp, y_scale, y_type, op.name + "_y")};
      dequantizers = {a->node, b->node};
    } else {
      return;
    }
    const Node& matched = g_.nodes[core];  // add_constant may have grown values, not nodes
    const bool conv = matched.op->name == "Conv";
    const ValueId out = g_.add_node1(matched.name, get_op(conv ? "QLinearConv" : "QLinearMatMul"),
                                     conv ? matched.attrs : make_attrs(NoAttrs{}), inputs);
    // Typed now: a later match reads its dtype (infer_types runs once, at the end).
    g_.value(out).type = type(q.outputs[0]);
    dead_.resize(g_.nodes.size(), false);
    // The integer op's result takes the quantizer's output name (replace_uses already gives it a
    // graph output's), so readers see the same value.
    const std::string name = g_.value(q.outputs[0]).name;
    replace_uses(g_, q.outputs[0], out);
    if (g_.value(out).name != name) std::swap(g_.value(out).name, g_.value(q.outputs[0]).name);
    dead_[q_id] = dead_[core] = true;
    if (relu >= 0) dead_[relu] = true;
    // A dequantizer read only by the float op goes with it; one read elsewhere too stays.
    recount_uses();
    for (NodeId d : dequantizers)
      if (uses_[g_.nodes[d].outputs[0]] == 0) dead_[d] = true;
    recount_uses();
    changed_ = true;
  }

  // A Conv of dequantized operands whose float result is not quantized again (it feeds a float
  // residual Add, say): the products still accumulate exactly in int32, and one multiply per
  // channel by x_scale·w_scale gives the float result.
  //   %acc = ConvInteger(%xq, %wq, %zx, %zw);  %b = Add(%acc, %bq[M,1,1])
  //   %c = Mul(Cast(%b, f32), (x_scale·w_scale)[M,1,1])
  void integer_conv(NodeId id) {
    const Node conv = g_.nodes[id];
    const auto x = dequantized(conv.inputs[0]), w = dequantized(conv.inputs[1]);
    if (!x || !w || !conv_operands_match(conv, *x, *w)) return;
    const int64_t channels = type(w->q).shape[0];
    std::optional<Dequantized> b;
    if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) {
      b = dequantized(conv.inputs[2]);
      if (!b || !constant(b->q) || !bias_matches(*b, *x, *w, channels)) return;
    }
    const Tensor &sx = *constant(x->scale), &sw = *constant(w->scale);
    Tensor scale(DataType::kFloat32, Shape{channels, 1, 1});
    for (int64_t c = 0; c < channels; ++c)
      scale.set_double(
          c, static_cast<float>(sx.get_double(0)) * static_cast<float>(sw.get_double(sw.numel() == 1 ? 0 : c)));
    const std::string& base = conv.name;
    ValueId acc = g_.add_node1(g_.unique_name(base + "_integer"), get_op("ConvInteger"), conv.attrs,
                               {x->q, w->q, zero_point_or_zero(x->zero_point, x->scale, type(x->q).dtype, base + "_x"),
                                zero_point_or_zero(w->zero_point, w->scale, type(w->q).dtype, base + "_w")});
    if (b) {
      const ValueId bias =
          g_.add_constant(g_.unique_name(base + "_bias_i32"), constant(b->q)->reshaped(Shape{channels, 1, 1}));
      acc = g_.add_node1(g_.unique_name(base + "_bias"), get_op("Add"), make_attrs(NoAttrs{}), {acc, bias});
    }
    ops::CastAttrs to_float;
    to_float.to = DataType::kFloat32;
    const ValueId f = g_.add_node1(g_.unique_name(base + "_float"), get_op("Cast"), make_attrs(to_float), {acc});
    const ValueId scale_v = g_.add_constant(g_.unique_name(base + "_scale"), std::move(scale));
    const ValueId out = g_.add_node1(base, get_op("Mul"), make_attrs(NoAttrs{}), {f, scale_v});
    const std::string name = g_.value(conv.outputs[0]).name;
    replace_uses(g_, conv.outputs[0], out);
    if (g_.value(out).name != name) std::swap(g_.value(out).name, g_.value(conv.outputs[0]).name);
    dead_.resize(g_.nodes.size(), false);
    dead_[id] = true;
    recount_uses();
    for (NodeId d : {x->node, w->node, b ? b->node : NodeId{-1}})
      if (d >= 0 && uses_[g_.nodes[d].outputs[0]] == 0) dead_[d] = true;
    recount_uses();
    changed_ = true;
  }

  // Readers of each value among the nodes still alive.
  void recount_uses() {
    uses_ = use_counts(g_);
    for (NodeId n = 0; n < static_cast<NodeId>(dead_.size()); ++n)
      if (dead_[n])
        for (ValueId v : g_.nodes[n].inputs)
          if (v != kNoValue) --uses_[v];
  }

  Graph& g_;
  std::vector<bool> dead_;
  std::vector<int> uses_;
  bool changed_ = false;
};

}  // namespace

bool quantize_qdq(Graph& g, PassContext&) { return QdqRewriter(g).run(); }

}  // namespace tessel
