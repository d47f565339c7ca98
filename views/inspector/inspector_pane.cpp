#include "views/inspector/inspector_pane.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

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
  view_->setWordWrap(false);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
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
  view_->resizeColumnsToContents();
  view_->horizontalHeader()->setStretchLastSection(true);
}

}  // namespace tessel::views
