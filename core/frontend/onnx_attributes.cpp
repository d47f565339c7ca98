#include "core/frontend/onnx_attributes.h"

#include "core/frontend/onnx_tensor.h"
#include "core/support/error.h"

namespace tessel {

AttrValue attr_value_from_onnx(const onnx::AttributeProto& attr) {
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

AttrMap attr_map_from_onnx(const onnx::NodeProto& node) {
  AttrMap map;
  for (const auto& attr : node.attribute()) map.insert_or_assign(attr.name(), attr_value_from_onnx(attr));
  return map;
}

}  // namespace tessel
