// Static memory planning; the algorithm is described with a diagram in plan_memory.h.
#include "core/graph/passes/plan_memory.h"

#include <algorithm>
#include <map>

namespace tessel {

namespace {

int64_t align_up(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

int64_t value_bytes(const Value& v) {
  return shape_numel(v.type.shape) * static_cast<int64_t>(dtype_size(v.type.dtype));
}

std::vector<MemoryStep> execution_steps(const Graph& g, const FusionResult* fusion) {
  std::vector<MemoryStep> steps;
  if (fusion && fusion->group_of_node.size() == g.nodes.size()) {
    for (const FusionGroup& grp : fusion->groups) steps.push_back({grp.nodes, grp.id});
  } else {
    for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n) steps.push_back({{n}, -1});
  }
  return steps;
}

}  // namespace

MemoryPlan plan_graph_memory(const Graph& g, const FusionResult* fusion, int64_t alignment) {
  if (alignment < 1 || (alignment & (alignment - 1)) != 0)
    throw Error("memory alignment must be a power of two, got " + std::to_string(alignment));
  MemoryPlan plan;
  plan.alignment = alignment;
  plan.steps = execution_steps(g, fusion);
  const int n_steps = static_cast<int>(plan.steps.size());

  std::vector<int> step_of_node(g.nodes.size(), -1);
  for (int s = 0; s < n_steps; ++s)
    for (NodeId n : plan.steps[s].nodes) step_of_node[n] = s;

  // Liveness of every value that crosses steps or leaves the graph.
  std::vector<int> first(g.values.size(), -1), last(g.values.size(), -1);
  std::vector<int> readers(g.values.size(), 0);  // distinct steps reading it
  std::vector<bool> is_output(g.values.size(), false);
  for (ValueId v : g.outputs) is_output[v] = true;
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
    const NodeId p = g.value(v).producer;
    if (p >= 0) first[v] = step_of_node[p];
  }
  for (int s = 0; s < n_steps; ++s) {
    std::vector<ValueId> seen;
    for (NodeId n : plan.steps[s].nodes)
      for (ValueId v : g.nodes[n].inputs) {
        if (v == kNoValue || first[v] < 0 || first[v] == s) continue;
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
        seen.push_back(v);
        last[v] = std::max(last[v], s);
        ++readers[v];
      }
  }
  for (ValueId v : g.outputs)
    if (first[v] >= 0) last[v] = n_steps - 1;

  struct Block {
    int64_t size = 0;
    int busy_until = -1;  // last step of the tensor occupying it
  };
  std::vector<Block> blocks;
  std::map<ValueId, int> block_of;

  for (int s = 0; s < n_steps; ++s) {
    const MemoryStep& step = plan.steps[s];
    const PatternKind pattern =
        fusion && step.group >= 0 ? fusion->groups[step.group].pattern : g.nodes[step.nodes.front()].op->pattern;
    // Inputs this step reads for the last time: candidates for in-place reuse.
    std::vector<ValueId> dying_inputs;
    for (NodeId n : step.nodes)
      for (ValueId v : g.nodes[n].inputs)
        if (v != kNoValue && first[v] >= 0 && first[v] != s && last[v] == s && !is_output[v] && readers[v] == 1 &&
            std::find(dying_inputs.begin(), dying_inputs.end(), v) == dying_inputs.end())
          dying_inputs.push_back(v);

    for (NodeId n : step.nodes)
      for (ValueId v : g.nodes[n].outputs) {
        if (last[v] < 0) continue;  // stays inside the kernel
        const int64_t bytes = value_bytes(g.value(v));
        const int64_t size = align_up(std::max<int64_t>(bytes, 1), alignment);
        PlannedTensor t;
        t.value = v;
        t.size_bytes = bytes;
        t.first_step = s;
        t.last_step = last[v];
        int chosen = -1;
        if (pattern <= PatternKind::kBroadcast)
          for (auto it = dying_inputs.begin(); it != dying_inputs.end(); ++it)
            if (value_bytes(g.value(*it)) == bytes && g.value(*it).type.shape == g.value(v).type.shape) {
              chosen = block_of.at(*it);
              t.in_place_of = *it;
              dying_inputs.erase(it);
              break;
            }
        if (chosen < 0) {
          int best_fit = -1, largest = -1;
          for (int b = 0; b < static_cast<int>(blocks.size()); ++b) {
            if (blocks[b].busy_until >= s) continue;
            if (blocks[b].size >= size && (best_fit < 0 || blocks[b].size < blocks[best_fit].size)) best_fit = b;
            if (largest < 0 || blocks[b].size > blocks[largest].size) largest = b;
          }
          chosen = best_fit >= 0 ? best_fit : largest;
          if (chosen < 0) {
            chosen = static_cast<int>(blocks.size());
            blocks.push_back({});
          }
          blocks[chosen].size = std::max(blocks[chosen].size, size);
        }
        blocks[chosen].busy_until = std::max(blocks[chosen].busy_until, t.last_step);
        block_of[v] = chosen;
        t.storage_id = chosen;
        plan.naive_bytes += size;
        plan.tensors.push_back(t);
      }
  }
  int64_t offset = 0;
  for (int b = 0; b < static_cast<int>(blocks.size()); ++b) {
    plan.storages.push_back({b, offset, blocks[b].size});
    offset += blocks[b].size;
  }
  plan.peak_bytes = offset;
  for (PlannedTensor& t : plan.tensors) t.offset = plan.storages[t.storage_id].offset;
  return plan;
}

bool plan_memory(Graph& g, PassContext& ctx) {
  ctx.memory_plan =
      std::make_shared<const MemoryPlan>(plan_graph_memory(g, ctx.fusion.get(), ctx.options.memory_alignment));
  return false;
}

}  // namespace tessel
