#include "core/graph/passes/simplify_inference.h"

#include <cmath>
#include <numeric>

#include "core/graph/op_table.h"
#include "core/graph/ops/nn_matmul.h"
#include "core/graph/ops/nn_norm.h"
#include "core/graph/ops/shape_ops.h"
#include "core/graph/passes/graph_rewrite.h"

namespace tessel {

namespace {

class Simplifier {
 public:
  explicit Simplifier(Graph& g) : g_(g), dead_(g.nodes.size(), false) {}

  bool run() {
    for (NodeId id = 0; id < static_cast<NodeId>(g_.nodes.size()); ++id) {
      const std::string& op = g_.nodes[id].op->name;
      if (op == "Identity" || op == "Dropout") remove_passthrough(id);
      else if (op == "BatchNormalization") fold_batch_norm(id);
      else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") simplify_reshape(id);
      else if (op == "Transpose") simplify_transpose(id);
    }
    if (!changed_) return false;
    compact(g_, dead_);
    infer_types(g_);
    return true;
  }

 private:
  std::vector<int> uses() const { return use_counts(g_); }
  bool output_unused(ValueId v) const { return uses()[v] == 0; }
  bool is_graph_output(ValueId v) const {
    for (ValueId o : g_.outputs)
      if (o == v) return true;
    return false;
  }

  void bypass(NodeId id, ValueId from, ValueId to) {
    replace_uses(g_, from, to);
    dead_[id] = true;
    changed_ = true;
  }

  void remove_passthrough(NodeId id) {
    const Node& n = g_.nodes[id];
    for (size_t k = 1; k < n.outputs.size(); ++k)
      if (!output_unused(n.outputs[k])) return;  // Dropout's mask is read: keep it
    ValueId in = n.inputs[0], out = n.outputs[0];
    // A graph input passed straight to a graph output keeps its node, so the output keeps its name.
    if (is_graph_output(out) && g_.value(in).producer < 0) return;
    bypass(id, out, in);
  }

  const Tensor* constant(ValueId v) const {
    return v != kNoValue && g_.is_constant(v) ? &g_.value(v).value : nullptr;
  }

  // Per-channel factors s = scale / sqrt(var + eps) and shift t = B − mean·s of a batch norm whose
  // parameters are constants; false when they are not.
  bool batch_norm_affine(const Node& bn, std::vector<double>& s, std::vector<double>& t) const {
    const Tensor *scale = constant(bn.inputs[1]), *bias = constant(bn.inputs[2]), *mean = constant(bn.inputs[3]),
                 *var = constant(bn.inputs[4]);
    if (!scale || !bias || !mean || !var) return false;
    const auto& a = attrs_as<ops::BatchNormalizationAttrs>(bn.attrs);
    if (a.training_mode != 0) return false;
    const int64_t c = scale->numel();
    if (bias->numel() != c || mean->numel() != c || var->numel() != c) return false;
    s.resize(c);
    t.resize(c);
    for (int64_t i = 0; i < c; ++i) {
      s[i] = scale->get_double(i) / std::sqrt(var->get_double(i) + static_cast<double>(a.epsilon));
      t[i] = bias->get_double(i) - mean->get_double(i) * s[i];
    }
    return true;
  }

  ValueId add_constant(const std::string& base, Tensor t) { return g_.add_constant(g_.unique_name(base), std::move(t)); }

  void fold_batch_norm(NodeId id) {
    const Node& bn = g_.nodes[id];
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      if (!output_unused(bn.outputs[k])) return;
    const ValueId x = bn.inputs[0];
    const NodeId p = g_.value(x).producer;
    if (p < 0 || dead_[p] || uses()[x] != 1 || is_graph_output(x)) return;
    if (g_.value(x).type.dtype != DataType::kFloat32) return;
    std::vector<double> s, t;
    if (!batch_norm_affine(bn, s, t)) return;
    const int64_t channels = static_cast<int64_t>(s.size());
    Node& prod = g_.nodes[p];
    if (prod.op->name == "Conv") {
      const Tensor* w = constant(prod.inputs[1]);
      if (!w || w->dtype() != DataType::kFloat32 || w->rank() < 1 || w->shape()[0] != channels) return;
      const Tensor* b = prod.inputs.size() > 2 ? constant(prod.inputs[2]) : nullptr;
      if (prod.inputs.size() > 2 && prod.inputs[2] != kNoValue && !b) return;
      Tensor w2(DataType::kFloat32, w->shape());
      const int64_t per_channel = w->numel() / channels;
      const float* src = w->data<float>();
      float* dst = w2.data<float>();
      for (int64_t o = 0; o < channels; ++o)
        for (int64_t i = 0; i < per_channel; ++i)
          dst[o * per_channel + i] = static_cast<float>(src[o * per_channel + i] * s[o]);
      Tensor b2(DataType::kFloat32, {channels});
      for (int64_t o = 0; o < channels; ++o)
        b2.set_double(o, (b ? b->get_double(o) : 0.0) * s[o] + t[o]);
      const std::string base = prod.name;
      ValueId wv = add_constant(base + "_w_bn", std::move(w2));
      ValueId bv = add_constant(base + "_b_bn", std::move(b2));
      Node& conv = g_.nodes[p];  // add_constant does not move nodes, but keep the reference fresh
      conv.inputs.resize(3, kNoValue);
      conv.inputs[1] = wv;
      conv.inputs[2] = bv;
      bypass(id, g_.nodes[id].outputs[0], x);
    } else if (prod.op->name == "Gemm") {
      fold_into_gemm(id, p, s, t);
    }
  }

