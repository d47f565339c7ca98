#include "core/frontend/onnx_import.h"

// clang-format off
#include <onnx/onnx_pb.h>  // before onnx-data.pb.h: it defines ONNX_API
#include <onnx/onnx-data.pb.h>
// clang-format on

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/frontend/onnx_attributes.h"
#include "core/frontend/onnx_external_data.h"
#include "core/frontend/onnx_model_loader.h"
#include "core/frontend/onnx_tensor.h"
#include "core/graph/op_table.h"
#include "core/graph/opaque_op.h"
#include "core/support/error.h"

namespace tessel {

namespace {

// "[N,3,224,224]" with symbolic dims by name, for messages.
std::string declared_shape_text(const onnx::TensorShapeProto& shape) {
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    out += (i ? "," : "") + (d.has_dim_value()       ? std::to_string(d.dim_value())
                             : d.dim_param().empty() ? "?"
                                                     : d.dim_param());
  }
  return out + "]";
}

// The static shape a graph input declares, or nullopt when a dim is symbolic or the rank unknown.
std::optional<Shape> static_shape_of(const onnx::ValueInfoProto& input) {
  const auto& tt = input.type().tensor_type();
  if (!tt.has_shape()) return std::nullopt;
  Shape s;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    s.push_back(d.dim_value());
  }
  return s;
}

// The type of an ONNX sequence or optional (of tensors, or of a sequence of tensors): the kind, and
// the dtype and shape of its tensors (shape_known false where the shape is not static). nullopt for
// a tensor type and for what Tessel does not represent (maps, sparse tensors, unknown dtypes).
std::optional<TensorType> container_type_from_onnx(const onnx::TypeProto& type) {
  auto of_tensors = [](const onnx::TypeProto& element, ValueKind kind) -> std::optional<TensorType> {
    if (!element.has_tensor_type()) return std::nullopt;
    const auto& tt = element.tensor_type();
    TensorType t{DataType::kFloat32, {}, kind, tt.has_shape()};
    try {
      t.dtype = dtype_from_onnx(tt.elem_type());
    } catch (const Error&) {
      return std::nullopt;
    }
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        t.shape.push_back(d.dim_value());
        continue;
      }
      t.shape_known = false;
      t.shape.clear();
      break;
    }
    return t;
  };
  if (type.has_sequence_type()) return of_tensors(type.sequence_type().elem_type(), ValueKind::kSequence);
  if (!type.has_optional_type()) return std::nullopt;
  const onnx::TypeProto& element = type.optional_type().elem_type();
  if (element.has_sequence_type()) return of_tensors(element.sequence_type().elem_type(), ValueKind::kOptionalSequence);
  return of_tensors(element, ValueKind::kOptionalTensor);
}

// Optional's `type` attribute is a TypeProto, which typed attributes do not hold: it becomes
// OptionalAttrs' element_dtype and of_sequence (core/graph/ops/sequence_ops.h).
AttrMap optional_attr_map(const onnx::NodeProto& node) {
  AttrMap map;
  for (const auto& a : node.attribute()) {
    if (a.name() != "type" || a.type() != onnx::AttributeProto::TYPE_PROTO) {
      map.insert_or_assign(a.name(), attr_value_from_onnx(a, {}));
      continue;
    }
    onnx::TypeProto wrapped;
    *wrapped.mutable_optional_type()->mutable_elem_type() = a.tp();
    const std::optional<TensorType> t = container_type_from_onnx(wrapped);
    if (!t)
      throw Error("attribute 'type': an optional of a map, an optional or an unknown element type is not supported");
    map.insert_or_assign(
        "element_dtype",
        static_cast<int64_t>(a.tp().has_sequence_type() ? a.tp().sequence_type().elem_type().tensor_type().elem_type()
                                                        : a.tp().tensor_type().elem_type()));
    map.insert_or_assign("of_sequence", int64_t{t->kind == ValueKind::kOptionalSequence});
  }
  return map;
}

