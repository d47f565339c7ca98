// Opset upgrade: every rewrite from an older default-domain opset (1..16) to the form of the same
// op that the op table implements, in one place. Rules, by the opset that changed the op:
//
//   Pad < 2                 attr paddings          → attr pads (then as Pad < 11)
//   Concat < 4              axis optional (1)      → axis=1 written out
//   Reshape < 5             attr shape             → constant input 1
//   Add Sub Mul Div Pow And Or Xor Equal Greater Less < 7
//                           attrs broadcast, axis  → dropped; B aligned at `axis` by an Unsqueeze
//                                                    of its trailing axes (numpy broadcasting)
//   Gemm < 7                attr broadcast         → dropped (C broadcasts one way since 7)
//   PRelu < 7               slope [C] per channel  → Unsqueeze to [C,1,...] (numpy broadcasting)
//   Upsample < 7            attrs height_scale, width_scale → scales [1,1,h,w], then as below
//   Clip < 11               attrs min/max          → constant inputs 1, 2 (of the input's type)
//   Split < 13              attr split             → constant input 1
//   Squeeze, Unsqueeze < 13 attr axes              → constant input 1
//   ReduceSum < 13          attr axes              → constant input 1
//   Pad < 11                attrs pads, value      → constant inputs 1, 2 (value of the input's type)
//   Slice < 10              attrs starts/ends/axes → constant inputs 1, 2, 3
//   TopK < 10               attr k                 → constant input 1
//   Dropout < 12            attr ratio             → constant input 1
//   BatchNormalization < 9  attr spatial           → dropped (only spatial=1 exists in later opsets)
//   Upsample 7..10          attr or input scales   → Resize(X, roi = none, scales), asymmetric
//   Scatter 9..10           (deprecated in 11)     → ScatterElements, the same op renamed
//   Resize 10               inputs X, scales       → Resize(X, roi = none, scales), asymmetric
//   every op                attrs consumed_inputs, is_test → dropped (no-ops in inference)
//
//   Softmax, LogSoftmax, Hardmax < 13 applied the op to the input coerced to 2-D at `axis`; opset 13
//   applies it along one axis. Unless axis is -1 (where both agree), the node becomes:
//
//       x ──▶ Flatten(axis) ──▶ Op(axis=1) ──▶ Reshape ──▶ y
//       └───▶ Shape ────────────────────────────┘
//
// When the input's rank is known and `axis` is its last axis, the node is kept with axis=-1.
//
// Constants added by a rule become initializers with fresh names derived from the node's name.
// Element types that a constant must share with an input (Clip, Pad), and ranks, come from the
// model's inputs and initializers, or from ONNX shape inference when another node computes the value.
#include "core/frontend/opset_upgrade.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/frontend/onnx_tensor.h"
#include "core/support/error.h"

namespace tessel {

namespace {

using onnx::AttributeProto;
using onnx::NodeProto;

const AttributeProto* find_attr(const NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

void remove_attr(NodeProto& n, std::string_view name) {
  auto* attrs = n.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i)
    if (attrs->Get(i).name() == name) attrs->DeleteSubrange(i, 1);
}

void set_string_attr(NodeProto& n, const std::string& name, const std::string& value) {
  remove_attr(n, name);
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::STRING);
  a->set_s(value);
}

void set_int_attr(NodeProto& n, const std::string& name, int64_t value) {
  remove_attr(n, name);
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(value);
}

void set_input(NodeProto& n, int index, const std::string& value) {
  while (n.input_size() <= index) n.add_input("");
  n.set_input(index, value);
}

std::vector<int64_t> ints_of(const AttributeProto& a) { return {a.ints().begin(), a.ints().end()}; }

class Upgrader {
 public:
  // `graph` is the model's graph or a sub-graph of one of its nodes (a Loop's body).
  Upgrader(onnx::ModelProto& model, onnx::GraphProto& graph, int64_t opset)
      : model_(model), graph_(graph), opset_(opset) {}

