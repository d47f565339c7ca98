#pragma once
// ONNX AttributeProto → AttrMap, the neutral form every op's typed attributes are parsed from
// (core/attrs/attr_value.h): INT → int64, FLOAT → double, STRING, INTS, FLOATS, STRINGS, TENSOR.
#include <onnx/onnx_pb.h>

#include "core/attrs/attr_value.h"

namespace tessel {

// Throws Error "attribute 'NAME': reason" for kinds Tessel does not use (graphs, sparse tensors...).
AttrValue attr_value_from_onnx(const onnx::AttributeProto& attr);
AttrMap attr_map_from_onnx(const onnx::NodeProto& node);

// "name=value" for any attribute, sub-graphs and tensors summarised ("body=graph of 4 nodes",
// "value=tensor FLOAT[2,3]"): how an opaque node keeps the attributes Tessel cannot type.
std::string attribute_text(const onnx::AttributeProto& attr);

}  // namespace tessel
