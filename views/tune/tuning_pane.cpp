#include "views/tune/tuning_pane.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

#include "core/tune/records.h"

namespace tessel::views {

namespace {

enum Column { kKernel, kTrials, kFailed, kDefault, kBest, kSpeedup, kColumns };

// One hue per kernel, in the order they appear; the reference line takes its kernel's hue, dashed.
QColor kernel_color(size_t index) {
  static const QColor colors[] = {{52, 101, 164}, {204, 0, 0},    {78, 154, 6}, {117, 80, 123},
                                  {206, 92, 0},   {193, 125, 17}, {46, 52, 54}, {6, 152, 154}};
  return colors[index % (sizeof colors / sizeof colors[0])];
}

QString ms_text(double ms) { return ms > 0 ? QString::number(ms, 'g', 4) + " ms" : QStringLiteral("–"); }

QString duration_text(double s) {
  if (s < 90) return QString::number(static_cast<int>(s + 0.5)) + " s";
  return QString::number(static_cast<int>(s / 60 + 0.5)) + " min";
}

}  // namespace

TuningPane::TuningPane(QWidget* parent) : QWidget(parent) {
  setObjectName("tuning");
  // The pane docks in the bottom row, beside the profile: narrow and short, so the chart and the
  // kernel table share one place as tabs rather than growing the window.
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  auto* controls = new QHBoxLayout;
  scope_ = new QComboBox(this);
  scope_->setObjectName("tuning_scope");
  scope_->setToolTip(tr("What to tune: the kernel selected in the graph, or every kernel of the model"));
  scope_->addItem(tr("Selected kernel"));
  scope_->addItem(tr("Whole model"));
  scope_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  scope_->setMinimumContentsLength(8);
  controls->addWidget(scope_, 1);
  start_ = new QPushButton(tr("Start"), this);
  start_->setObjectName("tuning_start");
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setObjectName("tuning_stop");
  controls->addWidget(start_);
  controls->addWidget(stop_);
  layout->addLayout(controls);
  auto* budgets = new QHBoxLayout;
  budgets->addWidget(new QLabel(tr("trials"), this));
  trials_ = new QSpinBox(this);
  trials_->setObjectName("tuning_trials");
  trials_->setRange(1, 100000);
  trials_->setValue(32);
  trials_->setToolTip(tr("Candidates measured per kernel, the default schedule's included"));
  budgets->addWidget(trials_);
  budgets->addWidget(new QLabel(tr("budget"), this));
  budget_ = new QSpinBox(this);
  budget_->setObjectName("tuning_budget");
  budget_->setRange(0, 7 * 24 * 3600);
  budget_->setSuffix(" s");
  budget_->setSpecialValueText(tr("none"));
  budget_->setToolTip(tr("Time for the whole search, shared among the kernels left; none: the trials decide"));
  budgets->addWidget(budget_);
  budgets->addStretch(1);
  layout->addLayout(budgets);

  status_ = new QLabel(tr("Select a kernel, or tune every kernel of the model."), this);
  status_->setObjectName("tuning_status");
  status_->setWordWrap(true);
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  layout->addWidget(status_);

  chart_ = new QChart;
  // No title (the tab names it) and the legend at the side: the bottom dock is short.
  chart_->setMargins(QMargins(2, 2, 2, 2));
  chart_->setBackgroundRoundness(0);
  chart_->legend()->setAlignment(Qt::AlignRight);
  x_axis_ = new QValueAxis;
  x_axis_->setTitleText(tr("trial"));
  x_axis_->setLabelFormat("%d");
  x_axis_->setTitleVisible(false);  // "trial" is in the tab's tooltip: the labels need the height
  y_axis_ = new QValueAxis;
  y_axis_->setTitleText(tr("best ms"));
  y_axis_->setLabelFormat("%.2g");
  y_axis_->setTickCount(3);
  chart_->addAxis(x_axis_, Qt::AlignBottom);
  chart_->addAxis(y_axis_, Qt::AlignLeft);
  view_ = new QChartView(chart_, this);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumSize(200, 120);
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName("tuning_tabs");
  tabs_->addTab(view_, tr("Curve"));
  tabs_->setTabToolTip(0, tr("Best time so far per kernel (solid) against its default schedule's (dashed), by trial"));
  layout->addWidget(tabs_, 1);

  table_ = new QTreeWidget(this);
  table_->setObjectName("tuning_kernels");
  table_->setRootIsDecorated(false);
  table_->setColumnCount(kColumns);
  table_->setHeaderLabels({tr("kernel"), tr("trials"), tr("failed"), tr("default"), tr("best"), tr("speed-up")});
  table_->header()->setSectionResizeMode(kKernel, QHeaderView::Stretch);
  table_->setMinimumHeight(60);
  auto* kernels_tab = new QWidget(this);
  auto* kernels_layout = new QVBoxLayout(kernels_tab);
  kernels_layout->setContentsMargins(0, 0, 0, 0);
  kernels_layout->addWidget(table_, 1);
  tabs_->addTab(kernels_tab, tr("Kernels"));

  auto* footer = new QHBoxLayout;
  records_ = new QLabel(this);
  records_->setObjectName("tuning_records");
  records_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  records_->setStyleSheet("color: gray;");
  records_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long path is clipped; the tooltip has it
  footer->addWidget(records_, 1);
  open_log_ = new QPushButton(tr("Open log…"), this);
  open_log_->setObjectName("tuning_open_log");
  open_log_->setToolTip(tr("Show the curves of a previous tune from its records log"));
  footer->addWidget(open_log_);
  load_best_ = new QPushButton(tr("Load best schedule"), this);
  load_best_->setObjectName("tuning_load_best");
  load_best_->setToolTip(tr("Open the selected kernel's fastest correct schedule in the schedule editor"));
  footer->addWidget(load_best_);
  kernels_layout->addLayout(footer);

  QObject::connect(start_, &QPushButton::clicked, this, [this] {
    if (!on_start) return;
    on_start({scope_->currentIndex() == 1, trials_->value(), static_cast<double>(budget_->value())});
  });
  QObject::connect(stop_, &QPushButton::clicked, this, [this] {
    stop_->setEnabled(false);
    status_->setText(status_->text() + tr(" · stopping after the batch being measured…"));
    if (on_stop) on_stop();
  });
  auto load = [this] {
    QTreeWidgetItem* item = table_->currentItem();
    if (!item || !on_load_best) return;
    const QString kernel = item->text(kKernel);
    auto it = curves_.find(kernel);
    if (it != curves_.end() && it->second.best_ms > 0) on_load_best(kernel, it->second.best_schedule);
  };
  QObject::connect(load_best_, &QPushButton::clicked, this, load);
  QObject::connect(open_log_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a tuning records log"), records_path(),
                                                      tr("Tuning records (*.jsonl);;All files (*)"));
    if (!path.isEmpty()) load_records(path);
  });
  QObject::connect(table_, &QTreeWidget::itemDoubleClicked, this, load);
  QObject::connect(table_, &QTreeWidget::currentItemChanged, this, [this] { update_buttons(); });
  QObject::connect(scope_, &QComboBox::currentIndexChanged, this, [this] { update_buttons(); });
  update_axes();
  update_buttons();
}

