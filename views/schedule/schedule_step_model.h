#pragma once
// The schedule editor's list: one row per step, in order, with a check box that disables a step
// (kept here, left out of the schedule sent for lowering), the step's error in red and its
// tooltip, and the row the program pane points at emphasized. Drag-and-drop reorders through
// `on_move_requested`, so the pane can make the move an undoable command.
#include <QAbstractListModel>
#include <functional>
#include <vector>

#include "core/schedule/schedule.h"

namespace tessel::views {

struct ScheduleEntry {
  schedule::ScheduleStep step;
  bool enabled = true;
  bool operator==(const ScheduleEntry&) const = default;
};
using ScheduleEntries = std::vector<ScheduleEntry>;

// The schedule that is lowered: the enabled steps, in order.
schedule::Schedule enabled_schedule(const ScheduleEntries& entries);
// Row of the `step`-th enabled entry (an index into enabled_schedule().steps); -1 when none.
int row_of_enabled_step(const ScheduleEntries& entries, int step);
int enabled_step_of_row(const ScheduleEntries& entries, int row);  // -1 for a disabled row
// The text mode's form: one step per line, a disabled one as "# disabled: STEP" (a comment to
// parse_schedule, so the text stays a valid schedule).
std::string entries_to_text(const ScheduleEntries& entries);
// Throws Error "line N: ..." naming the first bad line; *error_line (1-based) is set then.
ScheduleEntries entries_from_text(const std::string& text, int* error_line = nullptr);

class ScheduleStepModel final : public QAbstractListModel {
 public:
  explicit ScheduleStepModel(QObject* parent = nullptr);

  void set_entries(ScheduleEntries entries);
  const ScheduleEntries& entries() const { return entries_; }
  // The failing row and its message (from KernelLowering::error_step); row -1 clears.
  void set_error(int row, const QString& message);
  int error_row() const { return error_row_; }
  void set_highlight(int row);  // the row the program pane picked; -1 clears
  int highlight_row() const { return highlight_row_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::DropActions supportedDropActions() const override { return Qt::MoveAction; }
  bool moveRows(const QModelIndex& src, int row, int count, const QModelIndex& dst, int dst_row) override;
  // Drag and drop by row number, for views that drop through the mime data rather than moveRow.
  QStringList mimeTypes() const override;
  QMimeData* mimeData(const QModelIndexList& indexes) const override;
  bool dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                    const QModelIndex& parent) override;

  // The pane turns these user actions into undo commands instead of editing the rows here.
  std::function<void(int row, bool enabled)> on_toggle_requested;
  std::function<void(int from, int to)> on_move_requested;  // `to`: final row of the moved step

 private:
  ScheduleEntries entries_;
  int error_row_ = -1, highlight_row_ = -1;
  QString error_;
};

}  // namespace tessel::views