std::string shape_arg_text(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

// Builds a Graph from a loaded, upgraded model. Errors name the node; the caller adds the file.
class GraphBuilder {
 public:
  // Takes the proto mutably only to free each initializer's bytes once they are copied into a
  // Tensor, so a large model never holds its weights twice over.
  GraphBuilder(LoadedOnnxModel& model, const ImportOptions& options)
      : proto_(*model.proto.mutable_graph()),
        options_(options),
        not_upgraded_(model.not_upgraded),
        onnx_inference_problem_(model.onnx_inference_problem) {}

  // A builder for a sub-graph of a node of `parent`'s graph: names it does not define are read
  // from the enclosing graphs (captured, see core/graph/ops/control_flow.h).
  GraphBuilder(onnx::GraphProto& proto, GraphBuilder& parent)
      : proto_(proto),
        options_(parent.options_),
        not_upgraded_(parent.not_upgraded_),
        onnx_inference_problem_(parent.onnx_inference_problem_),
        parent_(&parent) {}

  Graph build(const std::string& fallback_name) {
    g_.name = proto_.name().empty() ? fallback_name : proto_.name();
    for (auto& init : *proto_.mutable_initializer()) {  // errors name the tensor
      define(init.name(), g_.add_constant(init.name(), tensor_from_onnx(init)));
      std::string().swap(*init.mutable_raw_data());  // clear() would keep the capacity
    }
    add_sparse_initializers();
    collect_onnx_types();
    add_inputs();
    for (const auto& node : proto_.node()) {
      try {
        add_node(node);
      } catch (const Error& e) {
        rethrow_with_context(e, "node '" + node.name() + "' (" + node.op_type() + ")");
      }
    }
    for (const auto& out : proto_.output()) {
      const ValueId id = resolve(out.name());
      if (id == kNoValue) throw Error("graph output '" + out.name() + "' is not produced by any node");
      g_.outputs.push_back(id);
    }
    infer_types(g_, options_.infer_failure);
    return std::move(g_);
  }

  // The sub-graph: its own inputs first (typed as declared, as far as that goes), then one input
  // per outer value it reads. Types are settled by the node that runs it; here they are inferred
  // only as far as the declarations allow, for looking at the body.
  Graph build_subgraph(const std::string& fallback_name) {
    g_.name = proto_.name().empty() ? fallback_name : proto_.name();
    for (const auto& init : proto_.initializer())
      define(init.name(), g_.add_constant(init.name(), tensor_from_onnx(init)));
    add_sparse_initializers();
    collect_onnx_types();
    for (const auto& input : proto_.input()) {
      if (ids_.count(input.name())) continue;
      const std::optional<TensorType> declared = onnx_type(input.name());
      const ValueId id = g_.add_input(input.name(), declared.value_or(TensorType{}));
      if (!declared) g_.value(id).unknown_type = kTypedByNode;
      define(input.name(), id);
    }
    for (const auto& node : proto_.node()) {
      try {
        add_node(node);
      } catch (const Error& e) {
        rethrow_with_context(e, "node '" + node.name() + "' (" + node.op_type() + ")");
      }
    }
    for (const auto& out : proto_.output()) {
      const ValueId id = resolve(out.name());
      if (id == kNoValue) throw Error("output '" + out.name() + "' is not produced by any node of the body");
      g_.outputs.push_back(id);
    }
    g_.captured_inputs = static_cast<int>(captured_.size());
    infer_types(g_, InferFailure::kMarkUnknown);
    return std::move(g_);
  }

 private:
  void define(const std::string& name, ValueId id) { ids_[name] = id; }

  static constexpr const char* kTypedByNode = "typed by the node that runs this body";

  // The value `name` denotes here: one defined in this graph, or (in a sub-graph) a value of an
  // enclosing graph, which becomes a captured input of this one. kNoValue when none.
  ValueId resolve(const std::string& name) {
    if (auto it = ids_.find(name); it != ids_.end()) return it->second;
    if (!parent_ || parent_->resolve(name) == kNoValue) return kNoValue;
    const ValueId id = g_.add_input(name, onnx_type(name).value_or(TensorType{}));
    g_.value(id).unknown_type = kTypedByNode;
    captured_.push_back(name);
    define(name, id);
    return id;
  }

  void add_inputs() {
    std::unordered_set<std::string> initializers;
    for (const auto& init : proto_.initializer()) initializers.insert(init.name());
    std::unordered_set<std::string> runtime_inputs;
    for (const auto& input : proto_.input())
      if (!initializers.count(input.name())) runtime_inputs.insert(input.name());
    auto check_named = [&](const std::string& name, const char* what) {
      if (runtime_inputs.count(name)) return;
      std::string names;
      for (const auto& input : proto_.input())
        if (runtime_inputs.count(input.name())) names += (names.empty() ? "" : ", ") + input.name();
      throw Error(std::string(what) + " names '" + name +
                  "', which is not a graph input (inputs: " + (names.empty() ? "none" : names) + ")");
    };
    for (const auto& [name, shape] : options_.input_shapes) check_named(name, "--shape");
    for (const auto& [name, value] : options_.bound_inputs) check_named(name, "a bound input");
    for (const auto& input : proto_.input()) {
      if (!runtime_inputs.count(input.name())) continue;  // a weight with a declared type: a constant
      try {
        add_input(input);
      } catch (const Error& e) {
        rethrow_with_context(e, "input '" + input.name() + "'");
      }
    }
  }

  // A graph input Tessel cannot represent (a sequence, strings, unbound symbolic dims when only
  // looking) is kept with an unknown type that says why.
  void add_unknown_input(const onnx::ValueInfoProto& input, const std::string& why) {
    const ValueId id = g_.add_input(input.name(), onnx_type(input.name()).value_or(TensorType{}));
    g_.value(id).unknown_type = why;
    define(input.name(), id);
  }

  void add_input(const onnx::ValueInfoProto& input) {
    if (const std::optional<TensorType> container = container_type_from_onnx(input.type()))
      return define(input.name(), g_.add_input(input.name(), *container));
    if (!input.type().has_tensor_type())
      return add_unknown_input(input, "not a tensor, a sequence or an optional of tensors (maps are not supported)");
    const auto& tt = input.type().tensor_type();
    DataType dtype;
    try {
      dtype = dtype_from_onnx(tt.elem_type());
    } catch (const Error& e) {
      return add_unknown_input(input, e.what());
    }
    Shape shape;
    auto bound = options_.bound_inputs.find(input.name());
    auto given = options_.input_shapes.find(input.name());
    if (given != options_.input_shapes.end()) {
      shape = given->second;
    } else if (bound != options_.bound_inputs.end()) {
      shape = bound->second.shape();
    } else if (auto s = static_shape_of(input)) {
      shape = *s;
    } else if (options_.infer_failure == InferFailure::kMarkUnknown) {
      return add_unknown_input(input, symbolic_dim_message(input));
    } else {
      throw Error(symbolic_dim_message(input));
    }
    const ValueId id = g_.add_input(input.name(), TensorType{dtype, shape});
    if (bound != options_.bound_inputs.end()) {
      const Tensor& v = bound->second;
      if (v.dtype() != dtype || v.shape() != shape)
        throw Error("bound value " + type_str({v.dtype(), v.shape()}) + " does not match the input's type " +
                    type_str({dtype, shape}));
      g_.value(id).value = v;
    }
    define(input.name(), id);
  }

  static std::string symbolic_dim_message(const onnx::ValueInfoProto& input) {
    const auto& tt = input.type().tensor_type();
    if (!tt.has_shape()) return "has no declared shape; give one with --shape " + input.name() + "=1x3x224x224";
    Shape example;
    std::string which;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      const bool symbolic = !d.has_dim_value() || d.dim_value() < 0;
      if (symbolic && which.empty())
        which = (d.dim_param().empty() ? "an unnamed dimension" : "'" + d.dim_param() + "'") + " at axis " +
                std::to_string(i);
      example.push_back(symbolic ? 1 : d.dim_value());
    }
    return "has symbolic dimension " + which + " in shape " + declared_shape_text(tt.shape()) +
           "; bind it with --shape " + input.name() + "=" + shape_arg_text(example);
  }

  // Why `node` cannot be a node of its Tessel op, or empty; parses its attributes when it can.
  std::string opaque_reason(const onnx::NodeProto& node, const OpDef*& op, Attrs& attrs,
                            std::vector<std::string>& captured) {
    if (auto it = not_upgraded_.find(node.name()); it != not_upgraded_.end()) return it->second;
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    // Of the training domain, Tessel has the optimizer steps (core/graph/ops/training_ops.h).
    const bool optimizer = node.domain() == "ai.onnx.preview.training" &&
                           (node.op_type() == "Adagrad" || node.op_type() == "Adam" || node.op_type() == "Momentum");
    op = default_domain || optimizer ? find_op(node.op_type()) : nullptr;
    if (!op) return default_domain ? "unknown op" : "unknown op (domain " + node.domain() + ")";
    try {
      const std::map<std::string, GraphPtr> subgraphs = build_subgraphs(node, captured);
      auto subgraph = [&](const onnx::AttributeProto& a) { return subgraphs.at(a.name()); };
      attrs = op->parse_attrs(
          op->name, node.op_type() == "Optional" ? optional_attr_map(node) : attr_map_from_onnx(node, subgraph));
    } catch (const Error& e) {
      // parse_attrs names the op itself ("Conv: attribute ..."); the node context already does.
      std::string msg = e.what();
      const std::string prefix = op->name + ": ";
      return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
    }
    return {};
  }

  void add_node(const onnx::NodeProto& node) {
    if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx")) {
      try {
        return add_constant_node(node);
      } catch (const Error& e) {
        return add_node_of(node, opaque_op(), opaque_attrs(node, e.what()));
      }
    }
    const OpDef* op = nullptr;
    Attrs attrs;
    std::vector<std::string> captured;
    const std::string why = opaque_reason(node, op, attrs, captured);
    if (!why.empty()) return add_node_of(node, opaque_op(), opaque_attrs(node, why));
    add_node_of(node, *op, std::move(attrs), captured);
  }

  // The node's GRAPH attributes as Tessel graphs, by attribute name, and the outer values they read
  // (`captured`, in order). Every sub-graph of the node takes that same list as its last inputs (If's
  // two branches read different values; each gets the union).
  std::map<std::string, GraphPtr> build_subgraphs(const onnx::NodeProto& node, std::vector<std::string>& captured) {
    std::vector<std::pair<std::string, Graph>> built;
    for (const auto& attr : node.attribute()) {
      if (attr.type() != onnx::AttributeProto::GRAPH) continue;
      GraphBuilder child(*const_cast<onnx::GraphProto*>(&attr.g()), *this);
      try {
        built.emplace_back(attr.name(), child.build_subgraph(node.name() + "." + attr.name()));
      } catch (const Error& e) {
        rethrow_with_context(e, "attribute '" + attr.name() + "'");
      }
      for (const std::string& name : child.captured_)
        if (std::find(captured.begin(), captured.end(), name) == captured.end()) captured.push_back(name);
    }
    std::map<std::string, GraphPtr> out;
    for (auto& [name, g] : built) {
      take_captured_in_order(g, captured);
      out.emplace(name, std::make_shared<const Graph>(std::move(g)));
    }
    return out;
  }

  // Gives `g` one captured input per name in `captured`, in that order, after its own inputs.
  static void take_captured_in_order(Graph& g, const std::vector<std::string>& captured) {
    const size_t formal = g.inputs.size() - static_cast<size_t>(g.captured_inputs);
    std::vector<ValueId> inputs(g.inputs.begin(), g.inputs.begin() + static_cast<std::ptrdiff_t>(formal));
    for (const std::string& name : captured) {
      ValueId id = kNoValue;
      for (size_t k = formal; k < g.inputs.size(); ++k)
        if (g.value(g.inputs[k]).name == name) id = g.inputs[k];
      if (id == kNoValue) {
        id = g.add_input(name, TensorType{});
        g.value(id).unknown_type = kTypedByNode;
      }
      inputs.push_back(id);
    }
    g.inputs = std::move(inputs);
    g.captured_inputs = static_cast<int>(captured.size());
  }

  // Sparse initializers become dense constants: Tessel's kernels read dense weights, and a graph
  // pass or a code generator would densify them anyway.
  void add_sparse_initializers() {
    for (const auto& sparse : proto_.sparse_initializer()) {
      const std::string& name = sparse.values().name();
      if (ids_.count(name)) throw Error("sparse initializer '" + name + "' has the name of another initializer");
      define(name, g_.add_constant(name, tensor_from_onnx_sparse(sparse)));
    }
  }

  static Attrs opaque_attrs(const onnx::NodeProto& node, const std::string& reason) {
    OpaqueAttrs a;
    a.op_type =
        node.domain().empty() || node.domain() == "ai.onnx" ? node.op_type() : node.domain() + "::" + node.op_type();
    a.reason = reason;
    for (const auto& attr : node.attribute()) a.attributes.push_back(attribute_text(attr));
    return make_attrs(std::move(a));
  }

  void add_node_of(const onnx::NodeProto& node, const OpDef& op, Attrs attrs,
                   const std::vector<std::string>& captured = {}) {
    std::vector<ValueId> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        inputs.push_back(kNoValue);
        continue;
      }
      const ValueId id = resolve(name);
      if (id == kNoValue)
        throw Error("input '" + name + "' is not a graph input, an initializer or an output of an earlier node");
      inputs.push_back(id);
    }
    // Trailing omitted optionals go, unless the values the node's sub-graphs read follow them.
    while (captured.empty() && !inputs.empty() && inputs.back() == kNoValue) inputs.pop_back();
    for (const std::string& name : captured) inputs.push_back(resolve(name));
    std::vector<std::string> outputs(node.output().begin(), node.output().end());
    while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
    for (size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k].empty()) outputs[k] = g_.unique_name(node.name() + "_unused" + std::to_string(k));
    const auto ids =
        g_.add_node(node.name(), op, std::move(attrs), std::move(inputs), static_cast<int>(outputs.size()), outputs);
    for (size_t k = 0; k < outputs.size(); ++k) {
      define(outputs[k], ids[k]);
      // What ONNX inferred stands until Tessel infers the type itself (it cannot after an opaque
      // node, or from an input of unknown type).
      const std::optional<TensorType> known = onnx_type(outputs[k]);
      if (known) g_.value(ids[k]).type = *known;
      if (&op == &opaque_op() && !known)
        g_.value(ids[k]).unknown_type =
            onnx_inference_problem_.empty() ? "ONNX shape inference gave no static type" : onnx_inference_problem_;
    }
  }

  // Static tensor types ONNX knows for values: declared graph inputs and outputs, and value_info
  // (which ONNX shape inference fills when the loader ran it).
  void collect_onnx_types() {
    auto note = [&](const onnx::ValueInfoProto& v) {
      if (const std::optional<TensorType> container = container_type_from_onnx(v.type())) {
        onnx_types_[v.name()] = *container;
        return;
      }
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      const auto& tt = v.type().tensor_type();
      TensorType t;
      try {
        t.dtype = dtype_from_onnx(tt.elem_type());
      } catch (const Error&) {
        return;
      }
      for (const auto& d : tt.shape().dim()) {
        if (!d.has_dim_value() || d.dim_value() < 0) return;
        t.shape.push_back(d.dim_value());
      }
      onnx_types_[v.name()] = std::move(t);
    };
    for (const auto& v : proto_.value_info()) note(v);
    for (const auto& v : proto_.output()) note(v);
  }

  std::optional<TensorType> onnx_type(const std::string& name) const {
    auto it = onnx_types_.find(name);
    return it == onnx_types_.end() ? std::nullopt : std::optional<TensorType>(it->second);
  }

  void add_constant_node(const onnx::NodeProto& node) {
    if (node.output_size() != 1 || node.attribute_size() != 1)
      throw Error("a Constant node needs exactly one output and one value attribute");
    const onnx::AttributeProto& a = node.attribute(0);
    Tensor value;
    if (a.name() == "value")
      value = tensor_from_onnx(a.t());
    else if (a.name() == "value_float")
      value = Tensor::scalar<float>(a.f());
    else if (a.name() == "value_int")
      value = Tensor::scalar<int64_t>(a.i());
    else if (a.name() == "value_floats")
      value = Tensor::from_values<float>({a.floats_size()}, std::span<const float>(a.floats().data(), a.floats_size()));
    else if (a.name() == "value_ints")
      value = Tensor::from_values<int64_t>({a.ints_size()}, std::span<const int64_t>(a.ints().data(), a.ints_size()));
    else if (a.name() == "value_string" || a.name() == "value_strings")
      throw Error("string constants are not supported");
    else
      throw Error("attribute '" + a.name() + "' is not supported (sparse or unknown constant form)");
    define(node.output(0), g_.add_constant(node.output(0), std::move(value)));
  }

  onnx::GraphProto& proto_;
  const ImportOptions& options_;
  const std::map<std::string, std::string>& not_upgraded_;
  const std::string& onnx_inference_problem_;
  GraphBuilder* parent_ = nullptr;
  std::vector<std::string> captured_;  // a sub-graph's reads of outer values, in input order
  Graph g_;
  std::unordered_map<std::string, ValueId> ids_;
  std::unordered_map<std::string, TensorType> onnx_types_;
};