TuningPane::~TuningPane() = default;

void TuningPane::set_selected_kernel(const QString& kernel) {
  selected_kernel_ = kernel;
  if (!kernel.isEmpty() && curves_.count(kernel)) select_kernel_row(kernel);
  update_buttons();
}

void TuningPane::set_records_path(const QString& path) {
  records_->setText(path.isEmpty() ? QString() : tr("records: %1").arg(path));
  records_->setToolTip(path.isEmpty() ? QString()
                                      : tr("Every trial, one JSON line each; `tessel build --records %1` "
                                           "applies the best schedule of each kernel")
                                            .arg(path));
  // A session reopened: its previous tune, until a search starts.
  if (!running_ && curves_.empty() && !path.isEmpty() && QFileInfo(path).isFile()) load_records(path);
}

bool TuningPane::load_records(const QString& path) {
  if (running_) return false;
  tune::RecordLog log;
  try {
    log = tune::read_record_log(path.toStdString());
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));
    return false;
  }
  const std::vector<tune::TuningRecord>& records = log.records;
  show_records(records);
  const QString shown = records_path();
  if (shown != path) set_records_path(path);
  QString status = tr("%1: %2 trials of %n kernel(s) from %3.", nullptr, static_cast<int>(curves_.size()))
                       .arg(QFileInfo(path).fileName())
                       .arg(records.size())
                       .arg(path);
  // A damaged line costs only itself, and says so: the first one named, the rest counted.
  if (!log.skipped.empty())
    status += tr(" %n damaged line(s) skipped; the first: %1", nullptr, static_cast<int>(log.skipped.size()))
                  .arg(QString::fromStdString(log.skipped.front()));
  status_->setText(status);
  return true;
}

