#include "core/pass/pass_manager.h"

#include "core/support/timing.h"

namespace tessel {

GraphPtr PassManager::run(GraphPtr graph, PassContext& ctx) const {
  if (!graph) throw Error("pass manager: no graph to run on");
  for (const GraphPass& pass : passes_) {
    for (PassInstrument* inst : instruments_) inst->before_pass(pass.name, graph);
    const auto start = std::chrono::steady_clock::now();
    GraphPtr after;
    bool changed = false;
    std::string failure;
    try {
      // The pass edits a private copy; the published snapshot `graph` is never touched, so a
      // failure leaves it intact.
      Graph work = *graph;
      changed = pass.run(work, ctx);
      after = changed ? std::make_shared<const Graph>(std::move(work)) : graph;
    } catch (const Error& e) {
      failure = e.what();
    } catch (const std::exception& e) {
      failure = std::string("internal error: ") + e.what();
    }
    const double ms = ms_since(start);
    if (failure.empty()) {
      try {
        // Instruments that check the result (the verifier) come first and may reject it.
        for (PassInstrument* inst : instruments_) inst->after_pass(pass.name, graph, after, changed, ms);
      } catch (const Error& e) {
        failure = e.what();
      }
    }
    if (!failure.empty()) {
      const Error error(failure);
      for (PassInstrument* inst : instruments_) inst->after_pass_failed(pass.name, graph, error, ms);
      throw PassFailure(pass.name, failure, graph);
    }
    graph = after;
  }
  return graph;
}

}  // namespace tessel