// The graph inputs that are not initializers, and which of them feed shape operands: directly, or
// through the nodes that compute one (Range's limit from `size - 1`). The walk goes backwards
// through the nodes, which ONNX keeps in topological order, and stops at Shape and Size, which
// read only their input's type.
std::vector<OnnxInputInfo> runtime_inputs_of(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::unordered_set<std::string> shape_operands;
  for (const auto& node : graph.node()) {
    const OpDef* op = find_op(node.op_type());
    if (!op) continue;
    for (int i : op->shape_inputs)
      if (i < node.input_size() && !node.input(i).empty()) shape_operands.insert(node.input(i));
  }
  for (int k = graph.node_size() - 1; k >= 0; --k) {
    const onnx::NodeProto& node = graph.node(k);
    if (node.op_type() == "Shape" || node.op_type() == "Size") continue;
    const bool computes_one = std::any_of(node.output().begin(), node.output().end(),
                                          [&](const std::string& o) { return shape_operands.count(o) > 0; });
    if (!computes_one) continue;
    for (const std::string& in : node.input())
      if (!in.empty()) shape_operands.insert(in);
  }
  std::vector<OnnxInputInfo> out;
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    const std::optional<TensorType> container = container_type_from_onnx(input.type());
    out.push_back({input.name(), container ? std::optional<Shape>() : static_shape_of(input),
                   shape_operands.count(input.name()) > 0, container ? container->kind : ValueKind::kTensor});
  }
  return out;
}

}  // namespace

