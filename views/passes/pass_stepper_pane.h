#pragma once
// The pass stepper: the pipeline's passes in order; choosing one shows the graph after it (the
// graph pane reads the pass from the shared Selection). Previous/next step with the keyboard.
#include <QWidget>

#include "views/common/selection.h"
#include "views/passes/pass_list_model.h"

class QTableView;
class QCheckBox;
class QAction;

namespace tessel::views {

class PassStepperPane final : public QWidget {
 public:
  explicit PassStepperPane(Selection* selection, QWidget* parent = nullptr);
  void show_snapshot(StudioSnapshotPtr snapshot);
  void show_pass(int pass);  // follows the selection
  void step(int delta);      // to the previous (-1) / next (+1) shown pass
  void set_hide_unchanged(bool hide);
  PassListModel* model() const { return model_; }
  QTableView* view() const { return view_; }
  QList<QAction*> pane_actions() const { return actions_; }

 private:
  Selection* selection_;
  PassListModel* model_;
  QTableView* view_;
  QCheckBox* hide_unchanged_;
  QList<QAction*> actions_;
  bool syncing_ = false;
};

}  // namespace tessel::views
