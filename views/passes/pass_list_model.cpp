#include "views/passes/pass_list_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace tessel::views {

void PassListModel::set_snapshot(StudioSnapshotPtr snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  rebuild();
  endResetModel();
}

void PassListModel::set_hide_unchanged(bool hide) {
  if (hide == hide_unchanged_) return;
  beginResetModel();
  hide_unchanged_ = hide;
  rebuild();
  endResetModel();
}

void PassListModel::rebuild() {
  rows_.clear();
  if (!snapshot_ || !snapshot_->imported) return;
  rows_.push_back(-1);
  for (size_t i = 0; i < snapshot_->passes.size(); ++i) {
    const StepRecord& r = *snapshot_->passes[i];
    // A failed pass is news even though it changed nothing.
    if (hide_unchanged_ && !snapshot_->pass_changed(static_cast<int>(i)) && !r.failed()) continue;
    rows_.push_back(static_cast<int>(i));
  }
}

int PassListModel::row_of_pass(int pass) const {
  for (size_t r = 0; r < rows_.size(); ++r)
    if (rows_[r] == pass) return static_cast<int>(r);
  return -1;
}

int PassListModel::pass_of_row(int row) const {
  return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[static_cast<size_t>(row)] : -1;
}

int PassListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int PassListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant PassListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const int pass = rows_[static_cast<size_t>(index.row())];
  if (role == kPassIndexRole) return pass;
  const StepRecord* r = pass >= 0 ? snapshot_->passes[static_cast<size_t>(pass)].get() : nullptr;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kIndex:
        return pass + 1;
      case kName:
        return r ? QString::fromStdString(r->name) : tr("(imported)");
      case kChanged:
        if (!r) return QString();
        if (r->failed()) return tr("failed");
        if (pass == snapshot_->grouping_pass) return tr("grouped");  // into kernels; no node changed
        return r->changed ? tr("changed") : tr("—");
      case kTime:
        return r ? QString::number(r->wall_ms, 'f', 2) : QString::number(snapshot_->import_ms, 'f', 2);
      case kNodes:
        if (!r) return static_cast<int>(snapshot_->imported->nodes.size());
        if (nodes_after(*r) == nodes_before(*r)) return nodes_after(*r);
        return QStringLiteral("%1 → %2").arg(nodes_before(*r)).arg(nodes_after(*r));
    }
  }
  if (role == Qt::ToolTipRole && r && r->failed()) return QString::fromStdString(r->error);
  if (role == Qt::ForegroundRole && r) {
    if (r->failed()) return QBrush(QColor(200, 40, 40));
    if (!snapshot_->pass_changed(pass)) return QBrush(QColor(128, 128, 128));
  }
  if (role == Qt::ToolTipRole && pass >= 0 && pass == snapshot_->grouping_pass && snapshot_->fusion)
    return tr("Grouped the nodes into %n kernel(s); the nodes themselves are unchanged", "",
              static_cast<int>(snapshot_->fusion->groups.size()));
  if (role == Qt::FontRole && r && snapshot_->pass_changed(pass) && index.column() == kName) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::TextAlignmentRole &&
      (index.column() == kTime || index.column() == kNodes || index.column() == kIndex))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant PassListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kIndex:
      return tr("#");
    case kName:
      return tr("Pass");
    case kChanged:
      return tr("Changed");
    case kTime:
      return tr("ms");
    case kNodes:
      return tr("Nodes");
  }
  return {};
}

}  // namespace tessel::views
