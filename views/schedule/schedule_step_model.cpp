#include "views/schedule/schedule_step_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QMimeData>
#include <sstream>

#include "core/support/error.h"

namespace tessel::views {

namespace {

const std::string kDisabled = "# disabled: ";
const char* const kRowMime = "application/x-tessel-schedule-row";

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

schedule::Schedule enabled_schedule(const ScheduleEntries& entries) {
  schedule::Schedule s;
  for (const ScheduleEntry& e : entries)
    if (e.enabled) s.steps.push_back(e.step);
  return s;
}

int row_of_enabled_step(const ScheduleEntries& entries, int step) {
  if (step < 0) return -1;
  int k = 0;
  for (size_t r = 0; r < entries.size(); ++r)
    if (entries[r].enabled && k++ == step) return static_cast<int>(r);
  return -1;
}

int enabled_step_of_row(const ScheduleEntries& entries, int row) {
  if (row < 0 || static_cast<size_t>(row) >= entries.size() || !entries[static_cast<size_t>(row)].enabled) return -1;
  int k = 0;
  for (int r = 0; r < row; ++r) k += entries[static_cast<size_t>(r)].enabled;
  return k;
}

std::string entries_to_text(const ScheduleEntries& entries) {
  std::string out;
  for (const ScheduleEntry& e : entries) out += (e.enabled ? "" : kDisabled) + schedule::to_string(e.step) + "\n";
  return out;
}

ScheduleEntries entries_from_text(const std::string& text, int* error_line) {
  ScheduleEntries out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string t = trimmed(line);
    bool enabled = true;
    if (t.rfind(kDisabled, 0) == 0) {
      t = trimmed(t.substr(kDisabled.size()));
      enabled = false;
    } else if (t.empty() || t[0] == '#') {
      continue;  // blank lines and comments, as parse_schedule ignores them
    }
    try {
      out.push_back({schedule::parse_step(t), enabled});
    } catch (const Error& e) {
      if (error_line) *error_line = number;
      throw Error("line " + std::to_string(number) + ": " + e.what());
    }
  }
  return out;
}

ScheduleStepModel::ScheduleStepModel(QObject* parent) : QAbstractListModel(parent) {}

void ScheduleStepModel::set_entries(ScheduleEntries entries) {
  beginResetModel();
  entries_ = std::move(entries);
  error_row_ = highlight_row_ = -1;
  error_.clear();
  endResetModel();
}

void ScheduleStepModel::set_error(int row, const QString& message) {
  int old = error_row_;
  error_row_ = row >= 0 && row < rowCount() ? row : -1;
  error_ = message;
  for (int r : {old, error_row_})
    if (r >= 0 && r < rowCount()) Q_EMIT dataChanged(index(r), index(r));
}

void ScheduleStepModel::set_highlight(int row) {
  int old = highlight_row_;
  highlight_row_ = row >= 0 && row < rowCount() ? row : -1;
  for (int r : {old, highlight_row_})
    if (r >= 0 && r < rowCount()) Q_EMIT dataChanged(index(r), index(r));
}

int ScheduleStepModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

QVariant ScheduleStepModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const ScheduleEntry& e = entries_[static_cast<size_t>(index.row())];
  const bool failed = index.row() == error_row_;
  switch (role) {
    case Qt::DisplayRole: {
      QString text = QString("%1. %2").arg(index.row() + 1).arg(QString::fromStdString(schedule::to_string(e.step)));
      if (failed) text += QString::fromUtf8("  ✗ ") + error_;
      return text;
    }
    case Qt::EditRole:
      return QString::fromStdString(schedule::to_string(e.step));
    case Qt::CheckStateRole:
      return e.enabled ? Qt::Checked : Qt::Unchecked;
    case Qt::ToolTipRole: {
      if (failed) return error_;
      const schedule::StepKindInfo* info = schedule::find_step_kind(e.step.kind);
      QString tip = info ? QString("%1\n%2").arg(info->signature, info->doc) : QString();
      return e.enabled ? tip : tip + "\n(disabled: not part of the lowered schedule)";
    }
    case Qt::ForegroundRole:
      if (failed) return QBrush(QColor(190, 20, 20));
      if (!e.enabled) return QBrush(QColor(140, 140, 140));
      return {};
    case Qt::BackgroundRole:
      if (failed) return QBrush(QColor(230, 40, 40, 50));
      if (index.row() == highlight_row_) return QBrush(QColor(255, 200, 0, 90));
      return {};
    case Qt::FontRole:
      if (!e.enabled) {
        QFont f;
        f.setStrikeOut(true);
        return f;
      }
      return {};
    default:
      return {};
  }
}

Qt::ItemFlags ScheduleStepModel::flags(const QModelIndex& index) const {
  // Drops land between rows (on the invalid parent), never on a row: a step holds no children.
  if (!index.isValid()) return Qt::ItemIsDropEnabled;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable | Qt::ItemIsDragEnabled |
         Qt::ItemNeverHasChildren;
}

bool ScheduleStepModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::CheckStateRole || !checkIndex(index, CheckIndexOption::IndexIsValid)) return false;
  bool enabled = value.toInt() == Qt::Checked;
  if (entries_[static_cast<size_t>(index.row())].enabled == enabled) return false;
  if (on_toggle_requested) {
    on_toggle_requested(index.row(), enabled);
  } else {
    entries_[static_cast<size_t>(index.row())].enabled = enabled;
    Q_EMIT dataChanged(index, index);
  }
  return true;
}

bool ScheduleStepModel::moveRows(const QModelIndex& src, int row, int count, const QModelIndex& dst, int dst_row) {
  if (src.isValid() || dst.isValid() || count != 1 || row < 0 || row >= rowCount() || dst_row < 0 ||
      dst_row > rowCount())
    return false;
  int to = dst_row > row ? dst_row - 1 : dst_row;  // dst_row counts rows before the move
  if (to == row) return false;
  if (on_move_requested) {
    on_move_requested(row, to);
    return true;
  }
  beginMoveRows({}, row, row, {}, dst_row);
  ScheduleEntry e = entries_[static_cast<size_t>(row)];
  entries_.erase(entries_.begin() + row);
  entries_.insert(entries_.begin() + to, e);
  endMoveRows();
  return true;
}

QStringList ScheduleStepModel::mimeTypes() const { return {kRowMime}; }

QMimeData* ScheduleStepModel::mimeData(const QModelIndexList& indexes) const {
  if (indexes.size() != 1 || !indexes.front().isValid()) return nullptr;  // one step at a time
  auto* data = new QMimeData;
  data->setData(kRowMime, QByteArray::number(indexes.front().row()));
  data->setText(QString::fromStdString(schedule::to_string(entries_[static_cast<size_t>(indexes.front().row())].step)));
  return data;
}

bool ScheduleStepModel::dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int, const QModelIndex& parent) {
  if (!data || action != Qt::MoveAction || !data->hasFormat(kRowMime) || parent.isValid()) return false;
  bool ok = false;
  const int from = data->data(kRowMime).toInt(&ok);
  if (!ok) return false;
  return moveRows({}, from, 1, {}, row < 0 ? rowCount() : row);
}

}  // namespace tessel::views
