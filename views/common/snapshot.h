#pragma once
// What the SessionController hands the panes: one immutable result of import + graph pipeline.
// Built once on the worker thread, published as shared_ptr<const StudioSnapshot>, never edited.
// Panes keep the pointer as long as they show it; a new compile makes a new snapshot. The pass
// records, fusion result and memory plan are the core's own records, not re-derived here.
#include <memory>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/passes/fusion_result.h"
#include "core/graph/passes/memory_plan.h"
#include "core/graph/passes/pass_manager.h"

namespace tessel::views {

struct Diagnostic {
  enum class Severity { kInfo, kWarning, kError };
  Severity severity = Severity::kError;
  std::string stage;    // "import", "pipeline", "session"
  std::string message;  // one line, naming the file / node / pass
};

struct StudioSnapshot {
  std::string model_path;
  std::string target;                 // Target::str() of the target compiled for
  GraphPtr imported;                  // straight from the frontend (pass index -1); null if import failed
  std::vector<StepRecordPtr> passes;  // in pipeline order
  GraphPtr optimized;                 // the last good graph; fusion and memory plan refer to its ids
  FusionResultPtr fusion;             // null when fusion did not run
  MemoryPlanPtr memory_plan;          // null when planning did not run
  std::vector<Diagnostic> diagnostics;
  double import_ms = 0, pipeline_ms = 0;

  // The graph after pass `index`; -1 (or no passes) is the imported graph.
  GraphPtr graph_at(int index) const {
    if (index < 0 || passes.empty()) return imported;
    return graph_after(*passes.at(static_cast<size_t>(index)));
  }
  int last_pass() const { return static_cast<int>(passes.size()) - 1; }
  // fuse_ops changes no node: it partitions the graph into kernels (the FusionResult), which is
  // the biggest change of all to the user. Its index (or -1) is recorded so the studio shows it
  // as changed (the core's record says "graph unchanged", which is also true).
  int grouping_pass = -1;
  // Whether pass `index` changed what the studio shows: the graph, or its grouping into kernels.
  bool pass_changed(int index) const {
    return index == grouping_pass ||
           (index >= 0 && index < static_cast<int>(passes.size()) && passes[static_cast<size_t>(index)]->changed);
  }
  bool has_errors() const {
    for (const Diagnostic& d : diagnostics)
      if (d.severity == Diagnostic::Severity::kError) return true;
    return false;
  }
};
using StudioSnapshotPtr = std::shared_ptr<const StudioSnapshot>;

}  // namespace tessel::views
