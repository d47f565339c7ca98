// Operator fusion: the groups formed for the patterns TVM's rules are known for, and the rule
// recorded for every edge left between groups.
#include <QtTest>

#include "core/graph/passes/fuse_ops.h"
#include "core/graph/passes/fusion_explain.h"
#include "core/graph/text_format.h"
#include "tests/error_of.h"

using namespace tessel;

namespace {

// "name1+name2 | name3" : each group's node names in order, groups in execution order.
QString groups_text(const Graph& g, const FusionResult& r) {
  QStringList groups;
  for (const FusionGroup& grp : r.groups) {
    QStringList names;
    for (NodeId n : grp.nodes) names << QString::fromStdString(g.nodes[n].name);
    groups << names.join('+');
  }
  return groups.join(" | ");
}

NodeId node_named(const Graph& g, const std::string& name) {
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes.size()); ++n)
    if (g.nodes[n].name == name) return n;
  return -1;
}

// The rule recorded for the edge producer → consumer, or "fused" when there is no such record.
QString edge_rule(const Graph& g, const FusionResult& r, const std::string& producer, const std::string& consumer) {
  for (const UnfusedEdge& e : r.unfused_edges)
    if (e.producer == node_named(g, producer) && e.consumer == node_named(g, consumer))
      return QString::fromStdString(std::string(fusion_block_name(e.rule)));
  return "fused";
}

const char* kConvBiasRelu =
    "graph g(%x: f32[1,3,8,8]) {\n"
    "  %w = constant f32[4,3,3,3] random(1)\n"
    "  %b = constant f32[4,1,1] random(2)\n"
    "  %conv = Conv(%x, %w) {pads=[1,1,1,1]}\n"
    "  %bias = Add(%conv, %b)\n"
    "  %relu = Relu(%bias)\n"
    "  return %relu\n"
    "}\n";

const char* kResidual =
    "graph g(%x: f32[1,4,8,8]) {\n"
    "  %w1 = constant f32[4,4,3,3] random(1)\n"
    "  %w2 = constant f32[4,4,3,3] random(2)\n"
    "  %conv1 = Conv(%x, %w1) {pads=[1,1,1,1]}\n"
    "  %relu1 = Relu(%conv1)\n"
    "  %conv2 = Conv(%relu1, %w2) {pads=[1,1,1,1]}\n"
    "  %add = Add(%conv2, %relu1)\n"
    "  %relu2 = Relu(%add)\n"
    "  return %relu2\n"
    "}\n";

}  // namespace

