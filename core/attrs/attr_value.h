#pragma once
// The neutral form attributes arrive in, whatever their source (ONNX AttributeProto, JSON, the
// graph text format). Typed attribute structs are built from an AttrMap by attrs.h's visitors.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/support/tensor.h"

namespace tessel {

// A sub-graph held by a node (If's branches, Loop's and Scan's body): core/graph/graph.h defines
// Graph; attributes only hold and compare the handle.
class Graph;
using GraphPtr = std::shared_ptr<const Graph>;

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, GraphPtr>;
using AttrMap = std::map<std::string, AttrValue>;

std::string attr_value_kind(const AttrValue& v);  // "int", "float", "string", "ints", ...
std::string attr_value_str(const AttrValue& v);

// JSON object → AttrMap: integers, floats, strings and homogeneous arrays of them; an object
// {"dtype","shape","values"} is a tensor. Throws Error naming the key on anything else.
AttrMap attr_map_from_json(const nlohmann::json& j);

}  // namespace tessel
