// Data layout transformation; the algorithm is described with a diagram in transform_layout.h.
#include "core/graph/passes/transform_layout.h"

#include <map>
#include <tuple>
#include <unordered_set>

#include "core/graph/layout.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/layout_ops.h"
#include "core/graph/ops/nn_matmul.h"
#include "core/graph/ops/nn_pool.h"
#include "core/graph/ops/shape_ops.h"
#include "core/target/register_tile.h"

namespace tessel {

std::string default_layout(size_t rank) {
  switch (rank) {
    case 0: return "";
    case 1: return "C";
    case 2: return "NC";
    case 3: return "NCW";
    case 4: return "NCHW";
    case 5: return "NCDHW";
    default: {
      std::string s;
      for (size_t i = 0; i < rank && i < 26; ++i) s += static_cast<char>('A' + i);
      return s;
    }
  }
}

namespace {

std::string blocked_nchw(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

// The largest divisor of `channels` not above the vector width: blocks never need padding.
int64_t channel_block(int64_t channels, int64_t vector_floats) {
  for (int64_t b = std::min(channels, vector_floats); b > 1; --b)
    if (channels % b == 0) return b;
  return 1;
}

// OIHW → OIHW{i}i{o}o, written out for speed: this touches every weight of the model.
Tensor block_conv_weights(const Tensor& w, int64_t ib, int64_t ob) {
  const Shape& s = w.shape();
  const int64_t o = s[0], i = s[1], kh = s[2], kw = s[3];
  Tensor out(DataType::kFloat32, {o / ob, i / ib, kh, kw, ib, ob});
  const float* src = w.data<float>();
  float* dst = out.data<float>();
  for (int64_t oo = 0; oo < o / ob; ++oo)
    for (int64_t io = 0; io < i / ib; ++io)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          for (int64_t ii = 0; ii < ib; ++ii)
            for (int64_t oi = 0; oi < ob; ++oi)
              *dst++ = src[(((oo * ob + oi) * i + io * ib + ii) * kh + y) * kw + x];
  return out;
}

class LayoutRewriter {
 public:
  LayoutRewriter(const Graph& old, int64_t vector_floats)
      : old_(old), vec_(vector_floats), map_(old.values.size(), kNoValue) {}

  Graph run() {
    g_.name = old_.name;
    for (const Value& v : old_.values) used_names_.insert(v.name);
    for (const Node& n : old_.nodes) used_names_.insert(n.name);
    mark_concatenated();
    for (ValueId v : old_.inputs) {
      const Value& ov = old_.value(v);
      ValueId nv = g_.add_input(ov.name, ov.type);
      g_.value(nv).value = ov.value;
      g_.value(nv).layout = default_layout(ov.type.shape.size());
      map_[v] = nv;
    }
    for (const Node& n : old_.nodes) {
      try {
        rewrite(n);
      } catch (const Error& e) {
        rethrow_with_context(e, "laying out node '" + n.name + "' (" + n.op->name + ")");
      }
    }
    for (ValueId v : old_.outputs) {
      ValueId nv = get(v);
      const std::string plain = default_layout(old_.value(v).type.shape.size());
      ValueId out = in_layout(nv, plain);
      if (out != nv && g_.value(out).producer >= 0) {  // the graph's interface keeps its names
        std::string name = g_.value(nv).name;
        g_.value(nv).name = fresh_name(name + "_" + g_.value(nv).layout);
        g_.value(out).name = name;
      }
      g_.outputs.push_back(out);
    }
    return std::move(g_);
  }

 private:
  std::string fresh_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_names_.insert(name);
    return name;
  }

  // The new value for an old one; constants are copied on first use.
  ValueId get(ValueId v) {
    if (v == kNoValue) return kNoValue;
    if (map_[v] != kNoValue) return map_[v];
    const Value& ov = old_.value(v);
    if (ov.producer >= 0) throw Error("value '" + ov.name + "' is read before it is produced");
    ValueId nv = g_.add_constant(ov.name, ov.value);
    g_.value(nv).layout = default_layout(ov.type.shape.size());
    return map_[v] = nv;
  }

  const Shape& shape(ValueId nv) const { return g_.value(nv).type.shape; }
  const std::string& layout(ValueId nv) const { return g_.value(nv).layout; }
  bool is_blocked(ValueId nv) const { return !layout(nv).empty() && Layout(layout(nv)).is_blocked(); }

  // Shape in the plain layout of the value's primal axes.
  Shape logical_shape(ValueId nv) const {
    if (!is_blocked(nv)) return shape(nv);
    const Layout l(layout(nv));
    return convert_layout_shape(l, Layout(l.primal_axes()), shape(nv));
  }

  void infer_node(NodeId id) {
    Node& n = g_.nodes[id];
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> values;
    for (ValueId v : n.inputs) {
      types.push_back(v == kNoValue ? nullptr : &g_.value(v).type);
      values.push_back(v == kNoValue || !g_.value(v).value.defined() ? nullptr : &g_.value(v).value);
    }
    InferContext ctx(types, values, static_cast<int>(n.outputs.size()));
    n.op->infer(n.attrs, ctx);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      g_.value(n.outputs[k]).type = ctx.outputs()[k];
      g_.value(n.outputs[k]).value = ctx.output_values()[k];
    }
  }