class TestFusion : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void conv_bias_relu_is_one_kernel() {
    Graph g = parse_graph(kConvBiasRelu);
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("conv+bias+relu"));
    QCOMPARE(QString::fromStdString(r.groups[0].kernel_name), QString("fused_conv2d_add_relu_0"));
    QCOMPARE(r.groups[0].anchor, node_named(g, "conv"));
    QCOMPARE(r.groups[0].pattern, PatternKind::kOutEWiseFusable);
    QVERIFY(r.unfused_edges.empty());
    // Inputs: x, w, b; output: relu.
    QCOMPARE(r.groups[0].inputs.size(), size_t{3});
    QCOMPARE(r.groups[0].outputs.size(), size_t{1});
  }

  void residual_add_relu_joins_the_second_conv() {
    Graph g = parse_graph(kResidual);
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("conv1+relu1 | conv2+add+relu2"));
    QCOMPARE(QString::fromStdString(r.groups[1].kernel_name), QString("fused_conv2d_add_relu_1"));
    // relu1 feeds a conv (complex) and the add: its uses meet at add, through a conv.
    QCOMPARE(edge_rule(g, r, "relu1", "conv2"), QString("two_complex_groups"));
    QCOMPARE(edge_rule(g, r, "relu1", "add"), QString("two_complex_groups"));
    QCOMPARE(edge_rule(g, r, "conv2", "add"), QString("fused"));
  }

  // `tessel passes --why NODE`: every edge of the node, fused or with its rule and both op kinds.
  void a_node_explains_each_of_its_edges() {
    Graph g = parse_graph(kResidual);
    FusionResult r = fuse_graph(g);
    const NodeFusionExplanation e = explain_node_fusion(g, r, find_node_named(g, "relu1"));
    QCOMPARE(QString::fromStdString(e.kernel), QString("fused_conv2d_relu_0"));
    QCOMPARE(e.edges.size(), size_t{3});  // conv1 in; conv2 and add out
    QVERIFY(e.edges[0].incoming && e.edges[0].fused && e.edges[0].other == node_named(g, "conv1"));
    for (size_t k : {size_t{1}, size_t{2}}) {
      QVERIFY(!e.edges[k].incoming && !e.edges[k].fused);
      QVERIFY(e.edges[k].rule == FusionBlock::kTwoComplexGroups);
    }
    QCOMPARE(e.edges[1].other, node_named(g, "conv2"));
    const std::string text = fusion_explanation_text(g, e);
    QVERIFY2(text.find("node 'relu1' (Relu) is in kernel fused_conv2d_relu_0 (2 nodes: conv1, relu1)") == 0,
             text.c_str());
    QVERIFY2(text.find("not fused [two_complex_groups]: both sides hold a complex op") != std::string::npos &&
                 text.find("(Relu 'relu1' -> Conv 'conv2')") != std::string::npos &&
                 text.find("(Relu 'relu1' -> Add 'add')") != std::string::npos,
             text.c_str());
    // A constant input and the graph output say what they are.
    const std::string conv = fusion_explanation_text(g, explain_node_fusion(g, r, find_node_named(g, "conv1")));
    QVERIFY2(conv.find("a graph input") != std::string::npos && conv.find("a constant") != std::string::npos,
             conv.c_str());
    const std::string last = fusion_explanation_text(g, explain_node_fusion(g, r, find_node_named(g, "relu2")));
    QVERIFY2(last.find("a graph output") != std::string::npos, last.c_str());
    // Nodes a pass made of one and named after it ("conv_winograd_in", ...) are found by its name.
    Graph rewritten = parse_graph(
        "graph g(%x: f32[4]) {\n  %sq_in = Relu(%x)\n  %sq_out = Exp(%sq_in)\n  %single_only = Tanh(%sq_out)\n"
        "  return %single_only\n}\n");
    QCOMPARE(find_node_named(rewritten, "single"), node_named(rewritten, "single_only"));
    const std::string two = testing::error_of([&] { find_node_named(rewritten, "sq"); });
    QVERIFY2(two == "node 'sq' was rewritten by the graph passes into sq_in, sq_out: name one of them", two.c_str());
    const std::string unknown = testing::error_of([&] { find_node_named(g, "nope"); });
    QVERIFY2(unknown.find("no node named 'nope' in the optimized graph (nodes: conv1, relu1,") == 0, unknown.c_str());
  }

  void diamond_of_elementwise_ops_fuses_into_the_reduction() {
    // x → exp → (sigmoid, tanh) → mul → reduce_sum: every path meets in mul, then the reduction
    // absorbs its element-wise producers.
    Graph g = parse_graph(
        "graph g(%x: f32[4,16]) {\n"
        "  %exp = Exp(%x)\n"
        "  %sig = Sigmoid(%exp)\n"
        "  %tanh = Tanh(%exp)\n"
        "  %mul = Mul(%sig, %tanh)\n"
        "  %sum = ReduceSum(%mul) {keepdims=0}\n"
        "  %out = Relu(%sum)\n"
        "  return %out\n"
        "}\n");
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("exp+sig+tanh+mul+sum | out"));
    QCOMPARE(r.groups[0].pattern, PatternKind::kCommReduce);
    QCOMPARE(r.groups[0].anchor, node_named(g, "sum"));
    QCOMPARE(edge_rule(g, r, "sum", "out"), QString("reduction_source"));
  }

  void softmax_is_opaque_and_decomposed_softmax_splits_at_reductions() {
    Graph g = parse_graph(
        "graph g(%x: f32[2,8]) {\n"
        "  %a = Relu(%x)\n"
        "  %s = Softmax(%a) {axis=1}\n"
        "  %b = Exp(%s)\n"
        "  return %b\n"
        "}\n");
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("a | s | b"));
    QCOMPARE(edge_rule(g, r, "a", "s"), QString("opaque_consumer"));
    QCOMPARE(edge_rule(g, r, "s", "b"), QString("opaque_producer"));

    Graph d = parse_graph(
        "graph g(%x: f32[2,8]) {\n"
        "  %max = ReduceMax(%x) {axes=[1]}\n"
        "  %sub = Sub(%x, %max)\n"
        "  %exp = Exp(%sub)\n"
        "  %ax = constant i64[1] [1]\n"
        "  %sum = ReduceSum(%exp, %ax)\n"
        "  %div = Div(%exp, %sum)\n"
        "  return %div\n"
        "}\n");
    FusionResult rd = fuse_graph(d);
    QCOMPARE(groups_text(d, rd), QString("max | sub+exp | sum | div"));
    // exp's uses meet in div, but the path through the reduction is too complex to swallow.
    QCOMPARE(edge_rule(d, rd, "exp", "sum"), QString("path_too_complex"));
    QCOMPARE(edge_rule(d, rd, "max", "sub"), QString("reduction_source"));
  }

  void opaque_op_in_the_middle_splits_the_chain() {
    Graph g = parse_graph(
        "graph g(%x: f32[2,8]) {\n"
        "  %a = Relu(%x)\n"
        "  %b = Exp(%a)\n"
        "  %s = Softmax(%b) {axis=1}\n"
        "  %c = Sigmoid(%s)\n"
        "  %d = Tanh(%c)\n"
        "  return %d\n"
        "}\n");
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("a+b | s | c+d"));
  }

  void chain_longer_than_the_depth_limit_is_cut() {
    std::string text = "graph g(%x: f32[8]) {\n  %v0 = Relu(%x)\n";
    for (int i = 1; i < 7; ++i) text += "  %v" + std::to_string(i) + " = Exp(%v" + std::to_string(i - 1) + ")\n";
    text += "  return %v6\n}\n";
    Graph g = parse_graph(text);
    FusionResult r = fuse_graph(g, /*max_depth=*/3);
    QCOMPARE(groups_text(g, r), QString("v0+v1+v2 | v3+v4+v5 | v6"));
    QCOMPARE(edge_rule(g, r, "v2", "v3"), QString("max_depth"));
    QCOMPARE(fuse_graph(g, 256).groups.size(), size_t{1});
  }

  void injective_ops_fuse_with_each_other_after_conv_epilogues() {
    // conv → relu → transpose → reshape → exp: the conv group stops at the injective transpose;
    // transpose, reshape and exp form the next kernel.
    Graph g = parse_graph(
        "graph g(%x: f32[1,2,4,4]) {\n"
        "  %w = constant f32[2,2,1,1] random(1)\n"
        "  %conv = Conv(%x, %w)\n"
        "  %relu = Relu(%conv)\n"
        "  %t = Transpose(%relu) {perm=[0,2,3,1]}\n"
        "  %shape = constant i64[2] [16, 2]\n"
        "  %r = Reshape(%t, %shape)\n"
        "  %e = Exp(%r)\n"
        "  return %e\n"
        "}\n");
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("conv+relu | t+r+e"));
    QCOMPARE(edge_rule(g, r, "relu", "t"), QString("complex_edge_not_elemwise"));
    QCOMPARE(r.groups[1].pattern, PatternKind::kInjective);
  }

  void graph_outputs_are_not_fused_through() {
    Graph g = parse_graph(
        "graph g(%x: f32[8]) {\n"
        "  %a = Relu(%x)\n"
        "  %b = Exp(%a)\n"
        "  return %a, %b\n"
        "}\n");
    FusionResult r = fuse_graph(g);
    QCOMPARE(groups_text(g, r), QString("a | b"));
    QCOMPARE(edge_rule(g, r, "a", "b"), QString("external_output"));
  }

  void argument_limit_blocks_wide_groups() {
    Graph g = parse_graph(
        "graph g(%x: f32[8], %y: f32[8], %z: f32[8]) {\n"
        "  %a = Add(%x, %y)\n"
        "  %b = Add(%a, %z)\n"
        "  return %b\n"
        "}\n");
    QCOMPARE(fuse_graph(g, 256, 4).groups.size(), size_t{1});  // x, y, z → b: 4 arguments
    FusionResult r = fuse_graph(g, 256, 3);
    QCOMPARE(r.groups.size(), size_t{2});
    QCOMPARE(edge_rule(g, r, "a", "b"), QString("max_arguments"));
  }

  void every_block_has_a_name_and_a_reason() {
    for (int b = 0; b <= static_cast<int>(FusionBlock::kTupleIntoTuple); ++b) {
      QVERIFY(fusion_block_name(static_cast<FusionBlock>(b)) != "?");
      QVERIFY(fusion_block_reason(static_cast<FusionBlock>(b)).size() > 10);
    }
  }
};

QTEST_APPLESS_MAIN(TestFusion)
#include "test_fusion.moc"
