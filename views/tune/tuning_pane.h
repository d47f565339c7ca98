#pragma once
// The Tuning pane: start and stop a search of the selected kernel's schedules or of every kernel
// of the model (trials per kernel, a time budget), and watch it.
//
//   ┌ [Selected kernel ▾] [Start] [Stop] ──────────────┐   Kernels tab:
//   │ trials [32]  budget [none]                       │   kernel         trials failed default best speed-up
//   │ fused_dense_relu_0 (1/3): 12/96 trials, 1 failed │   fused_dense_0      12      1  0.055  0.041  1.34x
//   │ · 20 s elapsed, about 40 s left                  │   records: /home/u/mlp.records.jsonl
//   │ [Curve] [Kernels]                                │             [Open log…] [Load best schedule]
//   │  ms ▲ ─ ─ ─ ─ ─ ─ ─ default (dashed, per kernel) │
//   │     │‾‾‾‾|____      best so far, per kernel      │
//   │     └────────────▶ trial                         │
//   └──────────────────────────────────────────────────┘
//
// A records log written before (by the studio or `tessel tune`) draws the same curves: each
// kernel's records in the log's order are its trials, the first its default schedule. The pane
// shows the session's log when it is given one while idle and empty (a session reopened), and any
// log the user opens.
//
// The pane only shows what the TuningRunner reports and says what the user asked for; the
// mediator runs the job, logs it in the session and loads a best schedule into the editor. No
// Q_OBJECT: callbacks are std::function.
#include <QWidget>
#include <functional>
#include <map>

#include "views/tune/tuning_runner.h"

namespace tessel::tune {
struct TuningRecord;
}

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTreeWidget;
class QTreeWidgetItem;
class QValueAxis;
QT_END_NAMESPACE

namespace tessel::views {

struct TuningRequest {
  bool whole_model = false;  // else the selected kernel
  int trials = 32;           // per kernel
  double time_budget_s = 0;  // 0: none
};

class TuningPane : public QWidget {
 public:
  explicit TuningPane(QWidget* parent = nullptr);
  ~TuningPane() override;

  std::function<void(const TuningRequest&)> on_start;
  std::function<void()> on_stop;
  std::function<void(const QString& kernel, const QString& schedule_text)> on_load_best;

  void set_selected_kernel(const QString& kernel);  // what "selected kernel" tunes
  // The session's records log; an idle pane with no curves shows what an existing log holds.
  void set_records_path(const QString& path);
  void clear();  // a new model: no curves, no table

  // A previous tune: replaces the curves and the table with the records' (nothing while a search
  // runs). load_records reads a log (core/tune/records.h); a damaged one is shown as an error and
  // leaves the pane as it was.
  void show_records(const std::vector<tune::TuningRecord>& records);
  bool load_records(const QString& path);

  // The job was handed to the runner: Start waits until it has finished.
  void show_starting();
  // From the runner (via the mediator).
  void show_started(const QStringList& kernels);
  void show_trial(const TuningTrialPtr& trial);
  void show_best(const TuningBestPtr& best);
  void show_progress(const TuningProgressPtr& progress);
  void show_finished(const TuningSummaryPtr& summary);
  void show_error(const QString& message);  // could not start (no model, no kernel)

  // Inspection (tests).
  bool is_running() const { return running_; }
  int curve_points(const QString& kernel) const;  // best-so-far points plotted
  double default_ms(const QString& kernel) const;
  double best_ms(const QString& kernel) const;
  QString best_schedule(const QString& kernel) const;
  int trials(const QString& kernel) const;
  int failed(const QString& kernel) const;
  QString status_text() const;
  QString records_path() const;
  QPushButton* start_button() const { return start_; }
  QPushButton* stop_button() const { return stop_; }
  QPushButton* load_best_button() const { return load_best_; }
  QPushButton* open_log_button() const { return open_log_; }
  QComboBox* scope_box() const { return scope_; }
  QSpinBox* trials_box() const { return trials_; }
  // Selects the kernel's row in the table (what the user clicks before "Load best schedule").
  void select_kernel_row(const QString& kernel);

 private:
  struct KernelCurve {
    QLineSeries* best = nullptr;
    QLineSeries* reference = nullptr;
    QTreeWidgetItem* row = nullptr;
    int trials = 0, failed = 0;
    double default_ms = 0, best_ms = 0;
    QString best_schedule;
  };
  KernelCurve& curve(const QString& kernel);
  void update_row(const QString& kernel);
  void update_axes();
  void update_buttons();

  std::map<QString, KernelCurve> curves_;
  QString selected_kernel_;
  bool running_ = false;
  double y_max_ = 0;
  int x_max_ = 1;

  QComboBox* scope_ = nullptr;
  QSpinBox* trials_ = nullptr;
  QSpinBox* budget_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* load_best_ = nullptr;
  QPushButton* open_log_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* records_ = nullptr;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QValueAxis* x_axis_ = nullptr;
  QValueAxis* y_axis_ = nullptr;
  QTreeWidget* table_ = nullptr;
};

}  // namespace tessel::views