  // Gemm: Y = alpha·A'·B' + beta·C with output channels on axis 1 (columns).
  void fold_into_gemm(NodeId bn_id, NodeId p, const std::vector<double>& s, const std::vector<double>& t) {
    Node& gemm = g_.nodes[p];
    const auto& a = attrs_as<ops::GemmAttrs>(gemm.attrs);
    const Tensor* b = constant(gemm.inputs[1]);
    const int64_t n = static_cast<int64_t>(s.size());
    if (!b || b->dtype() != DataType::kFloat32 || b->rank() != 2) return;
    const int64_t cols = a.transB ? b->shape()[0] : b->shape()[1];
    if (cols != n) return;
    const Tensor* c = gemm.inputs.size() > 2 ? constant(gemm.inputs[2]) : nullptr;
    if (gemm.inputs.size() > 2 && gemm.inputs[2] != kNoValue && !c) return;
    // C must be a per-column vector (or a scalar) to fold into a new per-column bias.
    if (c && !(c->numel() == 1 || c->numel() == n) ) return;
    if (c && c->numel() == n && c->rank() == 2 && c->shape()[0] != 1) return;
    Tensor b2 = b->clone();
    float* w = b2.data<float>();
    const int64_t rows = b->numel() / n;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) {
        int64_t idx = a.transB ? j * rows + r : r * n + j;
        w[idx] = static_cast<float>(w[idx] * s[j]);
      }
    Tensor c2(DataType::kFloat32, {n});
    for (int64_t j = 0; j < n; ++j) {
      double cj = c ? c->get_double(c->numel() == 1 ? 0 : j) * static_cast<double>(a.beta) : 0.0;
      c2.set_double(j, cj * s[j] + t[j]);
    }
    ops::GemmAttrs na = a;
    na.beta = 1.0f;
    const std::string base = gemm.name;
    ValueId bv = add_constant(base + "_w_bn", std::move(b2));
    ValueId cv = add_constant(base + "_c_bn", std::move(c2));
    Node& gm = g_.nodes[p];
    gm.attrs = make_attrs(na);
    gm.inputs.resize(3, kNoValue);
    gm.inputs[1] = bv;
    gm.inputs[2] = cv;
    bypass(bn_id, g_.nodes[bn_id].outputs[0], gm.outputs[0]);
  }

  static bool is_reshape_like(const std::string& op) {
    return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
  }

  void simplify_reshape(NodeId id) {
    Node& n = g_.nodes[id];
    const ValueId in = n.inputs[0], out = n.outputs[0];
    const Shape out_shape = g_.value(out).type.shape;  // a copy: add_constant below grows g_.values
    if (g_.value(in).type.shape == out_shape && !(is_graph_output(out) && g_.value(in).producer < 0)) {
      bypass(id, out, in);
      return;
    }
    const NodeId p = g_.value(in).producer;
    if (p < 0 || !is_reshape_like(g_.nodes[p].op->name)) return;
    // Reshape straight from the chain's source to this node's (static) shape.
    const ValueId source = g_.nodes[p].inputs[0];
    std::vector<int64_t> dims(out_shape.begin(), out_shape.end());
    ops::ReshapeAttrs ra;
    ra.allowzero = std::find(dims.begin(), dims.end(), 0) != dims.end() ? 1 : 0;
    ValueId shape = add_constant(n.name + "_shape", Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims));
    Node& node = g_.nodes[id];
    node.op = &get_op("Reshape");
    node.attrs = make_attrs(ra);
    node.inputs = {source, shape};
    changed_ = true;
    if (g_.value(source).type.shape == out_shape && !(is_graph_output(out) && g_.value(source).producer < 0))
      bypass(id, out, source);
  }

  static std::vector<int64_t> full_perm(const std::vector<int64_t>& perm, size_t rank) {
    if (!perm.empty()) return perm;
    std::vector<int64_t> p(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
    return p;
  }

  void simplify_transpose(NodeId id) {
    Node& n = g_.nodes[id];
    const ValueId in = n.inputs[0], out = n.outputs[0];
    const size_t rank = g_.value(in).type.shape.size();
    std::vector<int64_t> perm = full_perm(attrs_as<ops::TransposeAttrs>(n.attrs).perm, rank);
    ValueId source = in;
    const NodeId p = g_.value(in).producer;
    if (p >= 0 && g_.nodes[p].op->name == "Transpose") {
      // out axis k = mid axis perm[k] = source axis first[perm[k]].
      std::vector<int64_t> first = full_perm(attrs_as<ops::TransposeAttrs>(g_.nodes[p].attrs).perm, rank);
      std::vector<int64_t> composed(rank);
      for (size_t k = 0; k < rank; ++k) composed[k] = first[perm[k]];
      perm = composed;
      source = g_.nodes[p].inputs[0];
    }
    bool identity = true;
    for (size_t k = 0; k < rank; ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
    if (identity) {
      if (is_graph_output(out) && g_.value(source).producer < 0) return;
      bypass(id, out, source);
      return;
    }
    if (source != in) {
      ops::TransposeAttrs ta;
      ta.perm = perm;
      n.attrs = make_attrs(ta);
      n.inputs[0] = source;
      changed_ = true;
    }
  }

  Graph& g_;
  std::vector<bool> dead_;
  bool changed_ = false;
};

}  // namespace

bool simplify_inference(Graph& g, PassContext&) { return Simplifier(g).run(); }

}  // namespace tessel
