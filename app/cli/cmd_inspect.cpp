// tessel inspect MODEL [--json] [--shape NAME=DIMS]...
//
// Per node: name, op, input and output types, FLOPs; totals: nodes, op histogram, parameters and
// FLOPs. Only import and type inference run, so a ResNet-50-sized model answers well within a second.
// Any well-formed model opens: nodes Tessel cannot run show as "Op (opaque)", types it cannot
// infer as "?", and a last line lists what blocks compiling.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <span>

#include "app/cli/cli_args.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/opaque_op.h"

namespace tessel::cli {

namespace {

const ArgSpec kSpec{
    .usage = "tessel inspect MODEL [--json] [--shape NAME=DIMS]...",
    .repeatable_options = {"--shape"},
    .flags = {"--json"},
    .min_positional = 1,
    .max_positional = 1,
};

constexpr const char* kDetails =
    "Imports MODEL (ONNX), infers every shape and prints each node's input and output types and\n"
    "FLOPs, then totals: node count, op histogram, parameter count and total FLOPs. Nodes Tessel\n"
    "cannot run show as 'Op (opaque)', types it cannot infer as '?', and a last line says what\n"
    "blocks compiling.\n\n"
    "  --json                machine-readable output\n"
    "  --shape NAME=DIMS     binds symbolic input dims, e.g. --shape input=1x3x224x224\n";

struct Totals {
  int64_t flops = 0;
  std::map<std::string, int64_t> op_counts;
};

std::string value_text(const Graph& g, ValueId id) {
  if (id == kNoValue) return "-";
  const Value& v = g.value(id);
  return v.name + ":" + (v.type_known() ? type_str(v.type) : "?");
}

nlohmann::json value_json(const Graph& g, ValueId id) {
  if (id == kNoValue) return nullptr;
  const Value& v = g.value(id);
  if (!v.type_known()) return {{"name", v.name}, {"unknown_type", v.unknown_type}};
  return {{"name", v.name}, {"dtype", dtype_name(v.type.dtype)}, {"shape", v.type.shape}};
}

std::string join_values(const Graph& g, const std::vector<ValueId>& ids) {
  std::string out;
  for (ValueId id : ids) out += (out.empty() ? "" : ", ") + value_text(g, id);
  return out;
}

// "4.09 G" style, for the totals line; exact numbers are in the table and the JSON.
std::string human(int64_t n) {
  const char* units[] = {"", " K", " M", " G", " T"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.2f%s" : "%.0f%s", v, units[u]);
  return buf;
}

void print_text(const std::string& model, const Graph& g, const std::vector<int64_t>& flops, const Totals& totals) {
  std::string out = "model " + model + " (graph '" + g.name + "')\n";
  out += "inputs:  " + join_values(g, g.inputs) + "\n";
  out += "outputs: " + join_values(g, g.outputs) + "\n\n";
  size_t name_w = 4, op_w = 2;
  for (const Node& n : g.nodes) name_w = std::max(name_w, n.name.size()), op_w = std::max(op_w, op_label(n).size());
  char line[256];
  std::snprintf(line, sizeof line, "%5s  %-*s  %-*s  %14s  %s\n", "#", static_cast<int>(name_w), "node",
                static_cast<int>(op_w), "op", "FLOPs", "inputs -> outputs");
  out += line;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::snprintf(line, sizeof line, "%5zu  %-*s  %-*s  %14lld  ", i, static_cast<int>(name_w), n.name.c_str(),
                  static_cast<int>(op_w), op_label(n).c_str(), static_cast<long long>(flops[i]));
    out += line + join_values(g, n.inputs) + " -> " + join_values(g, n.outputs) + "\n";
  }
  out += "\ntotals: " + std::to_string(g.nodes.size()) + " nodes, " + std::to_string(g.parameter_count()) +
         " parameters (" + human(g.parameter_count()) + "), " + std::to_string(totals.flops) + " FLOPs (" +
         human(totals.flops) + ")\nops:";
  for (const auto& [op, count] : totals.op_counts) out += " " + op + "=" + std::to_string(count);
  out += "\n";
  if (const std::string blockers = blockers_message(g); !blockers.empty()) out += blockers + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void print_json(const std::string& model, const Graph& g, const std::vector<int64_t>& flops, const Totals& totals) {
  nlohmann::json j;
  j["model"] = model;
  j["graph"] = g.name;
  for (ValueId id : g.inputs) j["inputs"].push_back(value_json(g, id));
  for (ValueId id : g.outputs) j["outputs"].push_back(value_json(g, id));
  j["nodes"] = nlohmann::json::array();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    nlohmann::json node{{"name", n.name}, {"op", is_opaque(n) ? attrs_as<OpaqueAttrs>(n.attrs).op_type : n.op->name},
                        {"flops", flops[i]}};
    if (is_opaque(n)) {
      node["opaque"] = attrs_as<OpaqueAttrs>(n.attrs).reason;
      node["attributes"] = attrs_as<OpaqueAttrs>(n.attrs).attributes;
    }
    node["inputs"] = nlohmann::json::array();
    node["outputs"] = nlohmann::json::array();
    for (ValueId id : n.inputs) node["inputs"].push_back(value_json(g, id));
    for (ValueId id : n.outputs) node["outputs"].push_back(value_json(g, id));
    j["nodes"].push_back(std::move(node));
  }
  j["totals"] = {{"nodes", g.nodes.size()},
                 {"parameters", g.parameter_count()},
                 {"flops", totals.flops},
                 {"ops", totals.op_counts}};
  if (const auto blockers = graph_blockers(g); !blockers.empty()) j["blockers"] = blockers;
  const std::string text = j.dump(1) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

int run_inspect_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, kDetails), 0;
  const std::string model = args.positional()[0];
  ImportOptions options;
  options.input_shapes = parse_shape_options(args.values("--shape"));
  options.infer_failure = InferFailure::kMarkUnknown;
  const Graph g = import_onnx(model, options);

  Totals totals;
  std::vector<int64_t> flops;
  for (const Node& n : g.nodes) {
    bool types_known = true;
    for (ValueId v : n.outputs) types_known = types_known && g.value(v).type_known();
    for (ValueId v : n.inputs) types_known = types_known && (v == kNoValue || g.value(v).type_known());
    try {
      flops.push_back(types_known ? node_flops(g, n) : 0);  // unknown types: no cost to count
    } catch (const Error& e) {
      rethrow_with_context(e, model + ": node '" + n.name + "' (" + n.op->name + ")");
    }
    totals.flops += flops.back();
    ++totals.op_counts[op_label(n)];
  }
  if (args.flag("--json"))
    print_json(model, g, flops, totals);
  else
    print_text(model, g, flops, totals);
  return 0;
}

}  // namespace tessel::cli
