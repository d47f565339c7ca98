#include "views/diagnostics/diagnostics_pane.h"

#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

namespace tessel::views {

DiagnosticsPane::DiagnosticsPane(QWidget* parent) : QWidget(parent), model_(new DiagnosticsModel(this)) {
  setObjectName("diagnostics");
  view_ = new QTableView(this);
  view_->setModel(model_);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(20);
  view_->setShowGrid(false);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setColumnWidth(DiagnosticsModel::kSeverity, 70);
  view_->setColumnWidth(DiagnosticsModel::kStage, 110);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(view_);
}

}  // namespace tessel::views
