// The graph pipeline end to end: every pass keeps the graph's meaning (the reference executor
// gives the same outputs after each pass), the records describe what happened, and a failing pass
// leaves the last good graph.
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/frontend/onnx_import.h"
#include "core/graph/layout.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/layout_ops.h"
#include "core/graph/ops/winograd_ops.h"
#include "core/graph/passes/pipeline.h"
#include "core/graph/passes/pipeline_options_json.h"
#include "core/graph/passes/verify_graph.h"
#include "core/graph/text_format.h"
#include "core/runtime/reference_executor.h"
#include "tests/random_graph_inputs.h"

using namespace tessel;

namespace {

// Largest |a-b| / (1 + |b|) over every output element; fails on shape mismatch.
double max_relative_error(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return 1e9;
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape() != b[k].shape()) return 1e9;
    for (int64_t i = 0; i < a[k].numel(); ++i)
      worst = std::max(worst, std::abs(a[k].get_double(i) - b[k].get_double(i)) / (1.0 + std::abs(b[k].get_double(i))));
  }
  return worst;
}

const Target& avx512() {
  static const Target t = Target::parse("ref -vector_bits=512");
  return t;
}

const Target& avx2() {
  static const Target t = Target::parse("ref -vector_bits=256");
  return t;
}

// A small ResNet: stem conv + BN + relu + max pool, one residual block with BN, an SE-style
// channel gate, global pooling, flatten and a dense layer with a dropout before it.
const char* kResNetBlock =
    "graph resnet(%x: f32[1,3,16,16]) {\n"
    "  %w0 = constant f32[16,3,3,3] random(1)\n"
    "  %s0 = constant f32[16] random(2)\n"
    "  %b0 = constant f32[16] random(3)\n"
    "  %m0 = constant f32[16] random(4)\n"
    "  %v0 = constant f32[16] [1, 2, 1.5, 0.5, 1, 2, 1.5, 0.5, 1, 2, 1.5, 0.5, 1, 2, 1.5, 0.5]\n"
    "  %c0 = Conv(%x, %w0) {pads=[1,1,1,1]}\n"
    "  %bn0 = BatchNormalization(%c0, %s0, %b0, %m0, %v0)\n"
    "  %r0 = Relu(%bn0)\n"
    "  %p0 = MaxPool(%r0) {kernel_shape=[2,2], strides=[2,2]}\n"
    "  %w1 = constant f32[16,16,3,3] random(5)\n"
    "  %bias1 = constant f32[16,1,1] random(6)\n"
    "  %c1 = Conv(%p0, %w1) {pads=[1,1,1,1]}\n"
    "  %a1 = Add(%c1, %bias1)\n"
    "  %r1 = Relu(%a1)\n"
    "  %w2 = constant f32[16,16,3,3] random(7)\n"
    "  %c2 = Conv(%r1, %w2) {pads=[1,1,1,1]}\n"
    "  %res = Add(%c2, %p0)\n"
    "  %r2 = Relu(%res)\n"
    "  %gap = GlobalAveragePool(%r2)\n"
    "  %gate = Sigmoid(%gap)\n"
    "  %scaled = Mul(%r2, %gate)\n"
    "  %gap2 = GlobalAveragePool(%scaled)\n"
    "  %flat = Flatten(%gap2)\n"
    "  %drop = Dropout(%flat)\n"
    "  %fc_w = constant f32[10,16] random(8)\n"
    "  %fc_b = constant f32[10] random(9)\n"
    "  %fc = Gemm(%drop, %fc_w, %fc_b) {transB=1}\n"
    "  return %fc\n"
    "}\n";

// Shape computations exporters emit: Shape → Gather → Concat → Reshape.
const char* kShapeChain =
    "graph shapes(%x: f32[2,3,4]) {\n"
    "  %s = Shape(%x)\n"
    "  %i0 = constant i64[] [0]\n"
    "  %d0 = Gather(%s, %i0) {axis=0}\n"
    "  %ax0 = constant i64[1] [0]\n"
    "  %d0u = Unsqueeze(%d0, %ax0)\n"
    "  %minus1 = constant i64[1] [-1]\n"
    "  %shape = Concat(%d0u, %minus1) {axis=0}\n"
    "  %y = Reshape(%x, %shape)\n"
    "  %t = Transpose(%y) {perm=[1,0]}\n"
    "  %t2 = Transpose(%t) {perm=[1,0]}\n"
    "  %e1 = Exp(%t2)\n"
    "  %e2 = Exp(%t2)\n"
    "  %sum = Add(%e1, %e2)\n"
    "  %unused = Relu(%x)\n"
    "  return %sum\n"
    "}\n";

