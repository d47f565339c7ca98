#include "core/graph/graph.h"

#include <unordered_set>

#include "core/graph/op_table.h"
#include "core/graph/opaque_op.h"

namespace tessel {

ValueId Graph::add_input(std::string name, TensorType type) {
  Value v;
  v.name = std::move(name);
  v.type = std::move(type);
  values.push_back(std::move(v));
  inputs.push_back(static_cast<ValueId>(values.size() - 1));
  return inputs.back();
}

ValueId Graph::add_constant(std::string name, Tensor value) {
  Value v;
  v.name = std::move(name);
  v.type = TensorType{value.dtype(), value.shape()};
  v.value = std::move(value);
  values.push_back(std::move(v));
  return static_cast<ValueId>(values.size() - 1);
}

std::vector<ValueId> Graph::add_node(std::string node_name, const OpDef& op, Attrs attrs, std::vector<ValueId> node_inputs,
                                     int num_outputs, std::vector<std::string> output_names) {
  Node n;
  n.op = &op;
  n.attrs = std::move(attrs);
  n.inputs = std::move(node_inputs);
  NodeId id = static_cast<NodeId>(nodes.size());
  for (int k = 0; k < num_outputs; ++k) {
    Value v;
    v.name = k < static_cast<int>(output_names.size()) ? output_names[k] : node_name + (num_outputs > 1 ? "_out" + std::to_string(k) : "");
    v.producer = id;
    v.output_index = k;
    values.push_back(std::move(v));
    n.outputs.push_back(static_cast<ValueId>(values.size() - 1));
  }
  n.name = std::move(node_name);
  nodes.push_back(std::move(n));
  return nodes.back().outputs;
}

bool Graph::is_input(ValueId id) const {
  for (ValueId i : inputs)
    if (i == id) return true;
  return false;
}

bool Graph::is_constant(ValueId id) const {
  const Value& v = value(id);
  return v.producer < 0 && v.value.defined() && !is_input(id);
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> out(values.size());
  for (NodeId n = 0; n < static_cast<NodeId>(nodes.size()); ++n)
    for (ValueId v : nodes[n].inputs)
      if (v != kNoValue && (out[v].empty() || out[v].back() != n)) out[v].push_back(n);
  return out;
}

std::string Graph::unique_name(const std::string& base) const {
  std::unordered_set<std::string> used;
  for (const auto& v : values) used.insert(v.name);
  for (const auto& n : nodes) used.insert(n.name);
  if (!used.count(base)) return base;
  for (int k = 1;; ++k)
    if (!used.count(base + "_" + std::to_string(k))) return base + "_" + std::to_string(k);
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id)
    if (is_constant(id)) n += values[id].value.numel();
  return n;
}

OpTypes node_types(const Graph& g, const Node& n) {
  OpTypes t;
  for (ValueId v : n.inputs) t.inputs.push_back(v == kNoValue ? nullptr : &g.value(v).type);
  for (ValueId v : n.outputs) t.outputs.push_back(g.value(v).type);
  return t;
}

std::vector<std::pair<std::string, GraphPtr>> node_subgraphs(const Node& n) {
  return n.attrs ? n.attrs->subgraphs() : std::vector<std::pair<std::string, GraphPtr>>{};
}

namespace attr_detail {

// "graph 'loop_body' (iter, cond, y; reads delta) -> (cond_out, y_out), 9 nodes": a sub-graph as
// an attribute list shows it. The text format cannot read it back; the graph itself is in the node.
std::string to_text(const GraphPtr& g) {
  if (!g) return "graph (none)";
  auto names = [&](const std::vector<ValueId>& ids, size_t from, size_t to) {
    std::string out;
    for (size_t k = from; k < to; ++k) out += (k > from ? ", " : "") + g->value(ids[k]).name;
    return out;
  };
  const size_t formal = g->inputs.size() - static_cast<size_t>(g->captured_inputs);
  std::string text = "graph '" + g->name + "' (" + names(g->inputs, 0, formal);
  if (g->captured_inputs > 0) text += (formal ? "; reads " : "reads ") + names(g->inputs, formal, g->inputs.size());
  return text + ") -> (" + names(g->outputs, 0, g->outputs.size()) + "), " + std::to_string(g->nodes.size()) +
         (g->nodes.size() == 1 ? " node" : " nodes");
}

nlohmann::json to_json(const GraphPtr& g) {
  if (!g) return nullptr;
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (ValueId v : g->inputs) inputs.push_back(g->value(v).name);
  for (ValueId v : g->outputs) outputs.push_back(g->value(v).name);
  return {{"graph", g->name},
          {"inputs", inputs},
          {"captured_inputs", g->captured_inputs},
          {"outputs", outputs},
          {"nodes", g->nodes.size()}};
}

}  // namespace attr_detail

