#include "views/session/compile_model.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include "core/compile/kernel_compiler.h"
#include "core/frontend/load_model.h"
#include "core/graph/passes/pipeline.h"
#include "core/graph/passes/pipeline_options_json.h"
#include "core/target/target.h"

namespace tessel::views {

namespace {

// Reports each pass as it starts and stops between passes when the user cancels.
class ProgressInstrument final : public Instrument {
 public:
  ProgressInstrument(const CompileProgress& progress, size_t num_passes)
      : progress_(progress), num_passes_(std::max<size_t>(num_passes, 1)) {}
  void before_step(std::string_view pass, StepKind, const IrSnapshotPtr&) override {
    progress_.check_canceled();
    int percent = 20 + static_cast<int>(80 * done_ / num_passes_);
    progress_.report("pass " + std::string(pass), percent);
    ++done_;
  }

 private:
  const CompileProgress& progress_;
  size_t num_passes_;
  size_t done_ = 0;
};

PipelineOptions pipeline_options(const nlohmann::json& j, std::vector<Diagnostic>& diagnostics) {
  std::vector<std::string> unknown;
  PipelineOptions o = pipeline_options_from_json(j, &unknown);
  for (const std::string& key : unknown)
    diagnostics.push_back({Diagnostic::Severity::kWarning, "session", "unknown pass option '" + key + "' ignored"});
  return o;
}

double elapsed_ms(const QElapsedTimer& t) { return static_cast<double>(t.nsecsElapsed()) / 1e6; }

}  // namespace

StudioSnapshotPtr compile_model(const SessionDocument& doc, const CompileProgress& progress) {
  auto snap = std::make_shared<StudioSnapshot>();
  snap->model_path = doc.model_path;
  snap->target = doc.target;
  auto error = [&](const std::string& stage, const std::string& message) {
    snap->diagnostics.push_back({Diagnostic::Severity::kError, stage, message});
  };

  progress.report("import " + QFileInfo(QString::fromStdString(doc.model_path)).fileName().toStdString(), 0);
  if (!doc.model_sha256.empty()) {
    try {
      if (file_sha256(doc.model_path) != doc.model_sha256)
        snap->diagnostics.push_back({Diagnostic::Severity::kWarning, "session",
                                     doc.model_path + ": the model changed since the session was saved"});
    } catch (const Error&) {
      // Unreadable: the import below reports it.
    }
  }
  QElapsedTimer timer;
  timer.start();
  try {
    // Opens any well-formed model; what blocks compiling it is reported by the pipeline below.
    ImportOptions import_options;
    import_options.infer_failure = InferFailure::kMarkUnknown;
    snap->imported = std::make_shared<const Graph>(load_model_file(doc.model_path, import_options));
  } catch (const Error& e) {
    error("import", e.what());
    return snap;
  }
  snap->import_ms = elapsed_ms(timer);
  snap->optimized = snap->imported;
  progress.check_canceled();

  std::optional<Target> target;
  try {
    target = Target::parse(doc.target);
    snap->target = target->str();
  } catch (const Error& e) {
    error("session", "target '" + doc.target + "': " + e.what());
    return snap;
  }
  PipelineOptions options;
  try {
    options = pipeline_options(doc.pass_options, snap->diagnostics);
  } catch (const Error& e) {
    error("session", e.what());
    return snap;
  }

  progress.report("graph passes", 20);
  timer.restart();
  ProgressInstrument instrument(progress, graph_pipeline_passes(options).size());
  GraphPipelineResult result = run_graph_pipeline(snap->imported, *target, options, {&instrument});
  progress.check_canceled();  // a cancel inside the pipeline surfaces as a failed pass: say canceled
  snap->pipeline_ms = elapsed_ms(timer);
  snap->passes = result.records;
  snap->optimized = result.graph;
  snap->fusion = result.fusion;
  snap->memory_plan = result.memory_plan;
  if (snap->fusion && !snap->fusion->groups.empty())
    for (size_t i = 0; i < snap->passes.size(); ++i)
      if (snap->passes[i]->name == "fuse_ops" && !snap->passes[i]->failed()) snap->grouping_pass = static_cast<int>(i);
  if (!result.ok()) error("pipeline", result.error);
  progress.report("done", 100);
  return snap;
}

std::vector<std::string> available_targets() { return TargetKindRegistry::global().names(); }

std::string default_session_target() { return compile::default_target().kind(); }

}  // namespace tessel::views
