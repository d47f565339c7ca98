#include "core/runtime/reference_executor.h"

#include <cstring>

#include "core/graph/ops/control_flow.h"

namespace tessel {

namespace {

// If, Loop and Scan (core/graph/ops, below this layer) run their bodies with this executor. It is
// handed down while libtessel_core loads, before any caller can reach a kernel: control_flow.h
// says why a static initializer here rather than a registration on first use (type inference and
// constant folding run those kernels without this executor).
[[maybe_unused]] const bool subgraph_runner_registered = [] {
  ops::set_subgraph_runner(&run_reference_values);
  return true;
}();

Error node_error(const Node& n, const std::string& what) {
  return Error("node '" + n.name + "' (" + n.op->name + "): " + what);
}

bool tensor_has_type(const TensorType& type, const Tensor& t) {
  return t.defined() && t.dtype() == type.dtype && (!type.shape_known || t.shape() == type.shape);
}

// Inference ran a node whose inputs were all known and kept its outputs' values (infer_types): a
// control-flow body typed with its small inputs' values (If's captured cond, a Loop's iteration
// number) arrives here with much of it computed already. Running such a node again is not only
// waste: a nested If's branch would be evaluated once by inference and once here at every level,
// 2^depth for a chain of Ifs (issue 40).
bool outputs_folded(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return false;
  for (ValueId v : n.outputs)
    if (!g.value(v).type.is_static_tensor() || !g.value(v).value.defined()) return false;
  return true;
}

// The folded values hold only for the inputs they were computed from: a graph input whose value
// inference knew (a typed body's small inputs) must arrive with that value.
bool inputs_match_known_values(const Graph& g, const std::vector<RuntimeValue>& inputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& known = g.value(g.inputs[k]).value;
    if (!known.defined()) continue;
    const RuntimeValue& given = inputs[k];
    if (!given.is_tensor() || given.tensor.dtype() != known.dtype() || given.tensor.shape() != known.shape() ||
        std::memcmp(given.tensor.raw_data(), known.raw_data(), known.nbytes()) != 0)
      return false;
  }
  return true;
}

}  // namespace

std::string runtime_type_mismatch(const TensorType& type, const RuntimeValue& value) {
  bool ok = value.kind == type.kind;
  if (ok && (!is_optional(type.kind) || value.has_element)) {
    if (type.kind == ValueKind::kTensor || type.kind == ValueKind::kOptionalTensor)
      ok = tensor_has_type(type, value.tensor);
    else
      for (const Tensor& t : value.sequence) ok = ok && tensor_has_type(type, t);
  }
  return ok ? std::string() : "expects " + type_str(type) + ", got " + value.summary();
}

std::vector<RuntimeValue> run_node_reference(const Graph& g, const Node& n,
                                             const std::vector<const RuntimeValue*>& inputs) {
  // Tensor outputs of static shape are allocated here; the kernel assigns the others.
  std::vector<Tensor> outs;
  for (ValueId v : n.outputs) {
    const TensorType& t = g.value(v).type;
    outs.push_back(t.is_static_tensor() ? Tensor(t.dtype, t.shape) : Tensor());
  }
  std::vector<RuntimeValue> value_outs(n.outputs.size());
  for (size_t k = 0; k < n.outputs.size(); ++k) value_outs[k].kind = g.value(n.outputs[k]).type.kind;
  KernelArgs args;
  args.outputs = &outs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const RuntimeValue* in = inputs[k];
    if (in && !in->is_tensor() && !n.op->takes_any_kind)
      throw node_error(n, "input " + std::to_string(k) + " is " + std::string(is_optional(in->kind) ? "an " : "a ") +
                              std::string(value_kind_name(in->kind)) + "; " + n.op->name + " takes tensors");
    args.inputs.push_back(in && in->is_tensor() ? &in->tensor : nullptr);
  }
  if (n.op->takes_any_kind) {
    args.values = inputs;
    args.value_outputs = &value_outs;
  }
  try {
    n.op->reference(n.attrs, args);
  } catch (const Error& e) {
    rethrow_with_context(e, "node '" + n.name + "' (" + n.op->name + ")");
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (value_outs[k].is_tensor()) value_outs[k].tensor = std::move(outs[k]);
    const Value& out = g.value(n.outputs[k]);
    const std::string mismatch = runtime_type_mismatch(out.type, value_outs[k]);
    if (!mismatch.empty()) throw node_error(n, "output '" + out.name + "' " + mismatch);
  }
  return value_outs;
}