OnnxModelFile::OnnxModelFile(const std::string& path)
    : path_(path), model_(std::make_unique<LoadedOnnxModel>(load_onnx_model(path))) {
  inputs_ = runtime_inputs_of(model_->proto.graph());
}

OnnxModelFile::~OnnxModelFile() = default;

Graph OnnxModelFile::import(const ImportOptions& options) {
  if (!model_) throw Error(path_ + ": the model was imported already");
  std::unique_ptr<LoadedOnnxModel> model = std::move(model_);
  try {
    return GraphBuilder(*model, options).build(std::filesystem::path(path_).stem().string());
  } catch (const Error& e) {
    rethrow_in_file(e, path_);
  } catch (const std::bad_alloc&) {
    throw Error(path_ + ": out of memory while building the graph");
  } catch (const std::exception& e) {  // an op's code failing in a way it did not foresee: still one line
    rethrow_in_file(Error(std::string("internal error: ") + e.what()), path_);
  }
}

Graph import_onnx(const std::string& path, const ImportOptions& options) { return OnnxModelFile(path).import(options); }

std::vector<OnnxInputInfo> onnx_runtime_inputs(const std::string& path) { return OnnxModelFile(path).runtime_inputs(); }

std::vector<std::string> onnx_shape_operand_inputs(const std::string& path) {
  std::vector<std::string> names;
  for (const OnnxInputInfo& in : onnx_runtime_inputs(path))
    if (in.feeds_shape_operand) names.push_back(in.name);
  return names;
}