  // A node whose old form has no rewrite is kept as it was and named in the result.
  std::map<std::string, std::string> run() {
    collect_names();
    if (needs_value_types()) collect_value_types();
    google::protobuf::RepeatedPtrField<NodeProto> old_nodes;
    old_nodes.Swap(graph_.mutable_node());
    std::map<std::string, std::string> not_upgraded;
    for (NodeProto& node : old_nodes) {
      if (node.op_type() == "Constant") {  // no rule; and its tensor may be large, not worth a copy
        emit(node);
        continue;
      }
      if (has_bodies(node)) {
        // If, Loop, Scan: bodies upgraded in place, then the node's own rule (at most a rename,
        // which cannot fail). No copy to fall back on: a copy holds every body below, and made at
        // each level of nested bodies it cost depth² time and memory (2 GB at depth 1000, issue 40).
        upgrade_subgraphs(node, not_upgraded);
        upgrade(node);
        continue;
      }
      const NodeProto original = node;
      const int emitted = graph_.node_size();
      try {
        upgrade_subgraphs(node, not_upgraded);
        upgrade(node);
      } catch (const Error& e) {
        graph_.mutable_node()->DeleteSubrange(emitted, graph_.node_size() - emitted);
        not_upgraded[original.name()] = "opset " + std::to_string(opset_) + " form: " + e.what();
        graph_.mutable_node()->Add()->CopyFrom(original);
      }
    }
    return not_upgraded;
  }

 private:
  static bool has_bodies(const NodeProto& node) {
    for (const auto& attr : node.attribute())
      if (attr.has_g() || attr.graphs_size() > 0) return true;
    return false;
  }

