#include "core/pass/pass_instrument.h"

#include <cstdio>

namespace tessel {

void PassRecorder::after_pass(std::string_view pass, const GraphPtr& before, const GraphPtr& after, bool changed,
                              double wall_ms) {
  PassRecord r;
  r.name = std::string(pass);
  r.graph = after;
  r.changed = changed;
  r.wall_ms = wall_ms;
  r.nodes_before = static_cast<int>(before->nodes.size());
  r.nodes_after = static_cast<int>(after->nodes.size());
  records_.push_back(std::make_shared<const PassRecord>(std::move(r)));
}

void PassRecorder::after_pass_failed(std::string_view pass, const GraphPtr& before, const Error& error,
                                     double wall_ms) {
  // A verifier may reject a pass after this recorder already recorded it as done: replace that.
  if (!records_.empty() && records_.back()->name == pass && !records_.back()->failed() &&
      records_.back()->graph != before)
    records_.pop_back();
  PassRecord r;
  r.name = std::string(pass);
  r.graph = before;
  r.wall_ms = wall_ms;
  r.nodes_before = r.nodes_after = static_cast<int>(before->nodes.size());
  r.error = "pass '" + r.name + "' failed: " + error.what();
  records_.push_back(std::make_shared<const PassRecord>(std::move(r)));
}

void PassTimer::add(std::string_view pass, double ms) {
  for (Entry& e : entries_)
    if (e.pass == pass) {
      e.total_ms += ms;
      ++e.runs;
      return;
    }
  entries_.push_back({std::string(pass), ms, 1});
}

void PassTimer::after_pass(std::string_view pass, const GraphPtr&, const GraphPtr&, bool, double wall_ms) {
  add(pass, wall_ms);
}

void PassTimer::after_pass_failed(std::string_view pass, const GraphPtr&, const Error&, double wall_ms) {
  add(pass, wall_ms);
}

double PassTimer::total_ms() const {
  double t = 0;
  for (const Entry& e : entries_) t += e.total_ms;
  return t;
}

std::string PassTimer::table() const {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "%-28s %5s %10s\n", "pass", "runs", "ms");
  out += line;
  for (const Entry& e : entries_) {
    std::snprintf(line, sizeof line, "%-28s %5d %10.3f\n", e.pass.c_str(), e.runs, e.total_ms);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-28s %5s %10.3f\n", "total", "", total_ms());
  out += line;
  return out;
}

void verify_graph(const Graph& g) {
  const auto n_values = static_cast<ValueId>(g.values.size());
  std::vector<bool> defined(g.values.size(), false);
  for (ValueId v : g.inputs) {
    if (v < 0 || v >= n_values) throw Error("graph input id " + std::to_string(v) + " is out of range");
    defined[v] = true;
  }
  for (ValueId v = 0; v < n_values; ++v)
    if (g.is_constant(v)) defined[v] = true;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n) {
    const Node& node = g.nodes[n];
    if (!node.op) throw Error("node '" + node.name + "' has no op");
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      if (v < 0 || v >= n_values)
        throw Error("node '" + node.name + "' reads value id " + std::to_string(v) + ", out of range");
      if (!defined[v])
        throw Error("node '" + node.name + "' reads '" + g.value(v).name + "' before it is produced");
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueId v = node.outputs[k];
      if (v < 0 || v >= n_values)
        throw Error("node '" + node.name + "' writes value id " + std::to_string(v) + ", out of range");
      if (g.value(v).producer != n || g.value(v).output_index != static_cast<int>(k))
        throw Error("value '" + g.value(v).name + "' does not name node '" + node.name + "' as its producer");
      defined[v] = true;
    }
  }
  for (ValueId v : g.outputs)
    if (v < 0 || v >= n_values || !defined[v])
      throw Error("graph output id " + std::to_string(v) + " is not produced by any node, input or constant");

  Graph reinferred = g;
  infer_types(reinferred);
  for (ValueId v = 0; v < n_values; ++v)
    if (!(reinferred.values[v].type == g.values[v].type))
      throw Error("value '" + g.values[v].name + "' is recorded as " + type_str(g.values[v].type) +
                  " but infers to " + type_str(reinferred.values[v].type));
}

void PassVerifier::after_pass(std::string_view pass, const GraphPtr&, const GraphPtr& after, bool changed, double) {
  if (!changed) return;
  try {
    verify_graph(*after);
  } catch (const Error& e) {
    throw Error("verifier after '" + std::string(pass) + "': " + e.what());
  }
}

}  // namespace tessel