std::vector<Tensor> run_node_reference(const Graph& g, const Node& n, const std::vector<const Tensor*>& inputs) {
  std::vector<RuntimeValue> values;
  values.reserve(inputs.size());  // stable addresses for the pointers below
  std::vector<const RuntimeValue*> pointers;
  for (const Tensor* t : inputs) {
    if (t) values.push_back(RuntimeValue::of_tensor(*t));
    pointers.push_back(t ? &values.back() : nullptr);
  }
  std::vector<Tensor> outs;
  for (RuntimeValue& v : run_node_reference(g, n, pointers)) {
    if (!v.is_tensor())
      throw node_error(n, "made " + std::string(is_optional(v.kind) ? "an " : "a ") +
                              std::string(value_kind_name(v.kind)) + " where a tensor was expected");
    outs.push_back(std::move(v.tensor));
  }
  return outs;
}

std::vector<Tensor> bind_graph_inputs(const Graph& g, const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs.size())
    throw Error("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, got " +
                std::to_string(inputs.size()));
  std::vector<Tensor> env(g.values.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& v = g.value(g.inputs[k]);
    if (inputs[k].dtype() != v.type.dtype || inputs[k].shape() != v.type.shape || !v.type.is_tensor())
      throw Error("input '" + v.name + "' expects " + type_str(v.type) + ", got " +
                  type_str({inputs[k].dtype(), inputs[k].shape()}));
    env[g.inputs[k]] = inputs[k];
  }
  for (ValueId id = 0; id < static_cast<ValueId>(g.values.size()); ++id)
    if (g.is_constant(id)) env[id] = g.value(id).value;
  return env;
}

std::vector<RuntimeValue> run_reference_values(const Graph& g, const std::vector<RuntimeValue>& inputs) {
  if (inputs.size() != g.inputs.size())
    throw Error("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, got " +
                std::to_string(inputs.size()));
  std::vector<RuntimeValue> env(g.values.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& v = g.value(g.inputs[k]);
    const std::string mismatch = runtime_type_mismatch(v.type, inputs[k]);
    if (!mismatch.empty()) throw Error("input '" + v.name + "' " + mismatch);
    env[g.inputs[k]] = inputs[k];
  }
  for (ValueId id = 0; id < static_cast<ValueId>(g.values.size()); ++id)
    if (g.is_constant(id)) env[id] = RuntimeValue::of_tensor(g.value(id).value);

  // Remaining uses of each value, so intermediates are freed as soon as possible.
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue) ++uses[v];
  for (ValueId v : g.outputs) ++uses[v];

  const bool folded_values_hold = inputs_match_known_values(g, inputs);
  for (const Node& n : g.nodes) {
    if (folded_values_hold && outputs_folded(g, n)) {
      for (ValueId v : n.outputs) env[v] = RuntimeValue::of_tensor(g.value(v).value);
    } else {
      std::vector<const RuntimeValue*> args;
      for (ValueId v : n.inputs) args.push_back(v == kNoValue ? nullptr : &env[v]);
      std::vector<RuntimeValue> outs = run_node_reference(g, n, args);
      for (size_t k = 0; k < outs.size(); ++k) env[n.outputs[k]] = std::move(outs[k]);
    }
    for (ValueId v : n.inputs)
      if (v != kNoValue && --uses[v] == 0 && !g.is_constant(v)) env[v] = RuntimeValue();
  }
  std::vector<RuntimeValue> out;
  for (ValueId v : g.outputs) out.push_back(env[v]);
  return out;
}

std::vector<Tensor> run_reference(const Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<RuntimeValue> values;
  for (const Tensor& t : inputs) values.push_back(RuntimeValue::of_tensor(t));
  std::vector<Tensor> out;
  for (RuntimeValue& v : run_reference_values(g, values)) {
    if (!v.is_tensor())
      throw Error("graph '" + g.name + "' returns " + std::string(is_optional(v.kind) ? "an " : "a ") +
                  std::string(value_kind_name(v.kind)) + ": run it with run_reference_values");
    out.push_back(std::move(v.tensor));
  }
  return out;
}

}  // namespace tessel