void TuningPane::show_records(const std::vector<tune::TuningRecord>& records) {
  if (running_) return;
  clear();
  // Per kernel: its records in the log's order are its trials, the first its default schedule
  // (both the studio and `tessel tune` measure that first); several tunes continue one curve.
  struct Seen {
    int index = 0;
    double default_ms = 0, best_ms = 0;
  };
  std::map<std::string, Seen> seen;
  for (const tune::TuningRecord& r : records) {
    Seen& k = seen[r.kernel];
    if (k.index == 0 && r.ok()) k.default_ms = r.ms_min;
    const bool better = r.ok() && (k.best_ms == 0 || r.ms_min < k.best_ms);
    if (better) k.best_ms = r.ms_min;
    show_trial(std::make_shared<const TuningTrial>(
        TuningTrial{r.kernel, k.index++, r.schedule, r.ms_min, r.ms_median, r.error, k.best_ms, k.default_ms}));
    if (better) show_best(std::make_shared<const TuningBest>(TuningBest{r.kernel, r.schedule, r.ms_min, {}}));
  }
  status_->setStyleSheet(QString());
  if (!selected_kernel_.isEmpty()) select_kernel_row(selected_kernel_);
  update_buttons();
}

QString TuningPane::records_path() const {
  const QString prefix = tr("records: ");
  return records_->text().startsWith(prefix) ? records_->text().mid(prefix.size()) : QString();
}

void TuningPane::clear() {
  for (QAbstractSeries* s : chart_->series()) chart_->removeSeries(s), delete s;
  curves_.clear();
  table_->clear();
  y_max_ = 0;
  x_max_ = 1;
  if (!running_) status_->setText(tr("Select a kernel, or tune every kernel of the model."));
  update_axes();
  update_buttons();
}

TuningPane::KernelCurve& TuningPane::curve(const QString& kernel) {
  auto it = curves_.find(kernel);
  if (it != curves_.end()) return it->second;
  KernelCurve c;
  const QColor color = kernel_color(curves_.size());
  c.best = new QLineSeries;
  c.best->setName(kernel);
  QPen pen(color);
  pen.setWidthF(2);
  c.best->setPen(pen);
  c.reference = new QLineSeries;
  c.reference->setName(tr("%1 default").arg(kernel));
  pen.setWidthF(1.2);
  pen.setStyle(Qt::DashLine);
  c.reference->setPen(pen);
  for (QLineSeries* s : {c.best, c.reference}) {
    chart_->addSeries(s);
    s->attachAxis(x_axis_);
    s->attachAxis(y_axis_);
  }
  c.row = new QTreeWidgetItem(table_, QStringList{kernel});
  c.row->setForeground(kKernel, color);
  for (int col = kTrials; col < kColumns; ++col) c.row->setTextAlignment(col, Qt::AlignRight | Qt::AlignVCenter);
  return curves_.emplace(kernel, std::move(c)).first->second;
}

void TuningPane::show_starting() {
  running_ = true;
  status_->setStyleSheet(QString());
  status_->setText(tr("Starting…"));
  update_buttons();
}

void TuningPane::show_started(const QStringList& kernels) {
  running_ = true;
  for (const QString& k : kernels) {
    KernelCurve& c = curve(k);
    // A kernel tuned again starts a fresh curve; the log keeps the earlier trials.
    c.best->clear();
    c.reference->clear();
    c.trials = c.failed = 0;
    c.default_ms = c.best_ms = 0;
    c.best_schedule.clear();
    update_row(k);
  }
  status_->setStyleSheet(QString());
  status_->setText(tr("Starting: %n kernel(s) to tune…", nullptr, static_cast<int>(kernels.size())));
  update_buttons();
}

void TuningPane::show_trial(const TuningTrialPtr& t) {
  if (!t) return;
  const QString kernel = QString::fromStdString(t->kernel);
  KernelCurve& c = curve(kernel);
  ++c.trials;
  if (!t->ok()) ++c.failed;
  c.default_ms = t->default_ms;
  x_max_ = std::max(x_max_, t->index + 1);
  if (t->best_ms > 0) {
    c.best->append(t->index, t->best_ms);
    y_max_ = std::max(y_max_, t->best_ms);
  }
  if (c.default_ms > 0) y_max_ = std::max(y_max_, c.default_ms);
  update_row(kernel);
  update_axes();
}

void TuningPane::show_best(const TuningBestPtr& best) {
  if (!best) return;
  const QString kernel = QString::fromStdString(best->kernel);
  KernelCurve& c = curve(kernel);
  c.best_ms = best->ms;
  c.best_schedule = QString::fromStdString(best->schedule);
  update_row(kernel);
  update_buttons();
}

