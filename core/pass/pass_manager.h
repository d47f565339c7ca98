#pragma once
// Runs a list of graph passes in order, calling the instruments around each one.
//
// A pass is a named function that edits a private copy of the graph and says whether it changed
// anything. The manager publishes each result as an immutable snapshot; when a pass throws, the
// snapshot it received stays the current graph and the manager throws PassFailure naming the pass
// and the reason (after the instruments have seen the failure).
#include <functional>
#include <string>
#include <vector>

#include "core/pass/pass_instrument.h"

namespace tessel {

struct PassContext;  // core/graph/passes/pass_context.h: target, options, analyses produced so far

struct GraphPass {
  std::string name;
  // Edits `g` in place (it is the manager's private copy) and returns true when it changed it.
  std::function<bool(Graph& g, PassContext& ctx)> run;
};

class PassFailure : public Error {
 public:
  PassFailure(std::string pass, const std::string& reason, GraphPtr last_good)
      : Error("pass '" + pass + "' failed: " + reason), pass_(std::move(pass)), last_good_(std::move(last_good)) {}
  const std::string& pass() const { return pass_; }
  const GraphPtr& last_good_graph() const { return last_good_; }

 private:
  std::string pass_;
  GraphPtr last_good_;
};

class PassManager {
 public:
  explicit PassManager(std::vector<GraphPass> passes) : passes_(std::move(passes)) {}
  void add_instrument(PassInstrument* instrument) { instruments_.push_back(instrument); }
  const std::vector<GraphPass>& passes() const { return passes_; }

  // Returns the graph after the last pass. Throws PassFailure.
  GraphPtr run(GraphPtr graph, PassContext& ctx) const;

 private:
  std::vector<GraphPass> passes_;
  std::vector<PassInstrument*> instruments_;
};

}  // namespace tessel
