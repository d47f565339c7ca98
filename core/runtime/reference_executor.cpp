#include "core/runtime/reference_executor.h"

namespace tessel {

std::vector<Tensor> run_node_reference(const Graph& g, const Node& n, const std::vector<const Tensor*>& inputs) {
  std::vector<Tensor> outs;
  for (ValueId v : n.outputs) outs.emplace_back(g.value(v).type.dtype, g.value(v).type.shape);
  KernelArgs args;
  args.inputs = inputs;
  args.outputs = &outs;
  try {
    n.op->reference(n.attrs, args);
  } catch (const Error& e) {
    rethrow_with_context(e, "node '" + n.name + "' (" + n.op->name + ")");
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
    if (inputs[k].dtype() != v.type.dtype || inputs[k].shape() != v.type.shape)
      throw Error("input '" + v.name + "' expects " + type_str(v.type) + ", got " +
                  type_str({inputs[k].dtype(), inputs[k].shape()}));
    env[g.inputs[k]] = inputs[k];
  }
  for (ValueId id = 0; id < static_cast<ValueId>(g.values.size()); ++id)
    if (g.is_constant(id)) env[id] = g.value(id).value;
  return env;
}

std::vector<Tensor> run_reference(const Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> env = bind_graph_inputs(g, inputs);
  // Remaining uses of each value, so intermediates are freed as soon as possible.
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue) ++uses[v];
  for (ValueId v : g.outputs) ++uses[v];

  for (const Node& n : g.nodes) {
    std::vector<const Tensor*> args;
    for (ValueId v : n.inputs) args.push_back(v == kNoValue ? nullptr : &env[v]);
    std::vector<Tensor> outs = run_node_reference(g, n, args);
    for (size_t k = 0; k < outs.size(); ++k) env[n.outputs[k]] = std::move(outs[k]);
    for (ValueId v : n.inputs)
      if (v != kNoValue && --uses[v] == 0 && !g.is_constant(v)) env[v] = Tensor();
  }
  std::vector<Tensor> out;
  for (ValueId v : g.outputs) out.push_back(env[v]);
  return out;
}

}  // namespace tessel
