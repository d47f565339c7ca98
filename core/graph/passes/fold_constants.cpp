#include "core/graph/passes/fold_constants.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/graph/passes/graph_rewrite.h"

namespace tessel {

namespace {

bool is_random(const OpDef& op) {
  static constexpr std::array<std::string_view, 6> kRandom = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                              "RandomUniformLike", "Bernoulli",     "Multinomial"};
  return std::find(kRandom.begin(), kRandom.end(), op.name) != kRandom.end();
}

bool known(const Graph& g, ValueId v) { return v == kNoValue || g.value(v).value.defined(); }

}  // namespace

bool fold_constants(Graph& g, PassContext& ctx) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes.size()); ++id) {
    Node& n = g.nodes[id];
    if (is_random(*n.op)) continue;
    int64_t out_bytes = 0;
    bool outputs_known = true;
    for (ValueId v : n.outputs) {
      const Value& out = g.value(v);
      out_bytes += shape_numel(out.type.shape) * static_cast<int64_t>(dtype_size(out.type.dtype));
      outputs_known = outputs_known && out.value.defined();
    }
    // Shape(%x) is known from %x's type alone: its outputs count even when its input does not.
    if (!outputs_known && !std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return known(g, v); }))
      continue;
    if (out_bytes > ctx.options.max_folded_bytes) continue;
    std::vector<Tensor> results;
    if (outputs_known) {  // type inference already computed them
      for (ValueId v : n.outputs) results.push_back(g.value(v).value);
    } else {
      std::vector<const Tensor*> inputs;
      for (ValueId v : n.inputs) inputs.push_back(v == kNoValue ? nullptr : &g.value(v).value);
      for (ValueId v : n.outputs) results.emplace_back(g.value(v).type.dtype, g.value(v).type.shape);
      try {
        n.op->reference(n.attrs, KernelArgs{inputs, &results});
      } catch (const Error& e) {
        rethrow_with_context(e, "folding node '" + n.name + "' (" + n.op->name + ")");
      }
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) make_constant(g, n.outputs[k], std::move(results[k]));
    dead[id] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace tessel
