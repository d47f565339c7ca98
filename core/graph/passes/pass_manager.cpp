#include "core/graph/passes/pass_manager.h"

#include "core/graph/text_format.h"

namespace tessel {

IrSnapshotPtr graph_snapshot(GraphPtr graph) {
  return std::make_shared<const Snapshot<Graph>>(std::move(graph), [](const Graph& g) { return print_graph(g); });
}

GraphPtr graph_before(const StepRecord& record) { return snapshot_ir<Graph>(record.before); }
GraphPtr graph_after(const StepRecord& record) { return snapshot_ir<Graph>(record.after); }

namespace {
int node_count(const GraphPtr& g) { return g ? static_cast<int>(g->nodes.size()) : 0; }
}  // namespace

int nodes_before(const StepRecord& record) { return node_count(graph_before(record)); }
int nodes_after(const StepRecord& record) { return node_count(graph_after(record)); }

GraphPtr PassManager::run(GraphPtr graph, PassContext& ctx) const {
  if (!graph) throw Error("pass manager: no graph to run on");
  IrSnapshotPtr current = graph_snapshot(std::move(graph));
  for (const GraphPass& pass : passes_) {
    try {
      current = instrumentation_
                    .run(StepKind::kGraphPass, pass.name, current,
                         [&]() -> IrSnapshotPtr {
                           // The pass edits a private copy; the published snapshot is never touched, so a failure
                           // leaves it intact.
                           Graph work = *snapshot_ir<Graph>(current);
                           if (!pass.run(work, ctx)) return current;
                           return graph_snapshot(std::make_shared<const Graph>(std::move(work)));
                         })
                    ->after;
    } catch (const StepFailure& failure) {
      throw PassFailure(failure);
    }
  }
  return snapshot_ir<Graph>(current);
}

}  // namespace tessel