int64_t node_flops(const Graph& g, const Node& n) { return n.op->flops(n.attrs, node_types(g, n)); }

namespace {

// Values up to this many elements are computed at compile time when all their inputs are known:
// enough for every shape computation exporters emit, small enough to never cost real time.
constexpr int64_t kMaxPropagatedElements = 1024;

void check_arity(const Node& n) {
  int ni = static_cast<int>(n.inputs.size()), no = static_cast<int>(n.outputs.size());
  const OpDef& op = *n.op;
  if (ni < op.min_inputs || ni > op.max_inputs)
    throw Error("has " + std::to_string(ni) + " inputs; " + op.name + " takes " + std::to_string(op.min_inputs) +
                (op.max_inputs == op.min_inputs ? "" : " to " + std::to_string(op.max_inputs)));
  if (no < op.min_outputs || no > op.max_outputs)
    throw Error("has " + std::to_string(no) + " outputs; " + op.name + " produces " + std::to_string(op.min_outputs) +
                (op.max_outputs == op.min_outputs ? "" : " to " + std::to_string(op.max_outputs)));
  for (int i = 0; i < std::min(ni, op.min_inputs); ++i)
    if (n.inputs[i] == kNoValue) throw Error("required input " + std::to_string(i) + " is missing");
}

void check_type_size(const TensorType& type, const std::string& what) {
  try {
    checked_tensor_bytes(type.shape, dtype_size(type.dtype));
  } catch (const Error& e) {
    rethrow_with_context(e, what);
  }
}

void infer_node(Graph& g, Node& n) {
  check_arity(n);
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> known;
  bool all_known = true;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const ValueId v = n.inputs[k];
    if (v == kNoValue || n.op->takes_any_kind) continue;
    const TensorType& t = g.value(v).type;
    if (!t.is_tensor())
      throw Error("input " + std::to_string(k) + " '" + g.value(v).name + "' is " +
                  std::string(is_optional(t.kind) ? "an " : "a ") + std::string(value_kind_name(t.kind)) + " (" +
                  type_str(t) + "); " + n.op->name + " takes tensors");
    if (!t.shape_known)
      throw Error("input " + std::to_string(k) + " '" + g.value(v).name +
                  "' has a shape known only at run time (taken out of a sequence or an optional); " + n.op->name +
                  " needs a static shape");
  }
  for (ValueId v : n.inputs) {
    types.push_back(v == kNoValue ? nullptr : &g.value(v).type);
    const Tensor* val = v == kNoValue || !g.value(v).value.defined() ? nullptr : &g.value(v).value;
    known.push_back(val);
    if (v != kNoValue && !val) all_known = false;
  }
  InferContext ctx(types, known, static_cast<int>(n.outputs.size()));
  n.op->infer(n.attrs, ctx);
  if (!ctx.all_outputs_set()) throw Error("internal: " + n.op->name + " did not infer every output");

  int64_t out_elements = 0;
  bool values_given = true;
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    Value& out = g.value(n.outputs[k]);
    out.type = ctx.outputs()[k];
    out.value = ctx.output_values()[k];
    if (!out.type.is_static_tensor()) {  // not a tensor the reference kernel could fold into a constant
      values_given = false, all_known = false;
      continue;
    }
    check_type_size(out.type, "output '" + out.name + "'");
    out_elements += shape_numel(out.type.shape);
    values_given = values_given && out.value.defined();
  }
  if (values_given || !all_known || out_elements > kMaxPropagatedElements) return;
  std::vector<Tensor> outs;
  for (const TensorType& t : ctx.outputs()) outs.emplace_back(t.dtype, t.shape);
  n.op->reference(n.attrs, KernelArgs{known, &outs});
  for (int k = 0; k < ctx.num_outputs(); ++k) g.value(n.outputs[k]).value = std::move(outs[k]);
}

}  // namespace