namespace {

// A SequenceProto file also parses as a TensorProto: its name, elem_type and first tensor land in
// the fields of packed dims, data_type and the (deprecated) segment. Such a file is named for what
// it is instead of as a segmented tensor.
void refuse_sequence_file(const std::string& path, const onnx::TensorProto& as_tensor) {
  if (!as_tensor.has_segment()) return;
  onnx::SequenceProto sequence;
  try {
    parse_proto_file(path, sequence, "SequenceProto");
  } catch (const Error&) {
    return;
  }
  if (sequence.elem_type() != onnx::SequenceProto::TENSOR) return;
  throw Error("the file holds a sequence of " + std::to_string(sequence.tensor_values_size()) +
              " tensors (an ONNX SequenceProto), not a tensor; Tessel reads tensor inputs only");
}

}  // namespace

Tensor read_tensor_pb(const std::string& path) {
  onnx::TensorProto proto;
  parse_proto_file(path, proto, "TensorProto");
  try {
    refuse_sequence_file(path, proto);
    if (proto.data_type() == onnx::TensorProto::UNDEFINED)
      throw Error("the tensor has no data type (is this a TensorProto file?)");
    load_external_data(proto, std::filesystem::path(path).parent_path());
    return tensor_from_onnx(proto);
  } catch (const Error& e) {
    rethrow_in_file(e, path);
  }
}

