// tessel passes MODEL [--target SPEC] [--dump-after all|changed|PASS] [--format text|json|dot|svg]
//                     [--dump-dir DIR] [--shape NAME=DIMS]... [--why NODE]
//
// Runs the graph pipeline (core/graph/passes/pipeline.cpp) on MODEL and shows the graph after the
// chosen passes plus a summary table. MODEL is ONNX (.onnx) or Tessel's graph text format.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>

#include "app/cli/cli_args.h"
#include "app/cli/cli_target.h"
#include "core/frontend/load_model.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/export_dot.h"
#include "core/graph/passes/fusion_explain.h"
#include "core/graph/passes/pipeline_json.h"

namespace tessel::cli {

namespace fs = std::filesystem;

namespace {

const ArgSpec kSpec{
    .usage =
        "tessel passes MODEL [--target SPEC] [--dump-after all|changed|PASS] [--format text|json|dot|svg] "
        "[--dump-dir DIR] [--shape NAME=DIMS]... [--why NODE]",
    .value_options = {"--target", "--dump-after", "--format", "--dump-dir", "--why"},
    .repeatable_options = {"--shape"},
    .min_positional = 1,
    .max_positional = 1,
};

constexpr const char* kDetails =
    "Runs the graph passes on MODEL (.onnx, or a graph in Tessel's text format) and shows the graph after\n"
    "each selected pass, then a summary table (pass, changed, ms, nodes before/after).\n\n"
    "  --target SPEC         e.g. 'ref -vector_bits=512' or {\"kind\": \"ref\", \"vector_bits\": 256}\n"
    "                        (default: llvm when its plugin is loaded, else ref)\n"
    "  --dump-after WHICH    all, changed (default) or the name of one pass\n"
    "  --format FORMAT       text (default), json (with fusion groups, blocked-edge reasons, per-edge layouts\n"
    "                        and the memory plan), dot or svg (fusion groups as clusters)\n"
    "  --dump-dir DIR        write one file per selected pass (NN_pass.txt/.json/.dot/.svg) instead of stdout\n"
    "  --shape NAME=DIMS     binds symbolic input dims of an ONNX model\n"
    "  --why NODE            instead of the graphs: NODE's kernel and, for every edge into or out of it,\n"
    "                        whether it fused, and if not the rule that kept it apart, with the op kinds\n";

bool selected(const StepRecord& r, const std::string& which) {
  if (which == "all") return true;
  if (which == "changed") return r.changed || r.failed();
  return r.name == which;
}

}  // namespace

int run_passes_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, kDetails), 0;
  const std::string model = args.positional()[0];
  const std::string format = args.value("--format").value_or("text");
  if (format != "text" && format != "json" && format != "dot" && format != "svg")
    throw UsageError("--format must be text, json, dot or svg, got '" + format + "'");
  const std::string which = args.value("--dump-after").value_or("changed");
  const Target target = resolve_target(args.value("--target"));

  PipelineOptions options;
  if (which != "all" && which != "changed") {
    bool known = false;
    std::string names;
    for (const GraphPass& p : graph_pipeline_passes(options)) {
      known = known || p.name == which;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!known) throw UsageError("--dump-after: no pass named '" + which + "' (passes: " + names + ")");
  }
  ImportOptions import;
  import.input_shapes = parse_shape_options(args.values("--shape"));
  GraphPtr graph = std::make_shared<const Graph>(load_model_file(model, import));
  GraphPipelineResult result = run_graph_pipeline(graph, target, options);

  if (const std::optional<std::string> node = args.value("--why")) {
    if (!result.ok()) throw Error(model + ": " + result.error);
    if (!result.fusion)
      throw Error(model + ": fusion did not run on target '" + target.kind() + "': nothing to explain");
    const Graph& g = *result.graph;
    std::cout << fusion_explanation_text(g, explain_node_fusion(g, *result.fusion, find_node_named(g, *node)));
    return 0;
  }

  const std::optional<std::string> dump_dir = args.value("--dump-dir");
  if (dump_dir) {
    std::error_code ec;
    fs::create_directories(*dump_dir, ec);
    if (ec) throw Error(*dump_dir + ": cannot create the dump folder: " + ec.message());
  }
  // The analyses describe the final graph; show them with it only.
  auto render = [&](const StepRecord& r) -> std::string {
    const GraphPtr graph = graph_after(r);
    const FusionResult* fusion = graph == result.graph ? result.fusion.get() : nullptr;
    if (format == "text") return r.text();
    if (format == "dot") return graph_to_dot(*graph, fusion_clusters(*graph, fusion));
    if (format == "svg") return render_svg(graph_to_dot(*graph, fusion_clusters(*graph, fusion)));
    nlohmann::json j = {{"pass", r.name}, {"graph", r.text()}, {"edges", edges_to_json(*graph)}};
    if (fusion) j["fusion"] = fusion_to_json(*graph, *fusion);
    return j.dump(1) + "\n";
  };

  nlohmann::json dumps = nlohmann::json::array();
  int index = 0;
  for (const StepRecordPtr& r : result.records) {
    ++index;
    if (!selected(*r, which)) continue;
    if (dump_dir) {
      char prefix[16];
      std::snprintf(prefix, sizeof prefix, "%02d_", index);
      const std::string ext = format == "text" ? "txt" : format;
      const fs::path file = fs::path(*dump_dir) / (prefix + r->name + "." + ext);
      std::ofstream out(file);
      out << render(*r);
      if (!out) throw Error(file.string() + ": cannot write");
    } else if (format == "json") {
      dumps.push_back({{"pass", r->name}, {"graph", r->text()}});
    } else if (format == "svg") {
      continue;  // one SVG document on stdout: the final graph, below
    } else {
      std::cout << "// ---- after " << r->name << (r->changed ? "" : " (unchanged)") << "\n" << render(*r) << "\n";
    }
  }
  if (format == "json") {
    nlohmann::json j = pipeline_result_to_json(result);
    j["model"] = model;
    j["target"] = target.to_json();
    if (!dump_dir) j["dumps"] = dumps;
    std::cout << j.dump(1) << "\n";
  } else if (format == "svg" && !dump_dir) {
    std::cout << render_svg(graph_to_dot(*result.graph, fusion_clusters(*result.graph, result.fusion.get())));
  } else {
    std::cout << pass_summary_table(result.records);
    if (result.fusion)
      std::cout << "fusion: " << result.graph->nodes.size() << " nodes in " << result.fusion->groups.size()
                << " kernels, " << result.fusion->unfused_edges.size() << " edges between kernels\n";
    if (result.memory_plan)
      std::cout << "memory: peak " << result.memory_plan->peak_bytes << " bytes in "
                << result.memory_plan->storages.size() << " blocks (naive sum " << result.memory_plan->naive_bytes
                << " bytes)\n";
  }
  if (!result.ok()) throw Error(model + ": " + result.error);
  return 0;
}

}  // namespace tessel::cli
