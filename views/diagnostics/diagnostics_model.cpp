#include "views/diagnostics/diagnostics_model.h"

#include <QBrush>
#include <QColor>

namespace tessel::views {

QString severity_name(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::kInfo:
      return QObject::tr("info");
    case Diagnostic::Severity::kWarning:
      return QObject::tr("warning");
    case Diagnostic::Severity::kError:
      return QObject::tr("error");
  }
  return {};
}

void DiagnosticsModel::set_snapshot_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  from_snapshot_ = diagnostics;
  rebuild();
}

void DiagnosticsModel::add(const Diagnostic& d) {
  from_studio_.push_back(d);
  rebuild();
}

void DiagnosticsModel::clear() {
  from_snapshot_.clear();
  from_studio_.clear();
  rebuild();
}

void DiagnosticsModel::rebuild() {
  beginResetModel();
  all_ = from_studio_;
  all_.insert(all_.end(), from_snapshot_.begin(), from_snapshot_.end());
  endResetModel();
}

int DiagnosticsModel::error_count() const {
  int n = 0;
  for (const Diagnostic& d : all_) n += d.severity == Diagnostic::Severity::kError;
  return n;
}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(all_.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(all_.size())) return {};
  const Diagnostic& d = all_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kSeverity:
        return severity_name(d.severity);
      case kStage:
        return QString::fromStdString(d.stage);
      case kMessage:
        return QString::fromStdString(d.message);
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kSeverity) {
    if (d.severity == Diagnostic::Severity::kError) return QBrush(QColor(200, 40, 40));
    if (d.severity == Diagnostic::Severity::kWarning) return QBrush(QColor(200, 130, 0));
  }
  return {};
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kSeverity:
      return tr("Severity");
    case kStage:
      return tr("Stage");
    case kMessage:
      return tr("Message");
  }
  return {};
}

}  // namespace tessel::views
