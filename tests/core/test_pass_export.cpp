// Graph export: DOT with fusion clusters, types and layouts on edges and highlighted layout
// transforms; SVG through Graphviz; the pipeline's JSON with groups, blocked edges, layouts and
// the memory plan.
#include <QtTest>

#include <thread>

#include "core/graph/export_dot.h"
#include "core/graph/passes/pipeline_json.h"
#include "core/graph/text_format.h"

using namespace tessel;

namespace {

const char* kModel =
    "graph net(%x: f32[1,16,4,4]) {\n"
    "  %w = constant f32[16,16,1,1] random(1)\n"
    "  %b = constant f32[16,1,1] random(2)\n"
    "  %c = Conv(%x, %w)\n"
    "  %a = Add(%c, %b)\n"
    "  %r = Relu(%a)\n"
    "  %gap = GlobalAveragePool(%r)\n"
    "  return %gap\n"
    "}\n";

GraphPipelineResult optimized() {
  return run_graph_pipeline(std::make_shared<const Graph>(parse_graph(kModel)), Target::parse("ref -vector_bits=512"));
}

}  // namespace

class TestPassExport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void dot_shows_clusters_layouts_and_transforms() {
    GraphPipelineResult r = optimized();
    QVERIFY(r.ok());
    const QString dot = QString::fromStdString(graph_to_dot(*r.graph, fusion_clusters(*r.graph, r.fusion.get())));
    QVERIFY(dot.startsWith("digraph \"net\" {"));
    QVERIFY2(dot.contains("label=\"fused_conv2d_nchwc_add_relu_1\""), qPrintable(dot));
    QCOMPARE(dot.count("subgraph cluster_"), static_cast<int>(r.fusion->groups.size()));
    QVERIFY(dot.contains("f32[1,1,4,4,16] NCHW16c"));
    QVERIFY2(dot.contains("[label=\"conv2d_nchwc\\nc\\n(+1 const)\""), qPrintable(dot));  // DOT line breaks
    QVERIFY(dot.contains("fillcolor=\"#ffd27f\""));  // the inserted layout_transform
    const QString plain = QString::fromStdString(graph_to_dot(*r.graph));
    QVERIFY(!plain.contains("subgraph"));
    // A fusion made for another graph (a snapshot before fusion ran) gives no clusters; a cluster
    // naming a node the graph lacks is an error, not a silently smaller picture.
    QVERIFY(fusion_clusters(*r.graph, nullptr).empty());
    const std::vector<DotCluster> stale = {{"stale", {static_cast<NodeId>(r.graph->nodes.size())}}};
    QVERIFY_THROWS_EXCEPTION(Error, graph_to_dot(*r.graph, stale));
  }

  void svg_renders_and_is_safe_from_many_threads() {
    GraphPipelineResult r = optimized();
    const std::string dot = graph_to_dot(*r.graph, fusion_clusters(*r.graph, r.fusion.get()));
    std::vector<std::string> svgs(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < svgs.size(); ++i) threads.emplace_back([&, i] { svgs[i] = render_svg(dot); });
    for (std::thread& t : threads) t.join();
    for (const std::string& svg : svgs) {
      QVERIFY(svg.find("<svg") != std::string::npos);
      QVERIFY(svg.find("fused_conv2d_nchwc_add_relu_1") != std::string::npos);
    }
    try {
      render_svg("digraph { a -> ");
      QFAIL("expected a Graphviz error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("graphviz: the DOT text does not parse: Error: syntax error"), e.what());
    }
  }

  void json_carries_groups_reasons_layouts_and_plan() {
    GraphPipelineResult r = optimized();
    const nlohmann::json j = pipeline_result_to_json(r);
    QCOMPARE(j["passes"].size(), r.records.size());
    bool found_group = false;
    for (const auto& grp : j["fusion"]["groups"])
      if (grp["kernel"] == "fused_conv2d_nchwc_add_relu_1") {
        found_group = true;
        QCOMPARE(grp["anchor"].get<std::string>(), std::string("c"));
        QCOMPARE(grp["nodes"].size(), size_t{3});
      }
    QVERIFY(found_group);
    QVERIFY(!j["fusion"]["unfused_edges"].empty());
    for (const auto& e : j["fusion"]["unfused_edges"]) QVERIFY(!e["reason"].get<std::string>().empty());
    bool blocked_edge = false;
    for (const auto& e : j["edges"]) blocked_edge = blocked_edge || e["layout"] == "NCHW16c";
    QVERIFY(blocked_edge);
    QCOMPARE(j["memory_plan"]["peak_bytes"].get<int64_t>(), r.memory_plan->peak_bytes);
    QCOMPARE(j["memory_plan"]["tensors"].size(), r.memory_plan->tensors.size());
    const QString table = QString::fromStdString(pass_summary_table(r.records));
    QVERIFY(table.contains("transform_layout") && table.contains("total"));
  }
};

QTEST_APPLESS_MAIN(TestPassExport)
#include "test_pass_export.moc"
