#pragma once
// ONNX AttributeProto → AttrMap, the neutral form every op's typed attributes are parsed from
// (core/attrs/attr_value.h): INT → int64, FLOAT → double, STRING, INTS, FLOATS, STRINGS, TENSOR.
#include <onnx/onnx_pb.h>

#include <functional>

#include "core/attrs/attr_value.h"

namespace tessel {

// Throws Error "attribute 'NAME': reason" for kinds Tessel does not use (sparse tensors, lists of
// graphs...). A GRAPH attribute needs the importer, which resolves the names the sub-graph reads
// from outside: `subgraph` turns it into a Graph (without one, GRAPH is refused like the others).
using SubgraphBuilder = std::function<GraphPtr(const onnx::AttributeProto&)>;
AttrValue attr_value_from_onnx(const onnx::AttributeProto& attr, const SubgraphBuilder& subgraph = {});
AttrMap attr_map_from_onnx(const onnx::NodeProto& node, const SubgraphBuilder& subgraph = {});

// "name=value" for any attribute, sub-graphs and tensors summarised ("body=graph of 4 nodes",
// "value=tensor FLOAT[2,3]"): how an opaque node keeps the attributes Tessel cannot type.
std::string attribute_text(const onnx::AttributeProto& attr);

}  // namespace tessel
