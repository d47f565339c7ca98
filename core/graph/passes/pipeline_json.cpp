#include "core/graph/passes/pipeline_json.h"

#include <cstdio>

namespace tessel {

namespace {

std::string node_name(const Graph& g, NodeId n) { return n >= 0 ? g.nodes[n].name : std::string(); }

}  // namespace

nlohmann::json pass_records_to_json(const std::vector<StepRecordPtr>& records) {
  nlohmann::json out = nlohmann::json::array();
  for (const StepRecordPtr& r : records) {
    nlohmann::json j = {{"name", r->name},
                        {"changed", r->changed},
                        {"ms", r->wall_ms},
                        {"nodes_before", nodes_before(*r)},
                        {"nodes_after", nodes_after(*r)}};
    if (r->failed()) j["error"] = r->error;
    out.push_back(j);
  }
  return out;
}

nlohmann::json fusion_to_json(const Graph& g, const FusionResult& fusion) {
  nlohmann::json groups = nlohmann::json::array();
  for (const FusionGroup& grp : fusion.groups) {
    nlohmann::json nodes = nlohmann::json::array(), inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (NodeId n : grp.nodes) nodes.push_back(node_name(g, n));
    for (ValueId v : grp.inputs) inputs.push_back(g.value(v).name);
    for (ValueId v : grp.outputs) outputs.push_back(g.value(v).name);
    groups.push_back({{"id", grp.id},
                      {"kernel", grp.kernel_name},
                      {"pattern", std::string(pattern_name(grp.pattern))},
                      {"anchor", node_name(g, grp.anchor)},
                      {"nodes", nodes},
                      {"inputs", inputs},
                      {"outputs", outputs}});
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const UnfusedEdge& e : fusion.unfused_edges)
    edges.push_back({{"producer", node_name(g, e.producer)},
                     {"consumer", node_name(g, e.consumer)},
                     {"value", g.value(e.value).name},
                     {"rule", std::string(fusion_block_name(e.rule))},
                     {"reason", std::string(fusion_block_reason(e.rule))}});
  return {{"max_depth", fusion.max_depth}, {"groups", groups}, {"unfused_edges", edges}};
}

nlohmann::json edges_to_json(const Graph& g) {
  nlohmann::json out = nlohmann::json::array();
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n)
    for (ValueId v : g.nodes[n].inputs) {
      if (v == kNoValue) continue;
      const Value& val = g.value(v);
      out.push_back({{"value", val.name},
                     {"producer", val.producer >= 0 ? node_name(g, val.producer)
                                                    : (g.is_input(v) ? "input" : "constant")},
                     {"consumer", g.nodes[n].name},
                     {"type", type_str(val.type)},
                     {"layout", val.layout}});
    }
  return out;
}

nlohmann::json memory_plan_to_json(const Graph& g, const MemoryPlan& plan) {
  nlohmann::json tensors = nlohmann::json::array(), storages = nlohmann::json::array(), steps = nlohmann::json::array();
  for (const PlannedTensor& t : plan.tensors) {
    nlohmann::json j = {{"value", g.value(t.value).name}, {"storage", t.storage_id}, {"offset", t.offset},
                        {"bytes", t.size_bytes},          {"first_step", t.first_step}, {"last_step", t.last_step}};
    if (t.in_place_of != kNoValue) j["in_place_of"] = g.value(t.in_place_of).name;
    tensors.push_back(j);
  }
  for (const StorageBlock& s : plan.storages)
    storages.push_back({{"id", s.id}, {"offset", s.offset}, {"bytes", s.size_bytes}});
  for (const MemoryStep& s : plan.steps) {
    nlohmann::json nodes = nlohmann::json::array();
    for (NodeId n : s.nodes) nodes.push_back(node_name(g, n));
    steps.push_back({{"group", s.group}, {"nodes", nodes}});
  }
  return {{"alignment", plan.alignment}, {"peak_bytes", plan.peak_bytes}, {"naive_bytes", plan.naive_bytes},
          {"steps", steps},              {"storages", storages},          {"tensors", tensors}};
}

nlohmann::json pipeline_result_to_json(const GraphPipelineResult& r) {
  nlohmann::json j = {{"passes", pass_records_to_json(r.records)}};
  if (!r.ok()) j["error"] = r.error;
  if (r.graph) j["edges"] = edges_to_json(*r.graph);
  if (r.graph && r.fusion) j["fusion"] = fusion_to_json(*r.graph, *r.fusion);
  if (r.graph && r.memory_plan) j["memory_plan"] = memory_plan_to_json(*r.graph, *r.memory_plan);
  return j;
}

std::string pass_summary_table(const std::vector<StepRecordPtr>& records) {
  std::string out;
  char line[200];
  std::snprintf(line, sizeof line, "%-32s %-8s %10s %8s %8s\n", "pass", "changed", "ms", "before", "after");
  out += line;
  double total = 0;
  for (const StepRecordPtr& r : records) {
    std::snprintf(line, sizeof line, "%-32s %-8s %10.3f %8d %8d%s\n", r->name.c_str(),
                  r->failed() ? "FAILED" : (r->changed ? "yes" : "no"), r->wall_ms, nodes_before(*r), nodes_after(*r),
                  r->failed() ? ("  " + r->error).c_str() : "");
    out += line;
    total += r->wall_ms;
  }
  std::snprintf(line, sizeof line, "%-32s %-8s %10.3f\n", "total", "", total);
  out += line;
  return out;
}

}  // namespace tessel
