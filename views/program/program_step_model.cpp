#include "views/program/program_step_model.h"

#include <QBrush>
#include <QColor>

namespace tessel::views {

ProgramStepModel::ProgramStepModel(QObject* parent) : QAbstractListModel(parent) {}

void ProgramStepModel::set_views(std::vector<lower::ViewRecord> views) {
  beginResetModel();
  views_ = std::move(views);
  rebuild_rows();
  endResetModel();
}

void ProgramStepModel::set_hide_unchanged(bool hide) {
  if (hide == hide_unchanged_) return;
  beginResetModel();
  hide_unchanged_ = hide;
  rebuild_rows();
  endResetModel();
}

void ProgramStepModel::rebuild_rows() {
  rows_.clear();
  for (size_t v = 0; v < views_.size(); ++v) {
    const StepRecord& r = views_[v].record;
    // The first view and failures always stay: one is the baseline, the other the news.
    if (!hide_unchanged_ || v == 0 || r.changed || r.failed()) rows_.push_back(static_cast<int>(v));
  }
}

int ProgramStepModel::view_of_row(int row) const {
  return row >= 0 && static_cast<size_t>(row) < rows_.size() ? rows_[static_cast<size_t>(row)] : -1;
}

int ProgramStepModel::row_of_view(int view) const {
  int best = rows_.empty() ? -1 : 0;
  for (size_t r = 0; r < rows_.size(); ++r)
    if (rows_[r] <= view) best = static_cast<int>(r);
  return best;
}

int ProgramStepModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ProgramStepModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const StepRecord& r = views_[static_cast<size_t>(rows_[static_cast<size_t>(index.row())])].record;
  switch (role) {
    case Qt::DisplayRole:
      return QString("%1   %2 ms").arg(QString::fromStdString(r.name)).arg(r.wall_ms, 0, 'f', 2);
    case Qt::ToolTipRole:
      return r.failed() ? QString::fromStdString(r.error)
                        : (r.changed ? QString("changed the program") : QString("changed nothing"));
    case Qt::ForegroundRole:
      if (r.failed()) return QBrush(QColor(190, 20, 20));
      if (!r.changed) return QBrush(QColor(140, 140, 140));
      return {};
    default:
      return {};
  }
}

}  // namespace tessel::views
