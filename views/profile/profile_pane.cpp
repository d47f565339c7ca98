#include "views/profile/profile_pane.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMessageBox>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "views/common/kernel_time.h"
#include "views/pipeline/pipeline_timeline.h"
#include "views/profile/profile_table_model.h"
#include "views/profile/timeline_widget.h"

namespace tessel::views {

namespace {
bool write_file(const QString& path, const std::string& text, QString* error) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 || !f.commit()) {
    if (error) *error = path + ": " + f.errorString();
    return false;
  }
  return true;
}
}  // namespace

ProfilePane::ProfilePane(QWidget* parent) : QWidget(parent) {
  setObjectName("profile");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  auto* toolbar = new QHBoxLayout;
  profile_button_ = new QPushButton(tr("Profile model"), this);
  auto* trace_button = new QPushButton(tr("Export trace…"), this);
  auto* csv_button = new QPushButton(tr("Export CSV…"), this);
  status_ = new QLabel(tr("Not profiled yet."), this);
  status_->setWordWrap(true);
  toolbar->addWidget(profile_button_);
  toolbar->addWidget(status_, 1);
  toolbar->addWidget(trace_button);
  toolbar->addWidget(csv_button);
  layout->addLayout(toolbar);
  QObject::connect(profile_button_, &QPushButton::clicked, this, [this] {
    if (on_profile_requested) set_profiling(), on_profile_requested();
  });
  QObject::connect(trace_button, &QPushButton::clicked, this, [this] { export_with_dialog(true); });
  QObject::connect(csv_button, &QPushButton::clicked, this, [this] { export_with_dialog(false); });

  model_ = new ProfileTableModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::UserRole);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // execution order until the user picks a column
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);  // compact rows
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(ProfileTableModel::kKernel, QHeaderView::Stretch);
  table_->setWordWrap(false);
  table_->setAlternatingRowColors(true);
  QObject::connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
                   [this](const QModelIndex& current) {
                     if (selecting_ || !current.isValid()) return;
                     const QString kernel = model_->kernel_at(proxy_->mapToSource(current).row());
                     selected_ = kernel;
                     timeline_->set_selected_kernel(kernel);
                     show_pipeline_of(kernel);
                     if (on_kernel_selected) on_kernel_selected(kernel);
                   });

  timeline_ = new TimelineWidget(this);
  timeline_->on_kernel_clicked = [this](const QString& kernel) {
    set_selected_kernel(kernel);
    if (on_kernel_selected) on_kernel_selected(kernel);
  };
  // Side by side: the pane lives in the wide, low bottom dock, where stacking them left the table
  // one or two rows.
  pipeline_ = new PipelinePane(this);
  views_ = new QTabWidget(this);
  views_->setDocumentMode(true);
  views_->addTab(timeline_, tr("Run"));
  views_->addTab(pipeline_, tr("Device pipeline"));
  views_->setMinimumWidth(1);  // the timeline alone had no minimum width; the tab bar scrolls instead
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(table_);
  splitter->addWidget(views_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  splitter->setChildrenCollapsible(false);
  table_->setMinimumWidth(360);
  layout->addWidget(splitter, 1);
}

ProfilePane::~ProfilePane() = default;

ModelProfilePtr ProfilePane::profile() const { return model_->profile(); }

void ProfilePane::clear() {
  model_->set_profile(nullptr);
  timeline_->set_lanes({});
  pipeline_->show_kernel(nullptr, {});
  status_->setText(tr("Not profiled yet."));
}

void ProfilePane::set_profiling() {
  status_->setText(tr("Profiling in the measuring process…"));
  profile_button_->setEnabled(false);
}

