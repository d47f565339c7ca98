#pragma once
// The dataflow graph: values (typed tensors) produced by nodes (ops), plus graph inputs and
// constants. Nodes are kept in topological order. A Graph is a value: passes take one and return
// a new one; snapshots are held as shared_ptr<const Graph>, and constants share their buffers, so
// keeping every pass's result costs little.
//
//   %x (input) ──▶ [Conv] ──▶ %c ──▶ [Relu] ──▶ %y (output)
//   %w (constant) ─┘
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/op.h"

namespace tessel {

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;
using NodeId = int32_t;

struct Value {
  std::string name;
  TensorType type;
  NodeId producer = -1;  // -1: a graph input or a constant
  int output_index = 0;
  // Known at compile time: constants (weights) and, after inference, results of shape
  // computations and bound inputs. Undefined otherwise.
  Tensor value;
  std::string layout;  // data layout ("NCHW", "NCHW16c"); empty until layout passes assign one
  // Empty when `type` is known. Otherwise why not: the value is a graph input Tessel cannot
  // represent (a sequence, strings), an output of an opaque node that ONNX shape inference could
  // not type, an output whose inference failed, or kComputedFromUnknown. `type` then holds what
  // the importer learnt from ONNX, if anything.
  std::string unknown_type;
  bool type_known() const { return unknown_type.empty(); }
};

// The unknown_type of a value computed from a value of unknown type (its cause is listed there).
inline constexpr const char* kComputedFromUnknown = "computed from a value of unknown type";

struct Node {
  std::string name;
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<ValueId> inputs;  // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;
};

class Graph {
 public:
  std::string name = "main";
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  // A sub-graph (a node's body, core/graph/ops/control_flow.h) reads values of the graphs around
  // it by name. Each such value is one of its inputs: the last `captured_inputs` of them, each
  // named as the outer value, and the node passes the outer value in as an extra input. 0 for a
  // top-level graph.
  int captured_inputs = 0;

  ValueId add_input(std::string name, TensorType type);
  ValueId add_constant(std::string name, Tensor value);
  // Appends a node; outputs get the given names (or "<node>_out<k>") and are typed by infer_types.
  std::vector<ValueId> add_node(std::string name, const OpDef& op, Attrs attrs, std::vector<ValueId> inputs,
                                int num_outputs = 1, std::vector<std::string> output_names = {});
  ValueId add_node1(std::string name, const OpDef& op, Attrs attrs, std::vector<ValueId> inputs) {
    return add_node(std::move(name), op, std::move(attrs), std::move(inputs))[0];
  }

  const Value& value(ValueId id) const { return values.at(static_cast<size_t>(id)); }
  Value& value(ValueId id) { return values.at(static_cast<size_t>(id)); }
  bool is_constant(ValueId id) const;  // a weight: no producer, value known, not a graph input
  bool is_input(ValueId id) const;
  // Nodes that read each value (index = ValueId).
  std::vector<std::vector<NodeId>> consumers() const;
  std::string unique_name(const std::string& base) const;
  int64_t parameter_count() const;  // elements in constants
};

// What infer_types does when a node's inference fails: throw (compiling), or give its outputs an
// unknown type with the error as the reason and go on (looking at a model: tessel inspect, the studio).
enum class InferFailure { kThrow, kMarkUnknown };

// Infers dtypes and shapes of every node output in order, and propagates values known at compile
// time through small computations (Shape → Gather → Concat → Reshape chains). Throws Error naming
// the node and the reason. Opaque nodes keep the output types the importer gave them; a node with
// an input of unknown type is not inferred, its outputs are kComputedFromUnknown.
void infer_types(Graph& g, InferFailure on_failure = InferFailure::kThrow);

bool is_opaque(const Node& n);
// The op as people should read it: "Conv", or "Einsum (opaque)".
std::string op_label(const Node& n);

// Why `g` cannot be compiled or run, one entry per cause: each opaque node ("node 'n' (Einsum):
// unknown op") and each value whose type is unknown for a reason of its own. Empty when none.
std::vector<std::string> graph_blockers(const Graph& g);
// "cannot compile: 2 parts of the model Tessel cannot run: A; B" (one line), or empty when none.
std::string blockers_message(const Graph& g);

// Why `g` runs on the reference executor as a whole: its first value (not counting those inside
// sub-graphs) that is a sequence, an optional or a tensor of a shape known only at run time
// ("value 's' is a sequence (seq(f32[2]))"); empty when every value is a tensor of static shape.
std::string non_tensor_values_reason(const Graph& g);

// The sub-graphs a node holds (If's then_branch and else_branch, Loop's body), by attribute name.
std::vector<std::pair<std::string, GraphPtr>> node_subgraphs(const Node& n);

// Floating-point operations of one node, from its op's cost function.
int64_t node_flops(const Graph& g, const Node& n);
OpTypes node_types(const Graph& g, const Node& n);

}  // namespace tessel
