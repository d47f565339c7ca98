#include "core/frontend/onnx_attributes.h"

#include "core/frontend/onnx_tensor.h"
#include "core/support/error.h"

namespace tessel {

AttrValue attr_value_from_onnx(const onnx::AttributeProto& attr, const SubgraphBuilder& subgraph) {
  using A = onnx::AttributeProto;
  try {
    switch (attr.type()) {
      case A::INT:
        return static_cast<int64_t>(attr.i());
      case A::FLOAT:
        return static_cast<double>(attr.f());
      case A::STRING:
        return attr.s();
      case A::TENSOR:
        return tensor_from_onnx(attr.t());
      case A::GRAPH:
        if (subgraph) return subgraph(attr);
        break;
      case A::INTS:
        return std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
      case A::FLOATS:
        return std::vector<double>(attr.floats().begin(), attr.floats().end());
      case A::STRINGS:
        return std::vector<std::string>(attr.strings().begin(), attr.strings().end());
      default:
        break;
    }
    const std::string kind = A::AttributeType_IsValid(attr.type()) ? A::AttributeType_Name(attr.type())
                                                                   : "code " + std::to_string(attr.type());
    throw Error("has type " + kind + ", which Tessel does not support");
  } catch (const Error& e) {
    rethrow_with_context(e, "attribute '" + attr.name() + "'");
  }
}

AttrMap attr_map_from_onnx(const onnx::NodeProto& node, const SubgraphBuilder& subgraph) {
  AttrMap map;
  for (const auto& attr : node.attribute()) map.insert_or_assign(attr.name(), attr_value_from_onnx(attr, subgraph));
  return map;
}

namespace {

template <class List, class Format> std::string list_text(const List& list, Format format) {
  std::string out = "[";
  for (int i = 0; i < list.size(); ++i) {
    if (i == 16) return out + ", ... " + std::to_string(list.size()) + " in all]";
    out += (i ? "," : "") + format(list.Get(i));
  }
  return out + "]";
}

std::string number_text(double v) {
  std::string text = std::to_string(v);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string quoted(const std::string& s) { return "\"" + (s.size() > 64 ? s.substr(0, 61) + "..." : s) + "\""; }

std::string tensor_text(const onnx::TensorProto& t) {
  std::string dims;
  for (int64_t d : t.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  const std::string type = onnx::TensorProto::DataType_IsValid(t.data_type())
                               ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t.data_type()))
                               : "type " + std::to_string(t.data_type());
  return "tensor " + type + "[" + dims + "]";
}

std::string graph_text(const onnx::GraphProto& g) { return "graph of " + std::to_string(g.node_size()) + " nodes"; }

}  // namespace

std::string attribute_text(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  std::string value;
  switch (a.type()) {
    case A::INT:
      value = std::to_string(a.i());
      break;
    case A::FLOAT:
      value = number_text(a.f());
      break;
    case A::STRING:
      value = quoted(a.s());
      break;
    case A::TENSOR:
      value = tensor_text(a.t());
      break;
    case A::GRAPH:
      value = graph_text(a.g());
      break;
    case A::INTS:
      value = list_text(a.ints(), [](int64_t v) { return std::to_string(v); });
      break;
    case A::FLOATS:
      value = list_text(a.floats(), [](float v) { return number_text(v); });
      break;
    case A::STRINGS:
      value = list_text(a.strings(), quoted);
      break;
    case A::TENSORS:
      value = list_text(a.tensors(), tensor_text);
      break;
    case A::GRAPHS:
      value = list_text(a.graphs(), graph_text);
      break;
    default:
      value = A::AttributeType_IsValid(a.type()) ? A::AttributeType_Name(a.type()) : "?";
  }
  return a.name() + "=" + value;
}

}  // namespace tessel
