#pragma once
// The opaque op: an imported node Tessel has no op for, or cannot express (an op of another domain,
// an old form without a rewrite, an attribute it does not take). The node stays in the graph so the
// model can be looked at: its ONNX op type, its attributes as text, and output types from ONNX's
// own shape inference where that succeeded (the importer sets them; Value::unknown_type says when
// it did not). It has no reference kernel and no builder: graph_blockers (graph.h) lists it, so
// compiling or running the graph fails with one message naming every such node.
//
//   %x ──▶ [Einsum (opaque): equation="ij,jk->ik"] ──▶ %y f32[2,4] (from ONNX inference)
#include <string>
#include <vector>

#include "core/graph/op.h"

namespace tessel {

struct OpaqueAttrs {
  std::string op_type;                  // "Einsum"; ops of other domains as "com.microsoft::FusedConv"
  std::string reason;                   // why Tessel cannot run it: "unknown op", "attribute 'mode': ..."
  std::vector<std::string> attributes;  // "name=value" as the model stores them
  template <class V>
  void visit(V& v) {
    v(op_type, {.name = "op_type", .doc = "The node's op type in the model"});
    v(reason, {.name = "reason", .doc = "Why Tessel cannot compile or run the node"});
    v(attributes, {.name = "attributes", .doc = "The node's attributes as text", .def = std::vector<std::string>{}});
  }
};

// Not in the op table (no model names it); nodes point at this one definition.
const OpDef& opaque_op();

}  // namespace tessel
