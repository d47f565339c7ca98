#pragma once
// The one place panes are connected. Panes write what the user picked into the shared Selection;
// the mediator forwards Selection and SessionController signals to the panes that care. No pane
// holds a pointer to another.
//
//   SessionController ──compiled──▶ mediator ──▶ graph, passes, inspector, memory, diagnostics
//   Selection (node, kernel, pass) ──changed──▶ mediator ──▶ the same panes
//   panes ──set_node / set_pass / set_kernel──▶ Selection
#include <QObject>
#include <functional>

#include "views/common/selection.h"
#include "views/diagnostics/diagnostics_pane.h"
#include "views/graph/graph_pane.h"
#include "views/inspector/inspector_pane.h"
#include "views/memory/memory_pane.h"
#include "views/passes/pass_stepper_pane.h"
#include "views/session/session_controller.h"

namespace tessel::studio {

struct StudioPanes {
  views::GraphPane* graph = nullptr;
  views::PassStepperPane* passes = nullptr;
  views::InspectorPane* inspector = nullptr;
  views::MemoryPane* memory = nullptr;
  views::DiagnosticsPane* diagnostics = nullptr;
};

class StudioMediator final : public QObject {
 public:
  StudioMediator(views::Selection* selection, views::SessionController* controller, StudioPanes panes,
                 QObject* parent = nullptr);
  views::StudioSnapshotPtr snapshot() const { return snapshot_; }
  // Called with the first error of a snapshot that has errors (the window shows a banner).
  std::function<void(const QString& message)> on_errors = [](const QString&) {};

 private:
  void show_snapshot(const views::StudioSnapshotPtr& snapshot);
  void refresh_inspector();

  views::Selection* selection_;
  StudioPanes panes_;
  views::StudioSnapshotPtr snapshot_;
  bool distributing_ = false;
};

}  // namespace tessel::studio
