#pragma once
// The program pane's list: one row per view (the unscheduled program, then the program after
// each schedule step, or after each lowering pass), its time, greyed when the step changed
// nothing, red when it failed. "Hide steps that changed nothing" filters rows, not views.
#include <QAbstractListModel>
#include <vector>

#include "core/lower/step_views.h"

namespace tessel::views {

class ProgramStepModel final : public QAbstractListModel {
 public:
  explicit ProgramStepModel(QObject* parent = nullptr);
  void set_views(std::vector<lower::ViewRecord> views);
  void set_hide_unchanged(bool hide);
  const std::vector<lower::ViewRecord>& views() const { return views_; }
  int view_of_row(int row) const;   // -1 when out of range
  int row_of_view(int view) const;  // the row showing `view`, or the nearest shown one before it

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  void rebuild_rows();
  std::vector<lower::ViewRecord> views_;
  std::vector<int> rows_;  // view index of each row
  bool hide_unchanged_ = false;
};

}  // namespace tessel::views