  // Names and layout by value: callers pass strings that live in g_.values, which add_node grows.
  std::vector<ValueId> emit(std::string name, const OpDef& op, Attrs attrs, std::vector<ValueId> inputs,
                            std::vector<std::string> output_names, std::string out_layout) {
    std::vector<ValueId> outs =
        g_.add_node(name, op, std::move(attrs), std::move(inputs), static_cast<int>(output_names.size()), output_names);
    infer_node(static_cast<NodeId>(g_.nodes.size() - 1));
    for (ValueId v : outs) g_.value(v).layout = out_layout.empty() ? default_layout(shape(v).size()) : out_layout;
    return outs;
  }

  // `nv` in layout `target`: itself, a remembered conversion, a converted constant, or the output
  // of a new layout_transform.
  ValueId in_layout(ValueId nv, const std::string& target) {
    if (nv == kNoValue || layout(nv) == target) return nv;
    auto key = std::make_pair(nv, target);
    if (auto it = converted_.find(key); it != converted_.end()) return it->second;
    const std::string src = layout(nv);
    ValueId out;
    if (g_.is_constant(nv)) {
      out = g_.add_constant(fresh_name(g_.value(nv).name + "_" + target),
                            convert_layout(g_.value(nv).value, Layout(src), Layout(target)));
      g_.value(out).layout = target;
    } else {
      ops::LayoutTransformAttrs a;
      a.src_layout = src;
      a.dst_layout = target;
      const std::string name = fresh_name(g_.value(nv).name + "_" + target);
      out = emit(name, get_op("layout_transform"), make_attrs(a), {nv}, {name}, target)[0];
    }
    converted_[key] = out;
    converted_[{out, src}] = nv;  // converting back reads the original: inverse pairs cancel
    return out;
  }

  std::vector<std::string> output_names(const Node& n) const {
    std::vector<std::string> names;
    for (ValueId v : n.outputs) names.push_back(old_.value(v).name);
    return names;
  }

  void bind_outputs(const Node& n, const std::vector<ValueId>& outs) {
    for (size_t k = 0; k < outs.size(); ++k) map_[n.outputs[k]] = outs[k];
  }

  void rewrite(const Node& n) {
    const std::string& op = n.op->name;
    if (op == "Conv" && try_blocked_conv(n)) return;
    if (op == "layout_transform") {
      const auto& a = attrs_as<ops::LayoutTransformAttrs>(n.attrs);
      if (a.logical_shape.empty()) {
        ValueId in = in_layout(get(n.inputs[0]), a.src_layout);
        map_[n.outputs[0]] = in_layout(in, a.dst_layout);
        return;
      }
    }
    if (op == "Gemm" && (try_packed_gemm(n) || try_gemm_k_major(n))) return;
    if (op == "MatMul" && try_packed_matmul(n)) return;
    if ((op == "MaxPool" || op == "AveragePool") && try_blocked_pool(n)) return;
    if (op == "Concat" && try_blocked_concat(n)) return;
    if (n.op->pattern <= PatternKind::kBroadcast && n.op->shape_inputs.empty() && op != "BatchNormalization" &&
        try_agnostic(n))
      return;
    plain(n);
  }

