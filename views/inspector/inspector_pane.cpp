#include "views/inspector/inspector_pane.h"

#include <QHeaderView>
#include <QLabel>
#include <QResizeEvent>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace tessel::views {

InspectorPane::InspectorPane(QWidget* parent) : QWidget(parent), model_(new InspectorModel(this)) {
  setObjectName("inspector");
  title_ = new QLabel(this);
  QFont f = title_->font();
  f.setBold(true);
  title_->setFont(f);
  title_->setContentsMargins(4, 2, 4, 2);
  view_ = new QTableView(this);
  view_->setModel(model_);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(20);
  view_->setShowGrid(false);
  view_->setWordWrap(true);
  view_->setTextElideMode(Qt::ElideMiddle);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->viewport()->installEventFilter(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(title_);
  layout->addWidget(view_, 1);
  refresh();
}

void InspectorPane::show_node(const StudioSnapshotPtr& snapshot, int pass, const QString& name) {
  model_->show_node(snapshot, pass, name);
  refresh();
}

void InspectorPane::show_kernel(const StudioSnapshotPtr& snapshot, const QString& kernel) {
  model_->show_kernel(snapshot, kernel);
  refresh();
}

void InspectorPane::clear() {
  model_->clear();
  refresh();
}

void InspectorPane::refresh() {
  title_->setText(model_->title().isEmpty() ? tr("Select a node in the graph") : model_->title());
  view_->clearSpans();
  for (int r = 0; r < model_->rowCount(); ++r)
    if (model_->rows()[static_cast<size_t>(r)].section) view_->setSpan(r, 0, 1, InspectorModel::kColumnCount);
  fit_columns();
}

void InspectorPane::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fit_columns();
}

bool InspectorPane::eventFilter(QObject* watched, QEvent* event) {
  // Rows that wrap grow taller, which can bring in the vertical scroll bar after the columns were
  // fitted (a node's Fusion rows did): the description would end under it.
  if (watched == view_->viewport() && event->type() == QEvent::Resize) {
    auto* resize = static_cast<QResizeEvent*>(event);
    if (!fitting_ && resize->size().width() != resize->oldSize().width()) fit_columns();
  }
  return QWidget::eventFilter(watched, event);
}

void InspectorPane::fit_columns() {
  fitting_ = true;
  // Twice when the scroll bar came or went while the rows were resized (synchronously; the event
  // filter covers a later resize).
  for (int pass = 0; pass < 2; ++pass) {
    view_->resizeColumnsToContents();
    const int width = view_->viewport()->width();
    const double share[] = {0.28, 0.30, 0.14};  // of the width, at most, for property, value, default
    int used = 0;
    for (int c = 0; c < InspectorModel::kDescription; ++c) {
      view_->setColumnWidth(c, std::min(view_->columnWidth(c), static_cast<int>(width * share[c])));
      used += view_->columnWidth(c);
    }
    view_->setColumnWidth(InspectorModel::kDescription, std::max(80, width - used));
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->resizeRowsToContents();
    if (view_->viewport()->width() == width) break;
  }
  fitting_ = false;
}

}  // namespace tessel::views
