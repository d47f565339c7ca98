#pragma once
// The profile pane: a sortable per-kernel table (time, % of total, GFLOP/s, GB/s, attainable,
// bound) and, beside it, the last run as a timeline, or (second tab) the selected kernel's
// pipeline on a simulated accelerator: its units' lanes (views/pipeline). Selecting a row (or a timeline box) calls
// `on_kernel_selected`; the mediator forwards it to Selection::set_kernel, and Selection's
// kernel_changed comes back as set_selected_kernel (which does not call back). Exports the Chrome
// trace JSON (Perfetto / chrome://tracing open it) and CSV. No Q_OBJECT.
//
// Usage (the mediator):
//   pane->on_profile_requested = [loop] { loop->profile_model(); };
//   pane->on_kernel_selected = [selection](const QString& k) { selection->set_kernel(k); };
//   loop->profiled → pane->set_profile(p);   selection->kernel_changed → pane->set_selected_kernel(k)
#include <QLabel>
#include <QPushButton>
#include <QWidget>
#include <functional>

#include "views/common/kernel_results.h"

QT_BEGIN_NAMESPACE
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
QT_END_NAMESPACE

namespace tessel::views {

class PipelinePane;
class ProfileTableModel;
class TimelineWidget;

class ProfilePane : public QWidget {
 public:
  explicit ProfilePane(QWidget* parent = nullptr);
  ~ProfilePane() override;

  void set_profile(ModelProfilePtr profile);  // a profile with `error` shows the error
  // Ceilings measured after the profile (Calibrate): the attainable and bound columns and the
  // header take them; a later profile without ceilings gets them too.
  void set_ceilings(const std::optional<analysis::MachineCeilings>& ceilings);
  void set_profiling();  // a profile was requested: "Profiling…"
  void set_selected_kernel(const QString& kernel);
  void clear();

  std::function<void(const QString& kernel)> on_kernel_selected;
  std::function<void()> on_profile_requested;

  // Throw nothing; false (with the reason in `error`) when the file cannot be written or there is
  // no profile yet.
  bool export_chrome_trace(const QString& path, QString* error = nullptr) const;
  bool export_csv(const QString& path, QString* error = nullptr) const;

  // Inspection (tests).
  ModelProfilePtr profile() const;
  ProfileTableModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  TimelineWidget* timeline() const { return timeline_; }
  PipelinePane* pipeline() const { return pipeline_; }  // the selected kernel's device units
  QTabWidget* views() const { return views_; }          // "Run" (timeline) and "Device pipeline"
  QString status_text() const { return status_->text(); }
  QString kernel_at_view_row(int row) const;  // in the table's current (sorted) order

 private:
  void select_row_of(const QString& kernel);
  void show_pipeline_of(const QString& kernel);
  void export_with_dialog(bool trace);

  ProfileTableModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  TimelineWidget* timeline_ = nullptr;
  PipelinePane* pipeline_ = nullptr;
  QTabWidget* views_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* profile_button_ = nullptr;
  QString selected_;
  std::optional<analysis::MachineCeilings> ceilings_;
  bool selecting_ = false;  // set_selected_kernel in progress: do not call back
};

}  // namespace tessel::views