  // Bodies are written in the model's opset too.
  void upgrade_subgraphs(NodeProto& node, std::map<std::string, std::string>& not_upgraded) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) not_upgraded.merge(Upgrader(model_, *attr.mutable_g(), opset_).run());
      for (auto& g : *attr.mutable_graphs()) not_upgraded.merge(Upgrader(model_, g, opset_).run());
    }
  }

  bool old(const char* op, int64_t changed_at) const { return current_op_ == op && opset_ < changed_at; }

  void upgrade(NodeProto& node) {
    current_op_ = node.op_type();
    if (!node.domain().empty() && node.domain() != "ai.onnx") return emit(node);
    remove_attr(node, "consumed_inputs");
    remove_attr(node, "is_test");
    if (old("Pad", 2)) rename_attr(node, "paddings", "pads");
    if (old("Concat", 4) && !find_attr(node, "axis")) set_int_attr(node, "axis", 1);
    if (opset_ < 7 && is_legacy_broadcast_op(current_op_)) return legacy_broadcast(node);
    if (old("Gemm", 7)) remove_attr(node, "broadcast");
    if (old("Scan", 9)) {  // a batch axis and sequence_lens: Tessel's own op for that form
      node.set_op_type("ScanBatched");
      return emit(node);
    }
    if (old("PRelu", 7)) return per_channel_slope(node);
    if (old("Reshape", 5)) {
      attr_to_int_input(node, "shape", 1);
    } else if (old("Clip", 11)) {
      clip(node);
    } else if (old("Split", 13)) {
      attr_to_int_input(node, "split", 1);
    } else if (old("Squeeze", 13) || old("Unsqueeze", 13) || old("ReduceSum", 13)) {
      attr_to_int_input(node, "axes", 1);
    } else if (old("Pad", 11)) {
      pad(node);
    } else if (old("Slice", 10)) {
      attr_to_int_input(node, "starts", 1);
      attr_to_int_input(node, "ends", 2);
      attr_to_int_input(node, "axes", 3);
    } else if (old("TopK", 10)) {
      attr_to_int_input(node, "k", 1, /*as_scalar_list=*/true);
    } else if (old("Dropout", 12)) {
      if (const AttributeProto* r = find_attr(node, "ratio"))
        set_input(node, 1, add_constant(node.name() + "_ratio", Tensor::scalar<float>(r->f())));
      remove_attr(node, "ratio");
    } else if (old("BatchNormalization", 9)) {
      const AttributeProto* s = find_attr(node, "spatial");
      if (s && s->i() != 1) throw Error("spatial=" + std::to_string(s->i()) + " is not supported (only spatial=1)");
      remove_attr(node, "spatial");
    } else if (current_op_ == "Scatter") {
      node.set_op_type("ScatterElements");
    } else if (current_op_ == "Upsample" || (current_op_ == "Resize" && opset_ < 11)) {
      upsample_to_resize(node);
    } else if (old("Softmax", 13) || old("LogSoftmax", 13) || old("Hardmax", 13)) {
      return coerced_2d_to_axis(node);
    }
    emit(node);
  }

  void emit(NodeProto& node) { graph_.mutable_node()->Add(std::move(node)); }

  // ----- rules -----

  void attr_to_int_input(NodeProto& node, const char* attr, int index, bool as_scalar_list = false) {
    const AttributeProto* a = find_attr(node, attr);
    if (!a) return;
    std::vector<int64_t> v = as_scalar_list ? std::vector<int64_t>{a->i()} : ints_of(*a);
    set_input(node, index,
              add_constant(node.name() + "_" + attr, Tensor::from_int64s({static_cast<int64_t>(v.size())}, v)));
    remove_attr(node, attr);
  }

  void clip(NodeProto& node) {
    const DataType t = element_type(node.input(0));
    if (const AttributeProto* lo = find_attr(node, "min"))
      set_input(node, 1, add_constant(node.name() + "_min", scalar_of(t, lo->f())));
    if (const AttributeProto* hi = find_attr(node, "max"))
      set_input(node, 2, add_constant(node.name() + "_max", scalar_of(t, hi->f())));
    remove_attr(node, "min");
    remove_attr(node, "max");
  }

  void pad(NodeProto& node) {
    attr_to_int_input(node, "pads", 1);
    if (const AttributeProto* v = find_attr(node, "value"))
      set_input(node, 2, add_constant(node.name() + "_value", scalar_of(element_type(node.input(0)), v->f())));
    remove_attr(node, "value");
  }

  static bool is_legacy_broadcast_op(const std::string& op) {
    static const std::unordered_set<std::string> ops = {"Add", "Sub", "Mul",   "Div",     "Pow", "And",
                                                        "Or",  "Xor", "Equal", "Greater", "Less"};
    return ops.count(op) > 0;
  }

  // Before opset 7, B broadcast only with broadcast=1, aligned with A's axes from `axis` on (by
  // default the trailing ones, as numpy aligns). Ones appended to B's shape make numpy agree:
  //   A [2,3,4,5], B [3,4], axis=1  →  B [3,4,1]
  void legacy_broadcast(NodeProto& node) {
    const AttributeProto* b = find_attr(node, "broadcast");
    const AttributeProto* a = find_attr(node, "axis");
    const bool broadcast = b && b->i() != 0;
    const int64_t axis = a ? a->i() : -1;
    remove_attr(node, "broadcast");
    remove_attr(node, "axis");
    if (!broadcast || axis < 0 || node.input_size() < 2) return emit(node);
    const int64_t rank_a = rank_of(node.input(0)), rank_b = rank_of(node.input(1));
    if (rank_a < 0 || rank_b < 0) throw Error("broadcast with axis needs the ranks of both inputs, which are unknown");
    const int64_t trailing = rank_a - axis - rank_b;
    if (trailing < 0) throw Error("axis " + std::to_string(axis) + " does not fit input ranks");
    if (trailing > 0) node.set_input(1, unsqueeze_trailing(node, node.input(1), rank_b, trailing));
    emit(node);
  }

  // PRelu before opset 7 applied a slope of C values to axis 1 of X [N,C,...].
  void per_channel_slope(NodeProto& node) {
    const int64_t rank_x = rank_of(node.input(0)), rank_slope = rank_of(node.input(1));
    if (rank_x > 2 && rank_slope == 1) node.set_input(1, unsqueeze_trailing(node, node.input(1), 1, rank_x - 2));
    emit(node);
  }

  // Emits Unsqueeze(value) with `count` axes of size 1 after its `rank` axes; returns its output.
  std::string unsqueeze_trailing(const NodeProto& node, const std::string& value, int64_t rank, int64_t count) {
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < count; ++k) axes.push_back(rank + k);
    NodeProto unsqueeze;
    unsqueeze.set_name(fresh(node.name() + "_align"));
    unsqueeze.set_op_type("Unsqueeze");
    unsqueeze.add_input(value);
    unsqueeze.add_input(add_constant(node.name() + "_align_axes", Tensor::from_int64s({count}, axes)));
    const std::string aligned = fresh(node.name() + "_aligned");
    unsqueeze.add_output(aligned);
    emit(unsqueeze);
    return aligned;
  }

  void rename_attr(NodeProto& node, const char* from, const char* to) {
    for (auto& a : *node.mutable_attribute())
      if (a.name() == from) a.set_name(to);
  }

  void upsample_to_resize(NodeProto& node) {
    if (opset_ < 7) {  // Upsample-1: the two spatial scales of an NCHW input
      const AttributeProto* h = find_attr(node, "height_scale");
      const AttributeProto* w = find_attr(node, "width_scale");
      if (!h || !w) throw Error("needs height_scale and width_scale");
      AttributeProto scales;
      scales.set_name("scales");
      scales.set_type(AttributeProto::FLOATS);
      for (float v : {1.0f, 1.0f, h->f(), w->f()}) scales.add_floats(v);
      remove_attr(node, "height_scale");
      remove_attr(node, "width_scale");
      *node.add_attribute() = scales;
    }
    const std::string x = node.input(0);
    std::string scales = node.input_size() > 1 ? node.input(1) : "";
    if (const AttributeProto* s = find_attr(node, "scales")) {  // Upsample 7..8 keeps scales as an attribute
      std::vector<float> v(s->floats().begin(), s->floats().end());
      scales = add_constant(node.name() + "_scales", Tensor::from_values<float>({static_cast<int64_t>(v.size())}, v));
      remove_attr(node, "scales");
    }
    const AttributeProto* m = find_attr(node, "mode");
    const std::string mode = m ? m->s() : "nearest";
    if (mode != "nearest" && mode != "linear" && mode != "bilinear")
      throw Error("mode '" + mode + "' is not one of nearest, linear");
    node.set_op_type("Resize");
    node.clear_input();
    node.add_input(x);
    node.add_input("");  // roi: unused by asymmetric coordinates
    node.add_input(scales);
    // Upsample and Resize-10 map output pixel x to input pixel x / scale, rounding down for nearest.
    set_string_attr(node, "mode", mode == "nearest" ? "nearest" : "linear");
    set_string_attr(node, "coordinate_transformation_mode", "asymmetric");
    if (mode == "nearest") set_string_attr(node, "nearest_mode", "floor");
  }

  void coerced_2d_to_axis(NodeProto& node) {
    const AttributeProto* a = find_attr(node, "axis");
    const int64_t axis = a ? a->i() : 1;
    const int64_t rank = rank_of(node.input(0));
    if (axis == -1 || (rank > 0 && axis == rank - 1)) {  // the last axis: old and new semantics agree
      set_int_attr(node, "axis", -1);
      return emit(node);
    }
    const std::string x = node.input(0), y = node.output(0), name = node.name();
    const std::string flat = fresh(name + "_2d"), flat_out = fresh(name + "_2d_out"), shape = fresh(name + "_shape");

    NodeProto flatten;
    flatten.set_name(flat);
    flatten.set_op_type("Flatten");
    flatten.add_input(x);
    flatten.add_output(fresh(name + "_2d_in"));
    set_int_attr(flatten, "axis", axis);

    NodeProto shape_of;
    shape_of.set_name(shape);
    shape_of.set_op_type("Shape");
    shape_of.add_input(x);
    shape_of.add_output(shape);

    NodeProto reshape;
    reshape.set_name(fresh(name + "_restore"));
    reshape.set_op_type("Reshape");
    reshape.add_input(flat_out);
    reshape.add_input(shape);
    reshape.add_output(y);

    node.set_input(0, flatten.output(0));
    node.set_output(0, flat_out);
    set_int_attr(node, "axis", 1);
    emit(flatten);
    emit(node);
    emit(shape_of);
    emit(reshape);
  }

  // ----- names, constants, element types -----

  void collect_names() {
    for (const auto& v : graph_.input()) names_.insert(v.name());
    for (const auto& v : graph_.initializer()) names_.insert(v.name());
    for (const auto& n : graph_.node()) {
      names_.insert(n.name());
      for (const auto& o : n.output()) names_.insert(o);
    }
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  std::string add_constant(const std::string& base, const Tensor& value) {
    std::string name = fresh(base);
    tensor_to_onnx(value, name, graph_.add_initializer());
    return name;
  }

  static Tensor scalar_of(DataType t, double v) {
    Tensor s(t, {});
    // ±FLT_MAX defaults of old Clip must not become inf in float16: clamp to the type's range.
    if (t == DataType::kFloat16) v = std::clamp(v, -65504.0, 65504.0);
    s.set_double(0, v);
    return s;
  }

  // Clip and Pad constants take the input's element type; the coerce-to-2D rewrite is skipped when
  // the input's rank shows that axis is the last one (the usual classifier head).
  bool needs_value_types() const {
    for (const auto& n : graph_.node()) {
      const std::string& op = n.op_type();
      if (opset_ < 11 && (op == "Clip" || op == "Pad")) return true;
      if (opset_ < 13 && (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax")) return true;
      if (opset_ < 7 && (op == "PRelu" || (is_legacy_broadcast_op(op) && find_attr(n, "axis")))) return true;
    }
    return false;
  }

  void collect_value_types() {
    try {
      onnx::shape_inference::InferShapes(model_);
    } catch (const std::exception&) {
      // Inference is only a source of element types here; what it cannot type falls back to f32,
      // the only type these old ops were used with in practice.
    }
    auto note = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type()) return;
      elem_types_[v.name()] = v.type().tensor_type().elem_type();
      if (v.type().tensor_type().has_shape()) ranks_[v.name()] = v.type().tensor_type().shape().dim_size();
    };
    for (const auto& v : graph_.input()) note(v);
    for (const auto& v : graph_.value_info()) note(v);
    for (const auto& v : graph_.output()) note(v);
    for (const auto& t : graph_.initializer()) {
      elem_types_[t.name()] = t.data_type();
      ranks_[t.name()] = t.dims_size();
    }
  }

  // -1 when unknown.
  int64_t rank_of(const std::string& value) const {
    auto it = ranks_.find(value);
    return it == ranks_.end() ? -1 : it->second;
  }

  DataType element_type(const std::string& value) const {
    auto it = elem_types_.find(value);
    if (it == elem_types_.end()) return DataType::kFloat32;
    return dtype_from_onnx(it->second);
  }

  onnx::ModelProto& model_;
  onnx::GraphProto& graph_;
  int64_t opset_;
  std::string current_op_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, int32_t> elem_types_;
  std::unordered_map<std::string, int64_t> ranks_;
};

}  // namespace

std::map<std::string, std::string> upgrade_opset(onnx::ModelProto& model, int64_t opset) {
  return Upgrader(model, *model.mutable_graph(), opset).run();
}

std::string_view upgraded_op_type(std::string_view op_type) {
  if (op_type == "Upsample") return "Resize";
  if (op_type == "Scatter") return "ScatterElements";
  return op_type;
}

}  // namespace tessel