// Inception-style concatenation on channels after two convs, then a conv reading it.
const char* kConcat =
    "graph concat(%x: f32[1,16,6,6]) {\n"
    "  %wa = constant f32[16,16,1,1] random(1)\n"
    "  %wb = constant f32[32,16,3,3] random(2)\n"
    "  %wc = constant f32[16,48,1,1] random(3)\n"
    "  %a = Conv(%x, %wa)\n"
    "  %b = Conv(%x, %wb) {pads=[1,1,1,1]}\n"
    "  %ra = Relu(%a)\n"
    "  %rb = Relu(%b)\n"
    "  %cat = Concat(%ra, %rb) {axis=1}\n"
    "  %p = AveragePool(%cat) {kernel_shape=[3,3], pads=[1,1,1,1]}\n"
    "  %c = Conv(%p, %wc)\n"
    "  return %c\n"
    "}\n";

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op->name == op;
  return n;
}

}  // namespace

class TestPassPipeline : public QObject {
  Q_OBJECT

  // Runs the full pipeline with verification and checks every pass's graph against the input.
  GraphPipelineResult check_semantics(const std::string& text, const Target& target, double rtol = 1e-4) {
    GraphPtr g = std::make_shared<const Graph>(parse_graph(text));
    const std::vector<Tensor> inputs = testing::random_graph_inputs(*g, 42);
    const std::vector<Tensor> expected = run_reference(*g, inputs);
    PipelineOptions options;
    options.verify = true;
    GraphPipelineResult r = run_graph_pipeline(g, target, options);
    if (!r.ok()) qWarning("%s", r.error.c_str());
    [&] { QVERIFY2(r.ok(), r.error.c_str()); }();
    for (const StepRecordPtr& rec : r.records) {
      const double err = max_relative_error(run_reference(*graph_after(*rec), inputs), expected);
      [&] { QVERIFY2(err <= rtol, qPrintable(QString("after %1: error %2").arg(rec->name.c_str()).arg(err))); }();
    }
    return r;
  }

 private Q_SLOTS:
  // Sessions, lessons and the measuring process pass the pipeline's options as JSON.
  void pipeline_options_from_json_reads_every_key_and_names_bad_ones() {
    std::vector<std::string> unknown;
    PipelineOptions o = pipeline_options_from_json(
        {{"fuse", false}, {"max_fusion_depth", 1}, {"disabled_passes", {"fold_constants"}}, {"zoom", 2}}, &unknown);
    QVERIFY(!o.runs("fuse_ops"));
    QCOMPARE(o.max_fusion_depth, 1);
    QVERIFY(o.disabled_passes.count("fold_constants"));
    QCOMPARE(unknown, std::vector<std::string>{"zoom"});
    QCOMPARE(pipeline_options_from_json(nullptr).disabled_passes, PipelineOptions{}.disabled_passes);
    try {
      pipeline_options_from_json({{"fuse", "yes"}});
      QFAIL("a string for a flag must be refused");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("'fuse'") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, pipeline_options_from_json(nlohmann::json::array()));
  }

  void resnet_block_keeps_its_outputs_after_every_pass() {
    GraphPipelineResult r = check_semantics(kResNetBlock, avx512());
    QVERIFY(!QTest::currentTestFailed());
    const Graph& g = *r.graph;
    QCOMPARE(count_op(g, "BatchNormalization"), 0);
    QCOMPARE(count_op(g, "Dropout"), 0);
    QCOMPARE(count_op(g, "Conv"), 0);
    QCOMPARE(count_op(g, "conv2d_nchwc"), 1);  // the 3-channel stem; the block's two 3x3 convs are Winograd
    QCOMPARE(count_op(g, "winograd_input_transform"), 2);
    QCOMPARE(count_op(g, "winograd_output_transform"), 2);
    for (const Value& v : g.values)
      if (!v.type.shape.empty()) QVERIFY2(!v.layout.empty(), v.name.c_str());
    QVERIFY(r.fusion);
    QVERIFY(r.memory_plan);
    QVERIFY(r.memory_plan->peak_bytes < r.memory_plan->naive_bytes);
  }