void ProfilePane::set_profile(ModelProfilePtr profile) {
  profile_button_->setEnabled(true);
  if (!profile) return clear();
  if (!profile->error.empty()) {
    status_->setText(tr("Profiling failed: %1").arg(QString::fromStdString(profile->error)));
    return;
  }
  if (!profile->ceilings && ceilings_) {
    // Calibrated since the measuring process sent it: the roofline columns follow the ceilings.
    auto with = std::make_shared<ModelProfile>(*profile);
    with->ceilings = ceilings_;
    for (analysis::KernelProfile& k : with->profile.kernels)
      if (k.intensity > 0) k.attainable_gflops = ceilings_->attainable(k.intensity, &k.bound);
    profile = std::move(with);
  }
  model_->set_profile(profile);
  timeline_->set_lanes(timeline_lanes(profile->profile));
  const auto& p = profile->profile;
  // A profile with device lanes (an accelerator target) opens on them; any other on the run.
  views_->setCurrentWidget(p.last_run.device_lanes.empty() ? static_cast<QWidget*>(timeline_) : pipeline_);
  show_pipeline_of(selected_);
  const KernelTime definition = p.kernels.empty() ? KernelTime{} : kernel_time(p.kernels.front(), p);
  QString ceilings = tr("no ceilings: calibrate for the attainable column");
  if (profile->ceilings)
    ceilings = tr("ceilings: peak %1 GFLOP/s, DRAM %2 GB/s")
                   .arg(profile->ceilings->peak_gflops(), 0, 'f', 0)
                   .arg(profile->ceilings->dram_gbps(), 0, 'f', 0);
  status_->setText(tr("%1 kernels on %2 (%3 threads), model run %4 (median) · kernel time: median of %5 runs, ± half "
                      "the interquartile range · %6")
                       .arg(p.kernels.size())
                       .arg(QString::fromStdString(p.target))
                       .arg(p.threads)
                       .arg(QString::fromStdString(format_ms(p.total_ms)))
                       .arg(definition.repeats)
                       .arg(ceilings));
  if (!selected_.isEmpty()) select_row_of(selected_);
}

void ProfilePane::set_ceilings(const std::optional<analysis::MachineCeilings>& ceilings) {
  ceilings_ = ceilings;
  ModelProfilePtr shown = model_->profile();
  if (!shown || !ceilings) return;
  auto without = std::make_shared<ModelProfile>(*shown);
  without->ceilings.reset();  // set_profile fills them in from ceilings_
  set_profile(std::move(without));
}

void ProfilePane::set_selected_kernel(const QString& kernel) {
  selected_ = kernel;
  timeline_->set_selected_kernel(kernel);
  show_pipeline_of(kernel);
  select_row_of(kernel);
}

void ProfilePane::show_pipeline_of(const QString& kernel) {
  const ModelProfilePtr shown = model_->profile();
  pipeline_->show_kernel(shown ? &shown->profile : nullptr, kernel);
}

void ProfilePane::select_row_of(const QString& kernel) {
  selecting_ = true;
  const int row = model_->row_of(kernel);
  if (row < 0) {
    table_->clearSelection();
  } else {
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(index);
  }
  selecting_ = false;
}

QString ProfilePane::kernel_at_view_row(int row) const {
  return model_->kernel_at(proxy_->mapToSource(proxy_->index(row, 0)).row());
}

bool ProfilePane::export_chrome_trace(const QString& path, QString* error) const {
  if (!profile()) return error && (*error = tr("nothing to export: profile the model first"), false);
  return write_file(path, analysis::chrome_trace(profile()->profile), error);
}

bool ProfilePane::export_csv(const QString& path, QString* error) const {
  if (!profile()) return error && (*error = tr("nothing to export: profile the model first"), false);
  return write_file(path, profile_csv(profile()->profile), error);
}

void ProfilePane::export_with_dialog(bool trace) {
  const QString path = QFileDialog::getSaveFileName(this, trace ? tr("Export Chrome trace") : tr("Export CSV"),
                                                    trace ? "profile.trace.json" : "profile.csv",
                                                    trace ? tr("Trace (*.json)") : tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!(trace ? export_chrome_trace(path, &error) : export_csv(path, &error)))
    QMessageBox::warning(this, tr("Export"), error);
}

}  // namespace tessel::views