namespace {

std::vector<Tensor> sequence_from_onnx(const onnx::SequenceProto& proto, const std::filesystem::path& dir) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR)
    throw Error("the sequence holds no tensors (elem_type " + std::to_string(proto.elem_type()) +
                "); Tessel reads sequences of tensors only");
  std::vector<Tensor> out;
  for (onnx::TensorProto t : proto.tensor_values()) {
    load_external_data(t, dir);
    out.push_back(tensor_from_onnx(t));
  }
  return out;
}

void sequence_to_onnx(const std::vector<Tensor>& elements, const std::string& name, onnx::SequenceProto* out) {
  out->set_name(name);
  out->set_elem_type(onnx::SequenceProto::TENSOR);
  for (const Tensor& t : elements) tensor_to_onnx(t, "", out->add_tensor_values());
}

template <class Proto>
void write_proto_file(const Proto& proto, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot open for writing: " + std::strerror(errno));
  if (!proto.SerializeToOstream(&out) || !out.flush()) throw Error(path + ": writing failed: " + std::strerror(errno));
}

}  // namespace

RuntimeValue read_value_pb(const std::string& path, ValueKind kind) {
  if (kind == ValueKind::kTensor) return RuntimeValue::of_tensor(read_tensor_pb(path));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  try {
    if (kind == ValueKind::kSequence) {
      onnx::SequenceProto proto;
      parse_proto_file(path, proto, "SequenceProto");
      return RuntimeValue::of_sequence(sequence_from_onnx(proto, dir));
    }
    onnx::OptionalProto proto;
    parse_proto_file(path, proto, "OptionalProto");
    RuntimeValue v = RuntimeValue::empty_optional(kind);
    if (kind == ValueKind::kOptionalTensor && proto.has_tensor_value()) {
      onnx::TensorProto t = proto.tensor_value();
      load_external_data(t, dir);
      v.tensor = tensor_from_onnx(t);
      v.has_element = true;
    } else if (kind == ValueKind::kOptionalSequence && proto.has_sequence_value()) {
      v.sequence = sequence_from_onnx(proto.sequence_value(), dir);
      v.has_element = true;
    } else if (proto.elem_type() != onnx::OptionalProto::UNDEFINED &&
               proto.elem_type() !=
                   (kind == ValueKind::kOptionalTensor ? onnx::OptionalProto::TENSOR : onnx::OptionalProto::SEQUENCE)) {
      throw Error("the optional holds elem_type " + std::to_string(proto.elem_type()) + ", not a " +
                  std::string(value_kind_name(kind)));
    }
    return v;
  } catch (const Error& e) {
    rethrow_in_file(e, path);
  }
}