void TuningPane::show_progress(const TuningProgressPtr& p) {
  if (!p) return;
  status_->setText(tr("%1 (%2/%3): %4/%5 trials, %6 failed · %7 elapsed, about %8 left")
                       .arg(QString::fromStdString(p->kernel))
                       .arg(p->kernel_index + 1)
                       .arg(p->kernel_count)
                       .arg(p->trials)
                       .arg(p->budget)
                       .arg(p->failed)
                       .arg(duration_text(p->elapsed_s), duration_text(p->left_s)));
}

void TuningPane::show_finished(const TuningSummaryPtr& s) {
  running_ = false;
  if (!s) return update_buttons();
  QString text = s->stopped ? tr("Stopped: %1 trials measured, %2 failed; all of them are in the log.")
                            : tr("Done: %1 trials measured, %2 failed.");
  text = text.arg(s->trials).arg(s->failed);
  if (!s->error.empty())
    text = tr("Tuning failed after %1 trials: %2").arg(s->trials).arg(QString::fromStdString(s->error));
  status_->setText(text);
  status_->setStyleSheet(s->error.empty() ? QString() : QStringLiteral("color: #cc0000;"));
  update_buttons();
}

void TuningPane::show_error(const QString& message) {
  status_->setText(message);
  status_->setStyleSheet(QStringLiteral("color: #cc0000;"));
}

void TuningPane::update_row(const QString& kernel) {
  KernelCurve& c = curves_.at(kernel);
  c.row->setText(kTrials, QString::number(c.trials));
  c.row->setText(kFailed, QString::number(c.failed));
  c.row->setText(kDefault, ms_text(c.default_ms));
  c.row->setText(kBest, ms_text(c.best_ms));
  c.row->setText(kSpeedup, c.default_ms > 0 && c.best_ms > 0 ? QString::number(c.default_ms / c.best_ms, 'f', 2) + "x"
                                                             : QStringLiteral("–"));
  c.reference->clear();
  if (c.default_ms > 0) {
    c.reference->append(0, c.default_ms);
    c.reference->append(x_max_, c.default_ms);
  }
}

void TuningPane::update_axes() {
  for (auto& [kernel, c] : curves_)
    if (c.reference->count() == 2) c.reference->replace(1, x_max_, c.default_ms);
  // Whole trials on the axis: one tick each while few, else round numbers.
  x_axis_->setRange(0, std::max(1, x_max_));
  if (x_max_ <= 8) {
    x_axis_->setTickCount(std::max(1, x_max_) + 1);
  } else {
    x_axis_->setTickCount(6);
    x_axis_->applyNiceNumbers();
  }
  y_axis_->setRange(0, y_max_ > 0 ? y_max_ * 1.1 : 1.0);
}

void TuningPane::update_buttons() {
  start_->setEnabled(!running_ && (scope_->currentIndex() == 1 || !selected_kernel_.isEmpty()));
  stop_->setEnabled(running_);
  QTreeWidgetItem* item = table_->currentItem();
  auto it = item ? curves_.find(item->text(kKernel)) : curves_.end();
  load_best_->setEnabled(it != curves_.end() && it->second.best_ms > 0);
  if (!running_ && scope_->currentIndex() == 0 && selected_kernel_.isEmpty())
    start_->setToolTip(tr("Select a kernel in the graph first"));
  else
    start_->setToolTip(QString());
}

void TuningPane::select_kernel_row(const QString& kernel) {
  auto it = curves_.find(kernel);
  if (it != curves_.end()) table_->setCurrentItem(it->second.row);
}

int TuningPane::curve_points(const QString& kernel) const {
  auto it = curves_.find(kernel);
  return it == curves_.end() ? 0 : it->second.best->count();
}

double TuningPane::default_ms(const QString& kernel) const {
  auto it = curves_.find(kernel);
  return it == curves_.end() ? 0 : it->second.default_ms;
}

double TuningPane::best_ms(const QString& kernel) const {
  auto it = curves_.find(kernel);
  return it == curves_.end() ? 0 : it->second.best_ms;
}

QString TuningPane::best_schedule(const QString& kernel) const {
  auto it = curves_.find(kernel);
  return it == curves_.end() ? QString() : it->second.best_schedule;
}

int TuningPane::trials(const QString& kernel) const {
  auto it = curves_.find(kernel);
  return it == curves_.end() ? 0 : it->second.trials;
}

int TuningPane::failed(const QString& kernel) const {
  auto it = curves_.find(kernel);
  return it == curves_.end() ? 0 : it->second.failed;
}

QString TuningPane::status_text() const { return status_->text(); }

}  // namespace tessel::views