  void resnet_block_also_runs_with_256_bit_vectors() {
    GraphPipelineResult r = check_semantics(kResNetBlock, avx2());
    QVERIFY(!QTest::currentTestFailed());
    // 8-float vectors: the 16-channel convs compute in blocks of two vectors; nothing wider.
    bool has16 = false;
    for (const Value& v : r.graph->values) {
      has16 = has16 || v.layout == "NCHW16c";
      QVERIFY2(v.layout.empty() || Layout(v.layout).factor('C') <= 16, v.layout.c_str());
    }
    QVERIFY(has16);
  }

  // On AVX2 (8-float vectors, 16 registers) a 24-channel conv output is blocked by 24 (three
  // vectors, so its register tile is 4 x 3 vectors), the expand conv after it reads that block, and
  // the residual Add keeps it; with AVX-512 24 channels stay in a smaller block. A MatMul by
  // constant weights with rows enough becomes matmul_packed. Values after every pass unchanged.
  void avx2_blocks_24_channels_by_three_vectors_and_packs_linear_weights() {
    const char* text =
        "graph mb(%x: f32[1,16,6,6], %t: f32[1,8,32]) {\n"
        "  %wp = constant f32[24,16,1,1] random(1)\n"
        "  %p = Conv(%x, %wp)\n"
        "  %we = constant f32[48,24,1,1] random(2)\n"
        "  %e = Conv(%p, %we)\n"
        "  %wq = constant f32[24,48,1,1] random(3)\n"
        "  %q = Conv(%e, %wq)\n"
        "  %r = Add(%q, %p)\n"
        "  %wl = constant f32[32,48] random(4)\n"
        "  %l = MatMul(%t, %wl)\n"
        "  return %r, %l\n"
        "}\n";
    GraphPipelineResult r = check_semantics(text, avx2());
    QVERIFY(!QTest::currentTestFailed());
    int blocked24 = 0;
    for (const Node& n : r.graph->nodes)
      if (n.op->name == "conv2d_nchwc") blocked24 += attrs_as<ops::Conv2dNchwcAttrs>(n.attrs).out_layout == "NCHW24c";
    QCOMPARE(blocked24, 2);
    QCOMPARE(count_op(*r.graph, "matmul_packed"), 1);
    QCOMPARE(count_op(*r.graph, "MatMul"), 0);
    GraphPipelineResult wide = check_semantics(text, avx512());
    QVERIFY(!QTest::currentTestFailed());
    for (const Value& v : wide.graph->values) QVERIFY2(v.layout != "NCHW24c", v.layout.c_str());
  }

  // 3x3 stride-1 convs become Winograd with tiles of 4 (8x8 output), of 2 (6x6: tiles of 4 would
  // waste 8x8/36 = 1.8x) or not at all (5x5: 2.56x and 1.44x); stride 2 and 8 channels stay direct.
  // The values after every pass match the direct convolutions (check_semantics), bias and residual
  // Add included, and each Winograd conv keeps its bias in the output transform.
  void winograd_convs_keep_their_values_and_choose_their_tiles() {
    const char* text =
        "graph wino(%x: f32[1,16,8,8], %y: f32[1,16,6,6], %z: f32[1,16,5,5], %s: f32[1,8,8,8]) {\n"
        "  %w = constant f32[32,16,3,3] random(1)\n"
        "  %b = constant f32[32] random(2)\n"
        "  %c4 = Conv(%x, %w, %b) {pads=[1,1,1,1]}\n"
        "  %r4 = Relu(%c4)\n"
        "  %w2 = constant f32[16,16,3,3] random(3)\n"
        "  %c2 = Conv(%y, %w2) {pads=[1,1,1,1]}\n"
        "  %a2 = Add(%c2, %y)\n"
        "  %c5 = Conv(%z, %w2) {pads=[1,1,1,1]}\n"
        "  %cs = Conv(%x, %w2) {pads=[1,1,1,1], strides=[2,2]}\n"
        "  %w8 = constant f32[16,8,3,3] random(4)\n"
        "  %c8 = Conv(%s, %w8) {pads=[1,1,1,1]}\n"
        "  return %r4, %a2, %c5, %cs, %c8\n"
        "}\n";
    GraphPipelineResult r = check_semantics(text, avx2());
    QVERIFY(!QTest::currentTestFailed());
    std::vector<int64_t> tiles;
    int with_bias = 0;
    for (const Node& n : r.graph->nodes) {
      if (n.op->name == "winograd_input_transform") tiles.push_back(attrs_as<ops::WinogradInputAttrs>(n.attrs).tile);
      if (n.op->name == "winograd_output_transform" && n.inputs.size() > 1 && n.inputs[1] != kNoValue) ++with_bias;
    }
    std::sort(tiles.begin(), tiles.end());
    QCOMPARE(tiles, (std::vector<int64_t>{2, 4}));
    QCOMPARE(with_bias, 1);
    QCOMPARE(count_op(*r.graph, "conv2d_nchwc"), 3);  // 5x5, stride 2, 8 input channels
    // Left out by name, the pass changes nothing.
    PipelineOptions off;
    off.disabled_passes = {"winograd_convs"};
    GraphPipelineResult direct =
        run_graph_pipeline(std::make_shared<const Graph>(parse_graph(text)), avx2(), off);
    QVERIFY2(direct.ok(), direct.error.c_str());
    QCOMPARE(count_op(*direct.graph, "winograd_input_transform"), 0);
    QCOMPARE(count_op(*direct.graph, "conv2d_nchwc"), 5);
  }

