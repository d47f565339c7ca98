#include "app/studio/mediator.h"

namespace tessel::studio {

StudioMediator::StudioMediator(views::Selection* selection, views::SessionController* controller, StudioPanes panes,
                               QObject* parent)
    : QObject(parent), selection_(selection), panes_(panes) {
  connect(controller, &views::SessionController::compiled, this,
          [this](const views::StudioSnapshotPtr& snap) { show_snapshot(snap); });
  connect(selection, &views::Selection::pass_changed, this, [this](int pass) {
    if (distributing_) return;
    panes_.graph->show_pass(pass);
    panes_.passes->show_pass(pass);
    refresh_inspector();
  });
  connect(selection, &views::Selection::node_changed, this, [this](const QString& node) {
    if (distributing_) return;
    panes_.graph->select_node(node);
    panes_.memory->highlight_node(node);
    refresh_inspector();
  });
  connect(selection, &views::Selection::kernel_changed, this, [this] {
    if (!distributing_) refresh_inspector();
  });
}

void StudioMediator::show_snapshot(const views::StudioSnapshotPtr& snap) {
  snapshot_ = snap;
  // Selection first (quietly), so every pane below sees the new snapshot with a valid selection.
  distributing_ = true;
  selection_->clear();
  selection_->set_pass(snap->last_pass());
  distributing_ = false;
  panes_.passes->show_snapshot(snap);
  panes_.graph->show_snapshot(snap);
  panes_.memory->show_snapshot(snap);
  panes_.memory->highlight_node({});
  panes_.inspector->clear();
  panes_.diagnostics->model()->set_snapshot_diagnostics(snap->diagnostics);
  for (const views::Diagnostic& d : snap->diagnostics)
    if (d.severity == views::Diagnostic::Severity::kError) {
      on_errors(QString::fromStdString(d.message));
      break;
    }
}

void StudioMediator::refresh_inspector() {
  if (!selection_->node().isEmpty())
    panes_.inspector->show_node(snapshot_, selection_->pass(), selection_->node());
  else if (!selection_->kernel().isEmpty())
    panes_.inspector->show_kernel(snapshot_, selection_->kernel());
  else
    panes_.inspector->clear();
}

}  // namespace tessel::studio