void write_value_pb(const RuntimeValue& v, const std::string& name, const std::string& path) {
  switch (v.kind) {
    case ValueKind::kTensor:
      return write_tensor_pb(v.tensor, name, path);
    case ValueKind::kSequence: {
      onnx::SequenceProto proto;
      sequence_to_onnx(v.sequence, name, &proto);
      return write_proto_file(proto, path);
    }
    case ValueKind::kOptionalTensor:
    case ValueKind::kOptionalSequence: {
      onnx::OptionalProto proto;
      proto.set_name(name);
      const bool of_tensor = v.kind == ValueKind::kOptionalTensor;
      proto.set_elem_type(of_tensor ? onnx::OptionalProto::TENSOR : onnx::OptionalProto::SEQUENCE);
      if (v.has_element && of_tensor) tensor_to_onnx(v.tensor, "", proto.mutable_tensor_value());
      if (v.has_element && !of_tensor) sequence_to_onnx(v.sequence, "", proto.mutable_sequence_value());
      return write_proto_file(proto, path);
    }
  }
}

void write_tensor_pb(const Tensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto proto;
  tensor_to_onnx(t, name, &proto);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot open for writing: " + std::strerror(errno));
  if (!proto.SerializeToOstream(&out) || !out.flush()) throw Error(path + ": writing failed: " + std::strerror(errno));
}

}  // namespace tessel