  void plain(const Node& n) {
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) {
      ValueId nv = get(v);
      inputs.push_back(nv == kNoValue ? nv : in_layout(nv, default_layout(logical_shape(nv).size())));
    }
    bind_outputs(n, emit(n.name, *n.op, n.attrs, inputs, output_names(n), ""));
  }

  // Values that reach a Concat, directly or through element-wise ops: convs producing them keep
  // one-vector blocks, the block their siblings in the Concat most likely have.
  void mark_concatenated() {
    concatenated_.assign(old_.values.size(), false);
    for (auto it = old_.nodes.rbegin(); it != old_.nodes.rend(); ++it) {
      bool feeds = it->op->name == "Concat";
      for (ValueId v : it->outputs) feeds = feeds || concatenated_[v];
      if (!feeds || (it->op->name != "Concat" && it->op->pattern > PatternKind::kBroadcast)) continue;
      for (ValueId v : it->inputs)
        if (v != kNoValue) concatenated_[v] = true;
    }
  }

  // The channel block of a conv's output: two vectors when the channels allow, so that the
  // register tile holds rows x 2 vectors of accumulators (a 7-wide row of ResNet's last stage
  // otherwise keeps only 7, too few to hide the FMA latency); else at most one vector.
  int64_t conv_block(int64_t channels, bool concatenated = false) const {
    if (concatenated) return channel_block(channels, vec_);
    if (channels % (2 * vec_) == 0) return 2 * vec_;
    // Where two vectors do not divide the channels and three do, on a 16-register target (AVX2),
    // blocks of three: the register tile is then 4 pixels x 3 vectors (12 accumulators) instead of
    // 8 x 1, 7 loads per 12 FMAs instead of 9 per 8 (MobileNetV2's 24-channel projections).
    if (vector_registers(vec_) == 16 && channels % (3 * vec_) == 0) return 3 * vec_;
    return channel_block(channels, vec_);
  }

  // The input's block when it is blocked already and the block divides the channels (no
  // layout_transform), else conv_block.
  int64_t input_block(ValueId x, int64_t channels) const {
    if (is_blocked(x) && Layout(layout(x)).primal_axes() == "NCHW") {
      const int64_t current = Layout(layout(x)).factor('C');
      if (current > 1 && channels % current == 0) return current;
    }
    return conv_block(channels);
  }

