#pragma once
// The work the SessionController does off the UI thread: import the session's model and run the
// graph pipeline, producing one immutable StudioSnapshot. Failures do not throw: they become
// Diagnostics in the snapshot (the studio shows what did work). Only cancelling throws.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/support/error.h"
#include "views/common/snapshot.h"
#include "views/session/session_document.h"

namespace tessel::views {

class CompileCanceled : public Error {
 public:
  CompileCanceled() : Error("canceled") {}
};

// Handed to the compile function: where to report progress, and whether the user gave up.
struct CompileProgress {
  std::function<void(const std::string& stage, int percent)> report = [](const std::string&, int) {};
  std::shared_ptr<const std::atomic<bool>> cancel_flag;

  bool canceled() const { return cancel_flag && cancel_flag->load(); }
  void check_canceled() const {
    if (canceled()) throw CompileCanceled();
  }
};

using CompileFunction = std::function<StudioSnapshotPtr(const SessionDocument&, const CompileProgress&)>;

// ONNX import + the graph pipeline for the document's target and pass options.
StudioSnapshotPtr compile_model(const SessionDocument& doc, const CompileProgress& progress);

// Targets the picker offers: the reference executor always, then what core/target registers.
std::vector<std::string> available_targets();
// The target a new session starts on: compile::default_target(), the best code generator loaded.
std::string default_session_target();

}  // namespace tessel::views