  void shape_chains_fold_and_duplicates_merge() {
    GraphPipelineResult r = check_semantics(kShapeChain, avx512());
    QVERIFY(!QTest::currentTestFailed());
    const Graph& g = *r.graph;
    QCOMPARE(count_op(g, "Shape"), 0);
    QCOMPARE(count_op(g, "Concat"), 0);
    QCOMPARE(count_op(g, "Transpose"), 0);  // the pair composes to the identity
    QCOMPARE(count_op(g, "Exp"), 1);        // CSE
    QCOMPARE(count_op(g, "Relu"), 0);       // DCE
  }

  void concat_and_pooling_stay_blocked() {
    GraphPipelineResult r = check_semantics(kConcat, avx512());
    QVERIFY(!QTest::currentTestFailed());
    int transforms = count_op(*r.graph, "layout_transform");
    // Only at the graph's edges: into the first convs and out of the last one.
    QCOMPARE(transforms, 2);
    for (const Node& n : r.graph->nodes)
      if (n.op->name == "Concat" || n.op->name == "AveragePool")
        QCOMPARE(QString::fromStdString(r.graph->value(n.outputs[0]).layout), QString("NCHW16c"));
  }

  void records_name_every_pass_with_counts() {
    GraphPipelineResult r = run_graph_pipeline(std::make_shared<const Graph>(parse_graph(kResNetBlock)), avx512());
    QVERIFY(r.ok());
    std::vector<std::string> names;
    for (const auto& rec : r.records) names.push_back(rec->name);
    std::vector<std::string> expected;
    for (const GraphPass& p : graph_pipeline_passes(PipelineOptions{})) expected.push_back(p.name);
    QVERIFY(names == expected);
    for (size_t k = 1; k < r.records.size(); ++k) {
      QCOMPARE(nodes_before(*r.records[k]), nodes_after(*r.records[k - 1]));
      QVERIFY(r.records[k]->before == r.records[k - 1]->after);
      if (!r.records[k]->changed) QVERIFY(graph_after(*r.records[k]) == graph_after(*r.records[k - 1]));
    }
    QVERIFY(graph_after(*r.records.back()) == r.graph);
  }

  void failing_pass_keeps_the_previous_graph() {
    GraphPtr g = std::make_shared<const Graph>(parse_graph(kShapeChain));
    std::vector<GraphPass> passes = {
        {"rename", [](Graph& graph, PassContext&) { graph.name = "renamed"; return true; }},
        {"explode", [](Graph& graph, PassContext&) -> bool {
           graph.nodes.clear();  // half-done damage that must not leak out
           throw Error("cannot do this");
         }},
        {"never", [](Graph&, PassContext&) -> bool { throw Error("must not run"); }},
    };
    PassManager pm(passes);
    StepRecorder recorder;
    pm.add_instrument(&recorder);
    PassContext ctx{avx512(), {}, nullptr, nullptr};
    try {
      pm.run(g, ctx);
      QFAIL("expected PassFailure");
    } catch (const PassFailure& f) {
      QCOMPARE(QString::fromStdString(f.pass()), QString("explode"));
      QVERIFY(QString(f.what()).contains("pass 'explode' failed: cannot do this"));
      QCOMPARE(QString::fromStdString(f.last_good_graph()->name), QString("renamed"));
      QCOMPARE(f.last_good_graph()->nodes.size(), g->nodes.size());
    }
    QCOMPARE(recorder.records().size(), size_t{2});
    QVERIFY(recorder.records()[1]->failed());
    QCOMPARE(graph_after(*recorder.records()[1])->nodes.size(), g->nodes.size());
    QCOMPARE(g->name, std::string("shapes"));  // the input snapshot is untouched
  }