  bool try_blocked_conv(const Node& n) {
    if (vec_ <= 1) return false;
    const auto& a = attrs_as<ops::ConvAttrs>(n.attrs);
    ValueId x = get(n.inputs[0]), w = get(n.inputs[1]);
    if (!g_.is_constant(w) || logical_shape(x).size() != 4 || shape(w).size() != 4) return false;
    if (g_.value(w).type.dtype != DataType::kFloat32) return false;
    if (a.group != 1) return try_blocked_depthwise(n, x, w);
    const int64_t out_channels = shape(w)[0], in_channels = shape(w)[1];
    const int64_t ib = input_block(x, in_channels), ob = conv_block(out_channels, concatenated_[n.outputs[0]]);
    if (ob <= 1) return false;
    ops::Conv2dNchwcAttrs ca;
    ca.conv = a;
    ca.data_layout = blocked_nchw(ib);
    ca.kernel_layout = "OIHW" + std::to_string(ib) + "i" + std::to_string(ob) + "o";
    ca.out_layout = blocked_nchw(ob);
    ValueId wb = g_.add_constant(fresh_name(g_.value(w).name + "_" + ca.kernel_layout),
                                 block_conv_weights(g_.value(w).value, ib, ob));
    g_.value(wb).layout = ca.kernel_layout;
    std::vector<ValueId> inputs = {in_layout(x, ca.data_layout), wb};
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      ValueId b = get(n.inputs[2]);
      inputs.push_back(in_layout(b, "C" + std::to_string(ob) + "c"));
    }
    bind_outputs(n, emit(n.name, get_op("conv2d_nchwc"), make_attrs(ca), inputs, output_names(n), ca.out_layout));
    return true;
  }

  // A depthwise conv (one input and one output channel per group) on NCHW{b}c: each block of b
  // channels is its own vector, so it chains with the blocked convs around it (MobileNet's
  // expand, depthwise, project) with no layout_transform between them. Only an input already
  // blocked is worth it (an NCHW one would pay two transforms around a memory-bound kernel); the
  // block follows the input's when it divides the channels.
  bool try_blocked_depthwise(const Node& n, ValueId x, ValueId w) {
    const auto& a = attrs_as<ops::ConvAttrs>(n.attrs);
    const int64_t channels = logical_shape(x)[1];
    if (a.group != channels || shape(w)[0] != channels || shape(w)[1] != 1 || !is_blocked(x)) return false;
    const int64_t block = input_block(x, channels);
    if (block <= 1) return false;
    ops::Conv2dNchwcAttrs ca;
    ca.conv = a;
    ca.data_layout = blocked_nchw(block);
    ca.kernel_layout = "OIHW" + std::to_string(block) + "o";
    ca.out_layout = ca.data_layout;
    ValueId wb = g_.add_constant(fresh_name(g_.value(w).name + "_" + ca.kernel_layout),
                                 convert_layout(g_.value(w).value, Layout("OIHW"), Layout(ca.kernel_layout)));
    g_.value(wb).layout = ca.kernel_layout;
    std::vector<ValueId> inputs = {in_layout(x, ca.data_layout), wb};
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue)
      inputs.push_back(in_layout(get(n.inputs[2]), "C" + std::to_string(block) + "c"));
    bind_outputs(n, emit(n.name, get_op("conv2d_nchwc"), make_attrs(ca), inputs, output_names(n), ca.out_layout));
    return true;
  }

  // Gemm with transB and a constant B (a Linear layer: B is N×K) reads B along K for each output
  // column, so a vectorized column loop gathers. Its weights stored K×N instead (transB=0) make the
  // column loop a contiguous load.
  bool try_gemm_k_major(const Node& n) {
    if (vec_ <= 1 || n.inputs.size() < 2 || !old_.is_constant(n.inputs[1])) return false;
    const auto& a = attrs_as<ops::GemmAttrs>(n.attrs);
    const Tensor& b = old_.value(n.inputs[1]).value;
    if (!a.transB || b.dtype() != DataType::kFloat32 || b.shape().size() != 2) return false;
    const int64_t rows = b.shape()[0], cols = b.shape()[1];
    Tensor t(DataType::kFloat32, {cols, rows});
    const float* src = b.data<float>();
    float* dst = t.data<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
    ValueId bt = g_.add_constant(fresh_name(old_.value(n.inputs[1]).name + "_KN"), t);
    g_.value(bt).layout = default_layout(2);
    std::vector<ValueId> inputs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      ValueId nv = k == 1 ? bt : get(n.inputs[k]);
      inputs.push_back(nv == kNoValue || k == 1 ? nv : in_layout(nv, default_layout(logical_shape(nv).size())));
    }
    ops::GemmAttrs ga = a;
    ga.transB = 0;
    bind_outputs(n, emit(n.name, *n.op, make_attrs(ga), inputs, output_names(n), ""));
    return true;
  }

  // MatMul by constant weights (a Linear layer: B is K×N) with rows enough for a register tile
  // (A [..., M, K], M >= 4): B packed in panels one register tile wide, [N/b, K, b], so that each
  // k of the micro-kernel reads b contiguous floats and no copy packs B at run time. A GEMV (a few
  // rows) reads each weight once either way and keeps B as it is.
  bool try_packed_matmul(const Node& n) {
    if (!old_.is_constant(n.inputs[1])) return false;
    const ValueId product = packed_product(n, n.inputs[1], /*transposed=*/false, n.name, output_names(n)[0]);
    if (product == kNoValue) return false;
    bind_outputs(n, {product});
    return true;
  }

  // Gemm (transA = 0, alpha = 1, beta = 1 where there is a C) by constant weights, the same way:
  // matmul_packed, then the bias C added, an element-wise epilogue the product's kernel fuses. B
  // may be N×K (transB, a PyTorch Linear layer): packing reads it transposed.
  bool try_packed_gemm(const Node& n) {
    const auto& a = attrs_as<ops::GemmAttrs>(n.attrs);
    if (a.transA || a.alpha != 1.0f || !old_.is_constant(n.inputs[1])) return false;
    const bool has_c = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    if (has_c && a.beta != 1.0f) return false;
    const std::string out = output_names(n)[0];
    const std::string name = has_c ? fresh_name(out + "_product") : n.name;
    const ValueId product = packed_product(n, n.inputs[1], a.transB != 0, name, has_c ? name : out);
    if (product == kNoValue) return false;
    if (!has_c) {
      bind_outputs(n, {product});
      return true;
    }
    ValueId c = get(n.inputs[2]);
    c = in_layout(c, default_layout(logical_shape(c).size()));
    bind_outputs(n, emit(n.name, get_op("Add"), make_attrs(NoAttrs{}), {product, c}, {out}, ""));
    return true;
  }

  // matmul_packed(A, B packed) for node n's A (input 0) and constant weights `weights` (K×N, or
  // N×K when transposed): node `name`, value `out`; kNoValue when it does not apply (see
  // try_packed_matmul).
  ValueId packed_product(const Node& n, ValueId weights, bool transposed, const std::string& name,
                         const std::string& out) {
    if (vec_ <= 1) return kNoValue;
    const Tensor& b = old_.value(weights).value;
    const TensorType& a = old_.value(n.inputs[0]).type;
    if (b.dtype() != DataType::kFloat32 || b.shape().size() != 2 || a.dtype != DataType::kFloat32 ||
        a.shape.size() < 2)
      return kNoValue;
    const int64_t rows = a.shape[a.shape.size() - 2];
    const int64_t cols = transposed ? b.shape()[0] : b.shape()[1];
    const RegisterTile tile = choose_register_tile(rows, cols, vec_);
    if (rows < 4 || !tile.usable || cols % tile.width() != 0) return kNoValue;
    const int64_t block = tile.width();
    // Weights shared by two products (tied layers) are packed once.
    auto [it, fresh] = packed_weights_.try_emplace({weights, transposed, block}, kNoValue);
    if (fresh) it->second = pack_weights(weights, transposed, block);
    const ValueId bp = it->second;
    ops::MatMulPackedAttrs attrs;
    attrs.block = block;
    ValueId x = get(n.inputs[0]);
    std::vector<ValueId> inputs = {in_layout(x, default_layout(logical_shape(x).size())), bp};
    return emit(name, get_op("matmul_packed"), make_attrs(attrs), inputs, {out}, "")[0];
  }

  // The constant `weights` (K×N, or N×K when transposed) as [N/block, K, block] in layout NK{block}n.
  ValueId pack_weights(ValueId weights, bool transposed, int64_t block) {
    const Tensor& b = old_.value(weights).value;
    const int64_t k = transposed ? b.shape()[1] : b.shape()[0], cols = transposed ? b.shape()[0] : b.shape()[1];
    Tensor packed(DataType::kFloat32, {cols / block, k, block});
    const float* src = b.data<float>();
    float* dst = packed.data<float>();
    for (int64_t panel = 0; panel < cols / block; ++panel)
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < block; ++c) {
          const int64_t col = panel * block + c;
          *dst++ = transposed ? src[col * k + r] : src[r * cols + col];
        }
    const std::string layout = "NK" + std::to_string(block) + "n";
    ValueId bp = g_.add_constant(fresh_name(old_.value(weights).name + "_" + layout), packed);
    g_.value(bp).layout = layout;
    return bp;
  }

  // Pooling an NCHW{c}c tensor = pooling over (H, W, c) with a window of 1 along c.
  template <class A> static Attrs pool_attrs_3d(const Attrs& attrs) {
    A a = attrs_as<A>(attrs);
    a.kernel_shape.push_back(1);
    if (!a.strides.empty()) a.strides.push_back(1);
    if (!a.pads.empty()) {
      const size_t half = a.pads.size() / 2;
      std::vector<int64_t> pads(a.pads.begin(), a.pads.begin() + half);
      pads.push_back(0);
      pads.insert(pads.end(), a.pads.begin() + half, a.pads.end());
      pads.push_back(0);
      a.pads = pads;
    }
    if constexpr (requires { a.dilations; })
      if (!a.dilations.empty()) a.dilations.push_back(1);
    return make_attrs(a);
  }

  bool try_blocked_pool(const Node& n) {
    ValueId x = get(n.inputs[0]);
    if (n.outputs.size() != 1 || !is_blocked(x) || logical_shape(x).size() != 4) return false;
    Attrs attrs = n.op->name == "MaxPool" ? pool_attrs_3d<ops::MaxPoolAttrs>(n.attrs)
                                          : pool_attrs_3d<ops::AveragePoolAttrs>(n.attrs);
    bind_outputs(n, emit(n.name, *n.op, attrs, {x}, output_names(n), layout(x)));
    return true;
  }

  bool try_blocked_concat(const Node& n) {
    ValueId first = get(n.inputs[0]);
    if (!is_blocked(first) || logical_shape(first).size() != 4) return false;
    const auto& a = attrs_as<ops::ConcatAttrs>(n.attrs);
    if (a.axis != 1 && a.axis != -3) return false;
    const std::string target = layout(first);
    const int64_t block = Layout(target).factor('C');
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) {
      ValueId nv = get(v);
      Shape s = logical_shape(nv);
      if (s.size() != 4 || s[1] % block != 0) return false;
      inputs.push_back(nv);
    }
    for (ValueId& v : inputs) v = in_layout(v, target);
    ops::ConcatAttrs ca;
    ca.axis = 1;
    bind_outputs(n, emit(n.name, *n.op, make_attrs(ca), inputs, output_names(n), target));
    return true;
  }

  // Element-wise and broadcast ops computed in the blocked layout of their main input.
  bool try_agnostic(const Node& n) {
    const Shape& out_shape = old_.value(n.outputs[0]).type.shape;
    if (out_shape.size() != 4) return false;
    for (ValueId v : n.outputs)
      if (old_.value(v).type.shape != out_shape) return false;
    std::string target;
    for (ValueId v : n.inputs) {
      ValueId nv = get(v);
      if (nv != kNoValue && is_blocked(nv) && logical_shape(nv) == out_shape) {
        target = layout(nv);
        break;
      }
    }
    if (target.empty()) return false;
    const Layout l(target);
    if (l.primal_axes() != "NCHW") return false;
    const int64_t block = l.factor('C');
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) {
      ValueId nv = get(v);
      if (nv == kNoValue || shape_numel(shape(nv)) == 1) {
        inputs.push_back(nv);
        continue;
      }
      Shape s = logical_shape(nv);
      if (s.size() > 4) return false;
      while (s.size() < 4) s.insert(s.begin(), 1);
      for (int d : {0, 2, 3})
        if (s[d] != 1 && s[d] != out_shape[d]) return false;
      if (s[1] == out_shape[1] && out_shape[1] % block == 0) {
        if (g_.is_constant(nv)) {
          Tensor t = g_.value(nv).value.reshaped(s);
          ValueId c = g_.add_constant(fresh_name(g_.value(nv).name + "_" + target),
                                      convert_layout(t, Layout("NCHW"), l));
          g_.value(c).layout = target;
          inputs.push_back(c);
        } else if (logical_shape(nv).size() == 4) {
          inputs.push_back(in_layout(nv, target));
        } else {
          return false;
        }
      } else if (s[1] == 1 && g_.is_constant(nv)) {
        Tensor t = g_.value(nv).value.reshaped({s[0], 1, s[2], s[3], 1});
        ValueId c = g_.add_constant(fresh_name(g_.value(nv).name + "_" + target), t);
        g_.value(c).layout = target;
        inputs.push_back(c);
      } else {
        return false;
      }
    }
    bind_outputs(n, emit(n.name, *n.op, n.attrs, inputs, output_names(n), target));
    return true;
  }

  const Graph& old_;
  int64_t vec_;
  Graph g_;
  std::vector<ValueId> map_;
  std::map<std::pair<ValueId, std::string>, ValueId> converted_;
  std::map<std::tuple<ValueId, bool, int64_t>, ValueId> packed_weights_;  // by old value, transposed, block
  std::unordered_set<std::string> used_names_;
  std::vector<bool> concatenated_;  // by old value
};

}  // namespace

bool transform_layout(Graph& g, PassContext& ctx) {
  const int64_t vec = ctx.options.transform_layout ? ctx.traits().vector_lanes : 1;
  Graph out = LayoutRewriter(g, vec).run();
  bool changed = out.nodes.size() != g.nodes.size() || out.values.size() != g.values.size();
  for (size_t n = 0; !changed && n < out.nodes.size(); ++n) changed = out.nodes[n].op != g.nodes[n].op;
  for (size_t v = 0; !changed && v < out.values.size(); ++v) changed = out.values[v].layout != g.values[v].layout;
  if (changed) g = std::move(out);
  return changed;
}

}  // namespace tessel
