#include "views/passes/pass_stepper_pane.h"

#include <QAction>
#include <QCheckBox>
#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

namespace tessel::views {

PassStepperPane::PassStepperPane(Selection* selection, QWidget* parent)
    : QWidget(parent), selection_(selection), model_(new PassListModel(this)) {
  setObjectName("passes");
  view_ = new QTableView(this);
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setSectionResizeMode(PassListModel::kName, QHeaderView::Stretch);
  view_->horizontalHeader()->setStretchLastSection(false);
  view_->setShowGrid(false);
  view_->verticalHeader()->setDefaultSectionSize(22);
  hide_unchanged_ = new QCheckBox(tr("Hide unchanged passes"), this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(hide_unchanged_);
  layout->addWidget(view_, 1);

  connect(hide_unchanged_, &QCheckBox::toggled, this, [this](bool on) { set_hide_unchanged(on); });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (syncing_ || !current.isValid()) return;
    selection_->set_pass(model_->pass_of_row(current.row()));
  });

  auto add = [this](const QString& text, QKeySequence key, int delta) {
    auto* a = new QAction(text, this);
    a->setShortcut(key);
    connect(a, &QAction::triggered, this, [this, delta] { step(delta); });
    actions_.push_back(a);
  };
  add(tr("Previous Pass"), QKeySequence(Qt::ALT | Qt::Key_Up), -1);
  add(tr("Next Pass"), QKeySequence(Qt::ALT | Qt::Key_Down), +1);
}

void PassStepperPane::show_snapshot(StudioSnapshotPtr snapshot) {
  syncing_ = true;
  model_->set_snapshot(std::move(snapshot));
  view_->resizeColumnsToContents();
  view_->horizontalHeader()->setSectionResizeMode(PassListModel::kName, QHeaderView::Stretch);
  syncing_ = false;
  show_pass(selection_->pass());
}

void PassStepperPane::show_pass(int pass) {
  int row = model_->row_of_pass(pass);
  if (row < 0) return;
  syncing_ = true;
  view_->selectRow(row);
  view_->setCurrentIndex(model_->index(row, PassListModel::kName));
  syncing_ = false;
}

void PassStepperPane::step(int delta) {
  // By pass index rather than row, so stepping works from a pass that hide-unchanged hides.
  const int current = selection_->pass();
  const int rows = model_->rowCount();
  if (delta > 0) {
    for (int r = 0; r < rows; ++r)
      if (model_->pass_of_row(r) > current) return selection_->set_pass(model_->pass_of_row(r));
  } else {
    for (int r = rows - 1; r >= 0; --r)
      if (model_->pass_of_row(r) < current) return selection_->set_pass(model_->pass_of_row(r));
  }
}

void PassStepperPane::set_hide_unchanged(bool hide) {
  if (hide_unchanged_->isChecked() != hide) hide_unchanged_->setChecked(hide);
  syncing_ = true;
  model_->set_hide_unchanged(hide);
  syncing_ = false;
  show_pass(selection_->pass());
}

}  // namespace tessel::views
