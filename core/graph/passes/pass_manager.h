#pragma once
// Runs a list of graph passes in order through the instrumentation (core/pass/instrument.h), the
// same machinery that records schedule steps and lowering passes.
//
// A pass is a named function that edits a private copy of the graph and says whether it changed
// anything. The manager publishes each result as an immutable snapshot; when a pass throws, the
// snapshot it received stays the current graph and the manager throws PassFailure naming the pass
// and the reason (after the instruments have seen the failure).
#include <functional>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/pass/instrument.h"

namespace tessel {

struct PassContext;  // pass_context.h: target, options, analyses produced so far

struct GraphPass {
  std::string name;
  // Edits `g` in place (it is the manager's private copy) and returns true when it changed it.
  std::function<bool(Graph& g, PassContext& ctx)> run;
};

// A graph as a step record holds it (printed in the text format).
IrSnapshotPtr graph_snapshot(GraphPtr graph);
// The graphs a graph pass's record holds; null for records of other steps.
GraphPtr graph_before(const StepRecord& record);
GraphPtr graph_after(const StepRecord& record);  // the input graph when the pass failed
// Their node counts (0 without a graph).
int nodes_before(const StepRecord& record);
int nodes_after(const StepRecord& record);

class PassFailure : public StepFailure {
 public:
  explicit PassFailure(const StepFailure& failure) : StepFailure(failure) {}
  const std::string& pass() const { return record().name; }
  GraphPtr last_good_graph() const { return graph_before(record()); }
};

class PassManager {
 public:
  explicit PassManager(std::vector<GraphPass> passes) : passes_(std::move(passes)) {}
  void add_instrument(Instrument* instrument) { instrumentation_.add(instrument); }
  const std::vector<GraphPass>& passes() const { return passes_; }

  // Returns the graph after the last pass. Throws PassFailure.
  GraphPtr run(GraphPtr graph, PassContext& ctx) const;

 private:
  std::vector<GraphPass> passes_;
  Instrumentation instrumentation_;
};

}  // namespace tessel