void infer_types(Graph& g, InferFailure on_failure) {
  for (ValueId id : g.inputs)
    if (g.value(id).type_known() && g.value(id).type.shape_known)
      check_type_size(g.value(id).type, "input '" + g.value(id).name + "'");
  for (Node& n : g.nodes) {
    if (is_opaque(n)) continue;  // the importer typed its outputs, as far as ONNX could
    bool from_unknown = false;
    for (ValueId v : n.inputs) from_unknown = from_unknown || (v != kNoValue && !g.value(v).type_known());
    for (ValueId v : n.outputs) g.value(v).unknown_type = from_unknown ? kComputedFromUnknown : "";
    if (from_unknown) continue;
    try {
      infer_node(g, n);
    } catch (const Error& e) {
      const std::string where = "node '" + n.name + "' (" + n.op->name + ")";
      if (on_failure == InferFailure::kThrow) rethrow_with_context(e, where);
      for (ValueId v : n.outputs) g.value(v).unknown_type = where + ": " + e.what();
    }
  }
}

std::string non_tensor_values_reason(const Graph& g) {
  for (const Value& v : g.values) {
    if (!v.type_known() || v.type.is_static_tensor()) continue;
    if (!v.type.is_tensor())
      return "value '" + v.name + "' is " + std::string(is_optional(v.type.kind) ? "an " : "a ") +
             std::string(value_kind_name(v.type.kind)) + " (" + type_str(v.type) + ")";
    return "value '" + v.name + "' has a shape known only at run time";
  }
  return {};
}

bool is_opaque(const Node& n) { return n.op == &opaque_op(); }

std::string op_label(const Node& n) {
  if (!n.op) return "?";
  return is_opaque(n) ? attrs_as<OpaqueAttrs>(n.attrs).op_type + " (opaque)" : n.op->name;
}

namespace {

// The opaque nodes in a node's sub-graphs, at any depth: "node 'Loop_0' (Loop), body: node 'E' (Einsum):
// unknown op". Only these block: the types of a body's values are settled by the node that runs it
// (its inputs' types come from outside), so an unknown type inside a body is no reason of its own.
std::vector<std::string> opaque_nodes_inside(const Node& outer) {
  std::vector<std::string> out;
  for (const auto& [field, body] : node_subgraphs(outer)) {
    const std::string where = "node '" + outer.name + "' (" + outer.op->name + "), " + field + ": ";
    for (const Node& n : body->nodes) {
      if (is_opaque(n)) {
        const auto& a = attrs_as<OpaqueAttrs>(n.attrs);
        out.push_back(where + "node '" + n.name + "' (" + a.op_type + "): " + a.reason);
      }
      for (const std::string& deeper : opaque_nodes_inside(n)) out.push_back(where + deeper);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> graph_blockers(const Graph& g) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;  // one entry for a failed node's several outputs
  for (ValueId id : g.inputs)
    if (!g.value(id).type_known()) out.push_back("input '" + g.value(id).name + "': " + g.value(id).unknown_type);
  for (const Node& n : g.nodes) {
    if (is_opaque(n)) {
      const auto& a = attrs_as<OpaqueAttrs>(n.attrs);
      out.push_back("node '" + n.name + "' (" + a.op_type + "): " + a.reason);
      continue;
    }
    for (const std::string& inner : opaque_nodes_inside(n)) out.push_back(inner);
    for (ValueId v : n.outputs) {
      const std::string& why = g.value(v).unknown_type;
      if (!why.empty() && why != kComputedFromUnknown && seen.insert(why).second) out.push_back(why);
    }
  }
  return out;
}

std::string blockers_message(const Graph& g) {
  const std::vector<std::string> blockers = graph_blockers(g);
  if (blockers.empty()) return {};
  std::string text = "cannot compile: " + std::to_string(blockers.size()) +
                     (blockers.size() == 1 ? " part of the model Tessel cannot run: " : " parts of the model Tessel cannot run: ");
  for (size_t i = 0; i < blockers.size(); ++i) text += (i ? "; " : "") + blockers[i];
  return text;
}

}  // namespace tessel
