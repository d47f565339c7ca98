// Static memory planning: the plan never lets two live tensors overlap, reuses storage once a
// tensor is dead, writes element-wise results in place only where legal, and reports peak vs
// naive bytes.
#include <QtTest>

#include "core/graph/passes/fuse_ops.h"
#include "core/graph/passes/plan_memory.h"
#include "core/graph/text_format.h"

using namespace tessel;

namespace {

// Every invariant a plan must satisfy; returns the first violation or an empty string.
std::string check_plan(const Graph& g, const MemoryPlan& p) {
  int64_t arena = 0;
  for (const StorageBlock& s : p.storages) {
    if (s.offset != arena) return "block " + std::to_string(s.id) + " is not laid end to end";
    if (s.size_bytes % p.alignment != 0) return "block " + std::to_string(s.id) + " is not aligned";
    arena += s.size_bytes;
  }
  if (arena != p.peak_bytes) return "peak is not the arena size";
  for (const PlannedTensor& t : p.tensors) {
    const StorageBlock& s = p.storages.at(t.storage_id);
    if (t.offset != s.offset || t.offset % p.alignment != 0) return g.value(t.value).name + ": bad offset";
    if (t.size_bytes > s.size_bytes) return g.value(t.value).name + ": larger than its block";
    if (t.first_step > t.last_step) return g.value(t.value).name + ": empty live interval";
  }
  for (const PlannedTensor& a : p.tensors)
    for (const PlannedTensor& b : p.tensors) {
      if (&a == &b || a.storage_id != b.storage_id) continue;
      const bool overlap = a.first_step <= b.last_step && b.first_step <= a.last_step;
      const bool in_place_handover = b.in_place_of == a.value && a.last_step == b.first_step;
      if (overlap && !in_place_handover && !(a.in_place_of == b.value && b.last_step == a.first_step))
        return g.value(a.value).name + " and " + g.value(b.value).name + " share storage while both live";
    }
  return {};
}

// A chain of `n` 3×3 convs with relu, each reading the previous one, plus a residual every two.
std::string conv_chain(int n) {
  std::string t = "graph chain(%x: f32[1,8,8,8]) {\n";
  std::string prev = "%x";
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i);
    t += "  %w" + k + " = constant f32[8,8,3,3] random(" + k + ")\n";
    t += "  %c" + k + " = Conv(" + prev + ", %w" + k + ") {pads=[1,1,1,1]}\n";
    if (i % 2 == 1) {
      t += "  %a" + k + " = Add(%c" + k + ", %r" + std::to_string(i - 2 < 0 ? 0 : i - 2) + ")\n";
      t += "  %r" + k + " = Relu(%a" + k + ")\n";
    } else {
      t += "  %r" + k + " = Relu(%c" + k + ")\n";
    }
    prev = "%r" + k;
  }
  return t + "  return " + prev + "\n}\n";
}

}  // namespace

class TestMemoryPlan : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void long_chain_reuses_a_few_blocks() {
    Graph g = parse_graph(conv_chain(12));
    FusionResult f = fuse_graph(g);
    MemoryPlan p = plan_graph_memory(g, &f, 64);
    QVERIFY2(check_plan(g, p).empty(), check_plan(g, p).c_str());
    QCOMPARE(p.steps.size(), f.groups.size());
    // 12 kernels of 2 KiB each; at most three are alive at once (residual + current + next).
    QCOMPARE(p.naive_bytes, int64_t{12 * 2048});
    QVERIFY2(p.peak_bytes <= 3 * 2048, qPrintable(QString::number(p.peak_bytes)));
  }

  void without_fusion_every_node_is_a_step() {
    Graph g = parse_graph(conv_chain(4));
    MemoryPlan p = plan_graph_memory(g, nullptr, 64);
    QVERIFY2(check_plan(g, p).empty(), check_plan(g, p).c_str());
    QCOMPARE(p.steps.size(), g.nodes.size());
    QCOMPARE(p.tensors.size(), g.nodes.size());  // every node output crosses steps
    QVERIFY(p.peak_bytes < p.naive_bytes);
  }

  void sizes_are_aligned_and_best_fit_prefers_the_smallest_free_block() {
    // big (4 KiB) and small (256 B) die before a small tensor is made: it takes the small block.
    Graph g = parse_graph(
        "graph g(%x: f32[1024], %y: f32[64]) {\n"
        "  %big = Exp(%x)\n"
        "  %small = Exp(%y)\n"
        "  %s1 = ReduceSum(%big) {keepdims=0}\n"
        "  %s2 = ReduceSum(%small) {keepdims=0}\n"
        "  %sum = Add(%s1, %s2)\n"
        "  %z = Exp(%y)\n"
        "  %out = Add(%z, %sum)\n"
        "  return %out\n"
        "}\n");
    MemoryPlan p = plan_graph_memory(g, nullptr, 256);
    QVERIFY2(check_plan(g, p).empty(), check_plan(g, p).c_str());
    const PlannedTensor* small = p.find(g.nodes[1].outputs[0]);
    const PlannedTensor* z = p.find(g.nodes[5].outputs[0]);
    QVERIFY(small && z);
    QCOMPARE(z->storage_id, small->storage_id);
    QCOMPARE(p.storages[small->storage_id].size_bytes, int64_t{256});
    QCOMPARE(p.find(g.nodes[2].outputs[0])->size_bytes, int64_t{4});  // a scalar: 4 bytes in a 256-byte slot
    QVERIFY_THROWS_EXCEPTION(Error, plan_graph_memory(g, nullptr, 48));
  }

  void in_place_only_for_element_wise_last_readers() {
    Graph g = parse_graph(
        "graph g(%x: f32[16]) {\n"
        "  %a = Softmax(%x)\n"
        "  %b = Exp(%a)\n"          // last reader of a, element-wise: in place
        "  %c = Softmax(%b)\n"
        "  %d = Exp(%c)\n"          // c is read again below: not in place
        "  %e = Add(%d, %c)\n"
        "  %f = Softmax(%e)\n"
        "  return %f\n"
        "}\n");
    MemoryPlan p = plan_graph_memory(g, nullptr, 64);
    QVERIFY2(check_plan(g, p).empty(), check_plan(g, p).c_str());
    auto planned = [&](int node) { return p.find(g.nodes[node].outputs[0]); };
    QCOMPARE(planned(1)->in_place_of, g.nodes[0].outputs[0]);
    QCOMPARE(planned(3)->in_place_of, kNoValue);
    QCOMPARE(planned(4)->in_place_of, g.nodes[3].outputs[0]);  // Add is the last reader of d (and c)
    QCOMPARE(planned(5)->in_place_of, kNoValue);                // Softmax is opaque
  }

  void graph_outputs_live_to_the_end_and_are_never_overwritten() {
    Graph g = parse_graph(
        "graph g(%x: f32[16]) {\n"
        "  %a = Softmax(%x)\n"
        "  %b = Exp(%a)\n"
        "  %c = Softmax(%b)\n"
        "  return %a, %c\n"
        "}\n");
    MemoryPlan p = plan_graph_memory(g, nullptr, 64);
    QVERIFY2(check_plan(g, p).empty(), check_plan(g, p).c_str());
    const PlannedTensor* a = p.find(g.outputs[0]);
    QCOMPARE(a->last_step, static_cast<int>(p.steps.size()) - 1);
    QCOMPARE(p.find(g.nodes[1].outputs[0])->in_place_of, kNoValue);
  }
};

QTEST_APPLESS_MAIN(TestMemoryPlan)
#include "test_memory_plan.moc"