  void verifier_rejects_a_pass_that_breaks_types() {
    GraphPtr g = std::make_shared<const Graph>(parse_graph("graph g(%x: f32[4]) {\n  %y = Relu(%x)\n  return %y\n}\n"));
    std::vector<GraphPass> passes = {{"corrupt", [](Graph& graph, PassContext&) {
                                        graph.values[graph.outputs[0]].type.shape = {5};
                                        return true;
                                      }}};
    PassManager pm(passes);
    Verifier verifier = graph_verifier();
    StepRecorder recorder;
    pm.add_instrument(&verifier);
    pm.add_instrument(&recorder);
    PassContext ctx{avx512(), {}, nullptr, nullptr};
    QVERIFY_THROWS_EXCEPTION(PassFailure, pm.run(g, ctx));
    QCOMPARE(recorder.records().size(), size_t{1});
    QVERIFY(QString::fromStdString(recorder.records()[0]->error).contains("infers to f32[4]"));
  }

  void pipeline_reports_failure_without_throwing() {
    // A Reshape whose shape is only known at run time cannot be typed statically: the error
    // comes back in the result, with the input graph kept.
    Graph g = parse_graph(kShapeChain);
    g.values[g.outputs[0]].type.shape = {99};  // a recorded type that inference contradicts
    PipelineOptions options;
    options.verify = true;
    options.disabled_passes = {"infer_shapes"};
    GraphPtr input = std::make_shared<const Graph>(g);
    GraphPipelineResult r = run_graph_pipeline(input, avx512(), options);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error).contains("pass 'fold_constants' failed"), r.error.c_str());
    QVERIFY(r.graph == input);
  }

  // Every sample model under resources/models: the pipeline's result and every pass on the way
  // give the outputs stored beside the model (and those of the imported graph).
  void sample_models_keep_their_outputs() {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(TESSEL_SOURCE_DIR) / "resources/models";
    int models = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".onnx") continue;
      const fs::path data = fs::path(entry.path()).replace_extension("");
      if (!fs::exists(data / "input_0.pb") || !fs::exists(data / "output_0.pb")) continue;
      ++models;
      GraphPtr g = std::make_shared<const Graph>(import_onnx(entry.path().string()));
      std::vector<Tensor> inputs;
      for (size_t k = 0; k < g->inputs.size(); ++k)
        inputs.push_back(read_tensor_pb((data / ("input_" + std::to_string(k) + ".pb")).string()));
      const std::vector<Tensor> stored = {read_tensor_pb((data / "output_0.pb").string())};
      PipelineOptions options;
      options.verify = true;
      GraphPipelineResult r = run_graph_pipeline(g, avx512(), options);
      QVERIFY2(r.ok(), r.error.c_str());
      for (const StepRecordPtr& rec : r.records) {
        std::vector<Tensor> out = run_reference(*graph_after(*rec), inputs);
        out.resize(1);
        const double err = max_relative_error(out, stored);
        QVERIFY2(err <= 1e-4, qPrintable(QString("%1 after %2: error %3")
                                             .arg(entry.path().filename().c_str(), rec->name.c_str())
                                             .arg(err)));
      }
    }
    QVERIFY2(models > 0, "no sample models with input_0.pb/output_0.pb under resources/models");
  }

  void text_dumper_prints_changed_passes_only() {
    std::ostringstream out;
    TextDumper dumper(out, TextDumper::When::kChanged);
    StepTimer timer;
    GraphPipelineResult r =
        run_graph_pipeline(std::make_shared<const Graph>(parse_graph(kShapeChain)), avx512(), {}, {&dumper, &timer});
    QVERIFY(r.ok());
    const QString text = QString::fromStdString(out.str());
    QVERIFY(text.contains("// ---- after fold_constants"));
    QVERIFY(!text.contains("after fuse_ops"));  // fusion leaves the graph as it is
    QVERIFY(QString::fromStdString(timer.table()).contains("fold_constants"));
    QCOMPARE(timer.entries().size(), r.records.size() - 1);  // eliminate_dead_code runs twice
  }
};

QTEST_APPLESS_MAIN(TestPassPipeline)
#include "test_pass_pipeline.moc"
